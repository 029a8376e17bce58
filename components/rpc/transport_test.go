package rpc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/internal/syncbuf"
	"github.com/pinfold/pinfold/components/pki"
)

type fixture struct {
	sess *pki.Session
	sock string
	logs *syncbuf.Buffer
}

// serveFS serves an fs-role server with two operations on a Unix socket:
// "echo" (allowed; answers the caller's role and what it sent, plus a
// secret that must never reach a log) and "deny" (refused, yet returns a
// result that must not travel).
func serveFS(t *testing.T) *fixture { return serveFSPeers(t, nil) }

// serveFSPeers is serveFS with the server's peer uids limited to peers
// (nil: no limit).
func serveFSPeers(t *testing.T, peers []uint32) *fixture {
	t.Helper()
	sess, err := pki.NewSession("rpc-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := sess.Issue(pki.FS)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sess: sess, sock: filepath.Join(t.TempDir(), "fs.sock"), logs: &syncbuf.Buffer{}}
	srv := NewServer(leaf, slog.New(slog.NewTextHandler(f.logs, nil)))
	if peers != nil {
		srv.AllowPeers(peers...)
	}
	srv.Handle("echo", func(_ context.Context, caller pki.Role, body json.RawMessage) (Decision, any) {
		return Allow("echo-rule"), map[string]any{"caller": caller, "body": body, "secret": "s3cret-value"}
	})
	srv.Handle("deny", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		return Deny(ReasonNoRule, "deny-rule", "denied for the test"), map[string]string{"leak": "must-not-travel"}
	})
	srv.Handle("confused", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		return Decision{Allowed: true, Reason: ReasonNoRule}, map[string]string{"leak": "must-not-travel"}
	})
	ln, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return f
}

func (f *fixture) client(t *testing.T, role pki.Role) *Client {
	t.Helper()
	leaf, err := f.sess.Issue(role)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(leaf, pki.FS, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", f.sock)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// The handler learns who called from the certificate, the answer carries
// the decision and the result, and the log names caller, operation and
// decision but never what was answered.
func TestCallCarriesCallerAndDecision(t *testing.T) {
	f := serveFS(t)
	for _, role := range []pki.Role{pki.Agent, pki.Bash} {
		var got struct {
			Caller string          `json:"caller"`
			Body   json.RawMessage `json:"body"`
		}
		d, err := f.client(t, role).Call(ctx(t), "echo", map[string]int{"n": 1}, &got)
		if err != nil || !d.Allowed || d.Rule != "echo-rule" || got.Caller != string(role) || string(got.Body) != `{"n":1}` {
			t.Errorf("%s: %+v %+v %v", role, d, got, err)
		}
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "caller=agent op=echo allowed=true reason=allowed rule=echo-rule") {
		t.Errorf("log does not record the agent's call:\n%s", logs)
	}
	if strings.Contains(logs, "s3cret-value") {
		t.Errorf("a result reached the log:\n%s", logs)
	}
}

// A denial carries no result, whatever the handler returned; a decision
// that contradicts itself (allowed, with a denial's reason) is a denial.
func TestDenialCarriesNoResult(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	var got map[string]string
	d, err := c.Call(ctx(t), "deny", struct{}{}, &got)
	if err != nil || d.Allowed || d.Reason != ReasonNoRule || d.Rule != "deny-rule" || got != nil {
		t.Errorf("deny: %+v %v %v", d, got, err)
	}
	d, err = c.Call(ctx(t), "confused", struct{}{}, &got)
	if err != nil || d.Allowed || d.Reason != ReasonBadRequest || got != nil {
		t.Errorf("confused: %+v %v %v", d, got, err)
	}
}

// Malformed requests get a bad-request decision, never a crash: an
// unknown operation, a wrong method, a body that is not JSON, one too
// large. The control: the same client's well-formed call succeeds.
func TestBadRequests(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	if d, err := c.Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("control: %+v %v", d, err)
	}
	if d, err := c.Call(ctx(t), "nope", 1, nil); err != nil || d.Reason != ReasonBadRequest {
		t.Errorf("unknown op: %+v %v", d, err)
	}
	if d, err := c.Call(ctx(t), "echo", strings.Repeat("x", MaxBody), nil); err != nil || d.Reason != ReasonBadRequest {
		t.Errorf("oversized body: %+v %v", d, err)
	}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/echo", ""},
		{http.MethodPost, "/v1/echo", "{not json"},
		{http.MethodPost, "/v2/echo", "1"},
		{http.MethodPost, "/v1/ECHO", "1"},
		{http.MethodPost, "/v1/echo/../deny", "1"},
	} {
		req, _ := http.NewRequestWithContext(ctx(t), r.method, "https://fs"+r.path, strings.NewReader(r.body))
		resp, err := c.http.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", r.method, r.path, err)
			continue
		}
		var got Response
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if got.Decision.Allowed || got.Decision.Reason != ReasonBadRequest {
			t.Errorf("%s %s %q: %+v", r.method, r.path, r.body, got.Decision)
		}
	}
}

// The call table holds at both ends: a client for a call it forbids is
// not built, and a session certificate of a role that may not call fs is
// refused by the server and logged with its identity. The control: the
// agent's own certificate through the same raw path succeeds.
func TestTableHolds(t *testing.T) {
	f := serveFS(t)
	kmsLeaf, _ := f.sess.Issue(pki.KMS)
	if _, err := NewClient(kmsLeaf, pki.FS, nil, nil); err == nil {
		t.Error("a kms → fs client was built")
	}
	agentLeaf, _ := f.sess.Issue(pki.Agent)
	raw := func(l *pki.Leaf) error {
		keyPEM, _ := l.KeyPEM()
		cert, err := tls.X509KeyPair(l.CertPEM(), keyPEM)
		if err != nil {
			return err
		}
		conn, err := tls.Dial("unix", f.sock, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte("POST /v1/echo HTTP/1.1\r\nHost: fs\r\nContent-Length: 1\r\n\r\n1")); err != nil {
			return err
		}
		buf := make([]byte, 64)
		_, err = conn.Read(buf)
		return err
	}
	if err := raw(agentLeaf); err != nil {
		t.Fatalf("control: the agent's certificate: %v", err)
	}
	if err := raw(kmsLeaf); err == nil {
		t.Error("kms's certificate was served by fs")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(f.logs.String(), "refused caller=pinfold://session/rpc-test/kms reason=call_not_allowed") {
		if time.Now().After(deadline) {
			t.Fatalf("refusal not logged with the caller's identity:\n%s", f.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With AllowPeers, a process of another uid is turned away before TLS and
// logged; the same client is served when its uid is allowed (the control).
func TestAllowPeers(t *testing.T) {
	me := uint32(os.Geteuid())
	f := serveFSPeers(t, []uint32{me})
	if d, err := f.client(t, pki.Agent).Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("control: own uid allowed: %+v %v", d, err)
	}
	other := me + 1
	g := serveFSPeers(t, []uint32{other})
	if d, err := g.client(t, pki.Agent).Call(ctx(t), "echo", 1, nil); err == nil {
		t.Errorf("a peer of a uid not allowed was served: %+v", d)
	}
	want := fmt.Sprintf("refused caller=\"uid %d\" reason=peer_uid", me)
	if !strings.Contains(g.logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, g.logs.String())
	}
}
