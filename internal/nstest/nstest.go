// Package nstest makes network namespaces for tests and benchmarks: the
// agent's namespace as stage 2 leaves it (loopback up, nothing else), and
// a way to run code inside one. It needs root.
package nstest

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"

	"github.com/pinfold/pinfold/components/bridge"
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
		return bridge.LoopbackUp()
	})
	return ns, err
}

// NewBare makes a network namespace as the kernel makes it: loopback
// down.
func NewBare() (netns.NsHandle, error) {
	var ns netns.NsHandle
	err := In(netns.None(), func() error {
		var err error
		ns, err = netns.New()
		return err
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
