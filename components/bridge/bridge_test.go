package bridge_test

import (
	"bytes"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/bridge"
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

// The listener lives in the agent's namespace alone, on its loopback
// (which ListenIn sets up): from inside, a connection reaches whoever
// accepts on it; from the launcher's namespace the same address is not
// there.
func TestListenIn(t *testing.T) {
	ns := newNetns(t)
	ln, err := bridge.ListenIn(ns, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c)
		c.Close()
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
		t.Errorf("echo: %d bytes back of %d, %v", len(got), len(msg), err)
	}
	if c, err := net.DialTimeout("tcp4", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s answers in the launcher's namespace too", addr)
	}
}

// In a namespace whose loopback is down (a new one), ListenIn sets it
// up. The control: a listener made there by hand cannot be reached.
func TestListenInSetsLoopbackUp(t *testing.T) {
	newNetns(t) // skips without root
	bare := func() netns.NsHandle {
		ns, err := nstest.NewBare()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		return ns
	}
	ctl := bare()
	var l net.Listener
	if err := nstest.In(ctl, func() (err error) { l, err = net.Listen("tcp4", "127.0.0.1:0"); return err }); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if c, err := dialIn(t, ctl, l.Addr().String()); err == nil {
		c.Close()
		t.Fatal("control: reached a listener with loopback down")
	}
	ns := bare()
	ln, err := bridge.ListenIn(ns, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ListenIn: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := dialIn(t, ns, ln.Addr().String())
	if err != nil {
		t.Fatalf("ListenIn's listener unreachable: %v", err)
	}
	c.Close()
}

// Only loopback addresses: the bridge never listens where others reach.
func TestListenInLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:80", "[::1]:0", "localhost:0"} {
		if ln, err := bridge.ListenIn(netns.None(), addr); err == nil {
			ln.Close()
			t.Errorf("bridge.ListenIn(%q) listened", addr)
		}
	}
}
