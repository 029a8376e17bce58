package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/internal/syncbuf"
	"github.com/pinfold/pinfold/internal/userdb"
	"github.com/pinfold/pinfold/policy"
)

// noTokens verifies nothing: every caller is a guest.
type noTokens struct{}

func (noTokens) Verify(string) (Token, bool) { return Token{}, false }

// testGateway is a gateway whose sessions cannot start (its launcher does
// not exist), logging to the returned buffer.
func testGateway(t *testing.T) (*Gateway, *syncbuf.Buffer) {
	t.Helper()
	p := policy.Default()
	p.Version = 1
	p.Mode = policy.ModeComponents
	p.Workspace.Path = "/nonexistent"
	log := &syncbuf.Buffer{}
	g, err := New(Config{Launcher: "/nonexistent/launcher", Policy: &p, PolicyData: []byte("x"), StateDir: filepath.Join(t.TempDir(), "state"),
		Tokens: noTokens{}, Limiter: NewLimiter(10, time.Minute, 100), StartTimeout: 5 * time.Second,
		Log: slog.New(slog.NewJSONHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Shutdown(t.Context()) })
	return g, log
}

// arrived is r as a net/http server hands it over when the connection
// came to the address its Host names (the gateway checks the Host
// against that address).
func arrived(r *http.Request) *http.Request {
	local := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(r.Host))
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
}

// serve sends one request to the gateway's handler as if on loopback.
func serve(g *Gateway, method string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	r := arrived(httptest.NewRequest(method, "http://127.0.0.1:7480/mcp", strings.NewReader(body)))
	r.RemoteAddr = "127.0.0.1:40000"
	return serveRequest(g, r, hdr)
}

// serveRequest sends r to the gateway's handler as an MCP client's POST,
// with the headers hdr besides.
func serveRequest(g *Gateway, r *http.Request, hdr map[string]string) *httptest.ResponseRecorder {
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	g.Handler().ServeHTTP(w, r)
	return w
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// An Mcp-Protocol-Version the gateway's stateful sessions do not serve
// is refused before anything else, with a JSON-RPC error the SDK's
// client falls back from: the SDK let any value from 2026-07-28 on
// through and then wrote it whole into the gateway's log (a guest's
// 60 KiB header was a 60 KiB line per request), and a session-less one
// started a sandbox first.
func TestProtocolVersionHeader(t *testing.T) {
	g, log := testGateway(t)
	for _, v := range []string{"2026-07-28", "2026-07-28" + strings.Repeat("9", 60000), "9999-99-99", "2025-06-18x", "garbage"} {
		w := serve(g, http.MethodPost, map[string]string{"Mcp-Protocol-Version": v}, initializeBody)
		// As the SDK answers a version it refuses: its client falls back.
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "Mcp-Protocol-Version") ||
			!strings.Contains(w.Body.String(), `"code":-32022`) || !strings.Contains(w.Body.String(), `"supported":["2025-11-25","2025-06-18"`) {
			t.Errorf("%.20q: %d %.300q", v, w.Code, w.Body.String())
		}
		if len(w.Body.String()) > 1000 {
			t.Errorf("%.20q: the answer is %d bytes", v, len(w.Body.String()))
		}
		w = serve(g, http.MethodPost, map[string]string{"Mcp-Protocol-Version": v, "Mcp-Session-Id": "NOSUCHSESSION"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if w.Code != http.StatusBadRequest {
			t.Errorf("%.20q with a session: %d %.200q", v, w.Code, w.Body.String())
		}
	}
	if log.Len() > 0 {
		t.Errorf("refused versions were logged (or started sessions): %.500s", log.String())
	}
	if ents, _ := os.ReadDir(g.logsDir); len(ents) != 0 {
		t.Errorf("a refused version started a session: %v", ents)
	}
	// The versions the SDK serves statefully pass this check.
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		w := serve(g, http.MethodPost, map[string]string{"Mcp-Protocol-Version": v, "Mcp-Session-Id": "NOSUCHSESSION"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if w.Code != http.StatusNotFound {
			t.Errorf("%s: %d %.200q, want 404 (no such session)", v, w.Code, w.Body.String())
		}
	}
}

// Lines any caller can cause at the rate it sends requests, without
// starting a session, are limited in number: 5,000 guests' asks for full
// access and 5,000 bad tokens from as many /64s made 10,000 lines. What
// was left out is counted on the next line that goes through.
func TestRequestLinesLimited(t *testing.T) {
	g, log := testGateway(t)
	for i := range 5000 {
		if w := serve(g, http.MethodPost, map[string]string{ModeHeader: "full"}, initializeBody); w.Code != http.StatusForbidden {
			t.Fatalf("full access asked by a guest: %d %q", w.Code, w.Body.String())
		}
		r := arrived(httptest.NewRequest(http.MethodPost, "http://[::1]:7480/mcp", strings.NewReader("{}")))
		r.RemoteAddr = fmt.Sprintf("[2001:db8:%x:%x::1]:40000", i>>16, i&0xffff)
		r.Header.Set("Authorization", "Bearer wrong")
		r.Header.Set("Mcp-Session-Id", "NOSUCHSESSION")
		w := httptest.NewRecorder()
		g.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			t.Fatalf("a bad token: %d %q", w.Code, w.Body.String())
		}
	}
	lines := strings.Count(log.String(), "\n")
	if lines > 2*requestLineBurst {
		t.Errorf("%d log lines for 10,000 refused requests", lines)
	}
	if lines < requestLineBurst/2 {
		t.Errorf("only %d log lines: the first refusals are not logged", lines)
	}
	// Once the budget has room again, the next line says what was left out.
	g.requestLog.Handler().(limitedHandler).budget.full = time.Time{}
	serve(g, http.MethodPost, map[string]string{ModeHeader: "full"}, initializeBody)
	if !strings.Contains(log.String(), `"dropped":`) {
		t.Errorf("no line counts the dropped ones: %.300s", log.String()[max(0, log.Len()-300):])
	}
}

// A session's log stops at sessionLogMax with a line that says so: each
// of a guest's tool calls is a line, and a guest makes thousands a second
// for as long as it likes (one made 60 KB/s, without end, on the disk of
// --state).
func TestSessionLogCapped(t *testing.T) {
	g := &Gateway{logsDir: t.TempDir()}
	f, log, err := g.openSessionLog("ID")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range 3 * sessionLogMax / 100 {
		log.Info("tool call", "tool", "read_file", "ms", i)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > sessionLogMax+1024 || st.Size() < sessionLogMax-1024 {
		t.Errorf("the session log is %d bytes, want about %d", st.Size(), sessionLogMax)
	}
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "session log full") || strings.Count(string(b), "session log full") != 1 {
		t.Errorf("the last line is %q", last)
	}
	if !strings.Contains(lines[0], `"session":"ID"`) {
		t.Errorf("the first line is %q", lines[0])
	}
}

// The session logs together are at most logMaxBytes: the oldest go first.
func TestPruneLogsBySize(t *testing.T) {
	dir := t.TempDir()
	g := &Gateway{logsDir: dir}
	now := time.Now()
	for i, name := range []string{"a.log", "b.log", "c.log"} {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(logMaxBytes * 2 / 5) // sparse: no disk
		f.Close()
		at := now.Add(time.Duration(i-3) * time.Hour)
		os.Chtimes(p, at, at)
	}
	g.pruneLogs()
	if names := namesIn(dir); !slices.Equal(names, []string{"b.log", "c.log"}) {
		t.Errorf("left %v", names)
	}
}

// Full access runs with the owner's own primary group, from /etc/passwd,
// not the workspace's group: a project chowned to its user keeps root's
// group, and full access ran with gid 0. Root's group is refused, as
// root is.
func TestOwnerCredential(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) []userdb.Entry { return userdbFile(t, dir, name, text) }
	passwd := write("passwd", "root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\nzed:x:1002:0::/home/zed:/bin/sh\n")
	group := write("group", "root:x:0:\nann:x:1000:\nwheel:x:10:root,ann\ndisk:x:6:\n")
	for _, c := range []struct {
		uid, dirGid uint32
		gid         uint32
		groups      []uint32
		refused     bool
	}{
		{1000, 1000, 1000, []uint32{1000, 10}, false},
		{1000, 0, 1000, []uint32{1000, 10}, false}, // chown ann project: root's group stays on it
		{1000, 6, 1000, []uint32{1000, 10}, false}, // nor any other group of the directory's
		{4242, 77, 77, []uint32{77}, false},        // no entry: the directory's group
		{4242, 0, 0, nil, true},                    // ... but never root's
		{1002, 1002, 0, nil, true},                 // nor from the entry
	} {
		cred, err := ownerCredential(passwd, group, c.uid, c.dirGid)
		if c.refused {
			if err == nil || !strings.Contains(err.Error(), "root's group") {
				t.Errorf("uid %d, directory's gid %d: %+v, %v; want refused", c.uid, c.dirGid, cred, err)
			}
			continue
		}
		if err != nil || cred.Uid != c.uid || cred.Gid != c.gid || !slices.Equal(cred.Groups, c.groups) {
			t.Errorf("uid %d, directory's gid %d: %+v, %v; want gid %d, groups %v", c.uid, c.dirGid, cred, err, c.gid, c.groups)
		}
	}
}

// brokenStore is a token store that cannot be read now: it verifies
// nothing and cannot list.
type brokenStore struct{}

func (brokenStore) Verify(string) (Token, bool) { return Token{}, false }
func (brokenStore) List() ([]Token, error)      { return nil, errors.New("too many open files") }

// A token store that cannot be read (a moment without file descriptors,
// a mode changed by hand) says nothing about a token: the request is
// answered 503, and neither served as a guest's — the owner got a guest
// session without knowing it — nor taken as the token's revocation,
// which ended the owner's live session.
func TestUnreadableStore(t *testing.T) {
	g, _ := testGateway(t)
	g.cfg.Tokens = brokenStore{}
	secret := "pft_" + strings.Repeat("A", 43)
	sum := sha256.Sum256([]byte(secret))
	s := &session{ID: "LIVE", Principal: "token:" + hex.EncodeToString(sum[:]), dir: t.TempDir(), ended: make(chan struct{}),
		log: slog.New(slog.DiscardHandler), inflight: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	g.sessions[s.ID] = s
	bearer := map[string]string{"Authorization": "Bearer " + secret, "Mcp-Session-Id": s.ID}
	if w := serve(g, http.MethodPost, bearer, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "token store") {
		t.Errorf("the session's token, the store unreadable: %d %q", w.Code, w.Body.String())
	}
	g.mu.Lock()
	over := s.over
	g.mu.Unlock()
	if over {
		t.Error("the session was ended as if its token were revoked")
	}
	delete(bearer, "Mcp-Session-Id")
	if w := serve(g, http.MethodPost, bearer, initializeBody); w.Code != http.StatusServiceUnavailable {
		t.Errorf("an initialize with a token, the store unreadable: %d %q", w.Code, w.Body.String())
	}
	if ents, _ := os.ReadDir(g.logsDir); len(ents) != 0 {
		t.Errorf("a session started as a guest's: %v", ents)
	}
	// A guest needs no store.
	if w := serve(g, http.MethodPost, map[string]string{"Mcp-Session-Id": "NOSUCHSESSION"}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); w.Code != http.StatusNotFound {
		t.Errorf("a guest, the store unreadable: %d %q", w.Code, w.Body.String())
	}
}

// A browser page of another origin cannot reach /mcp: not with its
// fetch metadata, not with an old browser's Origin alone, not as a
// "simple" text/plain POST; and a page served by another port of this
// host is another origin. None of it starts a session or is logged as
// a caller's.
func TestCrossOriginRefused(t *testing.T) {
	g, log := testGateway(t)
	for name, hdr := range map[string]map[string]string{
		"cross-site":        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		"same-site":         {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:8080"},
		"old browser":       {"Origin": "https://evil.example"},
		"null origin":       {"Origin": "null"},
		"text/plain":        {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "text/plain"},
		"DELETE of a guess": {"Sec-Fetch-Site": "cross-site", "Mcp-Session-Id": "NOSUCHSESSION"},
	} {
		method := http.MethodPost
		if _, ok := hdr["Mcp-Session-Id"]; ok {
			method = http.MethodDelete
		}
		if w := serve(g, method, hdr, initializeBody); w.Code != http.StatusForbidden {
			t.Errorf("%s: %d %q", name, w.Code, w.Body.String())
		}
	}
	if log.Len() > 0 {
		t.Errorf("cross-origin requests were served: %.300s", log.String())
	}
	if ents, _ := os.ReadDir(g.logsDir); len(ents) != 0 {
		t.Errorf("a cross-origin request started a session: %v", ents)
	}
	// The control: the same request from the page's own origin gets through
	// to a session's start (which fails here: no launcher).
	if w := serve(g, http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:7480"}, initializeBody); w.Code != http.StatusServiceUnavailable {
		t.Errorf("same origin: %d %q", w.Code, w.Body.String())
	}
}

// A session that ends while its initialize is being answered (its token
// revoked, its sandbox gone, a shutdown) has its HTTP side closed too:
// end found none yet to close, and the SDK kept the session, answered
// 200 for it, for the whole idle timeout.
func TestEndDuringInitialize(t *testing.T) {
	g, secret, _ := fakeChildGateway(t)
	// The control: a session that does not end is served.
	w := serve(g, http.MethodPost, map[string]string{"Authorization": "Bearer " + secret}, initializeBody)
	if w.Code != http.StatusOK || g.Live() != 1 {
		t.Fatalf("control: %d %q, %d live", w.Code, w.Body.String(), g.Live())
	}
	var ended *session
	testHookAdmitted = func(s *session) {
		ended = s
		g.end(s, "ended during its initialize")
		<-s.ended // all of end done before the SDK makes its session
	}
	defer func() { testHookAdmitted = nil }()
	serve(g, http.MethodPost, map[string]string{"Authorization": "Bearer " + secret}, initializeBody)
	if ended == nil {
		t.Fatal("no session was admitted")
	}
	deadline := time.Now().Add(5 * time.Second)
	for ended.serverSession() == nil || len(slices.Collect(ended.server.Sessions())) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the ended session's HTTP side is still open (its server session %v)", ended.serverSession())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A session answers its own token only: not a guest, not another owner's
// token, not a bad token, whatever the method; its owner's DELETE ends it.
func TestSessionBinding(t *testing.T) {
	g, secret, _ := fakeChildGateway(t)
	w := serve(g, http.MethodPost, map[string]string{"Authorization": "Bearer " + secret}, initializeBody)
	sid := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", w.Code, w.Body.String())
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	with := func(auth string) map[string]string {
		h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
		if auth != "" {
			h["Authorization"] = auth
		}
		return h
	}
	serve(g, http.MethodPost, with("Bearer "+secret), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for who, auths := range map[string][]string{"a guest": nil, "another owner": {"Bearer pft_other"}, "a bad token": {"Bearer pft_wrong"},
		"the token and another": {"Bearer " + secret, "Bearer pft_other"}} {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			r := arrived(httptest.NewRequest(m, "http://127.0.0.1:7480/mcp", strings.NewReader(call)))
			r.RemoteAddr = "127.0.0.1:40000"
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range with("") {
				r.Header.Set(k, v)
			}
			for _, a := range auths {
				r.Header.Add("Authorization", a)
			}
			// A GET that got through would be the session's event stream,
			// open until its request ends.
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			rec := httptest.NewRecorder()
			g.Handler().ServeHTTP(rec, r.WithContext(ctx))
			cancel()
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s, %s: %d %.200q", who, m, rec.Code, rec.Body.String())
			}
		}
	}
	if w := serve(g, http.MethodPost, with("Bearer "+secret), call); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "hello") {
		t.Errorf("the owner's call after the others': %d %.200q", w.Code, w.Body.String())
	}
	if w := serve(g, http.MethodDelete, with("Bearer "+secret), ""); w.Code != http.StatusNoContent {
		t.Errorf("the owner's DELETE: %d %q", w.Code, w.Body.String())
	}
	if w := serve(g, http.MethodPost, with("Bearer "+secret), call); w.Code != http.StatusNotFound {
		t.Errorf("after DELETE: %d %.200q", w.Code, w.Body.String())
	}
}
