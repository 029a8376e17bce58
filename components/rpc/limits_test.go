package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// rawFrame is a request frame as writeRequest lays it out, without its
// limits: the tests below send what a well-behaved client never would.
func rawFrame(op string, args, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(1+len(op)+4+len(args)+len(data)))
	b.WriteByte(byte(len(op)))
	b.WriteString(op)
	binary.Write(&b, binary.BigEndian, uint32(len(args)))
	b.Write(args)
	b.Write(data)
	return b.Bytes()
}

// askRaw sends rawFrame(op, args, data) on c and reads the answer.
func askRaw(t *testing.T, c io.ReadWriter, op string, args, data []byte) Response {
	t.Helper()
	if _, err := c.Write(rawFrame(op, args, data)); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return readAnswer(t, c)
}

// Arguments over MaxBody, and data over MaxData, are refused as bad
// requests even when the frame as a whole is within maxFrame (which
// leaves room for either to overflow into the other's share). "reverse"
// ignores its arguments and answers no result, so nothing but the server's
// own limits can refuse them. The controls: each at its limit is served.
func TestPartsOverLimitRefused(t *testing.T) {
	f := serveFS(t)
	tc := f.rawConn(t, pki.Agent)
	bigArgs := func(n int) []byte { return []byte(`"` + strings.Repeat("x", n-2) + `"`) }
	for _, r := range []struct {
		name       string
		args, data []byte
		allowed    bool
	}{
		{"arguments at MaxBody", bigArgs(MaxBody), nil, true},
		{"arguments over MaxBody", bigArgs(MaxBody + 1), nil, false},
		{"data at MaxData", []byte("1"), make([]byte, MaxData), true},
		{"data over MaxData", []byte("1"), make([]byte, MaxData+1), false},
	} {
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		got := askRaw(t, tc, "reverse", r.args, r.data)
		if got.Decision.Allowed != r.allowed || (!r.allowed && got.Decision.Reason != ReasonBadRequest) {
			t.Errorf("%s: %+v", r.name, got.Decision)
		}
	}
}

// Arguments that are not JSON are refused by the server itself, before
// a handler that would not have looked at them ("reverse") runs. The
// control: the same operation with JSON arguments.
func TestArgumentsCheckedBeforeHandler(t *testing.T) {
	f := serveFS(t)
	tc := f.rawConn(t, pki.Agent)
	for _, r := range []struct {
		args    string
		allowed bool
	}{{"1", true}, {"{not json", false}, {"", false}} {
		if got := askRaw(t, tc, "reverse", []byte(r.args), []byte("ab")); got.Decision.Allowed != r.allowed || (!r.allowed && got.Decision.Reason != ReasonBadRequest) {
			t.Errorf("arguments %q: %+v", r.args, got.Decision)
		}
	}
}

// A denial carries no data on the wire, whatever the handler returned
// (the client drops it too, so only a raw read can tell). The control:
// an allowed answer's data arrives.
func TestDenialCarriesNoDataOnTheWire(t *testing.T) {
	f := serveFS(t)
	tc := f.rawConn(t, pki.Agent)
	for _, r := range []struct {
		op   string
		want string
	}{{"reverse", "ba"}, {"deny", ""}} {
		if _, err := tc.Write(rawFrame(r.op, []byte("1"), []byte("ab"))); err != nil {
			t.Fatal(err)
		}
		b, err := readFrame(tc, nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", r.op, err)
		}
		if _, data, err := parseResponse(b); err != nil || string(data) != r.want {
			t.Errorf("%s: data %q, %v; want %q", r.op, data, err, r.want)
		}
	}
}

// ended reports whether the server ended c within d: a read that sees
// the end of the stream (or a reset), not the test's own deadline.
func ended(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// A connection that never starts its handshake is ended at
// handshakeTimeout; a caller cannot hold a server's connection open by
// saying nothing.
func TestHandshakeDeadline(t *testing.T) {
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 100 * time.Millisecond
	f := serveFS(t)
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !ended(c, 5*time.Second) {
		t.Error("a connection that sent nothing was still open after 5s (handshake timeout 100ms)")
	}
}

// A reader that does not take its answer is cut off at writeTimeout: the
// answer (a megabyte, more than the socket buffers hold) is not there in
// full a second later. The control: read at once, it arrives whole.
func TestSlowReaderCutOff(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 100 * time.Millisecond
	f := serveFS(t)
	for _, wait := range []time.Duration{0, time.Second} {
		tc := f.rawConn(t, pki.Agent)
		if _, err := tc.Write(rawFrame("reverse", []byte("1"), make([]byte, MaxData))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		b, err := readFrame(tc, nil)
		switch {
		case wait == 0 && err != nil:
			t.Fatalf("control: the answer read at once: %v", err)
		case wait > 0 && err == nil:
			t.Errorf("a reader that waited %v got its whole answer (%d bytes): no write deadline", wait, len(b))
		}
	}
}

// A frame whose length came but whose body does not is ended at
// readTimeout (a slow frame), and a connection that sends no request at
// idleTimeout: neither holds a server connection open. The controls: the
// same connection, had it sent its frame, is answered (TestBadRequests and
// the rest).
func TestSlowFrameAndIdleDeadlines(t *testing.T) {
	defer func(r, i time.Duration) { readTimeout, idleTimeout = r, i }(readTimeout, idleTimeout)
	readTimeout, idleTimeout = 100*time.Millisecond, time.Hour
	f := serveFS(t)
	tc := f.rawConn(t, pki.Agent)
	if _, err := tc.Write([]byte{0, 0, 0, 100}); err != nil { // a length, then nothing
		t.Fatal(err)
	}
	if !ended(tc, 5*time.Second) {
		t.Error("a frame that never came whole held its connection for 5s (read timeout 100ms)")
	}

	readTimeout, idleTimeout = time.Hour, 100*time.Millisecond
	g := serveFS(t)
	if !ended(g.rawConn(t, pki.Agent), 5*time.Second) {
		t.Error("an idle connection was still open after 5s (idle timeout 100ms)")
	}
}

// shortListener refuses its first accepts as the kernel does when the
// process is out of descriptors (EMFILE, as net reports it), then
// accepts.
type shortListener struct {
	net.Listener
	refuse atomic.Int32
}

func (l *shortListener) Accept() (net.Conn, error) {
	if l.refuse.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// An accept refused for want of descriptors (the agent holding as many
// connections as its limits allow) is waited out, not the end of Serve:
// returning ended the component and with it the session. A run of
// refusals is logged once, and the next connection is served.
func TestAcceptOutOfDescriptorsWaitedOut(t *testing.T) {
	var sl *shortListener
	f := serveFSWrapped(t, nil, func(ln net.Listener) net.Listener {
		sl = &shortListener{Listener: ln}
		sl.refuse.Store(5)
		return sl
	})
	if d, err := f.client(t, pki.Agent).Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("a call after five refused accepts: %+v, %v", d, err)
	}
	if n := strings.Count(f.logs.String(), "cannot accept a connection for now"); n != 1 {
		t.Errorf("five refused accepts in a row logged %d times; want once:\n%s", n, f.logs.String())
	}
}

// A listener has at most maxConns connections open; the next waits in
// the kernel's backlog, unanswered, until one ends, and is then served.
// Without the bound the agent could open connections until the
// component's memory cgroup killed it.
func TestConnectionsBounded(t *testing.T) {
	defer func(n int) { maxConns = n }(maxConns)
	maxConns = 2
	f := serveFS(t)
	first := f.rawConn(t, pki.Agent)
	f.rawConn(t, pki.Agent)
	// The third's handshake gets no answer while two are open.
	cert := f.cert(t, pki.Agent)
	raw, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	third := tls.Client(raw, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	third.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if err := third.Handshake(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a third connection's handshake with two open and a bound of two: %v; want it unanswered", err)
	}
	// A handshake that timed out cannot go on: dial again once the first
	// ends (the third, ended too, is accepted first and ends at once).
	raw.Close()
	first.Close()
	tc := f.rawConn(t, pki.Agent)
	if got := askRaw(t, tc, "echo", []byte("1"), nil); !got.Decision.Allowed {
		t.Errorf("a connection after one of two ended: %+v", got.Decision)
	}
}

// Shutdown ends every Serve, not only the last one's: fs and bash each
// serve two listeners, and a listener kept open after Shutdown went on
// accepting connections no one would serve to the end.
func TestShutdownEndsEveryServe(t *testing.T) {
	var first net.Listener
	f := serveFSWrapped(t, nil, func(ln net.Listener) net.Listener { first = ln; return ln })
	other, err := net.Listen("unix", f.sock+"-2")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(other) }()
	// The second Serve has its listener once it answers a call, so the
	// first is not the last one Serve was given.
	leaf, err := f.sess.Issue(pki.Agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(leaf, pki.FS, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", f.sock+"-2")
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := c.Call(ctx(t), "echo", 1, nil); err != nil || !d.Allowed {
		t.Fatalf("a call on the second listener: %+v, %v", d, err)
	}
	c.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.srv.Shutdown(sctx)
	if _, err := net.Dial("unix", f.sock); err == nil {
		t.Error("the first listener still accepts connections after Shutdown")
		first.Close() // so that the fixture's Serve returns
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the second Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		other.Close()
		t.Error("the second Serve still accepting 5s after Shutdown")
	}
}
