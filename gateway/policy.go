package gateway

import (
	"fmt"

	"github.com/pinfold/pinfold/policy"
)

// hostOnly are the places a guest session may never read or run from,
// whatever the owner's policy grants: people's homes, the launcher's
// runtime state, its backups and vaults, and the gateway's own state
// (added by guestPolicy).
var hostOnly = []policy.Path{"/home", "/root", "/run", "/var/lib/pinfold", "/etc/pinfold", "/proc", "/sys", "/dev"}

// guestPath is the PATH of a guest session's commands.
const guestPath = "/usr/local/bin:/usr/bin:/bin"

// guestPolicy derives the guest-safe policy from the owner's: the same
// commands, limits, Code Mode limits and domain rules, but
//   - a fresh workspace (the only write path; no protected extras, which
//     named the owner's tree);
//   - of the owner's read and exec paths only those that neither hold
//     nor lie in the owner's workspace, a home, the launcher's or the
//     gateway's state (so read = ["/"] is dropped, /usr/bin kept);
//   - no secrets and no unsafe_allow_private;
//   - an environment of its own: nothing passed from the gateway, HOME
//     the session's private /tmp.
//
// The result is a policy value; the gateway encodes it, pins its hash
// and starts the session with it like any other.
func guestPolicy(owner *policy.Policy, workspace, state string) (*policy.Policy, error) {
	if owner.Mode != policy.ModeComponents {
		return nil, fmt.Errorf("gateway: the policy's mode is %q; sessions need mode = \"components\"", owner.Mode)
	}
	g := *owner
	hidden := append([]policy.Path{owner.Workspace.Path, policy.Path(state)}, hostOnly...)
	keep := func(paths []policy.Path) []policy.Path {
		var out []policy.Path
		for _, p := range paths {
			ok := true
			for _, h := range hidden {
				if p.Contains(h) || h.Contains(p) {
					ok = false
					break
				}
			}
			if ok {
				out = append(out, p)
			}
		}
		return out
	}
	g.Workspace.Path = policy.Path(workspace)
	g.Files = policy.Files{
		Read:  keep(owner.Files.Read),
		Write: []policy.Path{policy.Path(workspace)},
		Exec:  keep(owner.Files.Exec),
	}
	g.Secrets = nil
	g.Network.UnsafeAllowPrivate = nil
	g.Network.Allow = append([]policy.Domain(nil), owner.Network.Allow...)
	g.Network.Deny = append([]policy.Domain(nil), owner.Network.Deny...)
	g.Env = policy.Env{Set: policy.EnvSet{"HOME": "/tmp", "PATH": guestPath}}
	return &g, nil
}
