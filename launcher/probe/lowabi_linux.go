package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The rights and flags each Landlock ABI added, as the kernel's uapi
// defines them: what a kernel at that ABI accepts and nothing more.
var (
	abiFS     = [...]uint64{0, 0x1fff, 0x3fff, 0x7fff, 0x7fff, 0xffff, 0xffff, 0xffff} // refer 2, truncate 3, ioctl_dev 5
	abiNet    = [...]uint64{0, 0, 0, 0, 0x3, 0x3, 0x3, 0x3}                            // TCP bind and connect, 4
	abiScoped = [...]uint64{0, 0, 0, 0, 0, 0, 0x3, 0x3}                                // signals and abstract sockets, 6
	abiAttr   = [...]int{0, 8, 8, 8, 16, 16, 24, 24}                                   // sizeof(struct landlock_ruleset_attr)
)

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif
// and struct seccomp_notif_resp (x/sys/unix has only the ioctl numbers).
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// withLandlockABI runs argv (args[1:]) as on a kernel whose Landlock is at
// ABI args[0] (1 to 7): a seccomp filter hands every Landlock system call of
// argv's tree to this process, which answers the version query with that
// ABI, the errata query as a kernel before ABI 7 does (EINVAL), and refuses
// a ruleset, rule or restrict_self flag that ABI does not have (EINVAL, or
// E2BIG for a ruleset attribute larger than the ABI's, not all zero) as
// such a kernel would; what it would accept runs on the real kernel. It
// exits with argv's status, never returns.
//
// The filter is on this process too, but it makes no Landlock call. The
// real kernel runs what passes after the check (SECCOMP_USER_NOTIF_FLAG_
// CONTINUE), so a program that rewrote its arguments in between would pass
// unchecked: this is a test double for the launcher, not a boundary.
func withLandlockABI(args []string) {
	if len(args) < 2 {
		broke(errors.New("landlock-abi needs an ABI and a command"))
	}
	abi, err := strconv.Atoi(args[0])
	if err != nil || abi < 1 || abi >= len(abiFS) {
		broke(fmt.Errorf("landlock-abi: ABI %q is not 1 to %d", args[0], len(abiFS)-1))
	}
	filter := landlockFilter("landlock-abi", unix.SECCOMP_RET_USER_NOTIF)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		broke(err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// Every thread, so that the child inherits it whichever thread forks.
	flags := unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		broke(fmt.Errorf("landlock-abi: seccomp listener: %w", e))
	}
	listener := int(fd) // close-on-exec: the child does not get it
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP)
	if err := cmd.Start(); err != nil {
		broke(err)
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	go answerLandlock(listener, abi)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		os.Exit(exit.ExitCode())
	case errors.As(err, &exit):
		os.Exit(128 + int(exit.Sys().(syscall.WaitStatus).Signal()))
	}
	broke(err)
}

// answerLandlock answers each Landlock call of the filtered tree until the
// listener fails (every filtered process gone).
func answerLandlock(listener, abi int) {
	for {
		var n seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // interrupted, or the caller died before it was read
			}
			return
		}
		r := seccompNotifResp{ID: n.ID}
		errno := landlockAnswer(&n, abi, &r.Val)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&n.ID))); e != 0 {
			continue // the caller is gone: what was read may be another's
		}
		switch errno {
		case 0:
			if r.Val == 0 {
				r.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
			}
		default:
			r.Error = -int32(errno)
		}
		unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
	}
}

// landlockAnswer is what a kernel at abi answers: an errno, or 0 with
// *val set for a query the double answers itself, or 0 and *val 0 to let
// the real kernel run the call.
func landlockAnswer(n *seccompNotif, abi int, val *int64) unix.Errno {
	const (
		version = 1 << 0 // LANDLOCK_CREATE_RULESET_VERSION
		errata  = 1 << 1 // LANDLOCK_CREATE_RULESET_ERRATA, ABI 7
		netPort = 2      // LANDLOCK_RULE_NET_PORT, ABI 4
	)
	switch n.Nr {
	case 444: // landlock_create_ruleset(attr, size, flags)
		attr, size, flags := n.Args[0], n.Args[1], n.Args[2]
		switch {
		case flags == version && attr == 0 && size == 0:
			*val = int64(abi)
			return 0
		case flags == errata && attr == 0 && size == 0 && abi >= 7:
			return 0
		case flags != 0:
			return unix.EINVAL
		case size < 8 || size > 4096:
			return unix.EINVAL
		}
		b := make([]byte, 24)
		if size < 24 {
			b = b[:size]
		}
		if err := readMem(n, attr, b); err != nil {
			return unix.EFAULT
		}
		b = append(b, make([]byte, 24-len(b))...)
		for i := abiAttr[abi]; i < 24; i++ {
			if b[i] != 0 {
				return unix.E2BIG // copy_struct_from_user: unknown trailing bytes
			}
		}
		fs, net, scoped := binary.NativeEndian.Uint64(b), binary.NativeEndian.Uint64(b[8:]), binary.NativeEndian.Uint64(b[16:])
		if fs&^abiFS[abi] != 0 || net&^abiNet[abi] != 0 || scoped&^abiScoped[abi] != 0 {
			return unix.EINVAL
		}
	case 445: // landlock_add_rule(fd, type, attr, flags)
		if n.Args[1] == netPort && abi < 4 {
			return unix.EINVAL
		}
	case 446: // landlock_restrict_self(fd, flags): log flags are ABI 7
		if n.Args[1] != 0 && abi < 7 {
			return unix.EINVAL
		}
	}
	return 0
}

// readMem reads the caller's memory at addr (answerLandlock checks that
// the caller still waits, so the pid was not reused meanwhile).
func readMem(n *seccompNotif, addr uint64, b []byte) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", n.Pid))
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.ReadAt(b, int64(addr)); err != nil {
		return err
	}
	return nil
}

// asUID execs argv[1:] as uid argv[0], gid the same, no supplementary
// groups. landlock-abi's listener reads the Landlock calls' arguments in
// /proc/PID/mem, which a listener of the person's uid may not do in an
// unprivileged launch's stage 2 (a user namespace, not dumpable): it
// stays root and this drops to the person's uid beneath it.
func asUID(argv []string) {
	if len(argv) < 2 {
		broke(errors.New("as-uid needs a uid and a command"))
	}
	uid, err := strconv.Atoi(argv[0])
	if err != nil || uid <= 0 {
		broke(fmt.Errorf("as-uid: uid %q", argv[0]))
	}
	for _, err := range []error{syscall.Setgroups(nil), syscall.Setresgid(uid, uid, uid), syscall.Setresuid(uid, uid, uid)} {
		if err != nil {
			broke(fmt.Errorf("as-uid %d: %w", uid, err))
		}
	}
	broke(unix.Exec(argv[1], argv[1:], os.Environ()))
}
