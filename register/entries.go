package register

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Kind says who holds a control up (DESIGN.md §1).
type Kind string

const (
	// Boundary: enforced from above the agent, by the launcher or the kernel.
	Boundary Kind = "Boundary"
	// Setting: the agent could flip it.
	Setting Kind = "Setting"
	// Expectation: prose only; nothing enforces it.
	Expectation Kind = "Expectation"
)

func (k Kind) String() string { return string(k) }

// ParseKind returns the Kind named s, exactly as spelled above.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Boundary, Setting, Expectation:
		return k, nil
	}
	return "", fmt.Errorf("register: unknown kind %q: want Boundary, Setting or Expectation", s)
}

// Status says where an entry stands.
type Status string

const (
	Fixed           Status = "fixed"            // the control is in place
	Open            Status = "open"             // known, not yet controlled
	Accepted        Status = "accepted"         // known, deliberately left
	DocumentedLimit Status = "documented limit" // an SD entry: said, not controlled
)

func (s Status) String() string { return string(s) }

// ParseStatus returns the Status spelled s.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case Fixed, Open, Accepted, DocumentedLimit:
		return st, nil
	}
	return "", fmt.Errorf("register: unknown status %q: want fixed, open, accepted or documented limit", s)
}

// Entry is one risk (SR-nn) or documented limit (SD-nn).
type Entry struct {
	ID      string // "SR-01", "SD-03"
	Title   string
	Threat  string // what goes wrong without the control
	Control string // what stops it, or for SD entries what is and is not done
	Kind    Kind
	Status  Status
	Since   string // first version that holds it; "0.1.0" before any release
	// Check is the command that runs this entry's executable check, or ""
	// when it has none yet; every SR entry will need one.
	Check string
	// Evidence names the Go tests that show the entry holds today, as
	// "dir.TestName" with dir relative to the module root.
	Evidence []string
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^S[RD]-\d\d$`) })

// Validate reports what is malformed in e.
func (e Entry) Validate() error {
	var errs []string
	if !idPattern().MatchString(e.ID) {
		errs = append(errs, "id is not SR-nn or SD-nn")
	}
	if e.Title == "" || e.Threat == "" || e.Control == "" || e.Since == "" {
		errs = append(errs, "title, threat, control and since are required")
	}
	if _, err := ParseKind(string(e.Kind)); err != nil {
		errs = append(errs, err.Error())
	}
	if _, err := ParseStatus(string(e.Status)); err != nil {
		errs = append(errs, err.Error())
	}
	if strings.HasPrefix(e.ID, "SD-") && e.Status != DocumentedLimit {
		errs = append(errs, `an SD entry's status is "documented limit"`)
	}
	if strings.HasPrefix(e.ID, "SR-") && e.Status == DocumentedLimit {
		errs = append(errs, `an SR entry is a risk with a control, not a "documented limit"`)
	}
	if len(errs) > 0 {
		return fmt.Errorf("register: %s: %s", e.ID, strings.Join(errs, "; "))
	}
	return nil
}

// All returns every entry, sorted by id. The slice is new on every call.
func All() []Entry {
	es := withChecks(entries())
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.ID, b.ID) })
	return es
}

// Lookup returns the entry with the given id.
func Lookup(id string) (Entry, bool) {
	for _, e := range withChecks(entries()) {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// withChecks fills in Check for the entries that have one.
func withChecks(es []Entry) []Entry {
	for i := range es {
		for _, c := range checks() {
			if c.id == es[i].ID {
				es[i].Check = "launcher register check --only " + c.id
			}
		}
	}
	return es
}

const since = "0.1.0"

// Helpers keep the table below to what differs between entries.
func sr(id, title, threat, control string, kind Kind, evidence ...string) Entry {
	return Entry{ID: id, Title: title, Threat: threat, Control: control, Kind: kind, Status: Fixed, Since: since, Evidence: evidence}
}

func sd(id, title, threat, control string, evidence ...string) Entry {
	return Entry{ID: id, Title: title, Threat: threat, Control: control, Kind: Expectation, Status: DocumentedLimit, Since: since, Evidence: evidence}
}

// entries is the register. Ids are never reused; a withdrawn entry keeps
// its id with a status that says so.
func entries() []Entry {
	return []Entry{
		// Files.
		sr("SR-01", "A writable path never carries execute",
			"The agent writes a program or library and runs it, directly or through ld.so or any mmap(PROT_EXEC) loader, turning a write grant into arbitrary code.",
			"The policy check refuses a write path that equals, lies beneath or contains an exec path (in components mode the workspace counts as one, since fs writes it). Landlock write rules never include execute. Write trees are separate mounts with noexec, nosuid and nodev, so the kernel refuses exec and executable mappings of their files. What this cannot stop: a program the policy lets run (an interpreter, a JIT) reading written bytes and running them from its own memory — copying a file into anonymous executable memory needs no exec right; the exec list decides which programs can do that.",
			Boundary, "policy.TestValidate", "policy.TestInvalidFiles", "launcher.TestBuildPlanRulesAndEnv", "launcher.TestIntegrationExecWrittenFile"),
		sr("SR-02", "A writable path that resolves elsewhere is refused before anything runs",
			"A write path or the workspace passes through a symlink, so writes land somewhere the policy does not name.",
			"CheckLive walks every component of the workspace and each write path without following links and refuses a symlink anywhere (exit 122), before stage 2 is cloned.",
			Boundary, "policy.TestCheckLive", "policy.TestCheckLiveWithoutSource", "cmd/launcher.TestScripts", "launcher.TestIntegrationSymlinkWriteOut"),
		sr("SR-21", "No writes or metadata changes outside write paths",
			"The agent changes a file it may only read, or the mode, times or extended attributes of any host file its uid owns (Landlock before ABI 8 does not mediate chmod, utimes or setxattr).",
			"Every host mount is read-only and nosuid inside the sandbox, so writes and metadata changes outside the write trees fail with EROFS whatever the agent's uid owns; Landlock refuses on its own behind that; /tmp and /dev/shm are private tmpfs; a read path under the host's /tmp is grafted read-only. A terminal on descriptors 0-2 is opened again through the sandbox's read-only /dev, so fchmod, futimens and fsetxattr on it fail too (SD-20 for other inherited files).",
			Boundary, "launcher.TestIntegrationWriteOutsideWorkspace", "launcher.TestIntegrationLandlockBehindReadOnlyMounts", "launcher.TestIntegrationReadPathUnderTmpStaysReadOnly", "launcher.TestIntegrationChmodOutsideWritePaths", "launcher.TestIntegrationUnprivileged"),
		sr("SR-23", "A symlink swapped in after the policy check is not followed",
			"Between CheckLive and stage 2 opening the paths, a process of the same user replaces a listed directory with a symlink.",
			"Stage 2 opens every listed path with openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, for the Landlock rules and the mount clones alike, and fails closed with the path named.",
			Boundary, "launcher.TestOpenNoFollow", "register.TestRejudge"),
		sr("SR-34", "Files outside the lists cannot be read, written, linked or renamed out",
			"The agent reads a secret the policy does not list, or moves a workspace file out of the workspace by hard link or rename.",
			"Landlock grants only the listed paths (read, write = read+write, exec = read+execute) and handles refer, so links and renames across grants fail; as root the workspace is its own idmapped mount (EXDEV).",
			Boundary, "launcher.TestIntegrationReadOutsideLists", "launcher.TestIntegrationWriteWorkspace", "launcher.TestIntegrationLinkRenameOut", "launcher.TestIntegrationUnprivileged"),

		// Network.
		sr("SR-03", `Network "none" is refused when neither a namespace nor Landlock TCP can enforce it`,
			`The policy says "none" but the host can create no network namespace and has no Landlock TCP rules, so nothing would keep the agent off the network.`,
			`With a network namespace the agent has its own empty network. Without one, Assess refuses the launch (exit 124) below Landlock ABI 4; from ABI 4 Landlock denies every TCP bind and connect and the seccomp filter refuses AF_INET and AF_INET6 sockets outright, so nothing reaches the network; the launch is reported degraded because the agent has no loopback.`,
			Boundary, "launcher.TestAssess", "launcher.TestBuildPlanNetwork", "launcher.TestIntegrationTCPNetworkNone", "launcher.TestIntegrationUDPNetworkNone"),
		sr("SR-05", "MPTCP and SMC sockets are refused",
			`Landlock's TCP rules check IPPROTO_TCP sockets only; an MPTCP or SMC socket would connect or bind anywhere in "ports" mode (Go 1.24 and later listen with MPTCP by default).`,
			"Seccomp answers socket(AF_INET or AF_INET6, …, IPPROTO_MPTCP or IPPROTO_SMC) with EPROTONOSUPPORT, as a kernel without them does, so programs fall back to TCP.",
			Boundary, "launcher.TestIntegrationMPTCPDenied", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-06", "TCP Fast Open is refused",
			"sendto, sendmsg or sendmmsg with MSG_FASTOPEN connects without Landlock's connect hook.",
			"Seccomp refuses those calls with MSG_FASTOPEN (EPERM) in every mode; TCP_FASTOPEN_CONNECT still needs connect(), which Landlock checks.",
			Boundary, "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-07", `listen() without bind() is refused in "ports" mode when nothing may bind`,
			"listen() on an unbound socket binds an ephemeral port without Landlock's bind hook, opening a listener the policy never allowed.",
			`When the mode is "ports", bind_tcp is empty and Unix sockets are not allowed, seccomp refuses listen() (EPERM). Otherwise it is allowed (SD-11).`,
			Boundary, "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-08", "Unix sockets by path",
			"A pathname Unix socket (a Docker, D-Bus, X11 or agent socket) connects the agent to a more privileged server; Landlock before ABI 9 does not check pathname sockets and a network namespace does not hide them.",
			"Unless network.unix_sockets is true, seccomp refuses socket(AF_UNIX) and AF_UNIX socketpairs other than stream and seqpacket (EPERM). Socket directories (/run, /var/run, /tmp/.X11-unix) are covered by an empty read-only tmpfs unless the policy lists them whole; a path listed beneath one is grafted back alone. With unix_sockets allowed, pathname sockets are not checked (this launcher applies Landlock up to ABI 7, before ABI 9's socket rule), and the launch's summary line, hello and advice say so (SD-12).",
			Boundary, "launcher.TestIntegrationUnixSocketsDenied", "launcher.TestIntegrationHiddenDirGraftsOnlyTheListedPath", "launcher.TestAssess", "launcher.TestSummaryLineSaysDegraded", "launcher.TestSeccompVerdicts", "policy.TestAdvice"),
		sr("SR-20", "Socket families other than Unix, IP and netlink are refused",
			"AF_VSOCK is not network-namespaced and reaches the host or hypervisor; AF_PACKET, AF_ALG, AF_TIPC, Bluetooth and others add kernel surface or paths out.",
			"Seccomp allows socket and socketpair only for AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK and answers the rest with EAFNOSUPPORT, as a kernel without them does.",
			Boundary, "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-28", `In "proxy" mode the agent's only way out is net`,
			`A proxy the agent could go around would govern nothing: a direct connection, or a run without the proxy when it cannot start, would reach what the domain rules and SSRF protection refuse.`,
			`In either mode the agent gets an empty network namespace whose one listener, made inside it, is net's; a direct connection has no route. If net cannot start the agent does not run, and if net exits the agent is killed; nothing is retried without it. As root net runs under a throwaway uid, otherwise under the person's, confined either way.`,
			Boundary, "launcher.TestIntegrationWrapperProxy", "launcher.TestIntegrationComponentsProxy", "launcher.TestIntegrationProtectedMadeSaidOnError"),
		sr("SR-35", "Abstract Unix sockets do not reach the host",
			"Abstract sockets are named in the network namespace, not the file system, so file rules never see them; a host service listening on one would be reachable.",
			`Under "none" they live in the sandbox's own network namespace; in "ports" mode Landlock's abstract-socket scope (ABI 6) refuses them. Below ABI 6 with Unix sockets allowed in "ports" mode the launch is degraded and says so (SD-13).`,
			Boundary, "launcher.TestIntegrationAbstractSocketScoped", "launcher.TestAssess"),

		// Processes and the kernel.
		sr("SR-04", "Fork bombs: root with no pids cgroup is refused",
			"A fork bomb exhausts the host's processes. RLIMIT_NPROC does not bind root and counts per uid, not per tree.",
			"As root the process limit is a pids cgroup; without a usable one the launch is refused (exit 124), and so is a Code Mode worker that `launcher code run --tools` would start (the same refusal and hint). Unprivileged, RLIMIT_NPROC applies inside a user namespace. limits.processes below 1 is a policy error.",
			Boundary, "launcher.TestAssess", "launcher.TestCgroupForkBomb", "launcher.TestIntegrationForkBomb", "policy.TestInvalidFiles", "components/code.TestWorkerCgroupRefused", "cmd/launcher.TestCodeRunCgroupRefusal"),
		sr("SR-36", "Memory is bounded for the whole tree as root",
			"The agent exhausts host memory.",
			"As root a memory cgroup bounds the tree; without one, and unprivileged, RLIMIT_AS bounds each process's address space (SD-05).",
			Boundary, "launcher.TestIntegrationMemoryLimit", "launcher.TestCgroupMemory", "launcher.TestAssess"),
		sr("SR-17", "Terminal input injection is refused",
			"TIOCSTI or TIOCLINUX on an inherited terminal pushes keystrokes into the person's shell, which runs them unconfined after the agent exits; TIOCSETD (N_NULL), TCXONC (output stopped) and TIOCEXCL (no one may open it again) leave the terminal dead after it.",
			"Seccomp refuses ioctl TIOCSTI, TIOCLINUX, TIOCSETD, TCXONC and TIOCEXCL (EPERM), comparing the command as the kernel's 32-bit int. On the person's terminal the agent has a pseudo-terminal of its own (SD-23), so these would reach only that one; they stay refused for the terminals the agent is given otherwise.",
			Boundary, "launcher.TestIntegrationTIOCSTI", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-18", "Set-uid and set-gid gain nothing",
			"The agent runs a set-uid program to gain privilege, or makes a set-uid file that runs as its owner for anyone on the host (its files belong to their owner through idmapped mounts).",
			"no_new_privs is set, every mount is nosuid, capabilities are cleared, and seccomp refuses S_ISUID or S_ISGID in the mode of chmod, fchmod(at/at2), open(at), creat, mkdir(at) and mknod(at); openat2 answers ENOSYS.",
			Boundary, "launcher.TestIntegrationSetuidNoNewPrivs", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-19", "Fileless execution is refused",
			"Landlock does not check anonymous files: an executable memfd lets the agent run code it never wrote to a path.",
			"As root on Linux 6.3+, vm.memfd_noexec=2 in the sandbox's pid namespace; otherwise seccomp refuses every memfd not sealed non-executable. MFD_EXEC and execveat(AT_EMPTY_PATH) are refused always.",
			Boundary, "launcher.TestIntegrationKernelInterfaces", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),
		sr("SR-29", "Other processes cannot be seen, traced or signalled",
			"The agent reads another process's memory, environment or descriptors, or signals it.",
			"A pid namespace with its own /proc; seccomp refuses ptrace, process_vm_readv/writev, pidfd_getfd and kcmp; Landlock's signal scope where the kernel has it (ABI 6). The pid namespace hides pids, not process groups: unprivileged, off a terminal of its own, the agent shares the launcher's process group as the person's uid; the signal scope keeps kill(0) from the launcher and the processes beside it, and below ABI 6 seccomp refuses kill(0) in that case. As root the agent's throwaway uid shares them the same way, and the kernel lets SIGCONT through within a session: below ABI 6 seccomp refuses kill(0, SIGCONT) then.",
			Boundary, "launcher.TestIntegrationOutsideProcess", "launcher.TestSeccompKernel", "launcher.TestIntegrationUnprivileged", "launcher.TestAssess", "launcher.TestPreparePlanSeccompGroupKill", "launcher.TestPreparePlanSeccompGroupCont"),
		sr("SR-30", "Mounts, namespaces and kernel administration are refused",
			"The agent undoes its mounts, makes a new user namespace to regain capabilities, or reaches kernel surface (bpf, perf, io_uring, keyrings, modules, kexec, sysctls).",
			"Seccomp refuses the mount family, setns, unshare, clone with namespace flags (clone3 answers ENOSYS), bpf, perf_event_open, io_uring, modify_ldt, the keyctl family, userfaultfd, module and kexec calls and personality changes; writes to /proc/sys are refused; the sandbox's /proc/keys and /proc/key-users are covered (they listed the person's keyrings by name, and every uid's key counts).",
			Boundary, "launcher.TestIntegrationKernelInterfaces", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel", "launcher.TestSeccompSweeps", "launcher.TestIntegrationKeyListsCovered"),
		sr("SR-31", "System calls from another architecture's entry are killed",
			"An x86_64 process issues i386 (int 0x80) or x32 system calls, whose numbers differ, to slip past a filter written for x86_64 numbers.",
			"The filter checks the audit architecture first and kills any call from another architecture, and any x32 number through the native gate (SD-09). On a machine where int $0x80 itself faults there is no i386 gate to slip through, and the check makes an x32 call instead.",
			Boundary, "launcher.TestSeccompArchitectures", "launcher.TestSeccompVerdicts", "launcher.TestSeccompKernel"),

		// The applying process.
		sr("SR-22", "Stage 2 is not dumpable and survives the agent's signals",
			"Stage 2, pid 1 of the sandbox under the agent's uid, holds the plan; the agent reads it through /proc/1 or crashes it with SIGABRT or SIGQUIT.",
			"Stage 2 sets PR_SET_DUMPABLE 0 and handles the signals that would make a Go program dump and exit.",
			Boundary, "launcher.TestIntegrationStage2NotReadable", "launcher.TestIntegrationStage2SurvivesSignals"),
		sr("SR-24", "Landlock is never best effort",
			"A best-effort Landlock ruleset silently enforces less (or nothing) on an older kernel, while the launch looks confined.",
			"Stage 1 computes the ABI floor the policy needs (1 for read and exec rules, 3 for write rules, 4 for ports mode) and refuses below it (exit 124); the ruleset handles exactly the rights of the kernel's ABI up to the highest this launcher knows.",
			Boundary, "launcher.TestAssess", "launcher.TestBuildPlanNetwork", "launcher.TestLandlockFeatureMinABI"),
		sr("SR-25", "A launcher binary or library beneath a write path is refused",
			"The agent replaces the launcher binary, or a library it loads (the dynamic loader, the C library, libseccomp), or a symbolic link by which the person runs the launcher, so the next run confines nothing.",
			"The launcher is linked statically: it maps no library and the dynamic loader never runs (nor reads LD_PRELOAD). Launch refuses when the resolved launcher executable, any file the launcher has mapped (a dynamic build's libraries), the path the person ran (argv[0], looked up in PATH without a slash), a PATH directory searched before the launcher's (where a program of its name would run instead), or any symbolic link on the way from it lies beneath the workspace or a write path, or is reachable for writing through one: a write path, or a mount beneath one, that is a bind of a directory above it (compared by device and inode), or a launcher mount that is a bind of a tree beneath a write path (compared by device and place in its file system). Every directory those paths are looked up in counts too (a directory of the workspace passed before a \"..\" can become a link), and so does where the file system holding any of them keeps it: an overlay's layers (lowerdir+ too; a layer no longer at the path given at the mount is refused), an ecryptfs's lower directory, a loop device's image, followed through partitions, device mapper and md members and loops over loops, and taken only when the file at the path the kernel reports is the one the device holds (same device and inode: a re-test's loop, set up through a bind since unmounted, named another file), and every device a file system names (btrfs's devices, erofs device=, xfs logdev= and rtdev=, ext4 journal_path=, and an ext3 or ext4's external journal, which only its superblock names: a re-test's journal in the workspace, replayed after a crash, rewrote the launcher) (a re-test rewrote an overlay's lower file while the launcher ran). What cannot be checked so is refused: code on FUSE, which keeps its files wherever its program does, or on a block device a program or the network serves (nbd, ublk, rbd, drbd); a file system mounted straight from a file (erofs), whose file cannot be told to be the one at its path; an overlay with metacopy=on, whose data a lower layer keeps at a path only the upper file's extended attributes give (a re-test); and an ext3 or ext4 whose journal's place neither its superblock nor sysfs tells. A code file with a second name (a hard link) is refused: the other name may be in a write path, where the agent, owning it through the idmap, made the launcher world-writable (a re-test). Run by a bare name, the launcher looks the name up as a shell does and refuses when a relative or empty PATH entry, or one starting with ~ (bash expands it, env, sudo and dash do not), comes before its own or is its own (it names wherever the next launch starts), or when PATH does not lead the name to this launcher (how it was started cannot be told). What started the launcher is beyond what it can see: a wrapper script that execs it by full path, or sudo found through the person's PATH, can be shadowed by a program the agent puts in a PATH directory it writes; keep such directories out of PATH.",
			Boundary, "launcher.TestIntegrationLauncherStatic", "launcher.TestLauncherLibraryWritable", "launcher.TestIntegrationLauncherLinkWritable", "launcher.TestIntegrationLauncherBindWritable", "launcher.TestIntegrationLauncherBoundFromWorkspace", "launcher.TestIntegrationLauncherShadowed", "launcher.TestInvokedAs", "launcher.TestIntegrationLauncherBacking", "launcher.TestWithBacking", "launcher.TestIntegrationLauncherHardLinked"),
		sr("SR-26", "As root the agent runs under a throwaway uid",
			"Running as the person, or as a uid another session uses, gives the agent whatever that uid owns or can signal on the host.",
			"A uid from a documented range that no account, group or subordinate range names, held by an exclusive lock under /run/pinfold/ids for the session's life; the workspace and write paths are idmapped onto it.",
			Boundary, "launcher.TestClaimThrowawayID", "launcher.TestClaimIDSkipsTakenAndHeld", "launcher.TestTakenIDs", "launcher.TestIntegrationWriteWorkspace"),
		sr("SR-27", "The agent's tree ends with the launcher",
			"A process the agent starts (daemonised, in its own session) outlives the session, unconfined by anyone watching.",
			"Stage 2 is the pid namespace's init and has a parent-death signal (SIGKILL); when it exits the kernel kills the namespace. As root the cgroup is killed too.",
			Boundary, "launcher.TestIntegrationNoProcessRemains", "launcher.TestIntegrationLauncherKilled", "launcher.TestIntegrationSignalForwarded", "launcher.TestCgroupKill"),
		sr("SR-10", "Inherited descriptors are closed",
			"A descriptor the launcher inherited (a jobserver pipe, a socket, an open secret) reaches the agent.",
			"Stage 1 marks every descriptor above 2 close-on-exec before cloning stage 2, and stage 2 does so again after Landlock (its own pipes to stage 1 among them), so the agent inherits only 0, 1 and 2.",
			Boundary, "launcher.TestIntegrationInheritedFD", "launcher.TestIntegrationStage2InheritsNoFD"),
		sr("SR-11", "The environment is what the policy builds",
			"A token in the launcher's environment reaches the agent.",
			"The agent's environment holds only the variables env.pass names and env.set sets, and those the launcher sets itself, none of them copied from its own environment: PATH (/usr/local/bin:/usr/bin:/bin) and HOME (a private directory in the sandbox's /tmp) when the policy gives none, in proxy mode the proxy's address (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, their lower-case forms, PINFOLD_NET), in components mode the session's (PINFOLD_SESSION, PINFOLD_CREDENTIALS, PINFOLD_FS, PINFOLD_BASH, and with [[secrets]] the interception CA's path in SSL_CERT_FILE and the like); advice warns when a passed name looks like a credential.",
			Boundary, "launcher.TestIntegrationEnvSecret", "launcher.TestBuildPlanRulesAndEnv", "policy.TestAdvice"),

		// The policy text.
		sr("SR-32", "The policy is pinned by its sha256",
			"The agent or anyone else edits the policy file between the person writing it and the launch.",
			"The launcher reads the file once, compares the sha256 of those bytes with --policy-sha256 before anything else, and parses the same bytes; a mismatch starts nothing (exit 123) and never suggests a hash.",
			Boundary, "policy.TestHashMatchesSha256sum", "policy.TestVerify", "launcher.TestIntegrationHashMismatch", "launcher.TestIntegrationPolicyReadOnce"),
		sr("SR-12", "Paths and text are printable and normalised",
			"A path with .., //, a trailing slash, a control character or a link in it binds something other than what it reads as.",
			"Every path must be absolute and already clean; C0 (tab and newline aside), C1 and DEL are refused anywhere in the file; read and exec paths through a symlink, and the sandbox's own private directories, are refused.",
			Boundary, "policy.TestPath", "policy.TestText", "policy.TestInvalidFiles", "policy.TestCheckLive"),
		sr("SR-13", "One value per key",
			"A key or value given twice, or spelled in two cases, lets the later silently win, so the policy does not read as it binds.",
			"Duplicate and miscased keys, values listed twice, a path in two lists and contradictory entries (pass and set, allow and deny, automatic and approval) are errors.",
			Boundary, "policy.TestValidate", "policy.TestInvalidFiles"),
		sr("SR-14", "Integers stay within what JavaScript keeps exact",
			"An integer beyond ±(2^53−1) reads differently in JavaScript and JSON consumers (the site, the hash playground) than in the launcher.",
			"Integers, sizes and durations beyond 2^53−1 are errors.",
			Boundary, "policy.TestInt", "policy.TestIntBoundsParse", "policy.TestParseSize", "policy.TestParseDuration"),
		sr("SR-15", "No lone surrogates",
			"A lone surrogate (escaped or encoded) is not a character; readers replace or drop it differently.",
			"The file must be valid UTF-8, and escapes of lone surrogates are errors.",
			Boundary, "policy.TestInvalidFiles"),
		sr("SR-16", "No bidi controls, zero-width or invisible characters",
			"A bidirectional control or invisible character, even in a comment, makes the rules display differently from how they parse.",
			"Bidi controls, zero-width characters, spaces other than ASCII space and tab, and unassigned or private-use characters are refused anywhere in the file.",
			Boundary, "policy.TestText", "policy.TestDomain", "policy.TestInvalidFiles"),
		sr("SR-33", "Unknown keys are errors and the version is required",
			"A misspelled key is silently ignored, so a restriction the person wrote does not exist.",
			"The schema walk refuses unknown keys with their line; version = 1 is required.",
			Boundary, "policy.TestInvalidFiles", "policy.TestEveryKeyCovered"),

		// Components mode.
		sr("SR-37", "In components mode the agent holds no file or network authority of its own",
			"An agent that can write the workspace, reach the network or open a Unix socket itself bypasses what the components decide and log.",
			`The agent runs under the policy less files.write (fs holds it), in an empty network namespace whose only listeners are the components', with Unix sockets refused; its direct writes fail (EROFS). A components-mode policy with network "ports", unix_sockets, or a write path outside the workspace is an invalid policy (check components-authority, exit 122: policy check names it, and a launch refuses it before the vault is unsealed or any component starts), and the launch checks it again; a components-mode launch never runs as wrapper mode.`,
			Boundary, "launcher.TestIntegrationComponentsModeNoDirectAuthority", "launcher.TestIntegrationComponentsFS", "policy.TestValidate"),
		sr("SR-38", "Component calls are authenticated by the session's CA and the call table",
			"Another local process, a certificate of another session or CA, the agent's certificate at kms, or one component's certificate used to act as another would reach authority it was not given.",
			"Mutual TLS 1.3 with an in-memory ed25519 CA per session and one leaf per role (role in a URI SAN); the call table (agent → fs, net, bash; bash → fs, net; net → kms) is checked by client and server, and again by each handler; Unix-socket callers of another uid are closed before TLS (SO_PEERCRED); every refusal is logged with the identity claimed. The agent's key is readable by its uid alone.",
			Boundary, "components/session.TestSessionAttach", "components/pki.TestCallMatrix", "components/pki.TestServerRefusesCredentials", "components/pki.TestExpiredLeafRefused", "components/pki.TestNoClientCertificateRefused", "components/rpc.TestTableHolds", "components/rpc.TestAllowPeers", "components/pki.TestClientChecksTableItself", "components/pki.TestPeerRoleRefusesOtherSessionOfSameCA", "components/fs.TestHandlersCheckRole"),
		sr("SR-39", "fs resolves every path beneath the workspace, by descriptor",
			`"..", absolute paths, symbolic links (planted, or swapped in for a parent between calls), mount points and magic links inside the workspace would let a brokered request reach files outside it.`,
			"fs resolves with openat2 (RESOLVE_BENEATH, NO_SYMLINKS, NO_MAGICLINKS, NO_XDEV) from a detached, idmapped clone of the workspace that no rename can leave, mutates by parent descriptor and *at calls, writes atomically, and is itself confined by Landlock to that clone (no sockets, no exec). Mutations of built-in protected paths (everything in a .git but lock files, and in a git directory known by its layout, a bare repository however named; shell rc files, .ssh, editor and agent config) and of the policy's are refused unless the person approves them on the launcher's terminal (SR-43), and always when there is no one to ask.",
			Boundary, "components/fs.TestMalformedPaths", "components/fs.TestResolveStaysBeneath", "components/fs.TestSymlinks", "components/fs.TestParentSwappedForSymlink", "components/fs.TestMountInside", "components/fs.TestProtected", "components/fs.TestBareRepoProtected", "components/fs.TestConfinement", "launcher.TestIntegrationComponentsFS"),
		sr("SR-40", "A session ends with any of its components, and nothing of it outlives the launcher",
			"An agent left running after a component died would go on without the checks that component made, or be retried with less; processes left behind after the launcher is killed would keep authority nobody supervises.",
			"A component's exit cancels the launch: stage 2 kills the agent, the other components are stopped, the reason is printed, and nothing is retried. Components carry the parent-death signal and run in cgroups of their own, which the session kills whole; the agent's tree ends with stage 2.",
			Boundary, "launcher.TestIntegrationComponentDeathStopsSession", "launcher.TestIntegrationComponentsLauncherKilled", "components/session.TestSessionStopKills", "components/session.TestSessionStopKillsComponentGroup", "components/session.TestSessionKMS"),

		sr("SR-41", "The agent's egress goes through net's domain policy and SSRF protection",
			`In "proxy" mode an agent could reach internal services, cloud metadata, or hosts the policy denies, by name, by an IP literal in an odd spelling, through a DNS answer that changes between check and connect, or through a redirect.`,
			`The agent's only route out is net's listener in its namespace. net normalises the host once (canonical IP literals only), applies the most specific allow or deny rule (deny at a tie, block_all otherwise), resolves once with its own resolver, classifies every address (loopback, private, link-local, CGNAT, metadata, multicast, documentation, reserved, the IPv4-carrying IPv6 forms) and refuses all but public ones unless unsafe_allow_private holds them (metadata only by its own /32 or /128), dials only a checked address, and refuses plain-HTTP redirects to refused targets and a Location a browser would read otherwise than Go. Denials answer 403 with the rule. launcher check url shows the decision without sending anything. In a byte tunnel net reads the client's first message before any of it goes on and closes the tunnel when it is TLS not starting with a ClientHello that names the CONNECT host alone (encrypted_client_hello refused unless network.allow_ech), an SSLv2-style hello, or plain HTTP (a token and any blank, or "HTTP/" on its first line).`,
			Boundary, "launcher.TestIntegrationComponentsProxy", "components/net.TestCheckFirst", "components/net.TestCheckFirstRecordsBeforeHello", "components/net.TestCheckFirstHTTPBlanks", "components/net.TestCheckFirstECH", "components/net.TestTunnelSNIMismatchRefused", "components/net.TestTunnelRecordBeforeHello", "components/net.TestTunnelECHAllowed", "components/net.TestProxyCheckLocationRefusesAmbiguous", "components/net.TestClassifyTableEdges", "components/net.TestClassifyMetadata", "components/net.TestDecideHostSpecificity", "components/net.TestDecideAddr", "components/net.TestMappedRefusedUnderAnyRange", "components/net.TestNormalizeHostRefuses", "components/net.TestProxyRebinding", "components/net.TestProxyDialsOnlyAllowedAddresses", "components/net.TestProxyRedirects", "components/net.TestProxyStorm"),
		sr("SR-42", "Secrets reach only their rule's host, never the agent",
			"An agent holding an API key can send it anywhere; one that can make the proxy attach it could have it sent to a host of its choosing, or read it back.",
			"The vault is unsealed by the launcher (read only from a directory others cannot write, not dumpable and with no core file while it holds the key and the values, which it clears once kms has them, encoding them itself rather than through encoding/json's pooled buffers) and handed to kms alone, which keeps the values in locked memory and releases one only to net, by certificate, for a host its rule names. net sets the header only on intercepted connections to that host (a request whose Host names another host, or another port than the CONNECT's, is refused, and the Host sent on is the CONNECT host, canonical), and only over TLS verified for the host; the agent trusts an interception CA name-constrained to the rules' hosts. The values are not in the agent's environment, files or /proc, nor in any log. On an intercepted connection TRACE, TRACK and CONNECT, named by the method, a method-override header or a _method field in the query, are refused before kms is asked (TRACE and TRACK for plain HTTP too; a form body's _method is not read, a documented limit), and so is a request carrying a header some servers route by instead of Host or the path (X-Forwarded-Host, X-Host, X-Forwarded-Server, X-HTTP-Host-Override, X-Original-Host, Forwarded, X-Original-URL, X-Rewrite-URL, X-Original-URI, X-Forwarded-Uri, X-Envoy-Original-Path, X-Forwarded-Path, X-Original-Path, X-Forwarded-Prefix, in any case, '_' for '-': secrets.route-header); a header a server may read as the rule's own (X_Api_Key for X-Api-Key) is dropped before net sets it, so the value goes up once; a chunked request's trailers, which come after the head, are dropped. The upstream is asked for identity encoding (an answer in gzip or deflate anyway is decoded and scanned, one in another coding refused), and an answer carrying the value verbatim in its status line, headers or trailers, or in a body net reads whole (at most 1 MiB with a Content-Length), is refused (502, secrets.reflected); a longer or streamed one is cut off before the value would pass. That last is defence in depth: a value echoed transformed (escaped, encoded) is not caught. Where the vault, its key file or the policy file lie in the workspace (named as given or through links), fs neither serves them nor moves or removes a directory above them, and no command runs while one is there. Elsewhere, where the policy's paths reach one, the sandbox of the agent and of every command covers it (a file by /dev/null mounted read-only and nodev, so opening it fails), whatever the command line names; in wrapper mode the vault and its lock at their default place are covered too (no vault is opened there, but a policy that reads the config directory would hand over the ciphertext, to guess the passphrase offline). A vault is replaced by rename (secrets add, rekey), which undoes a mount on the file for a command still running; where its directory holds only the launcher's own files (the default config directory: the vault, the gateway's token store, their locks and temporaries) that directory is covered instead, by an empty read-only tmpfs that a rename inside it does not undo. Residual: a vault beside other files (a --vault elsewhere) is covered as a file, so its new version is readable to a command running when it is replaced.",
			Boundary, "components/kms.TestBootstrapEncodeLeavesNoCopy", "components/kms.TestVaultFileRefusals", "components/kms.TestVaultGroupModesRefused", "components/fs.TestHiddenAuthority", "components/fs.TestHiddenAuthorityAncestors", "cmd/launcher.TestAuthorityPathsResolveLinks", "cmd/launcher.TestGuardMemory", "launcher.TestIntegrationComponentsOwnFilesCovered", "launcher.TestIntegrationWrapperOwnFilesCovered", "launcher.TestIntegrationOwnFilesReplacedStayCovered", "launcher.TestMaskListCoversOwnDirectory", "launcher.TestIntegrationComponentsSecretInjected", "launcher.TestIntegrationComponentsSecretUnseen", "components/net.TestInjectRefusesTrace", "components/net.TestRefusesMethodParam", "components/net.TestInjectRefusesRouteHeaders", "components/net.TestInjectDropsLookAlikeHeaders", "components/net.TestInjectDropsRequestTrailers", "components/net.TestInjectDecodesCompressedAnswers", "components/net.TestInjectRefusesReflected", "components/net.TestProxyTraceWithAndWithoutInjection", "components/net.TestReflectScanner", "components/net.TestInjectRefusesOtherHost", "components/net.TestInjectRuleOnlyItsHosts", "components/net.TestInjectHostPort", "components/net.TestInjectVerifiesUpstream", "components/net.TestInjectCANameConstraints", "components/kms.TestStoreRelease", "components/kms.TestStoreLocked", "components/kms.TestStoreMemoryFlags"),

		sr("SR-43", "Only the person approves what needs approval",
			"An agent that can answer the question itself (typing into the shared terminal, writing to its stdin, a file, or the channel) approves its own protected change; one that can write over the question while it waits makes the person approve something else.",
			"Questions travel from the component to the launcher over a socketpair the agent holds no end of, and are asked on the launcher's controlling terminal: the agent's whole tree is frozen (its cgroup) from before the question is written until the answer, and a question is not asked when it cannot be; on the person's terminal the agent has a pseudo-terminal of its own (SD-23), and the launcher stops copying keys to it and its output from it meanwhile (output it wrote just before it was frozen follows the answer, not the question), and stops the rest of its job (a pipeline's other processes: what the agent had written to launcher … | cat was written after the question, and redrew its lines: a re-test) until the answer; the question is asked only while the launch is the terminal's foreground job, never taking the terminal from another job (from the background, after Ctrl-Z and bg, it took it from the person's shell, which exited, and the lines typed to the shell became the answer: a re-test), with TOSTOP and the launcher's own terminal settings; ends any sequence the agent left open and resets what could hide or move the question (scrolling region, modes, colours, attributes), draws it at the foot of the screen with nothing after it, asks only what fits one screen, discards typeahead and the first moment's keys, voids an answer holding an escape sequence, and wants the exact word with a four-digit code drawn for that question (so a prompt the agent drew, or a question it hid, cannot be answered); TIOCSTI is refused to the agent (SR-17). No terminal, no answer in time, or any other answer is no; every decision is logged in the session directory.",
			Boundary, "launcher.TestIntegrationComponentsApproval", "launcher.TestIntegrationComponentsApprovalAgentFrozen", "components/approve.TestAskPauseFails", "components/approve.TestAskNotFromTheBackground", "launcher.TestIntegrationComponentsApprovalPipelineHeld", "components/approve.TestAskAgentCannotAnswer", "components/approve.TestAskDeclined", "components/approve.TestAskTerminalReplyVoids", "components/approve.TestAskFitsTheScreen", "components/approve.TestAskCodes", "components/approve.TestChannel", "components/fs.TestProtectedApproval", "components/fs.TestQuestionNamesTheWholeChange"),

		sr("SR-44", "A recursive delete is confirmed and backed up first",
			"An agent deletes the wrong tree (the workspace, a home directory, a repository) and nothing can bring it back.",
			`Through fs, or through a shell command bash recognises as one (rm -r in every spelling, find -delete, git clean -fdx, git rm -f…), a recursive delete needs the person's separate confirmation (the word "delete" and the question's code, default cancel), and before anything is removed a copy is staged in the workspace's backup store (root's, outside the agent's reach) and verified against the tree by hash (older backups are evicted to make room only when the person confirms it, shown which: fs asks; bash's deletions never evict, and ask as deletions without a backup); for a shell command the copy is of each target's literal leading directory (a glob or variable widens it; a cd, any other command on the line, a ".." after a name or a target deeper than a name in /tmp makes it the whole workspace; a tree the agent moves into a target through fs while the command runs goes unkept, as a file fs deletes at its word does); when no backup fits the quota, only a second, explicit irreversible confirmation lets it go ahead; any other backup failure cancels it. fs removes the tree by descriptor (links removed, never followed), and when that fails after the backup it names the backup. The quota charges each entry's path and link target as well as its content, and a manifest is at most 64 MiB. launcher backups restores contents, modes and times byte for byte and never overwrites; every restored entry belongs to the workspace's owner and none is setuid or setgid (fs recorded owners as its idmapped mount showed them); what an agent named is printed escaped.`,
			Boundary, "launcher.TestIntegrationComponentsRecursiveDelete", "launcher.TestIntegrationComponentsShellApproval", "launcher.TestIntegrationComponentsShellQuota", "components/bash.TestBrokerRecursiveDelete", "components/bash.TestBackupRoots", "components/fs.TestBackupForBash", "components/fs.TestDeleteRecursiveBackedUp", "components/fs.TestDeleteRecursiveNoRoom", "components/fs.TestDeleteRecursiveEvictionAsked", "cmd/launcher.TestBackupsRemove", "components/fs.TestDeleteRecursiveBackupFails", "components/fs/backup.TestQuotaEviction", "components/fs/backup.TestStageDeleteRestore", "components/fs/backup.TestSourceChangedDuringStaging", "components/fs/backup.TestFullDiskMidCopy", "components/fs/backup.TestRestoreGivesTheCallersOwner", "components/fs/backup.TestQuotaChargesLinkTargets", "components/fs/backup.TestManifestReadBounded", "components/fs.TestDeleteRecursiveRemovalFailsAfterBackup", "cmd/launcher.TestBackupsRestoreGivesWorkspaceOwner", "cmd/launcher.TestBackupsEscapeNames"),
		sr("SR-45", "The agent's shell commands are decided before they run, and run confined",
			"An agent runs git push, a publish or a deployment, or a command it hid in a substitution, a bash -c string or a wrapper, without the person knowing.",
			"In components mode the agent runs commands only through bash (launcher sh): every simple command is found and decided under [commands] and the built-in rules (an approval prefix also matches a command that may be it when it runs: a word known only then, what xargs or find -exec fill in, options or NAME=value before the prefix's next word, a target runner's targets anywhere in any order (make all deploy for \"make deploy\"), the prefix's options anywhere in other spellings (git push -f or --force-with-lease for \"git push --force\", cp -r -f for \"cp -rf\"), and by a few programs' own tables another name of the prefix's subcommand either way round (npm rum deploy or npm runScript deploy for \"npm run deploy\", npm pub for \"npm publish\", cargo b, docker rm for \"docker container rm\", yarn deploy for \"yarn run deploy\"), kubectl's resource types in other spellings (kubectl get secrets, secret/db or pods,secrets for \"kubectl get secret\") and options whose letter does not start their long name (tar xf for \"tar --extract\", curl -T for --upload-file, git branch -D for --delete --force); not user-defined aliases, nor other programs' other names; a rustup proxy's named +TOOLCHAIN is passed over: cargo +nightly publish is a publish; an auto prefix matches literal words only); what needs approval is shown whole (quoted) on the launcher's terminal and runs only on the person's yes; refused commands never run; what runs, runs as bash --norc --noprofile -c in a worker the launcher confines like an agent (a throwaway uid, Landlock, seccomp, namespaces with no network, the agent's limits, no shell start-up variables), killed at commands.timeout, its output cut at commands.output. Nothing is retried any other way.",
			Boundary, "launcher.TestIntegrationComponentsShell", "launcher.TestIntegrationComponentsShellApproval", "components/bash.TestBrokerApproval", "components/bash.TestBrokerRefusedAndInvalid", "components/bash.TestBrokerAutoRuns", "components/bash.TestRunnerChannel", "components/bash.TestTable", "components/bash.TestPrefixMayMatch", "components/bash.TestPrefixOptionImplies"),
		sr("SR-46", "A command worker cannot rewrite protected paths",
			"A command that does not name .git/hooks (a build script, an interpreter one-liner that assembles the path) rewrites a git hook or a shell start-up file, which then runs outside the sandbox.",
			"Before each command the launcher walks the workspace (bounded; failing rather than answering from part of it) for the protected paths that exist — the built-in names at any depth, git's hooks, config and commondir beneath every .git and every bare repository, the policy's own, what the workspace's git configs name there (a core.hooksPath, a core.fsmonitor program, an included file: read when the session starts and again before each command and after each protected change through fs the person approves, with the same bounded reader, so a config the person changed during the session counts; a path once named stays protected), what links at those paths or inside them lead to in the workspace (a hook linked to the project's scripts/pre-commit, a core.hooksPath through a linked directory: the destination as written and as resolved; fs protects the same at the start and after each approved change), the launcher's files — and mounts each read-only over the worker's writable workspace: whatever the analyzer saw, writes fail with EROFS. So the person is not asked about a write that would fail: a line that needs them only for a redirection, or mv's destination, to such a path (a literal path in the workspace under fs's names, git's hooks and config, or the policy's files.protected; not on a line that changes folder or may make a link) is refused at once, naming the path and launcher fs write, which asks them.",
			Boundary, "launcher.TestIntegrationComponentsShell", "launcher.TestIntegrationComponentsShellReadOnlyWriteRefused", "components/bash.TestReadOnlyWriteRefused", "components/bash.TestBrokerReadOnlyWriteNotAsked", "launcher.TestIntegrationComponentsGitConfigNamed", "components/fs.TestGitConfigNamedInLinks", "components/fs.TestProtectedNowLinks", "launcher.TestIntegrationComponentsGitConfigAsGitReads", "launcher.TestIntegrationComponentsGitConfigChanged", "launcher.TestIntegrationComponentsGitConfigEditedByPerson", "components/fs.TestProtectedNowReadsConfigs", "components/fs.TestProtectedIn", "components/fs.TestProtectedInBareRepo", "components/fs.TestProtectedInFolds", "components/fs.TestProtectedInTooLarge"),

		sr("SR-47", "A Code Mode script reaches nothing but its tools",
			"A model's script breaks out of its interpreter — through eval, a function constructor, a module, the host's files or network — or a tool call spends authority the policy did not give.",
			"Two layers. The static check refuses eval, Function, require, import, process, Deno, globalThis, Reflect and constructor/__proto__/prototype in every spelling it can parse, with line and column. The script then runs in a fresh QuickJS VM with no std or os module, eval and Function deleted, the function constructors neutralised and the bridge frozen, in a worker process that is in an empty network namespace and, before it reads the script, confines itself (Landlock with no file rule, seccomp refusing exec, sockets and any new process, rlimits); a test-only build of the worker tries a file, two sockets and a fork once confined and all four fail. In a session its tools go through fs, bash's command policy (automatic commands only) and net (fetch, under the agent's own network rules), and the budget is counted by the serving side.",
			Boundary, "components/code.TestWorkerConfined", "launcher.TestConfineComponent", "components/code.TestValidateRejects", "components/code.TestValidateAccepts", "components/code.TestIsolateEscapes", "components/code.TestIsolateGlobals", "components/code.TestIsolateBridgeFrozen", "components/code.TestSpawnToolBudget", "launcher.TestIntegrationCodeRun", "launcher.TestIntegrationComponentsCode", "launcher.TestIntegrationComponentsCodeFetch"),
		sr("SR-48", "A runaway script ends at its deadline and its limits",
			"A script loops, recurses, allocates or waits forever, or floods its output, and holds the agent's session or the host.",
			"Inside the VM: an interrupt at the deadline that no catch or finally survives, the heap limit (any allocation it refuses ends the run, whatever catches the error; call frames, which the engine keeps outside the heap, are bounded by the static check's caps on parameters, arguments and variables, and bind makes heap arrays), the stack limit, the tool-call budget, the output cap, the script size, each a distinct error; a promise that can never settle ends at once; a tool call's argument past about 6 MiB of JSON is the script's error. Outside it: the parent kills the worker WorkerGrace after the deadline whatever it is doing, and the worker is gone when the run returns; as root each worker (a session runs at most four) is in a cgroup of its own, on v2, hybrid and v1 hosts alike: memory for the [code_mode] heap and 256 MiB for the runtime, without swap, and 64 processes, so memory the VM's heap limit does not see (the runtime's, within RLIMIT_DATA's heap and 1 GiB) is bounded by the kernel, which kills the worker (the run ends as the memory limit); when the worker ends the group is killed whole (whatever it still holds) and removed, and where no group can be made the script does not run (SR-04); unprivileged the worker has its rlimits alone. A worker's start waits for a command that holds the launcher's runner only while its caller waits. The serving side runs at most four of its calls at once, and answers within what one rpc answer carries; code run's exit status says which refusal it got (119 the static check alone, 120 a script over script_size, 117 a script that ran and failed).",
			Boundary, "components/code.TestWorkerCgroup", "components/code.TestWorkerGroupKilledWhole", "components/code.TestSpawnCgroupMemory", "components/code.TestWorkerCgroupSpec", "components/bash.TestStartCodeHonoursContext", "cmd/launcher.TestCodeRefusedExit", "components/code.TestIsolateDeadline", "components/code.TestIsolateMemory", "components/code.TestIsolateMemoryCaught", "components/code.TestIsolateHeapGuard", "components/code.TestIsolateBind", "components/code.TestValidateFrameBounds", "components/code.TestIsolateManyJobs", "components/code.TestIsolateBoundedErrors", "components/code.TestIsolateStack", "components/code.TestIsolateToolBudget", "components/code.TestIsolateOutput", "components/code.TestIsolateScriptSize", "components/code.TestSpawnRunawayLoop", "components/code.TestSpawnKillsAtDeadline", "components/code.TestSpawnLeavesNoProcess", "components/code.TestSpawnLargeArgument", "components/code.TestSpawnCallsInFlight", "components/bash.TestCodeAnswerFits"),
		sr("SR-49", "The MCP server adds no authority",
			"`launcher mcp` becomes a way around the components: it reads, writes, runs or fetches on the host itself, serves outside a session, answers without the person where the policy asks them, or a malformed or flooding client crashes it and cuts the agent off.",
			"It holds nothing: every tool is a call to fs, bash or net with the agent's own credential through the listeners in the agent's namespace, so it gets exactly the decisions the `launcher fs`/`sh`/`net` verbs get (the components' rules, the person's questions, backups before recursive deletes). Without a session's credential and addresses, and in wrapper mode, it refuses to start. Denials are tool errors naming the rule. Its own line transport answers malformed JSON-RPC with the specification's errors and goes on; input schemas bound every argument; at most 16 calls run at once; a client that goes cancels its calls.",
			Boundary, "launcher.TestIntegrationMCP", "launcher.TestIntegrationMCPWrapperRefused", "cmd/launcher.TestScripts", "components/mcpserver.TestDenials", "components/mcpserver.TestApprovalBlocks", "components/mcpserver.TestBadArguments", "components/mcpserver.TestMalformedJSONRPC", "components/mcpserver.TestConcurrentCalls", "components/mcpserver.TestClientDisconnectMidCall"),
		sr("SR-50", "A gateway caller gets exactly the authority it proved",
			"Someone reaching `launcher serve` over the network gets more than their token allows: a guest reaches the owner's project, secrets or the host; a token without host.execute gets full access, or a refused request is quietly served in another mode; one caller uses another's session; a session calls back into the gateway; token guessing or a flood of requests exhausts the host or leaves sessions behind.",
			"Identity is the Authorization header alone (owner tokens stored as sha256, checked in constant time); the client's address is the socket peer's. No token, or one that is not valid, is a guest: a policy derived from the pinned one with a new empty workspace, of the owner's read and exec paths only those in the system's trees (an allowlist), no secrets, no private-range exceptions and at most 1 GiB of memory, in a components-mode session that fails rather than runs unsandboxed; guests get at most half the sessions, two per address, and a workspace that is a tmpfs of its own (64 MiB and 16384 files by default). Full access (unconfined, as the workspace's owner with that user's own primary group and groups, never root or root's group) needs a token with host.execute; asking without it is refused with 403, never converted. Sessions are bound to the token's hash and end when it is revoked, or loses a capability their mode needs (host.execute taken out of the store by hand), also while their initialize is answered; ending one cancels its calls first; a token presented while the store cannot be read gets 503, neither a guest's session nor a revocation. Invalid tokens count against the peer (an IPv6 peer's /64) and too many get 429. Cross-origin browser requests are refused, and so is a request whose Host or Origin does not name the gateway as it is served (its address, loopback names on loopback, its certificate's names, --allow-host: DNS rebinding), and a protocol version the sessions do not serve; connections are bounded (--max-connections, an eighth of them per address or IPv6 /64 but loopback, whose clients are all local, one more answered 503 and closed); the log lines a request can cause without a session are rate-limited, a session's log is at most 8 MiB and all of them 1 GiB. A session is bound to its caller and ends with its sandbox, on DELETE, when idle and at shutdown; sessions, bodies and headers are bounded; sessions reach no network but through net, which refuses loopback, private ranges and the host's own addresses, and no session reads the gateway's TLS key, token store or session logs: guests' policies leave out every path that holds one, and every session's launcher keeps them as its own files (PINFOLD_SELF_FILES): fs hides them, bash refuses a command that names one, and where an owner's pinned policy reads their directory, the sandbox of the agent and of every command covers each (a file by /dev/null mounted read-only and nodev, so opening it fails; a directory by an empty read-only tmpfs), so that a command that names none (cat DIR/*, $(ls), a script) reads nothing of them. The token store is replaced by rename on every change, which would undo a cover of the file for a command still running: where the policy reaches it, its directory is covered instead (a rename inside a covered directory does not show through), and `launcher serve` refuses to start when that directory holds anything but the store, its lock and the launcher's other own files. Residual (Low, and `launcher serve` warns at its start where the policy reaches it): the cover is path-based, so a hard link or another mount of a file is not covered, and the TLS key, the person's file, is covered as a file, so a key replaced while a command runs is not covered for that command.",
			Boundary, "launcher.TestIntegrationGateway", "launcher.TestIntegrationGatewayStorm", "launcher.TestIntegrationGatewaySandboxFailure", "launcher.TestIntegrationGatewayLifecycle", "launcher.TestIntegrationGatewayEndWithCallInFlight", "gateway.TestGuestPolicy", "gateway.TestIsLoopback", "gateway.TestOwnerCredential", "gateway.TestUnreadableStore", "gateway.TestEndDuringInitialize", "gateway.TestSessionBinding", "gateway.TestCrossOriginRefused", "gateway.TestProtocolVersionHeader", "gateway.TestRequestLinesLimited", "gateway.TestSessionLogCapped", "gateway.TestPruneLogsBySize", "gateway.TestHostChecked", "gateway.TestConnectionsBounded", "gateway.TestConnectionsPerSource", "gateway.TestConnectionsLoopbackOneSource", "gateway.TestConnectionOverBoundIdleAnswered", "gateway.TestCapabilityTakenEndsFullAccess", "gateway.TestCapabilityTakenEndsFullAccessAtOnce", "gateway.TestGatewayFilesHidden", "launcher.TestIntegrationGatewayHidesItsFiles", "launcher.TestIntegrationComponentsOwnFilesCovered", "launcher.TestMaskList", "launcher.TestMaskListRefuses", "launcher.TestMaskListCoversOwnDirectory", "launcher.TestIntegrationGatewayStoreReplacedStaysCovered", "cmd/launcher.TestServeStoreCover", "cmd/launcher.TestSelfFiles", "cmd/launcher.TestScripts"),
		sr("SR-51", "In wrapper mode the agent cannot rewrite what the person's programs run from the workspace",
			"The agent writes a git hook or .git/config (core.fsmonitor, core.hooksPath, an alias) in its writable workspace, or a nested repository's, editor configuration (.vscode's tasks) or a shell start-up file there; the person's next git status, commit or editor session runs it unconfined, as the person.",
			"Before a wrapper-mode launch, the launcher looks through the write paths (bounded, as SR-46's walk) for the protected paths fs knows — the built-in names at any depth (.vscode, .mcp.json, .ssh, shell start-up files, .gitconfig, .config/git), git's hooks, config, config.worktree and commondir beneath every .git and bare repository, a .git file — and stage 2 mounts each that exists read-only over the write paths, the directories above it mounted on themselves so that none can be renamed away and made again (mv .git fails with EBUSY). A link inside a protected directory to a file in the write paths (a hook linked to the project's tools/pre-commit) has that file mounted read-only as well, by a path of real directories; any other link there, or a file there with another name, is said as uncovered. It also reads the git configs that apply to each repository found, and to the one a write path lies in (its config and config.worktree, the config of the git directory a .git file or commondir names, and the person's /etc/gitconfig, $XDG_CONFIG_HOME/git/config or ~/.config/git/config, and ~/.gitconfig), following include.path and includeIf's path whatever the condition (strictly and bounded: 1 MiB a file, 10 includes deep, 4096 files and 8 MiB in all, the shallowest repositories first), and mounts read-only what they name inside the write paths (through the person's own links outside them, as git opens it), ranked after the repositories' own paths: core.hooksPath's directory (relative to the working tree's root, core.worktree's where set, or to a bare repository), each included file, and what any other value names by a path (gpg.program's whole value, which git runs with no shell; for the rest, which git runs by the shell, every word of every command the shell runs in it — after ;, &&, |, a newline, inside $(…) and `…` — quotes taken away, that holds a slash and is no URL or ref: a command's name, assignments such as GIT_TRACE=1 passed over, and each word given to one, since it may be what runs (core.fsmonitor = sh .githooks/mon.sh, core.sshCommand = env tools/ssh, a textconv's python3 tools/conv.py, a pager's cat $(tools/x), git 2.39 runs each): core.fsmonitor, core.sshCommand, a diff driver's textconv, a filter, an alias's !command, what an alias's -c key=value options name as the file's own would, and the programs an alias without ! gives git's own command to run (rebase --exec tools/x, difftool --extcmd, bisect run, submodule foreach, filter-branch's filters, grep -O, --upload-pack; git 2.39 runs each), a remote's uploadpack or receivepack, which git runs itself when the remote is a path, a submodule's update !command), relative to the working tree's root. A word given to a program is mounted only where it is a file at the start, and not said where it is not there (most are none git runs: git log origin/main..x; one the agent makes is named when it ends, as SD-27 says), so a file a value gives to a program is read-only for the agent though it may be a source file. A path's leading ~ and ~user are expanded as git and sh expand them (a ~ sh leaves, quoted as in sh \"~/x\", names the working tree's ./~/x), ~user's home read from /etc/passwd (a user it does not hold, one of a network directory, is said as uncovered, never taken for nothing), and a value's leading %(prefix)/ as git's install prefix: Debian's git's /usr, and that of the git on $PATH where it is another. So a project's .githooks or .husky/_ is read-only for the agent as .git/hooks is. A named path that does not exist yet, is a link or is reached through one, has another name, or is a write path itself, and a config that cannot be read (malformed, too large, not a regular file), is said as uncovered (the named paths one by one up to 20, then their count). The rest of a repository stays writable: the agent commits, branches and checks out. What cannot be covered (a symbolic link, a FIFO or socket, or a hard-linked file at a protected name, a tree past the walk's bound, more paths than one launch mounts, the write path's own repository and start-up files kept first) is said on the launch's summary line as uncovered (with --quiet, as a warning); the count of read-only paths is said there too.",
			Boundary, "launcher.TestIntegrationProtectedReadOnly", "launcher.TestIntegrationProtectedUncoveredSaid", "launcher.TestIntegrationProtectedFifoSaid", "launcher.TestIntegrationProtectedUncoveredQuiet", "launcher.TestIntegrationProtectedDecoys", "launcher.TestIntegrationProtectedHookLinkTarget", "launcher.TestIntegrationProtectedGitConfigNamed", "launcher.TestIntegrationProtectedGitConfigAsGitReads", "launcher.TestIntegrationProtectedGitConfigPastFirstWord", "components/fs.TestProtectedMounts", "components/fs.TestProtectedIn", "components/fs.TestProtectedMountsGitConfig", "components/fs.TestProtectedMountsGitConfigWorktree", "components/fs.TestProtectedMountsGitConfigRemotePrograms", "components/fs.TestProtectedMountsGitConfigDecoyFirst", "components/fs.TestProtectedMountsGitConfigUnreadSaid", "components/fs.TestProtectedMountsGitConfigThroughLinks", "components/fs.TestProtectedMountsGitConfigAliasOptions", "components/fs.TestProtectedMountsGitConfigEnclosing", "components/fs.TestProtectedMountsGlobalGitConfig", "components/fs.TestParseGitConfig", "components/fs.TestProgramOf", "components/fs.TestProtectedMountsGitConfigPastFirstWord", "components/fs.TestGitConfigNamedAsGitRuns", "components/fs.TestValuesNamedUserAndPrefix", "components/fs.TestProtectedMountsGitConfigUserAndPrefix", "components/fs.TestGitConfigReaderIncludes", "components/fs.TestReadConfigFileNotKernelFiles"),
		sr("SR-52", "The agent cannot open the person's terminal",
			"Started from the person's shell with every standard stream redirected (launcher … </dev/null >log 2>&1), the agent opens /dev/tty, its controlling terminal and the person's, where a policy lists it for a prompt: it writes to the person's screen and reads what is typed to the shell.",
			"On the person's terminal the agent's controlling terminal is a pseudo-terminal of its own (SR-17's relay). Off a terminal, stage 2 stays in the launcher's session and process group, so the terminal's Ctrl-C and Ctrl-Z still reach the agent, but gives up the controlling terminal (TIOCNOTTY) before the agent starts: /dev/tty fails with ENXIO whatever the policy lists. The sandbox's /dev still shows the person's terminals by path (/dev/pts/N): unprivileged, where the agent's uid is the person's, a launch whose files lists reach one it may read (/dev/pts, /dev or / listed) is refused before anything starts.",
			Boundary, "launcher.TestIntegrationOffTerminalNoControllingTerminal", "launcher.TestIntegrationTerminalListedRefused", "launcher.TestListedTerminal"),

		// The evidence.
		{ID: "SR-09", Title: "A refusal counts only with a successful control run",
			Threat:  "A probe is refused for an unrelated reason (a missing file, a kernel without the feature) and the refusal is taken as proof that a control works.",
			Control: "Every denied assertion in the integration and seccomp tests runs the same probe unconfined and requires it to succeed, else the result is a failure or an explicit skip; `launcher register check` reports such a result as inconclusive, and its SR-09 check shows it on real runs (a refusal beside a control that fails for its own reason).",
			Kind:    Expectation, Status: Fixed, Since: since,
			Evidence: []string{"launcher.TestSeccompKernel", "launcher.TestIntegrationReadOutsideLists", "register.TestJudge", "register.TestRejudge"}},

		// Documented limits.
		sd("SD-01", "A launcher started by the agent is a Setting",
			"If the agent itself starts the launcher, it can start itself without it: the confinement is then a Setting, not a Boundary.",
			"Nothing in the launcher can tell who started it. `launcher hello` prints this on every host report; the person must start the launcher.",
			"launcher.TestHostText", "cmd/launcher.TestScripts"),
		sd("SD-02", "Empty cgroups of a SIGKILLed launcher are swept later",
			"A launcher killed with SIGKILL runs no cleanup; its session cgroups stay behind.",
			"The agent's tree still dies with it (SR-27); the groups are empty, and the next launch in the same parent removes groups whose launcher is gone and that hold no process.",
			"launcher.TestCgroupSweepStale", "launcher.TestIntegrationLauncherKilled"),
		sd("SD-03", `"ports" mode restricts ports, not hosts`,
			"An allowed TCP port is reachable on every host, loopback included.",
			"Advice (launcher policy check) and the launch's summary line say so (the line on every run without --quiet, which drops it); host rules need proxy mode (the net component), where every connection is decided by name and address (SR-41).",
			"policy.TestAdvice", "launcher.TestAssess"),
		sd("SD-04", "UDP, ICMP and other IP protocols without a network namespace",
			`In "ports" mode the agent shares the host's network; Landlock covers TCP bind and connect only, so UDP (DNS included), ICMP, SCTP and raw IP are not covered.`,
			"Advice (launcher policy check) and the launch's summary line say so (the line on every run without --quiet, which drops it); a network namespace (\"none\") covers them.",
			"policy.TestAdvice", "launcher.TestAssess", "cmd/launcher.TestScripts"),
		sd("SD-05", "Address space is not resident memory",
			"Without a memory cgroup (unprivileged, or no usable controller) only RLIMIT_AS per process bounds memory; many processes together, or memory not mapped as address space, are not bounded. And address space is not what a program uses: runtimes that reserve much of it at start (Go, the JVM, V8) may not start under a limit that would hold their memory (a Go program does not under 512 MiB).",
			"The launch's summary line says so on every run without --quiet (which drops the line), and launcher hello --policy says so before; as root a memory cgroup bounds the tree (SR-36).",
			"launcher.TestAssess", "launcher.TestIntegrationMemoryLimit", "launcher.TestIntegrationMemoryWithoutController"),
		sd("SD-06", "No CPU or disk quota",
			"The agent uses all CPUs for as long as it runs, or fills the file systems its write paths are on.",
			"limits.cpu_time is RLIMIT_CPU per process, and limits.file_size is RLIMIT_FSIZE per file; nothing bounds the tree's CPU share or total bytes written. The private /tmp is a size-limited tmpfs."),
		sd("SD-07", "Landlock restricts one thread before ABI 8",
			"Before ABI 8 landlock_restrict_self confines only the calling thread: a multi-threaded stage 2 would keep unconfined threads, or threads in sibling domains between which signal scoping refuses signals.",
			"Stage 2 is one thread (C, run before the Go runtime starts), so the one restrict_self confines all of it, and the agent, its child, inherits the same domain.",
			"launcher.TestIntegrationSignalForwarded"),
		sd("SD-08", "A listed directory is listed whole",
			"A directory in a list grants everything beneath it, including files created later.",
			"Advice names each directory granted whole; the person lists narrower paths.",
			"policy.TestAdvice"),
		sd("SD-09", "32-bit (i386) programs cannot run",
			"A 32-bit program is killed by its first system call (SR-31), so tools shipped only for i386 fail under the launcher.",
			"Said in the launcher's documentation; there is no policy key to allow them.",
			"launcher.TestSeccompArchitectures"),
		sd("SD-10", "Seccomp is a deny list over a default allow",
			"A system call added to the kernel after the list was written (as open_tree_attr was in 6.15) is allowed until it is listed.",
			"The list is kept against new kernels; Landlock, the namespaces and the read-only mounts still apply to whatever a new call does."),
		sd("SD-11", `listen() without bind() is allowed in "ports" mode when something may bind`,
			"With bind_tcp listing a port or Unix sockets allowed, listen() on an unbound socket opens an ephemeral TCP port that Landlock does not check.",
			"The launch summary names it as uncovered.",
			"launcher.TestSeccompVerdicts"),
		sd("SD-12", "Pathname Unix sockets when allowed",
			"With network.unix_sockets = true, nothing checks connecting to a pathname socket: Landlock before ABI 9 cannot, and this launcher applies Landlock only up to ABI 7 on newer kernels too. Any socket the agent can reach through a listed path connects it to that server.",
			"The launch's summary line says the Boundary is degraded, Assess and hello say why, and advice warns; socket directories stay hidden unless listed (SR-08).",
			"launcher.TestAssess", "launcher.TestSummaryLineSaysDegraded", "policy.TestAdvice"),
		sd("SD-13", "Abstract Unix sockets below Landlock ABI 6 in ports mode",
			`With Unix sockets allowed in "ports" mode and no abstract-socket scope (ABI < 6), the host's abstract sockets are reachable.`,
			"The launch's summary line says the Boundary is degraded; Assess and hello give the kernel hint.",
			"launcher.TestAssess", "launcher.TestSummaryLineSaysDegraded"),
		sd("SD-14", "The live check sees symlinks, not bind mounts",
			"A write path that is the target of a bind mount still resolves elsewhere in a sense CheckLive does not detect.",
			"Said in the policy package's documentation; the person must not list bind-mounted paths they did not mean."),
		sd("SD-15", "fs reads through hard links",
			"A hard link inside the workspace to a file outside it (made by someone who could write both) is the same file: path resolution cannot tell, and fs reads it. fs's writes replace the name (rename), so they never change the outside file.",
			"Said in the fs package's documentation and shown by its test; the workspace must not hold hard links the person did not mean.",
			"components/fs.TestHardLinkLimit"),
		sd("SD-16", "Command workers have no network",
			`A command run through launcher sh runs in an empty network namespace even when the policy is in "proxy" mode (net serves the agent's namespace, not a worker's): npm install or git fetch through sh fails.`,
			"Said in launcher sh --help and the session's documentation; the agent's own tools reach the network through net.",
			"launcher.TestIntegrationComponentsShell"),
		sd("SD-17", "A protected path a command makes exists until the command ends",
			"The read-only mounts are of the protected paths that exist when a command starts: a command can create one that did not (a .git/commondir, .vscode/, a new repository's config), or a link at a protected name; and a protected file the person replaces during the command (git config renames a new one into place) is no longer under its read-only mount. Such a path is moved aside when the command ends, but while the command runs a git the person starts in the workspace (an editor's, polling) could read it and run what it names.",
			"Every protected path that appeared or changed while a command ran is moved aside (renamed beside itself, .pinfold-held-TIME: nothing is deleted), of any type (links, FIFOs), and the agent and the person are told. Changed means the file at the name is not one that was at a protected name before (device and inode, each held open during the command so no number is reused), so a repository the agent moves through fs meanwhile is not taken for new; questions wait while a command runs, so a change the person approves is made after it. The walk afterwards goes by descriptor (no path length stops it), has no entry limit, and takes each directory's .git before its other subdirectories; one that still cannot look through the whole workspace (a tree deeper than 2,048 levels) moves what it found and turns commands off for the session. a link inside a .git directory or at .config is found as a protected name (never followed), fs is frozen while the workspace is checked after a command (so the agent cannot move what the command made past the check), a protected file with a second name refuses commands, fs moves no file with another name, no symbolic link (nor a tree holding either) into a protected path, so no command can write a protected file through a second name. fs and the analyzer ask before any request or command that names one (the analyzer refuses without asking a line that needs the person only for a redirection, or mv's destination, to one, which the worker could not make); a command's life is bounded by commands.timeout; git's hooks and config exist in every repository, so they are read-only from its start.",
			"components/fs.TestProtectedIn", "components/fs.TestProtectedNamesInSymlink", "components/fs.TestProtectedNamesLinkedAncestors", "components/fs.TestProtectedInRefusesHardLinked", "launcher.TestIntegrationComponentsCheckSeesOneState", "components/fs.TestProtectedNamesInGoesOn", "components/fs.TestProtectedNamesInLongPaths", "components/fs.TestRenameIntoProtectedSingleLinked", "components/fs.TestRenameIntoProtectedNoLink", "launcher.TestIntegrationComponentsShell", "launcher.TestIntegrationComponentsShellRemovesOnlyNew"),
		sd("SD-18", "Only recognised deletions are confirmed and backed up",
			"A command that deletes without saying so — a program (python -c 'shutil.rmtree(...)', tar --remove-files, a script it wrote), or git switching branches, merging or pulling over an ignored file or directory (git takes ignored files as expendable: a branch that tracks .env replaces the person's) — runs as an automatic command, with no confirmation and no backup; so does a tree the agent moves through fs into a target between its backup and the command's start.",
			"The bash package's documentation lists what is recognised. A line runs automatically only inside a conservative subset of bash, checked on every node of it (a command's words, [[ ]], case, for lists, nested expansions, here-document bodies): arithmetic of numbers and operators only (no names, assignments or expansions: x='a[$(rm -rf src)]'; echo $((x)) needs approval), no ${!…}, ${x@…} or ${x:=…}, subscripts of digits, @ or * only, literal words for the builtins that assign, evaluate or take code (declare, printf -v, read, compgen, fc …), no upper-case target for them; aliases, PS4, PROMPT_COMMAND need approval (builtin.shell-eval); the worker cannot write protected paths or reach the network whatever runs; a shell deletion's backup and run hold one lock against the agent's other commands.",
			"components/bash.TestTable", "components/bash.TestBrokerRecursiveDelete"),
		sd("SD-19", "A caught stack overflow is not a limit error",
			"QuickJS throws a stack overflow as an ordinary error, and its stack check calls nothing the isolate can watch: a script that catches one and goes on is not stopped by that limit.",
			"Its stack stays bounded (deeper calls keep failing), the deadline still ends it, and an uncaught one is the limit's own error. Memory is not like this: any allocation the heap limit refuses ends the run, caught or not.",
			"components/code.TestIsolateStack"),
		sd("SD-20", "Unprivileged, the metadata of a file the person redirects the agent's output to can change",
			"A regular file on descriptors 0-2 (launcher … > out.log) stays open on the host's writable mount: an unprivileged agent, which is the person's uid, can fchmod, futimens or fsetxattr it through that descriptor (Landlock does not check them). Terminals are opened again read-only (SR-21); a file cannot be, since a read-only mount refuses opening it for writing.",
			"As root the agent's throwaway uid owns none of them; the file's contents are the agent's output anyway; redirect to a file in a directory only you can enter, or through a pipe (launcher … | tee out.log), which has no metadata to change.",
			"launcher.TestIntegrationUnprivileged"),
		sd("SD-21", "Outside the lists, a file's metadata and the host's activity in a directory can be seen",
			"Landlock checks opening, listing and changing files, not stat, readlink, inotify or extended attributes: the agent can learn whether a path it can name exists, its size, owner, mode and times, its inode flags, project id and extent count (file_getattr, Linux 6.17), and, with inotify_add_watch on a directory its uid may search, the names of files the host opens, creates or deletes there, as it happens. Unprivileged, the agent is the person's uid, so that includes the person's own private directories (which keys in ~/.ssh exist, and when one is used).",
			"Contents and listings stay refused. Extended attributes by path (getxattr, listxattr and their l and at forms) are refused by seccomp (a hunt read a download's origin URL, token and all, from a file outside every list); on a descriptor, whose open Landlock checked, they stay. fanotify, which reports activity by inode and across a whole mount, is refused by seccomp. inotify is left to agents because tools inside the workspace depend on it (file watchers), and seccomp cannot tell a workspace path from another. As root the agent's throwaway uid may search only what anyone may. Keep what must not even be known to exist outside what the person's uid can search, or run as root.",
			"launcher.TestSeccompKernel"),
		sd("SD-22", "A file with another name in a write path is writable by that name",
			"A hard link is the same file under two names: one in a write path makes the file writable, whichever list its other names are in. A repository cloned from a local path (git hard-links its objects) or a pnpm store linked into node_modules leaves files whose other names are in a read or exec path: the agent changes them there, or runs what it wrote by the exec path's name (SR-01, SR-21 and SR-34 go by path). The agent cannot make such links itself (Landlock refuses linking across its trees, and protected_hardlinks files it does not own): they are made before the launch.",
			"launcher policy check walks each write path and advises on the files with more than one name (the launch does not: the walk is as long as the workspace). Give such files one name (git clone --no-hardlinks; cp a file over itself), or keep their other names out of every list.",
			"launcher.TestIntegrationHardLinkLimit", "policy.TestHardLinked"),
		sd("SD-23", "What the agent writes reaches the person's terminal",
			"On the terminal the launcher was started from, the agent runs on a pseudo-terminal of its own: the launcher copies the person's keys to it and its output to the person's terminal, so that shells and editors work, with their job control. What the agent writes, the person's terminal interprets: escape sequences change its title, colours and modes (the alternate screen, mouse or focus reports, bracketed paste), or its clipboard where the terminal emulator allows it (OSC 52), and ask it for reports, which the terminal answers as typed input. While the agent runs, keys and answers go to the agent; an answer that comes once the agent has gone is read by the person's shell, and one that holds text the program chose (a window title report, where an emulator still answers it) types what the agent wrote. Keys the person types while the agent runs are the agent's.",
			"The agent holds no descriptor of the person's terminal: it cannot take its foreground, change its modes or size, or read from it, whether it runs, is stopped or has ended. (It shared the terminal before: a process of its tree that ran while the launch was not the foreground job took the terminal and read the person's next line, and each way in took a check of its own, the last leaving a 5 ms window.) The launcher copies keys only while it is the foreground job and the agent runs: a launch started with & waits for fg before anything is made; Ctrl-Z stops the agent's whole tree and then the launcher's job, as the terminal's own Ctrl-Z would (the rest of a pipeline too: launcher … | tee log had stopped the launcher but not tee, and the shell gave no prompt: a re-test) (a SIGTSTP that reaches the launcher alone, the terminal's Ctrl-Z with stdin not the terminal or kill -TSTP of its pid, is passed to the agent: the launcher had stopped alone, and the agent ran on unwatched: re-tests; a SIGSTOP of the launcher, or a SIGTTIN or SIGTTOU sent to it, still stops it alone), and bg leaves the agent stopped until fg (a signal that ends a job, kill %1, reaches it without fg and ends the launch, as it ends any stopped job; a launch waiting for fg then never starts its agent); while an approval question is asked (SR-43) neither keys nor output are copied. The person's terminal is in raw mode while keys are copied (the agent's terminal does the line editing, echo and signals, by the agent's own modes) and has its own modes back on Ctrl-Z, for a question, and once the agent is gone. A signal key ends what the relay read with it (as a terminal drops what is queued behind it), and after Ctrl-Z the relay reads nothing until the agent has stopped (at most 500 ms). A Ctrl-Z that reaches stage 2 before the agent runs, or the agent's process before its execve, is passed on to the agent once it runs. A stopped tree is still held stopped: frozen as root on cgroup v2, elsewhere killed if any of it runs by itself. With no shell to continue it (an orphaned process group: exec launcher, script -c, a tmux window) a stop is undone, as the kernel does for an orphaned job, and the agent goes on. A stdin that is another session's terminal is refused. After the agent's last output the launcher turns off the reports it may have left on (mouse, focus, bracketed paste: the terminal would send them to the person's shell as typed input), shows the cursor and resets attributes. Residual: the other escape sequences above, and answers to reports the agent asked for just before it ended. Use a terminal emulator that answers no report with text a program chose (xterm's allowWindowOps is off by default; most emulators no longer report titles), and clear the screen (reset) after an agent you do not trust.",
			"launcher.TestIntegrationInteractiveTTY", "launcher.TestRelayHoldHoldsOutput", "launcher.TestRelayEndResetsReports", "launcher.TestIntegrationJobControlStopsTheTree", "launcher.TestIntegrationJobControlSelfContinued", "launcher.TestIntegrationTerminalModesRestored", "launcher.TestSeccompKernel", "launcher.TestIntegrationSteerInit", "launcher.TestThreadsStoppedFailsClosed", "launcher.TestIntegrationJobControlBackground", "launcher.TestIntegrationJobControlFlicker", "launcher.TestProcessMarkSeesARun", "launcher.TestIntegrationJobControlBackgroundDuringSetup", "launcher.TestIntegrationStdinAnotherSessionsTerminal", "launcher.TestIntegrationOutputAnotherSessionsTerminal", "launcher.TestIntegrationNoJobControlBackground", "launcher.TestIntegrationJobControlCtrlZDuringLaunch", "launcher.TestIntegrationJobControlCtrlZAtExec", "launcher.TestIntegrationJobControlOrphanedCtrlZ", "launcher.TestIntegrationJobControlCtrlZStdinNotTerminal", "launcher.TestIntegrationJobControlCtrlZStopsThePipeline", "launcher.TestIntegrationJobControlKillJob", "launcher.TestIntegrationJobControlWatchWoken"),
		sd("SD-24", "Unprivileged, the agent shares the person's per-user kernel budgets",
			"Unprivileged, the agent is the person's uid outside its user namespace, and some kernel budgets are counted per user across namespaces: inotify instances and watches (fs.inotify.max_user_instances, 128 by default), and the processes RLIMIT_NPROC counts. An agent that uses them up leaves the person's other programs without (a file watcher that cannot start; a shell that cannot fork until the agent ends).",
			"The agent's own RLIMIT_NPROC is set from the policy's processes; as root the agent is a throwaway uid of its own and a pids cgroup bounds it (SR-04). Run as root, or on a host where the person's other work does not depend on those budgets.",
			"launcher.TestIntegrationUnprivileged"),
		sd("SD-25", "A file the agent may read can be locked against the person",
			"Landlock checks opening a file, not locking it: the agent can hold a lock (flock, fcntl F_SETLK or F_OFD_SETLK) on a file of a read path for as long as it runs, and a program of the person's that locks the same file waits or fails meanwhile (sqlite said \"database is locked\"; a hunt). Nothing is read or changed that the policy does not allow.",
			"Leases, which also hold the person's writes, are refused (SR-17's seccomp rules); locks are not, as seccomp cannot tell a read path's file from the workspace's, where sqlite, git and package managers need them. Keep files other programs write and lock (databases, mailboxes) out of the read paths, or stop the agent to free them.",
			"launcher.TestSeccompKernel"),
		sd("SD-26", `In "ports" mode the host's sockets can be seen, and abstract socket names taken`,
			`"ports" mode keeps the host's network namespace (SD-03, SD-04): the agent can list the host's sockets and recent TCP peers (/proc/net, sock_diag, tcp_metrics), and bind an abstract Unix socket name with an end of a socketpair, so that a host program that binds the same name (an X display, a single-instance lock) fails while the agent runs. Landlock's scoping (ABI 6) covers connecting to abstract sockets, not binding them, and seccomp cannot read the address.`,
			`"none" gives the agent a network namespace of its own, where both are its own; proxy mode gives it one too, with the network through the net component.`,
			"launcher.TestAssess"),
		sd("SD-27", "In wrapper mode, a protected path the agent makes is not read-only",
			"SR-51 mounts read-only only what exists when the launch starts: a repository the agent makes (git init, a clone), a .vscode, .mcp.json or shell start-up file it creates, a nested repository's hooks it adds, or a commondir it adds to an existing repository's .git (which points git at a config and hooks of its making), stay writable until the launch ends, and the person's programs run them afterwards as for any file the agent wrote; so does a path a git config names (a core.hooksPath, a core.fsmonitor program, an included file) that does not exist at the start. What a config names is covered only as far as the config says it: a file a named program or a hook runs in turn (husky's .husky/_/h runs .husky/pre-commit; pre-commit's .pre-commit-config.yaml, lefthook.yml, make lint), a program named without a slash (found by PATH, which may list a workspace directory), a word an expansion or a glob makes known only when the shell runs it ($HOME/x, \"$X\", tools/*.sh), a program given to git's own command in an alias without ! other than by the options read (rebase's --exec, difftool's --extcmd, grep's -O, the transports' --upload-pack, --receive-pack and --exec, filter-branch's filters, bisect run's and submodule foreach's command, each read as sh reads it, are), a relative one submodule foreach runs in a submodule, grep -O's pager in a subdirectory git grep is run from, or filter-branch's filters in its temporary tree (said as not covered), a %(prefix)/ of a git neither Debian's nor on $PATH, and a config git is given by the environment or the command line (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, GIT_CONFIG_PARAMETERS, git -c) are not read, and the person's next commit runs what the agent wrote there. An interactive rebase the agent leaves stopped runs its todo's exec lines at the person's git rebase --continue.",
			"Nothing can be mounted over a name that does not exist, and Landlock grants a write path whole. When the agent ends, the launcher looks again and names each protected path, and each path a config names, that was not there at the start, as a warning on every run (--quiet too), and says so when it could not look through the whole tree (the agent can make it too large or too deep for the bounded walk) or read a config: then what it made there is not named; the next launch makes them read-only. The files a hook or a named program runs in turn are the project's own, which the agent edits by design, and every hook manager names its own (nothing tells them apart from the rest of the tree), so they are not looked for: a person whose hooks run project files reviews those files, as the project's build, before committing. Components mode asks the person before fs makes a protected name, and moves aside those a command made (SD-17); it reads the workspace's git configs when the session starts and protects what they name in the workspace as the policy's files.protected (fs asks before changing one, a command's worker has it read-only, one a command makes is moved aside; the question for a git config's write lists, wherever they stand in it, the values git runs or reads: a core.hooksPath, an include, an alias's !command, a program, a remote's URL), and reads them again, with the same bounded reader, after each protected change through fs the person approves (fs asks the launcher, which reads them, and holds its other changes until it has the answer: a core.hooksPath the approved .git/config adds is asked about from the next write on) and before each command; what they named stays protected, and what could not be read is said on the launcher's terminal and in fs's log. A config the person edits themselves during the session (in place, replaced by a rename, or made where git reads one: an included file, a ~/.gitconfig, the workspace's .git/config after git init) reaches fs before the next change it serves: the launcher watches each config file it read or looked for, and the directory each lies in, with inotify, and fs asks the kernel before each write, mkdir or rename whether an event waits (one ioctl), and if so has the launcher read the configs again first, refusing the change when they could not be; a repository made below the workspace's root during the session reaches fs only when the configs are next read (an approved change, another config's edit; commands have it at once); a file the agent wrote before the person approved the config that names it is as the agent wrote it (the question shows the config, not what it names): the launcher says on its terminal, after the change, which newly named paths exist already.",
			"launcher.TestIntegrationProtectedMadeSaid", "launcher.TestIntegrationProtectedMadeUnseenSaid", "launcher.TestIntegrationProtectedMadeSaidOnError", "components/fs.TestProtectedMounts", "components/fs.TestProtectedMountsGitConfig", "launcher.TestIntegrationComponentsGitConfigNamed", "launcher.TestIntegrationComponentsGitConfigAsGitReads", "launcher.TestIntegrationComponentsGitConfigChanged", "launcher.TestIntegrationComponentsGitConfigEditedByPerson", "components/fs.TestRefreshAfterApprovedConfigChange", "components/fs.TestQuestionSaysConfig", "components/fs.TestRefreshAfterApprovedInclude", "components/fs.TestRefreshHoldsOtherChanges", "components/fs.TestMatcherAddKeeps", "components/fs.TestRefreshOverSays", "components/approve.TestChannelRefresh", "components/fs.TestRecheckAfterPersonEdits", "components/session.TestConfigWatchSeesEdits", "components/approve.TestChannelRecheck", "launcher.TestIntegrationComponentsGitConfigEditedByPersonAsked"),
	}
}
