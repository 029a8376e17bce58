package register

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/components/session"
)

// A check proves one register entry on this machine: a probe run under a
// policy (the confined run) and the same probe run without it (the
// control). It counts only when the control succeeds (SR-09).
type check struct {
	id      string
	prepare func(s *scratch) (probeCase, error)
}

// passedFD is where a check hands the launcher an open descriptor: above
// the ones stage 1 itself puts on 3 and up for stage 2, which would
// replace one handed lower whether or not the launcher closes what it
// inherited.
const passedFD = 10

// probeCase is one prepared check.
type probeCase struct {
	policy  string   // the policy's [files] … body after the standard header; "" for none
	raw     string   // a whole policy text instead of the standard one (policy-text checks)
	control string   // the policy text for the control when the check is about the policy itself
	pin     string   // a pin to use instead of the policy's hash
	probe   []string // ACTION ARGS
	// controlAnswer, when set, is typed on the control's terminal (a
	// fresh pty) once a question shows there, as the person would.
	controlAnswer string
	// controlProbe, when set, is what the control runs instead: directly
	// (when the confined target, such as pid 1, means something else
	// outside the sandbox), or under the control policy (the same
	// request made the way that is allowed, in a components session).
	controlProbe []string
	direct       bool // control: run the probe directly (true) or under the control policy (false)
	// bare runs the confined probe directly too: what confines it is a
	// service the check started (the gateway), not a launch of its own.
	bare         bool
	passFD       bool     // hand an open descriptor to fd passedFD
	env          []string // added to the launcher's environment
	launcherArgs []string // added to the launcher's options (both runs under a policy)
	// launcherInWS runs the confined launch with a copy of the launcher
	// placed in the workspace (the control uses the real one).
	launcherInWS bool
	// launcherLinkedInWS runs the confined launch with a copy of the
	// launcher outside the workspace that has a second name (a hard
	// link) in it.
	launcherLinkedInWS bool
	// controlUID runs the direct control as this uid (0: as the runner).
	controlUID int
	// pty gives both runs a fresh pseudo-terminal as stdin and controlling
	// terminal; cttyOnly as their controlling terminal alone (descriptor
	// 3), no standard stream.
	pty, cttyOnly bool
	// answer is typed on that terminal once a question shows (set for the
	// control from controlAnswer).
	answer string
	// answerWithoutCode types answer alone, without the question's code,
	// in the confined run (the control, given controlAnswer, types both).
	answerWithoutCode bool
	// observe, when set, replaces each run's line with what it sees once
	// the run is over (for checks about what outlives the run).
	observe func() string
	// wrap runs the confined launch through the probe: ACTION ARGS… the
	// launcher's argv (to change what the launcher finds on this host).
	wrap []string
	// race, when set, runs beside the confined launch once it has started,
	// given the launcher's pid.
	race func(launcher int)
	// retries is how many times more an inconclusive run is tried, each in
	// a fresh scratch directory (for a race whose window can be missed).
	retries int
	// rejudge turns the usual verdict into this check's (for the checks
	// about the evidence rule itself, or about a race that can be missed).
	rejudge func(v Verdict, reason string) (Verdict, string)
	refused func(Run) bool
	ok      func(Run) bool
	skip    func(control Run) (bool, string)
	// also makes a check of several cases: each is run and judged as
	// this one is, in the same scratch directory, one after the other.
	// The check passes only when every case does; a case that does not
	// decides the verdict, and name says which it was.
	also []probeCase
	name string
}

// checks lists the executable checks, by register id.
func checks() []check {
	probe := func(args ...string) []string { return args }
	return []check{
		{"SR-01", func(s *scratch) (probeCase, error) {
			// Mapped executable, not exec'd: Landlock refuses execve of a
			// written file by itself, so only this shows the write paths'
			// noexec mounts, which also stop loaders (ld.so PATH).
			// And the policy check's half: an exec path beneath a write path
			// is refused before anything runs (a mutation audit: with that
			// rule off, the check passed on the mount alone). The control
			// is the standard policy.
			bin := filepath.Join(s.ws, "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				return probeCase{}, err
			}
			good := s.policyText("")
			return probeCase{probe: probe("write-map-exec", filepath.Join(s.ws, "prog")), direct: true, name: "mapped executable",
				also: []probeCase{{name: "an exec path beneath a write path", raw: strings.Replace(good, "exec = [", fmt.Sprintf("exec = [%q, ", bin), 1), control: good,
					probe: probe("noop"), refused: func(r Run) bool {
						return r.Code == 122 && strings.Contains(r.errorLine(), "a file the agent writes could then be executed")
					}}}}, nil
		}},
		{"SR-02", func(s *scratch) (probeCase, error) {
			// A write path that is a symlink to a directory outside: refused
			// by the policy check before anything runs. The control names
			// the directory itself, and the same write through the link
			// goes ahead. (A link planted inside a write path is another
			// control's: SR-21's read-only host.)
			real, link := filepath.Join(s.outside, "real"), filepath.Join(s.outside, "wlink")
			if err := os.Mkdir(real, 0o777); err != nil {
				return probeCase{}, err
			}
			if err := os.Chmod(real, 0o777); err != nil {
				return probeCase{}, err
			}
			if err := os.Symlink(real, link); err != nil {
				return probeCase{}, err
			}
			withWrite := func(dir string) string {
				return strings.Replace(s.policyText(""), fmt.Sprintf("write = [%q]", s.ws), fmt.Sprintf("write = [%q, %q]", s.ws, dir), 1)
			}
			return probeCase{raw: withWrite(link), control: withWrite(real), probe: probe("write", filepath.Join(link, "written")),
				refused: func(r Run) bool { return r.Code == 122 && strings.Contains(r.Stderr, "planted the link") }, // the symlink refusal's hint
				// Stage 2 finding the link (SR-23's control) means the policy
				// check let it through and stage 2 was cloned: SR-02 did not
				// hold, though the agent did not run (a mutation audit: with
				// CheckLive's walk of write paths off, this was
				// inconclusive, "the launcher itself failed").
				rejudge: laterRefusal(125, "passes through a symlink now", "the policy check let the link through; stage 2 was started and refused it (SR-23's control, not SR-02's)")}, nil
		}},
		{"SR-03", func(s *scratch) (probeCase, error) {
			// Refused either way SR-03 says: the connect, where a network
			// namespace or Landlock's TCP rules enforce "none", or the
			// launch (exit 124) where neither can, which is the risk
			// itself and was taken for the launcher failing.
			refusedHere := func(r Run) bool {
				return r.Code == 124 && strings.Contains(r.said(), "nothing would keep the agent off the network")
			}
			pc := probeCase{probe: probe("tcp-connect", s.listener), direct: true, name: "this host",
				refused: func(r Run) bool { return deniedLine(r) || refusedHere(r) }}
			if os.Geteuid() == 0 {
				// As root, also the same launch on a host that cannot make
				// a network namespace: what SR-03 says of that host
				// (Landlock TCP and seccomp from ABI 4, else a refused
				// launch) is never run where one can be made, and a
				// launcher that let the agent out there passed above. The
				// empty namespace's own answer (ECONNREFUSED: nothing
				// listens in it) is not a refusal here: the launch did not
				// run on the host the case is about.
				pc.also = []probeCase{{probe: probe("tcp-connect", s.listener), direct: true, name: "without a network namespace",
					wrap: probe("without-netns"),
					refused: func(r Run) bool {
						return deniedLine(r) && r.Line != "denied ECONNREFUSED" || refusedHere(r)
					}}}
				// And a datagram to an echo server on the host's loopback:
				// Landlock has no UDP rule, so only seccomp's refusal of
				// AF_INET sockets keeps it in; a launcher without that rule
				// passed the TCP case on Landlock's EACCES alone (a
				// mutation audit).
				echo, err := s.udpEcho()
				if err != nil {
					return probeCase{}, err
				}
				pc.also = append(pc.also, probeCase{probe: probe("udp-send", echo), direct: true, name: "without a network namespace, UDP",
					wrap: probe("without-netns"),
					refused: func(r Run) bool {
						return deniedLine(r) && r.Line != "denied ECONNREFUSED" && r.Line != "denied EAGAIN" || refusedHere(r)
					}})
			}
			return pc, nil
		}},
		{"SR-04", func(s *scratch) (probeCase, error) {
			pc := probeCase{policy: "[limits]\nprocesses = 32\n", probe: probe("fork-bomb", "100"), direct: true,
				// Some children start, then the limit answers EAGAIN: a
				// failure for any other reason proves nothing.
				refused: func(r Run) bool {
					k := forked(r.Line)
					return k >= 1 && k < 100 && strings.HasSuffix(r.Line, " EAGAIN")
				},
				ok: func(r Run) bool { return forked(r.Line) == 100 }}
			if os.Geteuid() == 0 {
				// As root the fork bomb launched here is bounded twice over
				// (RLIMIT_NPROC binds the throwaway uid as well as the pids
				// cgroup does), so bounding it shows nothing of the cgroup.
				// What SR-04 claims for root is checked instead: the same
				// launch on a host with no cgroup file system is refused,
				// never run with less (TestCgroupForkBomb bounds the tree
				// by the cgroup alone).
				pc.wrap = probe("without-cgroups")
				pc.refused = func(r Run) bool { return r.Code == 124 && strings.Contains(r.Stderr, "cgroup") }
			}
			return pc, nil
		}},
		{"SR-05", func(s *scratch) (probeCase, error) {
			// Every variant SR-05 names, in both families: any one that
			// opens confined is a fail.
			return probeCase{probe: probe("tcp-variants"), direct: true, skip: func(c Run) (bool, string) {
				return c.Line == "denied EPROTONOSUPPORT", "this kernel has neither MPTCP nor SMC (the control got EPROTONOSUPPORT)"
			}}, nil
		}},
		{"SR-06", func(s *scratch) (probeCase, error) {
			// The listener's port is not the listed one: a connect would be
			// refused by Landlock, and Fast Open must not get around it.
			return probeCase{raw: s.policyTextNet("[network]\nmode = \"ports\"\nconnect_tcp = [443]\n"), probe: probe("tfo-connect", s.listener), direct: true}, nil
		}},
		{"SR-07", func(s *scratch) (probeCase, error) {
			return probeCase{policy: "", raw: s.policyTextNet("[network]\nmode = \"ports\"\nconnect_tcp = [443]\n"), probe: probe("tcp-listen", "tcp4"), direct: true}, nil
		}},
		{"SR-08", func(s *scratch) (probeCase, error) {
			// socket and socketpair both: seccomp's rule covers each.
			return probeCase{probe: probe("unix-any"), direct: true}, nil
		}},
		{"SR-09", func(s *scratch) (probeCase, error) {
			// A real refusal beside a control that fails for its own reason
			// (the file does not exist anywhere): the evidence rule holds
			// when that is inconclusive, never a pass.
			missing := filepath.Join(s.outside, "does-not-exist")
			return probeCase{probe: probe("read", missing), direct: true,
				rejudge: func(v Verdict, why string) (Verdict, string) {
					switch {
					case v == Inconclusive && strings.Contains(why, "(SR-09)"):
						return Pass, "a refusal beside a failed control was not counted: " + why
					case v == Pass:
						return Fail, "a refusal was counted although its control failed: " + why
					}
					return Inconclusive, "the runs did not set up the case: " + why
				}}, nil
		}},
		{"SR-10", func(s *scratch) (probeCase, error) {
			// The passed descriptor, and 4 and 5: stage 2's own pipes to
			// stage 1, open while the agent runs, which only stage 2's
			// close-on-exec keeps from it. Any one open is a fail.
			pc := probeCase{probe: probe("fd", "4,5,"+strconv.Itoa(passedFD)), direct: true, passFD: true, name: "the agent"}
			if os.Geteuid() != 0 {
				return pc, nil
			}
			// As root, also stage 2: stage 1's own marking keeps the
			// passed descriptor from stage 2, which holds it for the
			// agent's whole life otherwise (stage 2's marking keeps it from
			// the agent alone, so the case above passed without stage
			// 1's). Seen from outside while the agent sleeps: only root
			// may read stage 2's descriptors. The control shows the same
			// descriptor reaching a process run directly.
			marker := "pinfold-check-sr10-" + filepath.Base(s.dir)
			var seen string
			pc.also = []probeCase{{name: "stage 2", probe: probe("sleep", "1", marker), direct: true, passFD: true,
				controlProbe: probe("fd", strconv.Itoa(passedFD)),
				race:         func(launcher int) { seen = heldBeneath(launcher, marker, s.dir, 5*time.Second) },
				refused:      func(r Run) bool { return okLine(r) && seen == heldNone },
				rejudge: func(v Verdict, why string) (Verdict, string) {
					switch {
					case v == Fail && seen == heldYes:
						return Fail, "a process beneath the launcher (stage 2) holds the descriptor the launcher inherited: " + why
					case v == Fail:
						return Inconclusive, "the agent was not seen running, so stage 2's descriptors were not looked at: " + why
					case v == Pass:
						return Pass, "no process beneath the launcher held the descriptor it inherited while the agent ran"
					}
					return v, why
				}}}
			pc.retries = 2 // the agent's second can be missed on a loaded machine
			return pc, nil
		}},
		{"SR-11", func(s *scratch) (probeCase, error) {
			return probeCase{probe: probe("env", "PINFOLD_CHECK_SECRET"), direct: true, env: []string{"PINFOLD_CHECK_SECRET=not-for-the-agent"},
				refused: func(r Run) bool { return r.Line == "absent" },
				ok:      func(r Run) bool { return r.Line == "present" }}, nil
		}},
		{"SR-12", func(s *scratch) (probeCase, error) {
			// Each way SR-12 names for a path to read otherwise than it
			// binds: not clean, not printable, not NFC. The last two name
			// a directory that exists, listed for reading, so that a
			// launcher that took the name would run the agent (a fail),
			// not stop at a missing path (a mutation audit: without the
			// printable or the NFC rule the check passed, on the clean
			// case alone). The control lists nothing more.
			good := s.policyText("")
			read := func(toml string) string {
				return strings.Replace(good, "[files]\n", "[files]\nread = [\""+toml+"\"]\n", 1)
			}
			// The names as made on disk, and as the policy spells them
			// (TOML escapes: the file itself stays printable ASCII).
			for _, name := range []string{"bell\a", "cafe\u0301"} {
				if err := os.MkdirAll(filepath.Join(s.outside, name), 0o755); err != nil { // prepared twice in one scratch by the tests
					return probeCase{}, err
				}
			}
			// Not clean: a decoder that took the path leaves it to the live
			// check, whose resolution of it ("/usr/share") differs: that
			// refusal is not the rule's (a mutation audit: with the rule
			// off, the case was inconclusive).
			pc := probeCase{raw: read("/usr/share/"), control: good, probe: probe("noop"), refused: refusedAs(122, "is not clean"), name: "not clean",
				rejudge: laterRefusal(122, "resolves elsewhere", "the policy's decoder took a path that is not clean; only the live check, resolving it, refused it")}
			pc.also = []probeCase{
				{raw: read(s.outside + "/bell\\u0007"), control: good, probe: probe("noop"), refused: refusedAs(122, "U+0007"), name: "not printable"},
				{raw: read(s.outside + "/cafe\\u0301"), control: good, probe: probe("noop"), refused: refusedAs(122, "normal form C"), name: "not NFC"},
			}
			return pc, nil
		}},
		{"SR-13", textCases(
			// A key twice is the TOML decoder's refusal; each other way SR-13
			// names is the launcher's own rule, which a check of the first
			// alone never reached (a mutation audit: with the duplicate-value,
			// the two-lists, the pass-and-set or the exact-case rule off, the
			// check passed). Each spoiled policy would run the agent were it
			// taken.
			textCase{"a key twice", func(good string) string {
				return strings.Replace(good, "[network]\n", "[network]\nmode = \"ports\"\n", 1)
			}, "has already been defined"},
			textCase{"a key in another case", func(good string) string {
				return strings.Replace(good, "[network]\n", "[network]\nMode = \"none\"\n", 1)
			}, `did you mean "mode"?`},
			textCase{"a value listed twice", func(good string) string {
				return strings.Replace(good, "[files]\n", "[files]\nread = [\"/usr/share\", \"/usr/share\"]\n", 1)
			}, "is listed more than once"},
			textCase{"a path in read and write", func(good string) string {
				ws := good[strings.Index(good, "write = [")+len("write = [") : strings.Index(good, "]\nexec")]
				return strings.Replace(good, "[files]\n", "[files]\nread = ["+ws+"]\n", 1)
			}, "is listed in both read and write"},
			textCase{"a variable passed and set", func(good string) string {
				return good + "[env]\npass = [\"PINFOLD_CHECK_A\"]\nset = { PINFOLD_CHECK_A = \"a\" }\n"
			}, "is both passed and set"},
		)},
		{"SR-14", textCases(
			// Sizes and durations have bounds of their own (a mutation
			// audit: the size bound off, the integer case alone passed).
			textCase{"an integer", func(good string) string {
				return good + "[limits]\nprocesses = 9007199254740993\n" // 2^53+1
			}, "(SR-14)"},
			textCase{"a size", func(good string) string {
				return good + "[limits]\nfile_size = \"9007199254740993B\"\n"
			}, "over the limit of 2^53-1 bytes (SR-14)"},
		)},
		{"SR-15", textCases(
			// Both halves of the control: an escaped lone surrogate, and
			// one encoded in the file (ED A0 80, in a comment). Both are
			// the TOML decoder's refusals too: the launcher's own UTF-8 rule
			// (its text check, first) is layered over the decoder's, so a
			// launcher without it is still refused here (a mutation audit).
			textCase{"escaped", func(good string) string {
				return good + "[env]\nset = { A = \"\\uD800\" }\n"
			}, "is not valid UTF-8"},
			textCase{"encoded in a comment", func(good string) string {
				return strings.Replace(good, "version = 1\n", "version = 1\n# \xed\xa0\x80\n", 1)
			}, "invalid UTF-8"},
		)},
		{"SR-16", textCases(
			// In the file itself, and escaped in a string: the file is
			// then printable ASCII, and only the value's own check sees the
			// control (a mutation audit: with string values unchecked, the
			// comment case alone passed).
			textCase{"in a comment", func(good string) string {
				return strings.Replace(good, "version = 1\n", "version = 1\n# \u202e reversed\n", 1)
			}, "bidirectional control"},
			textCase{"escaped in a value", func(good string) string {
				return good + "[env]\nset = { A = \"\\u202e\" }\n"
			}, "bidirectional control"},
		)},
		{"SR-17", func(s *scratch) (probeCase, error) {
			// Seccomp's EPERM alone: with dev.tty.legacy_tiocsti = 0 the
			// kernel answers EIO to a caller without CAP_SYS_ADMIN, which
			// the agent's throwaway uid lacks and the root control has, so
			// any refusal passed there without the filter.
			perm := func(r Run) bool { return r.Line == "denied EPERM" && r.Code == 1 }
			// And each other ioctl SR-17 names, and TIOCSTI with bit 32 of
			// the command set (the kernel reads 32 bits; a filter that
			// compared 64 let it through): a mutation audit, where the
			// check passed with the other four rules off, or with TIOCSTI
			// compared as 64 bits. Each call leaves the fresh terminal as
			// it was. TIOCLINUX is a console's: on a pseudo-terminal the
			// kernel's answer is ENOTTY, which shows the call reached it.
			ioctl := func(which string, ok func(Run) bool) probeCase {
				return probeCase{probe: probe("tty-ioctl", which), direct: true, pty: true, name: which, refused: perm, ok: ok}
			}
			return probeCase{probe: probe("tiocsti"), direct: true, pty: true, name: "TIOCSTI",
				refused: perm,
				also: []probeCase{
					ioctl("sti-high", nil),
					ioctl("linux", func(r Run) bool { return r.Line == "denied ENOTTY" && r.Code == 1 }),
					ioctl("setd", nil),
					ioctl("xonc", nil),
					ioctl("excl", nil),
				}}, nil
		}},
		{"SR-18", func(s *scratch) (probeCase, error) {
			// A set-uid-root copy of the probe in an exec path: confined,
			// no_new_privs and nosuid keep its euid the agent's; the control,
			// run as nobody, gains root through it.
			if os.Geteuid() != 0 {
				return probeCase{skip: func(Run) (bool, string) { return true, "making a set-uid-root file needs root" }, probe: probe("noop")}, nil
			}
			suid := filepath.Join(s.xbin, "suid-probe")
			if err := copyFile(s.launcher, suid, 0o755); err != nil {
				return probeCase{}, err
			}
			if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
				return probeCase{}, err
			}
			// Refused: the agent's own uid, which as root is a throwaway
			// one, never 0 (an agent left root would pass "euid 0 uid 0").
			// And a set-uid file of its own: seccomp refuses the mode (a
			// file in the workspace belongs to its owner, for anyone to
			// run). The directory is everyone's, for the control.
			made := filepath.Join(s.ws, "made")
			if err := os.MkdirAll(made, 0o777); err != nil {
				return probeCase{}, err
			}
			if err := os.Chmod(made, 0o777); err != nil {
				return probeCase{}, err
			}
			same := func(r Run) bool {
				var e, u int
				n, _ := fmt.Sscanf(r.Line, "euid %d uid %d", &e, &u)
				return n == 2 && e == u && e != 0 && strings.HasSuffix(r.Line, " chmod denied EPERM")
			}
			// And the mounts the set-uid file and the agent's files are on
			// (the host's, a write tree), nosuid as SR-18 says every mount
			// is: no_new_privs alone keeps the euid above,
			// so without this case a launcher that dropped nosuid passed
			// (a mutation audit). The control, the host's mount there,
			// is not nosuid (its set-uid run above gains root).
			opts := func(r Run) []string {
				o, ok := strings.CutPrefix(r.Line, "opts ")
				if !ok || r.Code != 0 {
					return nil
				}
				return strings.Split(o, ",")
			}
			nosuid := func(name, path string) probeCase {
				return probeCase{policy: "", raw: s.policyTextExec(s.xbin), probe: probe("mount-opts", path), direct: true, name: name,
					refused: func(r Run) bool { return slices.Contains(opts(r), "nosuid") },
					ok:      func(r Run) bool { o := opts(r); return o != nil && !slices.Contains(o, "nosuid") }}
			}
			return probeCase{policy: "", raw: s.policyTextExec(s.xbin), probe: probe("setuid-exec", suid, filepath.Join(made, "f")), direct: true, controlUID: 65534,
				refused: same,
				ok:      func(r Run) bool { return r.Line == "euid 0 uid 65534 chmod ok" },
				name:    "set-uid exec", also: []probeCase{nosuid("nosuid exec path", suid), nosuid("nosuid write path", made)}}, nil
		}},
		{"SR-19", func(s *scratch) (probeCase, error) {
			// A plain memfd (flags 0): MFD_EXEC is refused by seccomp alone,
			// while this one needs the rest of the control too (as root
			// vm.memfd_noexec = 2 in the sandbox's pid namespace; else
			// seccomp's rule that a memfd be sealed non-executable).
			// And MFD_EXEC, which SR-19 says is refused always: unprivileged
			// only seccomp's own rule refuses it (the rule for unsealed
			// memfds lets MFD_EXEC through), and without this case the
			// check passed with that rule off (a mutation audit). As root
			// the kernel's vm.memfd_noexec = 2 refuses it as well.
			pc := probeCase{probe: probe("memfd-exec"), direct: true, name: "flags 0"}
			pc.also = []probeCase{{probe: probe("memfd-exec", "exec"), direct: true, name: "MFD_EXEC"}}
			return pc, nil
		}},
		{"SR-20", func(s *scratch) (probeCase, error) {
			noVsock := func(c Run) (bool, string) {
				return strings.HasPrefix(c.Line, "denied "), "this machine has no vsock (the control got " + c.Line + ")"
			}
			// And socketpair, which the rule covers too (vsock's own
			// answer is EOPNOTSUPP, which the probe prints as ENOTSUP;
			// the filter's is EAFNOSUPPORT): a mutation audit, where the
			// check passed with socketpair left out of the rule.
			return probeCase{probe: probe("vsock-socket"), direct: true, name: "socket", skip: noVsock,
				also: []probeCase{
					{probe: probe("vsock-socketpair"), direct: true, name: "socketpair",
						refused: func(r Run) bool { return r.Line == "denied EAFNOSUPPORT" && r.Code == 1 },
						ok:      func(r Run) bool { return r.Line == "denied ENOTSUP" && r.Code == 1 },
						skip: func(c Run) (bool, string) {
							return c.Line == "denied EAFNOSUPPORT", "this machine has no vsock (the control got " + c.Line + ")"
						}},
				}}, nil
		}},
		{"SR-21", func(s *scratch) (probeCase, error) {
			// EROFS, the read-only mount's answer: Landlock's EACCES alone
			// would not show that the host's files are read-only for what
			// Landlock below ABI 8 does not mediate (chmod, times, xattrs).
			erofs := func(r Run) bool { return r.Line == "denied EROFS" }
			// And a read path under the host's /tmp, which has a mount of
			// its own (grafted into the private /tmp): only that mount's
			// read-only flag makes it EROFS (a mutation audit: with read
			// trees mounted writable, Landlock's EACCES kept the write out,
			// chmod and the rest were not kept, and the check passed on
			// the host's mounts alone). The control writes there directly.
			dir, err := os.MkdirTemp("/tmp", "pinfold-check-")
			if err != nil {
				return probeCase{}, err
			}
			s.closers = append(s.closers, func() { os.RemoveAll(dir) })
			if err := os.Chmod(dir, 0o755); err != nil {
				return probeCase{}, err
			}
			tmpRead := strings.Replace(s.policyText(""), "[files]\n", fmt.Sprintf("[files]\nread = [%q]\n", dir), 1)
			return probeCase{probe: probe("write", filepath.Join(s.outside, "written")), direct: true, name: "the host's files",
				refused: erofs,
				also: []probeCase{{raw: tmpRead, probe: probe("write", filepath.Join(dir, "written")), direct: true, name: "a read path under /tmp",
					refused: erofs}}}, nil
		}},
		{"SR-22", func(s *scratch) (probeCase, error) {
			// Stage 2 is pid 1 of the sandbox and runs as the agent's uid;
			// the control reads another process of the runner's the same
			// way unconfined (the check's sleeper): "self", which it read
			// before, is always readable, a control that could not fail.
			return probeCase{probe: probe("read-environ", "1"), controlProbe: probe("read-environ", strconv.Itoa(s.sleeper)), direct: true}, nil
		}},
		{"SR-23", symlinkSwapCheck},
		{"SR-24", func(s *scratch) (probeCase, error) {
			// The same launch on a kernel without Landlock (seccomp answers
			// ENOSYS, as such a kernel does): refused, never run with less.
			// Matched on the launcher's error line, not its last line: that
			// is the hint, which named Landlock only for the refusal of a
			// kernel without it; the ABI floor's refusal (the same kernel
			// seen as ABI 0, which a launcher without the first refusal
			// gives) has the hint "Linux ≥ 6.2" and was taken for the
			// launcher failing (a mutation audit).
			return probeCase{probe: probe("noop"), wrap: probe("without-landlock"),
				refused: func(r Run) bool {
					return r.Code == 124 && strings.Contains(strings.ToLower(r.errorLine()), "landlock")
				}}, nil
		}},
		{"SR-25", func(s *scratch) (probeCase, error) {
			// The refusal that names the launcher's code beneath a write
			// path: any other refusal (exit 124 is every host or policy
			// refusal, a kernel without Landlock's among them) is not it.
			pc := probeCase{probe: probe("noop"), launcherInWS: true, name: "beneath the workspace", refused: func(r Run) bool {
				return r.Code == 124 && strings.Contains(r.said(), "it could replace code the next launch runs")
			}}
			// And a launcher outside every write path with a second name
			// (a hard link) in the workspace: the same file, which the
			// agent could rewrite there. No path of it lies beneath a
			// write path, so only the rule about a file's other names
			// refuses it (a mutation audit: with that rule off the check
			// passed on the first case, which three rules refuse).
			pc.also = []probeCase{{probe: probe("noop"), launcherLinkedInWS: true, name: "hard-linked into the workspace", refused: func(r Run) bool {
				return r.Code == 124 && strings.Contains(r.said(), "has 2 names (hard links)")
			}}}
			return pc, nil
		}},
		{"SR-26", func(s *scratch) (probeCase, error) {
			return probeCase{probe: probe("euid"), direct: true,
				refused: func(r Run) bool { e := euid(r.Line); return e >= throwawayLow && e < throwawayHigh },
				ok:      func(r Run) bool { return euid(r.Line) == 0 },
				skip: func(c Run) (bool, string) {
					return euid(c.Line) != 0, "the throwaway uid is for root launches; this run is not root (" + c.Line + ")"
				}}, nil
		}},
		{"SR-27", func(s *scratch) (probeCase, error) {
			// The agent starts a detached sleeper in a session of its own and
			// exits. Confined, nothing it started outlives it; unconfined,
			// the sleeper is still there (and the check ends it).
			marker := "pinfold-check-" + filepath.Base(s.dir)
			pc := probeCase{probe: probe("spawn-sleep", marker), direct: true, name: "the agent exits",
				observe: func() string { return leftOver(s.launcher, marker) },
				refused: func(r Run) bool { return r.Line == "no process left" },
				ok:      func(r Run) bool { return r.Line == "a process remains" }}
			// And the launcher killed (SIGKILL) while the agent sleeps:
			// nothing of the launcher runs after it, so only stage 2's
			// parent-death signal ends the pid namespace (a mutation
			// audit: with it off, the first case passed on the agent's
			// exit, which ends stage 2 by itself, and as root on the
			// cgroup kill too). The control leaves a sleeper unconfined.
			killed := "pinfold-check-sr27-" + filepath.Base(s.dir)
			pc.also = []probeCase{{probe: probe("sleep", "20", killed), controlProbe: probe("spawn-sleep", killed), direct: true, name: "the launcher killed",
				race: func(launcher int) {
					if waitMarked(launcher, killed, 10*time.Second) {
						syscall.Kill(launcher, syscall.SIGKILL)
					}
				},
				observe: func() string { return leftOverSettled(s.launcher, killed) },
				refused: pc.refused, ok: pc.ok,
				// The launcher's status is the kill's (137), which the usual
				// verdict takes for a crash: what it left is the answer.
				rejudge: func(v Verdict, why string) (Verdict, string) {
					if v == Inconclusive && strings.HasPrefix(why, "the probe crashed under the policy: \"a process remains\"") {
						return Fail, "a process of the agent outlived the launcher killed (SIGKILL)"
					}
					return v, why
				}}}
			return pc, nil
		}},
		{"SR-28", func(s *scratch) (probeCase, error) {
			// A direct connection from a wrapper-mode agent in "proxy"
			// mode, to a listener the control reaches: net is its only
			// way out, so nothing answers.
			text := s.policyTextNet("[network]\nmode = \"proxy\"\nblock_all = false\n")
			pc := probeCase{raw: text, probe: probe("tcp-connect", s.listener), direct: true, name: "a direct connection"}
			// And the title's other half: net killed while the agent
			// sleeps ends the launch, saying so, with nothing of the
			// agent's left; the control, left alone, sleeps to its end
			// (a mutation audit: with the launcher no longer cancelling
			// the launch when net exits, the agent ran on without its
			// proxy and the first case passed).
			marker := "pinfold-check-sr28-" + filepath.Base(s.dir)
			var killed atomic.Bool
			pc.also = []probeCase{{raw: text, control: text, probe: probe("sleep", "3", marker), name: "net killed",
				race: func(launcher int) {
					if agentRuns(marker, 15*time.Second) {
						killed.Store(killComponent(launcher, "net", 15*time.Second))
					}
				},
				refused: func(r Run) bool {
					return r.Line == "" && r.Code != 0 && strings.Contains(r.Stderr, "component net exited")
				},
				rejudge: func(v Verdict, reason string) (Verdict, string) {
					if leftOver(s.launcher, marker) != "no process left" {
						return Fail, "the agent outlived net (the check ended it)"
					}
					if !killed.Load() && v == Pass {
						return Inconclusive, "net was not found to kill"
					}
					return v, reason
				}}}
			return pc, nil
		}},
		{"SR-29", func(s *scratch) (probeCase, error) {
			// ESRCH alone, not seen: as root the agent's throwaway uid gets
			// EPERM signalling the runner's sleeper from the host's pid
			// namespace too, where the process is there to be seen.
			return probeCase{probe: probe("others", fmt.Sprint(s.sleeper)), direct: true,
				refused: func(r Run) bool { return r.Line == "denied ESRCH" && r.Code == 1 }}, nil
		}},
		{"SR-30", func(s *scratch) (probeCase, error) {
			// Each of these is something an unprivileged process may do
			// where nothing refuses it: any one working is a fail.
			return probeCase{probe: probe("kernel-surface"), direct: true}, nil
		}},
		{"SR-31", func(s *scratch) (probeCase, error) {
			// Through the i386 gate where there is one; where int $0x80
			// faults or answers ENOSYS there is nothing to slip through
			// it, and the other way in is tried: an x32 number through
			// the native gate, which every x86-64 kernel has.
			pc := probeCase{probe: probe("i386-syscall"), direct: true,
				refused: exitCode(128 + 31), // killed by SIGSYS, as the filter's bad-architecture action says
			}
			out, _ := exec.Command(s.launcher, probeEntry, "i386-syscall").Output()
			if l := lastLine(string(out)); !strings.HasPrefix(l, "no-gate ") && l != "denied ENOSYS" {
				return pc, nil
			}
			pc.probe = probe("x32-syscall")
			// The kernel's own answer, ENOSYS without the x32 ABI, is the
			// call getting through: only the filter kills it.
			pc.ok = func(r Run) bool { return okLine(r) || r.Line == "denied ENOSYS" && r.Code == 1 }
			pc.rejudge = func(v Verdict, reason string) (Verdict, string) {
				return v, strings.TrimRight(reason, ": ") + " (an x32 call: this machine has no i386 system call gate)"
			}
			return pc, nil
		}},
		{"SR-32", func(s *scratch) (probeCase, error) {
			// The pin is the file's sha256 but for its last digit, and the
			// file would not parse (an unknown key): refused as a mismatch
			// (exit 123), which shows the whole digest compared, and
			// compared before anything is parsed (a parse first exits 122).
			// The control is the valid policy under its own hash.
			good := s.policyText("")
			bad := strings.Replace(good, "[files]\n", "[files]\nreed = []\n", 1)
			return probeCase{raw: bad, control: good, pin: nearMiss(bad), probe: probe("noop"), refused: exitCode(123),
				// An invalid policy (122) under that pin is no launcher
				// failure: the file was parsed although its pin did not
				// match, or the near miss was taken for a match.
				rejudge: func(v Verdict, why string) (Verdict, string) {
					if v == Inconclusive && strings.Contains(why, "(exit 122)") {
						return Fail, "the policy was parsed under a pin that does not match its sha256: " + why
					}
					return v, why
				}}, nil
		}},
		{"SR-33", func(s *scratch) (probeCase, error) {
			// A case for each rule of the title: an unknown key, and no
			// version (a launcher that took a policy without one passed
			// the first case alone: a mutation audit).
			good := s.policyText("")
			bad := strings.Replace(good, "[files]\n", "[files]\nreed = []\n", 1)
			unversioned := strings.Replace(good, "version = 1\n", "", 1)
			return probeCase{name: "an unknown key", raw: bad, control: good, probe: probe("noop"), refused: refusedAs(122, `did you mean "read"?`),
				also: []probeCase{{name: "no version", raw: unversioned, control: good, probe: probe("noop"), refused: refusedAs(122, "`version` is missing")}}}, nil
		}},
		{"SR-34", func(s *scratch) (probeCase, error) {
			secret := filepath.Join(s.outside, "secret")
			if err := os.WriteFile(secret, []byte("s3cret\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			// The title's other ways out, each a case of its own: a
			// workspace file hard-linked and renamed into a directory the
			// policy does not list, and a file written there (a mutation
			// audit: with Landlock handling the read rights alone the
			// check passed on the read, which is all it tried). Each
			// source is a file of its own, since the control, run after
			// the confined run, moves or links it out; a missing source
			// (ENOENT) is no refusal.
			for _, f := range []string{"link-src", "rename-src"} {
				if err := os.WriteFile(filepath.Join(s.ws, f), []byte("inside\n"), 0o644); err != nil {
					return probeCase{}, err
				}
			}
			notMissing := func(r Run) bool { return deniedLine(r) && r.Line != "denied ENOENT" }
			return probeCase{probe: probe("read", secret), direct: true, name: "read",
				also: []probeCase{
					{name: "linked out", probe: probe("link", filepath.Join(s.ws, "link-src"), filepath.Join(s.outside, "linked")), direct: true, refused: notMissing},
					{name: "renamed out", probe: probe("rename", filepath.Join(s.ws, "rename-src"), filepath.Join(s.outside, "renamed")), direct: true, refused: notMissing},
					{name: "written", probe: probe("write", filepath.Join(s.outside, "written")), direct: true, refused: notMissing},
				}}, nil
		}},
		{"SR-35", func(s *scratch) (probeCase, error) {
			// Unix sockets allowed, and "ports" mode, on the host's network
			// namespace: only Landlock's abstract-socket scope stands between
			// the agent and a host abstract socket. (Under "none" the
			// sandbox's own namespace stops it as well, so a launcher that
			// no longer scoped would pass there.)
			return probeCase{policy: "", raw: s.policyTextNet("[network]\nmode = \"ports\"\nconnect_tcp = [443]\nunix_sockets = true\n"), probe: probe("abstract-connect", s.abstract), direct: true,
				refused: deniedLine,
				skip: func(Run) (bool, string) {
					abi, err := ll.LandlockGetABIVersion()
					return err != nil || abi < 6, fmt.Sprintf("Landlock ABI %d has no abstract-socket scope (ABI 6): in \"ports\" mode that is a documented limit (SD-13)", abi)
				}}, nil
		}},
		{"SR-36", func(s *scratch) (probeCase, error) {
			// Only the memory cgroup's answer counts: the tree killed
			// (SIGKILL, 137) before it said anything. "denied ENOMEM" is
			// RLIMIT_AS, the per-process bound of a launch without a
			// memory cgroup (SD-05), not what SR-36 claims for root.
			return probeCase{policy: "[limits]\nmemory = \"64MiB\"\n", probe: probe("alloc", "256MiB"), direct: true,
				refused: func(r Run) bool { return r.Code == 128+9 && r.Line == "" },
				rejudge: func(v Verdict, why string) (Verdict, string) {
					if v == Pass {
						return v, "killed (SIGKILL) touching 256MiB under a 64MiB limit: the memory cgroup's OOM kill"
					}
					return v, why
				},
				skip: func(Run) (bool, string) {
					return os.Geteuid() != 0, "the memory cgroup is for root launches; unprivileged launches bound address space only (SD-05)"
				}}, nil
		}},
		{"SR-37", func(s *scratch) (probeCase, error) {
			// The same write to the workspace: the agent's own in
			// components mode (fs holds that authority), allowed in
			// wrapper mode (the control).
			// And the network half of the title, each a case of its own,
			// the control unconfined: a Unix socket (socket or
			// socketpair), and a TCP connection to the check's loopback
			// listener (a mutation audit: with the agent's own policy
			// allowing Unix sockets the check passed on the write alone).
			wrapper := s.policyText("")
			comp := inComponents(wrapper)
			return probeCase{raw: comp, control: wrapper, probe: probe("write", filepath.Join(s.ws, "direct")), name: "a write to the workspace",
				also: []probeCase{
					{raw: comp, probe: probe("unix-any"), direct: true, name: "a Unix socket"},
					{raw: comp, probe: probe("tcp-connect", s.listener), direct: true, name: "a TCP connection"},
				}}, nil
		}},
		{"SR-38", func(s *scratch) (probeCase, error) {
			// The agent asks fs with a certificate for its own identity
			// from a CA of its own: refused at the handshake. The control
			// makes the same call with the session's certificate.
			// A second case: the agent, with the session's certificate,
			// asks fs for what only bash may (a backup): refused by the
			// handler's check of the caller's role (a launcher whose fs
			// served bash's call to the agent passed the first case
			// alone: a mutation audit).
			text := s.componentsText("")
			if err := os.WriteFile(filepath.Join(s.ws, "inside"), []byte("inside\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			// A third: the call table itself (who may call whom), which
			// the agent cannot reach from inside (kms, the one component
			// it may not call, has no socket in its sandbox), so that a
			// launcher whose table allowed every call passed the cases
			// above (a mutation audit). While the agent sleeps, root
			// presents the agent's own certificate and key at kms's
			// socket: kms must refuse it at the handshake, where fs, the
			// same way, accepts it. It shows kms's side of the table for
			// the agent's certificate, not every edge (the table's test
			// is components/pki.TestCallMatrix).
			marker := "pinfold-check-sr38-" + filepath.Base(s.dir)
			var kmsSaw, fsSaw, kmsWhy, fsWhy string
			table := probeCase{name: "the agent's certificate at kms's socket", raw: text, control: text,
				probe: probe("sleep", "5", marker), controlProbe: probe("fs-present", "genuine"),
				race: func(launcher int) {
					kmsSaw, fsSaw, kmsWhy, fsWhy = peerUnseen, peerUnseen, "the agent was not seen running", ""
					if dir := agentCredentials(launcher, marker, 20*time.Second); dir != "" {
						kmsSaw, kmsWhy = presentAgentCert(dir, "kms")
						fsSaw, fsWhy = presentAgentCert(dir, "fs")
					}
				},
				refused: func(r Run) bool { return okLine(r) && kmsSaw == peerRefused && fsSaw == peerAccepted },
				rejudge: func(v Verdict, why string) (Verdict, string) {
					switch {
					case v == Pass:
						return Pass, "kms refused the agent's certificate at the handshake (" + kmsWhy + "), where fs accepted it"
					case v != Fail:
						return v, why
					case kmsSaw == peerAccepted:
						return Fail, "kms accepted a connection presenting the agent's certificate: the call table let the agent call kms (" + kmsWhy + ")"
					case kmsSaw == peerUnseen:
						return Inconclusive, "kms was not asked: " + kmsWhy
					}
					return Inconclusive, "fs did not accept the agent's certificate either (" + fsSaw + ": " + fsWhy + "), so kms's refusal shows nothing of the table"
				}}
			return probeCase{name: "a certificate of another CA", raw: text, control: text, probe: probe("fs-present", "forged"), controlProbe: probe("fs-present", "genuine"),
				refused: func(r Run) bool { return r.Line == "denied handshake" && r.Code == 1 },
				also: []probeCase{{name: "the agent asking for bash's call (fs's backup)", raw: text, control: text,
					probe: probe("fs-backup", "inside"), controlProbe: probe("fs-present", "genuine"),
					refused: func(r Run) bool { return r.Line == "denied reason-caller-role" && r.Code == 1 }}, table}}, nil
		}},
		{"SR-39", func(s *scratch) (probeCase, error) {
			// A link planted in the workspace to a file outside it, read
			// through fs; the control reads a file of the workspace.
			return s.escapeCase("fs-read")
		}},
		{"SR-40", func(s *scratch) (probeCase, error) {
			// The agent waits; fs is killed once the session runs. The
			// session stops at once, saying which component ended, and
			// nothing of the agent's is left. The control, the same
			// session left alone, sleeps to its end.
			// And the same with bash, and with kms, killed instead: SR-40
			// says any component (a mutation audit: a launcher that
			// stopped the session only when fs exited passed with fs
			// alone).
			text := s.componentsText("")
			killed := func(role string) probeCase {
				marker := "pinfold-check-" + role + "-" + filepath.Base(s.dir)
				var killed atomic.Bool
				return probeCase{raw: text, control: text, probe: probe("sleep", "3", marker), name: role,
					race: func(launcher int) {
						// Once the agent runs (the session is whole: killing
						// a component while it is set up is the launch
						// failing, not the session stopping).
						if agentRuns(marker, 15*time.Second) {
							killed.Store(killComponent(launcher, role, 15*time.Second))
						}
					},
					refused: func(r Run) bool {
						return r.Line == "" && r.Code != 0 && strings.Contains(r.Stderr, "component "+role+" exited")
					},
					rejudge: func(v Verdict, reason string) (Verdict, string) {
						if leftOver(s.launcher, marker) != "no process left" {
							return Fail, "the agent outlived its session (the check ended it)"
						}
						if !killed.Load() && v == Pass {
							return Inconclusive, role + " was not found to kill"
						}
						return v, reason
					}}
			}
			pc := killed("fs")
			pc.also = []probeCase{killed("bash"), killed("kms")}
			return pc, nil
		}},
		{"SR-41", func(s *scratch) (probeCase, error) {
			// A GET through net to a web server on the host's loopback:
			// refused as an SSRF. The control allows loopback explicitly
			// (unsafe_allow_private) and gets the page.
			web, err := s.webServer()
			if err != nil {
				return probeCase{}, err
			}
			proxy := "[network]\nmode = \"proxy\"\nblock_all = false\n"
			text := s.componentsTextNet(proxy)
			control := s.componentsTextNet(proxy + "unsafe_allow_private = [\"127.0.0.1/32\"]\n")
			page := func(r Run) bool { return r.Line == "status 200 - "+webPage && r.Code == 0 }
			// The domain policy's case: the same server by name, its
			// address allowed, the name in no allow rule under block_all:
			// refused by the rule; the control allows the name. (A launcher
			// whose net skipped the domain policy passed the SSRF case
			// alone: a mutation audit.)
			named := "http://localhost:" + port(web) + "/"
			domains := func(allow string) string {
				return s.componentsTextNet("[network]\nmode = \"proxy\"\nallow = [\"" + allow + "\"]\nunsafe_allow_private = [\"127.0.0.1/32\"]\n")
			}
			return probeCase{name: "the SSRF check", raw: text, control: control, probe: probe("http-get", "http://"+web+"/"),
				refused: func(r Run) bool { return strings.HasPrefix(r.Line, "status 403 ssrf.loopback ") && r.Code == 0 },
				ok:      page,
				also: []probeCase{{name: "the domain policy", raw: domains("pinfold.invalid"), control: domains("localhost"), probe: probe("http-get", named),
					refused: func(r Run) bool { return strings.HasPrefix(r.Line, "status 403 network.block_all ") && r.Code == 0 },
					ok:      page}}}, nil
		}},
		{"SR-42", func(s *scratch) (probeCase, error) {
			// A session with a vault whose secret a rule gives to
			// "localhost" over TLS. The agent hunts for the value: it asks
			// net for an upstream of its own at that same name over plain
			// HTTP (it echoes what it receives), then looks through its
			// environment, /proc and every file it can read. Nothing. The
			// control, in the same session, asks the rule's upstream over
			// TLS, which says the header carried the value: the secret is
			// live there, so its absence above means something.
			return s.secretCase()
		}},
		{"SR-43", func(s *scratch) (probeCase, error) {
			// The agent writes a git hook through fs with nobody to ask:
			// refused (the agent cannot answer for the person). The
			// control writes a file that is not protected.
			if err := os.MkdirAll(filepath.Join(s.ws, ".git", "hooks"), 0o755); err != nil {
				return probeCase{}, err
			}
			text := s.componentsText("")
			protected := func(r Run) bool { return r.Line == "denied fs.protected" && r.Code == 1 }
			// A second case, with a terminal to ask on: the question's
			// word typed without its code, as a person answering a prompt
			// the agent printed would, is no approval; the control types
			// both and the hook is written. (A mutation audit: with the
			// answer compared to the word alone the first case passed, as
			// it has no terminal and fs never asks.)
			return probeCase{raw: text, control: text, probe: probe("fs-write", ".git/hooks/pre-commit"), controlProbe: probe("fs-write", "notes.txt"), name: "nobody to ask",
				refused: protected,
				also: []probeCase{{raw: text, control: text, probe: probe("fs-write", ".git/hooks/post-commit"), name: "the word without its code",
					pty: true, answer: "yes", answerWithoutCode: true, controlAnswer: "yes", refused: protected}}}, nil
		}},
		{"SR-44", func(s *scratch) (probeCase, error) {
			// A recursive delete through fs with nobody to confirm it:
			// refused, the tree left. The control is the same request
			// with the check typing "delete" on the launcher's terminal,
			// as the person would: the tree goes, backed up first.
			p := filepath.Join(s.ws, "tree", "sub", "file")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return probeCase{}, err
			}
			if err := os.WriteFile(p, []byte("kept in a backup\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			s.closers = append(s.closers, func() { os.RemoveAll(session.StorePath(s.ws)) })
			text := s.componentsText("")
			return probeCase{raw: text, control: text, probe: probe("fs-rm-r", "tree"), controlAnswer: "delete",
				refused: func(r Run) bool { return r.Line == "denied fs.delete-recursive" && r.Code == 1 },
				// The store itself proves nothing: the session makes it
				// at its start. What counts is a backup in it that holds
				// the file, verified (a launcher that skipped the backup
				// passed on the store alone: a mutation audit).
				rejudge: func(v Verdict, reason string) (Verdict, string) {
					if v != Pass {
						return v, reason
					}
					if err := backedUp(session.StorePath(s.ws), "tree", "sub/file", "kept in a backup\n"); err != nil {
						return Fail, "the confirmed delete kept no backup of the tree: " + err.Error()
					}
					return v, reason + "; the control's delete left a verified backup holding tree/sub/file"
				}}, nil
		}},
		{"SR-45", func(s *scratch) (probeCase, error) {
			// A command the policy leaves to the person, asked with no
			// terminal to put it on: refused, never run. The control runs
			// a command the policy lets run by itself.
			// A second case, for "run confined": a command the policy runs
			// by itself reads a file outside the workspace, and the
			// worker's Landlock refuses it; the control reads a workspace
			// file (a launcher whose workers read everything passed the
			// first case alone: a mutation audit).
			secret := filepath.Join(s.outside, "secret")
			if err := os.WriteFile(secret, []byte("outside\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			if err := os.WriteFile(filepath.Join(s.ws, "inside"), []byte("inside\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			text := s.componentsText("[commands]\nauto = [\"true\", \"cat\"]\napproval = [\"touch\"]\n")
			ran := func(r Run) bool { return strings.HasPrefix(r.Line, "exit 0") && r.Code == 0 }
			return probeCase{name: "decided", raw: text, control: text, probe: probe("sh-run", "touch approved-by-nobody"), controlProbe: probe("sh-run", "true"),
				refused: func(r Run) bool { return r.Line == "denied bash.declined" && r.Code == 1 },
				ok:      ran,
				also: []probeCase{{name: "confined", raw: text, control: text, probe: probe("sh-run", "cat "+secret), controlProbe: probe("sh-run", "cat inside"),
					refused: func(r Run) bool { return r.Line == "exit 1 cat: "+secret+": Permission denied" && r.Code == 0 },
					ok:      ran}}}, nil
		}},
		{"SR-46", func(s *scratch) (probeCase, error) {
			// A command the policy runs by itself copies a tree into the
			// workspace, and the tree holds a git hook: its command line
			// never names .git/hooks, and the hook is mounted read-only in
			// the worker. The control copies a tree without one.
			// And the same for the repository's config and a shell
			// start-up file, each a protected kind of its own (git's
			// config beneath .git; a built-in name at any depth): a
			// mutation audit, where the check passed with either left
			// out of fs's protected names, on the hook alone. Each exists
			// in the workspace before, as the worker mounts what exists.
			files := map[string]string{
				"tpl/.git/hooks/pre-commit": "echo pwned\n",
				"cfg/.git/config":           "[core]\n\tfsmonitor = pwned\n",
				"rc/.bashrc":                "echo pwned\n",
				"plain/notes.txt":           "note\n",
				".git/config":               "[core]\n",
				".bashrc":                   "# the person's\n",
			}
			if err := os.MkdirAll(filepath.Join(s.ws, ".git", "hooks"), 0o755); err != nil {
				return probeCase{}, err
			}
			if err := writeTree(s.ws, files); err != nil {
				return probeCase{}, err
			}
			text := s.componentsText("[commands]\nauto = [\"cp\"]\n")
			copied := func(name, tree string) probeCase {
				return probeCase{raw: text, control: text, probe: probe("sh-run", "cp -r "+tree+"/. ."), controlProbe: probe("sh-run", "cp -r plain/. ."), name: name,
					refused: func(r Run) bool {
						return strings.HasPrefix(r.Line, "exit ") && !strings.HasPrefix(r.Line, "exit 0") && strings.Contains(r.Line, "Read-only file system")
					},
					ok: func(r Run) bool { return strings.HasPrefix(r.Line, "exit 0") && r.Code == 0 }}
			}
			pc := copied("a git hook", "tpl")
			pc.also = []probeCase{copied("the repository's config", "cfg"), copied("a shell start-up file", "rc")}
			return pc, nil
		}},
		{"SR-47", func(s *scratch) (probeCase, error) {
			// A script that passes the static check (the key is built at
			// run time) reaches for each function constructor, to compile
			// code outside the sandboxed globals: the isolate refuses.
			// The control reaches the workspace the allowed way, a tool.
			escape := `const k = ["con", "structor"].join("");
let how = "none";
for (const f of [function () {}, async function () {}, function* () {}, async function* () {}]) {
  try { const g = f[k]("return 1"); how = "constructed " + typeof g; break; } catch (e) { how = "refused " + e.name; }
}
return how;`
			tool := `return (await pinfold.call("read_file", {path: "inside"})).content;`
			if err := os.WriteFile(filepath.Join(s.ws, "inside"), []byte("inside\n"), 0o644); err != nil {
				return probeCase{}, err
			}
			text := s.componentsText("")
			// And eval and Function, reached at run time through the
			// global object (a sloppy function's this; globalThis is
			// refused statically): the isolate deleted both. A mutation
			// audit: with eval left on the global object, the check passed
			// on the constructors alone (the prototypes' constructor,
			// neutralised, is not the global Function either). The line
			// says what this was, so that a script where it was not the
			// global object proves nothing.
			evalEscape := `const g = (function () { return this; })();
let how = typeof g;
for (const k of [["ev", "al"].join(""), ["Func", "tion"].join("")]) {
  try { g[k]("1"); how += " reached " + k; } catch (e) { how += " refused " + e.name; }
}
return how;`
			inside := func(r Run) bool { return r.Line == `value "inside\n"` && r.Code == 0 }
			return probeCase{raw: text, control: text, probe: probe("code-run", escape), controlProbe: probe("code-run", tool), name: "function constructors",
				refused: func(r Run) bool { return strings.HasPrefix(r.Line, `value "refused `) && r.Code == 0 },
				ok:      inside,
				also: []probeCase{{raw: text, control: text, probe: probe("code-run", evalEscape), controlProbe: probe("code-run", tool), name: "eval and Function",
					refused: func(r Run) bool { return r.Line == `value "object refused TypeError refused TypeError"` && r.Code == 0 },
					ok:      inside}}}, nil
		}},
		{"SR-48", func(s *scratch) (probeCase, error) {
			// A script that never ends, under a 2 s deadline: the run
			// ends as the deadline's limit, and that limit names the
			// policy's 2s (a launcher that ignored the policy's deadline
			// for the default 10s passed on the limit's name alone: a
			// mutation audit). The control counts to 1000.
			text := s.componentsText("[code_mode]\ndeadline = \"2s\"\n")
			return probeCase{raw: text, control: text,
				probe: probe("code-run", "for (;;) {}"), controlProbe: probe("code-run", "let i = 0;\nwhile (i < 1000) i++;\nreturn i;"),
				refused: func(r Run) bool {
					return strings.HasPrefix(r.Line, "denied limit:deadline (") && twoSeconds().MatchString(r.Line) && r.Code == 1
				},
				ok: func(r Run) bool { return r.Line == "value 1000" && r.Code == 0 }}, nil
		}},
		{"SR-49", func(s *scratch) (probeCase, error) {
			// The agent's MCP server asked, through read_file, for a file
			// outside the workspace by a link planted in it: fs's refusal,
			// since the server holds nothing of its own. The control reads
			// a workspace file through the same server.
			return s.escapeCase("mcp-read")
		}},
		{"SR-50", func(s *scratch) (probeCase, error) {
			// A gateway (launcher serve) for a workspace holding a file. A
			// caller with no token, a guest, asks for that file by its
			// path: it gets a workspace of its own, and the owner's file
			// is not in it. The control is the same request with the
			// owner's token, which reads it.
			return s.gatewayCase()
		}},
		{"SR-51", func(s *scratch) (probeCase, error) {
			// A repository in the writable workspace: its own hooks
			// directory, and what its config names (a hooks directory, a
			// program, one past a value's first word, an included
			// file), each run or read by the
			// person's next commit or git status. The agent's write to
			// each is refused by a read-only mount (EROFS) where the same
			// write unconfined goes ahead. And in a launch like those, a
			// write beside them goes ahead: only what is named is
			// read-only, not the workspace whole.
			files := map[string]string{
				".git/config":          "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmonitor\n\tsshCommand = env tools/ssh\n[include]\n\tpath = ../tools/git.inc\n",
				".githooks/pre-commit": "#!/bin/sh\n",
				"tools/fsmonitor":      "#!/bin/sh\n",
				"tools/ssh":            "#!/bin/sh\n",
				"tools/git.inc":        "[alias]\n\tst = status\n",
				".bashrc":              "# the person's\n",
			}
			if err := os.MkdirAll(filepath.Join(s.ws, ".git", "hooks"), 0o755); err != nil {
				return probeCase{}, err
			}
			if err := writeTree(s.ws, files); err != nil {
				return probeCase{}, err
			}
			write := func(name, rel string) probeCase {
				return probeCase{name: name, probe: probe("write", filepath.Join(s.ws, rel)), direct: true,
					refused: func(r Run) bool { return r.Line == "denied EROFS" }}
			}
			pc := write(".git/hooks/pre-commit", ".git/hooks/pre-commit")
			beside := write(".githooks/pre-commit (control: tools/notes written confined)", ".githooks/pre-commit")
			beside.direct, beside.controlProbe = false, probe("write", filepath.Join(s.ws, "tools", "notes"))
			pc.also = []probeCase{
				write("core.hooksPath's .githooks/pre-commit", ".githooks/pre-commit"),
				write("core.fsmonitor's tools/fsmonitor", "tools/fsmonitor"),
				write("core.sshCommand's tools/ssh (env tools/ssh)", "tools/ssh"),
				beside,
				// A built-in name, and the config itself: SR-51 names both,
				// and a launcher that left either writable passed the
				// cases above (a mutation audit: .bashrc, or config beneath
				// .git, out of fs's protected names).
				write("a shell start-up file (.bashrc)", ".bashrc"),
				// Last but one: its control, the write unconfined, leaves
				// the file no config git can read, which a launch after it
				// would say as uncovered.
				write("include.path's tools/git.inc", "tools/git.inc"),
				// Last: its control spoils the config that names the
				// paths above.
				write(".git/config", ".git/config"),
			}
			return pc, nil
		}},
		{"SR-52", func(s *scratch) (probeCase, error) {
			// Both runs have a terminal as their controlling terminal and
			// none as a standard stream, as a launch from the person's
			// shell with every stream redirected; the policy lists
			// /dev/tty. Confined, /dev/tty opens nothing (ENXIO); the
			// control, the probe run directly, writes there.
			text := strings.Replace(s.policyText(""), "write = [", `write = ["/dev/tty", `, 1)
			return probeCase{raw: text, probe: probe("write", "/dev/tty"), direct: true, cttyOnly: true,
				refused: func(r Run) bool { return r.Line == "denied ENXIO" }}, nil
		}},
		{"SR-53", func(s *scratch) (probeCase, error) {
			// The agent lowers its core limit to 0 (glibc's setrlimit, as
			// ulimit -c 0 and ssh-agent do): the call succeeds and the
			// limit stays 1, the one value that stops a core_pattern pipe.
			// The control's lowering takes. The check does not crash
			// anything: a host's handler is not called on an audit.
			lowered := func(r Run) bool { return r.Line == "lowered ok, core soft 0 hard 0" && r.Code == 0 }
			// And each other way to lower it, each a rule of its own (a
			// mutation audit: with any one of them off the check passed on
			// glibc's call alone): the setrlimit system call, answered as
			// done the same way; prlimit64 naming the agent's own pid, and
			// prlimit64 asking the old limit back, both refused (EPERM).
			// Each control's lowering takes.
			kept := func(how, line string) probeCase {
				return probeCase{probe: probe("core-limit", how), direct: true, name: how,
					refused: func(r Run) bool { return r.Line == line && r.Code == 0 }, ok: lowered}
			}
			pc := kept("setrlimit", "lowered ok, core soft 1 hard 1")
			pc.also = []probeCase{
				kept("setrlimit-call", "lowered ok, core soft 1 hard 1"),
				kept("prlimit-pid", "lowered EPERM, core soft 1 hard 1"),
				kept("prlimit-old", "lowered EPERM, core soft 1 hard 1"),
			}
			return pc, nil
		}},
	}
}

// escapeCase is a components-mode check of a link planted in the
// workspace to a file outside it, and of one to the directory outside
// on the way to that file, each read by the probe action (as the
// agent): fs refuses both (fs.beneath). The control reads a workspace
// file the same way.
func (s *scratch) escapeCase(action string) (probeCase, error) {
	secret := filepath.Join(s.outside, "secret")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o644); err != nil {
		return probeCase{}, err
	}
	link := filepath.Join(s.ws, "escape")
	os.Remove(link) // a scratch prepared before (the predicates' test)
	if err := os.Symlink(secret, link); err != nil {
		return probeCase{}, err
	}
	// A link to the directory outside, on the way to the file: a final
	// link alone is refused by O_NOFOLLOW as well, and a launcher whose
	// fs resolved without RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS passed
	// on it (a mutation audit).
	dirLink := filepath.Join(s.ws, "escape-dir")
	os.Remove(dirLink)
	if err := os.Symlink(s.outside, dirLink); err != nil {
		return probeCase{}, err
	}
	if err := os.WriteFile(filepath.Join(s.ws, "inside"), []byte("inside\n"), 0o644); err != nil {
		return probeCase{}, err
	}
	text := s.componentsText("")
	beneath := func(r Run) bool { return r.Line == "denied fs.beneath" && r.Code == 1 }
	return probeCase{name: "a link to the file", raw: text, control: text, probe: []string{action, "escape"}, controlProbe: []string{action, "inside"},
		refused: beneath,
		also: []probeCase{{name: "a link on the way", raw: text, control: text, probe: []string{action, "escape-dir/secret"}, controlProbe: []string{action, "inside"},
			refused: beneath}}}, nil
}

// backedUp says why the backup store at dir holds no verified backup
// labelled label with the file rel (a path beneath the tree) of text.
func backedUp(dir, label, rel, text string) error {
	store, err := backup.Open(dir, 0)
	if err != nil {
		return err
	}
	defer store.Close()
	list, err := store.List()
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(text))
	for _, b := range list {
		if b.Label != label || b.Problem != "" {
			continue
		}
		_, entries, err := store.Show(b.ID)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Path == rel && e.SHA256 == hex.EncodeToString(sum[:]) {
				return store.Verify(b.ID)
			}
		}
		return fmt.Errorf("backup %s does not hold %s as it was", b.ID, rel)
	}
	return fmt.Errorf("no backup of %q in %s (%d there)", label, dir, len(list))
}

// writeTree writes each file of files (a path relative to dir, and its
// text), with the directories above it.
func writeTree(dir string, files map[string]string) error {
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// killComponent waits, at most wait, for the component role that the
// launcher at pid started, and kills it: true once it is killed.
func killComponent(launcher int, role string, wait time.Duration) bool {
	want := "\x00" + session.ComponentEntry + "\x00" + role + "\x00"
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !strings.Contains("\x00"+string(cmdline), want) || parentOf(pid) != launcher {
				continue
			}
			return syscall.Kill(pid, syscall.SIGKILL) == nil
		}
	}
	return false
}

// parentOf is pid's parent, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// agentRuns waits, at most wait, for a probe process (argv[1] the probe
// entry: not the launcher, whose command line names the probe too)
// whose command line holds marker.
func agentRuns(marker string, wait time.Duration) bool {
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			args := strings.Split(string(cmdline), "\x00")
			if err == nil && len(args) > 2 && args[1] == probeEntry && slices.Contains(args, marker) {
				return true
			}
		}
	}
	return false
}

// leftOver reports whether a probe process whose command line holds
// marker still runs, and ends every such process (only ours carry it).
func leftOver(launcherPath, marker string) string {
	ents, _ := os.ReadDir("/proc")
	found := false
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), "\x00"+marker) || !strings.Contains(string(cmdline), probeEntry) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && pid > 0 {
			found = true
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
	if found {
		return "a process remains"
	}
	return "no process left"
}

// waitMarked waits, at most within, for a process beneath root whose
// argv holds marker, and says whether one showed.
func waitMarked(root int, marker string, within time.Duration) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, pid := range descendants(root) {
			if marked(pid, marker) {
				return true
			}
		}
	}
	return false
}

// leftOverSettled is leftOver once the kernel has had a moment to end
// what a kill left dying (a pid namespace's init killed ends the rest
// after its parent has seen it go): it looks, without killing, for up to
// two seconds, and then ends and reports whatever is still there.
func leftOverSettled(launcherPath, marker string) string {
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !anyMarked(marker) {
			break
		}
	}
	return leftOver(launcherPath, marker)
}

// anyMarked says whether any process's argv holds the probe's entry and
// marker, as leftOver looks, without ending it.
func anyMarked(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "\x00"+marker) && strings.Contains(string(cmdline), probeEntry) {
			return true
		}
	}
	return false
}

// CheckIDs returns the ids of the entries that have an executable check.
func CheckIDs() []string {
	var ids []string
	for _, c := range checks() {
		ids = append(ids, c.id)
	}
	return ids
}

// textCheck is a policy-text check: the policy spoiled by spoil is refused
// (exit 122) for the reason the check is about, the launcher's last line
// on stderr holding why, where the same policy unspoiled runs the probe.
// A refusal for another reason (a spoil that broke something else) is
// not the check's.
func textCheck(spoil func(good string) string, why string) func(s *scratch) (probeCase, error) {
	return func(s *scratch) (probeCase, error) {
		good := s.policyText("")
		return probeCase{raw: spoil(good), control: good, probe: []string{"noop"}, refused: refusedAs(122, why)}, nil
	}
}

// textCase is one spoiled policy of a policy-text check, and the
// refusal it must get.
type textCase struct {
	name  string
	spoil func(good string) string
	why   string
}

// textCases is a policy-text check of several cases (textCheck's, each
// named): the check passes only when every spoiled policy is refused for
// its own reason.
func textCases(cs ...textCase) func(s *scratch) (probeCase, error) {
	return func(s *scratch) (probeCase, error) {
		var pcs []probeCase
		for _, c := range cs {
			pc, err := textCheck(c.spoil, c.why)(s)
			if err != nil {
				return probeCase{}, err
			}
			pc.name = c.name
			pcs = append(pcs, pc)
		}
		pcs[0].also = pcs[1:]
		return pcs[0], nil
	}
}

// laterRefusal is a rejudge for a check whose control is one layer
// when a later one refused instead: a run the launcher ended with exit
// status n, saying what, is a fail (the check's layer let it through),
// with why; every other verdict stands.
func laterRefusal(n int, what, why string) func(Verdict, string) (Verdict, string) {
	return func(v Verdict, reason string) (Verdict, string) {
		if v == Inconclusive && strings.Contains(reason, fmt.Sprintf("(exit %d)", n)) && strings.Contains(reason, what) {
			return Fail, why + ": " + reason
		}
		return v, reason
	}
}

// refusedAs is a refusal with exit status n whose last stderr line
// holds why.
func refusedAs(n int, why string) func(Run) bool {
	return func(r Run) bool { return r.Code == n && strings.Contains(r.Stderr, why) }
}

// The documented throwaway range (launcher/build.go).
const (
	throwawayLow  = 0x70000000
	throwawayHigh = throwawayLow + 100_000_000
)

var euidLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^euid (\d+) uid \d+$`) })

// euid parses "euid E uid U", or -1.
func euid(line string) int {
	m := euidLine().FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	var e int
	fmt.Sscan(m[1], &e)
	return e
}

// nearMiss is text's sha256 in hex with its last digit changed.
func nearMiss(text string) string {
	sum := sha256.Sum256([]byte(text))
	pin := []byte(hex.EncodeToString(sum[:]))
	if pin[63] == '0' {
		pin[63] = '1'
	} else {
		pin[63] = '0'
	}
	return string(pin)
}

func exitCode(n int) func(Run) bool { return func(r Run) bool { return r.Code == n } }

// twoSeconds finds "2s" as a word: SR-48's deadline as the limit names it.
var twoSeconds = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^0-9.])2s\b`) })

var forkedLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^forked (\d+) of \d+`) })

// forked parses "forked K of N …", or -1.
func forked(line string) int {
	m := forkedLine().FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	var k int
	fmt.Sscan(m[1], &k)
	return k
}
