package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// tunSpy is an upstream that keeps every byte each connection sent it,
// and answers nothing (unless greet is set: it says that first).
type tunSpy struct {
	addr  netip.AddrPort
	mu    sync.Mutex
	got   [][]byte
	ended chan struct{} // one per connection, when its client side ended
}

func tunSpyStart(t *testing.T, greet string) *tunSpy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &tunSpy{addr: netip.MustParseAddrPort(ln.Addr().String()), ended: make(chan struct{}, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if greet != "" {
					io.WriteString(c, greet)
				}
				b, _ := io.ReadAll(c)
				s.mu.Lock()
				s.got = append(s.got, b)
				s.mu.Unlock()
				s.ended <- struct{}{}
			}()
		}
	}()
	return s
}

// received waits for a connection to end and answers what it got.
func (s *tunSpy) received(t *testing.T) []byte {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream connection did not end")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[len(s.got)-1]
}

// tunConnect opens a tunnel to target through h and checks the 200.
func tunConnect(t *testing.T, h *pxHarness, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := h.conn(t)
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	return c, br
}

// tunClosed asserts the proxy closed the tunnel (not merely kept quiet).
func tunClosed(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the tunnel is still open (read %q)", b)
	}
	if len(b) > 0 {
		t.Errorf("the refused tunnel answered %q", b)
	}
}

// tunRefusalLogged asserts the refusal went to the log as a refused
// CONNECT with its rule, reason and target.
func tunRefusalLogged(t *testing.T, h *pxHarness, target, rule, reason string) {
	t.Helper()
	pxWaitUntil(t, func() bool { return strings.Contains(h.logs.String(), "rule="+rule) }, 5*time.Second)
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "msg=refused") && strings.Contains(line, "rule="+rule) {
			for _, want := range []string{"method=CONNECT", "target=" + target, "reason=" + reason, "client=127.0.0.1:"} {
				if !strings.Contains(line, want) {
					t.Errorf("the refusal's log line %q lacks %q", line, want)
				}
			}
			return
		}
	}
	t.Errorf("no refusal with rule %s in the log:\n%s", rule, h.logs.String())
}

// Domain fronting: a tunnel to front.test whose ClientHello names
// evil.test is closed, and the upstream never sees the hello; the same
// hello naming front.test goes through (the control).
func TestTunnelSNIMismatchRefused(t *testing.T) {
	spy := tunSpyStart(t, "")
	res := &pxResolver{names: map[string][]netip.Addr{"front.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	target := "front.test:" + pxPort(spy.addr)

	c, br := tunConnect(t, h, target)
	c.Write(thGoHello(t, "evil.test"))
	tunClosed(t, c, br)
	if got := spy.received(t); len(got) != 0 {
		t.Errorf("the upstream received %d bytes of a refused tunnel", len(got))
	}
	tunRefusalLogged(t, h, target, RuleTunnelSNI, ReasonSNIMismatch)

	c, _ = tunConnect(t, h, target)
	hello := thGoHello(t, "front.test")
	c.Write(hello)
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); !bytes.Equal(got, hello) {
		t.Errorf("the upstream received %d bytes, want the hello's %d", len(got), len(hello))
	}
}

// tunTLSServer is a TLS server on loopback with httptest's certificate
// (example.com and 127.0.0.1) answering "ok".
func tunTLSServer(t *testing.T) (netip.AddrPort, *x509.CertPool) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return netip.MustParseAddrPort(srv.Listener.Addr().String()), roots
}

// tunGET runs a TLS handshake over c (named serverName) and one GET.
func tunGET(c net.Conn, serverName string, roots *x509.CertPool) (string, error) {
	a := tls.Client(c, &tls.Config{ServerName: serverName, RootCAs: roots})
	defer a.Close()
	if err := a.Handshake(); err != nil {
		return "", err
	}
	io.WriteString(a, "GET / HTTP/1.1\r\nHost: "+serverName+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A hello naming the CONNECT host passes and the handshake completes; a
// tunnel to an IP literal takes a hello without server_name (what
// crypto/tls sends for an address), and refuses one with a name.
func TestTunnelSNIMatchAndIPLiteral(t *testing.T) {
	up, roots := tunTLSServer(t)
	res := &pxResolver{names: map[string][]netip.Addr{"example.com": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)

	c, br := tunConnect(t, h, "example.com:"+pxPort(up))
	if body, err := tunGET(&bufferedConn{Conn: c, r: br}, "example.com", roots); err != nil || body != "ok" {
		t.Errorf("a tunnel whose hello names its host: %q %v", body, err)
	}

	ipTarget := "127.0.0.1:" + pxPort(up)
	c, br = tunConnect(t, h, ipTarget)
	if body, err := tunGET(&bufferedConn{Conn: c, r: br}, "127.0.0.1", roots); err != nil || body != "ok" {
		t.Errorf("a tunnel to an address, no server_name: %q %v", body, err)
	}
	c, br = tunConnect(t, h, ipTarget)
	if _, err := tunGET(&bufferedConn{Conn: c, r: br}, "example.com", roots); err == nil {
		t.Error("a tunnel to an address whose hello names a host completed its handshake")
	}
	tunRefusalLogged(t, h, ipTarget, RuleTunnelSNI, ReasonSNIMismatch)
}

// encrypted_client_hello hides the name the front-end routes by.
func TestTunnelECHRefused(t *testing.T) {
	spy := tunSpyStart(t, "")
	res := &pxResolver{names: map[string][]netip.Addr{"front.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	target := "front.test:" + pxPort(spy.addr)
	c, br := tunConnect(t, h, target)
	c.Write(thRecords(thHello([]thExt{thSNI("front.test"), {extECH, []byte{0, 1, 2}}})))
	tunClosed(t, c, br)
	if got := spy.received(t); len(got) != 0 {
		t.Errorf("the upstream received %d bytes", len(got))
	}
	tunRefusalLogged(t, h, target, RuleTunnelSNI, ReasonBadClientHello)
	if !strings.Contains(h.logs.String(), "network.allow_ech") {
		t.Errorf("the refusal does not name the switch:\n%s", h.logs.String())
	}
}

// With network.allow_ech a Chromium hello (its GREASE
// encrypted_client_hello) goes through byte for byte; one whose outer
// server_name names another host is still closed.
func TestTunnelECHAllowed(t *testing.T) {
	chromium, err := os.ReadFile("testdata/chromium-hello.bin") // to host "vm"
	if err != nil {
		t.Fatal(err)
	}
	spy := tunSpyStart(t, "")
	res := &pxResolver{names: map[string][]netip.Addr{"vm": {pxLoopback}, "front.test": {pxLoopback}}}
	h := pxStart(t, nil, res, func(p *Proxy) { p.AllowECH = true })

	c, _ := tunConnect(t, h, "vm:"+pxPort(spy.addr))
	c.Write(chromium)
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); !bytes.Equal(got, chromium) {
		t.Errorf("the upstream received %d bytes, want the hello's %d", len(got), len(chromium))
	}

	target := "front.test:" + pxPort(spy.addr)
	c, br := tunConnect(t, h, target)
	c.Write(chromium)
	tunClosed(t, c, br)
	if got := spy.received(t); len(got) != 0 {
		t.Errorf("the upstream received %d bytes", len(got))
	}
	tunRefusalLogged(t, h, target, RuleTunnelSNI, ReasonSNIMismatch)
}

// A warning alert before the ClientHello (crypto/tls's server drops it
// and routes by the hello behind it) closes the tunnel, whatever the
// hello names.
func TestTunnelRecordBeforeHello(t *testing.T) {
	spy := tunSpyStart(t, "")
	res := &pxResolver{names: map[string][]netip.Addr{"front.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	target := "front.test:" + pxPort(spy.addr)
	for _, name := range []string{"evil.test", "front.test"} {
		c, br := tunConnect(t, h, target)
		c.Write(append([]byte{21, 3, 1, 0, 2, 1, 100}, thGoHello(t, name)...))
		tunClosed(t, c, br)
		if got := spy.received(t); len(got) != 0 {
			t.Errorf("%s: the upstream received %d bytes", name, len(got))
		}
	}
	tunRefusalLogged(t, h, target, RuleTunnelSNI, ReasonBadClientHello)
}

// Plain HTTP inside a tunnel (its Host unchecked) is refused; other
// bytes pass (the control).
func TestTunnelPlainHTTPRefused(t *testing.T) {
	spy := tunSpyStart(t, "")
	res := &pxResolver{names: map[string][]netip.Addr{"front.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	target := "front.test:" + pxPort(spy.addr)
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET\t/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"\x0bGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		"\x00GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
	} {
		c, br := tunConnect(t, h, target)
		c.Write([]byte(req))
		tunClosed(t, c, br)
		if got := spy.received(t); len(got) != 0 {
			t.Errorf("%q: the upstream received %q", req, got)
		}
	}
	tunRefusalLogged(t, h, target, RuleTunnelHTTP, ReasonHTTPInTunnel)

	// Control bytes first, the request in a later segment: Netty skips
	// the bytes and reads the request, which passed unread (a red-team
	// pass, 2026-12-03). The bytes go on alone (they decide nothing, and
	// a client-first protocol may wait on them); the request is refused.
	for _, lead := range []string{"\x00", "\x7f\x01", "\r\n\x00"} {
		c, br := tunConnect(t, h, target)
		c.Write([]byte(lead))
		time.Sleep(50 * time.Millisecond)
		c.Write([]byte("GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"))
		tunClosed(t, c, br)
		if got := spy.received(t); string(got) != lead {
			t.Errorf("%q, then a request: the upstream received %q, want the first bytes alone", lead, got)
		}
	}

	opaque := "\x00\x00\x00\x08\x04\xd2\x16\x2f GET /\r\n" // a binary message, no version on its first line
	c, _ := tunConnect(t, h, target)
	c.Write([]byte(opaque))
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); string(got) != opaque {
		t.Errorf("opaque bytes: the upstream received %q", got)
	}
}

// Control bytes alone, which decide nothing (Netty skips them before a
// request line), go on at once: a client-first protocol that sends such
// a message and waits (a SOCKS5 greeting) gets its answer, and what it
// sends then passes, the server having spoken. A client that sends them
// and closes its side has them delivered, and the close.
func TestTunnelControlBytesGoOn(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"socks.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	c, br := tunConnect(t, h, "socks.test:"+pxPort(echo))
	for _, msg := range []string{"\x05\x01\x00", "\x05\x01\x00\x03\x09evil.test\x01\xbb"} {
		io.WriteString(c, msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
			t.Fatalf("sent %q, the echo answered %q (%v)", msg, got, err)
		}
	}

	spy := tunSpyStart(t, "")
	c, _ = tunConnect(t, h, "socks.test:"+pxPort(spy.addr))
	io.WriteString(c, "\x00\x01")
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); string(got) != "\x00\x01" {
		t.Errorf("the upstream received %q", got)
	}
}

// A server that speaks first is heard before the client says anything,
// and the client's answer (a word and a space, as SMTP's) goes through.
func TestTunnelServerFirst(t *testing.T) {
	spy := tunSpyStart(t, "220 smtp.test ready\r\n")
	res := &pxResolver{names: map[string][]netip.Addr{"smtp.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	c, br := tunConnect(t, h, "smtp.test:"+pxPort(spy.addr))
	line, err := br.ReadString('\n')
	if err != nil || line != "220 smtp.test ready\r\n" {
		t.Fatalf("banner %q %v", line, err)
	}
	io.WriteString(c, "EHLO client.test\r\nQUIT\r\n")
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); string(got) != "EHLO client.test\r\nQUIT\r\n" {
		t.Errorf("the upstream received %q", got)
	}
}

// tunSplitConn sends its first write (crypto/tls's ClientHello record)
// as two records, in pieces of 7 bytes.
type tunSplitConn struct {
	net.Conn
	done bool
}

func (c *tunSplitConn) Write(b []byte) (int, error) {
	if c.done || len(b) < recordHeaderLen || b[0] != recordHandshake {
		return c.Conn.Write(b)
	}
	c.done = true
	n := int(b[3])<<8 | int(b[4])
	msg := b[recordHeaderLen : recordHeaderLen+n]
	split := thRecords(msg, len(msg)/3)
	split = append(split, b[recordHeaderLen+n:]...)
	for len(split) > 0 {
		k := min(7, len(split))
		if _, err := c.Conn.Write(split[:k]); err != nil {
			return 0, err
		}
		split = split[k:]
		time.Sleep(time.Millisecond)
	}
	return len(b), nil
}

// A ClientHello across two records and many TCP writes is read whole,
// decided, and passed on byte for byte: the handshake completes, and a
// spy upstream gets exactly what was sent.
func TestTunnelSplitClientHello(t *testing.T) {
	up, roots := tunTLSServer(t)
	res := &pxResolver{names: map[string][]netip.Addr{"example.com": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	c, br := tunConnect(t, h, "example.com:"+pxPort(up))
	if body, err := tunGET(&tunSplitConn{Conn: &bufferedConn{Conn: c, r: br}}, "example.com", roots); err != nil || body != "ok" {
		t.Errorf("a split hello: %q %v", body, err)
	}

	spy := tunSpyStart(t, "")
	c, _ = tunConnect(t, h, "example.com:"+pxPort(spy.addr))
	sent := append(thRecords(thHello([]thExt{thSNI("example.com")}), 9, 30), "and then more"...)
	for i := 0; i < len(sent); i += 5 {
		c.Write(sent[i:min(i+5, len(sent))])
		time.Sleep(time.Millisecond)
	}
	c.(*net.TCPConn).CloseWrite()
	if got := spy.received(t); !bytes.Equal(got, sent) {
		t.Errorf("the upstream received %q, want %q", got, sent)
	}
}
