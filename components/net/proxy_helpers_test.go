package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinfold/pinfold/internal/syncbuf"
)

// pxLoopback is the only address the proxy tests ever dial.
var pxLoopback = netip.MustParseAddr("127.0.0.1")

// pxDecider allows everything except the names in hosts and the
// addresses in addrs, which it refuses with the rule given. It records
// what it was asked.
type pxDecider struct {
	hosts map[string]string     // name → rule
	addrs map[netip.Addr]string // address → rule

	mu        sync.Mutex
	hostCalls []string
	addrCalls []netip.Addr
}

func (d *pxDecider) DecideHost(h Host, port uint16) Verdict {
	d.mu.Lock()
	d.hostCalls = append(d.hostCalls, JoinHostPort(h, port))
	d.mu.Unlock()
	if rule, ok := d.hosts[h.String()]; ok {
		return Verdict{Rule: rule, Detail: "the test refuses " + h.String()}
	}
	return Verdict{Allowed: true, Rule: "test.allow-host"}
}

func (d *pxDecider) DecideAddr(h Host, a netip.Addr, port uint16) Verdict {
	d.mu.Lock()
	d.addrCalls = append(d.addrCalls, a)
	d.mu.Unlock()
	if rule, ok := d.addrs[a]; ok {
		return Verdict{Rule: rule, Detail: "the test refuses " + a.String()}
	}
	// 127.0.0.1 stands in for a public address in these tests.
	return Verdict{Allowed: true, Rule: "test.public"}
}

// pxResolver answers the n-th lookup with answers[n] (the last one
// again beyond), or with names[host] when answers is empty. It counts.
type pxResolver struct {
	answers [][]netip.Addr
	names   map[string][]netip.Addr

	mu    sync.Mutex
	calls []string
}

func (r *pxResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.calls)
	r.calls = append(r.calls, host)
	if len(r.answers) > 0 {
		return append([]netip.Addr(nil), r.answers[min(n, len(r.answers)-1)]...), nil
	}
	if as, ok := r.names[host]; ok {
		return append([]netip.Addr(nil), as...), nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *pxResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// pxDialer is the proxy's dialer in tests: it records every address and
// refuses (and fails the test on) anything but loopback.
type pxDialer struct {
	t     testing.TB
	mu    sync.Mutex
	dials []netip.AddrPort
}

func (d *pxDialer) dial(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	d.mu.Lock()
	d.dials = append(d.dials, ap)
	d.mu.Unlock()
	if !ap.Addr().IsLoopback() {
		d.t.Errorf("the proxy dialled %s: tests dial loopback only", ap)
		return nil, errors.New("test: not loopback")
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, ap.String())
}

func (d *pxDialer) got() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]netip.AddrPort(nil), d.dials...)
}

// pxHarness is a proxy serving on loopback with fakes around it.
type pxHarness struct {
	p    *Proxy
	addr string
	dec  *pxDecider
	res  *pxResolver
	dial *pxDialer
	logs *syncbuf.Buffer
}

// pxStart serves a proxy on 127.0.0.1; tweak may set limits before it
// starts. Cleanup shuts it down and checks Serve returned nil.
func pxStart(t testing.TB, dec *pxDecider, res *pxResolver, tweak func(*Proxy)) *pxHarness {
	t.Helper()
	if dec == nil {
		dec = &pxDecider{}
	}
	if res == nil {
		res = &pxResolver{}
	}
	h := &pxHarness{dec: dec, res: res, dial: &pxDialer{t: t}, logs: &syncbuf.Buffer{}}
	h.p = &Proxy{
		Decider:  dec,
		Resolver: res,
		Dial:     h.dial.dial,
		Parse:    SplitHostPort,
		Log:      slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(h.p)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	served := make(chan error, 1)
	go func() { served <- h.p.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.p.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Serve did not return after Shutdown")
		}
	})
	return h
}

// conn opens a raw client connection to the proxy, closed at cleanup.
func (h *pxHarness) conn(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", h.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes raw request bytes on a new connection and reads one
// response (for method, to frame its body).
func (h *pxHarness) roundTrip(t testing.TB, method, raw string) (*http.Response, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c := h.conn(t)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the response to %q: %v", pxFirstLine(raw), err)
	}
	var body string
	if method != http.MethodConnect || resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the body: %v", err)
		}
		body = string(b)
	}
	return resp, body, c, br
}

func pxFirstLine(s string) string {
	if i := strings.Index(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// pxServe serves on 127.0.0.1 until the test ends: each connection to
// handle, with a deadline of within, then closed. The test's end waits
// for every handler.
func pxServe(t testing.TB, within time.Duration, handle func(net.Conn)) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(within))
				handle(c)
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// pxEcho serves on 127.0.0.1: it echoes every byte, and half-closes
// when the client has.
func pxEcho(t testing.TB) netip.AddrPort {
	t.Helper()
	return pxServe(t, 30*time.Second, func(c net.Conn) {
		// Not io.Copy(c, c): splice would cache pipes that only a GC
		// closes, blurring the storm's descriptor count.
		io.Copy(struct{ io.Writer }{c}, struct{ io.Reader }{c})
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
}

// pxRefused checks a refusal's status and headers.
func pxRefused(t testing.TB, resp *http.Response, status int, reason, rule string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	if got := resp.Header.Get("X-Pinfold-Reason"); got != reason {
		t.Errorf("X-Pinfold-Reason %q, want %q", got, reason)
	}
	if rule != "" {
		if got := resp.Header.Get("X-Pinfold-Rule"); got != rule {
			t.Errorf("X-Pinfold-Rule %q, want %q", got, rule)
		}
	}
}

func pxPort(ap netip.AddrPort) string { return fmt.Sprint(ap.Port()) }
