package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pxRawHTTP serves plain HTTP on 127.0.0.1: every request it reads is
// answered with raw, as written, and recorded.
func pxRawHTTP(t *testing.T, raw string) (netip.AddrPort, func() []*http.Request) {
	t.Helper()
	var mu sync.Mutex
	var got []*http.Request
	ap := pxServe(t, 10*time.Second, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
			if _, err := io.WriteString(c, raw); err != nil {
				return
			}
		}
	})
	return ap, func() []*http.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*http.Request(nil), got...)
	}
}

// An upstream that answers 101 Switching Protocols to a forwarded
// request answers an upgrade net never asked for (it takes Upgrade and
// Connection off every request): the agent gets 502, not a 101 on a
// connection net goes on reading HTTP from, and nothing the upstream
// sent after the switch. The control: the same upstream answering 200
// is passed on, and the upstream never saw the agent's Upgrade.
func TestProxyForwardRefusesUnaskedUpgrade(t *testing.T) {
	const after = "bytes of the switched protocol"
	for _, tc := range []struct {
		name, raw string
		status    int
	}{
		{"101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + after, http.StatusBadGateway},
		{"101 without Upgrade", "HTTP/1.1 101 Switching Protocols\r\n\r\n" + after, http.StatusBadGateway},
		{"control", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ap, got := pxRawHTTP(t, tc.raw)
			h := pxStart(t, nil, &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}, nil)
			authority := "web.test:" + pxPort(ap)
			resp, body, c, br := h.roundTrip(t, http.MethodGet, "GET http://"+authority+"/ws HTTP/1.1\r\nHost: "+authority+
				"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusBadGateway {
				pxRefused(t, resp, http.StatusBadGateway, ReasonUpstreamFailed, RuleUpstream)
			}
			if strings.Contains(body, after) {
				t.Errorf("the agent got what the upstream sent after its switch: %q", body)
			}
			// Whatever follows on the agent's connection is HTTP again,
			// or its end: never the upstream's switched bytes.
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if rest, _ := io.ReadAll(br); strings.Contains(string(rest), after) || strings.Contains(string(rest), "101") {
				t.Errorf("after the answer the agent got %q", rest)
			}
			for _, r := range got() {
				// (Connection: close is the transport's own: one request
				// per upstream connection.)
				if r.Header.Get("Upgrade") != "" || strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
					t.Errorf("the upstream got Upgrade %q, Connection %q: net asked for the switch", r.Header.Get("Upgrade"), r.Header.Get("Connection"))
				}
			}
		})
	}
}

// On an intercepted connection, likewise: an upstream's 101 becomes 502
// (secrets.upstream) and the connection ends there, so no later request
// of the agent goes up, the value set, to an upstream that has switched
// protocols, and nothing the upstream sent after the switch reaches the
// agent. Before, the agent got the 101 and net went on reading HTTP.
func TestInjectRefusesUnaskedUpgrade(t *testing.T) {
	const host = "api.github.com"
	const after = "bytes of the switched protocol"
	u, in := rawUpstream(t, host, func(auth string) string {
		return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + after + " " + auth
	})
	got, err := exchangeRaw(t, in, u, host, "GET /ws HTTP/1.1\r\nHost: "+host+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"+
		"GET /next HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	if err != nil {
		t.Errorf("Serve: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
	if err != nil {
		t.Fatalf("no answer in %q: %v", got, err)
	}
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Pinfold-Rule") != RuleSecretsUpstream {
		t.Errorf("the agent got %q, want 502 by %s", got, RuleSecretsUpstream)
	}
	if strings.Contains(got, "101") || strings.Contains(got, after) || strings.Contains(got, reflValue) {
		t.Errorf("the agent got %q", got)
	}
}

// A plain-HTTP redirect with several Locations is refused before any of
// them is looked up, as inside an intercepted connection: each was a
// lookup of its own, in turn, so an upstream's one head (some two
// thousand fit in 64 KiB) held the agent's request through as many
// lookups, each waiting up to DialTimeout on a resolver that stalls.
// The control: one Location to an allowed name is decided (one lookup)
// and passed on.
func TestProxyForwardRefusesSeveralLocations(t *testing.T) {
	var locs strings.Builder
	names := map[string][]netip.Addr{"web.test": {pxLoopback}}
	for i := range 50 {
		name := "hop" + strconv.Itoa(i) + ".test"
		names[name] = []netip.Addr{pxLoopback}
		locs.WriteString("Location: http://" + name + "/\r\n")
	}
	for _, tc := range []struct {
		name, locs string
		status     int
		lookups    int // besides web.test's own
	}{
		{"several", locs.String(), http.StatusForbidden, 0},
		{"one", "Location: http://hop1.test/\r\n", http.StatusFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ap, _ := pxRawHTTP(t, "HTTP/1.1 302 Found\r\n"+tc.locs+"Content-Length: 0\r\n\r\n")
			res := &pxResolver{names: names}
			h := pxStart(t, nil, res, nil)
			authority := "web.test:" + pxPort(ap)
			resp, _, _, _ := h.roundTrip(t, http.MethodGet, "GET http://"+authority+"/r HTTP/1.1\r\nHost: "+authority+"\r\nConnection: close\r\n\r\n")
			if tc.status == http.StatusForbidden {
				pxRefused(t, resp, http.StatusForbidden, ReasonDeniedRedirect, RuleRedirect)
			} else if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := res.count() - 1; got != tc.lookups {
				t.Errorf("the redirect's targets took %d lookups, want %d", got, tc.lookups)
			}
		})
	}
}

// An upstream that answers before it has read the request's body (413
// to an upload too large, 401 to a wrong token) and closes makes the
// request's write fail; its answer is still the agent's, looked at as
// any other, and the connection ends after it. Before, the agent got no
// answer at all: the connection just closed.
func TestInjectPassesEarlyAnswer(t *testing.T) {
	const host = "api.github.com"
	u, roots := upstreamFor(t, host)
	u.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Nothing of the body is read: Go's server closes the
		// connection with it unread (a reset).
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, "too large for "+r.Header.Get("Authorization")[:6])
	})
	var released []string
	in := injectorFor(t, roots, &released)
	agentEnd, done := serveInjected(t, in, u, host)
	a := agentTLS(t, agentEnd, in, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	const size = 16 << 20 // more than loopback's socket buffers take
	go func() {
		io.WriteString(a, "POST /upload HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		chunk := strings.Repeat("x", 64<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := io.WriteString(a, chunk); err != nil {
				return // net stopped reading: the answer came
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	a.Close()
	<-done
	if resp.StatusCode != http.StatusRequestEntityTooLarge || string(body) != "too large for Bearer" {
		t.Errorf("the agent got %d %q, want the upstream's 413", resp.StatusCode, body)
	}
}
