package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/internal/syncbuf"
)

type fixture struct {
	sess      *pki.Session
	sock      string
	srv       *Server
	logs      *syncbuf.Buffer
	slowCalls atomic.Int32
	waited    chan error // what "wait" saw: its context's error, or nil at its own timeout
}

// serveFS serves an fs-role server with two operations on a Unix socket:
// "echo" (allowed; answers the caller's role and what it sent, plus a
// secret that must never reach a log) and "deny" (refused, yet returns a
// result that must not travel).
func serveFS(t *testing.T) *fixture { return serveFSPeers(t, nil) }

// serveFSPeers is serveFS with the server's peer uids limited to peers
// (nil: no limit).
func serveFSPeers(t *testing.T, peers []uint32) *fixture { return serveFSWrapped(t, peers, nil) }

// serveFSWrapped is serveFSPeers serving on wrap(the Unix listener) when
// wrap is set.
func serveFSWrapped(t *testing.T, peers []uint32, wrap func(net.Listener) net.Listener) *fixture {
	t.Helper()
	sess, err := pki.NewSession("rpc-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := sess.Issue(pki.FS)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sess: sess, sock: filepath.Join(t.TempDir(), "fs.sock"), logs: &syncbuf.Buffer{}, waited: make(chan error, 4)}
	srv := NewServer(leaf, slog.New(slog.NewTextHandler(f.logs, nil)))
	f.srv = srv
	if peers != nil {
		srv.AllowPeers(peers...)
	}
	srv.Handle("echo", func(_ context.Context, caller pki.Role, body json.RawMessage) (Decision, any) {
		return Allow("echo-rule"), map[string]any{"caller": caller, "body": body, "secret": "s3cret-value"}
	})
	srv.HandleData("reverse", func(_ context.Context, _ pki.Role, _ json.RawMessage, data []byte) (Decision, any, []byte) {
		out := slices.Clone(data)
		slices.Reverse(out)
		return Allow("echo-rule"), nil, out
	})
	srv.HandleData("deny", func(context.Context, pki.Role, json.RawMessage, []byte) (Decision, any, []byte) {
		return Deny(ReasonNoRule, "deny-rule", "denied for the test"), map[string]string{"leak": "must-not-travel"}, []byte("must-not-travel")
	})
	srv.Handle("deny-json", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		return Deny(ReasonNoRule, "deny-rule", "denied for the test"), map[string]string{"leak": "must-not-travel"}
	})
	srv.Handle("slow", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		f.slowCalls.Add(1)
		time.Sleep(300 * time.Millisecond)
		return Allow("slow-rule"), nil
	})
	srv.Handle("wait", func(ctx context.Context, _ pki.Role, _ json.RawMessage) (Decision, any) {
		Watch(ctx)
		select {
		case <-ctx.Done():
			f.waited <- ctx.Err()
		case <-time.After(10 * time.Second):
			f.waited <- nil
		}
		return Allow("wait-rule"), nil
	})
	srv.Handle("confused", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		return Decision{Allowed: true, Reason: ReasonNoRule}, map[string]string{"leak": "must-not-travel"}
	})
	ln, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		ln = wrap(ln)
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
// unknown operation, a bad operation name, arguments that are not JSON, a
// frame whose lengths do not add up; a frame over the limit is answered
// and the connection ended. A client refuses to send an oversized request
// at all. The control: the same connection's well-formed call succeeds.
func TestBadRequests(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	if d, err := c.Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("control: %+v %v", d, err)
	}
	if d, err := c.Call(ctx(t), "nope", 1, nil); err != nil || d.Reason != ReasonBadRequest {
		t.Errorf("unknown op: %+v %v", d, err)
	}
	if d, err := c.Call(ctx(t), "echo", strings.Repeat("x", MaxBody), nil); err == nil {
		t.Errorf("oversized arguments were sent: %+v", d)
	}
	if d, _, err := c.CallData(ctx(t), "echo", 1, make([]byte, MaxData+1), nil); err == nil {
		t.Errorf("oversized data was sent: %+v", d)
	}
	tc := f.rawConn(t, pki.Agent)
	frame := func(op string, args string, fixA int) []byte {
		var b bytes.Buffer
		writeRequest(&b, op, []byte(args), nil)
		out := b.Bytes()
		if fixA >= 0 { // overwrite the arguments' length field
			binary.BigEndian.PutUint32(out[4+1+len(op):], uint32(fixA))
		}
		return out
	}
	for _, r := range []struct {
		name  string
		frame []byte
	}{
		{"not JSON", frame("echo", "{not json", -1)},
		{"upper-case op", frame("ECHO", "1", -1)},
		{"path in op", frame("echo/../deny", "1", -1)},
		{"args longer than frame", frame("echo", "1", 1000)},
		{"empty frame", []byte{0, 0, 0, 0}},
		{"control", frame("echo", "1", -1)},
	} {
		if _, err := tc.Write(r.frame); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		got := readAnswer(t, tc)
		if want := r.name == "control"; got.Decision.Allowed != want || (!want && got.Decision.Reason != ReasonBadRequest) {
			t.Errorf("%s: %+v", r.name, got.Decision)
		}
	}
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, maxFrame+1)
	tc.Write(huge)
	if got := readAnswer(t, tc); got.Decision.Reason != ReasonBadRequest {
		t.Errorf("oversized frame: %+v", got.Decision)
	}
	if _, err := readFrame(tc, nil); err == nil {
		t.Error("the connection went on after an oversized frame")
	}
}

// cert is a fresh leaf of the fixture's session for role, with its key.
func (f *fixture) cert(t *testing.T, role pki.Role) tls.Certificate {
	t.Helper()
	l, err := f.sess.Issue(role)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, _ := l.KeyPEM()
	cert, err := tls.X509KeyPair(l.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// rawConn is a TLS connection to the fixture's server with role's
// certificate, speaking frames by hand.
func (f *fixture) rawConn(t *testing.T, role pki.Role) *tls.Conn {
	t.Helper()
	cert := f.cert(t, role)
	conn, err := tls.Dial("unix", f.sock, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

func readAnswer(t *testing.T, r io.Reader) Response {
	t.Helper()
	b, err := readFrame(r, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	meta, _, err := parseResponse(b)
	var got Response
	if err != nil || json.Unmarshal(meta, &got) != nil {
		t.Fatalf("not an answer: %q", b)
	}
	return got
}

// Data travels beside the JSON both ways, unencoded; a denial carries no
// data back whatever the handler returned.
func TestCallData(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	payload := []byte("\x00\xffraw bytes")
	d, got, err := c.CallData(ctx(t), "reverse", 1, payload, nil)
	if err != nil || !d.Allowed || string(got) != "setyb war\xff\x00" {
		t.Errorf("reverse: %+v %q %v", d, got, err)
	}
	d, got, err = c.CallData(ctx(t), "deny", 1, payload, nil)
	if err != nil || d.Allowed || got != nil {
		t.Errorf("deny carried data: %+v %q %v", d, got, err)
	}
}

// A kept connection the server closed is replaced without the caller
// noticing; a plain-text client is refused and logged.
func TestReconnectAndPlainText(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	if d, err := c.Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("control: %+v %v", d, err)
	}
	c.mu.Lock()
	for _, cc := range c.idle {
		cc.tc.NetConn().Close() // as if the server had ended it
	}
	c.mu.Unlock()
	if d, err := c.Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Errorf("after the kept connection died: %+v %v", d, err)
	}
	conn, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write([]byte("POST /v1/echo HTTP/1.1\r\nHost: fs\r\nContent-Length: 1\r\n\r\n1"))
	io.ReadAll(conn)
	conn.Close()
	waitLog(t, f, "reason=handshake")
}

func waitLog(t *testing.T, f *fixture, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(f.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", want, f.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
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
		if err := writeRequest(conn, "echo", []byte("1"), nil); err != nil {
			return err
		}
		_, err = readFrame(conn, nil)
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

// A local user flooding a component's socket is refused each time but
// logged at most once a second, with a count of what was not logged: a
// line for each let a hunt fill the log (boot.MaxLog) and silence the
// session's later requests.
func TestRefusedPeersLogBounded(t *testing.T) {
	me := uint32(os.Geteuid())
	g := serveFSPeers(t, []uint32{me + 1})
	const n = 300
	for range n {
		c, err := net.Dial("unix", g.sock)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, c) // until the server closes it
		c.Close()
	}
	lines := strings.Count(g.logs.String(), "reason=peer_uid")
	if lines < 1 || lines > 5 {
		t.Errorf("%d refusal lines for %d connections, want 1 to 5:\n%.2000s", lines, n, g.logs.String())
	}
}

// A caller's text in a log line is bounded: a 4000-byte detail (a path
// escaped twice over in a hunt's flood) is cut.
func TestLogTextBounded(t *testing.T) {
	long := strings.Repeat("\x01", 4000)
	if got := logText(long); len(got) > maxLogText+40 || !strings.HasSuffix(got, "more bytes)") {
		t.Errorf("logText of 4000 bytes: %d bytes, ending %q", len(got), got[len(got)-20:])
	}
	if got := logText("short"); got != "short" {
		t.Errorf("logText(short) = %q", got)
	}
}

// A connection the launcher made (a socketpair) is served without an idle
// timeout and carries calls in turn; a second client cannot conjure
// another connection out of it; once it breaks, calls fail rather than
// hang.
func TestServeConn(t *testing.T) {
	sess, err := pki.NewSession("rpc-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	kmsLeaf, _ := sess.Issue(pki.KMS)
	netLeaf, _ := sess.Issue(pki.Net)
	logs := &syncbuf.Buffer{}
	srv := NewServer(kmsLeaf, slog.New(slog.NewTextHandler(logs, nil)))
	srv.Handle("echo", func(_ context.Context, caller pki.Role, body json.RawMessage) (Decision, any) {
		return Allow("echo-rule"), string(caller)
	})
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sc, cc := conn(fds[0]), conn(fds[1])
	// The first call may come long after the connection was served: a
	// dialled connection's handshake bound does not end it (a hunt: net's
	// first secret, bash's first backup, failed after ten seconds).
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 50 * time.Millisecond
	if err := srv.ServeConn(sc); err != nil {
		t.Fatal(err)
	}
	c, err := NewClientConn(netLeaf, pki.KMS, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * handshakeTimeout)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var who string
			d, err := c.Call(ctx(t), "echo", 1, &who)
			if err == nil && (!d.Allowed || who != "net") {
				err = fmt.Errorf("%+v %q", d, who)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call in turn: %v", err)
		}
	}
	cc.Close()
	if d, err := c.Call(ctx(t), "echo", 1, nil); err == nil {
		t.Errorf("a call after the connection broke: %+v", d)
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// A handler that takes longer than the write timeout (it waited for the
// person, or for a command) still has its answer delivered, and on a
// kept connection the request is not sent again: the write deadline
// starts when the answer is written, not when the request was read.
func TestSlowHandlerAnsweredOnce(t *testing.T) {
	old := writeTimeout
	writeTimeout = 100 * time.Millisecond
	t.Cleanup(func() { writeTimeout = old })
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	if d, err := c.Call(ctx(t), "echo", nil, nil); err != nil || !d.Allowed {
		t.Fatalf("warm-up: %+v %v", d, err) // the next call reuses this connection
	}
	d, err := c.Call(ctx(t), "slow", nil, nil)
	if err != nil || !d.Allowed || d.Rule != "slow-rule" {
		t.Fatalf("%+v %v", d, err)
	}
	if n := f.slowCalls.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}

// A call its client gives up on (its context ends, so it closes the
// connection) cancels the handler's context at once: nothing goes on
// for a call nobody waits for, such as a question for the person. The
// connection is not reused; the next call works.
func TestCancelledCallCancelsHandler(t *testing.T) {
	f := serveFS(t)
	c := f.client(t, pki.Agent)
	cctx, cancel := context.WithTimeout(ctx(t), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Call(cctx, "wait", nil, nil); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	select {
	case err := <-f.waited:
		if err == nil {
			t.Fatal("the handler ran to its own timeout: the client's leaving did not reach it")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not end after its caller left")
	}
	if d, err := c.Call(ctx(t), "echo", nil, nil); err != nil || !d.Allowed {
		t.Fatalf("the next call: %+v %v", d, err)
	}
}

// A pinned connection (the launcher's socketpair: bash's one way to fs)
// outlives a call its client gives up on: the handler is cancelled as on
// any connection, and the next call on the same connection works. (A
// Code Mode script that ended while fs asked the person about its write
// closed bash's only connection to fs for the rest of the session.)
func TestPinnedConnSurvivesCancelledCall(t *testing.T) {
	sess, err := pki.NewSession("rpc-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fsLeaf, _ := sess.Issue(pki.FS)
	bashLeaf, _ := sess.Issue(pki.Bash)
	srv := NewServer(fsLeaf, slog.New(slog.NewTextHandler(io.Discard, nil)))
	waited := make(chan error, 1)
	srv.Handle("wait", func(ctx context.Context, _ pki.Role, _ json.RawMessage) (Decision, any) {
		Watch(ctx)
		select {
		case <-ctx.Done():
			waited <- ctx.Err()
		case <-time.After(10 * time.Second):
			waited <- nil
		}
		return Allow("wait-rule"), nil
	})
	srv.Handle("echo", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		return Allow("echo-rule"), nil
	})
	srv.Handle("busy", func(context.Context, pki.Role, json.RawMessage) (Decision, any) {
		time.Sleep(300 * time.Millisecond) // does not watch: the cancel waits in the stream
		return Allow("busy-rule"), nil
	})
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sc, cc := conn(fds[0]), conn(fds[1])
	defer cc.Close()
	if err := srv.ServeConn(sc); err != nil {
		t.Fatal(err)
	}
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	c, err := NewClientConn(bashLeaf, pki.FS, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // one after the other: each leaves the connection in step
		cctx, cancel := context.WithTimeout(ctx(t), 200*time.Millisecond)
		_, err := c.Call(cctx, "wait", nil, nil)
		cancel()
		if err == nil {
			t.Fatal("a cancelled call succeeded")
		}
		select {
		case err := <-waited:
			if err == nil {
				t.Fatal("the handler ran to its own timeout: the client's leaving did not reach it")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the handler did not end after its caller left")
		}
		if d, err := c.Call(ctx(t), "echo", nil, nil); err != nil || !d.Allowed {
			t.Fatalf("call %d after a cancelled one: %+v %v", i, d, err)
		}
	}
	// Given up on while a handler that does not watch runs, and before
	// it was sent.
	cctx, cancel := context.WithTimeout(ctx(t), 50*time.Millisecond)
	if _, err := c.Call(cctx, "busy", nil, nil); err == nil {
		t.Error("a cancelled call succeeded")
	}
	cancel()
	if _, err := c.Call(cctx, "echo", nil, nil); err == nil {
		t.Error("a call cancelled before it was sent was answered")
	}
	if d, err := c.Call(ctx(t), "echo", nil, nil); err != nil || !d.Allowed || d.Rule != "echo-rule" {
		t.Fatalf("the next call: %+v %v", d, err)
	}
}

// A connection that closes before saying anything was refused nothing:
// it is logged as closed, not counted among the refusals (the session's
// summary said "1 connections refused" for fs when bash, holding a
// pinned connection it had not used yet, was killed). The control: a
// connection that sends what is not a handshake is refused.
func TestClosedBeforeHandshakeNotRefused(t *testing.T) {
	f := serveFS(t)
	conn, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitLog(t, f, `msg="closed before its handshake"`)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	pf := os.NewFile(uintptr(fds[0]), "pair")
	sc, err := net.FileConn(pf)
	pf.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.ServeConn(sc); err != nil {
		t.Fatal(err)
	}
	syscall.Close(fds[1]) // the pinned caller ends before its first call
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(f.logs.String(), "closed before its handshake") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the pinned connection's end was not logged as closed:\n%s", f.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(f.logs.String(), "msg=refused") {
		t.Fatalf("a connection that said nothing was logged as refused:\n%s", f.logs.String())
	}
	conn, err = net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x01, 0x00}) // a record, not a ClientHello
	conn.Close()
	waitLog(t, f, "msg=refused")
}
