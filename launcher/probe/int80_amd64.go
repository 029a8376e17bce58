package probe

import (
	"runtime/debug"
	"syscall"
	"unsafe"
)

// int80getpid is in int80_amd64.s.
func int80getpid() int64

// i386Syscall makes one i386 system call (getpid) from this x86-64
// process. Under the launcher's seccomp filter the process is killed
// (SIGSYS): only the native architecture is allowed. Where the gate
// itself faults (IA32 emulation off, or a hypervisor that does not pass
// int $0x80 on) it says so: there is nothing to filter.
func i386Syscall() (err error) {
	defer func() {
		if recover() != nil {
			err = errNoGate
		}
	}()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	r := int80getpid()
	if r < 0 {
		return syscall.Errno(-r)
	}
	return nil
}

// x32Syscall makes one x32 system call (getpid with the x32 bit) through
// the native gate. Under the launcher's seccomp filter the process is
// killed (SIGSYS); outside it the kernel answers ENOSYS unless it was
// built with the x32 ABI.
func x32Syscall() error {
	const x32Bit = 0x40000000
	_, _, errno := syscall.RawSyscall(syscall.SYS_GETPID|x32Bit, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// readLDT reads this process's local descriptor table (modify_ldt, func
// 0), which any process may do where nothing refuses it.
func readLDT() error {
	var buf [8]byte
	_, _, e := syscall.Syscall(syscall.SYS_MODIFY_LDT, 0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return e
	}
	return nil
}
