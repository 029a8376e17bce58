package launcher

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pinfold/pinfold/internal/syncbuf"
	"golang.org/x/sys/unix"
)

// gatewayRun is a `launcher serve` the test started.
type gatewayRun struct {
	cmd   *exec.Cmd
	url   string // http://127.0.0.1:PORT/mcp
	state string
	log   *syncbuf.Buffer // its stderr as it comes
}

// startGateway starts `launcher serve` on a free loopback port with the
// sandbox's policy p and the token store tokens; it is stopped (SIGTERM,
// then SIGKILL) when the test ends.
func startGateway(t *testing.T, s *itSandbox, p itPol, tokens string, extra ...string) *gatewayRun {
	t.Helper()
	path, hash := s.writePolicy(t, p)
	g := &gatewayRun{state: filepath.Join(s.dir, "state"), log: &syncbuf.Buffer{}}
	args := append([]string{"serve", "--policy-sha256", hash, "--policy", path, "--listen", "127.0.0.1:0",
		"--state", g.state, "--tokens", tokens}, extra...)
	g.cmd = exec.Command(itEnv.launcher, args...)
	g.cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	g.cmd.Dir = s.dir
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := g.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := g.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logDone := make(chan struct{})
	go func() {
		io.Copy(g.log, io.LimitReader(errPipe, 4<<20))
		io.Copy(io.Discard, errPipe)
		close(logDone)
	}()
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			g.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { g.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				g.cmd.Process.Kill()
				<-done
			}
		}
		<-logDone
		// A gateway that did not end its sessions (killed above, or its
		// Shutdown out of time on a loaded machine) leaves guests'
		// workspaces mounted: its next start would sweep them, and there
		// is none (CI under load, 2026-12-03: a tmpfs left on the host).
		for _, mp := range mountsUnder(t, g.state) {
			if err := unix.Unmount(mp, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
				t.Errorf("a gateway's mount left behind: %s: %v", mp, err)
			}
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", g.log.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		line <- l
		io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		_, url, ok := strings.Cut(strings.TrimSpace(l), "serving MCP on ")
		if !ok {
			t.Fatalf("gateway did not start: %q", l)
		}
		g.url = url
	case <-time.After(30 * time.Second):
		t.Fatal("gateway did not say where it serves")
	}
	return g
}

// headers is an http.RoundTripper that adds fixed headers.
type headers struct {
	h  map[string]string
	rt http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.rt.RoundTrip(r)
}

// connect opens an MCP session at the gateway with these headers.
func (g *gatewayRun) connect(ctx context.Context, hdr map[string]string) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: &http.Client{Transport: headers{hdr, http.DefaultTransport}}, MaxRetries: -1}
	return mcp.NewClient(&mcp.Implementation{Name: "pinfold-test", Version: "1"}, nil).Connect(ctx, tr, nil)
}

// callText calls a tool and returns its text, structured content and
// whether it is a tool error; a protocol error fails the test.
func callText(ctx context.Context, t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text, out := toolResult(r)
	return text, out, r.IsError
}

// toolResult is a tool result's text, and its structured content when it
// is not an error.
func toolResult(r *mcp.CallToolResult) (string, map[string]any) {
	var text strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var out map[string]any
	if b, _ := json.Marshal(r.StructuredContent); !r.IsError {
		json.Unmarshal(b, &out)
	}
	return text.String(), out
}

// addToken makes an owner token with `launcher serve token add`.
func addToken(t *testing.T, store, name string, caps ...string) string {
	t.Helper()
	args := []string{"serve", "token", "add", name, "--tokens", store}
	for _, c := range caps {
		args = append(args, "--cap", c)
	}
	out, err := exec.Command(itEnv.launcher, args...).Output()
	if err != nil {
		t.Fatalf("token add: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// The gateway end to end, on loopback, with the go-sdk's client: an
// owner works in the policy's workspace; a guest (no token) and a
// caller with a token that is not valid get a new empty workspace each,
// and two guests at once cannot see each other's files; full access is
// refused without host.execute and given with it; a session cannot
// reach the gateway's listener; failed authentications from one address
// are rate-limited; and when it is all over, no session is left: no
// process, no directory.
func TestIntegrationGateway(t *testing.T) {
	// The project is a person's (uid 1000), not root's: full access runs
	// as its owner, and is refused for a root-owned one.
	s := newSandboxAs(t, 1000)
	s.file(t, filepath.Join(s.ws, "hello.txt"), "the owner's project\n")
	store := filepath.Join(t.TempDir(), "tokens.json") // root's, as serve's store must be
	owner := addToken(t, store, "owner")
	admin := addToken(t, store, "admin", "host.execute")
	p := proxyPol()
	// Loopback is open to the owner's sessions (a local service), but
	// never the gateway's own listener there.
	p.netExtra = "block_all = false\nunsafe_allow_private = [\"127.0.0.0/8\"]\n"
	up := upstream(t)
	p.extra = "[commands]\nauto = [\"echo\", \"cat\", \"ls\", \"id\"]\napproval = [\"touch\"]\ntimeout = \"20s\"\n"
	// What a gateway killed outright left: a guest's workspace mount,
	// which its next start unmounts before removing the directory.
	left := filepath.Join(s.dir, "state", "sessions", "LEFTOVER", "workspace")
	if err := os.MkdirAll(left, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(s.dir, "state"), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", left, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(left, unix.MNT_DETACH) })
	// And that guest's backup store, kept elsewhere by its workspace's path.
	leftStore, err := storeDirFor(left)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(leftStore, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(leftStore) })
	g := startGateway(t, s, p, store, "--max-sessions", "6", "--idle-timeout", "2m", "--auth-failures", "30", "--guest-workspace", "2MiB")
	if m := mountsUnder(t, g.state); len(m) > 0 {
		t.Errorf("mounts of the last run left under the state directory: %q", m)
	}
	if _, err := os.Lstat(leftStore); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the backup store of the last run's guest is still there: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	// The owner: the policy's workspace, under its rules.
	os_, err := g.connect(ctx, bearer(owner))
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	text, out, isErr := callText(ctx, t, os_, "read_file", map[string]any{"path": "hello.txt"})
	if isErr || out["content"] != "the owner's project\n" {
		t.Errorf("owner read_file: %s", text)
	}
	text, out, _ = callText(ctx, t, os_, "run_command", map[string]any{"command": "id -u"})
	if out["stdout"] == "0\n" || out["exit_code"] != 0.0 {
		t.Errorf("owner's command ran as root or failed: %s", text)
	}
	// What the policy leaves to the person is refused: no one answers here.
	if text, _, isErr = callText(ctx, t, os_, "run_command", map[string]any{"command": "touch x"}); !isErr {
		t.Errorf("a command that needs the person ran: %s", text)
	}
	mustNotExist(t, filepath.Join(s.ws, "x"), "a command no one approved ran")
	// Egress to the gateway's own listener is refused, though loopback
	// is allowed: the control, another loopback server, is reached.
	gw := strings.TrimSuffix(g.url, "/mcp") + "/healthz"
	if text, _, isErr = callText(ctx, t, os_, "fetch", map[string]any{"url": gw}); !isErr || !strings.Contains(text, "ssrf.self") {
		t.Errorf("the session reached the gateway: %s", text)
	}
	if text, _, isErr = callText(ctx, t, os_, "fetch", map[string]any{"url": up + "/ok"}); isErr || !strings.Contains(text, "upstream says /ok") {
		t.Errorf("control: the loopback upstream was not reached: %s", text)
	}
	if text, out, _ = callText(ctx, t, os_, "run_command", map[string]any{"command": "cat < /dev/tcp/127.0.0.1/" + portOf(g.url)}); out["exit_code"] == 0.0 {
		t.Errorf("a command reached the gateway: %s", text)
	}

	// Two guests at once, and a caller whose token is not valid: each a
	// new empty workspace, none of the owner's files, none of each other's.
	guestA, err := g.connect(ctx, nil)
	if err != nil {
		t.Fatalf("guest: %v", err)
	}
	guestB, err := g.connect(ctx, bearer("pft_not-a-token"))
	if err != nil {
		t.Fatalf("invalid token: %v", err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"guest": guestA, "invalid token": guestB} {
		if text, _, isErr := callText(ctx, t, cs, "read_file", map[string]any{"path": "hello.txt"}); !isErr {
			t.Errorf("%s read the owner's file: %s", name, text)
		}
		if text, _, isErr := callText(ctx, t, cs, "read_file", map[string]any{"path": filepath.Join(s.ws, "hello.txt")}); !isErr {
			t.Errorf("%s read the owner's file by its path: %s", name, text)
		}
	}
	if text, _, isErr = callText(ctx, t, guestA, "write_file", map[string]any{"path": "mine.txt", "content": "guest A's\n"}); isErr {
		t.Fatalf("guest write_file: %s", text)
	}
	// A guest's workspace is a file system of --guest-workspace (2 MiB):
	// two files of 900 KiB fit, a third does not; guest B's is its own.
	if m := mountsUnder(t, g.state); len(m) != 2 {
		t.Errorf("two guests live, mounts under the state directory: %q", m)
	}
	big := strings.Repeat("g", 900<<10)
	for i, want := range []bool{true, true, false} {
		text, _, isErr := callText(ctx, t, guestA, "write_file", map[string]any{"path": fmt.Sprintf("big%d", i), "content": big})
		if isErr == want {
			t.Errorf("guest A's 900 KiB file %d: written %v, want %v: %.300s", i, !isErr, want, text)
		}
	}
	if text, _, isErr = callText(ctx, t, guestB, "write_file", map[string]any{"path": "big0", "content": big}); isErr {
		t.Errorf("guest B's first 900 KiB file: %.300s", text)
	}
	if _, out, _ = callText(ctx, t, guestA, "list_dir", map[string]any{}); !strings.Contains(fmt.Sprint(out["entries"]), "mine.txt") {
		t.Errorf("guest A does not see its own file: %v", out)
	}
	if _, out, _ = callText(ctx, t, guestB, "list_dir", map[string]any{}); strings.Contains(fmt.Sprint(out["entries"]), "mine.txt") {
		t.Errorf("guest B sees guest A's file: %v", out)
	}
	if text, out, _ = callText(ctx, t, guestB, "run_command", map[string]any{"command": "cat " + g.state + "/sessions/*/workspace/mine.txt"}); strings.Contains(fmt.Sprint(out["stdout"]), "guest A") {
		t.Errorf("guest B's command read guest A's file: %s", text)
	}
	if text, out, _ = callText(ctx, t, guestA, "run_command", map[string]any{"command": "cat " + filepath.Join(s.ws, "hello.txt")}); strings.Contains(fmt.Sprint(out["stdout"]), "owner") {
		t.Errorf("a guest's command read the owner's project: %s", text)
	}

	// Full access: refused without the capability (never turned into
	// safe mode), given with it.
	full := func(tok string) map[string]string {
		h := map[string]string{"Pinfold-Mode": "full"}
		if tok != "" {
			h["Authorization"] = "Bearer " + tok
		}
		return h
	}
	for who, tok := range map[string]string{"owner without host.execute": owner, "guest": ""} {
		if cs, err := g.connect(ctx, full(tok)); err == nil {
			cs.Close()
			t.Errorf("%s got full access", who)
		} else if !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("%s: full access refused, but not as forbidden: %v", who, err)
		}
	}
	// The refusal says why (the SDK's client shows only the status).
	if code, body := rawPost(t, g.url, full(owner), initialize); code != http.StatusForbidden || !strings.Contains(body, "host.execute") {
		t.Errorf("full access without the capability: %d %q", code, body)
	}
	fs, err := g.connect(ctx, full(admin))
	if err != nil {
		t.Fatalf("full access with host.execute: %v", err)
	}
	if text, out, _ = callText(ctx, t, fs, "run_command", map[string]any{"command": "id -u; cat hello.txt"}); out["stdout"] != "1000\nthe owner's project\n" {
		t.Errorf("full access: %s", text)
	}
	if tl, err := fs.ListTools(ctx, nil); err != nil || slices.ContainsFunc(tl.Tools, func(x *mcp.Tool) bool { return x.Name == "execute_code" }) {
		t.Errorf("full access offers Code Mode, or lists nothing: %v", err)
	}

	// No session's id is in any command line (a local user could read it
	// there and use the session).
	pids := descendants(g.cmd.Process.Pid)
	for _, cs := range []*mcp.ClientSession{os_, guestA, guestB, fs} {
		for _, pid := range pids {
			if strings.Contains(strings.Join(cmdline(pid), " "), cs.ID()) {
				t.Errorf("session id %s in the command line of pid %d: %q", cs.ID(), pid, cmdline(pid))
			}
		}
	}
	// The end: every session closed, then nothing of them is left.
	if len(pids) < 4 {
		t.Errorf("%d processes under the gateway with 4 sessions live", len(pids))
	}
	for _, cs := range []*mcp.ClientSession{os_, guestA, guestB, fs} {
		cs.Close()
	}
	waitUntil(t, 60*time.Second, "every session ended", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	if m := mountsUnder(t, g.state); len(m) > 0 {
		t.Errorf("guests' workspaces still mounted after their sessions: %q", m)
	}
	if err := gone(pids); err != nil {
		t.Error(err)
	}
	// Failed authentications from one address: after --auth-failures,
	// 429 with Retry-After for bad tokens until the bucket refills; a
	// valid token is still served (another user of the address cannot
	// keep the owner out), and a request without a token is still a
	// guest.
	var last *http.Response
	_ = io.Discard
	for i := 0; i < 40; i++ {
		last = post(t, g.url, map[string]string{"Authorization": "Bearer wrong"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if last.StatusCode == http.StatusTooManyRequests {
			break
		}
	}
	if last.StatusCode != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Errorf("40 bad tokens from one address: last answer %d, Retry-After %q", last.StatusCode, last.Header.Get("Retry-After"))
	}
	if last := post(t, g.url, map[string]string{"Authorization": "Bearer wrong"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); last.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a bad token from the limited address: %d, want 429", last.StatusCode)
	}
	if cs, err := g.connect(ctx, bearer(owner)); err != nil {
		t.Errorf("the owner's token from an address others had rate-limited: %v", err)
	} else {
		cs.Close()
	}

	// A request without a token is still a guest: a session the gateway
	// ends when it stops.
	if code, body := rawPost(t, g.url, nil, initialize); code != http.StatusOK {
		t.Errorf("a guest after the rate limit: %d %q", code, body)
	}
	pids = descendants(g.cmd.Process.Pid)
	if len(pids) == 0 {
		t.Error("no session under the gateway")
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	if err := g.cmd.Wait(); err != nil {
		t.Errorf("gateway stopped with %v", err)
	}
	if err := gone(pids); err != nil {
		t.Errorf("after the gateway stopped: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(g.state, "sessions")); len(ents) != 0 {
		t.Errorf("session directories left: %v", ents)
	}
	logs, _ := os.ReadDir(filepath.Join(g.state, "logs"))
	if len(logs) < 5 {
		t.Errorf("%d session logs, want one per session", len(logs))
	}
}

// initialize is an MCP initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends body to url as an MCP client would, with hdr, and returns
// the answer with its body read.
func post(t *testing.T, url string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

// rawPost is post's status and body.
func rawPost(t *testing.T, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	resp := post(t, url, hdr, body)
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// upstream is an HTTP server on loopback for the test's life.
func upstream(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "upstream says "+r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// portOf is the port of a URL's host.
func portOf(url string) string {
	host := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	return host[strings.LastIndex(host, ":")+1:]
}

// descendants are every live process under pid, by role "pid N".
func descendants(pid int) map[string]int {
	children := procChildren()
	out := map[string]int{}
	queue := []int{pid}
	for len(queue) > 0 && len(out) < 10000 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out["pid "+strconv.Itoa(c)] = c
			queue = append(queue, c)
		}
	}
	return out
}

// waitUntil polls cond until it holds or limit passes.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A storm of bad and good requests — malformed JSON, batches, oversized
// bodies, unknown session ids, requests that are not initialize, and
// 1,000 well-formed session attempts, with 200 slow clients holding half-sent
// requests throughout — gets only protocol answers (400, 404, 413,
// 503 when full, 200), never a crash; no more sessions than the limit
// are ever held, and once the storm's sessions are closed nothing of
// them is left: no process, no session directory, no uid in use.
func TestIntegrationGatewayStorm(t *testing.T) {
	s := newSandbox(t)
	store := filepath.Join(s.dir, "tokens.json")
	p := componentsPol()
	g := startGateway(t, s, p, store, "--max-sessions", "4")
	idsBefore := idFiles()
	// DNS rebinding: a loopback listener asked for another host starts
	// nothing.
	if code, body := rawPost(t, g.url, map[string]string{"Host": "evil.example.com"}, initialize); code != http.StatusForbidden {
		t.Errorf("Host evil.example.com: %d %q", code, body)
	}
	// Nor does a request the SDK would refuse for its type.
	if code, body := rawPost(t, g.url, map[string]string{"Content-Type": "text/plain"}, initialize); code != http.StatusUnsupportedMediaType {
		t.Errorf("Content-Type text/plain: %d %q", code, body)
	}
	if ents, _ := os.ReadDir(filepath.Join(g.state, "logs")); len(ents) != 0 {
		t.Errorf("a rebinding or mistyped request started a session: %v", ents)
	}
	// 200 slow clients: half a request each, held through the storm.
	host := strings.TrimSuffix(strings.TrimPrefix(g.url, "http://"), "/mcp")
	for range 200 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n")
	}
	bodies := []string{
		initialize,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"`,
		`[` + initialize + `,` + initialize + `]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"1.0","id":1,"method":"initialize"}`,
		`"` + strings.Repeat("A", 9<<20) + `"`,
		"\x00\xff",
	}
	type answer struct {
		code int
		sid  string
	}
	// 2,000 requests: every other one a well-formed initialize (1,000
	// session attempts in a burst), the rest the bad mix.
	answers := make(chan answer, 2000)
	sem := make(chan struct{}, 32)
	for i := range 2000 {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			hdr := map[string]string{}
			if i%5 == 1 {
				hdr["Mcp-Session-Id"] = fmt.Sprintf("GUESS%021d", i)
			}
			body := bodies[i%len(bodies)]
			if i%len(bodies) == 5 && i > 200 {
				body = bodies[0] // the 9 MiB body a few times only
			}
			if i%2 == 0 {
				body, hdr = initialize, map[string]string{}
			}
			req, _ := http.NewRequest("POST", g.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{code: -1}
				return
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			answers <- answer{resp.StatusCode, resp.Header.Get("Mcp-Session-Id")}
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(answers)
	counts := map[int]int{}
	var sids []string
	for a := range answers {
		counts[a.code]++
		if a.sid != "" {
			sids = append(sids, a.sid)
		}
	}
	for code, n := range counts {
		switch code {
		case 200, 400, 404, 413, 503:
		default:
			t.Errorf("%d answers with status %d", n, code)
		}
	}
	if counts[200] == 0 || counts[503] == 0 || counts[400] == 0 || counts[404] == 0 || counts[413] == 0 {
		t.Errorf("answers %v: want sessions, refusals when full, bad requests, unknown sessions and oversized bodies", counts)
	}
	// --max-sessions 4: guests get at most half.
	if len(sids) > 2 || len(sids) != counts[200] {
		t.Errorf("%d guest sessions made of %d answered 200, want at most 2", len(sids), counts[200])
	}
	if n := len(descendants(g.cmd.Process.Pid)); n == 0 {
		t.Error("no session process after the storm")
	}
	var health struct{ Sessions, MaxSessions int }
	if resp, err := http.Get(strings.TrimSuffix(g.url, "/mcp") + "/healthz"); err == nil {
		json.NewDecoder(resp.Body).Decode(&health)
		resp.Body.Close()
	}
	if health.Sessions > 4 {
		t.Errorf("health: %d sessions, over the limit of 4", health.Sessions)
	}
	for _, sid := range sids {
		req, _ := http.NewRequest("DELETE", g.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	waitUntil(t, 60*time.Second, "the storm's sessions ended", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	waitUntil(t, 30*time.Second, "the sessions' uids released", func() bool { return idFiles() <= idsBefore })
	t.Logf("answers: %v; %d sessions", counts, len(sids))
}

// idFiles counts the throwaway uids in use (their lock files).
func idFiles() int {
	ents, _ := os.ReadDir("/run/pinfold/ids")
	return len(ents)
}

// A sandbox that fails while a task runs stops the task and ends the
// session: the call in flight fails, the next is refused, nothing runs
// again — least of all with the host's permissions — and the session's
// log records the mode asked for, the mode in effect and why it ended.
func TestIntegrationGatewaySandboxFailure(t *testing.T) {
	s := newSandbox(t)
	store := filepath.Join(s.dir, "tokens.json")
	owner := addToken(t, store, "owner", "host.execute")
	g := startGateway(t, s, componentsPol(), store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := g.connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The control: the session works.
	if text, _, isErr := callText(ctx, t, cs, "run_command", map[string]any{"command": "echo up"}); isErr {
		t.Fatalf("control: %s", text)
	}
	// This workspace is root's: full access, which runs as its owner, is
	// refused even with host.execute, and says why.
	if code, body := rawPost(t, g.url, map[string]string{"Authorization": "Bearer " + owner, "Pinfold-Mode": "full"}, initialize); code != http.StatusForbidden || !strings.Contains(body, "belongs to root") {
		t.Errorf("full access to a root-owned workspace: %d %q", code, body)
	}
	inFlight := make(chan error, 1)
	go func() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep 60; touch late"}})
		if err == nil && !r.IsError {
			err = fmt.Errorf("it finished: %+v", r.StructuredContent)
		} else if err == nil {
			err = errors.New("tool error")
		}
		inFlight <- err
	}()
	var session map[string]int
	waitUntil(t, 30*time.Second, "the session's components and the command", func() bool {
		for _, pid := range descendants(g.cmd.Process.Pid) {
			if cmdline(pid)[0] == itEnv.launcher && slices.Contains(cmdline(pid), "--policy-sha256") {
				session = sessionPids(pid)
			}
		}
		return session["fs"] != 0 && session["bash"] != 0 && anyRuns(g.cmd.Process.Pid, "sleep")
	})
	if err := syscall.Kill(session["fs"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-inFlight:
		t.Logf("the call in flight: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the call in flight did not end with its sandbox")
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo again"}}); err == nil {
		t.Error("the session answered after its sandbox failed")
	}
	waitUntil(t, 30*time.Second, "the session gone", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	mustNotExist(t, filepath.Join(s.ws, "late"), "the stopped task ran on")
	logs, _ := filepath.Glob(filepath.Join(g.state, "logs", "*.log"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	for _, want := range []string{`"mode_asked":"safe","mode":"safe"`, `"msg":"session ended"`, `"why":"the session's sandbox ended`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("session log lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(g.log.String(), "full-access") || strings.Contains(string(b), `"mode":"full"`) {
		t.Error("something ran with full access")
	}
}

// cmdline is a process's argv ("" alone when it cannot be read).
func cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return []string{""}
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// anyRuns says whether a process under pid runs the program name.
func anyRuns(pid int, name string) bool {
	for _, p := range descendants(pid) {
		if filepath.Base(cmdline(p)[0]) == name {
			return true
		}
	}
	return false
}

// The session lifecycle and the edges of the HTTP boundary: HTTPS with a
// self-signed certificate whose printed fingerprint the client pins; a
// token revoked mid-session stops its session's next request; an idle
// session ends by itself; forwarded-for headers do not move a caller out
// of its rate-limit bucket; a request that is not HTTP gets 400.
func TestIntegrationGatewayLifecycle(t *testing.T) {
	s := newSandbox(t)
	store := filepath.Join(s.dir, "tokens.json")
	owner := addToken(t, store, "owner")
	other := addToken(t, store, "other")
	g := startGateway(t, s, componentsPol(), store, "--tls-self", "--idle-timeout", "3s", "--auth-failures", "3")
	if !strings.HasPrefix(g.url, "https://127.0.0.1:") {
		t.Fatalf("--tls-self serves %s", g.url)
	}
	var fp string
	waitUntil(t, 10*time.Second, "the certificate's fingerprint", func() bool {
		_, after, ok := strings.Cut(g.log.String(), "sha256 fingerprint ")
		fp, _, _ = strings.Cut(after, ":")
		return ok && len(fp) == 64
	})
	pinned := &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
		if hex.EncodeToString(sum[:]) != fp {
			return errors.New("certificate does not match the printed fingerprint")
		}
		return nil
	}}
	// The helpers use the default transport; it trusts this certificate
	// for the test's length.
	http.DefaultTransport.(*http.Transport).TLSClientConfig = pinned
	defer func() { http.DefaultTransport.(*http.Transport).TLSClientConfig = nil }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	// Revocation: the next request of the token's session is refused.
	cs, err := g.connect(ctx, bearer(other))
	if err != nil {
		t.Fatalf("over https: %v", err)
	}
	if text, _, isErr := callText(ctx, t, cs, "list_dir", map[string]any{}); isErr {
		t.Fatalf("control: %s", text)
	}
	// A protocol version the sessions do not serve is refused before the
	// SDK, which logged the header whole (60 KiB a request).
	before := len(g.log.String())
	for range 10 {
		hdr := map[string]string{"Authorization": "Bearer " + other, "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2026-07-28" + strings.Repeat("9", 60000)}
		if code, body := rawPost(t, g.url, hdr, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != http.StatusBadRequest {
			t.Errorf("an unserved protocol version: %d %.200q", code, body)
		}
	}
	if grew := len(g.log.String()) - before; grew > 10000 {
		t.Errorf("10 requests with a 60 KiB protocol version grew the gateway's log by %d bytes", grew)
	}
	if out, err := exec.Command(itEnv.launcher, "serve", "token", "revoke", "other", "--tokens", store).CombinedOutput(); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_dir", Arguments: map[string]any{}}); err == nil {
		t.Error("a revoked token's session still answered")
	}
	// The session ended with its token; a new token of the same name is
	// another caller and does not get it.
	sid := cs.ID()
	cs.Close()
	renewed := addToken(t, store, "other")
	if code, _ := rawPost(t, g.url, map[string]string{"Authorization": "Bearer " + renewed, "Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); code == http.StatusOK {
		t.Error("a new token of a revoked token's name got its session")
	}
	waitUntil(t, 30*time.Second, "the revoked token's session ended", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0
	})

	// Idle: a session nobody calls ends by itself, and is gone.
	cs, err = g.connect(ctx, bearer(owner))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, _, isErr := callText(ctx, t, cs, "list_dir", map[string]any{}); isErr {
		t.Fatalf("control: %s", text)
	}
	waitUntil(t, 60*time.Second, "the idle session ended", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_dir", Arguments: map[string]any{}}); err == nil {
		t.Error("an ended session answered")
	}

	// Forwarded-for headers name no one: the bucket is the socket's.
	var code int
	for i := 0; i < 10 && code != http.StatusTooManyRequests; i++ {
		code, _ = rawPost(t, g.url, map[string]string{"Authorization": "Bearer wrong"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	}
	if code != http.StatusTooManyRequests {
		t.Fatalf("bad tokens: %d, never 429", code)
	}
	for _, h := range []string{"X-Forwarded-For", "X-Real-IP", "Forwarded"} {
		v := "203.0.113.9"
		if h == "Forwarded" {
			v = "for=203.0.113.9"
		}
		if code, _ := rawPost(t, g.url, map[string]string{"Authorization": "Bearer wrong", h: v}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusTooManyRequests {
			t.Errorf("%s moved the caller out of its bucket: %d", h, code)
		}
	}

	// Not HTTP at all.
	c, err := tls.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(g.url, "https://"), "/mcp"), pinned)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "NOT HTTP AT ALL\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("garbage got %q", line)
	}
}

// A call in flight does not hold a session open: a DELETE ends it at
// once, its command killed, and a gateway told to stop with a call in
// flight stops promptly, leaving nothing.
func TestIntegrationGatewayEndWithCallInFlight(t *testing.T) {
	s := newSandbox(t)
	store := filepath.Join(s.dir, "tokens.json")
	owner := addToken(t, store, "owner")
	g := startGateway(t, s, componentsPol(), store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	busy := func() *mcp.ClientSession {
		cs, err := g.connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
		if err != nil {
			t.Fatal(err)
		}
		go cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep 120"}})
		waitUntil(t, 30*time.Second, "the command running", func() bool { return anyRuns(g.cmd.Process.Pid, "sleep") })
		return cs
	}
	cs := busy()
	start := time.Now()
	// A DELETE as the client sends it (the SDK's Close waits for its own
	// calls in flight first).
	req, _ := http.NewRequest("DELETE", g.url, nil)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Authorization", "Bearer "+owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	waitUntil(t, 30*time.Second, "the session gone after DELETE", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	t.Logf("ended %v after DELETE with a call in flight", time.Since(start).Round(time.Millisecond))
	// Not a speed test: the call's end is not waited for (the transport's
	// own wait before it signals is 10 s).
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the session waited %v for its call in flight", d)
	}

	// Revoking the token ends its session with nothing more from the
	// client, and the command it has in flight.
	third := addToken(t, store, "third")
	cs, err = g.connect(ctx, map[string]string{"Authorization": "Bearer " + third})
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep 120"}})
	waitUntil(t, 30*time.Second, "the command running", func() bool { return anyRuns(g.cmd.Process.Pid, "sleep") })
	revoked := time.Now()
	if out, err := exec.Command(itEnv.launcher, "serve", "token", "revoke", "third", "--tokens", store).CombinedOutput(); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	waitUntil(t, 30*time.Second, "the revoked token's session gone", func() bool {
		ents, _ := os.ReadDir(filepath.Join(g.state, "sessions"))
		return len(ents) == 0 && len(descendants(g.cmd.Process.Pid)) == 0
	})
	t.Logf("ended %v after its token was revoked", time.Since(revoked).Round(time.Millisecond))
	if !strings.Contains(g.log.String(), "its token was revoked") {
		t.Error("the gateway's log does not say the session ended with its token")
	}

	// A session serves at most 8 requests at once: more get 429 before
	// their bodies are read (what bounds the gateway's memory).
	cs, err = g.connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Authorization": "Bearer " + owner, "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-06-18"}
	codes := make(chan int, 12)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			code, _ := rawPost(t, g.url, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"sleep 1"}}}`, 100+i))
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[http.StatusTooManyRequests] == 0 || count[http.StatusOK] == 0 || count[http.StatusOK] > 8 {
		t.Errorf("12 calls at once in one session: %v", count)
	}
	cs.Close()

	busy()
	pids := descendants(g.cmd.Process.Pid)
	start = time.Now()
	g.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the gateway did not stop with a call in flight")
	}
	t.Logf("stopped %v after SIGTERM with a call in flight", time.Since(start).Round(time.Millisecond))
	if err := gone(pids); err != nil {
		t.Error(err)
	}
}

// Plain HTTP on an address that is not loopback (one the test gives a
// network namespace of its own) needs --insecure-plain-http, and then
// says that tokens travel unencrypted; HTTPS there needs no flag.
func TestIntegrationGatewayPlainHTTP(t *testing.T) {
	s := newSandbox(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		requireFeature(t, "unshare(1) for a network namespace", false, err.Error())
	}
	path, hash := s.writePolicy(t, componentsPol())
	store := filepath.Join(s.dir, "tokens.json")
	serve := func(extra string) (stdout, stderr string, code int) {
		t.Helper()
		script := fmt.Sprintf("ip link set lo up && ip addr add 10.200.0.1/32 dev lo && exec %s serve --policy-sha256 %s --policy %s --listen 10.200.0.1:0 --state %s --tokens %s %s",
			itEnv.launcher, hash, path, filepath.Join(s.dir, "state"), store, extra)
		cmd := exec.Command("unshare", "-n", "sh", "-c", script)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out, errb syncbuf.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Serving: stop it once it said where; refused: it ends by itself.
		deadline := time.After(30 * time.Second)
		for !strings.Contains(out.String(), "serving MCP on") {
			select {
			case <-done:
				return out.String(), errb.String(), cmd.ProcessState.ExitCode()
			case <-deadline:
				cmd.Process.Kill()
				<-done
				t.Fatalf("serve %s: no answer; stderr %s", extra, errb.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	if _, stderr, code := serve(""); code != 120 || !strings.Contains(stderr, "which is not loopback, would carry tokens unencrypted") {
		t.Errorf("plain HTTP without the flag: exit %d, %s", code, stderr)
	}
	stdout, stderr, code := serve("--insecure-plain-http")
	if code != 0 || !strings.Contains(stdout, "serving MCP on http://10.200.0.1:") ||
		!strings.Contains(stderr, "launcher: warning: serving plain HTTP on 10.200.0.1:0: owner tokens travel unencrypted") {
		t.Errorf("plain HTTP with the flag: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	stdout, stderr, code = serve("--tls-self")
	if code != 0 || !strings.Contains(stdout, "serving MCP on https://10.200.0.1:") || strings.Contains(stderr, "unencrypted") {
		t.Errorf("HTTPS: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// mountsUnder lists the mount points in this mount namespace beneath dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var under []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		// The mount point's space, tab, newline and backslash are octal.
		mp := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(f[4])
		if strings.HasPrefix(mp, dir+"/") {
			under = append(under, mp)
		}
	}
	return under
}

// The gateway's TLS key, given loose modes (0644) in a directory every
// session's policy reads, is out of every session's reach: a guest's
// policy leaves the directory out (a guest read the key: its policy kept
// every read path in a system tree but /etc/pinfold), and an owner
// session's launcher keeps it as its own (bash refuses a command that
// names it; the owner read it). The controls: the owner reads the
// certificate beside it, a guest another directory of the policy's.
func TestIntegrationGatewayHidesItsFiles(t *testing.T) {
	s := newSandbox(t)
	// In a system tree (guests keep only those) and named by no other test.
	dir, err := os.MkdirTemp("/etc", "pinfold-it-gw-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	other, err := os.MkdirTemp("/etc", "pinfold-it-gw-other-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	for _, d := range []string{dir, other} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "gw.crt"), filepath.Join(dir, "gw.key")
	s.file(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	s.file(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))) // 0644: loose
	s.file(t, filepath.Join(other, "public.txt"), "for everyone\n")
	store := filepath.Join(s.dir, "tokens.json")
	owner := addToken(t, store, "owner")
	p := componentsPol()
	p.read = []string{dir, other}
	p.extra = "[commands]\nauto = [\"cat\"]\ntimeout = \"20s\"\n"
	g := startGateway(t, s, p, store, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(g.url, "https://127.0.0.1:") {
		t.Fatalf("the gateway serves at %s", g.url)
	}
	// Owner sessions are kept from it by less than guests: said at the start.
	if want := "launcher: warning: serve: the policy's " + dir + " holds the gateway's own " + keyFile; !strings.Contains(g.log.String(), want) {
		t.Errorf("no warning %q in the gateway's stderr", want)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	connect := func(ctx context.Context, hdr map[string]string) *mcp.ClientSession {
		t.Helper()
		client := &http.Client{Transport: headers{hdr, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pinfold-test", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: client, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(cs *mcp.ClientSession, command string) (string, string) {
		text, out, _ := callText(ctx, t, cs, "run_command", map[string]any{"command": command})
		stdout, _ := out["stdout"].(string)
		return stdout, text
	}

	os_ := connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
	if stdout, text := run(os_, "cat "+certFile); !strings.Contains(stdout, "BEGIN CERTIFICATE") {
		t.Errorf("control: the owner does not read the certificate beside the key: %s", text)
	}
	if stdout, text := run(os_, "cat "+keyFile); strings.Contains(stdout+text, "PRIVATE KEY") || !strings.Contains(text, "belongs to the launcher") {
		t.Errorf("the owner's session and the gateway's key: %.300s", text)
	}
	// A command that names no file of the gateway's reads the directory:
	// the certificate beside the key (the control), not the key, which
	// the sandbox covers.
	if stdout, text := run(os_, "cat "+dir+"/*"); !strings.Contains(stdout, "BEGIN CERTIFICATE") || strings.Contains(stdout+text, "PRIVATE KEY") {
		t.Errorf("the owner's session read the key's directory with a glob: %.600s", text)
	}

	guest := connect(ctx, nil)
	if stdout, text := run(guest, "cat "+filepath.Join(other, "public.txt")); stdout != "for everyone\n" {
		t.Errorf("control: a guest does not read the policy's other directory: %s", text)
	}
	for _, command := range []string{"cat " + keyFile, "cat " + dir + "/*"} {
		if stdout, text := run(guest, command); strings.Contains(stdout+text, "PRIVATE KEY") {
			t.Errorf("a guest read the gateway's key (%s): %.300s", command, text)
		}
	}
}

// The gateway's token store, replaced by rename on every token change,
// stays out of an owner's session whose policy reads the directory above
// it, also for a command that runs while it is replaced: the store is
// kept in a directory of its own, which every sandbox covers whole. The
// command keeps reading the store (by a name built at run time, which no
// check of the command line sees) while `launcher serve token add` writes
// a new one, and reads neither, and finds no file there at all: the
// cover, not the store's mode, is what refuses it. A neighbour of that
// directory is read (the control), and the loop saw the new token made.
func TestIntegrationGatewayStoreReplacedStaysCovered(t *testing.T) {
	s := newSandbox(t)
	dir, err := os.MkdirTemp("/etc", "pinfold-it-gw-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	s.file(t, filepath.Join(dir, "public.txt"), "for everyone\n")
	store := filepath.Join(dir, "gw", "tokens.json") // gw: made 0700 by token add
	owner := addToken(t, store, "owner")
	p := componentsPol()
	p.read = []string{dir}
	p.extra = "[commands]\nauto = [\"cat\", \"seq\", \"sleep\"]\ntimeout = \"30s\"\n"
	g := startGateway(t, s, p, store)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := g.connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	// The loop's sleep, named so that no other process is taken for it.
	stop, pause := filepath.Join(dir, "stop"), "0.05"+strings.TrimPrefix(filepath.Base(dir), "pinfold-it-gw-")
	command := "cat " + dir + "/public.txt; f=$(printf '%s/g%s/tokens.json' " + dir + " w); " +
		"for i in $(seq 400); do [ -e " + stop + " ] && break; cat \"$f\"; sleep " + pause + "; done; " +
		"[ -e " + stop + " ] && echo saw-stop; echo end"
	added := make(chan error, 1)
	go func() {
		added <- func() error {
			if !waitForProcess("sleep", pause, 30*time.Second) {
				return errors.New("the command never started")
			}
			out, err := exec.Command(itEnv.launcher, "serve", "token", "add", "later", "--tokens", store).Output()
			if err != nil {
				return fmt.Errorf("token add: %v", err)
			}
			if strings.TrimSpace(string(out)) == "" {
				return errors.New("token add printed no token")
			}
			time.Sleep(time.Second) // the loop reads the path many times
			return os.WriteFile(stop, nil, 0o644)
		}()
	}()
	text, out, _ := callText(ctx, t, cs, "run_command", map[string]any{"command": command})
	if err := <-added; err != nil {
		t.Fatalf("replacing the store: %v (%.600s)", err, text)
	}
	stdout, _ := out["stdout"].(string)
	if !strings.Contains(stdout, "for everyone") || !strings.Contains(stdout, "saw-stop\nend\n") {
		t.Fatalf("control: the command did not read the neighbour, or did not run until the store was replaced: %.600s", text)
	}
	for _, secret := range []string{"sha256", "\"owner\"", "\"later\"", "tokens"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("the owner's session read the gateway's token store (%s): %.600s", secret, text)
		}
	}
	// The store is root's and 0600, and the sandbox's identity a
	// throwaway one, so its mode refuses it too: what keeps it out here
	// must be the cover, under which there is no such file, before the
	// replacement and after; never a file there that cannot be opened.
	stderr, _ := out["stderr"].(string)
	if !strings.Contains(stderr, store+": No such file or directory") || strings.Contains(stderr, "Permission denied") {
		t.Errorf("the store's directory was not covered for the whole command: %.600s", text)
	}
}

// A full-access session ends whole: what its commands left running — a
// background job, one in a session of its own (setsid) — ends with it,
// whether the client closes it or its token is revoked. They outlived
// it (reparented to init, as the owner), a revoked token's included;
// now the session's child is in a cgroup of its own, killed at its end.
func TestIntegrationGatewayFullAccessEndsWhole(t *testing.T) {
	s := newSandboxAs(t, 1000)
	store := filepath.Join(t.TempDir(), "tokens.json")
	admin := addToken(t, store, "admin", "host.execute")
	g := startGateway(t, s, componentsPol(), store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hdr := map[string]string{"Authorization": "Bearer " + admin, "Pinfold-Mode": "full"}
	// left starts two processes that outlive their command and returns
	// their pids, killed when the test ends whatever it finds.
	left := func(cs *mcp.ClientSession) map[string]int {
		t.Helper()
		text, out, isErr := callText(ctx, t, cs, "run_command", map[string]any{
			"command": "sleep 617 >/dev/null 2>&1 </dev/null & echo $!; setsid sleep 618 >/dev/null 2>&1 </dev/null & echo $!"})
		pids := map[string]int{}
		for i, f := range strings.Fields(fmt.Sprint(out["stdout"])) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				pids[[]string{"background job", "setsid"}[i%2]] = pid
			}
		}
		if isErr || len(pids) != 2 {
			t.Fatalf("full access: starting two background processes: %s", text)
		}
		t.Cleanup(func() {
			for _, pid := range pids {
				if strings.Contains(strings.Join(cmdline(pid), " "), "sleep 61") {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
		// The control: they run past their command's end.
		time.Sleep(500 * time.Millisecond)
		for what, pid := range pids {
			if !strings.Contains(strings.Join(cmdline(pid), " "), "sleep 61") {
				t.Fatalf("control: the %s (pid %d) is not running: %q", what, pid, cmdline(pid))
			}
		}
		return pids
	}
	groups := func() []string {
		m, _ := filepath.Glob("/sys/fs/cgroup/*/pinfold/s-" + strconv.Itoa(g.cmd.Process.Pid) + "-gateway-*")
		n, _ := filepath.Glob("/sys/fs/cgroup/pinfold/s-" + strconv.Itoa(g.cmd.Process.Pid) + "-gateway-*")
		return append(m, n...)
	}
	closed, err := g.connect(ctx, hdr)
	if err != nil {
		t.Fatal(err)
	}
	pids := left(closed)
	if len(groups()) == 0 {
		t.Error("a full-access session is live, and the gateway made no cgroup for it")
	}
	closed.Close()
	if err := gone(pids); err != nil {
		t.Errorf("after the client closed the full-access session: %v", err)
	}

	revoked, err := g.connect(ctx, hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer revoked.Close()
	pids = left(revoked)
	if out, err := exec.Command(itEnv.launcher, "serve", "token", "revoke", "admin", "--tokens", store).CombinedOutput(); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if err := gone(pids); err != nil {
		t.Errorf("after the session's token was revoked: %v", err)
	}
	// Nor is its group left.
	waitUntil(t, 20*time.Second, "the full-access sessions' cgroups removed", func() bool { return len(groups()) == 0 })
}

// An owner's session does not read a guest's workspace, though its
// policy reads the directory the gateway's state is in: its sandbox,
// made while the guest's workspace was mounted, named that mount in its
// mount table (the name is random, not secret from it), and a command
// read the guest's files by it. Now the sessions' directory is the
// gateway's own to every owner session (PINFOLD_SELF_FILES), covered.
func TestIntegrationGatewayOwnerCannotReadGuest(t *testing.T) {
	s := newSandbox(t)
	store := filepath.Join(t.TempDir(), "tokens.json")
	owner := addToken(t, store, "owner")
	s.file(t, filepath.Join(s.dir, "beside.txt"), "beside the state\n")
	p := componentsPol()
	p.read = []string{s.dir} // holds the state directory
	p.extra = "[commands]\nauto = [\"cat\", \"sh\", \"grep\"]\ntimeout = \"20s\"\n"
	g := startGateway(t, s, p, store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	guest := g.guestWithSecret(ctx, t)
	found, _ := filepath.Glob(filepath.Join(g.state, "sessions", "*", "workspace", "secret.txt"))
	if len(found) != 1 {
		t.Fatalf("the guest's file on the host: %q", found)
	}
	own, err := g.connect(ctx, map[string]string{"Authorization": "Bearer " + owner})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	// The control: the owner reads beside the state directory.
	if text, out, _ := callText(ctx, t, own, "run_command", map[string]any{"command": "cat " + filepath.Join(s.dir, "beside.txt")}); out["stdout"] != "beside the state\n" {
		t.Fatalf("control: the owner's policy reads %s: %s", s.dir, text)
	}
	for _, c := range []string{
		"cat " + found[0],
		// A command that names nothing of the gateway's: the name from
		// the sandbox's own mount table.
		`sh -c 'for w in $(grep -o "[^ ]*/workspace " /proc/self/mountinfo); do cat $w/secret.txt; done'`,
	} {
		text, out, _ := callText(ctx, t, own, "run_command", map[string]any{"command": c})
		if strings.Contains(text+fmt.Sprint(out), "the guest's secret") {
			t.Errorf("an owner's session read the guest's file (%s): %.400s", c, text)
		}
	}
	if text, out, _ := callText(ctx, t, guest, "read_file", map[string]any{"path": "secret.txt"}); out["content"] != "the guest's secret\n" {
		t.Errorf("control: the guest reads its own file: %s", text)
	}
}

// A guest's workspace is the guest's alone on the host too: a local
// user who has its name (the host's mount table, which anyone reads,
// names a tmpfs workspace; the child's command line names the
// directory) enters neither the tmpfs nor, with --guest-workspace
// unlimited, the directory. Both were 0711 with the guest's files 0644,
// so any local user read them; the guest still works in it as before.
func TestIntegrationGatewayGuestWorkspacePrivate(t *testing.T) {
	for _, size := range []string{"2MiB", "unlimited"} {
		t.Run(size, func(t *testing.T) {
			s := newSandbox(t)
			p := componentsPol()
			p.extra = "[commands]\nauto = [\"cat\", \"sh\", \"mkdir\"]\ntimeout = \"20s\"\n"
			g := startGateway(t, s, p, filepath.Join(t.TempDir(), "tokens.json"), "--guest-workspace", size)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			guest := g.guestWithSecret(ctx, t)
			// The control: the guest's commands and fs work in it.
			if text, out, _ := callText(ctx, t, guest, "run_command", map[string]any{"command": "mkdir d && sh -c 'cat secret.txt > d/copy' && cat d/copy"}); out["stdout"] != "the guest's secret\n" {
				t.Fatalf("control: the guest's command in its workspace: %s", text)
			}
			if text, out, _ := callText(ctx, t, guest, "read_file", map[string]any{"path": "d/copy"}); out["content"] != "the guest's secret\n" {
				t.Fatalf("control: the guest's read_file: %s", text)
			}
			// A guest's commands run at SCHED_IDLE (stat's field 41 is 5);
			// the same cat run here is SCHED_OTHER (0).
			policyOf := func(stat string) string {
				f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
				if len(f) < 41-3+1 {
					return "?"
				}
				return f[41-3]
			}
			if text, out, _ := callText(ctx, t, guest, "run_command", map[string]any{"command": "cat /proc/self/stat"}); policyOf(fmt.Sprint(out["stdout"])) != "5" {
				t.Errorf("a guest's command's scheduling policy: want SCHED_IDLE (5): %s", text)
			}
			if own, err := exec.Command("/bin/cat", "/proc/self/stat").Output(); err != nil || policyOf(string(own)) != "0" {
				t.Errorf("control: cat run by the test: policy %q (%v), want 0", policyOf(string(own)), err)
			}
			// And, where a v1 cpu hierarchy is mounted at its root, in the
			// gateway's idle cpu group there, beneath the gateway's own (a session of its own is no
			// autogroup of its own in it): the launcher's own groups are
			// in other hierarchies.
			mi, _ := os.ReadFile("/proc/self/mountinfo")
			sc, _ := os.ReadFile("/proc/self/cgroup")
			if slices.ContainsFunc(classifyCgroups(string(mi), string(sc)).V1, func(m cgroupMount) bool {
				return m.Root == "/" && slices.Contains(m.Controllers, "cpu")
			}) {
				text, out, _ := callText(ctx, t, guest, "run_command", map[string]any{"command": "cat /proc/self/cgroup"})
				group := ""
				for line := range strings.Lines(fmt.Sprint(out["stdout"])) {
					if parts := strings.SplitN(strings.TrimSpace(line), ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
						group = parts[2]
					}
				}
				// Beneath the gateway's own, this test's.
				want := ""
				for line := range strings.Lines(string(sc)) {
					if parts := strings.SplitN(strings.TrimSpace(line), ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
						want = filepath.Join(parts[2], "pinfold-guests")
					}
				}
				if group != want {
					t.Errorf("a guest's command's cpu cgroup: %q, want %q: %s", group, want, text)
				}
			}
			found, _ := filepath.Glob(filepath.Join(g.state, "sessions", "*", "workspace", "secret.txt"))
			if len(found) != 1 {
				t.Fatalf("the guest's file on the host: %q", found)
			}
			// A local user (nobody) who knows the name.
			for _, path := range []string{found[0], filepath.Join(filepath.Dir(found[0]), "d", "copy")} {
				cat := exec.Command("/bin/cat", path)
				cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
				if out, err := cat.CombinedOutput(); err == nil || strings.Contains(string(out), "the guest's secret") {
					t.Errorf("a local user read the guest's %s: %v %q", path, err, out)
				}
			}
		})
	}
}

// And a gateway killed outright (SIGKILL) cannot end its full-access
// sessions' processes, but its next start does: their cgroups outlive
// it, populated, and the new gateway kills and removes them.
func TestIntegrationGatewayFullAccessAfterKill(t *testing.T) {
	s := newSandboxAs(t, 1000)
	store := filepath.Join(t.TempDir(), "tokens.json")
	admin := addToken(t, store, "admin", "host.execute")
	g := startGateway(t, s, componentsPol(), store)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := g.connect(ctx, map[string]string{"Authorization": "Bearer " + admin, "Pinfold-Mode": "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text, out, isErr := callText(ctx, t, cs, "run_command", map[string]any{"command": "setsid sleep 619 >/dev/null 2>&1 </dev/null & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(out["stdout"])))
	if isErr || err != nil {
		t.Fatalf("full access: a background process: %s", text)
	}
	sleeping := func() bool { return strings.Contains(strings.Join(cmdline(pid), " "), "sleep 619") }
	t.Cleanup(func() {
		if sleeping() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// The background process as it will stay: sleep itself, its shell
	// gone (reparented). The answer comes as bash's fork closes the
	// output pipes, just before it execs setsid, which execs sleep; a
	// process inside execve has an empty /proc/PID/cmdline, and on a
	// loaded machine it stays there for milliseconds, preempted. The
	// control, looking then, found "not running" a process that ran on
	// (CI, 2026-12-03; traced: no signal reached it until the next
	// gateway's sweep).
	settled := func() bool {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || cmdline(pid)[0] != "sleep" {
			return false
		}
		_, rest, _ := strings.Cut(string(st), ") ")
		f := strings.Fields(rest) // state ppid …
		return len(f) > 1 && f[1] != "0" && !strings.Contains(strings.Join(cmdline(atoiOr(f[1])), " "), "sleep 619")
	}
	waitUntil(t, 10*time.Second, "the background process settled as sleep, its shell gone", settled)
	// From here on, whether it runs is its pidfd's answer (readable
	// once it has exited), not a reading of /proc.
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil || !sleeping() {
		t.Fatalf("a pidfd of the background process %d: %v %q", pid, err, cmdline(pid))
	}
	defer unix.Close(pfd)
	alive := func() bool {
		for range 100 {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}, 0)
			if err != unix.EINTR {
				return err == nil && n == 0
			}
		}
		return false
	}
	old := g.cmd.Process.Pid
	g.cmd.Process.Kill()
	// Dead but not yet reaped: a zombie's pid is in use, so a gateway
	// another test package starts meanwhile (go test runs packages side
	// by side) does not take its groups for stale and sweep them before
	// the control looks (CI, 2026-12-03: the control found the process
	// gone). Reaped once the control has looked.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, old, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("wait for the gateway's end: %v", err)
	}
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/pinfold/s-" + strconv.Itoa(old) + "-gateway-*")
	more, _ := filepath.Glob("/sys/fs/cgroup/pinfold/s-" + strconv.Itoa(old) + "-gateway-*")
	groups = append(groups, more...)
	// The control: the kill left both.
	if !alive() || len(groups) == 0 {
		t.Fatalf("control: after the gateway's SIGKILL, the process runs %v (%q), its groups %q", alive(), cmdline(pid), groups)
	}
	g.cmd.Wait()
	startGateway(t, s, componentsPol(), store)
	waitUntil(t, 20*time.Second, "the dead gateway's full-access process ended by the next start", func() bool { return !alive() })
	for _, d := range groups {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dead gateway's group %s is still there: %v", d, err)
		}
	}
}

// atoiOr is s as a number, or -1.
func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// guestWithSecret connects a guest, closed when t ends, that wrote
// "the guest's secret\n" to secret.txt in its workspace.
func (g *gatewayRun) guestWithSecret(ctx context.Context, t *testing.T) *mcp.ClientSession {
	t.Helper()
	guest, err := g.connect(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { guest.Close() })
	if text, _, isErr := callText(ctx, t, guest, "write_file", map[string]any{"path": "secret.txt", "content": "the guest's secret\n"}); isErr {
		t.Fatalf("guest write_file: %s", text)
	}
	return guest
}
