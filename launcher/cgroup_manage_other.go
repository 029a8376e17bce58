//go:build !linux

package launcher

import (
	"context"
	"errors"
	"runtime"
)

// CreateCgroup fails: cgroups are a Linux mechanism.
func CreateCgroup(info CgroupInfo, spec CgroupSpec) (*Cgroup, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	return nil, unsupported("cgroup: not Linux (%s)", runtime.GOOS)
}

// KillStaleCgroups has nothing to do: there are no groups.
func KillStaleCgroups(ctx context.Context, kind string) error { return nil }

// CgroupFD reports no v2 group.
func (c *Cgroup) CgroupFD() (int, bool) { return -1, false }

// Add fails: there is no group.
func (c *Cgroup) Add(pid int) error { return errors.ErrUnsupported }

// Pids fails: there is no group.
func (c *Cgroup) Pids() ([]int, error) { return nil, errors.ErrUnsupported }

// Kill fails: there is no group.
func (c *Cgroup) Kill(ctx context.Context) error { return errors.ErrUnsupported }

// Remove has nothing to remove.
func (c *Cgroup) Remove() error { return nil }

// OOMKills has no group to read.
func (c *Cgroup) OOMKills() (int, error) { return 0, errors.ErrUnsupported }
