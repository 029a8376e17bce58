// Command gateway measures `launcher serve` (as root): how long a new
// MCP session takes from initialize to its first tool answer — through
// the gateway for an owner and for a guest, next to the same session
// over stdio without the gateway (the launcher under the policy with
// `launcher mcp` as its agent), so the ratio is what HTTP and the
// gateway add — and how many sessions it holds at once on this machine:
// sessions are opened one by one, each answering a call every round,
// until a round's slowest answer takes over -slow or -max sessions are
// open.
//
// All traffic is on loopback. With -json FILE it writes bench/report
// Reports: set-up times to FILE (ms) and the sessions held to its
// "-held" sibling.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/gateway"
)

func main() {
	launcher := flag.String("launcher", "bin/launcher", "the launcher binary (root's, in directories only root may change)")
	n := flag.Int("n", 15, "sessions set up one at a time, for each way")
	maxHeld := flag.Int("max", 64, "most sessions held at once")
	slow := flag.Duration("slow", 2*time.Second, "a round slower than this ends the hold test")
	out := flag.String("json", "", "also write bench/report JSON reports: set-up to FILE, sessions held to its -held sibling")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Println("gateway: skipped: components-mode sessions need root")
		return
	}
	exe, err := filepath.Abs(*launcher)
	check(err)
	dir, err := os.MkdirTemp("/var/tmp", "pinfold-bench-gateway-")
	check(err)
	defer os.RemoveAll(dir)
	check(os.Chmod(dir, 0o755))
	ws := filepath.Join(dir, "ws")
	check(os.Mkdir(ws, 0o755))
	check(os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\n"), 0o644))
	pol := fmt.Sprintf("version = 1\nmode = \"components\"\n\n[workspace]\npath = %q\n\n[files]\nwrite = [%q]\nexec = [\"/usr/bin\", \"/usr/lib\", %q]\n\n[commands]\nauto = [\"ls\"]\n",
		ws, ws, filepath.Dir(exe))
	polPath := filepath.Join(dir, "policy.toml")
	check(os.WriteFile(polPath, []byte(pol), 0o644))
	sum := sha256.Sum256([]byte(pol))
	hash := hex.EncodeToString(sum[:])
	store := gateway.Store{Path: filepath.Join(dir, "cfg", "tokens.json")}
	owner, err := store.Add("bench", nil, time.Now())
	check(err)

	srv := exec.Command(exe, "serve", "--policy-sha256", hash, "--policy", polPath, "--listen", "127.0.0.1:0",
		"--state", filepath.Join(dir, "state"), "--tokens", store.Path, "--max-sessions", fmt.Sprint(*maxHeld+2))
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	check(err)
	srv.Stderr = logf
	stdout, err := srv.StdoutPipe()
	check(err)
	check(srv.Start())
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	check(err)
	_, url, ok := strings.Cut(strings.TrimSpace(line), "serving MCP on ")
	if !ok {
		fail(fmt.Errorf("serve said %q", line))
	}

	ctx := context.Background()
	overHTTP := func(token string) func() (*mcp.ClientSession, error) {
		return func() (*mcp.ClientSession, error) {
			hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
			return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		}
	}
	overStdio := func() (*mcp.ClientSession, error) {
		cmd := exec.Command(exe, "--quiet", "--policy-sha256", hash, "--policy", polPath, "--", exe, "mcp")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	}
	setup := func(what string, connect func() (*mcp.ClientSession, error)) []time.Duration {
		var ds []time.Duration
		for i := range *n {
			start := time.Now()
			cs, err := connect()
			if err == nil {
				err = call(ctx, cs)
			}
			if err != nil {
				fail(fmt.Errorf("%s, session %d: %w", what, i+1, err))
			}
			ds = append(ds, time.Since(start))
			cs.Close()
		}
		return ds
	}
	setup("warm-up", overStdio) // the page cache
	stdio := setup("stdio", overStdio)
	own := setup("owner", overHTTP(owner))
	guest := setup("guest", overHTTP(""))
	fmt.Printf("Session set-up, initialize to the first tool answer, %d each (median, p90)\n", *n)
	rows := []struct {
		name string
		ds   []time.Duration
	}{{"stdio, no gateway", stdio}, {"gateway, owner", own}, {"gateway, guest", guest}}
	for _, r := range rows {
		fmt.Printf("%-24s %9s %9s\n", r.name, ms(pct(r.ds, 50)), ms(pct(r.ds, 90)))
	}
	ratio := fmt.Sprintf("gateway owner / stdio: %.2f; guest / stdio: %.2f", ratioOf(own, stdio), ratioOf(guest, stdio))
	fmt.Println(ratio)

	// Sessions held: open one more each round, then every open session
	// answers one call, all at once.
	var held []*mcp.ClientSession
	var slowest time.Duration
	for len(held) < *maxHeld {
		cs, err := overHTTP(owner)()
		if err != nil {
			fmt.Printf("session %d not opened: %v\n", len(held)+1, err)
			break
		}
		held = append(held, cs)
		start := time.Now()
		errs := make(chan error, len(held))
		for _, s := range held {
			go func() { errs <- call(ctx, s) }()
		}
		var failed error
		for range held {
			if err := <-errs; err != nil {
				failed = err
			}
		}
		slowest = time.Since(start)
		if failed != nil || slowest > *slow {
			fmt.Printf("at %d sessions a round took %v (%v)\n", len(held), slowest.Round(time.Millisecond), failed)
			held = held[:len(held)-1]
			break
		}
	}
	holdLine := fmt.Sprintf("sessions held at once, each answering within %v: %d (of at most %d tried)", *slow, len(held), *maxHeld)
	fmt.Println(holdLine)
	for _, cs := range held {
		cs.Close()
	}
	if *out != "" {
		r := report.NewReport("gateway", fmt.Sprintf("MCP session set-up, initialize to the first tool answer (%d each)", *n), "ms", report.Lower)
		for _, row := range rows {
			r.Add(row.name, float64(pct(row.ds, 50).Microseconds())/1000, float64(pct(row.ds, 90).Microseconds())/1000, len(row.ds))
		}
		r.Notes = []string{ratio}
		check(r.WriteFile(*out))
		h := report.NewReport("gateway", "MCP sessions one gateway holds at once", "sessions", report.Higher)
		h.Add("sessions held", float64(len(held)), 0, 1)
		h.Notes = []string{holdLine}
		check(h.WriteFile(report.WithSuffix(*out, "-held")))
	}
}

// call is one tool call a session must answer (list_dir: a guest's
// workspace is empty).
func call(ctx context.Context, cs *mcp.ClientSession) error {
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	if err == nil && r.IsError {
		var text strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		err = fmt.Errorf("list_dir: %s", text.String())
	}
	return err
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.rt.RoundTrip(r)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ratioOf(a, b []time.Duration) float64 {
	return float64(pct(a, 50)) / float64(pct(b, 50))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gateway:", err)
	os.Exit(1)
}
