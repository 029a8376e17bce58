package launcher

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pinfold/pinfold/policy"
)

// agentPolicy is the policy the agent itself runs under in components
// mode: the person's, less the authority the components hold for it.
//
//   - files.write is the fs component's (it serves the workspace); the
//     agent writes only its private /tmp, /dev/shm and HOME. A write path
//     outside the workspace is refused: fs serves one tree.
//   - files.read and files.exec stay the agent's (its tools, its system
//     libraries), plus its credential directory.
//   - The network is "none": the agent's only sockets reach the listeners
//     the session places in its namespace (in "proxy" mode one of them is
//     net's proxy, and the agent's own copy of the policy says "none").
//     "ports" would hand it the network the components broker.
//   - Unix sockets are refused: the agent never opens one.
//
// The policy's components-authority check refuses all three before the
// session starts; these refusals stay as a second check.
func agentPolicy(p *policy.Policy, b Beside) (*policy.Policy, error) {
	refuse := func(detail, hint string) error {
		return &RefusedError{Boundary: "components", Detail: detail, Hint: hint}
	}
	if b == nil {
		return nil, refuse(`mode "components" needs its component session, and none was started`, "")
	}
	for _, w := range p.Files.Write {
		if !p.Workspace.Path.Contains(w) {
			return nil, refuse(fmt.Sprintf("files.write lists %s, outside the workspace %s: in components mode the fs component writes for the agent and serves the workspace only", w, p.Workspace.Path),
				"remove it, or run in wrapper mode")
		}
	}
	switch {
	case p.Network.Mode != policy.NetNone && p.Network.Mode != policy.NetProxy:
		return nil, refuse(fmt.Sprintf("network mode %q would give the agent the network directly: in components mode its only sockets reach the components", p.Network.Mode), `use mode = "none"`)
	case p.Network.UnixSockets:
		return nil, refuse("network.unix_sockets = true: in components mode the agent never opens a Unix socket", "remove unix_sockets")
	}
	a := *p
	a.Files.Write = nil
	a.Network = policy.Network{Mode: policy.NetNone}
	a.Files.Read = append(slices.Clone(p.Files.Read), policy.Path(b.AgentDir()))
	return &a, nil
}

// shellStartupEnv are variables that make bash run or parse something the
// bash component never saw: a file sourced at start (BASH_ENV, ENV),
// options that change the grammar (SHELLOPTS, BASHOPTS), exported
// functions. A worker never gets them, whatever the policy passes.
func shellStartupEnv(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE":
		return true
	}
	return strings.HasPrefix(name, "BASH_FUNC_")
}

// WorkerPolicy is the policy the bash component's command workers run
// under, from the person's components-mode policy (already accepted by
// agentPolicy's rules): a wrapper-mode launch that may write the
// workspace (what fs serves) and /dev/null, read and execute what
// the agent may, with the agent's limits, no network (the proxy serves
// the agent's namespace, not a worker's: a command that needs the
// network fails) and no Unix sockets. The caller also mounts the
// workspace's protected paths read-only over it (LaunchOptions.ReadOnly):
// a command approved or not, the worker cannot rewrite a git hook.
func WorkerPolicy(p *policy.Policy) *policy.Policy {
	w := *p
	w.Mode = policy.ModeWrapper
	// Every write path lies in the workspace (agentPolicy refuses others).
	w.Files.Write = []policy.Path{p.Workspace.Path}
	if _, err := os.Stat("/dev/null"); err == nil {
		w.Files.Write = append(w.Files.Write, "/dev/null")
	}
	w.Files.Protected = nil
	w.Network = policy.Network{Mode: policy.NetNone}
	w.Env.Pass = slices.DeleteFunc(slices.Clone(p.Env.Pass), func(n policy.EnvName) bool { return shellStartupEnv(string(n)) })
	w.Env.Set = policy.EnvSet{}
	for k, v := range p.Env.Set {
		if !shellStartupEnv(k) {
			w.Env.Set[k] = v
		}
	}
	w.Files.Read = slices.Clone(p.Files.Read)
	w.Files.Exec = slices.Clone(p.Files.Exec)
	return &w
}
