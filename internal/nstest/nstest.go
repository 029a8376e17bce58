// Package nstest makes network namespaces for tests and benchmarks: the
// agent's namespace as stage 2 leaves it (loopback up, nothing else), and
// a way to run code inside one. It needs root.
package nstest

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NewLoopback makes a network namespace with loopback up; the calling
// goroutine's thread stays in its own namespace. The caller closes the
// handle (the namespace goes when nothing holds it).
func NewLoopback() (netns.NsHandle, error) {
	var ns netns.NsHandle
	err := In(netns.None(), func() error {
		var err error
		if ns, err = netns.New(); err != nil {
			return err
		}
		return loopbackUp()
	})
	return ns, err
}

// In runs fn on a locked thread inside ns (or where the thread is, for
// netns.None()), and brings the thread back. A thread that cannot come
// back stays locked, so it dies with its goroutine.
func In(ns netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if ns.IsOpen() {
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			return err
		}
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("nstest: back to the original namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
