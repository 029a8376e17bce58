package launcher

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// KillStaleCgroups ends every process in, and removes, the groups that
// CreateCgroup made beside this process's own for sessions named
// "s-PID-kind-…" whose PID is gone. sweepStale removes such groups only
// when empty; a gateway killed outright (SIGKILL) leaves its full-access
// sessions' groups populated, with what their commands left running. A
// group whose PID is in use again is left (as sweepStale leaves it).
func KillStaleCgroups(ctx context.Context, kind string) error {
	l, err := readCgroupLayout()
	if err != nil {
		return err
	}
	var v2, pids, memory, freezer string // where CreateCgroup makes pinfold/NAME
	switch l.Mode {
	case CgroupV2:
		v2 = v2Base(l.V2.Point, l.V2.dir(), hasOwnProcs)
	case CgroupHybrid, CgroupV1:
		if m := findV1(l, "pids"); m != nil {
			pids = m.dir()
		}
		if m := findV1(l, "memory"); m != nil {
			memory = m.dir()
		}
		if m := findV1(l, "freezer"); l.Mode == CgroupV1 && m != nil {
			freezer = m.dir()
		}
		if l.Mode == CgroupHybrid && l.V2 != nil {
			v2 = l.V2.dir()
		}
	default:
		return nil
	}
	stale := map[string]bool{}
	for _, base := range []string{v2, pids, memory, freezer} {
		if base == "" {
			continue
		}
		ents, _ := os.ReadDir(base + "/" + cgroupParentName)
		for _, e := range ents {
			pid, ok := sessionPid(e.Name())
			if ok && e.IsDir() && strings.HasPrefix(e.Name(), "s-"+strconv.Itoa(pid)+"-"+kind+"-") && unix.Kill(pid, 0) == unix.ESRCH {
				stale[e.Name()] = true
			}
		}
	}
	var errs []error
	for name := range stale {
		c := &Cgroup{mode: l.Mode, v2fd: -1}
		in := func(base string) string {
			if base == "" {
				return ""
			}
			dir := base + "/" + cgroupParentName + "/" + name
			if _, err := os.Stat(dir); err != nil {
				return ""
			}
			return dir
		}
		c.v2, c.pids, c.memory, c.freezer = in(v2), in(pids), in(memory), in(freezer)
		err := c.Kill(ctx)
		if errors.Is(err, fs.ErrNotExist) {
			// Another launch's sweepStale removed the v2 group once
			// emptied: the v1 groups are what is left to end.
			c.v2 = ""
			err = c.Kill(ctx)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.Remove())
	}
	return errors.Join(errs...)
}
