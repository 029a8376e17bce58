package gateway

import (
	"fmt"

	"github.com/pinfold/pinfold/policy"
)

// systemTrees are where a guest may read and run from, when the owner's
// policy grants it there: the operating system's programs, libraries and
// configuration. An allowlist, not a denylist: a home under another
// name (/var/home, /srv/users), another project, a data directory — none
// of it is a system tree, so none of it reaches a guest.
var systemTrees = []policy.Path{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// hostOnly are system places a guest may never have even when the
// owner's policy grants them: the launcher's and the gateway's
// configuration (added: the gateway's state).
var hostOnly = []policy.Path{"/etc/pinfold"}

// guestPath is the PATH of a guest session's commands.
const guestPath = "/usr/local/bin:/usr/bin:/bin"

// guestPolicy derives the guest-safe policy from the owner's: the same
// commands, limits (but memory), Code Mode limits and domain rules, but
//   - a fresh workspace (the only write path; no protected extras, which
//     named the owner's tree);
//   - of the owner's read and exec paths only those inside a system tree
//     that neither hold nor lie in the owner's workspace, the gateway's
//     state, its private files (its TLS key, its token store: a key in
//     /etc/ssl/private takes /etc/ssl away, since Landlock cannot grant
//     a tree but one file) or a host-only place (read = ["/"] is
//     dropped, /usr/bin is kept), and the launcher binary itself to run
//     (its agent is `launcher mcp`);
//   - no secrets and no unsafe_allow_private;
//   - memory at most guestMemory, processes at most guestProcesses, a
//     Code Mode VM's memory at most guestCodeMemory, and a backup store
//     of its own size;
//   - an environment of its own: nothing passed from the gateway, HOME
//     the session's private /tmp.
//
// The result is a policy value; the gateway encodes it, pins its hash
// and starts the session with it like any other.
func guestPolicy(owner *policy.Policy, workspace, state, launcher string, private ...string) (*policy.Policy, error) {
	if owner.Mode != policy.ModeComponents {
		return nil, fmt.Errorf("gateway: the policy's mode is %q; sessions need mode = \"components\"", owner.Mode)
	}
	g := *owner
	hidden := append([]policy.Path{owner.Workspace.Path, policy.Path(state)}, hostOnly...)
	for _, p := range private {
		hidden = append(hidden, policy.Path(p))
	}
	keep := func(paths []policy.Path) []policy.Path {
		var out []policy.Path
		for _, p := range paths {
			if inSystem(p) && !touches(p, hidden) {
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
	if l := policy.Path(launcher); !covered(l, g.Files.Exec) {
		g.Files.Exec = append(g.Files.Exec, l)
	}
	g.Secrets = nil
	g.Network.UnsafeAllowPrivate = nil
	g.Network.Allow = append([]policy.Domain(nil), owner.Network.Allow...)
	g.Network.Deny = append([]policy.Domain(nil), owner.Network.Deny...)
	g.Env = policy.Env{Set: policy.EnvSet{"HOME": "/tmp", "PATH": guestPath}}
	// A guest's recursive deletes are backed up on the host's disk first:
	// a small store of its own, not the owner's quota.
	g.Backups.Quota = min(owner.Backups.Quota, guestBackupQuota)
	// And its memory is bounded whatever the owner's is: an owner's "0"
	// (unlimited, for the owner's own sessions) gave every anonymous
	// caller all of the host's.
	g.Limits.Memory = guestMemory
	if m := owner.Limits.Memory; m != 0 && m < guestMemory {
		g.Limits.Memory = m
	}
	// So are its processes and a Code Mode VM's memory, which has a
	// cgroup of its own beside the session's: an owner's 100000 or
	// 8 GiB, for the owner's own builds, went to every anonymous caller.
	g.Limits.Processes = min(owner.Limits.Processes, guestProcesses)
	g.CodeMode.Memory = min(owner.CodeMode.Memory, guestCodeMemory)
	return &g, nil
}

// guestBackupQuota bounds a guest session's backup store.
const guestBackupQuota = 64 * policy.MiB

// guestMemory bounds a guest session's memory (its /tmp, a tmpfs, is
// charged to it too).
const guestMemory = 1 * policy.GiB

// guestProcesses bounds a guest session's processes and threads (the
// policy's default), guestCodeMemory one of its Code Mode VMs.
const (
	guestProcesses  = 512
	guestCodeMemory = 256 * policy.MiB
)

// inSystem says whether p lies in a system tree (the tree itself
// included, "/" not).
func inSystem(p policy.Path) bool {
	return p != "/" && covered(p, systemTrees)
}

// covered says whether p is one of roots or lies beneath one.
func covered(p policy.Path, roots []policy.Path) bool {
	for _, r := range roots {
		if r.Contains(p) {
			return true
		}
	}
	return false
}

// touches says whether p holds or lies in one of hidden.
func touches(p policy.Path, hidden []policy.Path) bool {
	for _, h := range hidden {
		if p.Contains(h) || h.Contains(p) {
			return true
		}
	}
	return false
}
