package kms

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/syncbuf"
)

// kms over its real transport: net gets a value for a matching host; the
// agent and bash cannot even complete a handshake; nothing of the value
// reaches the log.
func TestServeRelease(t *testing.T) {
	sess, err := pki.NewSession("kms-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	kmsLeaf, _ := sess.Issue(pki.KMS)
	store, err := NewStore(vaultSecrets(), rules())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logs := &syncbuf.Buffer{}
	srv := rpc.NewServer(kmsLeaf, slog.New(slog.NewTextHandler(logs, nil)))
	Register(srv, store)
	sock := filepath.Join(t.TempDir(), "kms.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	dial := func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	netLeaf, _ := sess.Issue(pki.Net)
	c, err := rpc.NewClient(netLeaf, pki.KMS, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got ReleaseResult
	d, err := c.Call(ctx, "release", ReleaseRequest{Name: "github", Host: "api.github.com"}, &got)
	if err != nil || !d.Allowed || string(got.Value) != "ghp_value" {
		t.Fatalf("net, matching host: %+v %q %v", d, got.Value, err)
	}
	got = ReleaseResult{}
	if d, err := c.Call(ctx, "release", ReleaseRequest{Name: "github", Host: "evil.com"}, &got); err != nil || d.Allowed || d.Reason != rpc.ReasonNoRule || got.Value != nil {
		t.Errorf("net, other host: %+v %q %v", d, got.Value, err)
	}
	if d, err := c.Call(ctx, "release", map[string]string{"name": "github", "host": "api.github.com", "extra": "x"}, nil); err != nil || d.Reason != rpc.ReasonBadRequest {
		t.Errorf("unknown field: %+v %v", d, err)
	}
	// The agent and bash: no client can be built, and their certificates
	// presented directly are refused in the handshake.
	for _, role := range []pki.Role{pki.Agent, pki.Bash, pki.FS} {
		leaf, _ := sess.Issue(role)
		if _, err := rpc.NewClient(leaf, pki.KMS, dial, nil); err == nil {
			t.Errorf("%s → kms client built", role)
		}
		keyPEM, _ := leaf.KeyPEM()
		cert, _ := tls.X509KeyPair(leaf.CertPEM(), keyPEM)
		conn, err := tls.Dial("unix", sock, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
		if err == nil {
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			conn.Write([]byte("POST /v1/release HTTP/1.1\r\nHost: kms\r\nContent-Length: 2\r\n\r\n{}"))
			_, err = conn.Read(make([]byte, 16))
			conn.Close()
		}
		if err == nil {
			t.Errorf("%s's certificate was served by kms", role)
		}
	}
	srvCtx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	srv.Shutdown(srvCtx)
	if strings.Contains(logs.String(), "ghp_value") {
		t.Errorf("the value reached kms's log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "caller=pinfold://session/kms-test/agent reason=call_not_allowed") {
		t.Errorf("the agent's refusal is not logged with its identity:\n%s", logs.String())
	}
}
