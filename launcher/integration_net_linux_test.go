package launcher

// Integration tests, network: every listener is the test's own, on
// 127.0.0.1, [::1] or the abstract Unix namespace, and every one is
// closed when the test ends.

import (
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// itListener is a test-owned TCP or Unix listener that counts the
// connections it accepted.
type itListener struct {
	ln       net.Listener
	accepted atomic.Int32
}

func listen(t *testing.T, network, addr string) *itListener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		if network == "tcp6" {
			requireFeature(t, "IPv6 loopback", false, err.Error())
		}
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	l := &itListener{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	return l
}

func (l *itListener) addr() string { return l.ln.Addr().String() }

func (l *itListener) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// noneReached fails the test if l has accepted any connection. It gives
// the accept loop a moment to catch up with a connection the kernel
// completed just before the probe exited.
func (l *itListener) noneReached(t *testing.T) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if n := l.accepted.Load(); n != 0 {
		t.Fatalf("the listener on %s accepted %d connection(s) from the confined probe", l.addr(), n)
	}
}

// Network "none": the agent has its own empty network namespace, so a
// loopback listener on the host is not there (its loopback is its own).
func TestIntegrationTCPNetworkNone(t *testing.T) {
	s := newSandbox(t)
	for _, fam := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(fam.network, func(t *testing.T) {
			l := listen(t, fam.network, fam.addr)
			r := s.launch(t, itPol{}, itOpts{}, "tcp-connect", l.addr())
			itExpect(t, "confined tcp-connect", r, "denied ECONNREFUSED", 1)
			l.noneReached(t)
			s.control(t, itOpts{}, "tcp-connect", l.addr())
		})
	}
}

// Network "ports": the host's network with Landlock TCP rules. A listed
// port connects; any other is refused by Landlock (EACCES), and so is
// binding a port bind_tcp does not list.
func TestIntegrationTCPPortsMode(t *testing.T) {
	s := newSandbox(t)
	for _, fam := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(fam.network, func(t *testing.T) {
			listed, other := listen(t, fam.network, fam.addr), listen(t, fam.network, fam.addr)
			p := itPol{network: "ports", connectTCP: []int{listed.port()}}
			s.allowed(t, p, itOpts{}, "tcp-connect", listed.addr())
			r := s.launch(t, p, itOpts{}, "tcp-connect", other.addr())
			itExpect(t, "confined tcp-connect to an unlisted port", r, "denied EACCES", 1)
			other.noneReached(t)
			s.control(t, itOpts{}, "tcp-connect", other.addr())
			// bind_tcp lists nothing, so no port can be bound.
			free := freePort(t, fam.network, fam.addr)
			s.denied(t, p, itOpts{}, "EACCES", "tcp-bind", free)
			// Nor can listen() without bind() pick one (seccomp: Landlock
			// has no hook on that implicit bind).
			s.denied(t, p, itOpts{}, "EPERM", "tcp-listen", fam.network)
		})
	}
}

// freePort returns an address on a port that was free a moment ago.
func freePort(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// UDP under network "none": the datagram goes to the sandbox's own
// loopback, where nothing listens (ECONNREFUSED from the ICMP error), and
// never reaches the host's echo server.
func TestIntegrationUDPNetworkNone(t *testing.T) {
	s := newSandbox(t)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	var received atomic.Int32
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			received.Add(1)
			pc.WriteTo(buf[:n], from)
		}
	}()
	r := s.launch(t, itPol{}, itOpts{}, "udp-send", pc.LocalAddr().String())
	itExpect(t, "confined udp-send", r, "denied ECONNREFUSED", 1)
	if n := received.Load(); n != 0 {
		t.Fatalf("the host's UDP echo server received %d datagram(s) from the confined probe", n)
	}
	s.control(t, itOpts{}, "udp-send", pc.LocalAddr().String())
}

// MPTCP is refused in both modes; it matters most in ports mode, where
// Landlock's TCP rules would not see it.
func TestIntegrationMPTCPDenied(t *testing.T) {
	s := newSandbox(t)
	if r := s.direct(t, itOpts{}, "mptcp-socket"); r.stdout != "ok\n" {
		requireFeature(t, "MPTCP (net.mptcp.enabled=1)", false, r.stdout)
	}
	for _, mode := range []string{"none", "ports"} {
		t.Run(mode, func(t *testing.T) {
			s.denied(t, modePol(mode), itOpts{}, "EPROTONOSUPPORT", "mptcp-socket")
		})
	}
}

// modePol is a policy in network mode "none" or "ports"; ports mode
// lists 443, which no test listens on, because it must list something.
func modePol(mode string) itPol {
	if mode == "ports" {
		return itPol{network: mode, connectTCP: []int{443}}
	}
	return itPol{network: mode}
}

// uniqueName is a name no other test run uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%016x", prefix, rand.Uint64())
}

// Without network.unix_sockets the agent cannot make an AF_UNIX socket at
// all (seccomp, EPERM): not to a pathname listener, not to an abstract
// one, not a datagram pair. A stream socketpair stays allowed.
func TestIntegrationUnixSocketsDenied(t *testing.T) {
	s := newSandbox(t)
	p := itPol{read: []string{s.dir}}
	s.allowed(t, p, itOpts{}, "socketpair", "stream")
	for _, c := range []struct{ name, action string }{
		{"unix-socket", "unix-socket"},
		{"pathname", "unix-connect"},
		{"abstract", "abstract-connect"},
		{"dgram socketpair", "socketpair"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Fresh listeners: a control's connection must not be
			// counted against the next confined run.
			path := filepath.Join(s.dir, uniqueName("l")+".sock")
			pathL := listen(t, "unix", path)
			abstract := uniqueName("pinfold-it")
			abstractL := listen(t, "unix", "@"+abstract)
			args := map[string][]string{
				"unix-socket":      {"unix-socket"},
				"unix-connect":     {"unix-connect", path},
				"abstract-connect": {"abstract-connect", abstract},
				"socketpair":       {"socketpair", "dgram"},
			}[c.action]
			r := s.launch(t, p, itOpts{}, args...)
			itExpect(t, fmt.Sprintf("confined %v", args), r, "denied EPERM", 1)
			pathL.noneReached(t)
			abstractL.noneReached(t)
			s.control(t, itOpts{}, args...)
		})
	}
}

// With network.unix_sockets, abstract sockets still do not reach the
// host: under "none" they live in the sandbox's network namespace
// (ECONNREFUSED), under "ports" Landlock's abstract-socket scope refuses
// them (EPERM, ABI 6).
func TestIntegrationAbstractSocketScoped(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct{ mode, errno string }{{"none", "ECONNREFUSED"}, {"ports", "EPERM"}} {
		t.Run(c.mode, func(t *testing.T) {
			if c.mode == "ports" {
				abi := ProbeForLaunch().Landlock.ABI
				requireFeature(t, "Landlock ABI >= 6 (scopes)", abi >= floorScopes, fmt.Sprintf("ABI %d", abi))
			}
			name := uniqueName("pinfold-it")
			l := listen(t, "unix", "@"+name)
			p := modePol(c.mode)
			p.unixSockets = true
			r := s.launch(t, p, itOpts{}, "abstract-connect", name)
			itExpect(t, "confined abstract-connect", r, "denied "+c.errno, 1)
			l.noneReached(t)
			s.control(t, itOpts{}, "abstract-connect", name)
		})
	}
}
