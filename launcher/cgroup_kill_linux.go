package launcher

// Emptying the agent's cgroup: cgroup.kill where the kernel has it, else
// killLoop (cgroup_manage.go) over the groups, with the v1 freezer or v2
// cgroup.freeze when present.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Kill ends every process in the group and waits until it is empty, bounded
// by ctx. With a v2 group it writes 1 to cgroup.kill and polls
// cgroup.events for "populated 0"; then, and on pure v1, it runs killLoop
// over the v1 groups (freeze if there is a freezer, SIGKILL, thaw, until
// empty), which in hybrid mode finds them already empty.
func (c *Cgroup) Kill(ctx context.Context) error {
	if c.v2 != "" {
		err := writeCgroupFile(c.v2, "cgroup.kill", "1")
		switch {
		case errors.Is(err, fs.ErrNotExist): // Linux < 5.14
			err = killLoop(ctx, v2Signaller{dir: c.v2}, killPause)
		case err == nil:
			err = waitUnpopulated(ctx, c.v2)
		}
		if err != nil {
			return err
		}
	}
	if dirs := c.v1Dirs(); len(dirs) > 0 {
		return killLoop(ctx, v1Signaller{dirs: dirs, freezer: c.freezer}, killPause)
	}
	return nil
}

// waitUnpopulated polls dir's cgroup.events until "populated 0".
func waitUnpopulated(ctx context.Context, dir string) error {
	for round := 0; ; round++ {
		ev, err := readCgroupFile(dir, "cgroup.events")
		if err != nil {
			return err
		}
		if eventValue(ev, "populated") == "0" {
			return nil
		}
		if err := killPause(ctx, round); err != nil {
			pids, _ := groupProcs(dir)
			return fmt.Errorf("cgroup: kill %s: %d processes remain %v: %w", dir, len(pids), pids, err)
		}
	}
}

// freezeWait bounds the wait for a freezer to report every task frozen; a
// task stuck in the kernel may never freeze, and the loop then kills
// without the guarantee.
const freezeWait = time.Second

// v1Signaller is killLoop's view of the v1 groups.
type v1Signaller struct {
	dirs    []string
	freezer string // "" when there is no freezer group
}

func (s v1Signaller) freeze(ctx context.Context) bool {
	if s.freezer == "" || writeCgroupFile(s.freezer, "freezer.state", "FROZEN") != nil {
		return false
	}
	waitFor(ctx, func() bool {
		st, err := readCgroupFile(s.freezer, "freezer.state")
		return err != nil || st == "FROZEN"
	})
	return true
}

func (s v1Signaller) thaw() error { return writeCgroupFile(s.freezer, "freezer.state", "THAWED") }

func (s v1Signaller) procs() ([]int, error) {
	var all []int
	for _, d := range s.dirs {
		pids, err := groupProcs(d)
		if err != nil {
			return nil, err
		}
		for _, p := range pids {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	return all, nil
}

func (s v1Signaller) kill(pids []int) error { return signalListed(pids, s.procs) }

// v2Signaller is killLoop's view of a v2 group on a kernel without
// cgroup.kill (before 5.14); cgroup.freeze exists from 5.2.
type v2Signaller struct{ dir string }

func (s v2Signaller) freeze(ctx context.Context) bool {
	if writeCgroupFile(s.dir, "cgroup.freeze", "1") != nil {
		return false
	}
	waitFor(ctx, func() bool {
		ev, err := readCgroupFile(s.dir, "cgroup.events")
		return err != nil || eventValue(ev, "frozen") == "1"
	})
	return true
}

func (s v2Signaller) thaw() error           { return writeCgroupFile(s.dir, "cgroup.freeze", "0") }
func (s v2Signaller) procs() ([]int, error) { return groupProcs(s.dir) }
func (s v2Signaller) kill(pids []int) error { return signalListed(pids, s.procs) }

// waitFor polls done until it is true, for at most freezeWait or ctx.
func waitFor(ctx context.Context, done func() bool) {
	ctx, cancel := context.WithTimeout(ctx, freezeWait)
	defer cancel()
	for round := 0; !done(); round++ {
		if killPause(ctx, round) != nil {
			return
		}
	}
}

// signalListed sends SIGKILL to those of pids still listed by list. Each
// pid is pinned with a pidfd first and the group listed again, so that a
// pid that exited and was reused by a process outside the group after the
// first listing is not signalled. Batches bound the descriptors held.
func signalListed(pids []int, list func() ([]int, error)) error {
	const batch = 256
	for len(pids) > 0 {
		n := min(len(pids), batch)
		if err := signalBatch(pids[:n], list); err != nil {
			return err
		}
		pids = pids[n:]
	}
	return nil
}

func signalBatch(pids []int, list func() ([]int, error)) error {
	fds := make(map[int]int, len(pids))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, p := range pids {
		fd, err := unix.PidfdOpen(p, 0)
		switch {
		case err == nil:
			fds[p] = fd
		case err == unix.ESRCH:
		case err == unix.ENOSYS:
			// Linux < 5.3: plain kill(2), with the pid-reuse race above.
			for _, p := range pids {
				if err := unix.Kill(p, unix.SIGKILL); err != nil && err != unix.ESRCH {
					return fmt.Errorf("cgroup: kill %d: %w", p, err)
				}
			}
			return nil
		default:
			return fmt.Errorf("cgroup: kill: pidfd_open %d: %w", p, err)
		}
	}
	now, err := list()
	if err != nil {
		return err
	}
	for _, p := range now {
		fd, ok := fds[p]
		if !ok {
			continue // new since the first listing: next round
		}
		if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && err != unix.ESRCH {
			return fmt.Errorf("cgroup: kill %d: %w", p, err)
		}
	}
	return nil
}

// Freeze stops every process in the group until the returned thaw is
// called: the v2 group's cgroup.freeze, else the v1 freezer. It fails,
// leaving the group thawed, when there is no freezer or the group does
// not report every task frozen within freezeWait. Freezes nest: the
// group thaws at the last one's thaw (each thaw acts once).
func (c *Cgroup) Freeze(ctx context.Context) (thaw func(), err error) {
	c.freezeMu.Lock()
	defer c.freezeMu.Unlock()
	var g groupSignaller
	var frozen func() bool
	switch {
	case c.v2 != "":
		g = v2Signaller{dir: c.v2}
		frozen = func() bool {
			ev, err := readCgroupFile(c.v2, "cgroup.events")
			return err == nil && eventValue(ev, "frozen") == "1"
		}
	case c.freezer != "":
		g = v1Signaller{freezer: c.freezer}
		frozen = func() bool {
			st, err := readCgroupFile(c.freezer, "freezer.state")
			return err == nil && st == "FROZEN"
		}
	default:
		return nil, errors.New("cgroup: the group has no freezer (no v2 group, no v1 freezer hierarchy)")
	}
	if c.freezes == 0 {
		if !g.freeze(ctx) || !frozen() {
			g.thaw()
			return nil, fmt.Errorf("cgroup: the group did not freeze within %v", freezeWait)
		}
	}
	c.freezes++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.freezeMu.Lock()
			defer c.freezeMu.Unlock()
			if c.freezes--; c.freezes == 0 {
				g.thaw()
			}
		})
	}, nil
}

// FreezesKillably reports whether Freeze uses cgroup v2's freezer, whose
// frozen tasks still die of SIGKILL; v1's die only once thawed, so a
// launcher killed while its agent is frozen there would leave it frozen
// for good.
func (c *Cgroup) FreezesKillably() bool { return c != nil && c.v2 != "" }
