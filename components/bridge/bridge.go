package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"

	"github.com/vishvananda/netns"
)

// ListenIn opens a TCP listener on addr (an address on 127.0.0.1) inside
// the network namespace ns. A socket belongs to the namespace of the
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

// Splice accepts connections on ln until it is closed (or ctx ends) and
// joins each to a fresh connection from dial, copying both ways until
// either side ends. It carries bytes only: the agent and the component
// still speak mutual TLS end to end through it. At most max connections
// are joined at once; more wait to be accepted.
func Splice(ctx context.Context, ln net.Listener, dial func(ctx context.Context) (net.Conn, error), max int, log *slog.Logger) error {
	if max < 1 {
		return fmt.Errorf("bridge: splice at most %d connections: want at least 1", max)
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := make(chan struct{}, max)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("bridge: accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			join(ctx, c, dial, log)
		}()
	}
}

func join(ctx context.Context, c net.Conn, dial func(ctx context.Context) (net.Conn, error), log *slog.Logger) {
	defer c.Close()
	up, err := dial(ctx)
	if err != nil {
		log.Warn("bridge: component unreachable", "error", err)
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { c.Close(); up.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() // pass the end on, keep reading the answer
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}
