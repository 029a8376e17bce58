package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinfold/pinfold/internal/syncbuf"
	"github.com/pinfold/pinfold/policy"
)

func TestProxyConnectTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over tls")
	}))
	defer srv.Close()
	sap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	// example.com: httptest's certificate's name, which the tunnel's
	// server_name must match.
	res := &pxResolver{names: map[string][]netip.Addr{"example.com": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	proxyURL, _ := url.Parse("http://" + h.addr)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://example.com:" + pxPort(sap) + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello over tls" {
		t.Fatalf("body %q", b)
	}
	if got := h.dial.got(); len(got) != 1 || got[0] != sap {
		t.Errorf("dials %v, want [%v]", got, sap)
	}
}

func TestProxyConnectEchoHalfClose(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"echo.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)

	// Bytes sent right behind the CONNECT, before its answer, are
	// carried too.
	c := h.conn(t)
	io.WriteString(c, "CONNECT echo.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: echo.test\r\n\r\nearly;")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	go func() {
		c.Write(payload)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(br) // the echo half-closes after our half-close
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte("early;"), payload...); !bytes.Equal(got, want) {
		t.Fatalf("echoed %d bytes, want %d", len(got), len(want))
	}
}

func TestProxyForwardGET(t *testing.T) {
	var mu sync.Mutex
	var seen *http.Request
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Clone(context.Background())
		mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Proxy-Authenticate", "Basic")
		w.Header().Set("X-Answer", "yes")
		io.WriteString(w, "got "+r.Method+" "+r.URL.RequestURI()+" "+string(body))
	}))
	defer upstream.Close()
	uap := netip.MustParseAddrPort(upstream.Listener.Addr().String())
	res := &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)

	authority := "web.test:" + pxPort(uap)
	raw := "GET http://" + authority + "/path?q=1 HTTP/1.1\r\n" +
		"Host: " + authority + "\r\n" +
		"Connection: keep-alive, X-Hop\r\n" +
		"X-Hop: 1\r\n" +
		"Proxy-Authorization: Basic c2VjcmV0LXZhbHVl\r\n" +
		"Proxy-Connection: keep-alive\r\n" +
		"Keep-Alive: 5\r\n" +
		"Te: trailers\r\n" +
		"Upgrade: websocket\r\n" +
		"X-Keep: kept\r\n\r\n"
	resp, body, c, br := h.roundTrip(t, http.MethodGet, raw)
	if resp.StatusCode != http.StatusOK || body != "got GET /path?q=1 " {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	for _, k := range []string{"Keep-Alive", "Proxy-Authenticate"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("response header %s: %q passed the proxy", k, v)
		}
	}
	if resp.Header.Get("X-Answer") != "yes" {
		t.Errorf("end-to-end response header lost: %v", resp.Header)
	}
	mu.Lock()
	r := seen
	mu.Unlock()
	for _, k := range []string{"X-Hop", "Proxy-Authorization", "Proxy-Connection", "Keep-Alive", "Te", "Upgrade", "User-Agent"} {
		if v, ok := r.Header[k]; ok {
			t.Errorf("request header %s: %q reached the upstream", k, v)
		}
	}
	if r.Header.Get("X-Keep") != "kept" {
		t.Errorf("end-to-end request header lost: %v", r.Header)
	}
	if r.Host != authority {
		t.Errorf("upstream saw Host %q, want %q", r.Host, authority)
	}
	if strings.Contains(h.logs.String(), "c2VjcmV0LXZhbHVl") {
		t.Errorf("a header value reached the log:\n%s", h.logs)
	}

	// The client's connection stays usable: a POST with a body, decided
	// afresh.
	io.WriteString(c, "POST http://"+authority+"/submit HTTP/1.1\r\nHost: "+authority+"\r\nContent-Length: 11\r\n\r\nbody-secret")
	resp2, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(resp2.Body)
	if string(b2) != "got POST /submit body-secret" {
		t.Fatalf("second answer %q", b2)
	}
	if res.count() != 2 || len(h.dial.got()) != 2 {
		t.Errorf("resolved %d times and dialled %v, want one each per request", res.count(), h.dial.got())
	}
	if strings.Contains(h.logs.String(), "body-secret") || strings.Contains(h.logs.String(), "/path") {
		t.Errorf("a body or path reached the log:\n%s", h.logs)
	}
}

// Headers a response's Connection names stay with the upstream's hop.
// (When the list also says "close", net/http drops the whole Connection
// header before the proxy sees it, as for httputil.ReverseProxy; then only
// the fixed hop-by-hop names are stripped.)
func TestProxyForwardStripsResponseHop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: X-Resp-Hop\r\nX-Resp-Hop: 1\r\nTrailer: X-T\r\nX-Answer: yes\r\nContent-Length: 2\r\n\r\nok")
	}()
	uap := netip.MustParseAddrPort(ln.Addr().String())
	h := pxStart(t, nil, &pxResolver{names: map[string][]netip.Addr{"raw.test": {pxLoopback}}}, nil)
	resp, body, _, _ := h.roundTrip(t, http.MethodGet, "GET http://raw.test:"+pxPort(uap)+"/ HTTP/1.1\r\nHost: raw.test\r\n\r\n")
	if resp.StatusCode != http.StatusOK || body != "ok" || resp.Header.Get("X-Answer") != "yes" {
		t.Fatalf("status %d body %q header %v", resp.StatusCode, body, resp.Header)
	}
	for _, k := range []string{"X-Resp-Hop", "Trailer"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("response header %s: %q passed the proxy", k, v)
		}
	}
}

func TestProxyDeniedHost(t *testing.T) {
	dec := &pxDecider{hosts: map[string]string{"denied.test": "network.deny[0]"}}
	res := &pxResolver{names: map[string][]netip.Addr{"denied.test": {pxLoopback}}}
	h := pxStart(t, dec, res, nil)

	for _, raw := range []string{
		"CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n",
		"GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n",
		"CONNECT DENIED.test.:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n", // normalised before it is decided
	} {
		method, _, _ := strings.Cut(raw, " ")
		resp, body, _, _ := h.roundTrip(t, method, raw)
		pxRefused(t, resp, http.StatusForbidden, ReasonDeniedHost, "network.deny[0]")
		if body == "" {
			t.Errorf("%s: empty body", pxFirstLine(raw))
		}
	}
	if d := h.dial.got(); len(d) != 0 {
		t.Errorf("dialled %v for a denied host", d)
	}
	if res.count() != 0 {
		t.Errorf("resolved a denied host %d times", res.count())
	}
	if logs := h.logs.String(); !strings.Contains(logs, "rule=network.deny[0]") || !strings.Contains(logs, "target=denied.test:443") || !strings.Contains(logs, "decision=deny") {
		t.Errorf("the denial was not logged with its rule and target:\n%s", logs)
	}
}

// A request to a denied host hidden behind an allowed one, where a
// front-end that frames requests otherwise than net/http would read it
// inside the first one's body (Content-Length beside Transfer-Encoding:
// chunked, a Transfer-Encoding folded onto the line before, bare LF line
// ends), is a request of its own to net, decided afresh and refused;
// the upstream gets the allowed request alone, framed again by net, with
// nothing of the other in its body. (A red-team pass, 2026-12-03: held.)
func TestProxyForwardHiddenRequestDecided(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Host+" "+string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer upstream.Close()
	port := pxPort(netip.MustParseAddrPort(upstream.Listener.Addr().String()))
	dec := &pxDecider{hosts: map[string]string{"denied.test": "network.deny[0]"}}
	res := &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}, "denied.test": {pxLoopback}}}
	h := pxStart(t, dec, res, nil)
	a, d := "web.test:"+port, "denied.test:"+port
	hidden := "GET http://" + d + "/x HTTP/1.1\r\nHost: " + d + "\r\n\r\n"
	for _, c := range []struct{ name, raw string }{
		{"CL and TE", "POST http://" + a + "/ HTTP/1.1\r\nHost: " + a + "\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden},
		{"folded TE", "POST http://" + a + "/ HTTP/1.1\r\nHost: " + a + "\r\nX: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n" + hidden},
		{"bare LF", "GET http://" + a + "/ HTTP/1.1\nHost: " + a + "\n\n" + hidden},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		conn := h.conn(t)
		io.WriteString(conn, c.raw)
		br := bufio.NewReader(conn)
		for i, want := range []int{http.StatusOK, http.StatusForbidden} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: answer %d: %v", c.name, i+1, err)
			}
			io.ReadAll(resp.Body)
			if resp.StatusCode != want {
				t.Errorf("%s: answer %d is %d, want %d", c.name, i+1, resp.StatusCode, want)
			}
			if want == http.StatusForbidden {
				pxRefused(t, resp, http.StatusForbidden, ReasonDeniedHost, "network.deny[0]")
			}
		}
		conn.Close()
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if len(got) != 1 || got[0] != a+" " {
			t.Errorf("%s: the upstream got %q, want the allowed request alone with an empty body", c.name, got)
		}
	}
}

// The first answer is the one checked and the one dialled; a second
// lookup, which would answer otherwise, never happens.
func TestProxyRebinding(t *testing.T) {
	echo := pxEcho(t)
	rebound := netip.MustParseAddr("10.1.2.3")
	dec := &pxDecider{addrs: map[netip.Addr]string{rebound: "ssrf.private"}}
	res := &pxResolver{answers: [][]netip.Addr{{pxLoopback}, {rebound}}}
	h := pxStart(t, dec, res, nil)

	resp, _, c, br := h.roundTrip(t, http.MethodConnect, "CONNECT rebind.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	io.WriteString(c, "ping\n") // not a bare word: that could begin an HTTP request, refused in a tunnel
	buf := make([]byte, 5)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping\n" {
		t.Fatalf("tunnel: %q %v", buf, err)
	}
	if n := res.count(); n != 1 {
		t.Errorf("resolved %d times, want once", n)
	}
	if got, want := h.dial.got(), []netip.AddrPort{netip.AddrPortFrom(pxLoopback, echo.Port())}; !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	dec.mu.Lock()
	checked := slices.Clone(dec.addrCalls)
	dec.mu.Unlock()
	if !slices.Equal(checked, []netip.Addr{pxLoopback}) {
		t.Errorf("DecideAddr saw %v, want [127.0.0.1]", checked)
	}

	// The same holds for absolute-form: a fresh request is a fresh
	// lookup, and it is refused when it rebinds.
	resp2, _, _, _ := h.roundTrip(t, http.MethodGet, "GET http://rebind.test:"+pxPort(echo)+"/ HTTP/1.1\r\nHost: rebind.test\r\n\r\n")
	pxRefused(t, resp2, http.StatusForbidden, ReasonDeniedAddress, "ssrf.private")
	if n := len(h.dial.got()); n != 1 {
		t.Errorf("dialled %v after the rebound answer", h.dial.got())
	}
}

// An IPv4-mapped answer (Go's resolver gives A records so) is decided
// and dialled as the IPv4 address.
func TestProxyUnmapsResolverAnswers(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"mapped.test": {netip.AddrFrom16(pxLoopback.As16())}}}
	h := pxStart(t, nil, res, nil)
	resp, _, _, _ := h.roundTrip(t, http.MethodConnect, "CONNECT mapped.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := h.dial.got(); len(got) != 1 || got[0].Addr() != pxLoopback {
		t.Errorf("dialled %v", got)
	}
}

func TestProxyDialsOnlyAllowedAddresses(t *testing.T) {
	echo := pxEcho(t)
	denied := netip.MustParseAddr("127.0.0.3")
	dec := &pxDecider{addrs: map[netip.Addr]string{denied: "ssrf.loopback"}}
	res := &pxResolver{names: map[string][]netip.Addr{
		"mixed.test":  {denied, pxLoopback},
		"denied.test": {denied},
	}}
	h := pxStart(t, dec, res, nil)

	resp, _, _, _ := h.roundTrip(t, http.MethodConnect, "CONNECT mixed.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got, want := h.dial.got(), []netip.AddrPort{netip.AddrPortFrom(pxLoopback, echo.Port())}; !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}

	resp, _, _, _ = h.roundTrip(t, http.MethodConnect, "CONNECT denied.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusForbidden, ReasonDeniedAddress, "ssrf.loopback")
	// An IP literal is decided as an address, without a lookup.
	resp, _, _, _ = h.roundTrip(t, http.MethodConnect, "CONNECT 127.0.0.3:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusForbidden, ReasonDeniedAddress, "ssrf.loopback")
	if n := len(h.dial.got()); n != 1 {
		t.Errorf("dialled %v, want only the first tunnel's address", h.dial.got())
	}
	if n := res.count(); n != 2 {
		t.Errorf("%d lookups, want 2 (none for the literal)", n)
	}
}

func TestProxyRedirects(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, "upstream body")
	}))
	defer upstream.Close()
	uap := netip.MustParseAddrPort(upstream.Listener.Addr().String())
	private := netip.MustParseAddr("10.0.0.7")
	dec := &pxDecider{
		hosts: map[string]string{"denied.test": "network.deny[1]"},
		addrs: map[netip.Addr]string{private: "ssrf.private"},
	}
	res := &pxResolver{names: map[string][]netip.Addr{
		"web.test":      {pxLoopback},
		"internal.test": {private},
		"ok.test":       {pxLoopback},
	}}
	h := pxStart(t, dec, res, nil)
	authority := "web.test:" + pxPort(uap)

	for _, tc := range []struct {
		to     string
		status int
		rule   string
	}{
		{"/elsewhere", http.StatusFound, ""},
		{"http://" + authority + "/x", http.StatusFound, ""},
		{"https://ok.test/", http.StatusFound, ""},
		{"http://denied.test/", http.StatusForbidden, "network.deny[1]"},
		{"https://DENIED.test./login", http.StatusForbidden, "network.deny[1]"},
		{"//denied.test/", http.StatusForbidden, "network.deny[1]"},
		{"http://internal.test/", http.StatusForbidden, "ssrf.private"},
		{"http://10.0.0.7:8080/", http.StatusForbidden, "ssrf.private"},
		{"http://nowhere.test/", http.StatusForbidden, RuleResolve},
		{"http://bad host/", http.StatusForbidden, RuleRedirect},
		{"file:///etc/passwd", http.StatusForbidden, RuleRedirect},
		// WHATWG parsers read "\" as "/" and drop tabs: each of these
		// is //169.254.169.254/ to a browser, a path to Go's url.
		{"/\\169.254.169.254/latest/", http.StatusForbidden, RuleRedirect},
		{"\\\\169.254.169.254/latest/", http.StatusForbidden, RuleRedirect},
		{"/\\/169.254.169.254/latest/", http.StatusForbidden, RuleRedirect},
		{"/\t/169.254.169.254/latest/", http.StatusForbidden, RuleRedirect},
	} {
		raw := "GET http://" + authority + "/r?to=" + url.QueryEscape(tc.to) + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
		resp, body, _, _ := h.roundTrip(t, http.MethodGet, raw)
		if tc.status == http.StatusFound {
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != tc.to {
				t.Errorf("redirect to %q: status %d Location %q", tc.to, resp.StatusCode, resp.Header.Get("Location"))
			}
			continue
		}
		pxRefused(t, resp, http.StatusForbidden, ReasonDeniedRedirect, tc.rule)
		if resp.Header.Get("Location") != "" || strings.Contains(body, "upstream body") {
			t.Errorf("redirect to %q: the refused answer leaked (Location %q, body %q)", tc.to, resp.Header.Get("Location"), body)
		}
	}
	for _, d := range h.dial.got() {
		if d != netip.AddrPortFrom(pxLoopback, uap.Port()) {
			t.Errorf("dialled %v: a redirect's target is decided, never dialled", d)
		}
	}
}

// A Location that WHATWG parsers read otherwise than Go's url (a
// backslash, a control character, blanks around it, an empty authority
// before more slashes) is refused before it is parsed; Go's HTTP client trims the blanks of a header value, so
// those are asked of checkLocation itself.
func TestProxyCheckLocationRefusesAmbiguous(t *testing.T) {
	res := &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}
	p := &Proxy{Decider: &pxDecider{}, Resolver: res, Parse: SplitHostPort}
	for _, scheme := range []string{"http", "https"} {
		base := &url.URL{Scheme: scheme, Host: "web.test"}
		for _, loc := range []string{" /x", "/x ", "/x\x7f", "/x\x00", "/\r\n/169.254.169.254/", "/a\\b", "\t//169.254.169.254/",
			// An empty authority: a browser reads the host after the slashes.
			"///evil.test/x", "////169.254.169.254/latest/meta-data/", "http:///evil.test/x", "HTTPS:////evil.test", "//", "//?x", "//#x"} {
			if f := p.checkLocation(context.Background(), base, loc); f == nil || f.rule != RuleRedirect {
				t.Errorf("base %s, Location %q: %+v, want refused by %s", base, loc, f, RuleRedirect)
			}
		}
		for _, loc := range []string{"/x", "/a%5Cb", scheme + "://web.test/y?q=a%20b", "//web.test/x", "/x//y", "/x:///y", "./x///y"} { // the controls
			if f := p.checkLocation(context.Background(), base, loc); f != nil {
				t.Errorf("base %s, Location %q: refused %+v", base, loc, *f)
			}
		}
	}
}

func TestProxyMalformed(t *testing.T) {
	h := pxStart(t, nil, &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}, func(p *Proxy) {
		p.MaxHeaderBytes = 4 << 10
	})
	for _, tc := range []struct {
		raw    string
		status int
		reason string
	}{
		{"FOO BAR\r\n\r\n", http.StatusBadRequest, ""},
		{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", http.StatusBadRequest, ""},
		{"GET /path HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"POST /path HTTP/1.1\r\nHost: web.test\r\nContent-Length: 0\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"OPTIONS * HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"GET https://web.test/ HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"GET ftp://web.test/ HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT web.test HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT web.test:0 HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT web.test:99999 HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT /web.test:443 HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT 0x7f.1:443 HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT user@web.test:443 HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ""},
		{"GET http://web.test:80x/ HTTP/1.1\r\nHost: web.test\r\n\r\n", http.StatusBadRequest, ""},
		{"GET http://web.test/ HTTP/1.1\r\nHost: web.test\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, ""},
		{"GET http://web.test/ HTTP/1.1\r\nHost: web.test\r\n" + strings.Repeat("X-Many: 1\r\n", 2000) + "\r\n", http.StatusRequestHeaderFieldsTooLarge, ""},
	} {
		c := h.conn(t)
		io.WriteString(c, tc.raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodGet})
		if err != nil {
			t.Errorf("%q: %v", pxFirstLine(tc.raw), err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%q: status %d, want %d", pxFirstLine(tc.raw), resp.StatusCode, tc.status)
		}
		if tc.reason != "" && resp.Header.Get("X-Pinfold-Reason") != tc.reason {
			t.Errorf("%q: reason %q, want %q", pxFirstLine(tc.raw), resp.Header.Get("X-Pinfold-Reason"), tc.reason)
		}
	}
	if d := h.dial.got(); len(d) != 0 {
		t.Errorf("dialled %v for malformed requests", d)
	}
}

func TestProxyUpstreamFailures(t *testing.T) {
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := netip.MustParseAddrPort(ln.Addr().String())
	ln.Close()
	res := &pxResolver{names: map[string][]netip.Addr{"down.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)

	resp, _, _, _ := h.roundTrip(t, http.MethodConnect, "CONNECT down.test:"+pxPort(closed)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusBadGateway, ReasonDialFailed, RuleDial)
	resp, _, _, _ = h.roundTrip(t, http.MethodGet, "GET http://down.test:"+pxPort(closed)+"/ HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusBadGateway, ReasonDialFailed, RuleDial)
	resp, _, _, _ = h.roundTrip(t, http.MethodConnect, "CONNECT unknown.test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusBadGateway, ReasonResolveFailed, RuleResolve)
}

func TestProxySlowClient(t *testing.T) {
	h := pxStart(t, nil, nil, func(p *Proxy) { p.HeaderTimeout = 200 * time.Millisecond })
	for _, partial := range []string{"", "GET http://web.test/ HTTP/1.1\r\nHost: web.", "CONNECT web.test:443 HTTP/1.1\r\n"} {
		c := h.conn(t)
		start := time.Now()
		io.WriteString(c, partial)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || err == nil {
			t.Errorf("%q: read %d bytes, err %v: want the connection closed", partial, n, err)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%q: still open after 5s, HeaderTimeout is 200ms", partial)
		}
		if el := time.Since(start); el < 150*time.Millisecond {
			t.Errorf("%q: closed after %v, before HeaderTimeout", partial, el)
		}
	}
}

func TestProxyTunnelIdle(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"echo.test": {pxLoopback}}}
	h := pxStart(t, nil, res, func(p *Proxy) { p.TunnelIdle = 300 * time.Millisecond })
	resp, _, c, br := h.roundTrip(t, http.MethodConnect, "CONNECT echo.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// Traffic keeps it open past the idle time...
	buf := make([]byte, 2)
	for i := 0; i < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		io.WriteString(c, "h\n") // not a bare word: that could begin an HTTP request, refused in a tunnel
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatalf("active tunnel closed after %d rounds: %v", i, err)
		}
	}
	// ...silence closes it.
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("read a byte from an idle tunnel")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("idle tunnel still open after 5s")
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("closed after %v of silence, TunnelIdle is 300ms", el)
	}
}

// A byte that arrives as the idle deadline falls is not lost: the copy
// reads it from the source just before the deadline and must still write
// it to the destination after. Small messages go through tunnels whose
// idle time is short, sent at half that interval (the copy's deadline
// falls every idle time while bytes trickle, so many land on one), and
// every one comes back from the echo server.
//
// A message sent later than the idle time after the tunnel's last
// activity (a loaded machine can delay this side) may rightly find the
// tunnel closed: it is not judged, and that tunnel ends there. The
// estimate of the last activity is this side's own previous write (or
// its CONNECT), which is never later than the proxy's, so a message
// judged was sent well within the idle time.
func TestProxyTunnelNoLossAtDeadline(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"echo.test": {pxLoopback}}}
	const idle = 40 * time.Millisecond
	h := pxStart(t, nil, res, func(p *Proxy) { p.TunnelIdle = idle })
	var wg sync.WaitGroup
	var judged atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			last := time.Now()
			resp, _, c, br := h.roundTrip(t, http.MethodConnect, "CONNECT echo.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("status %d", resp.StatusCode)
				return
			}
			buf := make([]byte, 1)
			for i := range 60 {
				time.Sleep(idle/2 - time.Millisecond + time.Duration(i%3)*time.Millisecond)
				if time.Since(last) > idle*3/4 {
					return // too late to judge: the tunnel may have idled
				}
				last = time.Now()
				c.Write([]byte{byte(i)})
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				if _, err := io.ReadFull(br, buf); err != nil || buf[0] != byte(i) {
					errs <- fmt.Errorf("message %d, sent %v after the last: got %v, %v", i, time.Since(last), buf, err)
					return
				}
				judged.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := judged.Load(); n < 60 {
		t.Skipf("only %d of 480 messages were sent in time to be judged: the machine is too loaded for this test", n)
	}
}

// With MaxConns busy, a further client waits (it is not served, nor
// refused) until a connection ends.
func TestProxyMaxConnsWaits(t *testing.T) {
	h := pxStart(t, &pxDecider{hosts: map[string]string{"denied.test": "network.deny[0]"}}, nil, func(p *Proxy) { p.MaxConns = 2 })
	a, b := h.conn(t), h.conn(t)
	io.WriteString(a, "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n")
	io.WriteString(b, "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n")
	ra, rb := bufio.NewReader(a), bufio.NewReader(b)
	for _, r := range []*bufio.Reader{ra, rb} {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
	}
	c := h.conn(t)
	io.WriteString(c, "GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	rc := bufio.NewReader(c)
	if _, err := rc.ReadByte(); err == nil {
		t.Fatal("a third connection was served with MaxConns = 2")
	}
	rc.UnreadByte()
	a.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(rc, c)), nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served once a slot freed: %v", err)
	}
	pxRefused(t, resp, http.StatusForbidden, ReasonDeniedHost, "network.deny[0]")
}

func TestProxyShutdownClosesTunnels(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"echo.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	resp, _, c, br := h.roundTrip(t, http.MethodConnect, "CONNECT echo.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.p.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel is open after Shutdown")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the tunnel is open after Shutdown")
	}
	if _, err := net.DialTimeout("tcp", h.addr, time.Second); err == nil {
		t.Error("the listener accepts after Shutdown")
	}
}

func TestProxyIntercept(t *testing.T) {
	echo := pxEcho(t)
	res := &pxResolver{names: map[string][]netip.Addr{"inject.test": {pxLoopback}, "plain.test": {pxLoopback}}}
	got := make(chan string, 1)
	h := pxStart(t, nil, res, func(p *Proxy) {
		p.Intercept = func(h Host, port uint16) bool { return h.Name == "inject.test" }
		p.InterceptTLS = func(ctx context.Context, client net.Conn, h Host, port uint16, upstream net.Conn) error {
			defer client.Close()
			defer upstream.Close()
			b := make([]byte, 5)
			io.ReadFull(client, b)
			got <- h.Name + " " + string(b) + " " + upstream.RemoteAddr().String()
			return nil
		}
	})
	c := h.conn(t)
	io.WriteString(c, "CONNECT inject.test:"+pxPort(echo)+" HTTP/1.1\r\nHost: x\r\n\r\nhello")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", resp, err)
	}
	select {
	case s := <-got:
		if want := "inject.test hello " + echo.String(); s != want {
			t.Errorf("InterceptTLS saw %q, want %q", s, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("InterceptTLS not called")
	}
}

// A forward whose bytes keep moving outlives TunnelIdle, even after a
// request body; one whose upstream stays silent is cut with 504.
func TestProxyForwardIdle(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/silent" {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		for i := 0; i < 30; i++ {
			io.WriteString(w, "tick;")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer upstream.Close()
	uap := netip.MustParseAddrPort(upstream.Listener.Addr().String())
	res := &pxResolver{names: map[string][]netip.Addr{"web.test": {pxLoopback}}}
	// Ticks 100 ms apart, an idle bound twenty times that: a loaded
	// machine (CI beside other work) once stretched a gap past 300 ms,
	// and a clean-clone run cut the stream after its first tick with a
	// bound of 1 s. The stream lasts longer than the bound (3 s), so a
	// bound counted from the start, not from the last bytes, cuts it.
	h := pxStart(t, nil, res, func(p *Proxy) { p.TunnelIdle = 2 * time.Second })
	authority := "web.test:" + pxPort(uap)

	resp, body, _, _ := h.roundTrip(t, http.MethodPost, "POST http://"+authority+"/stream HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\ndata")
	if resp.StatusCode != http.StatusOK || body != strings.Repeat("tick;", 30) {
		t.Fatalf("streamed answer cut: status %d body %q", resp.StatusCode, body)
	}
	start := time.Now()
	resp, _, _, _ = h.roundTrip(t, http.MethodGet, "GET http://"+authority+"/silent HTTP/1.1\r\nHost: x\r\n\r\n")
	pxRefused(t, resp, http.StatusGatewayTimeout, ReasonTimeout, RuleUpstream)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the silent upstream was given %v", el)
	}
}

// A name refused for the address it resolved to gets a 403 that does not
// say the address (net must not answer DNS questions about the inside);
// the log keeps it. Nothing is dialled.
func TestProxyRefusalHidesAddress(t *testing.T) {
	eg, err := NewEgress(policy.Network{Mode: policy.NetProxy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	dialled := 0
	p := &Proxy{Decider: eg, Parse: SplitHostPort, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Resolver: &pxResolver{names: map[string][]netip.Addr{"internal.test": {netip.MustParseAddr("10.9.8.7")}}},
		Dial: func(context.Context, string, netip.AddrPort) (net.Conn, error) {
			dialled++
			return nil, errors.New("no dial in this test")
		}}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	defer p.Shutdown(context.Background())
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET http://internal.test/ HTTP/1.1\r\nHost: internal.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || resp.Header.Get("X-Pinfold-Rule") != "ssrf.private" || dialled != 0 {
		t.Fatalf("%d %v dialled %d", resp.StatusCode, resp.Header, dialled)
	}
	if strings.Contains(string(body), "10.9.8.7") {
		t.Errorf("the 403 tells the address: %q", body)
	}
	if !strings.Contains(logs.String(), "10.9.8.7") {
		t.Errorf("the log lacks the address: %s", logs.String())
	}
}
