package register

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/policy"
)

// Every check proves a register entry that exists and is a risk (SR).
func TestChecksNameRiskEntries(t *testing.T) {
	ids := CheckIDs()
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("check ids %v are not sorted and unique", ids)
	}
	for _, id := range ids {
		e, ok := Lookup(id)
		if !ok {
			t.Errorf("check %s: no register entry", id)
			continue
		}
		if !strings.HasPrefix(id, "SR-") {
			t.Errorf("check %s: only risks (SR) have checks; %s is %s", id, id, e.Status)
		}
	}
}

func TestForkedLine(t *testing.T) {
	for line, want := range map[string]int{"forked 18 of 100 EAGAIN": 18, "forked 0 of 100 EACCES": 0, "forked 100 of 100": 100, "ok": -1, "": -1} {
		if got := forked(line); got != want {
			t.Errorf("forked(%q) = %d, want %d", line, got, want)
		}
	}
}

// Each check's own verdict logic: its refusal line is a refusal, its
// success line is not, and the control's success line is a success.
func TestCheckPredicates(t *testing.T) {
	type lines struct{ refused, notRefused, controlOK Run }
	ok := Run{Line: "ok", Code: 0}
	deny := Run{Line: "denied EACCES", Code: 1}
	std := lines{deny, ok, ok}
	// A policy-text refusal as the launcher words it (its last stderr line).
	text := func(why string) lines {
		return lines{Run{Code: 122, Stderr: "launcher: error: p.toml:5: " + why}, ok, ok}
	}
	cases := map[string]lines{
		"SR-04": {Run{Line: "forked 18 of 100 EAGAIN"}, Run{Line: "forked 100 of 100"}, Run{Line: "forked 100 of 100"}},
		"SR-01 an exec path beneath a write path": {Run{Code: 122, ErrorLine: `launcher: error: p.toml:5: files.write: write path "/w" contains exec path "/w/bin": a file the agent writes could then be executed`, Stderr: "launcher: hint: keep written and executable trees apart; build outputs run from a write path are refused by design"}, ok, ok},
		"SR-11":                   {Run{Line: "absent"}, Run{Line: "present", Code: 1}, Run{Line: "present", Code: 1}},
		"SR-12 not clean":         text(`files.read[0]: path "/usr/share/" is not clean (write it as "/usr/share"): the text must read as it binds (SR-12)`),
		"SR-12 not printable":     text(`files.read[0]: string "/o/bell\a" holds character U+0007 at byte 45: control characters are not allowed in policy text (SR-12)`),
		"SR-12 not NFC":           text(`files.read[0]: path "/o/cafe\u0301" is not in Unicode normal form C ("/o/caf\u00e9" is): it displays like another name that is a different directory; rename it to the NFC spelling (SR-12)`),
		"SR-13":                   text("10:16: network.mode: Key 'network.mode' has already been defined"),
		"SR-14":                   text("limits.processes: integer 9007199254740993 is outside ±(2^53-1): JavaScript and JSON readers would not keep it exact (SR-14)"),
		"SR-15":                   text(`10:14: env.set.A: Escaped character '\uD800' is not valid UTF-8`),
		"SR-16":                   text("2:3: character U+202E: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)"),
		"SR-33":                   {Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}, ok, ok},
		"SR-33 no version":        {Run{Code: 122, Stderr: "launcher: error: p.toml:1: `version` is missing: write `version = 1` at the top"}, ok, ok},
		"SR-26":                   {Run{Line: "euid 1879048193 uid 1879048193"}, Run{Line: "euid 0 uid 0"}, Run{Line: "euid 0 uid 0"}},
		"SR-25":                   {Run{Code: 124, ErrorLine: "launcher: error: refused: launcher: the launcher's /w/launcher is beneath /w, which the agent can write: it could replace code the next launch runs: nothing was started", Stderr: "launcher: hint: keep the launcher outside the write paths"}, ok, ok},
		"SR-31":                   {Run{Code: 159}, ok, ok},
		"SR-27":                   {Run{Line: "no process left"}, Run{Line: "a process remains"}, Run{Line: "a process remains"}},
		"SR-18":                   {Run{Line: "euid 1879048200 uid 1879048200 chmod denied EPERM"}, Run{Line: "euid 0 uid 1879048200 chmod denied EPERM"}, Run{Line: "euid 0 uid 65534 chmod ok"}},
		"SR-18 nosuid exec path":  {Run{Line: "opts nosuid,relatime,ro"}, Run{Line: "opts relatime,ro"}, Run{Line: "opts relatime,rw"}},
		"SR-18 nosuid write path": {Run{Line: "opts idmapped,nodev,noexec,nosuid,relatime,rw"}, Run{Line: "opts idmapped,nodev,noexec,relatime,rw"}, Run{Line: "opts relatime,rw"}},
		"SR-21":                   {Run{Line: "denied EROFS", Code: 1}, ok, ok},
		"SR-51":                   {Run{Line: "denied EROFS", Code: 1}, ok, ok},
		"SR-52":                   {Run{Line: "denied ENXIO", Code: 1}, ok, ok},
		"SR-53 setrlimit":         {Run{Line: "lowered ok, core soft 1 hard 1"}, Run{Line: "lowered ok, core soft 0 hard 0"}, Run{Line: "lowered ok, core soft 0 hard 0"}},
		"SR-53 setrlimit-call":    {Run{Line: "lowered ok, core soft 1 hard 1"}, Run{Line: "lowered ok, core soft 0 hard 0"}, Run{Line: "lowered ok, core soft 0 hard 0"}},
		"SR-53 prlimit-pid":       {Run{Line: "lowered EPERM, core soft 1 hard 1"}, Run{Line: "lowered ok, core soft 0 hard 0"}, Run{Line: "lowered ok, core soft 0 hard 0"}},
		"SR-53 prlimit-old":       {Run{Line: "lowered EPERM, core soft 1 hard 1"}, Run{Line: "lowered ok, core soft 0 hard 0"}, Run{Line: "lowered ok, core soft 0 hard 0"}},
		"SR-02":                   {Run{Code: 122, Stderr: "launcher: hint: name the real path, and check who planted the link"}, ok, ok},
		"SR-32":                   {Run{Code: 123}, ok, ok},
		"SR-36":                   {Run{Code: 137}, ok, ok},
		"SR-17":                   {Run{Line: "denied EPERM", Code: 1}, ok, ok},
		"SR-17 linux":             {Run{Line: "denied EPERM", Code: 1}, ok, Run{Line: "denied ENOTTY", Code: 1}},
		"SR-20 socketpair":        {Run{Line: "denied EAFNOSUPPORT", Code: 1}, Run{Line: "denied ENOTSUP", Code: 1}, Run{Line: "denied ENOTSUP", Code: 1}},
		"SR-29":                   {Run{Line: "denied ESRCH", Code: 1}, ok, ok},
		"SR-23":                   {Run{Code: 125, Stderr: `launcher: error: stage 2 mounts: "/w" passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02): the agent was not started`}, ok, ok},
		"SR-24":                   {Run{Code: 124, ErrorLine: "launcher: error: refused: host: landlock files: Landlock is unavailable: kernel built without Landlock (landlock_create_ruleset: ENOSYS): nothing was started", Stderr: "launcher: hint: a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"}, ok, ok},
		"SR-38":                   {Run{Line: "denied handshake", Code: 1}, ok, ok},
		"SR-38 the agent asking for bash's call (fs's backup)": {Run{Line: "denied reason-caller-role", Code: 1}, ok, ok},
		"SR-43":                           {Run{Line: "denied fs.protected", Code: 1}, ok, ok},
		"SR-49":                           {Run{Line: "denied fs.beneath", Code: 1}, ok, ok},
		"SR-44":                           {Run{Line: "denied fs.delete-recursive", Code: 1}, ok, ok},
		"SR-45":                           {Run{Line: "denied bash.declined", Code: 1}, Run{Line: "exit 0 "}, Run{Line: "exit 0 "}},
		"SR-46":                           {Run{Line: "exit 1 cp: cannot create regular file '././.git/hooks/pre-commit': Read-only file system"}, Run{Line: "exit 0 "}, Run{Line: "exit 0 "}},
		"SR-47":                           {Run{Line: `value "refused TypeError"`}, Run{Line: `value "constructed function"`}, Run{Line: `value "inside\n"`}},
		"SR-48":                           {Run{Line: "denied limit:deadline (code: deadline limit exceeded: the script ran past its deadline of 2s)", Code: 1}, Run{Line: "value 1000"}, Run{Line: "value 1000"}},
		"SR-40":                           {Run{Code: 125, Stderr: "launcher: error: component fs exited: signal: killed: the session was stopped and the agent killed"}, ok, ok},
		"SR-39":                           {Run{Line: "denied fs.beneath", Code: 1}, ok, ok},
		"SR-42":                           {Run{Line: "absent 3; status 200 - authorization:"}, Run{Line: "found /proc/self/environ", Code: 1}, Run{Line: "status 200 - header-carries-the-secret"}},
		"SR-41":                           {Run{Line: "status 403 ssrf.loopback pinfold: denied-host (ssrf.loopback): …"}, Run{Line: "status 200 - " + webPage}, Run{Line: "status 200 - " + webPage}},
		"SR-41 the domain policy":         {Run{Line: "status 403 network.block_all pinfold: denied-host (network.block_all): localhost matches no allow rule and block_all is true"}, Run{Line: "status 200 - " + webPage}, Run{Line: "status 200 - " + webPage}},
		"SR-13 a key in another case":     {Run{Code: 122, Stderr: `launcher: hint: did you mean "mode"?`}, ok, ok},
		"SR-13 a value listed twice":      text(`files.read[1]: "/usr/share" is listed more than once: each value is listed once`),
		"SR-13 a path in read and write":  text(`files.read: "/w" is listed in both read and write: write already grants read, so list it once`),
		"SR-13 a variable passed and set": text(`env.set: "PINFOLD_CHECK_A" is both passed and set: give it one value`),
		"SR-14 a size":                    text(`limits.file_size: size "9007199254740993B" is over the limit of 2^53-1 bytes (SR-14)`),
		"SR-15 encoded in a comment":      text("2:3: invalid UTF-8 (byte 0xed): a policy is UTF-8 text; is this a binary file?"),
		"SR-16 escaped in a value":        text(`env.set.A: string "\u202e" holds character U+202E at byte 0: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)`),
	}
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if os.Geteuid() == 0 {
		// As root SR-04 is the refusal on a host without cgroups; a fork
		// bomb bounded by what is left (RLIMIT_NPROC) is a weaker run,
		// not that refusal.
		cases["SR-04"] = lines{Run{Code: 124, Stderr: "launcher: hint: mount cgroup2 at /sys/fs/cgroup (mount -t cgroup2 cgroup2 /sys/fs/cgroup)"},
			Run{Line: "forked 18 of 100 EAGAIN"}, Run{Line: "forked 100 of 100"}}
	}
	// SR-25's second case is refused by the rule about the launcher's
	// other names.
	cases["SR-25 hard-linked into the workspace"] = lines{Run{Code: 124, ErrorLine: "launcher: error: refused: launcher: the launcher's /s/xbin/launcher has 2 names (hard links), and one may be beneath a path the agent can write: it could change the file the next launch runs: nothing was started"}, ok, ok}
	// SR-47's second case says what this was, then each name's fate.
	cases["SR-47 eval and Function"] = lines{Run{Line: `value "object refused TypeError refused TypeError"`}, Run{Line: `value "object refused TypeError reached Function"`}, Run{Line: `value "inside\n"`}}
	// SR-40's cases each name the component killed; fs's refusal is not
	// another's.
	for _, role := range []string{"bash", "kms"} {
		cases["SR-40 "+role] = lines{Run{Code: 125, Stderr: "launcher: error: component " + role + " exited: signal: killed: the session was stopped and the agent killed"},
			Run{Code: 125, Stderr: "launcher: error: component fs exited: signal: killed: the session was stopped and the agent killed"}, ok}
	}
	// SR-28's second case is net's exit ending the launch; the agent
	// sleeping to its end is not it.
	cases["SR-28 net killed"] = lines{Run{Code: 125, Stderr: "launcher: error: component net exited (signal: killed): the agent was killed; nothing runs without its proxy"}, ok, ok}
	// SR-50's refusal names the owner's file, in this scratch.
	cases["SR-50"] = lines{Run{Line: "exit 1 cat: " + filepath.Join(s.ws, "inside") + ": Permission denied"}, Run{Line: "exit 0 the owner's project"}, Run{Line: "exit 0 the owner's project"}}
	// SR-45's worker refused the file outside, in this scratch.
	outsideSecret := filepath.Join(s.outside, "secret")
	cases["SR-45 confined"] = lines{Run{Line: "exit 1 cat: " + outsideSecret + ": Permission denied"}, Run{Line: "exit 0 "}, Run{Line: "exit 0 "}}
	for _, c := range checks() {
		if c.id == "SR-50" && os.Geteuid() != 0 {
			continue // the gateway is root's: skipped when run (TestRegisterCheck)
		}
		first, err := c.prepare(s)
		if err != nil {
			t.Fatalf("%s: prepare: %v", c.id, err)
		}
		for _, pc := range append([]probeCase{first}, first.also...) {
			if pc.skip != nil && pc.refused == nil {
				continue // a check this runner skips (as not root): nothing to judge
			}
			if c.id == "SR-10" && pc.name == "stage 2" {
				continue // judged by what its race saw, not by a line: TestSR10Stage2Case
			}
			if c.id == "SR-38" && pc.name == "the agent's certificate at kms's socket" {
				continue // likewise: TestSR38TableCase
			}
			id := strings.TrimSuffix(c.id+" "+pc.name, " ")
			l, ok := cases[id] // a case of its own, else the check's
			if !ok {
				l, ok = cases[c.id]
			}
			if !ok {
				l = std
			}
			refused, success := pc.refused, pc.ok
			if refused == nil {
				refused = deniedLine
			}
			if success == nil {
				success = okLine
			}
			if !refused(l.refused) {
				t.Errorf("%s: %+v is not taken as a refusal", id, l.refused)
			}
			if refused(l.notRefused) {
				t.Errorf("%s: %+v is taken as a refusal", id, l.notRefused)
			}
			if !success(l.controlOK) {
				t.Errorf("%s: control %+v is not taken as a success", id, l.controlOK)
			}
		}
	}
	// A refusal for another reason is not the one these checks are about:
	// an agent left root is not refused by SR-18; Landlock's EACCES is not
	// the read-only mount SR-21 is about.
	for _, c := range []struct {
		id    string
		other Run
	}{
		{"SR-18", Run{Line: "euid 0 uid 0 chmod denied EPERM"}},
		{"SR-18", Run{Line: "euid 1879048200 uid 1879048200 chmod ok"}}, // a set-uid file was made
		{"SR-21", Run{Line: "denied EACCES", Code: 1}},
		{"SR-51", Run{Line: "denied EACCES", Code: 1}},
		// fs refusing bash's backup call for what it asks (the agent's
		// call let through to the handler, a mutant's answer), not for
		// the caller's role.
		{"SR-38 the agent asking for bash's call (fs's backup)", Run{Line: "denied fs.delete-recursive", Code: 1}},
		{"SR-23", Run{Code: 125, Stderr: "launcher: error: stage 2 mounts: tree /w changed owner"}},
		{"SR-24", Run{Code: 124, Stderr: "launcher: error: refused: cgroup: no v1 pids hierarchy"}},
		// Another refusal whose hint happens to name Landlock is not it.
		{"SR-24", Run{Code: 124, ErrorLine: "launcher: error: refused: cgroup: no v1 pids hierarchy", Stderr: "launcher: hint: a kernel with Landlock and cgroup2"}},
		// Any other refusal of the launch (Landlock missing) is not SR-25's.
		{"SR-25", Run{Code: 124, ErrorLine: "launcher: error: refused: landlock files: Landlock is unavailable", Stderr: "launcher: hint: a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"}},
		// The launcher refused by another rule (its path beneath the
		// workspace) is not the rule about its other names.
		{"SR-25 hard-linked into the workspace", Run{Code: 124, ErrorLine: "launcher: error: refused: launcher: the launcher's /w/launcher is beneath /w, which the agent can write: it could replace code the next launch runs: nothing was started"}},
		// A policy refused for another reason than the check's: a spoil
		// that broke something else proves nothing of the rule.
		{"SR-12", Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}},
		{"SR-13", Run{Code: 122, Stderr: `launcher: hint: did you mean "mode"?`}},
		{"SR-14", Run{Code: 122, Stderr: "launcher: error: p.toml:10: limits.processes: 0 is below the minimum 1"}},
		{"SR-15", Run{Code: 122, Stderr: "launcher: error: p.toml:10:1: expected a table"}},
		{"SR-16", Run{Code: 122, Stderr: "launcher: error: p.toml:2: unknown key"}},
		{"SR-33", Run{Code: 122, Stderr: "launcher: error: p.toml:9:16: network.mode: Key 'network.mode' has already been defined"}},
		{"SR-33 no version", Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}},
		{"SR-32", Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}},
		{"SR-26", Run{Line: "euid 1000 uid 1000"}},
		// The kernel's own answer is the call getting through: a
		// pseudo-terminal's ENOTTY to TIOCLINUX, vsock's EOPNOTSUPP to a
		// socketpair.
		{"SR-17 linux", Run{Line: "denied ENOTTY", Code: 1}},
		{"SR-20 socketpair", Run{Line: "denied ENOTSUP", Code: 1}},
		// fs refusing for another reason (the workspace's own protections)
		// is not the escape SR-39 is about; net refusing by domain rule is
		// not the SSRF check; a refusal by the agent's own kernel rules
		// (no socket) is not the session's handshake.
		{"SR-39", Run{Line: "denied fs.protected", Code: 1}},
		{"SR-41", Run{Line: "status 403 network.block_all pinfold: …"}},
		// The address refused (SSRF) is not the name refused by the
		// domain policy.
		{"SR-41 the domain policy", Run{Line: "status 403 ssrf.loopback pinfold: …"}},
		{"SR-38", Run{Line: "denied EACCES", Code: 1}},
		// A command that failed for another reason is not the read-only
		// mount; a refusal by rule is not the person's missing answer.
		{"SR-46", Run{Line: "exit 1 cp: cannot stat 'tpl/.': No such file or directory"}},
		{"SR-45", Run{Line: "denied bash.parse", Code: 1}},
		// The command refused before it ran is not the worker confined.
		{"SR-45 confined", Run{Line: "denied bash.declined", Code: 1}},
		// fs refusing for another reason is not the person's missing yes.
		{"SR-43", Run{Line: "denied fs.beneath", Code: 1}},
		{"SR-44", Run{Line: "denied fs.beneath", Code: 1}},
		// The MCP server failing for another reason is not fs's refusal.
		{"SR-49", Run{Line: "denied mcp-error", Code: 1}},
		// The agent's own upstream not reached, or reached with a header
		// of some kind, is not the secret kept.
		{"SR-42", Run{Line: "absent 3; status 403 ssrf.loopback pinfold: …"}},
		{"SR-42", Run{Line: "absent 3; status 200 - authorization: Bearer x"}},
		// A guest refused for another reason (the gateway's own error) is
		// not a workspace of its own.
		{"SR-50", Run{Line: "denied mcp-error", Code: 1, Stderr: "run_command: session: the sandbox did not start"}},
		{"SR-50", Run{Line: "exit 1 cat: /elsewhere: Permission denied"}},
		// Another limit, or the static check, is not the deadline.
		{"SR-48", Run{Line: "denied limit:memory", Code: 1}},
		// A deadline that is not the policy's (a default, or the policy's
		// value read wrong) is not SR-48's.
		{"SR-48", Run{Line: "denied limit:deadline (code: deadline limit exceeded: the script ran past its deadline of 10s)", Code: 1}},
		{"SR-48", Run{Line: "denied limit:deadline (code: deadline limit exceeded: the script ran past its deadline of 12s)", Code: 1}},
		{"SR-48", Run{Line: "denied limit:deadline", Code: 1}},
		{"SR-48", Run{Line: "denied code.static", Code: 1}},
		// The launcher failing for another reason is not the session
		// stopping with its component.
		{"SR-40", Run{Code: 125, Stderr: "launcher: error: stage 2 mounts: …"}},
		// RLIMIT_AS's answer (one process's address space, the launch
		// without a memory cgroup, SD-05) is not the tree's cgroup bound.
		{"SR-36", Run{Line: "denied ENOMEM", Code: 1}},
		// The kernel's own TIOCSTI refusal (legacy_tiocsti = 0: EIO
		// without CAP_SYS_ADMIN), or no terminal, is not seccomp's.
		{"SR-17", Run{Line: "denied EIO", Code: 1}},
		{"SR-17", Run{Line: "denied ENOTTY", Code: 1}},
		// A process there to signal, refused for the uid (root's sleeper,
		// the throwaway uid), is seen.
		{"SR-29", Run{Line: "denied EPERM", Code: 1}},
	} {
		// "SR-nn NAME" is the case of that name.
		id, name, _ := strings.Cut(c.id, " ")
		pc, err := checks()[indexOf(checks(), id)].prepare(s)
		if err != nil {
			t.Fatalf("%s: prepare: %v", c.id, err)
		}
		if name != "" {
			i := slices.IndexFunc(pc.also, func(a probeCase) bool { return a.name == name })
			if i < 0 {
				t.Fatalf("%s: no case %q", id, name)
			}
			pc = pc.also[i]
		}
		// No predicate of its own is runCase's default, deniedLine:
		// skipping it hid a check that took any errno as its refusal.
		refused := pc.refused
		if refused == nil {
			refused = deniedLine
		}
		if refused(c.other) {
			t.Errorf("%s: %+v is taken as its refusal", c.id, c.other)
		}
	}
	// The rule's upstream reached without the header is not the secret
	// live in the session.
	if pc, _ := checks()[indexOf(checks(), "SR-42")].prepare(s); pc.ok(Run{Line: "status 200 - no-header"}) || pc.ok(Run{Line: "status 502 secrets.upstream x"}) {
		t.Error("SR-42: a control whose request did not carry the value counts as a success")
	}
	// SR-03 on a host with neither a network namespace nor Landlock TCP
	// rules: the launch refused is the control holding, not the launcher
	// failing; another host refusal is not it.
	if pc, _ := checks()[indexOf(checks(), "SR-03")].prepare(s); pc.refused == nil ||
		!pc.refused(Run{Code: 124, ErrorLine: "launcher: error: refused: host: network: no network namespace (unshare: EPERM) and no Landlock TCP rules (ABI 3 < 4): nothing would keep the agent off the network: nothing was started", Stderr: "launcher: hint: x"}) ||
		pc.refused(Run{Code: 124, ErrorLine: "launcher: error: refused: host: landlock files: Landlock is unavailable: nothing was started", Stderr: "launcher: hint: x"}) {
		t.Error("SR-03: the launch refused for want of a network namespace and Landlock TCP rules is not taken as its refusal, or another refusal is")
	}
	// The fork bomb must be stopped by the limit, not by anything else.
	if pc, _ := checks()[indexOf(checks(), "SR-04")].prepare(s); pc.refused(Run{Line: "forked 0 of 100 EACCES"}) {
		t.Error("SR-04: a fork refused for another reason (EACCES before any child) counts as the limit")
	}
	// As root, a launch refused for something else than the missing
	// cgroup is not SR-04's refusal.
	if pc, _ := checks()[indexOf(checks(), "SR-04")].prepare(s); os.Geteuid() == 0 && pc.refused(Run{Code: 124, Stderr: "launcher: hint: a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"}) {
		t.Error("SR-04: a refusal for want of Landlock counts as the one for want of a pids cgroup")
	}
}

// SR-09's check passes only when a refusal beside a failed control was
// not counted; SR-23's keeps the usual verdict when its swap was in time.
func TestRejudge(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	prepare := func(id string) probeCase {
		pc, err := checks()[indexOf(checks(), id)].prepare(s)
		if err != nil || pc.rejudge == nil {
			t.Fatalf("%s: %v, rejudge %v", id, err, pc.rejudge != nil)
		}
		return pc
	}
	sr09 := prepare("SR-09")
	deny, missing := Run{Line: "denied EACCES", Code: 1}, Run{Line: "denied ENOENT", Code: 1}
	for _, c := range []struct {
		confined, control Run
		want              Verdict
	}{
		{deny, missing, Pass},                                 // the rule held: not counted
		{deny, Run{Line: "ok"}, Fail},                         // counted: only possible if the rule were broken
		{deny, Run{Code: -1, Err: "timed out"}, Inconclusive}, // some other failure
	} {
		v, why := judge(c.confined, c.control, deniedLine, okLine)
		if got, _ := sr09.rejudge(v, why); got != c.want {
			t.Errorf("SR-09 on (%+v, %+v): %s, want %s", c.confined, c.control, got, c.want)
		}
	}
	// SR-32: a policy refused as invalid (122) under a near-miss pin was
	// parsed before, or despite, the hash: a failure, not a broken run.
	sr32 := prepare("SR-32")
	for _, c := range []struct {
		confined Run
		want     Verdict
	}{
		{Run{Code: 123, Stderr: "launcher: hint: compute the hash"}, Pass},
		{Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}, Fail},
		{Run{Line: "ok"}, Fail},
		{Run{Code: 125}, Inconclusive},
	} {
		v, why := judge(c.confined, Run{Line: "ok"}, exitCode(123), okLine)
		if got, _ := sr32.rejudge(v, why); got != c.want {
			t.Errorf("SR-32 on %+v: %s, want %s", c.confined, got, c.want)
		}
	}
	// SR-02 and SR-12's clean case: a later layer's refusal (stage 2
	// finding the link; the live check resolving an unclean path) means
	// the layer the check is about let the policy through (a mutation
	// audit: each was inconclusive with its own layer off).
	sr02 := prepare("SR-02")
	sr12 := prepare("SR-12")
	for _, c := range []struct {
		id       string
		rejudge  func(Verdict, string) (Verdict, string)
		refused  func(Run) bool
		confined Run
		want     Verdict
	}{
		{"SR-02", sr02.rejudge, sr02.refused, Run{Code: 122, Stderr: "launcher: hint: name the real path, and check who planted the link"}, Pass},
		{"SR-02", sr02.rejudge, sr02.refused, Run{Code: 125, Stderr: `launcher: error: stage 2 mounts: "/o/wlink" passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02): the agent was not started`}, Fail},
		{"SR-02", sr02.rejudge, sr02.refused, Run{Code: 125, Stderr: "launcher: error: stage 2 mounts: tree /w changed owner"}, Inconclusive},
		{"SR-02", sr02.rejudge, sr02.refused, Run{Line: "ok"}, Fail},
		{"SR-12", sr12.rejudge, sr12.refused, Run{Code: 122, Stderr: `launcher: error: p.toml:5: files.read[0]: path "/usr/share/" is not clean (write it as "/usr/share"): the text must read as it binds (SR-12)`}, Pass},
		{"SR-12", sr12.rejudge, sr12.refused, Run{Code: 122, ErrorLine: `launcher: error: p.toml:5: files.read: read path "/usr/share/" resolves elsewhere ("/usr/share") (SR-12)`, Stderr: `launcher: hint: name the real path: "/usr/share"`}, Fail},
		{"SR-12", sr12.rejudge, sr12.refused, Run{Code: 122, Stderr: `launcher: hint: did you mean "read"?`}, Inconclusive},
	} {
		v, why := judge(c.confined, Run{Line: "ok"}, c.refused, okLine)
		if got, reason := c.rejudge(v, why); got != c.want {
			t.Errorf("%s on %+v: %s (%s), want %s", c.id, c.confined, got, reason, c.want)
		}
	}
	sr23 := prepare("SR-23")
	for _, v := range []Verdict{Pass, Fail, Inconclusive} {
		if got, _ := sr23.rejudge(v, "x"); got != v {
			t.Errorf("SR-23 with the swap in time: %s became %s", v, got)
		}
	}
}

// An inconclusive check with retries is run again, each time afresh, up
// to its count, and the result says which attempt it was; one without
// retries runs once.
func TestRetries(t *testing.T) {
	r := Runner{Launcher: "/bin/false", Timeout: 5 * time.Second} // every run fails: inconclusive
	for _, retries := range []int{0, 2} {
		attempts := 0
		c := check{id: "SR-23", prepare: func(s *scratch) (probeCase, error) {
			attempts++
			return probeCase{probe: []string{"noop"}, direct: true, retries: retries}, nil
		}}
		res := r.one(context.Background(), c)
		if res.Verdict != Inconclusive || attempts != retries+1 {
			t.Errorf("retries %d: %s after %d attempts", retries, res.Verdict, attempts)
		}
		if retries > 0 && !strings.HasSuffix(res.Reason, fmt.Sprintf("(attempt %d)", retries+1)) {
			t.Errorf("retries %d: reason %q does not say the attempt", retries, res.Reason)
		}
	}
}

// fakeLauncher is a stand-in for the launcher binary with which checks
// can be prepared but not run: it does nothing and succeeds, but for
// `serve`, which says where it serves and waits to be stopped.
func fakeLauncher(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "launcher")
	script := "#!/bin/sh\ncase \"$1 $2\" in\n\"serve token\") echo token ;;\nserve*) echo \"launcher: serving MCP on http://127.0.0.1:9/mcp\"; exec sleep 60 ;;\nesac\nexit 0\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// SR-52's refusal is /dev/tty opening nothing (ENXIO): a denial of
// another kind (the file not listed, EACCES) would pass the check without
// showing the controlling terminal given up.
func TestCheckSR52RefusesOnlyNoTerminal(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	i := indexOf(checks(), "SR-52")
	if i < 0 {
		t.Fatal("no SR-52 check")
	}
	pc, err := checks()[i].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if !pc.cttyOnly || pc.pty {
		t.Errorf("SR-52's runs: cttyOnly %v, pty %v; want the terminal as controlling terminal alone", pc.cttyOnly, pc.pty)
	}
	for line, want := range map[string]bool{"denied ENXIO": true, "denied EACCES": false, "denied EPERM": false, "ok": false} {
		if got := pc.refused(Run{Line: line, Code: 1}); got != want {
			t.Errorf("SR-52: %q taken as a refusal: %v, want %v", line, got, want)
		}
	}
}

// A check of several cases says which case decided its verdict: every
// case has a name of its own, and no case has cases of its own (they
// would not be run).
func TestCheckCasesNamed(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for _, c := range checks() {
		if c.id == "SR-50" && os.Geteuid() != 0 {
			continue // the gateway is root's (TestCheckPredicates)
		}
		pc, err := c.prepare(s)
		if err != nil {
			t.Fatalf("%s: prepare: %v", c.id, err)
		}
		if len(pc.also) == 0 {
			continue
		}
		seen := map[string]bool{}
		for j, one := range append([]probeCase{pc}, pc.also...) {
			if one.name == "" || seen[one.name] {
				t.Errorf("%s: case %q: every case needs a name of its own", c.id, one.name)
			}
			seen[one.name] = true
			if j > 0 && len(one.also) > 0 {
				t.Errorf("%s: case %q has cases of its own, which are never run", c.id, one.name)
			}
		}
	}
}

// The most severe verdict of a check's cases is the check's: one case
// failing fails it whatever the others, one that learned nothing leaves
// it inconclusive, a pass needs every case. The reason names each case
// with that verdict, and the runs are the first such case's.
func TestCombine(t *testing.T) {
	cases := []probeCase{{name: "a"}, {name: "b"}, {name: "c"}}
	r := func(v Verdict, line string) Result {
		return Result{Verdict: v, Reason: string(v) + " " + line, Confined: Run{Line: line}}
	}
	for _, c := range []struct {
		results []Result
		want    Verdict
		reason  string
		line    string
	}{
		{[]Result{r(Pass, "1"), r(Pass, "2"), r(Pass, "3")}, Pass, "a: pass 1; b: pass 2; c: pass 3", "1"},
		{[]Result{r(Pass, "1"), r(Fail, "2"), r(Inconclusive, "3")}, Fail, "b: fail 2", "2"},
		{[]Result{r(Inconclusive, "1"), r(Pass, "2"), r(Fail, "3")}, Fail, "c: fail 3", "3"},
		{[]Result{r(Pass, "1"), r(Inconclusive, "2"), r(Inconclusive, "3")}, Inconclusive, "b: inconclusive 2; c: inconclusive 3", "2"},
		{[]Result{r(Skipped, "1"), r(Pass, "2"), r(Pass, "3")}, Skipped, "a: skipped 1", "1"},
	} {
		got := combine(cases, c.results)
		if got.Verdict != c.want || got.Reason != c.reason || got.Confined.Line != c.line {
			t.Errorf("combine(%v) = %s %q (runs of %q), want %s %q (runs of %q)", c.results, got.Verdict, got.Reason, got.Confined.Line, c.want, c.reason, c.line)
		}
	}
	// A check of one case keeps its reason as it is.
	if got := combine(cases[:1], []Result{r(Fail, "1")}); got.Reason != "fail 1" {
		t.Errorf("one case: reason %q", got.Reason)
	}
}

// SR-51 run with launchers that leave one kind of path writable: each is
// a failure that names the case (a launcher that mounts the repository's
// own hooks but nothing its config names passed before, the only case
// being .git/hooks), and a launcher that makes the whole workspace
// read-only is no pass (the write beside them is refused too).
func TestCheckSR51Cases(t *testing.T) {
	i := indexOf(checks(), "SR-51")
	if i < 0 {
		t.Fatal("no SR-51 check")
	}
	for _, c := range []struct {
		writable []string // paths the fake launcher's confined write succeeds at
		want     Verdict
		says     []string
	}{
		{nil, Inconclusive, []string{".githooks/pre-commit (control: tools/notes written confined): control failed"}},
		{[]string{"tools/notes"}, Pass, []string{".git/hooks/pre-commit: refused", "core.hooksPath's .githooks/pre-commit: refused", "include.path's tools/git.inc: refused", "core.fsmonitor's tools/fsmonitor: refused", "core.sshCommand's tools/ssh (env tools/ssh): refused", "a shell start-up file (.bashrc): refused", ".git/config: refused"}},
		{[]string{"tools/notes", ".githooks/pre-commit"}, Fail, []string{"core.hooksPath's .githooks/pre-commit: not refused", "(control: tools/notes written confined): not refused"}},
		{[]string{"tools/notes", "tools/git.inc"}, Fail, []string{"include.path's tools/git.inc: not refused"}},
		{[]string{"tools/notes", "tools/fsmonitor"}, Fail, []string{"core.fsmonitor's tools/fsmonitor: not refused"}},
		{[]string{"tools/notes", "tools/ssh"}, Fail, []string{"core.sshCommand's tools/ssh (env tools/ssh): not refused"}},
		{[]string{"tools/notes", ".git/hooks/pre-commit"}, Fail, []string{".git/hooks/pre-commit: not refused"}},
		// A built-in name and the config itself (a mutation audit: with
		// either out of fs's protected names, the check passed).
		{[]string{"tools/notes", ".bashrc"}, Fail, []string{"a shell start-up file (.bashrc): not refused"}},
		{[]string{"tools/notes", ".git/config"}, Fail, []string{".git/config: not refused"}},
	} {
		r := Runner{Launcher: fakeWriter(t, c.writable...), Timeout: 10 * time.Second}
		res, _ := r.run(context.Background(), checks()[i])
		if res.Verdict != c.want {
			t.Errorf("writable %v: %s (%s), want %s", c.writable, res.Verdict, res.Reason, c.want)
		}
		for _, says := range c.says {
			if !strings.Contains(res.Reason, says) {
				t.Errorf("writable %v: reason %q does not say %q", c.writable, res.Reason, says)
			}
		}
	}
}

// fakeWriter is a stand-in launcher for write checks: run as the probe
// (the control run directly) it writes nothing and says ok; as a launch,
// it says ok for a write to a path ending in one of writable, else that
// the write was refused by a read-only mount.
func fakeWriter(t *testing.T, writable ...string) string {
	t.Helper()
	var cases string
	for _, w := range writable {
		cases += fmt.Sprintf("*/%s) echo ok; exit 0 ;;\n", w)
	}
	script := "#!/bin/sh\n[ \"$1\" = " + probeEntry + " ] && { echo ok; exit 0; }\nfor a; do last=$a; done\ncase \"$last\" in\n" + cases + "esac\necho denied EROFS\nexit 1\n"
	p := filepath.Join(t.TempDir(), "launcher")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// SR-03 as root also runs on a host without network namespaces (the
// launcher's probe wrapper without-netns): what SR-03 says of such a host
// is otherwise never run where one can be made. Mutant that passed
// before: a launcher that neither refused AF_INET sockets (DenyInet) nor
// handled Landlock's TCP access without a namespace passed on this case's
// absence. The empty namespace's ECONNREFUSED, which shows the launch
// made one after all, is not a refusal in that case.
func TestSR03WithoutNetNSCase(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the case is root's (without-netns needs a mount namespace)")
	}
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	c := checks()[indexOf(checks(), "SR-03")]
	pc, err := c.prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.also) != 2 || !slices.Equal(pc.also[0].wrap, []string{"without-netns"}) || !slices.Equal(pc.also[1].wrap, []string{"without-netns"}) {
		t.Fatalf("SR-03's cases: %d more, want two wrapped in without-netns (TCP, UDP)", len(pc.also))
	}
	// UDP: Landlock has no rule for it, so a launcher without seccomp's
	// AF_INET refusal passed the TCP case on Landlock's EACCES (a mutation
	// audit). The datagram must be refused where it would reach the host's
	// echo server.
	udp := pc.also[1]
	if udp.probe[0] != "udp-send" {
		t.Errorf("SR-03's second case probes %q, want udp-send", udp.probe)
	}
	if !udp.refused(Run{Line: "denied EPERM", Code: 1}) {
		t.Error("seccomp's EPERM is not taken as the datagram's refusal")
	}
	for _, r := range []Run{{Line: "ok"}, {Line: "denied ECONNREFUSED", Code: 1}, {Line: "denied EAGAIN", Code: 1}} {
		if udp.refused(r) {
			t.Errorf("%+v is taken as the datagram's refusal", r)
		}
	}
	refused := pc.also[0].refused
	for _, r := range []Run{{Line: "denied EPERM", Code: 1}, {Line: "denied EACCES", Code: 1},
		{Code: 124, Stderr: "launcher: error: refused: network: no network namespace (x) and no Landlock TCP rules (ABI 3 < 4): nothing would keep the agent off the network"}} {
		if !refused(r) {
			t.Errorf("%+v is not taken as a refusal without a network namespace", r)
		}
	}
	for _, r := range []Run{{Line: "denied ECONNREFUSED", Code: 1}, {Line: "ok"}} {
		if refused(r) {
			t.Errorf("%+v is taken as a refusal without a network namespace", r)
		}
	}
}

// SR-24's refusal is matched on the launcher's error line: a launcher
// whose refusal of a kernel without Landlock was gone refused the same
// launch by the ABI floor (ABI 0), whose hint does not name Landlock, and
// the check said the launcher had failed (a mutation audit).
func TestSR24RefusalOnTheErrorLine(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-24")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	floor := Run{Code: 124, ErrorLine: "launcher: error: refused: host: landlock files: write paths need Landlock ABI ≥ 3 so that truncation (ABI 3) and links and renames across directories (refer, ABI 2) are handled; have ABI 0: nothing was started", Stderr: "launcher: hint: Linux ≥ 6.2"}
	if !pc.refused(floor) {
		t.Errorf("the ABI floor's refusal %+v is not taken as a refusal", floor)
	}
	if v, why := judge(floor, Run{Line: "ok"}, pc.refused, okLine); v != Pass {
		t.Errorf("judged %s (%s), want pass", v, why)
	}
}

// SR-22's control reads another process the way the agent tries to read
// stage 2: reading its own environ, as it did, cannot fail, so the
// control showed nothing about reading another process.
func TestSR22ControlReadsAnotherProcess(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-22")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"read-environ", fmt.Sprint(s.sleeper)}; !slices.Equal(pc.controlProbe, want) {
		t.Errorf("SR-22's control probe %q, want %q (another process of the runner's)", pc.controlProbe, want)
	}
}

// SR-12's check has a case for each way its title names (a mutation
// audit: without the printable or the NFC rule for paths it passed on
// the clean case alone), each naming a directory that exists, so that a
// launcher taking the name runs the agent: a fail, not an inconclusive
// missing path.
func TestSR12Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-12")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		names = append(names, c.name)
	}
	if want := []string{"not clean", "not printable", "not NFC"}; !slices.Equal(names, want) {
		t.Fatalf("SR-12's cases %q, want %q", names, want)
	}
	for _, name := range []string{"bell\a", "cafe\u0301"} {
		if st, err := os.Stat(filepath.Join(s.outside, name)); err != nil || !st.IsDir() {
			t.Errorf("%q: not a directory the policy can list (%v)", name, err)
		}
	}
}

// SR-18's check looks at the mounts as well as the set-uid run: with
// no_new_privs the run gains nothing whether or not the mounts are
// nosuid, so a launcher that dropped nosuid from the host's mounts or
// from its trees passed (a mutation audit). Each nosuid case is refused
// only on a mount whose options hold nosuid, and its control only counts
// where the host's mount does not.
func TestSR18NosuidCases(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SR-18's check is root's (it makes a set-uid-root file)")
	}
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-18")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range pc.also {
		names = append(names, c.name)
		if c.probe[0] != "mount-opts" {
			t.Errorf("%s: probe %q, want mount-opts", c.name, c.probe)
		}
		for _, r := range []Run{{Line: "opts nosuidx,ro"}, {Line: "opts ro"}, {Line: "error x", Code: 2}} {
			if c.refused(r) {
				t.Errorf("%s: %+v taken as a refusal", c.name, r)
			}
		}
		if c.ok(Run{Line: "opts nosuid,rw"}) || c.ok(Run{Line: "error x", Code: 2}) {
			t.Errorf("%s: a nosuid mount, or a broken probe, taken as the control's success", c.name)
		}
	}
	if want := []string{"nosuid exec path", "nosuid write path"}; !slices.Equal(names, want) {
		t.Errorf("SR-18's further cases %q, want %q", names, want)
	}
}

// SR-44's verdict needs the tree's backup in the store, verified: the
// store alone is made at every session's start, and a launcher that
// skipped the backup passed on it (a mutation audit).
func TestBackedUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	store, err := backup.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := backedUp(dir, "tree", "sub/file", "kept\n"); err == nil {
		t.Error("an empty store taken for the tree's backup")
	}
	ws := t.TempDir()
	if err := writeTree(ws, map[string]string{"tree/sub/file": "kept\n", "other/sub/file": "kept\n"}); err != nil {
		t.Fatal(err)
	}
	stage := func(name string) {
		src, err := os.Open(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if _, err := store.Stage(src, name, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stage("other")
	if err := backedUp(dir, "tree", "sub/file", "kept\n"); err == nil {
		t.Error("another tree's backup taken for the tree's")
	}
	stage("tree")
	if err := backedUp(dir, "tree", "sub/file", "kept\n"); err != nil {
		t.Errorf("the tree's backup not found: %v", err)
	}
	if err := backedUp(dir, "tree", "sub/file", "changed\n"); err == nil {
		t.Error("a backup of other content taken for the tree's")
	}
}

// SR-39's and SR-49's checks read through a link to a directory outside
// the workspace on the way to a file: a final link alone is refused by
// O_NOFOLLOW too, and a launcher whose fs resolved without
// RESOLVE_BENEATH passed on it (a mutation audit).
func TestEscapeCaseLinkOnTheWay(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for _, id := range []string{"SR-39", "SR-49"} {
		pc, err := checks()[indexOf(checks(), id)].prepare(s)
		if err != nil {
			t.Fatalf("%s: prepare: %v", id, err)
		}
		found := false
		for _, c := range append([]probeCase{pc}, pc.also...) {
			first, rest, ok := strings.Cut(c.probe[1], "/")
			if !ok || rest == "" {
				continue
			}
			target, err := os.Readlink(filepath.Join(s.ws, first))
			if err == nil && target == s.outside {
				if _, err := os.Stat(filepath.Join(s.outside, rest)); err == nil {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: no case reads a file outside through a link to its directory", id)
		}
	}
}

// The policy-text checks SR-13 to SR-16 have a case for each rule their
// control names that is the launcher's own, not only the TOML decoder's
// (a mutation audit: with the launcher's duplicate-value, two-lists,
// pass-and-set or exact-case rule off, its size bound off, its text
// check's UTF-8 rule off, or string values unchecked, each passed on its
// one case). Each spoiled policy is refused by the policy package for
// the reason its case names, and the control policy parses.
func TestPolicyTextCases(t *testing.T) {
	want := map[string][]string{
		"SR-13": {"a key twice", "a key in another case", "a value listed twice", "a path in read and write", "a variable passed and set"},
		"SR-14": {"an integer", "a size"},
		"SR-15": {"escaped", "encoded in a comment"},
		"SR-16": {"in a comment", "escaped in a value"},
	}
	for _, id := range []string{"SR-13", "SR-14", "SR-15", "SR-16"} {
		s, err := newScratch(fakeLauncher(t))
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		pc, err := checks()[indexOf(checks(), id)].prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range append([]probeCase{pc}, pc.also...) {
			names = append(names, c.name)
			if _, err := policy.Parse("control.toml", []byte(c.control)); err != nil {
				t.Errorf("%s %s: the control policy does not parse: %v", id, c.name, err)
			}
			_, err := policy.Parse("spoiled.toml", []byte(c.raw))
			if err == nil {
				t.Errorf("%s %s: the spoiled policy parses", id, c.name)
				continue
			}
			said := err.Error()
			var pe *policy.Error
			if errors.As(err, &pe) {
				for _, p := range pe.Problems {
					said += " " + p.Msg + " " + p.Hint
				}
			}
			if !c.refused(Run{Code: 122, Stderr: said}) {
				t.Errorf("%s %s: refused for another reason: %s", id, c.name, said)
			}
		}
		if !slices.Equal(names, want[id]) {
			t.Errorf("%s's cases %q, want %q", id, names, want[id])
		}
	}
}

// SR-23's check swaps a read path as well as the workspace: a read path
// has no mount, so only stage 2's open of its Landlock rule sees the
// link, and with that open following links the workspace case alone
// passed (a mutation audit). The read path's case lists the path it
// swaps, reads beneath it, and counts only stage 2's refusal of the
// link: Landlock refusing the read (the swap missed) is not it.
func TestSR23Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-23")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		names = append(names, c.name)
	}
	if want := []string{"a read path", "the workspace"}; !slices.Equal(names, want) {
		t.Fatalf("SR-23's cases %q, want %q", names, want)
	}
	listed := filepath.Join(s.outside, "listed")
	if !strings.Contains(pc.raw, fmt.Sprintf("read = [%q]", listed)) || pc.probe[0] != "read" || !strings.HasPrefix(pc.probe[1], listed+"/") {
		t.Errorf("the read path's case does not read beneath the path it lists: policy %q, probe %q", pc.raw, pc.probe)
	}
	if pc.retries == 0 || pc.race == nil {
		t.Errorf("the read path's case has no race (%v) or no retries (%d)", pc.race != nil, pc.retries)
	}
	if !pc.refused(Run{Code: 125, Stderr: `launcher: error: stage 2 landlock: "` + listed + `" passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02): the agent was not started`}) {
		t.Error("stage 2's refusal of the link is not taken as the refusal")
	}
	if pc.refused(Run{Line: "denied EACCES", Code: 1}) {
		t.Error("Landlock's refusal of the read is taken as the refusal")
	}
}

// SR-19's check also makes a memfd with MFD_EXEC, which SR-19 says is
// refused always: unprivileged only seccomp's own rule refuses it, and
// with that rule off the plain memfd's case alone passed (a mutation
// audit).
func TestSR19Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-19")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var probes [][]string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		probes = append(probes, c.probe)
	}
	want := [][]string{{"memfd-exec"}, {"memfd-exec", "exec"}}
	if !slices.EqualFunc(probes, want, slices.Equal[[]string]) {
		t.Errorf("SR-19's probes %q, want %q", probes, want)
	}
}

// SR-01's check has a case for the policy check's half of its control:
// an exec path beneath a write path, refused before anything runs (a
// mutation audit: with that rule off, the check passed on the write
// tree's noexec mount alone).
func TestSR01Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-01")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		names = append(names, c.name)
	}
	if want := []string{"mapped executable", "an exec path beneath a write path"}; !slices.Equal(names, want) {
		t.Fatalf("SR-01's cases %q, want %q", names, want)
	}
	overlap := pc.also[0]
	if !strings.Contains(overlap.raw, fmt.Sprintf("%q", filepath.Join(s.ws, "bin"))) || overlap.control == overlap.raw {
		t.Errorf("the overlap case's policy does not list the workspace's bin as exec, beside a control without it:\n%s", overlap.raw)
	}
	// Another refusal of the policy is not this rule's.
	if overlap.refused(Run{Code: 122, ErrorLine: "launcher: error: p.toml:5: files.exec: \"/w/bin\" cannot be used: it does not exist", Stderr: "launcher: hint: create it"}) {
		t.Error("a missing exec path is taken as the write-exec refusal")
	}
}

// SR-17's check tries each ioctl its control names, and TIOCSTI with
// bit 32 of the command set, each refused only by seccomp's EPERM (a
// mutation audit: with the TIOCLINUX, TIOCSETD, TCXONC or TIOCEXCL rule
// off, or TIOCSTI compared as 64 bits, the check passed on TIOCSTI
// alone). TIOCLINUX's control is the pseudo-terminal's own ENOTTY.
func TestSR17Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-17")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var probes [][]string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		probes = append(probes, c.probe)
		if !c.pty {
			t.Errorf("%s: no terminal", c.name)
		}
		if !c.refused(Run{Line: "denied EPERM", Code: 1}) {
			t.Errorf("%s: seccomp's EPERM not taken as a refusal", c.name)
		}
		for _, r := range []Run{{Line: "ok"}, {Line: "denied ENOTTY", Code: 1}, {Line: "denied EIO", Code: 1}} {
			if c.refused(r) {
				t.Errorf("%s: %+v taken as a refusal", c.name, r)
			}
		}
	}
	want := [][]string{{"tiocsti"}, {"tty-ioctl", "sti-high"}, {"tty-ioctl", "linux"}, {"tty-ioctl", "setd"}, {"tty-ioctl", "xonc"}, {"tty-ioctl", "excl"}}
	if !slices.EqualFunc(probes, want, slices.Equal[[]string]) {
		t.Fatalf("SR-17's probes %q, want %q", probes, want)
	}
	if linux := pc.also[1]; !linux.ok(Run{Line: "denied ENOTTY", Code: 1}) || linux.ok(Run{Line: "denied EPERM", Code: 1}) {
		t.Errorf("TIOCLINUX's control must be the kernel's ENOTTY alone")
	}
}

// SR-20's check also asks for a vsock socketpair, which the rule covers
// (a mutation audit: with socketpair left out, the check passed on
// socket alone). Only the filter's EAFNOSUPPORT is a refusal: vsock's
// own answer, EOPNOTSUPP, is the call getting through.
func TestSR20Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-20")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.also) != 1 || !slices.Equal(pc.also[0].probe, []string{"vsock-socketpair"}) {
		t.Fatalf("SR-20's further cases %+v, want the vsock socketpair alone", pc.also)
	}
	pair := pc.also[0]
	if !pair.refused(Run{Line: "denied EAFNOSUPPORT", Code: 1}) || pair.refused(Run{Line: "denied ENOTSUP", Code: 1}) || pair.refused(Run{Line: "ok"}) {
		t.Errorf("socketpair: only EAFNOSUPPORT is the filter's refusal")
	}
	if !pair.ok(Run{Line: "denied ENOTSUP", Code: 1}) || pair.ok(Run{Line: "denied EAFNOSUPPORT", Code: 1}) {
		t.Errorf("socketpair: the control's success is vsock's own EOPNOTSUPP")
	}
	if skip, _ := pair.skip(Run{Line: "denied EAFNOSUPPORT", Code: 1}); !skip {
		t.Errorf("socketpair: a kernel without vsock is not skipped")
	}
}

// SR-21's check also writes into a read path under the host's /tmp,
// which is a mount of its own in the sandbox: only its read-only flag
// answers EROFS there (a mutation audit: with read trees mounted
// writable, the check passed on the host's mounts alone, Landlock's
// EACCES keeping the write out but not chmod).
func TestSR21Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := checks()[indexOf(checks(), "SR-21")].prepare(s)
	if err != nil {
		s.close()
		t.Fatal(err)
	}
	if len(pc.also) != 1 {
		s.close()
		t.Fatalf("SR-21's further cases %+v, want the read path under /tmp alone", pc.also)
	}
	c := pc.also[0]
	dir := filepath.Dir(c.probe[1])
	if c.probe[0] != "write" || filepath.Dir(dir) != "/tmp" || !strings.Contains(c.raw, fmt.Sprintf("read = [%q]", dir)) {
		t.Errorf("%s: probe %q under policy %q, want a write into a read path directly under /tmp", c.name, c.probe, c.raw)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("%s: %s is not there for the agent's throwaway uid to reach (%v)", c.name, dir, err)
	}
	if !c.refused(Run{Line: "denied EROFS", Code: 1}) || c.refused(Run{Line: "denied EACCES", Code: 1}) {
		t.Errorf("%s: only the read-only mount's EROFS is the refusal", c.name)
	}
	s.close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is left after the check (%v)", dir, err)
	}
}

// SR-53's check lowers the core limit each way seccomp has a rule for:
// glibc's call and the setrlimit system call (answered as done, the
// limit kept), prlimit64 naming a pid or asking the old limit (refused).
// A mutation audit: with any one of the last three rules off, the check
// passed on glibc's call alone.
func TestSR53Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-53")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var probes [][]string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		probes = append(probes, c.probe)
		if c.refused(Run{Line: "lowered ok, core soft 0 hard 0"}) || c.refused(Run{Line: "lowered EPERM, core soft 0 hard 0"}) {
			t.Errorf("%s: a limit of 0 taken as kept", c.name)
		}
	}
	want := [][]string{{"core-limit", "setrlimit"}, {"core-limit", "setrlimit-call"}, {"core-limit", "prlimit-pid"}, {"core-limit", "prlimit-old"}}
	if !slices.EqualFunc(probes, want, slices.Equal[[]string]) {
		t.Errorf("SR-53's probes %q, want %q", probes, want)
	}
}

// SR-25's check also runs a launcher outside the workspace with a second
// name (a hard link) in it, which only the launcher's rule about a file's
// other names refuses (a mutation audit: with that rule off, the check
// passed on the launcher beneath the workspace, which three rules
// refuse). The confined launch runs that copy, and the link is the same
// file.
func TestSR25LinkedCase(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "launcher")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$0 $(stat -c %h \"$0\")\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := newScratch(fake)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-25")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.also) != 1 || !pc.also[0].launcherLinkedInWS {
		t.Fatalf("SR-25's further cases %+v, want the launcher with a second name in the workspace", pc.also)
	}
	r := Runner{Launcher: fake, Timeout: 30 * time.Second}
	run := r.launch(context.Background(), s, s.policyText(""), "", pc.also[0], true)
	copied := filepath.Join(s.xbin, "launcher")
	if run.Line != copied+" 2" {
		t.Errorf("the confined launch ran %q, want %s with 2 names", run.Line, copied)
	}
	a, errA := os.Stat(copied)
	b, errB := os.Stat(filepath.Join(s.ws, "launcher-link"))
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Errorf("the workspace's name is not the launcher's file (%v, %v)", errA, errB)
	}
	if control := r.launch(context.Background(), s, s.policyText(""), "", pc.also[0], false); control.Line != fake+" 1" {
		t.Errorf("the control ran %q, want the launcher itself", control.Line)
	}
}

// SR-47's check also reaches eval and Function through the global object
// at run time (a mutation audit: with either left there, the check passed
// on the prototypes' constructors alone). Only both refused, with this
// the global object, is the refusal: a script where this was undefined
// would be refused without reaching either.
func TestSR47Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-47")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc.also) != 1 || pc.also[0].name != "eval and Function" {
		t.Fatalf("SR-47's further cases %+v, want eval and Function", pc.also)
	}
	c := pc.also[0]
	if script := c.probe[len(c.probe)-1]; c.probe[0] != "code-run" || !strings.Contains(script, `["ev", "al"]`) || !strings.Contains(script, `["Func", "tion"]`) {
		t.Errorf("%s: probe %q does not reach both names at run time", c.name, c.probe)
	}
	for _, line := range []string{`value "undefined refused TypeError refused TypeError"`, `value "object reached eval refused TypeError"`, `value "object refused TypeError reached Function"`} {
		if c.refused(Run{Line: line}) {
			t.Errorf("%s: %s taken as a refusal", c.name, line)
		}
	}
}

// SR-46's check copies a tree over each protected kind, by a command
// that names none: a git hook, the repository's config, a shell start-up
// file, each already in the workspace (the worker mounts what exists). A
// mutation audit: with config or .bashrc out of fs's protected names, the
// check passed on the hook alone.
func TestSR46Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-46")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tpl": ".git/hooks/pre-commit", "cfg": ".git/config", "rc": ".bashrc"}
	var seen []string
	for _, c := range append([]probeCase{pc}, pc.also...) {
		tree, ok := strings.CutPrefix(c.probe[len(c.probe)-1], "cp -r ")
		tree, ok2 := strings.CutSuffix(tree, "/. .")
		rel, known := want[tree]
		if c.probe[0] != "sh-run" || !ok || !ok2 || !known || strings.Contains(c.probe[1], ".git") || strings.Contains(c.probe[1], "bashrc") {
			t.Errorf("%s: probe %q, want a cp -r of one of %v naming no protected path", c.name, c.probe, want)
			continue
		}
		seen = append(seen, tree)
		protected := rel // what the workspace holds already: the hooks directory for a hook
		if tree == "tpl" {
			protected = filepath.Dir(rel)
		}
		for _, p := range []string{filepath.Join(s.ws, tree, rel), filepath.Join(s.ws, protected)} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		if c.refused(Run{Line: "exit 0 "}) || c.refused(Run{Line: "exit 1 cp: cannot stat 'x': No such file or directory"}) {
			t.Errorf("%s: a copy that went ahead, or failed for another reason, taken as a refusal", c.name)
		}
	}
	if slices.Sort(seen); !slices.Equal(seen, []string{"cfg", "rc", "tpl"}) {
		t.Errorf("SR-46's cases copy %q, want cfg, rc and tpl", seen)
	}
}

// SR-40's check kills each of fs, bash and kms in a session of its own:
// SR-40 says any component ends the session (a mutation audit: a
// launcher that stopped the session only when fs exited passed with fs
// alone). Each case waits for its own agent, by a marker of its own.
func TestSR40Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-40")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	markers := map[string]bool{}
	for _, c := range append([]probeCase{pc}, pc.also...) {
		names = append(names, c.name)
		markers[c.probe[len(c.probe)-1]] = true
		if c.race == nil || c.rejudge == nil {
			t.Errorf("%s: no race to kill the component, or no look for what outlived it", c.name)
		}
		if !c.refused(Run{Code: 125, Stderr: "launcher: error: component " + c.name + " exited: signal: killed"}) {
			t.Errorf("%s: its own component's exit not taken as the refusal", c.name)
		}
	}
	if !slices.Equal(names, []string{"fs", "bash", "kms"}) || len(markers) != 3 {
		t.Errorf("SR-40's cases %q with %d markers, want fs, bash and kms, each its own", names, len(markers))
	}
}

// SR-37's title names file and network authority: a case for each of a
// direct write, a Unix socket and a TCP connection, the network cases
// judged against an unconfined control (a mutation audit: with the
// agent allowed Unix sockets the check passed on the write alone).
func TestSR37Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-37")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range append([]probeCase{pc}, pc.also...) {
		if !componentsMode().MatchString(c.raw) {
			t.Errorf("%s: not a components-mode launch", c.name)
		}
		got[c.probe[0]] = true
		if c.probe[0] != "write" && !c.direct {
			t.Errorf("%s: its control is not unconfined", c.name)
		}
	}
	for _, want := range []string{"write", "unix-any", "tcp-connect"} {
		if !got[want] {
			t.Errorf("SR-37 has no %s case (has %v)", want, got)
		}
	}
}

// SR-34's title names reading, writing, linking and renaming out: a case
// for each, and a missing source (ENOENT) is no refusal of a link or a
// rename.
func TestSR34Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-34")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range append([]probeCase{pc}, pc.also...) {
		got[c.probe[0]] = true
		if c.probe[0] == "link" || c.probe[0] == "rename" {
			if _, err := os.Stat(c.probe[1]); err != nil {
				t.Errorf("%s: its source is not there: %v", c.name, err)
			}
			if c.refused(Run{Line: "denied ENOENT", Code: 1}) {
				t.Errorf("%s: a missing source taken as the refusal", c.name)
			}
			if !c.refused(Run{Line: "denied EXDEV", Code: 1}) {
				t.Errorf("%s: EXDEV not taken as the refusal", c.name)
			}
		}
	}
	for _, want := range []string{"read", "write", "link", "rename"} {
		if !got[want] {
			t.Errorf("SR-34 has no %s case (has %v)", want, got)
		}
	}
}

// SR-27's check kills the launcher while the agent sleeps, as well as
// letting the agent exit, and a sleeper left by the killed launcher is a
// fail, not the crash its status (137) would make it.
func TestSR27Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-27")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var killed *probeCase
	for i := range pc.also {
		if pc.also[i].race != nil {
			killed = &pc.also[i]
		}
	}
	if killed == nil || killed.observe == nil || killed.rejudge == nil {
		t.Fatalf("SR-27 has no case that kills the launcher and looks at what it left (%d more cases)", len(pc.also))
	}
	v, why := judge(Run{Line: "a process remains", Code: 137}, Run{Line: "a process remains"}, killed.refused, killed.ok)
	if v, why = killed.rejudge(v, why); v != Fail {
		t.Errorf("a sleeper left by the killed launcher judged %v: %s", v, why)
	}
	v, why = judge(Run{Line: "no process left", Code: 137}, Run{Line: "a process remains"}, killed.refused, killed.ok)
	if v, why = killed.rejudge(v, why); v != Pass {
		t.Errorf("nothing left by the killed launcher judged %v: %s", v, why)
	}
}

// SR-43's check has a case with a terminal to ask on, where the word is
// typed without the question's code in the confined run alone (the
// control types both): its first case has none, and fs never asks there.
func TestSR43Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-43")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range append([]probeCase{pc}, pc.also...) {
		if c.pty && c.answer == "yes" && c.answerWithoutCode && c.controlAnswer == "yes" {
			found = true
			if !c.refused(Run{Line: "denied fs.protected", Code: 1}) || c.refused(Run{Line: "ok"}) {
				t.Errorf("%s: not judged on fs's protected-path refusal", c.name)
			}
		}
	}
	if !found {
		t.Errorf("SR-43 has no case typing the word without its code on a terminal (%d more cases)", len(pc.also))
	}
}

// SR-28's check kills net while the agent sleeps, beside the direct
// connection: the launch must end saying net exited, and an agent left
// running is a fail.
func TestSR28Cases(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-28")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range append([]probeCase{pc}, pc.also...) {
		if c.race == nil {
			continue
		}
		found = true
		if !strings.Contains(c.raw, `mode = "proxy"`) || c.rejudge == nil {
			t.Errorf("%s: not a proxy-mode launch, or no look for what outlived net", c.name)
		}
		if !c.refused(Run{Code: 125, Stderr: "launcher: error: component net exited (signal: killed): the agent was killed"}) {
			t.Errorf("%s: net's exit not taken as the refusal", c.name)
		}
		if c.refused(Run{Line: "ok"}) {
			t.Errorf("%s: the agent sleeping to its end taken as the refusal", c.name)
		}
	}
	if !found {
		t.Errorf("SR-28 has no case that kills net (%d more cases)", len(pc.also))
	}
}
