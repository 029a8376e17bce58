package policy

import (
	"fmt"
	"slices"
	"strings"
)

// A check is one named rule over a decoded policy. Each says what is
// impossible and why; none touches the file system (see CheckLive).
type check struct {
	name string
	risk string
	run  func(p *Policy) []Problem
}

// checks run in this order; every problem is reported, not just the first.
var checks = []check{
	{"workspace-required", "", checkWorkspaceRequired},
	{"duplicate-entry", "SR-13", checkDuplicates},
	{"path-in-two-lists", "SR-13", checkPathInTwoLists},
	{"write-exec-overlap", "SR-01", checkWriteExec},
	{"private-dir", "SR-12", checkPrivateDirs},
	{"kernel-tree-write", "", checkKernelTreeWrite},
	{"network-keys", "", checkNetworkKeys},
	{"components-only", "", checkComponentsOnly},
	{"components-authority", "SR-37", checkComponentsAuthority},
	{"protected-outside-workspace", "", checkProtected},
	{"env-pass-and-set", "SR-13", checkEnvConflict},
	{"allow-and-deny", "SR-13", checkDomainConflict},
	{"auto-and-approval", "SR-13", checkCommandConflict},
	{"secret-complete", "", checkSecretComplete},
	{"secrets-need-proxy", "", checkSecretsProxy},
	{"secret-host-too-wide", "", checkSecretHosts},
	{"secret-host-in-two-rules", "", checkSecretHostTwice},
	{"limit-range", "", checkLimits},
}

// Checks returns the names of the validation checks, in the order they run.
func Checks() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.name
	}
	return out
}

// Validate runs every named check and returns the problems found.
func Validate(p *Policy) []Problem {
	var ps []Problem
	for _, c := range checks {
		for _, pr := range c.run(p) {
			pr.Check, pr.Risk = c.name, c.risk
			ps = append(ps, pr)
		}
	}
	return ps
}

func checkWorkspaceRequired(p *Policy) []Problem {
	if p.Workspace.Path == "" {
		return []Problem{{Key: "workspace", Msg: "`[workspace] path` is missing: the agent's working directory must be pinned in the policy", Hint: `add [workspace] with path = "/absolute/dir"`, elem: -1}}
	}
	return nil
}

// dupes returns the values that occur more than once, in first order.
func dupes[T comparable](xs []T) []T {
	seen := map[T]int{}
	var out []T
	for _, x := range xs {
		if seen[x]++; seen[x] == 2 {
			out = append(out, x)
		}
	}
	return out
}

func dupProblems[T comparable](key string, xs []T) []Problem {
	var ps []Problem
	for _, d := range dupes(xs) {
		ps = append(ps, problem(key, "", fmt.Sprintf("%v is listed more than once: each value is listed once", quoted(d))))
	}
	return ps
}

func quoted(v any) string {
	switch v := v.(type) {
	case Path, Domain, EnvName, Command, SecretName:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

func checkDuplicates(p *Policy) []Problem {
	ps := slices.Concat(
		dupProblems("files.read", p.Files.Read),
		dupProblems("files.write", p.Files.Write),
		dupProblems("files.exec", p.Files.Exec),
		dupProblems("files.protected", p.Files.Protected),
		dupProblems("network.connect_tcp", p.Network.ConnectTCP),
		dupProblems("network.bind_tcp", p.Network.BindTCP),
		dupProblems("network.allow", p.Network.Allow),
		dupProblems("network.deny", p.Network.Deny),
		dupProblems("network.unsafe_allow_private", p.Network.UnsafeAllowPrivate),
		dupProblems("env.pass", p.Env.Pass),
		dupProblems("commands.auto", p.Commands.Auto),
		dupProblems("commands.approval", p.Commands.Approval),
	)
	names := make([]SecretName, len(p.Secrets))
	for i, s := range p.Secrets {
		names[i] = s.Name
		for _, pr := range dupProblems("secrets.hosts", s.Hosts) {
			pr.elem = i
			ps = append(ps, pr)
		}
	}
	for _, d := range dupes(names) {
		pr := problem("secrets.name", "", fmt.Sprintf("secret %q has more than one [[secrets]] rule: give each secret one rule with all its hosts", d))
		pr.elem = slices.Index(names, d)
		pr.elem += 1 + slices.Index(names[pr.elem+1:], d)
		ps = append(ps, pr)
	}
	return ps
}

func checkPathInTwoLists(p *Policy) []Problem {
	var ps []Problem
	for _, r := range p.Files.Read {
		if slices.Contains(p.Files.Write, r) {
			ps = append(ps, problem("files.read", "", fmt.Sprintf("%q is listed in both read and write: write already grants read, so list it once", r)))
		} else if i := slices.IndexFunc(p.Files.Write, func(w Path) bool { return w.Contains(r) }); i >= 0 {
			// It reads as a read-only carve-out, and is none: Landlock
			// grants a directory's rights to all beneath it.
			ps = append(ps, problem("files.read", "", fmt.Sprintf("%q is beneath write path %q, so it is writable too: a read path cannot make part of a write path read-only; list it once, or move what must stay read-only out of the write path", r, p.Files.Write[i])))
		}
		if slices.Contains(p.Files.Exec, r) {
			ps = append(ps, problem("files.read", "", fmt.Sprintf("%q is listed in both read and exec: exec already grants read, so list it once", r)))
		}
	}
	return ps
}

// writePaths are the paths the agent's side may write: files.write and,
// in components mode, the workspace, which fs writes anywhere in
// whatever files.write says.
func writePaths(p *Policy) []Path {
	writes := p.Files.Write
	if p.Mode == ModeComponents && p.Workspace.Path != "" && !slices.Contains(writes, p.Workspace.Path) {
		writes = append(slices.Clone(writes), p.Workspace.Path)
	}
	return writes
}

// writeKey is the key a problem with the write path w is reported under,
// and how its message names w.
func writeKey(p *Policy, w Path) (key, what string) {
	if !slices.Contains(p.Files.Write, w) {
		return "workspace.path", "the workspace, which fs writes in components mode,"
	}
	return "files.write", "write path"
}

// checkWriteExec enforces write-xor-execute over the hierarchy: Landlock
// grants a directory's rights to everything beneath it, so a write path
// beneath (or equal to, or above) an exec path makes written files
// executable (SR-01).
func checkWriteExec(p *Policy) []Problem {
	var ps []Problem
	for _, w := range writePaths(p) {
		for _, x := range p.Files.Exec {
			var rel string
			switch {
			case w == x:
				rel = "is also an exec path"
			case x.Contains(w):
				rel = fmt.Sprintf("is beneath exec path %q", x)
			case w.Contains(x):
				rel = fmt.Sprintf("contains exec path %q", x)
			default:
				continue
			}
			key, what := writeKey(p, w)
			ps = append(ps, Problem{Key: key, elem: -1,
				Msg:  fmt.Sprintf("%s %q %s: a file the agent writes could then be executed", what, w, rel),
				Hint: "keep written and executable trees apart; build outputs run from a write path are refused by design"})
		}
	}
	return ps
}

// checkPrivateDirs refuses /tmp and /dev/shm themselves: the sandbox has
// its own private, empty ones, so the text would name the host's directory
// and bind the sandbox's.
func checkPrivateDirs(p *Policy) []Problem {
	var ps []Problem
	for _, l := range []struct {
		key   string
		paths []Path
	}{{"files.read", p.Files.Read}, {"files.write", p.Files.Write}, {"files.exec", p.Files.Exec}, {"workspace.path", []Path{p.Workspace.Path}}} {
		for _, path := range l.paths {
			if path == "/tmp" || path == "/dev/shm" {
				ps = append(ps, Problem{Key: l.key, elem: -1,
					Msg:  fmt.Sprintf("%q is the sandbox's own private directory, not the host's: listing it would bind something else than it reads", path),
					Hint: "list the directory beneath it that the agent needs"})
			}
		}
	}
	return ps
}

// kernelTrees are file systems of kernel interfaces, not files: /proc is
// the sandbox's own (fresh for its pid namespace), /sys and /dev are the
// host's.
var kernelTrees = []Path{"/proc", "/sys", "/dev"}

// checkKernelTreeWrite refuses a write path that is /proc, /sys or /dev,
// lies beneath /proc or /sys, or contains one of them ("/"). Written
// there, the agent would change the host kernel's state (sysfs, a
// person's delegated cgroups) rather than files; as root none of them can
// be idmapped, so the launch failed in stage 2 with a hint about the file
// system. Device files beneath /dev (/dev/null, /dev/tty) stay listable
// one by one.
func checkKernelTreeWrite(p *Policy) []Problem {
	var ps []Problem
	for _, w := range writePaths(p) {
		for _, k := range kernelTrees {
			var rel string
			switch {
			case w == k:
				rel = "is"
			case k.Contains(w) && k != "/dev":
				rel = "is beneath"
			case w.Contains(k):
				rel = "contains"
			default:
				continue
			}
			key, what := writeKey(p, w)
			ps = append(ps, Problem{Key: key, elem: -1,
				Msg:  fmt.Sprintf("%s %q %s %s, where files are the kernel's interfaces: writing there would change the host's kernel state, not files", what, w, rel, k),
				Hint: "list the directories the agent writes its files in; a device file such as /dev/null can be listed alone"})
			break // one problem a path: "/" contains them all
		}
	}
	return ps
}

func checkNetworkKeys(p *Policy) []Problem {
	n := p.Network
	var ps []Problem
	only := func(key string, set bool, mode NetMode) {
		if set && n.Mode != mode {
			ps = append(ps, Problem{Key: "network." + key, elem: -1,
				Msg:  fmt.Sprintf("%s applies only in %q mode, but network mode is %q", key, mode, n.Mode),
				Hint: fmt.Sprintf("remove it, or set mode = %q", mode)})
		}
	}
	only("connect_tcp", len(n.ConnectTCP) > 0, NetPorts)
	only("bind_tcp", len(n.BindTCP) > 0, NetPorts)
	only("allow", len(n.Allow) > 0, NetProxy)
	only("deny", len(n.Deny) > 0, NetProxy)
	only("block_all", !n.BlockAll, NetProxy)
	only("unsafe_allow_private", len(n.UnsafeAllowPrivate) > 0, NetProxy)
	only("allow_ech", n.AllowECH, NetProxy)
	if n.Mode == NetPorts && len(n.ConnectTCP) == 0 && len(n.BindTCP) == 0 {
		ps = append(ps, Problem{Key: "network.mode", elem: -1,
			Msg:  `"ports" mode lists no ports in connect_tcp or bind_tcp, so it would allow nothing`,
			Hint: `list the ports, or use mode = "none"`})
	}
	if n.Mode == NetProxy && n.BlockAll && len(n.Allow) == 0 {
		ps = append(ps, Problem{Key: "network.allow", elem: -1,
			Msg:  `"proxy" mode with block_all = true and no allow rules would refuse every host`,
			Hint: `list hosts in allow, or use mode = "none"`})
	}
	return ps
}

func checkComponentsOnly(p *Policy) []Problem {
	if p.Mode == ModeComponents {
		return nil
	}
	var ps []Problem
	d := Default()
	used := func(key string, set bool) {
		if set {
			ps = append(ps, Problem{Key: key, elem: -1,
				Msg:  fmt.Sprintf("%s is enforced by the components, but mode is %q: in wrapper mode nothing would enforce it", key, p.Mode),
				Hint: `set mode = "components" (needs root), or remove it`})
		}
	}
	used("secrets", len(p.Secrets) > 0)
	used("commands", !commandsEqual(p.Commands, d.Commands))
	used("backups", p.Backups != d.Backups)
	used("files.protected", len(p.Files.Protected) > 0)
	return ps
}

// checkComponentsAuthority refuses, in components mode, what would give
// the agent authority the components hold for it (SR-37): a write path
// fs does not serve, the network directly, Unix sockets. The launch
// refuses these too (launcher.agentPolicy), but only once the session
// runs; here they stop it before the vault is unsealed or a component
// starts, and policy check names them.
func checkComponentsAuthority(p *Policy) []Problem {
	if p.Mode != ModeComponents {
		return nil
	}
	var ps []Problem
	for _, w := range p.Files.Write {
		if p.Workspace.Path != "" && !p.Workspace.Path.Contains(w) {
			ps = append(ps, Problem{Key: "files.write", elem: -1,
				Msg:  fmt.Sprintf("write path %q is outside the workspace %q: in components mode the fs component writes for the agent and serves the workspace only", w, p.Workspace.Path),
				Hint: `remove it, or use mode = "wrapper"`})
		}
	}
	if p.Network.Mode != NetNone && p.Network.Mode != NetProxy {
		ps = append(ps, Problem{Key: "network.mode", elem: -1,
			Msg:  fmt.Sprintf("network mode %q would give the agent the network directly: in components mode its only sockets reach the components", p.Network.Mode),
			Hint: `use mode = "none", or "proxy" for net`})
	}
	if p.Network.UnixSockets {
		ps = append(ps, Problem{Key: "network.unix_sockets", elem: -1,
			Msg:  "in components mode the agent never opens a Unix socket",
			Hint: "remove unix_sockets"})
	}
	return ps
}

func commandsEqual(a, b Commands) bool {
	return slices.Equal(a.Auto, b.Auto) && slices.Equal(a.Approval, b.Approval) &&
		a.Timeout == b.Timeout && a.Output == b.Output
}

func checkProtected(p *Policy) []Problem {
	var ps []Problem
	for _, pr := range p.Files.Protected {
		if p.Workspace.Path == "" || !p.Workspace.Path.Contains(pr) {
			ps = append(ps, problem("files.protected", "", fmt.Sprintf("protected path %q is not beneath the workspace %q: only the workspace is brokered by the fs component", pr, p.Workspace.Path)))
		}
	}
	return ps
}

func checkEnvConflict(p *Policy) []Problem {
	var ps []Problem
	for _, n := range p.Env.Pass {
		if _, ok := p.Env.Set[string(n)]; ok {
			ps = append(ps, problem("env.set", "", fmt.Sprintf("%q is both passed and set: give it one value", n)))
		}
	}
	return ps
}

func checkDomainConflict(p *Policy) []Problem {
	var ps []Problem
	for _, d := range p.Network.Allow {
		if slices.Contains(p.Network.Deny, d) {
			ps = append(ps, problem("network.deny", "", fmt.Sprintf("%q is both allowed and denied: list it once", d)))
		}
	}
	return ps
}

func checkCommandConflict(p *Policy) []Problem {
	var ps []Problem
	for _, c := range p.Commands.Auto {
		if slices.Contains(p.Commands.Approval, c) {
			ps = append(ps, problem("commands.approval", "", fmt.Sprintf("%q is both automatic and needs approval: list it once", c)))
		}
	}
	return ps
}

func checkSecretsProxy(p *Policy) []Problem {
	if len(p.Secrets) == 0 || p.Network.Mode == NetProxy {
		return nil
	}
	return []Problem{{Key: "secrets", elem: 0,
		Msg:  fmt.Sprintf("secrets are injected by the proxy, but network mode is %q", p.Network.Mode),
		Hint: `set [network] mode = "proxy"`}}
}

// checkSecretComplete refuses a [[secrets]] rule that lacks one of its
// keys: an absent key is never decoded, so its own checks (a name, a
// header name, a template holding {secret} once) never ran.
func checkSecretComplete(p *Policy) []Problem {
	var ps []Problem
	for i, s := range p.Secrets {
		var missing []string
		if s.Name == "" {
			missing = append(missing, "name")
		}
		if len(s.Hosts) == 0 {
			missing = append(missing, "hosts")
		}
		if s.Header == "" {
			missing = append(missing, "header")
		}
		if s.Template == "" {
			missing = append(missing, "template")
		}
		if len(missing) > 0 {
			pr := problem("secrets", "", fmt.Sprintf("a [[secrets]] rule needs name, hosts, header and template; this one lacks %s", strings.Join(missing, ", ")))
			pr.Hint = `write all four, e.g. name = "api", hosts = ["api.example.com"], header = "authorization", template = "Bearer {secret}"`
			pr.elem = i
			ps = append(ps, pr)
		}
	}
	return ps
}

// checkSecretHosts refuses a [[secrets]] host pattern that covers a whole
// top-level domain ("*.com"): the secret would go to every host in it.
// (Wider public suffixes such as "*.co.uk" need the public suffix list,
// which the policy package does not carry.)
func checkSecretHosts(p *Policy) []Problem {
	var ps []Problem
	for i, s := range p.Secrets {
		for _, h := range s.Hosts {
			if suffix, ok := h.Wildcard(); ok && !strings.Contains(suffix, ".") {
				pr := problem("secrets.hosts", "", fmt.Sprintf("host pattern %q covers every host under .%s: the secret would be sent to all of them", h, suffix))
				pr.Hint = "name the hosts that need the secret, such as \"api.example." + suffix + "\""
				pr.elem = i
				ps = append(ps, pr)
			}
		}
	}
	return ps
}

// checkSecretHostTwice refuses a host pattern listed in two [[secrets]]
// rules: net sends one secret to a host, that of the rule whose pattern
// is the most specific (an exact name before *.suffix, a longer suffix
// before a shorter), and two rules with the same pattern leave nothing to
// choose by but their order in the file.
func checkSecretHostTwice(p *Policy) []Problem {
	var ps []Problem
	first := map[Domain]int{}
	for i, s := range p.Secrets {
		for _, h := range s.Hosts {
			j, seen := first[h]
			if !seen {
				first[h] = i
				continue
			}
			if p.Secrets[j].Name == s.Name {
				continue // one rule, or one secret's two: duplicate-entry says so
			}
			pr := problem("secrets.hosts", "", fmt.Sprintf("host %q is in two [[secrets]] rules, %q and %q: only one secret is sent to a host", h, p.Secrets[j].Name, s.Name))
			pr.Hint = "keep it in the rule of the secret that host needs"
			pr.elem = i
			ps = append(ps, pr)
		}
	}
	return ps
}

func checkLimits(p *Policy) []Problem {
	var ps []Problem
	// show writes v as the policy does: a size as a size, not bytes.
	atLeast := func(key string, v, min int64, show func(int64) string, why string) {
		if v < min {
			ps = append(ps, problem(key, "", fmt.Sprintf("%s is below the minimum %s: %s", show(v), show(min), why)))
		}
	}
	num := func(n int64) string { return fmt.Sprint(n) }
	size := func(n int64) string { return Size(n).String() }
	l := p.Limits
	atLeast("limits.processes", int64(l.Processes), 1, num, "a zero or negative process limit is not \"unlimited\"; fork bombs must stay bounded (SR-04)")
	atLeast("limits.open_files", int64(l.OpenFiles), 16, num, "a program cannot start with fewer descriptors")
	atMost := func(key string, v, max int64, why string) {
		if v > max {
			ps = append(ps, problem(key, "", fmt.Sprintf("%d is above the maximum %d: %s", v, max, why)))
		}
	}
	atMost("limits.open_files", int64(l.OpenFiles), 1<<20, "Linux caps descriptors per process at fs.nr_open, 1048576 by default")
	atMost("limits.processes", int64(l.Processes), 4194304, "Linux has at most 4194304 pids")
	atLeast("limits.tmp_size", int64(l.TmpSize), int64(MiB), size, "the private /tmp needs at least 1MiB")
	if l.CPUTime%Duration(1e9) != 0 {
		ps = append(ps, problem("limits.cpu_time", "", fmt.Sprintf("%s is not whole seconds: RLIMIT_CPU counts seconds", l.CPUTime)))
	}
	c := p.CodeMode
	for _, l := range []struct {
		key  string
		zero bool
	}{
		{"code_mode.memory", c.Memory == 0}, {"code_mode.stack", c.Stack == 0},
		{"code_mode.deadline", c.Deadline == 0}, {"code_mode.output", c.Output == 0},
		{"code_mode.script_size", c.ScriptSize == 0}, {"commands.timeout", p.Commands.Timeout == 0},
		{"commands.output", p.Commands.Output == 0}, {"backups.quota", p.Backups.Quota == 0},
	} {
		if l.zero {
			ps = append(ps, problem(l.key, "", `"0" is not allowed here: this limit has no "unlimited" value`))
		}
	}
	atLeast("code_mode.tool_calls", int64(c.ToolCalls), 0, num, "a budget cannot be negative")
	// What a Code Mode VM runs in and bears (the isolate refuses the rest
	// at every run): said here, not at the first script. Zero has its
	// own problem above.
	if c.Memory != 0 {
		atLeast("code_mode.memory", int64(c.Memory), CodeMinMemory, size, "a Code Mode VM refuses a smaller heap")
	}
	if c.Stack != 0 {
		atLeast("code_mode.stack", int64(c.Stack), CodeMinStack, size, "a Code Mode VM refuses a smaller stack")
		atMost("code_mode.stack", int64(c.Stack), CodeMaxStack, "a Code Mode VM refuses a larger stack, whose depth the Go runtime's own stack would not bear")
	}
	return ps
}

// The bounds of [code_mode] memory and stack that a Code Mode VM accepts
// (components/code takes them from here).
const (
	CodeMinMemory = 1 << 20 // a fresh VM uses some 200 KiB
	CodeMinStack  = 64 << 10
	CodeMaxStack  = 20000 * 2048 // 20,000 QuickJS stack slots of 2 KiB
)
