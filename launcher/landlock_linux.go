package launcher

import (
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// applyLandlock builds the ruleset and enforces it on every thread. Every
// path is opened refusing symlinks in any component, so a link planted
// since stage 1 checked the policy (SR-02) is refused here rather than
// followed.
func applyLandlock(lp LandlockPlan) error {
	attr := ll.RulesetAttr{HandledAccessFS: lp.HandledFS, HandledAccessNet: lp.HandledNet, Scoped: lp.Scoped}
	rs, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("create ruleset (ABI %d): %w", lp.ABI, err)
	}
	defer unix.Close(rs)
	for _, r := range lp.Paths {
		fd, err := openRulePath(r)
		if err != nil {
			return err
		}
		err = ll.LandlockAddPathBeneathRule(rs, &ll.PathBeneathAttr{AllowedAccess: r.Access, ParentFd: fd}, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("add rule for %q: %w", r.Path, err)
		}
	}
	for _, r := range lp.Ports {
		if err := ll.LandlockAddNetPortRule(rs, &ll.NetPortAttr{AllowedAccess: r.Access, Port: uint64(r.Port)}, 0); err != nil {
			return fmt.Errorf("add rule for TCP port %d: %w", r.Port, err)
		}
	}
	if err := ll.AllThreadsLandlockRestrictSelf(rs, 0); err != nil {
		return fmt.Errorf("restrict self: %w", err)
	}
	return nil
}

func openRulePath(r PathRule) (int, error) {
	return openNoFollow(r.Path)
}

// Access rights the launcher grants, as Landlock bits.
const (
	accessRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	accessExec  = accessRead | ll.AccessFSExecute
	accessWrite = accessRead | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer
	// Rights Landlock accepts on a file (not a directory) rule.
	accessFileOnly = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSExecute | ll.AccessFSIoctlDev
)

// openNoFollow opens path as O_PATH, refusing symlinks (and magic links)
// in every component.
func openNoFollow(path string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	if err == unix.ELOOP {
		return -1, fmt.Errorf("%q passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02)", path)
	}
	if err != nil {
		return -1, fmt.Errorf("open %q: %w", path, err)
	}
	return fd, nil
}
