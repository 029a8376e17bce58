package bridge

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/nstest"
)

// newNetns makes a network namespace with loopback up, as the agent's is.
func newNetns(t *testing.T) netns.NsHandle {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("requires root (to make a network namespace), found euid %d", os.Geteuid())
		}
		t.Skipf("requires root (to make a network namespace), found euid %d", os.Geteuid())
	}
	ns, err := nstest.NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// dialIn connects to addr from inside ns.
func dialIn(t *testing.T, ns netns.NsHandle, addr string) (c net.Conn, err error) {
	t.Helper()
	if nerr := nstest.In(ns, func() error {
		c, err = net.DialTimeout("tcp4", addr, 5*time.Second)
		return nil
	}); nerr != nil {
		t.Fatal(nerr)
	}
	return c, err
}

// unixEcho serves an echo on a Unix socket: what the component would be.
func unixEcho(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "echo.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return sock
}

// The listener lives in the agent's namespace alone: from inside, a
// connection reaches the component's Unix socket through the bridge and
// back; from the launcher's namespace the same address is not there.
func TestBridge(t *testing.T) {
	ns := newNetns(t)
	sock := unixEcho(t)
	ln, err := ListenIn(ns, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// Plain TCP, not Go's default MPTCP.
	raw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var proto int
	raw.Control(func(fd uintptr) { proto, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PROTOCOL) })
	if proto != unix.IPPROTO_TCP {
		t.Errorf("listener protocol %d, want TCP (%d)", proto, unix.IPPROTO_TCP)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Splice(ctx, ln, func(ctx context.Context) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}, 8, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	c, err := dialIn(t, ns, addr)
	if err != nil {
		t.Fatalf("from the agent's namespace: %v", err)
	}
	msg := bytes.Repeat([]byte("pinfold "), 1000)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || !bytes.Equal(got, msg) {
		t.Errorf("echo through the bridge: %d bytes back of %d, %v", len(got), len(msg), err)
	}
	if c, err := net.DialTimeout("tcp4", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s answers in the launcher's namespace too", addr)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Splice: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Splice did not stop with its context")
	}
}

// A Splice with no room for a connection is refused, not a hang.
func TestSpliceNeedsRoom(t *testing.T) {
	for _, max := range []int{0, -1} {
		if err := Splice(context.Background(), nil, nil, max, nil); err == nil {
			t.Errorf("Splice with max %d: no error", max)
		}
	}
}

// Only loopback addresses: the bridge never listens where others reach.
func TestListenInLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:80", "[::1]:0", "localhost:0"} {
		if ln, err := ListenIn(netns.None(), addr); err == nil {
			ln.Close()
			t.Errorf("ListenIn(%q) listened", addr)
		}
	}
}
