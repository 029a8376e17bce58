package rpc

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// An operation name that is not one (opName) is refused without being
// repeated: neither the answer nor the log carries the caller's text,
// which may hold a newline or a forged log field. The control: an unknown
// but well-formed name is named in the answer.
func TestBadOperationNameNotEchoed(t *testing.T) {
	f := serveFS(t)
	tc := f.rawConn(t, pki.Agent)
	for _, r := range []struct {
		op       string
		echoed   bool
		reported string
	}{
		{"nope", true, "no operation nope"},
		{"ECHO\nforged=field", false, "no such operation"},
	} {
		got := askRaw(t, tc, r.op, []byte("1"), nil)
		if got.Decision.Reason != ReasonBadRequest || got.Decision.Detail != r.reported {
			t.Errorf("op %q: %+v; want bad-request %q", r.op, got.Decision, r.reported)
		}
		if !r.echoed && strings.Contains(f.logs.String(), "forged") {
			t.Errorf("op %q reached the log:\n%s", r.op, f.logs.String())
		}
	}
}

// A client does not take an answer that says allowed without a reason
// (no server of ours sends one: answer refuses an inconsistent decision)
// for an allowed one: a server that says less than a whole decision is
// not an answer. The control: the same server's whole decision is taken.
func TestClientRefusesAllowedWithoutReason(t *testing.T) {
	sess, err := pki.NewSession("rpc-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fsLeaf, _ := sess.Issue(pki.FS)
	agentLeaf, _ := sess.Issue(pki.Agent)
	cfg, err := pki.ServerConfig(fsLeaf, nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answers := []string{`{"decision":{"allowed":true,"reason":"allowed"},"result":1}`, `{"decision":{"allowed":true},"result":1}`}
	go func() {
		for _, a := range answers {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			tc := tls.Server(c, cfg)
			if _, err := readFrame(tc, nil); err == nil {
				writeResponse(tc, []byte(a), nil)
			}
			tc.Close()
		}
	}()
	for i, a := range answers {
		c, err := NewClient(agentLeaf, pki.FS, func(ctx context.Context) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		d, err := c.Call(ctx(t), "echo", 1, &n)
		c.Close()
		if want := i == 0; (err == nil && d.Allowed) != want {
			t.Errorf("answer %s: %+v, result %d, %v; taken: %v, want %v", a, d, n, err, err == nil && d.Allowed, want)
		}
	}
}
