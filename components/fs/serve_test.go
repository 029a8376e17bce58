package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/syncbuf"
)

// fs over its real transport: the agent and bash read and write, a
// denial reaches the client with its reason and rule, kms and net cannot
// even build a client, and no file content reaches the log.
func TestServe(t *testing.T) {
	w := newWorld(t, "policy.toml")
	w.file(t, "src/main.go", "package main")
	w.file(t, ".git/config", "[core]")
	w.symlink(t, filepath.Join(w.outside, "secret"), "leak")
	logs := &syncbuf.Buffer{}
	sess, dial, stop := serveRoot(t, w.root, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, role := range []pki.Role{pki.Agent, pki.Bash} {
		leaf, _ := sess.Issue(role)
		rc, err := rpc.NewClient(leaf, pki.FS, dial, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		c := NewClient(rc)
		name := "out/" + string(role) + ".bin"
		content := append(bytes.Repeat([]byte{0, 1, 2, 0xff}, MaxData/4-4), []byte("END-OF-CONTENT")...)

		if d, err := c.Mkdir(ctx, "out"); err != nil || !(d.Allowed || d.Reason == rpc.ReasonBadRequest) {
			t.Fatalf("%s mkdir: %+v %v", role, d, err)
		}
		wr, d, err := c.Write(ctx, name, content, true)
		if err != nil || !d.Allowed || d.Rule != RuleAllowed || wr.Size != len(content) {
			t.Fatalf("%s write: %+v %+v %v", role, wr, d, err)
		}
		rr, d, err := c.Read(ctx, name, 0, 0)
		if err != nil || !d.Allowed || !bytes.Equal(rr.Data, content) || !rr.EOF {
			t.Fatalf("%s read: %d bytes eof=%v %+v %v", role, len(rr.Data), rr.EOF, d, err)
		}
		rr, d, err = c.Read(ctx, name, int64(len(content)-14), 6)
		if err != nil || !d.Allowed || string(rr.Data) != "END-OF" || rr.EOF {
			t.Errorf("%s read a piece: %q %v %+v %v", role, rr.Data, rr.EOF, d, err)
		}
		info, d, err := c.Stat(ctx, name)
		if err != nil || !d.Allowed || info.Type != TypeFile || info.Size != int64(len(content)) || info.Mode != 0o644 {
			t.Errorf("%s stat: %+v %+v %v", role, info, d, err)
		}
		lr, d, err := c.List(ctx, "out")
		if err != nil || !d.Allowed || len(lr.Entries) == 0 {
			t.Errorf("%s list: %+v %+v %v", role, lr, d, err)
		}
		if d, err := c.Rename(ctx, name, name+".old", false); err != nil || !d.Allowed {
			t.Errorf("%s rename: %+v %v", role, d, err)
		}
		if d, err := c.Delete(ctx, name+".old"); err != nil || !d.Allowed {
			t.Errorf("%s delete: %+v %v", role, d, err)
		}
		// Denials, each with its reason and rule.
		denials := []struct {
			what   string
			call   func() (rpc.Decision, error)
			reason rpc.Reason
			rule   string
		}{
			{"write .git/config", func() (rpc.Decision, error) {
				_, d, err := c.Write(ctx, ".git/config", []byte("[core]\nhooksPath=/tmp"), false)
				return d, err
			}, rpc.ReasonNoRule, RuleProtected},
			{"write policy.toml", func() (rpc.Decision, error) {
				_, d, err := c.Write(ctx, "policy.toml", []byte("x"), false)
				return d, err
			}, rpc.ReasonNoRule, RuleProtected},
			{"rename onto .bashrc", func() (rpc.Decision, error) { return c.Rename(ctx, "src/main.go", ".bashrc", false) }, rpc.ReasonNoRule, RuleProtected},
			{"read through a link", func() (rpc.Decision, error) {
				r, d, err := c.Read(ctx, "leak", 0, 0)
				if r.Data != nil {
					t.Errorf("a denied read returned data")
				}
				return d, err
			}, rpc.ReasonNoRule, RuleBeneath},
			{"read ..", func() (rpc.Decision, error) {
				_, d, err := c.Read(ctx, "../outside/secret", 0, 0)
				return d, err
			}, rpc.ReasonBadRequest, ""},
			{"read an absolute path", func() (rpc.Decision, error) {
				_, d, err := c.Read(ctx, filepath.Join(w.outside, "secret"), 0, 0)
				return d, err
			}, rpc.ReasonBadRequest, ""},
			{"stat a missing file", func() (rpc.Decision, error) {
				_, d, err := c.Stat(ctx, "missing")
				return d, err
			}, rpc.ReasonUnknown, ""},
			{"delete-recursive", func() (rpc.Decision, error) { _, d, err := c.DeleteRecursive(ctx, "src"); return d, err }, rpc.ReasonNoRule, RuleRecursive},
			{"delete a non-empty directory", func() (rpc.Decision, error) { return c.Delete(ctx, "src") }, rpc.ReasonBadRequest, ""},
			{"read too much", func() (rpc.Decision, error) {
				_, d, err := c.Read(ctx, "src/main.go", 0, MaxData+1)
				return d, err
			}, rpc.ReasonBadRequest, ""},
			{"unknown argument", func() (rpc.Decision, error) {
				return rc.Call(ctx, OpStat, map[string]any{"path": "src", "follow": true}, nil)
			}, rpc.ReasonBadRequest, ""},
			{"data to stat", func() (rpc.Decision, error) {
				d, _, err := rc.CallData(ctx, OpStat, PathArgs{Path: "src"}, []byte("x"), nil)
				return d, err
			}, rpc.ReasonBadRequest, ""},
		}
		for _, dn := range denials {
			d, err := dn.call()
			if err != nil || d.Allowed || d.Reason != dn.reason || d.Rule != dn.rule || d.Detail == "" {
				t.Errorf("%s %s: %+v %v; want %s %q", role, dn.what, d, err, dn.reason, dn.rule)
			}
			if strings.Contains(d.Detail, secret) {
				t.Errorf("%s %s: the detail carries file contents: %q", role, dn.what, d.Detail)
			}
		}
		d, err = c.Delete(ctx, "src/link")
		if w.symlink(t, filepath.Join(w.outside, "secret"), "src/link"); err != nil || d.Allowed || d.Reason != rpc.ReasonUnknown {
			t.Errorf("delete a missing link: %+v %v", d, err)
		}
		d, err = c.Delete(ctx, "src/link")
		if err != nil || !d.Allowed {
			t.Errorf("delete the link (control): %+v %v", d, err)
		}
		// Too much data is refused by the client before it is sent.
		if _, _, err := c.Write(ctx, "big", make([]byte, MaxData+1), false); err == nil {
			t.Errorf("%s sent more than MaxData", role)
		}
	}
	// Net and kms may not call fs: no client can be built.
	for _, role := range []pki.Role{pki.Net, pki.KMS, pki.FS} {
		leaf, _ := sess.Issue(role)
		if _, err := rpc.NewClient(leaf, pki.FS, dial, nil); err == nil {
			t.Errorf("%s → fs client built", role)
		}
	}
	stop()
	w.outsideUnchanged(t)
	l := logs.String()
	for _, s := range []string{secret, "package main", "hooksPath", "END-OF-CONTENT"} {
		if strings.Contains(l, s) {
			t.Errorf("%q reached fs's log:\n%s", s, l)
		}
	}
	if !strings.Contains(l, "rule=fs.protected") || !strings.Contains(l, "caller=pinfold://session/fs-test/agent") && !strings.Contains(l, "caller=agent") {
		t.Errorf("the log lacks the denials or the caller:\n%s", l)
	}
}

// The handlers check the caller's role themselves, whatever the
// handshake let through.
func TestHandlersCheckRole(t *testing.T) {
	w := newWorld(t)
	w.file(t, "f", "content")
	hs := handlers(w.root)
	args, _ := json.Marshal(PathArgs{Path: "f"})
	for _, role := range []pki.Role{pki.Net, pki.KMS, pki.FS, "root"} {
		for op, h := range hs {
			d, result, data := h(context.Background(), role, args, nil)
			if d.Allowed || d.Reason != rpc.ReasonCallerRole || result != nil || data != nil {
				t.Errorf("%s %s: %+v", role, op, d)
			}
		}
	}
	// Control: the agent.
	d, _, data := hs[OpRead](context.Background(), pki.Agent, args, nil)
	if !d.Allowed || string(data) != "content" {
		t.Errorf("agent read: %+v %q", d, data)
	}
	if len(hs) != 9 { // with backup, bash's alone (TestBackupOpBashOnly)
		t.Errorf("%d operations, want 9", len(hs))
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		err    error
		reason rpc.Reason
		rule   string
	}{
		{nil, rpc.ReasonAllowed, RuleAllowed},
		{&Error{Kind: KindBadRequest}, rpc.ReasonBadRequest, ""},
		{&Error{Kind: KindNotFound}, rpc.ReasonUnknown, ""},
		{&Error{Kind: KindEscape}, rpc.ReasonNoRule, RuleBeneath},
		{&Error{Kind: KindProtected}, rpc.ReasonNoRule, RuleProtected},
		{&Error{Kind: KindNeedsConfirmation}, rpc.ReasonNoRule, RuleRecursive},
		{&Error{Kind: KindPermission}, rpc.ReasonNoRule, RulePermission},
		{&Error{Kind: KindFailed}, rpc.ReasonBadRequest, ""},
		{errArgs{errors.New("x")}, rpc.ReasonBadRequest, ""},
		{context.Canceled, rpc.ReasonBadRequest, ""},
	} {
		if d := Decide(c.err); d.Reason != c.reason || d.Rule != c.rule || d.Allowed != (c.err == nil) {
			t.Errorf("Decide(%v) = %+v", c.err, d)
		}
	}
}

// serveRoot serves root's operations on a Unix socket until stop, or
// the test's end, logging to logs: the session whose leaves may call
// it, a dialer of it, and stop.
func serveRoot(t *testing.T, root *Root, logs *syncbuf.Buffer) (sess *pki.Session, dial func(context.Context) (net.Conn, error), stop func()) {
	t.Helper()
	sess, err := pki.NewSession("fs-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fsLeaf, _ := sess.Issue(pki.FS)
	srv := rpc.NewServer(fsLeaf, slog.New(slog.NewTextHandler(logs, nil)))
	Register(srv, root)
	sock := filepath.Join(t.TempDir(), "fs.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(c)
		})
	}
	t.Cleanup(stop)
	return sess, func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) }, stop
}

// A listing longer than an answer holds (long names) is cut to the
// first entries that fit and said truncated: it was refused whole, as
// a result too large to encode.
func TestServeListLongNames(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(w.ws, "many")
	must(t, os.Mkdir(dir, 0o755))
	const n = 5000 // about 1.4 MB of JSON
	for i := range n {
		name := fmt.Sprintf("%05d-%s", i, strings.Repeat("x", 240))
		must(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	sess, dial, _ := serveRoot(t, w.root, &syncbuf.Buffer{})
	leaf, _ := sess.Issue(pki.Agent)
	rc, err := rpc.NewClient(leaf, pki.FS, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lr, d, err := NewClient(rc).List(ctx, "many")
	if err != nil || !d.Allowed {
		t.Fatalf("list: %+v %v", d, err)
	}
	if !lr.Truncated || len(lr.Entries) < n/2 || len(lr.Entries) >= n || !strings.HasPrefix(lr.Entries[0].Name, "00000-") {
		t.Fatalf("list: truncated=%v, %d entries", lr.Truncated, len(lr.Entries))
	}
	if b, _ := json.Marshal(lr); len(b) > rpc.MaxBody {
		t.Errorf("the listing's JSON is %d bytes", len(b))
	}
}
