//go:build !amd64

package probe

import "syscall"

// i386Syscall: there is no i386 gate to try on this architecture.
func i386Syscall() error { return errNoGate }

// x32Syscall: x32 is an x86-64 ABI.
func x32Syscall() error { return syscall.ENOSYS }

// readLDT: modify_ldt is an x86 call.
func readLDT() error { return syscall.ENOSYS }
