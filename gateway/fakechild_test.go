package gateway

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/internal/syncbuf"
	"github.com/pinfold/pinfold/policy"
)

// TestMain lets the test binary be an owner session's child: run as the
// gateway runs the launcher (`--quiet --policy-sha256 …`), it serves MCP
// on its stdio with one tool, echo, as `launcher mcp` would in its
// sandbox. Sessions can then start without root or a sandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "--quiet" {
		srv := mcp.NewServer(&mcp.Implementation{Name: "fake-child", Version: "1"}, nil)
		type echoIn struct {
			Text string `json:"text"`
		}
		mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeTokens verifies owner tokens by their secrets.
type fakeTokens map[string]Token

func (f fakeTokens) Verify(s string) (Token, bool) {
	t, ok := f[s]
	return t, ok
}

// fakeChildGateway is a gateway whose owner sessions are this test
// binary serving echo (TestMain), for the owner token it returns (and
// another, "pft_other").
func fakeChildGateway(t *testing.T) (*Gateway, string, *syncbuf.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default()
	p.Version = 1
	p.Mode = policy.ModeComponents
	p.Workspace.Path = "/nonexistent"
	const secret = "pft_owner"
	log := &syncbuf.Buffer{}
	g, err := New(Config{Launcher: exe, Policy: &p, PolicyData: []byte("x"), StateDir: filepath.Join(t.TempDir(), "state"),
		Tokens: fakeTokens{secret: {Name: "owner", Hash: "0123"}, "pft_other": {Name: "other", Hash: "4567"}}, Limiter: NewLimiter(10, time.Minute, 100),
		IdleTimeout: time.Hour, StartTimeout: 30 * time.Second, Log: slog.New(slog.NewJSONHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return g, secret, log
}
