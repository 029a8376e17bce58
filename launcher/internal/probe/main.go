// Command probe is the one-action probe program that the launcher's
// integration tests confine and run as a control; the probe itself, its
// actions and its output protocol are in package
// github.com/pinfold/pinfold/launcher/probe.
//
//	probe ACTION [ARGS...]
//
// The tests build it with CGO_ENABLED=0 so that it needs no loader or
// libraries.
//
// The go:debug lines keep the Go runtime (1.25+) from opening the
// cgroup's cpu.cfs_quota_us and cpu.cfs_period_us at start-up and
// holding them: they would land on the lowest free descriptors, 3 and 4,
// and `fd 3` would find the runtime's own file instead of an inherited
// one.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/launcher/probe"
)

// The probe program's argv is exe ACTION [ARGS...], so the prefix that
// runs it again is empty. One more action is the tests' own, not an
// agent's: mount-overlay-plus.
func main() {
	if len(os.Args) == 6 && os.Args[1] == "mount-overlay-plus" {
		if err := overlayPlus(strings.Split(os.Args[2], ":"), os.Args[3], os.Args[4], os.Args[5]); err != nil {
			fmt.Fprintln(os.Stderr, "probe: mount-overlay-plus:", err)
			os.Exit(1)
		}
		return
	}
	probe.Main(nil, os.Args[1:])
}

// overlayPlus mounts an overlay at target with the new mount API, each
// lower layer a lowerdir+ option of its own, as mountinfo then shows it.
func overlayPlus(lowers []string, upper, work, target string) error {
	fd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fd)
	for _, l := range lowers {
		if err := unix.FsconfigSetString(fd, "lowerdir+", l); err != nil {
			return fmt.Errorf("lowerdir+ %s: %w", l, err)
		}
	}
	if err := unix.FsconfigSetString(fd, "upperdir", upper); err != nil {
		return fmt.Errorf("upperdir: %w", err)
	}
	if err := unix.FsconfigSetString(fd, "workdir", work); err != nil {
		return fmt.Errorf("workdir: %w", err)
	}
	if err := unix.FsconfigCreate(fd); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	mfd, err := unix.Fsmount(fd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("fsmount: %w", err)
	}
	defer unix.Close(mfd)
	return unix.MoveMount(mfd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH)
}
