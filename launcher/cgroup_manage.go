package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CgroupSpec names the agent's cgroup and its limits.
type CgroupSpec struct {
	Session string // unique, [a-z0-9-], e.g. "s-<pid>-<random hex>"; the group lives at <hierarchy>/pinfold/<Session>
	Pids    int64  // pids.max; must be ≥ 1
	Memory  int64  // bytes; 0 = no memory limit
}

// Cgroup is one agent's group across the hierarchies the host has: the v2
// group (pure v2: limits, tracking and kill; hybrid: tracking and kill) and
// the v1 pids, memory and freezer groups (hybrid and v1). Its methods are
// not safe for concurrent use with Remove.
type Cgroup struct {
	mode    string
	spec    CgroupSpec
	v2      string // v2 group directory, "" when the host has no cgroup2 mount (pure v1)
	v2fd    int    // O_PATH descriptor of v2 for CLONE_INTO_CGROUP, -1 when closed or absent
	pids    string // v1 pids group, "" unless v1 or hybrid
	memory  string // v1 memory group, "" unless v1 or hybrid with a memory limit
	freezer string // v1 freezer group, "" unless v1 with a freezer hierarchy
	// parents are the <hierarchy>/pinfold directories this Cgroup created;
	// Remove tries them last and leaves them when other sessions use them.
	parents []string
	// freezes counts the Freeze calls not yet thawed: the person's
	// questions (AgentPause) and Ctrl-Z each freeze the agent, and one's
	// thaw must not let it run while the other holds it.
	freezeMu sync.Mutex
	freezes  int
}

const (
	cgroupParentName = "pinfold"
	maxSessionLen    = 64
	// pidMaxLimit is the kernel's PID_MAX_LIMIT on 64-bit; pids.max
	// rejects larger values with EINVAL.
	pidMaxLimit = 1 << 22
	minMemory   = 1 << 20
)

// validate checks the spec before anything is created.
func (s CgroupSpec) validate() error {
	if s.Session == "" || len(s.Session) > maxSessionLen {
		return fmt.Errorf("cgroup: session name %q: must be 1 to %d characters", s.Session, maxSessionLen)
	}
	for i := 0; i < len(s.Session); i++ {
		c := s.Session[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0) {
			return fmt.Errorf("cgroup: session name %q: only a-z, 0-9 and '-' (not first) are allowed, so that it is one path element", s.Session)
		}
	}
	if s.Pids < 1 {
		return fmt.Errorf("cgroup: pids limit %d: must be at least 1 (the agent itself is a process)", s.Pids)
	}
	if s.Pids > pidMaxLimit {
		return fmt.Errorf("cgroup: pids limit %d: above the kernel's limit of %d processes", s.Pids, pidMaxLimit)
	}
	if s.Memory < 0 {
		return fmt.Errorf("cgroup: memory limit %d: must not be negative (0 means no limit)", s.Memory)
	}
	if s.Memory > 0 && s.Memory < minMemory {
		return fmt.Errorf("cgroup: memory limit %d bytes: below %s no program starts", s.Memory, formatBytes(minMemory))
	}
	return nil
}

// CgroupSupported says why this host cannot give the agent a pids-limited
// cgroup, or returns nil. The error wraps errors.ErrUnsupported; info.Hint
// says what to change. As root the launcher must refuse a process limit
// without it: RLIMIT_NPROC does not bind root (SR-04).
func CgroupSupported(info CgroupInfo) error {
	return cgroupSupported(info, os.Geteuid())
}

func cgroupSupported(info CgroupInfo, euid int) error {
	var why []string
	if info.Mode == CgroupNone || info.Mode == "" {
		why = append(why, "no cgroup file system is mounted")
	} else {
		if euid != 0 {
			why = append(why, fmt.Sprintf("not root (euid %d): only root may create cgroups here", euid))
		}
		if !info.HasController("pids") {
			why = append(why, "no pids controller")
		}
		if !info.Writable {
			why = append(why, "the cgroup directories are not writable")
		}
	}
	if len(why) == 0 {
		return nil
	}
	msg := strings.Join(why, "; ")
	if info.Detail != "" {
		msg += " (" + info.Mode + ": " + info.Detail + ")"
	}
	return unsupported("cgroup: limits cannot be applied: %s", msg)
}

// CgroupRefusal is the refusal of a process started as root on a host
// whose cgroups (info) cannot bound it (err is CgroupSupported's): the
// agent's, and a Code Mode worker's. RLIMIT_NPROC does not bind root
// (SR-04). Its hint is info's, the one the launch's assessment of the
// process limit gives (what to mount, enable or where to run), else
// where to see the layout.
func CgroupRefusal(info CgroupInfo, err error) *RefusedError {
	hint := info.Hint
	if hint == "" {
		hint = "run `launcher hello` to see the cgroup layout"
	}
	return &RefusedError{Boundary: "cgroup", Detail: strings.TrimPrefix(err.Error(), "cgroup: ") + ": as root, RLIMIT_NPROC does not bound a fork bomb (SR-04)", Hint: hint}
}

// unsupportedError is errors.ErrUnsupported with a message that does not
// end in ": unsupported operation".
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return errors.ErrUnsupported }

func unsupported(format string, args ...any) error {
	return &unsupportedError{fmt.Sprintf(format, args...)}
}

// Describe says in one line where the groups are and what they enforce,
// for the launch summary.
func (c *Cgroup) Describe() string {
	limits := fmt.Sprintf("pids.max %d", c.spec.Pids)
	if c.spec.Memory > 0 {
		limits += ", memory " + formatBytes(c.spec.Memory) + " without swap"
	} else {
		limits += ", no memory limit"
	}
	var v1 []string
	for _, g := range []struct{ name, dir string }{{"pids", c.pids}, {"memory", c.memory}, {"freezer", c.freezer}} {
		if g.dir != "" {
			v1 = append(v1, g.name+" "+g.dir)
		}
	}
	switch c.mode {
	case CgroupV2:
		return fmt.Sprintf("v2: group %s (%s; cgroup.kill)", c.v2, limits)
	case CgroupHybrid:
		return fmt.Sprintf("hybrid: v1 %s; v2 tracking group %s (%s; cgroup.kill)", strings.Join(v1, ", "), c.v2, limits)
	default:
		kill := "kill by SIGKILL loop"
		if c.freezer != "" {
			kill = "kill by freeze, SIGKILL, thaw"
		}
		return fmt.Sprintf("v1: %s (%s; %s)", strings.Join(v1, ", "), limits, kill)
	}
}

// formatBytes prints n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// v2Base picks the directory under which a pure-v2 group is made. Cgroup
// v2's "no internal processes" rule forbids enabling controllers in
// cgroup.subtree_control of a non-root cgroup that has processes, and our
// own cgroup always has one (us). So the base is the nearest ancestor of
// own (own included) without processes of its own, or the mount point
// (the root cgroup is exempt; a cgroup-namespace root is not, and then
// enabling fails with an error naming the file).
func v2Base(point, own string, hasProcs func(dir string) bool) string {
	d := own
	for d != point && strings.HasPrefix(d, point+"/") {
		if !hasProcs(d) {
			return d
		}
		d = path.Dir(d)
	}
	return point
}

// chainBelow lists the directories from point down to dir, both included;
// dir must be point or beneath it.
func chainBelow(point, dir string) []string {
	chain := []string{dir}
	for d := dir; d != point && strings.HasPrefix(d, point+"/"); {
		d = path.Dir(d)
		chain = append(chain, d)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// groupSignaller is what killLoop needs from a group whose kernel has no
// cgroup.kill: the v1 hierarchies, or a v2 group before Linux 5.14.
type groupSignaller interface {
	// freeze tries to stop every task in the group and reports whether it
	// asked the freezer to (false: no freezer, or writing to it failed; the
	// loop then kills without freezing). After true, thaw must follow.
	freeze(ctx context.Context) bool
	thaw() error
	// procs lists the processes in the group and its descendants.
	procs() ([]int, error)
	// kill sends SIGKILL to those of pids that are still in the group.
	kill(pids []int) error
}

// killLoop empties a group without cgroup.kill: freeze (when there is a
// freezer, so that nothing forks between listing and killing), SIGKILL
// every process listed, thaw (a frozen task acts on SIGKILL only once
// thawed), and again until the group is empty. The group is never left
// frozen. pause waits between rounds and fails when ctx is done; at least
// one round runs even if ctx is already done.
func killLoop(ctx context.Context, g groupSignaller, pause func(ctx context.Context, round int) error) error {
	for round := 0; ; round++ {
		pids, err := killRound(ctx, g)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if err := pause(ctx, round); err != nil {
			return fmt.Errorf("cgroup: kill: %d processes remain after %d rounds: %w", len(pids), round+1, err)
		}
	}
}

// killRound is one freeze, list, kill, thaw; it returns the processes it
// found (empty: the group was empty).
func killRound(ctx context.Context, g groupSignaller) (pids []int, err error) {
	if g.freeze(ctx) {
		defer func() {
			if terr := g.thaw(); terr != nil {
				err = errors.Join(err, terr)
			}
		}()
	}
	if pids, err = g.procs(); err != nil {
		return nil, err
	}
	if len(pids) > 0 {
		err = g.kill(pids)
	}
	return pids, err
}

// killPause backs off from 1 ms to 20 ms between kill rounds.
func killPause(ctx context.Context, round int) error {
	d := min(time.Millisecond<<min(round, 5), 20*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// eventValue returns the value of key in a flat-keyed file such as
// cgroup.events ("populated 1\nfrozen 0\n"), "" if absent.
func eventValue(text, key string) string {
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			return v
		}
	}
	return ""
}

// parseProcs parses cgroup.procs: one decimal pid a line.
func parseProcs(text string) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(text) {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("bad pid %q", f)
		}
		pids = append(pids, p)
	}
	return pids, nil
}
