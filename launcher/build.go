package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/policy"
)

// Landlock ABI floors: the least ABI that enforces what a policy asks.
const (
	floorFiles  = 1 // read and exec rules
	floorWrite  = 3 // write rules need the truncate right, or truncate(2) escapes them
	floorTCP    = 4 // ports mode
	floorScopes = 6 // signal and abstract-socket scoping
	maxKnownABI = 7 // the highest ABI whose rights this launcher grants deliberately
	privateTmp  = "/tmp"
	privateHome = "/tmp/home"
	defaultPath = "/usr/local/bin:/usr/bin:/bin"
	// Throwaway uids and gids: [base, base+span), above systemd's container
	// range (which ends at 0x6FFFFFFF) and below 2^31, which some tools
	// treat as negative.
	throwawayBase = 0x70000000
	throwawaySpan = 100_000_000
)

// hiddenDirs commonly hold Unix sockets reaching host services (the
// session bus, docker.sock, X11, systemd). They are covered unless the
// policy lists them or a path beneath them (SR-08).
var hiddenDirs = []string{"/run", "/var/run", "/tmp/.X11-unix", "/var/lib/docker", "/run/user"}

// Request is what the person asked for on the command line.
type Request struct {
	Policy  *policy.Policy
	Argv    []string // the agent and its arguments
	Environ []string // the launcher's environment, from which [env] pass copies
	Cwd     string   // the launcher's working directory, for a relative agent path
	// ExtraEnv is added to the agent's environment after the policy's
	// (components mode: where the components are), replacing a variable
	// of the same name.
	ExtraEnv []string
	// ProxyPort is the net process's listener in the agent's namespace,
	// which stage 2 makes ("proxy" mode in wrapper mode); 0 for none.
	ProxyPort uint16
	// ReadOnly are existing paths inside write paths that are mounted
	// again read-only over them (a bash worker's protected paths).
	ReadOnly []string
	// Mask are the launcher's own files and directories (absolute), each
	// covered where the agent could otherwise read it (maskList).
	Mask []string
}

// Notes is what the launch summary reports beyond the plan.
type Notes struct {
	Dropped []string // names of the launcher's variables the agent does not get (SR-11)
	Other   []string // implicit grants and the like, for --verbose
}

// BuildPlan decides everything stage 2 will do. It reads the file system
// (to tell files from directories and to resolve the agent) but changes
// nothing.
func BuildPlan(req Request, h Host, identity IdentityPlan) (*Plan, Notes, error) {
	p := req.Policy
	var notes Notes
	if len(req.Argv) == 0 {
		return nil, notes, errors.New("no agent command after --")
	}
	env, dropped := buildEnv(p, req.Environ)
	notes.Dropped = dropped
	for _, kv := range req.ExtraEnv {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		env = append(env, kv)
	}
	path, err := resolveAgent(req.Argv[0], env, req.Cwd)
	if err != nil {
		return nil, notes, err
	}
	lp, err := buildLandlock(p, h)
	if err != nil {
		return nil, notes, err
	}
	owner := -1
	if identity.Setuid {
		owner = identity.Owner
	}
	plan := &Plan{
		Argv: req.Argv, Path: path, Env: env, Dir: string(p.Workspace.Path),
		Mounts:    MountPlan{Hide: hideList(p), TmpSize: int64(p.Limits.TmpSize)},
		NewNet:    wantsNewNet(p, h),
		ProxyPort: req.ProxyPort,
		Rlimits:   buildRlimits(p, h),
		Identity:  identity,
		Landlock:  lp,
	}
	if plan.Mounts.Trees, err = treeList(p, plan.Mounts.Hide, owner, req.ReadOnly, ownerView(h.Root)); err != nil {
		return nil, notes, err
	}
	if plan.Mounts.Masks, err = maskList(p, plan.Mounts.Trees, plan.Mounts.Hide, req.Mask); err != nil {
		return nil, notes, err
	}
	for _, m := range plan.Mounts.Masks {
		notes.Other = append(notes.Other, "the launcher's own "+m.Path+" is covered: the agent cannot read it")
	}
	if ttyHidden(slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec)) {
		plan.Mounts.Masks = append(plan.Mounts.Masks, MaskPlan{Path: devTTY})
	}
	// In components mode the workspace is fs's: the agent starts there
	// only when the policy also lets it read it directly, else at HOME.
	agentReads := slices.ContainsFunc(slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec), func(l policy.Path) bool { return l.Contains(p.Workspace.Path) })
	if p.Mode == policy.ModeComponents && !agentReads {
		plan.Dir = "/"
	} else if err := checkWorkspaceVisible(p.Workspace.Path, plan.Mounts); err != nil {
		return nil, notes, err
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		if err := checkPrivateHome(plan.Mounts.Trees); err != nil {
			return nil, notes, err
		}
		plan.Mounts.Home = privateHome
		plan.Env = append(plan.Env, "HOME="+privateHome)
		if plan.Dir == "/" {
			plan.Dir = privateHome
		}
		notes.Other = append(notes.Other, "HOME is a private directory in the sandbox's /tmp")
	}
	return plan, notes, nil
}

// checkPrivateHome refuses a listed path at or beneath the private HOME
// that stage 2 makes in its /tmp: the two would collide.
func checkPrivateHome(trees []TreePlan) error {
	for _, t := range trees {
		if policy.Path(privateHome).Contains(policy.Path(t.Path)) {
			return &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("the agent's private HOME %s would be made where the listed path %s is mounted", privateHome, t.Path),
				Hint: "set HOME in [env] (pass or set), or list another path"}
		}
	}
	return nil
}

// checkWorkspaceVisible refuses a workspace beneath a directory the
// sandbox replaces (its private /tmp and /dev/shm, a hidden socket
// directory) that no listed path brings back: the agent would start in a
// directory that does not exist there.
func checkWorkspaceVisible(ws policy.Path, m MountPlan) error {
	for _, c := range append([]string{privateTmp, "/dev/shm"}, m.Hide...) {
		if !policy.Path(c).Contains(ws) || policy.Path(c) == ws {
			continue
		}
		if slices.ContainsFunc(m.Trees, func(t TreePlan) bool { return policy.Path(t.Path).Contains(ws) }) {
			return nil
		}
		return &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("the workspace %s is beneath %s, which the sandbox replaces with its own, and no files list brings it back: the agent would start in a directory that does not exist", ws, c),
			Hint: fmt.Sprintf("list the workspace in files.write (or files.read), or move it out of %s", c)}
	}
	return nil
}

// wantsNewNet reports whether the agent gets its own, empty network
// namespace: network "none" where the host has network namespaces.
func wantsNewNet(p *policy.Policy, h Host) bool {
	return (p.Network.Mode == policy.NetNone || p.Network.Mode == policy.NetProxy) && h.NetNS.Available
}

// buildEnv copies the passed variables that are set, adds the set ones,
// and returns the names of everything else in the launcher's environment.
func buildEnv(p *policy.Policy, environ []string) (env, dropped []string) {
	have := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			have[k] = v
		}
	}
	keep := map[string]bool{}
	for _, n := range p.Env.Pass {
		if v, ok := have[string(n)]; ok {
			env = append(env, string(n)+"="+v)
			keep[string(n)] = true
		}
	}
	names := make([]string, 0, len(p.Env.Set))
	for k := range p.Env.Set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, k+"="+string(p.Env.Set[k]))
		keep[k] = true
	}
	if !keep["PATH"] {
		env = append(env, "PATH="+defaultPath)
	}
	for k := range have {
		if !keep[k] {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	return env, dropped
}

// resolveAgent finds the agent's executable as the agent's own PATH would.
func resolveAgent(name string, env []string, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cwd, name)
		}
		return name, nil
	}
	for _, kv := range env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(dirs) {
				if !filepath.IsAbs(d) {
					continue // a relative PATH entry would resolve against the workspace
				}
				c := filepath.Join(d, name)
				if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					return c, nil
				}
			}
		}
	}
	return "", fmt.Errorf("agent %q: %w in the agent's PATH", name, exec.ErrNotFound)
}

// hideList returns the socket directories to cover: all of them that
// exist, unless the policy lists one whole (or a directory above it). A
// listed path beneath a hidden directory is grafted back alone (treeList),
// so listing /run/lock does not uncover /run/dbus. /dev/pts, the host's
// pseudo-terminals, is covered too (ptsHidden says when).
func hideList(p *policy.Policy) []string {
	listed := slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec)
	var out []string
	for _, d := range hiddenDirs {
		if st, err := os.Lstat(d); err != nil || !st.IsDir() || strings.HasPrefix(d, privateTmp+"/") {
			continue // absent, a symlink (/var/run -> /run), or inside the private /tmp
		}
		if slices.ContainsFunc(listed, func(l policy.Path) bool { return l.Contains(policy.Path(d)) }) {
			continue // listed whole
		}
		if slices.ContainsFunc(out, func(h string) bool { return policy.Path(h).Contains(policy.Path(d)) }) {
			continue // already under a hidden directory
		}
		out = append(out, d)
	}
	if ptsHidden(listed) {
		out = append(out, ptsDir)
	}
	return out
}

// ptsDir holds the host's pseudo-terminals: every terminal window, ssh
// login and tmux pane of every user. Landlock keeps the agent from
// opening them, but not from watching them: inotify_add_watch needs only
// read permission, and unprivileged the agent is the person's uid, which
// owns them. A watch on the person's other terminal reported every
// keystroke typed there (each read by the shell an IN_ACCESS, each echo
// an IN_MODIFY), with its time: what a password's timing gives away (a
// re-test). So it is covered like the socket directories, and stage 2
// grafts back the agent's own terminal (graft_terminals), which ttyname
// and the unprivileged reopen (reopen_terminals) look up by its path.
const ptsDir = "/dev/pts"

// devTTY opens the caller's controlling terminal, whichever it is, so
// every user's programs share its node: a password prompt (sudo, ssh,
// gpg) reads it there. An inotify watch on it, which needs only read
// permission (it is 0666) and which Landlock does not check, reported
// each key read through it by any user on the host, as root's
// throwaway uid too (a re-test). Unless a files list reaches it (the
// agent then opens its own terminal through it, and the watch stays
// possible), it is covered like the launcher's own files (cover_own:
// the host's /dev/null, read-only and nodev), which opening it then
// fails with EACCES as Landlock had.
const devTTY = "/dev/tty"

// ttyHidden reports whether /dev/tty is covered: when it is a device
// and no files list reaches it.
func ttyHidden(listed []policy.Path) bool {
	if st, err := os.Lstat(devTTY); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return !slices.ContainsFunc(listed, func(l policy.Path) bool { return l.Contains(devTTY) })
}

// ptsHidden reports whether /dev/pts is covered: unless it is missing or
// not a directory, or a files list reaches it or anything in it, or
// names /dev/ptmx, which opens a new terminal in the devpts beside it
// and fails (ENODEV) when an empty tmpfs is there instead. Such policies
// keep the host's /dev/pts; unprivileged, one that reaches a terminal of
// the person's is refused (listedTerminal).
func ptsHidden(listed []policy.Path) bool {
	if st, err := os.Lstat(ptsDir); err != nil || !st.IsDir() {
		return false
	}
	return !slices.ContainsFunc(listed, func(l policy.Path) bool {
		return l.Contains(ptsDir) || policy.Path(ptsDir).Contains(l) || l.Contains("/dev/ptmx")
	})
}

// treeList returns the trees stage 2 clones and mounts again with their
// own flags, outermost first:
//   - every write path (directories and regular files): writable, but
//     never executable, set-uid or a device, whatever the host mount allows
//     (SR-01 holds against mmap(PROT_EXEC) loaders too); as root, idmapped
//     onto the throwaway uid when it belongs to the workspace's owner;
//   - every read or exec path beneath a directory the sandbox covers (the
//     private /tmp and /dev/shm, the hidden socket directories): read-only,
//     executable only when it is an exec path.
//
// Everything else stays on the host's mounts, which stage 2 makes
// read-only and set-uid-free as a whole.
// MaxReadOnly bounds Request.ReadOnly: each tree holds two descriptors in
// stage 2 until it is mounted.
const MaxReadOnly = 256

// maxTrees bounds all the trees of a launch (stage 2 holds two
// descriptors for each until it mounts them).
const maxTrees = 400

// ownerView is a file owner's uid as stage 2 sees it (TreePlan.Owner):
// as root the host's; unprivileged, stage 2's user namespace maps the
// person's uid alone, and every other owner reads as the kernel's
// overflow uid.
func ownerView(root bool) func(uid int) int {
	if root {
		return func(uid int) int { return uid }
	}
	self, overflow := os.Getuid(), 65534
	if b, err := os.ReadFile("/proc/sys/kernel/overflowuid"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			overflow = n
		}
	}
	return func(uid int) int {
		if uid == self {
			return uid
		}
		return overflow
	}
}

func treeList(p *policy.Policy, hide []string, idmapOwner int, readOnly []string, seen func(uid int) int) ([]TreePlan, error) {
	covered := append([]string{privateTmp, "/dev/shm"}, hide...)
	under := func(l policy.Path) bool {
		return slices.ContainsFunc(covered, func(c string) bool { return policy.Path(c).Contains(l) && policy.Path(c) != l })
	}
	var out []TreePlan
	add := func(t TreePlan) error {
		var st unix.Stat_t
		if err := unix.Stat(t.Path, &st); err != nil {
			return fmt.Errorf("%s: %w", t.Path, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR, unix.S_IFREG:
		default:
			return nil // a device or socket: nothing to clone; the base mount's flags hold
		}
		t.Idmap = idmapOwner >= 0 && t.Write && int(st.Uid) == idmapOwner
		t.Owner = seen(int(st.Uid))
		out = append(out, t)
		return nil
	}
	for _, w := range p.Files.Write {
		if err := add(TreePlan{Path: string(w), Write: true}); err != nil {
			return nil, err
		}
	}
	for _, l := range []struct {
		paths []policy.Path
		exec  bool
	}{{p.Files.Read, false}, {p.Files.Exec, true}} {
		for _, r := range l.paths {
			if under(r) {
				if err := add(TreePlan{Path: string(r), Exec: l.exec}); err != nil {
					return nil, err
				}
			}
		}
	}
	// Read-only trees inside write trees: a longer path sorts after the
	// write tree it lies in, so it is mounted over it. Every directory
	// between the write tree and it is mounted again on itself, writable:
	// a mount point cannot be renamed (EBUSY), so the read-only tree
	// cannot be moved aside with its parent and a new, writable one made
	// in its place (mv .git .git-old; mkdir .git).
	if len(readOnly) > MaxReadOnly {
		return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("%d read-only paths inside the write paths, more than the %d one launch mounts", len(readOnly), MaxReadOnly)}
	}
	pinned := map[string]bool{}
	for _, r := range readOnly {
		i := slices.IndexFunc(p.Files.Write, func(w policy.Path) bool { return w.Contains(policy.Path(r)) && w != policy.Path(r) })
		if i < 0 {
			return nil, fmt.Errorf("read-only path %s is not beneath a write path", r)
		}
		for dir := filepath.Dir(r); dir != string(p.Files.Write[i]) && policy.Path(p.Files.Write[i]).Contains(policy.Path(dir)); dir = filepath.Dir(dir) {
			if !pinned[dir] && !slices.Contains(readOnly, dir) {
				pinned[dir] = true
				if err := add(TreePlan{Path: dir, Write: true}); err != nil {
					return nil, err
				}
			}
		}
		if err := add(TreePlan{Path: r}); err != nil {
			return nil, err
		}
	}
	if len(out) > maxTrees {
		return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("%d trees to mount, more than the %d one launch mounts", len(out), maxTrees)}
	}
	slices.SortStableFunc(out, func(a, b TreePlan) int { return len(a.Path) - len(b.Path) })
	return out, nil
}

// checkSearchable refuses, for a root launch, a listed path the throwaway
// uid cannot reach because a directory above it is not searchable by
// others (a workspace under /root, mode 0700, say): the agent would fail
// on its first step, or stage 2 on opening the rule.
func checkSearchable(paths []policy.Path) error {
	for _, p := range paths {
		if policy.Path(privateTmp).Contains(p) || policy.Path("/dev/shm").Contains(p) {
			continue // grafted into the private tmpfs, under fresh 0755 directories
		}
		for dir := filepath.Dir(string(p)); ; dir = filepath.Dir(dir) {
			var st unix.Stat_t
			if err := unix.Stat(dir, &st); err == nil && st.Mode&0o001 == 0 {
				return &RefusedError{Boundary: "identity",
					Detail: fmt.Sprintf("%s is not searchable by others (mode %#o), so the agent's throwaway uid cannot reach %s", dir, st.Mode&0o7777, p),
					Hint:   fmt.Sprintf("make it searchable (chmod o+x %s), or launch as the owner instead of root", dir)}
			}
			if dir == "/" {
				break
			}
		}
	}
	return nil
}

// checkWriteOwners refuses, for a root launch, write paths outside the
// workspace that neither belong to the workspace's owner nor are writable
// by all: the throwaway uid is idmapped onto one owner only, and such a
// path would be unwritable despite the policy.
func checkWriteOwners(workspace string, writes []policy.Path) (uid, gid int, err error) {
	var ws unix.Stat_t
	if err := unix.Stat(workspace, &ws); err != nil {
		return 0, 0, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	for _, w := range writes {
		var st unix.Stat_t
		if err := unix.Stat(string(w), &st); err != nil {
			return 0, 0, fmt.Errorf("write path %s: %w", w, err)
		}
		if st.Uid != ws.Uid && st.Mode&0o002 == 0 {
			return 0, 0, &RefusedError{Boundary: "identity",
				Detail: fmt.Sprintf("write path %s belongs to uid %d, the workspace to uid %d: as root the agent runs under a throwaway uid that can be mapped onto one owner only", w, st.Uid, ws.Uid),
				Hint:   "give the write paths the workspace's owner, or launch as that user instead of root"}
		}
	}
	return int(ws.Uid), int(ws.Gid), nil
}

func buildRlimits(p *policy.Policy, h Host) []RlimitPlan {
	inf := uint64(unix.RLIM_INFINITY)
	orInf := func(v int64) uint64 {
		if v == 0 {
			return inf
		}
		return uint64(v)
	}
	l := p.Limits
	rs := []RlimitPlan{
		{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", uint64(l.OpenFiles), false},
		{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", orInf(int64(l.FileSize)), false},
		// 1, not 0: with a pipe in core_pattern (systemd-coredump,
		// apport) the kernel ignores a limit of 0 and runs the host's
		// helper as root on the crashed agent's memory; exactly 1 stops
		// it (the kernel's guard against recursive dumps), and no file
		// dump fits in one byte. Seccomp keeps the agent from lowering
		// it (stage 2 sets it on itself, before the filter). A hard limit
		// of 0 inherited is kept (raising it needs CAP_SYS_RESOURCE, which
		// root in a container may lack): the summary then says what that
		// leaves (coreDumpsUncovered).
		{unix.RLIMIT_CORE, "RLIMIT_CORE", 1, true},
		{unix.RLIMIT_CPU, "RLIMIT_CPU", orInf(int64(l.CPUTime) / 1e9), false},
		{unix.RLIMIT_NPROC, "RLIMIT_NPROC", uint64(l.Processes), false},
		// Not in the policy, and not inherited from whoever started the
		// launcher: no real-time scheduling, no raised priority, bounded
		// locked memory and message queues.
		{unix.RLIMIT_RTPRIO, "RLIMIT_RTPRIO", 0, false},
		{unix.RLIMIT_RTTIME, "RLIMIT_RTTIME", 0, false},
		{unix.RLIMIT_NICE, "RLIMIT_NICE", 0, false},
		{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 8 << 20, true},
		{unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 800 << 10, true},
	}
	// Only root launches get a cgroup (stage 1 creates it).
	if !(h.Root && h.Cgroup.HasController("memory")) && l.Memory > 0 {
		// Without a memory cgroup, address space is the only bound (SD-05).
		rs = append(rs, RlimitPlan{unix.RLIMIT_AS, "RLIMIT_AS", uint64(l.Memory), false})
	}
	return rs
}

// buildLandlock chooses the ABI (the kernel's, capped at what this launcher
// knows) after checking the policy's floor, and lists every rule.
// landlockConfig is go-landlock's description of ABI abi (1 to
// maxKnownABI): the rights and scopes it handles.
func landlockConfig(abi int) landlock.Config {
	return [maxKnownABI]landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}[abi-1]
}

func buildLandlock(p *policy.Policy, h Host) (LandlockPlan, error) {
	floor, why := floorFiles, "file rules"
	if len(p.Files.Write) > 0 {
		floor, why = floorWrite, "write rules (the truncate right)"
	}
	if p.Network.Mode == policy.NetPorts {
		floor, why = floorTCP, "ports mode (TCP rules)"
	}
	abi := min(h.Landlock.ABI, maxKnownABI)
	if abi < floor {
		return LandlockPlan{}, &RefusedError{Boundary: "landlock", Detail: fmt.Sprintf("the policy's %s need Landlock ABI %d, this kernel has %d", why, floor, h.Landlock.ABI), Hint: kernelForABI(floor)}
	}
	cfg := landlockConfig(abi)
	lp := LandlockPlan{ABI: abi, HandledFS: uint64(cfg.HandledAccessFS)}
	if abi >= floorScopes {
		lp.Scoped = uint64(cfg.Scoped)
	}
	// TCP is handled whenever the agent shares the host's network: in
	// ports mode only the listed ports pass. With a network namespace,
	// loopback inside it is the agent's own and stays usable.
	if p.Network.Mode == policy.NetNone && !h.NetNS.Available {
		// Network "none" without a network namespace: every TCP bind and
		// connect is refused here, every other socket family by seccomp
		// (DenyInet). Below ABI 4 Assess has already refused (SR-03).
		if abi < floorTCP {
			return LandlockPlan{}, &RefusedError{Boundary: "network", Detail: fmt.Sprintf("no network namespace and Landlock ABI %d < %d: nothing would keep the agent off the network (SR-03)", h.Landlock.ABI, floorTCP), Hint: kernelForABI(floorTCP)}
		}
		lp.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if p.Network.Mode == policy.NetPorts {
		lp.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		for _, port := range p.Network.ConnectTCP {
			lp.Ports = append(lp.Ports, PortRule{uint16(port), ll.AccessNetConnectTCP})
		}
		for _, port := range p.Network.BindTCP {
			lp.Ports = append(lp.Ports, PortRule{uint16(port), ll.AccessNetBindTCP})
		}
	}
	add := func(path string, access uint64) error {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("landlock rule for %q: %w", path, err)
		}
		if !st.IsDir() {
			access &= accessFileOnly
		}
		lp.Paths = append(lp.Paths, PathRule{Path: path, Access: access & lp.HandledFS})
		return nil
	}
	for _, r := range p.Files.Read {
		if err := add(string(r), accessRead); err != nil {
			return lp, err
		}
	}
	for _, r := range p.Files.Exec {
		if err := add(string(r), accessExec); err != nil {
			return lp, err
		}
	}
	for _, r := range p.Files.Write {
		if err := add(string(r), accessWrite); err != nil {
			return lp, err
		}
	}
	// The sandbox's own /tmp and /proc, and /dev/null, which every program
	// expects. /tmp is a fresh tmpfs mounted noexec.
	for _, r := range []struct {
		path   string
		access uint64
	}{{privateTmp, accessWrite}, {"/proc", accessRead}, {"/dev/null", accessWrite}} {
		if slices.ContainsFunc(lp.Paths, func(x PathRule) bool { return x.Path == r.path }) {
			continue
		}
		if err := add(r.path, r.access); err != nil {
			return lp, err
		}
	}
	return lp, nil
}

// RefusedError is a Boundary the policy needs that this host cannot apply.
type RefusedError struct {
	Boundary, Detail, Hint string
}

func (e *RefusedError) Error() string { return e.Boundary + ": " + e.Detail }
