package probe

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/pinfold/pinfold/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// withoutCgroups execs argv as it would run on a host with no cgroup file
// system mounted: in a mount namespace of its own, private so that
// nothing reaches the host's, every cgroup and cgroup2 mount is detached,
// deepest first. It needs root, and never returns.
func withoutCgroups(argv []string) {
	if len(argv) == 0 {
		broke(errors.New("without-cgroups needs a command"))
	}
	// The namespace is this thread's, and exec keeps the caller's.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		broke(fmt.Errorf("without-cgroups: unshare a mount namespace: %w", err))
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		broke(fmt.Errorf("without-cgroups: make mounts private: %w", err))
	}
	ms := mountinfo.Read()
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Type == "cgroup" || ms[i].Type == "cgroup2" {
			if err := unix.Unmount(ms[i].Point, unix.MNT_DETACH); err != nil {
				broke(fmt.Errorf("without-cgroups: detach %s: %w", ms[i].Point, err))
			}
		}
	}
	broke(unix.Exec(argv[0], argv, os.Environ()))
}
