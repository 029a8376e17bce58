package probe

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockAnswer answers as a kernel at each ABI does: the version, and
// EINVAL or E2BIG for a right, scope, rule type or flag the ABI lacks.
// The ruleset attribute is read from this process's own memory.
func TestLandlockAnswer(t *testing.T) {
	type attr struct{ fs, net, scoped uint64 }
	var keep []*attr // held until the end: the notifications hold bare addresses
	defer func() { runtime.KeepAlive(keep) }()
	create := func(a *attr, size uintptr) *seccompNotif {
		keep = append(keep, a)
		return &seccompNotif{Pid: uint32(os.Getpid()), Nr: 444, Args: [6]uint64{uint64(uintptr(unsafe.Pointer(a))), uint64(size)}}
	}
	const (
		truncate = 1 << 14
		ioctlDev = 1 << 15
	)
	for _, c := range []struct {
		name string
		abi  int
		n    *seccompNotif
		want unix.Errno
		val  int64
	}{
		{"version", 3, &seccompNotif{Nr: 444, Args: [6]uint64{0, 0, 1}}, 0, 3},
		{"errata before 7", 6, &seccompNotif{Nr: 444, Args: [6]uint64{0, 0, 2}}, unix.EINVAL, 0},
		{"errata at 7: the kernel's", 7, &seccompNotif{Nr: 444, Args: [6]uint64{0, 0, 2}}, 0, 0},
		{"ABI 1 rights at 1", 1, create(&attr{fs: 0x1fff}, 24), 0, 0},
		{"truncate at 2", 2, create(&attr{fs: truncate}, 24), unix.EINVAL, 0},
		{"truncate at 3", 3, create(&attr{fs: truncate}, 8), 0, 0},
		{"ioctl_dev at 4", 4, create(&attr{fs: ioctlDev}, 24), unix.EINVAL, 0},
		{"ioctl_dev at 5", 5, create(&attr{fs: ioctlDev}, 24), 0, 0},
		{"TCP at 3: larger struct", 3, create(&attr{fs: 1, net: 1}, 24), unix.E2BIG, 0},
		{"TCP at 4", 4, create(&attr{fs: 1, net: 3}, 24), 0, 0},
		{"unknown TCP right at 4", 4, create(&attr{fs: 1, net: 4}, 24), unix.EINVAL, 0},
		{"scopes at 5", 5, create(&attr{fs: 1, scoped: 1}, 24), unix.E2BIG, 0},
		{"scopes at 6", 6, create(&attr{fs: 1, scoped: 3}, 24), 0, 0},
		{"attribute too small", 7, create(&attr{fs: 1}, 4), unix.EINVAL, 0},
		{"port rule at 3", 3, &seccompNotif{Nr: 445, Args: [6]uint64{3, 2}}, unix.EINVAL, 0},
		{"port rule at 4", 4, &seccompNotif{Nr: 445, Args: [6]uint64{3, 2}}, 0, 0},
		{"log flag at 6", 6, &seccompNotif{Nr: 446, Args: [6]uint64{3, 1}}, unix.EINVAL, 0},
		{"log flag at 7", 7, &seccompNotif{Nr: 446, Args: [6]uint64{3, 1}}, 0, 0},
	} {
		var val int64
		if got := landlockAnswer(c.n, c.abi, &val); got != c.want || val != c.val {
			t.Errorf("%s: got errno %v value %d, want %v %d", c.name, got, val, c.want, c.val)
		}
	}
}
