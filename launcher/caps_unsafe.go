package launcher

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// clearCapsAllThreads empties the effective, permitted and inheritable
// capability sets of every thread (capset(2) is per thread; psx runs it on
// all of them).
func clearCapsAllThreads() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if e != 0 {
		return syscall.Errno(e)
	}
	return nil
}
