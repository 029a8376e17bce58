package pki

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTimeout bounds every wait in these tests: each connection has it as
// its deadline, and the harness gives up on the server after it.
const testTimeout = 10 * time.Second

// recorder collects RejectEvents from a config's hook. Handshakes run on
// other goroutines, hence the lock.
type recorder struct {
	mu     sync.Mutex
	events []RejectEvent
}

func (r *recorder) hook(ev RejectEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []RejectEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RejectEvent(nil), r.events...)
}

// outcome is what both ends of one connection saw.
type outcome struct {
	serverErr, clientErr     error
	serverState, clientState tls.ConnectionState
}

func (o outcome) ok() bool { return o.serverErr == nil && o.clientErr == nil }

// handshake connects a TLS client using cli to a TLS server using srv and
// waits for both. On success the server writes one byte and the client reads
// it: a TLS 1.3 client finishes its handshake before the server has checked
// the client's certificate, so a server-side refusal reaches the client only
// on that read.
func handshake(t *testing.T, srv, cli *tls.Config) outcome {
	t.Helper()
	return exchange(t, srv, func(c net.Conn) (tls.ConnectionState, error) {
		tc := tls.Client(c, cli)
		if err := tc.Handshake(); err != nil {
			return tc.ConnectionState(), err
		}
		var b [1]byte
		if _, err := io.ReadFull(tc, b[:]); err != nil {
			return tc.ConnectionState(), fmt.Errorf("read after handshake: %w", err)
		}
		return tc.ConnectionState(), nil
	})
}

// exchange runs a TLS server using srv on a Unix socket in a fresh temporary
// directory, runs client against it, and returns what both saw.
func exchange(t *testing.T, srv *tls.Config, client func(net.Conn) (tls.ConnectionState, error)) outcome {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen on %s (%d bytes; Unix socket paths are limited to 107): %v", path, len(path), err)
	}
	defer ln.Close()

	type result struct {
		state tls.ConnectionState
		err   error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: fmt.Errorf("accept: %w", err)}
			return
		}
		defer c.Close()
		if err := c.SetDeadline(time.Now().Add(testTimeout)); err != nil {
			done <- result{err: err}
			return
		}
		tc := tls.Server(c, srv)
		err = tc.Handshake()
		if err == nil {
			_, err = tc.Write([]byte{'k'})
		}
		done <- result{tc.ConnectionState(), err}
	}()

	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	if err := c.SetDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	cstate, cerr := client(c)
	c.Close()

	select {
	case s := <-done:
		return outcome{serverErr: s.err, clientErr: cerr, serverState: s.state, clientState: cstate}
	case <-time.After(testTimeout):
		t.Fatalf("server did not finish within %v", testTimeout)
		return outcome{}
	}
}

// rawClient is a client that follows none of this package's rules: it
// presents cert (if not nil) whatever the server asks for, and checks nothing
// about the server. A refusal it meets comes from the server alone.
func rawClient(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{
		MinVersion:         tls.VersionTLS13,
		MaxVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true,
	}
	if cert != nil {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// rawServer presents cert and accepts any client: a server that follows
// none of this package's rules, so a refusal it meets comes from the client.
func rawServer(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		MaxVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
	}
}

func newSession(t *testing.T, id string) *Session {
	t.Helper()
	s, err := NewSession(id, time.Now())
	if err != nil {
		t.Fatalf("NewSession(%q): %v", id, err)
	}
	return s
}

func issue(t *testing.T, s *Session, r Role) *Leaf {
	t.Helper()
	l, err := s.Issue(r)
	if err != nil {
		t.Fatalf("Issue(%s): %v", r, err)
	}
	return l
}

func certOf(l *Leaf) *tls.Certificate {
	c := l.tlsCertificate()
	return &c
}

func mustServer(t *testing.T, l *Leaf, hook func(RejectEvent)) *tls.Config {
	t.Helper()
	c, err := ServerConfig(l, hook)
	if err != nil {
		t.Fatalf("ServerConfig(%s): %v", l.Identity(), err)
	}
	return c
}

func mustClient(t *testing.T, l *Leaf, server Role, hook func(RejectEvent)) *tls.Config {
	t.Helper()
	c, err := ClientConfig(l, server, hook)
	if err != nil {
		t.Fatalf("ClientConfig(%s, %s): %v", l.Identity(), server, err)
	}
	return c
}

// leafTemplate is what Issue signs, with the names given instead of one
// identity, so tests can forge the variants Issue never makes.
func leafTemplate(t *testing.T, uris ...string) *x509.Certificate {
	t.Helper()
	serial, err := newSerial()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "forged"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	return tmpl
}

// signCert makes a fresh key and a certificate for it from tmpl, signed by
// parentKey as parent, or self-signed when parent is nil.
func signCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey ed25519.PrivateKey) (*x509.Certificate, ed25519.PrivateKey) {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func tlsCert(c *x509.Certificate, key ed25519.PrivateKey) *tls.Certificate {
	return &tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: key, Leaf: c}
}

// wantReject checks that err is a *RejectEvent with the given side, reason
// and claimed identity, and that its text names both.
func wantReject(t *testing.T, err error, side Side, reason Reason, claimed string) *RejectEvent {
	t.Helper()
	ev, ok := errors.AsType[*RejectEvent](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *RejectEvent", err, err)
	}
	if ev.Side != side || ev.Reason != reason || ev.Claimed != claimed {
		t.Fatalf("rejection = {side %s, reason %s, claimed %q}, want {%s, %s, %q}; error: %v",
			ev.Side, ev.Reason, ev.Claimed, side, reason, claimed, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, claimed) || !strings.Contains(msg, reason.String()) {
		t.Fatalf("error %q does not name the peer %q and the reason %s", msg, claimed, reason)
	}
	return ev
}

// wantOneEvent checks that the hook saw exactly the rejection err carries.
func wantOneEvent(t *testing.T, rec *recorder, err error) {
	t.Helper()
	evs := rec.all()
	if len(evs) != 1 {
		t.Fatalf("hook saw %d events, want 1: %+v", len(evs), evs)
	}
	ev, _ := errors.AsType[*RejectEvent](err)
	got := evs[0]
	if ev == nil || got.Side != ev.Side || got.Self != ev.Self || got.Claimed != ev.Claimed ||
		got.PeerRole != ev.PeerRole || got.Reason != ev.Reason || got.Error() != ev.Error() {
		t.Fatalf("hook saw %+v, handshake failed with %+v", got, ev)
	}
}

func wantOK(t *testing.T, what string, o outcome) {
	t.Helper()
	if !o.ok() {
		t.Fatalf("control %s: server error %v, client error %v", what, o.serverErr, o.clientErr)
	}
}
