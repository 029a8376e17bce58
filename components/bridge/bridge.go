package bridge

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ListenIn opens a TCP listener on addr (an address on 127.0.0.1) inside
// the network namespace ns, setting its loopback up first. A socket belongs to the namespace of the
// thread that made it, so the listener is made on a locked OS thread that
// enters ns and comes back before it is unlocked; if it cannot come back,
// the thread is left locked and dies with its goroutine rather than serve
// anything else from the wrong namespace.
func ListenIn(ns netns.NsHandle, addr string) (ln net.Listener, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		return nil, fmt.Errorf("bridge: listen on %q: only 127.0.0.1 addresses", addr)
	}
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("bridge: this thread's namespace: %w", err)}
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("bridge: enter the agent's network namespace: %w", err)}
			return
		}
		if lerr := LoopbackUp(); lerr != nil {
			if err := netns.Set(orig); err != nil {
				done <- result{nil, fmt.Errorf("bridge: return from the agent's network namespace: %w", err)}
				return
			}
			runtime.UnlockOSThread()
			done <- result{nil, fmt.Errorf("loopback up: %w", lerr)}
			return
		}
		// Plain TCP: Go listens with MPTCP by default, which would put the
		// MPTCP receive path within the agent's reach.
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		l, lerr := lc.Listen(context.Background(), "tcp4", addr)
		if err := netns.Set(orig); err != nil {
			// Stuck in the agent's namespace: never unlock this thread.
			if l != nil {
				l.Close()
			}
			done <- result{nil, fmt.Errorf("bridge: return from the agent's network namespace: %w", err)}
			return
		}
		runtime.UnlockOSThread()
		done <- result{l, lerr}
	}()
	r := <-done
	if r.err != nil {
		return nil, fmt.Errorf("bridge: listen on %s in the agent's namespace: %w", addr, r.err)
	}
	return r.ln, nil
}

// LoopbackUp sets the calling thread's network namespace's loopback
// interface up (a new namespace has it down, and 127.0.0.1 cannot be
// bound until it is up).
func LoopbackUp() error {
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
