package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// at sends one request to the gateway's handler as a net/http server
// would hand it over from a connection to local ("" for none known),
// with Host host and the headers hdr.
func at(g *Gateway, method, path, local, host string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://x"+path, strings.NewReader(initializeBody))
	r.Host = host
	r.RemoteAddr = "192.0.2.200:40000"
	if local != "" {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(local))))
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	g.Handler().ServeHTTP(w, r)
	return w
}

// DNS rebinding: a page on evil.example whose name resolves to the
// gateway's address is, to the browser, its own origin. Served on an
// address that is not loopback (--insecure-plain-http), the gateway took
// any Host and started a session for it. Now a request must name the
// gateway as it is served: the address the connection came to, a
// loopback name on loopback, or a name of Config.Hosts — in its Host
// and in its Origin when it has one (which a GET, that cross-origin
// protection lets through, also carries). Nothing refused starts a
// session or reaches the log.
func TestHostChecked(t *testing.T) {
	g, log := testGateway(t)
	g.cfg.Hosts = []string{"gw.example.org"}
	const public = "192.0.2.10:7480"
	for name, c := range map[string]struct {
		method, path, local, host string
		hdr                       map[string]string
	}{
		"rebound name":              {"POST", "/mcp", public, "evil.example:7480", nil},
		"rebound name, no port":     {"POST", "/mcp", public, "evil.example", nil},
		"localhost, not loopback":   {"POST", "/mcp", public, "localhost:7480", nil},
		"another address":           {"POST", "/mcp", public, "192.0.2.99:7480", nil},
		"rebound name on loopback":  {"POST", "/mcp", "127.0.0.1:7480", "evil.example:7480", nil},
		"no Host":                   {"POST", "/mcp", public, "", nil},
		"no local address known":    {"POST", "/mcp", "", "127.0.0.1:7480", nil},
		"another site's page (GET)": {"GET", "/mcp", public, public, map[string]string{"Origin": "http://evil.example:7480"}},
		"a null origin (GET)":       {"GET", "/mcp", public, public, map[string]string{"Origin": "null"}},
		"health, rebound":           {"GET", "/healthz", public, "evil.example:7480", nil},
		"a suffix of an allowed":    {"POST", "/mcp", public, "evil-gw.example.org", nil},
		"an allowed name's child":   {"POST", "/mcp", public, "x.gw.example.org", nil},
	} {
		w := at(g, c.method, c.path, c.local, c.host, c.hdr)
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "is not a name this gateway is served as") && !strings.Contains(w.Body.String(), "is not this gateway's") {
			t.Errorf("%s: %d %q", name, w.Code, w.Body.String())
		}
	}
	if log.Len() > 0 {
		t.Errorf("refused hosts reached the gateway: %.300s", log.String())
	}
	if ents, _ := os.ReadDir(g.logsDir); len(ents) != 0 {
		t.Errorf("a refused host started a session: %v", ents)
	}
	// What names the gateway gets through to a session's start (which
	// fails here: no launcher).
	for name, c := range map[string]struct {
		local, host string
		hdr         map[string]string
	}{
		"its address":                {public, public, nil},
		"its address, no port":       {public, "192.0.2.10", nil},
		"its address, v4-mapped":     {"[::ffff:192.0.2.10]:7480", public, nil},
		"an allowed name":            {public, "GW.example.org.:443", nil},
		"localhost on loopback":      {"127.0.0.1:7480", "localhost:7480", nil},
		"[::1] on loopback":          {"127.0.0.1:7480", "[::1]:7480", nil},
		"its own page's origin":      {public, public, map[string]string{"Origin": "http://192.0.2.10:7480", "Sec-Fetch-Site": "same-origin"}},
		"an allowed name's origin":   {public, "gw.example.org", map[string]string{"Origin": "https://gw.example.org", "Sec-Fetch-Site": "same-origin"}},
		"allowed with no local addr": {"", "gw.example.org", nil},
	} {
		if w := at(g, http.MethodPost, "/mcp", c.local, c.host, c.hdr); w.Code != http.StatusServiceUnavailable {
			t.Errorf("%s: %d %q", name, w.Code, w.Body.String())
		}
	}
	if w := at(g, http.MethodGet, "/healthz", public, public, nil); w.Code != http.StatusOK {
		t.Errorf("health at its address: %d %q", w.Code, w.Body.String())
	}
}

// An allowed host is a bare name or address: a port, a scheme or
// brackets are refused with the reason.
func TestCheckHost(t *testing.T) {
	for _, ok := range []string{"gw.example.org", "GW.Example.org.", "localhost", "10.0.0.1", "::1", "fe80::1", "a-b.c"} {
		if err := CheckHost(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "gw.example.org:443", "http://gw.example.org", "[::1]", "a..b", "-a.b", "a-.b", "a b", "a/b", "a_b", strings.Repeat("a", 64) + ".b", strings.Repeat("a.", 127) + "aa"} {
		if err := CheckHost(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// openFDs is the number of this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A flood of idle connections holds at most the gateway's bound of
// them: each held a descriptor and a goroutine in the gateway, so 300
// took 300 of each (and enough take every descriptor the token store,
// session logs and sandboxes need). Past the bound a connection is
// answered 503, saying why, and closed; once the flood ends its places
// are free again.
func TestConnectionsBounded(t *testing.T) {
	g, _ := testGateway(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const max, flood = 20, 300
	srv := &http.Server{Handler: g.Handler(), ReadHeaderTimeout: time.Minute}
	go srv.Serve(g.LimitConnections(ln, max, true))
	defer srv.Close()
	addr := ln.Addr().String()
	health := func() (int, string) {
		c := http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := health(); code != http.StatusOK {
		t.Fatalf("control, before the flood: %d %q", code, body)
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Once the server has taken them all in: the test's own flood holds
	// one descriptor per connection and no goroutine; the server, one of
	// each per connection it holds.
	var held, heldFDs int
	deadline := time.Now().Add(10 * time.Second)
	for {
		held, heldFDs = runtime.NumGoroutine()-goroutines, openFDs(t)-fds-flood
		if held <= max+5 && heldFDs <= max+5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if held > max+5 || heldFDs > max+5 {
		t.Errorf("%d idle connections, at most %d held: the server holds %d goroutines and %d descriptors more", flood, max, held, heldFDs)
	}
	if held < max-5 {
		t.Errorf("the server holds %d goroutines more, fewer than its %d connections", held, max)
	}
	// One more is refused, and told why.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	b, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 503 ") || !strings.Contains(string(b), "too many connections (the most is 20)") {
		t.Errorf("a connection over the bound: %v, %q", err, b)
	}
	if code, body := health(); code != http.StatusServiceUnavailable {
		t.Errorf("a request while the flood holds every place: %d %q", code, body)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	deadline = time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines+5 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine() - goroutines; n > 5 {
		t.Errorf("after the flood: %d goroutines more", n)
	}
	if n := openFDs(t) - fds; n > 5 {
		t.Errorf("after the flood: %d descriptors more", n)
	}
	if code, body := health(); code != http.StatusOK {
		t.Errorf("after the flood: %d %q", code, body)
	}
}
