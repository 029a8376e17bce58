package probe

import (
	"errors"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// withoutLandlock execs argv as it would run on a kernel without Landlock:
// a seccomp filter answers ENOSYS to landlock_create_ruleset, add_rule and
// restrict_self (444-446 on every architecture), as the kernel does when
// it was built without Landlock. It never returns.
func withoutLandlock(argv []string) {
	if len(argv) == 0 {
		broke(errors.New("without-landlock needs a command"))
	}
	filter := landlockFilter("without-landlock", unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	runtime.LockOSThread()
	execFiltered(filter, argv)
}

// landlockFilter is a seccomp program that returns action for this
// architecture's Landlock calls (444-446 on every architecture) and
// allows everything else; what names the wrapper.
func landlockFilter(what string, action uint32) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret = unix.BPF_RET | unix.BPF_K
	)
	return []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, K: auditArch(what)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW}, // another ABI: not ours to answer
		{Code: ld, K: 0},                       // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jf: 2, K: 444},
		{Code: unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K, Jt: 1, K: 446},
		{Code: ret, K: action},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
}

// auditArch is this architecture's seccomp audit value, for a filter
// that answers only this ABI's calls (what names the wrapper).
func auditArch(what string) uint32 {
	arch, ok := map[string]uint32{"amd64": 0xc000003e, "arm64": 0xc00000b7}[runtime.GOARCH]
	if !ok {
		broke(errors.New(what + " knows no audit architecture for " + runtime.GOARCH))
	}
	return arch
}

// execFiltered installs filter on every thread (no_new_privs first, as an
// unprivileged filter needs) and execs argv under it. It never returns.
func execFiltered(filter []unix.SockFilter, argv []string) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		broke(err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		broke(e)
	}
	runtime.KeepAlive(filter)
	broke(unix.Exec(argv[0], argv, os.Environ()))
}
