package probe

import "syscall"

// int80getpid is in int80_amd64.s.
func int80getpid() int64

// i386Syscall makes one i386 system call (getpid) from this x86-64
// process. Under the launcher's seccomp filter the process is killed
// (SIGSYS): only the native architecture is allowed.
func i386Syscall() error {
	r := int80getpid()
	if r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}
