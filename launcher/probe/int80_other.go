//go:build !amd64

package probe

import "syscall"

// i386Syscall: there is no i386 gate to try on this architecture.
func i386Syscall() error { return syscall.ENOSYS }
