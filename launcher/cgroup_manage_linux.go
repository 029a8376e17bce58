package launcher

// The agent's cgroup, by direct writes to the cgroup file systems rather
// than through github.com/containerd/cgroups/v3: its cgroup1 and cgroup2
// packages import cilium/ebpf, protobuf, runtime-spec, go-systemd and
// godbus, none of which is in go.mod, for what is here a dozen file
// writes; cgroup1.New makes a group in every mounted hierarchy and has no
// notion of the hybrid layout (v1 limits beside a v2 tracking group); and
// the cgroup2 manager has no way to place the group beside our own cgroup
// when the "no internal processes" rule forbids nesting it (v2Base).
//
// Paths are built from the mount table and a session name validated to be
// one path element ([a-z0-9-]); cgroup file systems have no symlinks, so
// joining and opening them is safe here, unlike paths the agent can touch.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CreateCgroup makes the agent's group in the hierarchies this host has and
// writes the limits. info is the probe's report (Probe().Cgroup); the mount
// table is read again and must still agree with it.
//
//   - v2: the group at <base>/pinfold/<Session>, with pids (and memory) enabled
//     in cgroup.subtree_control from the root down; pids.max, memory.max and,
//     when memory is limited and the file exists, memory.swap.max 0.
//   - hybrid: v1 pids (and memory) groups for the limits, and a v2 group in
//     the cgroup2 mount for tracking, CLONE_INTO_CGROUP and cgroup.kill.
//   - v1: v1 pids (and memory) groups, and a freezer group when the freezer
//     hierarchy is mounted (Kill uses it).
//
// It fails closed, naming the file it could not write, and on any failure
// removes every directory it made.
func CreateCgroup(info CgroupInfo, spec CgroupSpec) (*Cgroup, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := CgroupSupported(info); err != nil {
		return nil, err
	}
	l, err := readCgroupLayout()
	if err != nil {
		return nil, err
	}
	if l.Mode != info.Mode {
		return nil, fmt.Errorf("cgroup: the mount table now says %s but the probe said %s: probe again", l.Mode, info.Mode)
	}
	return createCgroup(l, spec)
}

func readCgroupLayout() (cgroupLayout, error) {
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupLayout{}, fmt.Errorf("cgroup: read mount table: %w", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupLayout{}, fmt.Errorf("cgroup: read own cgroups: %w", err)
	}
	return classifyCgroups(string(mountinfo), string(self)), nil
}

// createCgroup does the work of CreateCgroup on a given layout (tests pass
// a hybrid layout with the cgroup2 mount removed to exercise pure v1).
func createCgroup(l cgroupLayout, spec CgroupSpec) (_ *Cgroup, err error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	c := &Cgroup{mode: l.Mode, spec: spec, v2fd: -1}
	defer func() {
		if err != nil {
			if rerr := c.Remove(); rerr != nil {
				err = fmt.Errorf("%w (and removing what was made: %v)", err, rerr)
			}
		}
	}()
	switch l.Mode {
	case CgroupV2:
		err = c.createV2(l.V2)
	case CgroupHybrid, CgroupV1:
		err = c.createV1(l)
		if err == nil && l.Mode == CgroupHybrid {
			if l.V2 == nil {
				return nil, errors.New("cgroup: internal error: hybrid layout without a cgroup2 mount")
			}
			// The tracking group needs no controllers, so it may sit below
			// our own cgroup even when that has processes.
			c.v2, err = c.makeGroup(l.V2.dir(), nil)
		}
	default:
		return nil, unsupported("cgroup: no cgroup file system is mounted")
	}
	if err != nil {
		return nil, err
	}
	if c.v2 != "" {
		fd, err := unix.Open(c.v2, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("cgroup: open %s: %w", c.v2, err)
		}
		c.v2fd = fd
	}
	return c, nil
}

func (c *Cgroup) createV2(m *cgroupMount) error {
	ctrls := []string{"pids"}
	if c.spec.Memory > 0 {
		ctrls = append(ctrls, "memory")
	}
	have, err := readFields(m.Point, "cgroup.controllers")
	if err != nil {
		return err
	}
	for _, ctl := range ctrls {
		if !slices.Contains(have, ctl) {
			return unsupported("cgroup: the cgroup2 hierarchy at %s has no %s controller (cgroup.controllers: %s)",
				m.Point, ctl, listOrNone(have))
		}
	}
	base := v2Base(m.Point, m.dir(), hasOwnProcs)
	for _, d := range chainBelow(m.Point, base) {
		if err := enableControllers(d, ctrls); err != nil {
			return err
		}
	}
	c.v2, err = c.makeGroup(base, func(parent string) error { return enableControllers(parent, ctrls) })
	if err != nil {
		return err
	}
	if err := writeLimit(c.v2, "pids.max", c.spec.Pids, 1); err != nil {
		return err
	}
	if c.spec.Memory == 0 {
		return nil
	}
	if err := writeLimit(c.v2, "memory.max", c.spec.Memory, int64(unix.Getpagesize())); err != nil {
		return err
	}
	// Absent when the kernel does not account swap (swapaccount=0 or no
	// CONFIG_SWAP); then there is no swap limit to set.
	if err := writeCgroupFile(c.v2, "memory.swap.max", "0"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (c *Cgroup) createV1(l cgroupLayout) error {
	pids := findV1(l, "pids")
	if pids == nil {
		return unsupported("cgroup: no v1 pids hierarchy is mounted")
	}
	var memory, freezer *cgroupMount
	if c.spec.Memory > 0 {
		if memory = findV1(l, "memory"); memory == nil {
			return unsupported("cgroup: a memory limit is asked for but no v1 memory hierarchy is mounted")
		}
	}
	if l.Mode == CgroupV1 {
		freezer = findV1(l, "freezer") // optional: Kill loops without it
	}
	var err error
	if c.pids, err = c.makeGroup(pids.dir(), nil); err != nil {
		return err
	}
	if err := writeLimit(c.pids, "pids.max", c.spec.Pids, 1); err != nil {
		return err
	}
	if memory != nil {
		if c.memory = c.pids; memory.Point != pids.Point { // co-mounted: one group
			if c.memory, err = c.makeGroup(memory.dir(), nil); err != nil {
				return err
			}
		}
		if err := writeLimit(c.memory, "memory.limit_in_bytes", c.spec.Memory, int64(unix.Getpagesize())); err != nil {
			return err
		}
		// memsw counts memory plus swap, so equal limits mean no swap.
		// Absent without swap accounting; it must not be below the limit,
		// hence written second.
		err := writeCgroupFile(c.memory, "memory.memsw.limit_in_bytes", strconv.FormatInt(c.spec.Memory, 10))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if freezer != nil {
		switch freezer.Point {
		case pids.Point:
			c.freezer = c.pids
		case memoryPoint(memory):
			c.freezer = c.memory
		default:
			if c.freezer, err = c.makeGroup(freezer.dir(), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func memoryPoint(m *cgroupMount) string {
	if m == nil {
		return ""
	}
	return m.Point
}

// findV1 returns the v1 hierarchy holding controller ctl, or nil.
func findV1(l cgroupLayout, ctl string) *cgroupMount {
	for i := range l.V1 {
		if slices.Contains(l.V1[i].Controllers, ctl) {
			return &l.V1[i]
		}
	}
	return nil
}

// makeGroup makes <base>/pinfold (if missing) and <base>/pinfold/<Session>
// (which must not exist), calling prepare on the pinfold directory in
// between. Another session's Remove may take away pinfold between the two
// mkdirs; that is retried.
func (c *Cgroup) makeGroup(base string, prepare func(parent string) error) (string, error) {
	parent := base + "/" + cgroupParentName
	dir := parent + "/" + c.spec.Session
	for attempt := 0; ; attempt++ {
		switch err := os.Mkdir(parent, 0o755); {
		case err == nil:
			if !slices.Contains(c.parents, parent) {
				c.parents = append(c.parents, parent)
			}
		case !errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("cgroup: create %s: %w", parent, pathErr(err))
		}
		sweepStale(parent)
		if prepare != nil {
			if err := prepare(parent); err != nil {
				if errors.Is(err, fs.ErrNotExist) && attempt < 3 {
					continue
				}
				return "", err
			}
		}
		err := os.Mkdir(dir, 0o755)
		switch {
		case err == nil:
			return dir, nil
		case errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("cgroup: create %s: a group for session %q already exists", dir, c.spec.Session)
		case errors.Is(err, fs.ErrNotExist) && attempt < 3:
			continue
		default:
			return "", fmt.Errorf("cgroup: create %s: %w", dir, pathErr(err))
		}
	}
}

// sweepStale removes the empty session groups in parent whose launcher is
// gone: a launcher killed with SIGKILL cannot remove its own. A group is
// removed only when it is empty and no process has the pid its name
// records (a reused pid keeps it, which errs on the side of leaving it).
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := sessionPid(e.Name())
		if !ok || !e.IsDir() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		dir := parent + "/" + e.Name()
		if procs, err := groupProcs(dir); err == nil && len(procs) == 0 {
			unix.Rmdir(dir)
		}
	}
}

// sessionPid parses the launcher pid out of a session name "s-PID-HEX".
func sessionPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "s-")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(num)
	return pid, ok && err == nil && pid > 0
}

// enableControllers writes "+ctl" to dir's cgroup.subtree_control for each
// of ctrls not already enabled there.
func enableControllers(dir string, ctrls []string) error {
	on, err := readFields(dir, "cgroup.subtree_control")
	if err != nil {
		return err
	}
	for _, ctl := range ctrls {
		if slices.Contains(on, ctl) {
			continue
		}
		if err := writeCgroupFile(dir, "cgroup.subtree_control", "+"+ctl); err != nil {
			if errors.Is(err, unix.EBUSY) {
				return fmt.Errorf("%w (cgroup v2 enables controllers only below a group without processes of its own)", err)
			}
			return err
		}
	}
	return nil
}

// hasOwnProcs reports whether dir holds processes itself (not counting
// descendants); an unreadable cgroup.procs counts as yes.
func hasOwnProcs(dir string) bool {
	b, err := os.ReadFile(dir + "/cgroup.procs")
	return err != nil || len(strings.TrimSpace(string(b))) > 0
}

// writeLimit writes v to dir/name and reads it back: the kernel rounds
// memory limits down to a multiple of the page size (round), and a value
// that did not stick must not pass for a Boundary.
func writeLimit(dir, name string, v, round int64) error {
	if err := writeCgroupFile(dir, name, strconv.FormatInt(v, 10)); err != nil {
		return err
	}
	got, err := readCgroupFile(dir, name)
	if err != nil {
		return err
	}
	if want := v / round * round; got != strconv.FormatInt(want, 10) {
		return fmt.Errorf("cgroup: %s/%s reads %q after writing %d", dir, name, got, v)
	}
	return nil
}

// CgroupFD returns a descriptor of the v2 group for
// SysProcAttr{UseCgroupFD: true, CgroupFD: fd} (clone3 CLONE_INTO_CGROUP,
// which accepts an O_PATH descriptor), and false when the host has no v2
// group (pure v1). The Cgroup owns it: valid until Remove; do not close it.
// A child cloned into it still needs Add for the v1 groups (hybrid).
func (c *Cgroup) CgroupFD() (int, bool) {
	return c.v2fd, c.v2fd >= 0
}

// Add moves process pid (all its threads) into every v1 group and the v2
// group. Writing a pid that is already in a group (cloned into it) is a
// no-op. On error pid may be in some groups and not others: the caller
// kills it.
func (c *Cgroup) Add(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("cgroup: add pid %d: not a process", pid)
	}
	for _, d := range c.groupDirs() {
		if err := writeCgroupFile(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// JoinFiles opens the tasks file of every v1 group, for stage 2 to move
// itself by writing "0" to each before it does anything else. A thread
// moving itself skips the global lock that moving a process by pid takes,
// and with it an RCU grace period (5-15 ms here, on every launch); stage 2
// is a single thread, so for it the two moves are the same. The caller
// closes the files.
func (c *Cgroup) JoinFiles() ([]*os.File, error) {
	var files []*os.File
	for _, d := range c.v1Dirs() {
		f, err := os.OpenFile(d+"/tasks", os.O_WRONLY, 0)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("cgroup: open %s/tasks: %w", d, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// Pids lists the processes in the group and any groups below it: the v2
// group when there is one, else the v1 pids group.
func (c *Cgroup) Pids() ([]int, error) {
	if c.v2 != "" {
		return groupProcs(c.v2)
	}
	return groupProcs(c.pids)
}

// OOMKills is how many processes the kernel killed in the group for
// passing its memory limit (v2 memory.events, v1 memory.oom_control:
// "oom_kill N"); 0 when the group has no memory limit. A caller reads it
// once the group's processes have ended, to say why they did.
func (c *Cgroup) OOMKills() (int, error) {
	dir, file := c.v2, "memory.events"
	switch {
	case c.spec.Memory == 0:
		return 0, nil
	case c.memory != "":
		dir, file = c.memory, "memory.oom_control"
	}
	text, err := readCgroupFile(dir, file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(eventValue(text, "oom_kill"))
	if err != nil {
		return 0, fmt.Errorf("cgroup: %s/%s has no oom_kill count", dir, file)
	}
	return n, nil
}

// Remove removes every group made (groups below them first), tolerating
// ones already gone, then the pinfold directories it made if no other
// session uses them. It fails, naming the group, if processes remain. It
// closes the CgroupFD descriptor, and may be called again.
func (c *Cgroup) Remove() error {
	if c.v2fd >= 0 {
		unix.Close(c.v2fd)
		c.v2fd = -1
	}
	var errs []error
	for _, d := range c.groupDirs() {
		errs = append(errs, removeGroup(d))
	}
	for i := len(c.parents) - 1; i >= 0; i-- {
		err := unix.Rmdir(c.parents[i])
		if err != nil && err != unix.ENOENT && err != unix.EBUSY && err != unix.ENOTEMPTY {
			errs = append(errs, fmt.Errorf("cgroup: remove %s: %w", c.parents[i], err))
		}
	}
	return errors.Join(errs...)
}

// v1Dirs lists the distinct v1 groups; groupDirs adds the v2 group last.
func (c *Cgroup) v1Dirs() []string {
	var dirs []string
	for _, d := range []string{c.pids, c.memory, c.freezer} {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func (c *Cgroup) groupDirs() []string {
	dirs := c.v1Dirs()
	if c.v2 != "" {
		dirs = append(dirs, c.v2)
	}
	return dirs
}

// removeGroup removes dir and any groups below it, deepest first.
func removeGroup(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cgroup: remove %s: %w", dir, pathErr(err))
	}
	var errs []error
	for _, e := range ents {
		if e.IsDir() {
			errs = append(errs, removeGroup(dir+"/"+e.Name()))
		}
	}
	switch err := unix.Rmdir(dir); {
	case err == nil, err == unix.ENOENT:
	case err == unix.EBUSY:
		pids, _ := groupProcs(dir)
		errs = append(errs, fmt.Errorf("cgroup: remove %s: %d processes remain %v: %w", dir, len(pids), pids, err))
	default:
		errs = append(errs, fmt.Errorf("cgroup: remove %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// groupProcs lists the processes in dir and the groups below it; a group
// that no longer exists (removed) holds none.
func groupProcs(dir string) ([]int, error) {
	text, err := readCgroupFile(dir, "cgroup.procs")
	if err != nil {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	pids, err := parseProcs(text)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %s/cgroup.procs: %w", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cgroup: list %s: %w", dir, pathErr(err))
	}
	for _, e := range ents {
		if e.IsDir() {
			sub, err := groupProcs(dir + "/" + e.Name())
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			pids = append(pids, sub...)
		}
	}
	return pids, nil
}

func writeCgroupFile(dir, name, value string) error {
	p := dir + "/" + name
	// No O_CREATE: a missing control file is an error, never a new file.
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(value) // one write(2): the kernel parses per write
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cgroup: write %q to %s: %w", value, p, pathErr(err))
	}
	return nil
}

func readCgroupFile(dir, name string) (string, error) {
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		return "", fmt.Errorf("cgroup: read %s/%s: %w", dir, name, pathErr(err))
	}
	return strings.TrimSpace(string(b)), nil
}

func readFields(dir, name string) ([]string, error) {
	s, err := readCgroupFile(dir, name)
	return strings.Fields(s), err
}

// pathErr strips the *fs.PathError around an errno, whose path the
// caller's message already names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
