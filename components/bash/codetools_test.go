package bash

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

// A script's file tools say "denied" only for fs's decisions: a file
// not found and a path fs does not take read as what they are (they
// read "denied (unknown, rule )" and "denied (bad-request, rule )"), and
// neither does a command line bash cannot read or a worker that failed.
func TestCodeToolsNotDecisions(t *testing.T) {
	sess, err := pki.NewSession("tools-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fsLeaf, err := sess.Issue(pki.FS)
	if err != nil {
		t.Fatal(err)
	}
	bashLeaf, err := sess.Issue(pki.Bash)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := fs.OpenRoot(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := rpc.NewServer(fsLeaf, slog.New(slog.NewTextHandler(io.Discard, nil)))
	fs.Register(srv, root)
	defer srv.Shutdown(context.Background())
	server, client := net.Pipe()
	if err := srv.ServeConn(server); err != nil {
		t.Fatal(err)
	}
	rc, err := rpc.NewClientConn(bashLeaf, pki.FS, client, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b := &Broker{Files: fs.NewClient(rc), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Commands: policy.Default().Commands, Options: Options{Workspace: ws},
		Run: func(context.Context, Job) Outcome { return Outcome{Error: "no worker in this test"} }}
	for _, c := range []struct {
		tool, args string
		says       string
	}{
		{"read_file", `{"path":"nope"}`, "read_file: not found: read \"nope\""},
		{"list_dir", `{"path":"nope"}`, "list_dir: not found"},
		{"read_file", `{"path":"../x"}`, "read_file: failed (bad-request)"},
		{"read_file", `{"path":"out/x"}`, "read_file: denied (no-rule, rule fs.beneath)"},
		{"run_command", `{"command":"echo 'x"}`, "run_command: failed (bad-request, rule bash.parse)"},
		{"run_command", `{"command":"ls"}`, "run_command: failed (no-rule, rule bash.worker)"},
	} {
		_, err := b.tool(context.Background(), c.tool, json.RawMessage(c.args))
		if err == nil || !strings.HasPrefix(err.Error(), c.says) {
			t.Errorf("%s %s: %v, want %q", c.tool, c.args, err, c.says)
		}
	}
}
