package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// A forwarded plain-HTTP request carries the Host net decided, in its
// canonical spelling (the absolute URL's authority, normalised), never
// the agent's own Host header nor its spelling of the name: an upstream
// that routes by Host (a shared front end, a virtual host) would
// otherwise serve a name the policy never saw, or read "WEB.Test." as
// other than "web.test". The control: the upstream answers, so each
// request did go.
func TestForwardSendsDecidedHost(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		io.WriteString(w, "upstream body")
	}))
	defer upstream.Close()
	uap := netip.MustParseAddrPort(upstream.Listener.Addr().String())
	dec := &pxDecider{hosts: map[string]string{"denied.test": "network.deny[0]"}}
	res := &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}
	h := pxStart(t, dec, res, nil)
	authority := "web.test:" + pxPort(uap)
	for _, tc := range []struct{ url, claimed string }{
		{authority, authority},
		{authority, "denied.test"},
		{authority, "169.254.169.254"},
		{"WEB.Test.:" + pxPort(uap), "WEB.Test.:" + pxPort(uap)},
	} {
		raw := "GET http://" + tc.url + "/ HTTP/1.1\r\nHost: " + tc.claimed + "\r\n\r\n"
		resp, body, _, _ := h.roundTrip(t, http.MethodGet, raw)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "upstream body") {
			t.Fatalf("control: %s with Host %q: status %d, body %q", tc.url, tc.claimed, resp.StatusCode, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, got := range hosts {
		if got != authority {
			t.Errorf("request %d: the upstream saw Host %q, want the decided %q", i, got, authority)
		}
	}
	if len(hosts) != 4 {
		t.Errorf("the upstream saw %d requests, want 4", len(hosts))
	}
}
