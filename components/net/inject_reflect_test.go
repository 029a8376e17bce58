package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// The value injectorFor's kms releases, and the header it makes.
const (
	reflValue  = "ghp_real_value"
	reflHeader = "Bearer " + reflValue
)

// echoUpstream is a loopback TLS server for api.github.com that sends
// the request back in every way an upstream might: TRACE and TRACK
// answered as RFC 9110 says (the request as received), request headers
// in a body, a header, a trailer, a reason phrase, an interim answer,
// a stream, a long body. It records the methods it got.
type echoUpstream struct {
	*upstream
	mu      sync.Mutex
	methods []string
	encs    []string
	ranges  []string
}

func newEchoUpstream(t *testing.T) (*echoUpstream, *x509.CertPool) {
	u, roots := upstreamFor(t, "api.github.com")
	e := &echoUpstream{upstream: u}
	u.srv.Config.Handler = http.HandlerFunc(e.serve)
	return e, roots
}

func (e *echoUpstream) got() ([]string, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.methods...), append([]string(nil), e.encs...)
}

func (e *echoUpstream) serve(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.methods = append(e.methods, r.Method+" "+r.URL.Path)
	e.encs = append(e.encs, r.Header.Get("Accept-Encoding"))
	e.ranges = append(e.ranges, r.Header.Get("Range")+r.Header.Get("If-Range")+r.Header.Get("Request-Range"))
	e.mu.Unlock()
	auth := r.Header.Get("Authorization")
	switch {
	case r.Method == "TRACE" || r.Method == "TRACK" || r.Method == "trace":
		w.Header().Set("Content-Type", "message/http")
		r.Write(w)
		return
	case r.Method == http.MethodConnect:
		io.WriteString(w, "tunnel for "+auth)
		return
	case r.Header.Get("X-Http-Method-Override") != "":
		r.Write(w)
		return
	}
	switch r.URL.Path {
	case "/headers": // httpbin's /headers: small, with a Content-Length
		var names []string
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("{\"headers\": {")
		for _, k := range names {
			fmt.Fprintf(&b, "%q: %q, ", k, r.Header.Get(k))
		}
		b.WriteString("}}\n")
		w.Header().Set("Content-Length", fmt.Sprint(b.Len()))
		io.WriteString(w, b.String())
	case "/header":
		w.Header().Set("X-Debug-Auth", auth)
		io.WriteString(w, "see the header")
	case "/location":
		w.Header().Set("Location", "https://api.github.com/next?auth="+auth)
		w.WriteHeader(http.StatusFound)
	case "/status":
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 200 " + auth + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		brw.Flush()
	case "/early":
		w.Header().Set("Link", "</x>; rel=preload; auth=\""+auth+"\"")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	case "/stream": // unknown length, the value split across writes
		f := w.(http.Flusher)
		io.WriteString(w, "event: a\n\n")
		f.Flush()
		half := len(auth) / 2
		io.WriteString(w, "data: "+auth[:half])
		f.Flush()
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, auth[half:]+"\n\n")
		f.Flush()
	case "/large": // longer than reflectLimit, Content-Length known
		filler := bytes.Repeat([]byte("0123456789abcdef"), (reflectLimit+4096)/16)
		w.Header().Set("Content-Length", fmt.Sprint(len(filler)+len(auth)))
		w.Write(filler)
		io.WriteString(w, auth)
	case "/trailer":
		w.Header().Set("Trailer", "X-Echo")
		io.WriteString(w, "body first")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Echo", auth)
	case "/plain":
		io.WriteString(w, "nothing of yours")
	case "/plain-large": // unknown length, longer than the limit, no value
		f := w.(http.Flusher)
		for i := 0; i < 3*reflectLimit/len(reflPattern); i++ {
			io.WriteString(w, reflPattern)
			if i%97 == 0 {
				f.Flush()
			}
		}
	case "/partial": // the value's first bytes, never the whole value
		io.WriteString(w, "x"+reflValue[:len(reflValue)-1])
	}
}

// reflPattern holds the value's prefix at many offsets (never whole).
const reflPattern = "ghp_real_valu|ghp_|ghp_real_v|g"

// injectedRaw sends one raw request through the injector and returns
// everything the agent got back, raw.
func injectedRaw(t *testing.T, in *Injector, u *echoUpstream, req string) []byte {
	t.Helper()
	agentEnd, done := serveInjected(t, in, u.upstream, "api.github.com")
	a := agentTLS(t, agentEnd, in, "api.github.com")
	a.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(a, req); err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(a) // a cut answer ends in an error: what came is what counts
	a.Close()
	<-done
	return raw
}

// parse reads the first answer in raw (for a request of method).
func parse(t *testing.T, raw []byte, method string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("no answer in %q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// On an intercepted connection, a method whose answer is the request
// itself (TRACE, TRACK, in any case, or a method override saying so)
// and CONNECT are refused with 403 and the rule, before kms is asked and
// before anything goes upstream; the control shows the upstream does
// echo such a request (asked directly), and that the same connection
// serves an ordinary request with the header set.
func TestInjectRefusesTrace(t *testing.T) {
	u, roots := newEchoUpstream(t)
	var released []string
	in := injectorFor(t, roots, &released)
	for _, c := range []struct{ req, method, rule string }{
		{"TRACE /t HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: Bearer PLACEHOLDER\r\n\r\n", "TRACE", RuleSecretsTrace},
		{"TRACK /t HTTP/1.1\r\nHost: api.github.com\r\n\r\n", "TRACK", RuleSecretsTrace},
		{"trace /t HTTP/1.1\r\nHost: api.github.com\r\n\r\n", "trace", RuleSecretsTrace},
		{"POST /t HTTP/1.1\r\nHost: api.github.com\r\nX-HTTP-Method-Override: trace\r\nContent-Length: 0\r\n\r\n", "POST", RuleSecretsTrace},
		{"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n", "CONNECT", RuleSecretsConnect},
	} {
		raw := injectedRaw(t, in, u, c.req)
		if bytes.Contains(raw, []byte(reflValue)) {
			t.Errorf("%s: the value reached the agent:\n%s", c.method, raw)
		}
		resp, body, _ := parse(t, raw, c.method)
		pxRefused(t, resp, http.StatusForbidden, ReasonDeniedMethod, c.rule)
		if !strings.Contains(body, c.rule) {
			t.Errorf("%s: body %q does not name the rule", c.method, body)
		}
	}
	if methods, _ := u.got(); len(methods) != 0 || len(released) != 0 {
		t.Errorf("the upstream got %q and kms released %q: refusals must send nothing", methods, released)
	}

	// Control: the upstream does echo a TRACE, value and all, when asked
	// directly (so it is the refusal that kept it from the agent).
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "api.github.com"}}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("TRACE", u.srv.URL+"/t", nil)
	req.Header.Set("Authorization", "Bearer direct-value")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "Authorization: Bearer direct-value") {
		t.Fatalf("control: the upstream does not echo TRACE: %q", b)
	}
	// Control: an ordinary request on an intercepted connection still
	// gets the header and its answer.
	raw := injectedRaw(t, in, u, "GET /plain HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
	if resp, body, _ := parse(t, raw, "GET"); resp.StatusCode != 200 || body != "nothing of yours" {
		t.Errorf("control GET: %d %q", resp.StatusCode, body)
	}
	if len(released) != 1 {
		t.Errorf("control GET: released %q", released)
	}
}

// An answer from an intercepted host that carries the injected value
// verbatim is not delivered: in its head (a header, a redirect's
// Location, the reason phrase, an interim answer) or in a body net
// reads whole (≤ reflectLimit, with a Content-Length) it becomes 502
// secrets.reflected; in a body passed on as it streams (unknown length,
// or long), it is cut off before the value's first byte goes. In every
// case the agent's raw bytes never hold the value. The control: answers
// that do not carry it (one holding only its prefixes, a long stream)
// pass byte for byte.
func TestInjectRefusesReflected(t *testing.T) {
	u, roots := newEchoUpstream(t)
	var released []string
	in := injectorFor(t, roots, &released)
	for _, c := range []struct {
		path string
		cut  bool // streamed: the head went, the body breaks off
	}{
		{"/headers", false}, {"/header", false}, {"/location", false}, {"/status", false}, {"/early", false},
		{"/stream", true}, {"/large", true}, {"/trailer", true},
	} {
		raw := injectedRaw(t, in, u, "GET "+c.path+" HTTP/1.1\r\nHost: api.github.com\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
		if bytes.Contains(raw, []byte(reflValue)) {
			t.Errorf("%s: the value reached the agent:\n%.300s", c.path, raw)
			continue
		}
		resp, body, err := parse(t, raw, "GET")
		// Chunk framing can split the value in the raw bytes: the body
		// as the agent decodes it must not hold it either.
		if strings.Contains(body, reflValue) {
			t.Errorf("%s: the value reached the agent in the body:\n%.300s", c.path, body)
			continue
		}
		if resp.StatusCode == http.StatusEarlyHints {
			t.Errorf("%s: the interim answer went", c.path)
			continue
		}
		if c.cut {
			if resp.StatusCode != 200 || err == nil {
				t.Errorf("%s: %d, body read error %v: want 200 cut off", c.path, resp.StatusCode, err)
			}
			continue
		}
		pxRefused(t, resp, http.StatusBadGateway, ReasonSecretReflected, RuleSecretsReflected)
		if !strings.Contains(body, "secret") {
			t.Errorf("%s: body %q", c.path, body)
		}
	}
	// The agent asked for gzip; the upstream was asked for identity, so
	// a body echoed back is not hidden from the scan by compression.
	if _, encs := u.got(); len(encs) == 0 || encs[0] != "identity" {
		t.Errorf("the upstream was asked for encodings %q", encs)
	}

	// Nor may the agent ask for the echo in parts (each scanned alone):
	// the upstream is asked for no range.
	injectedRaw(t, in, u, "GET /headers HTTP/1.1\r\nHost: api.github.com\r\nRange: bytes=0-20\r\nIf-Range: \"x\"\r\nRequest-Range: bytes=0-20\r\nConnection: close\r\n\r\n")
	u.mu.Lock()
	last := u.ranges[len(u.ranges)-1]
	u.mu.Unlock()
	if last != "" {
		t.Errorf("the upstream was asked for the range %q", last)
	}

	// Controls: answers without the value pass whole.
	for path, want := range map[string]string{
		"/plain":       "nothing of yours",
		"/partial":     "x" + reflValue[:len(reflValue)-1],
		"/plain-large": strings.Repeat(reflPattern, 3*reflectLimit/len(reflPattern)),
	} {
		raw := injectedRaw(t, in, u, "GET "+path+" HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
		resp, body, err := parse(t, raw, "GET")
		if resp.StatusCode != 200 || err != nil || body != want {
			t.Errorf("control %s: %d %v, body of %d bytes (want %d)", path, resp.StatusCode, err, len(body), len(want))
		}
	}
}

// The same echoing upstream reached through net without injection (a
// host no rule names, tunnelled byte for byte) works: net cannot see the
// method there, and there is no value to hide; TRACE by plain HTTP is
// refused (net refuses it wherever it reads the method). Through the
// same proxy, the rule's host is intercepted and TRACE is refused.
func TestProxyTraceWithAndWithoutInjection(t *testing.T) {
	u, roots := newEchoUpstream(t)
	uap := netip.MustParseAddrPort(u.srv.Listener.Addr().String())
	var released []string
	in := injectorFor(t, roots, &released)
	res := &pxResolver{names: map[string][]netip.Addr{"api.github.com": {pxLoopback}, "plain.test": {pxLoopback}}}
	// Interception is off for the first run: the same host, tunnelled
	// byte for byte (a tunnel's TLS must name its CONNECT host).
	var intercepting atomic.Bool
	h := pxStart(t, nil, res, func(p *Proxy) {
		p.Intercept = func(h Host, _ uint16) bool { return intercepting.Load() && !h.IsIP() && in.Rule(h.Name) >= 0 }
		p.InterceptTLS = func(ctx context.Context, client net.Conn, h Host, port uint16, upstream net.Conn) error {
			return in.Serve(ctx, client, h.Name, port, in.Rule(h.Name), upstream)
		}
	})
	trace := func(name string, pool *x509.CertPool) (*http.Response, string) {
		c := h.conn(t)
		io.WriteString(c, "CONNECT "+name+":"+pxPort(uap)+" HTTP/1.1\r\nHost: "+name+"\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT %s: %v %v", name, resp, err)
		}
		a := tls.Client(&bufferedConn{Conn: c, r: br}, &tls.Config{RootCAs: pool, ServerName: "api.github.com"})
		io.WriteString(a, "TRACE /t HTTP/1.1\r\nHost: api.github.com:"+pxPort(uap)+"\r\nAuthorization: Bearer agent-own\r\nConnection: close\r\n\r\n")
		raw, _ := io.ReadAll(a)
		resp, body, _ := parse(t, raw, "TRACE")
		return resp, body
	}
	// Without injection: the upstream's own certificate, the echo comes
	// back (the agent's own header only).
	resp, body := trace("api.github.com", roots)
	if resp.StatusCode != 200 || !strings.Contains(body, "Authorization: Bearer agent-own") || strings.Contains(body, reflValue) {
		t.Errorf("tunnelled TRACE: %d %q", resp.StatusCode, body)
	}
	// With injection: refused, nothing upstream, nothing released.
	before, _ := u.got()
	ca := x509.NewCertPool()
	ca.AddCert(in.CA.Cert)
	intercepting.Store(true)
	resp, body = trace("api.github.com", ca)
	pxRefused(t, resp, http.StatusForbidden, ReasonDeniedMethod, RuleSecretsTrace)
	if after, _ := u.got(); len(after) != len(before) || len(released) != 0 || strings.Contains(body, reflValue) {
		t.Errorf("intercepted TRACE: upstream %q, released %q, body %q", after, released, body)
	}

	// Plain HTTP: TRACE refused before any lookup; GET to the same
	// plain echo server passes (the control).
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "TRACE" {
			t.Errorf("a TRACE was forwarded")
		}
		r.Write(w)
	}))
	defer plain.Close()
	authority := "plain.test:" + pxPort(netip.MustParseAddrPort(plain.Listener.Addr().String()))
	lookups := res.count()
	for _, m := range []string{"TRACE", "TRACK"} {
		resp, _, _, _ := h.roundTrip(t, m, m+" http://"+authority+"/t HTTP/1.1\r\nHost: "+authority+"\r\n\r\n")
		pxRefused(t, resp, http.StatusForbidden, ReasonDeniedMethod, RuleTrace)
	}
	if res.count() != lookups {
		t.Errorf("a refused TRACE was looked up")
	}
	resp, body, _, _ = h.roundTrip(t, "GET", "GET http://"+authority+"/t HTTP/1.1\r\nHost: "+authority+"\r\nX-Mine: 1\r\n\r\n")
	if resp.StatusCode != 200 || !strings.Contains(body, "X-Mine: 1") {
		t.Errorf("control GET: %d %q", resp.StatusCode, body)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "rule="+RuleTrace) {
		t.Errorf("the refusal was not logged:\n%s", logs)
	}
}

// A _method field in the query, which Symfony and Laravel read as a
// POST's method (TRACE among those they take), went on, the value set on
// an intercepted connection. Now it counts as the method, spelt as PHP
// reads a name (%5Fmethod, .method, a leading blank), wherever net reads
// the method: intercepted (secrets.trace, secrets.connect) and plain
// HTTP (proxy.trace). Controls: _method=PUT, and a field that only ends
// in _method, pass.
func TestRefusesMethodParam(t *testing.T) {
	u, roots := newEchoUpstream(t)
	var released []string
	in := injectorFor(t, roots, &released)
	refused := []struct{ query, rule string }{
		{"_method=TRACE", RuleSecretsTrace},
		{"a=1&_method=trace", RuleSecretsTrace},
		{"%5Fmethod=TRACK", RuleSecretsTrace},
		{"_method=%54RACE", RuleSecretsTrace},
		{"_METHOD=+TRACE+", RuleSecretsTrace},
		{".method=TRACE", RuleSecretsTrace},
		{"+_method=TRACE", RuleSecretsTrace},
		{"a=1;_method=TRACE", RuleSecretsTrace},
		{"_method=%zz&_method=TRACE", RuleSecretsTrace},
		{"_method=CONNECT", RuleSecretsConnect},
	}
	for _, c := range refused {
		raw := injectedRaw(t, in, u, "POST /t?"+c.query+" HTTP/1.1\r\nHost: api.github.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		resp, _, _ := parse(t, raw, "POST")
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Pinfold-Rule") != c.rule || resp.Header.Get("X-Pinfold-Reason") != ReasonDeniedMethod {
			t.Errorf("intercepted POST /t?%s: %d %q, want 403 %s", c.query, resp.StatusCode, resp.Header.Get("X-Pinfold-Rule"), c.rule)
		}
	}
	if methods, _ := u.got(); len(methods) != 0 || len(released) != 0 {
		t.Errorf("the upstream got %q and kms released %q: refusals must send nothing", methods, released)
	}
	for _, q := range []string{"_method=PUT", "x_method=TRACE"} {
		raw := injectedRaw(t, in, u, "POST /t?"+q+" HTTP/1.1\r\nHost: api.github.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		if resp, _, _ := parse(t, raw, "POST"); resp.StatusCode != http.StatusOK {
			t.Errorf("control POST /t?%s: %d", q, resp.StatusCode)
		}
	}

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("_method") && r.URL.Query().Get("_method") != "PUT" {
			t.Errorf("a request with %q was forwarded", r.URL.RawQuery)
		}
	}))
	defer plain.Close()
	res := &pxResolver{names: map[string][]netip.Addr{"plain.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	authority := "plain.test:" + pxPort(netip.MustParseAddrPort(plain.Listener.Addr().String()))
	for _, q := range []string{"_method=TRACE", "%5Fmethod=track", ".method=TRACE"} {
		resp, _, _, _ := h.roundTrip(t, "POST", "POST http://"+authority+"/t?"+q+" HTTP/1.1\r\nHost: "+authority+"\r\nContent-Length: 0\r\n\r\n")
		pxRefused(t, resp, http.StatusForbidden, ReasonDeniedMethod, RuleTrace)
	}
	resp, _, _, _ := h.roundTrip(t, "POST", "POST http://"+authority+"/t?_method=PUT HTTP/1.1\r\nHost: "+authority+"\r\nContent-Length: 0\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("control plain POST ?_method=PUT: %d", resp.StatusCode)
	}
}

// The streaming scanner finds the value however the reads split it,
// passes on no byte of a match, and passes everything else byte for
// byte (iotest.TestReader checks the Reader's contract too).
func TestReflectScanner(t *testing.T) {
	value := []byte("SECRET-VALUE")
	for pre := 0; pre < 40; pre += 3 {
		for chunk := 1; chunk <= len(value)+3; chunk++ {
			prefix := bytes.Repeat([]byte("SECRET-VALU"), pre)[:pre]
			data := append(append(append([]byte(nil), prefix...), value...), "tail"...)
			s := newReflectScanner(&chunker{data: data, n: chunk}, value, nil)
			out, err := io.ReadAll(s)
			if err != errReflected {
				t.Fatalf("pre %d chunk %d: err %v, out %q", pre, chunk, err, out)
			}
			if !bytes.HasPrefix(prefix, out) {
				t.Fatalf("pre %d chunk %d: passed on %q, beyond the bytes before the match", pre, chunk, out)
			}
		}
	}
	clean := bytes.Repeat([]byte("SECRET-VALU|SECRET-|S|"), 5000)
	for _, chunk := range []int{1, 5, 11, 12, 13, 4096, 1 << 20} {
		if err := iotest.TestReader(newReflectScanner(&chunker{data: clean, n: chunk}, value, nil), clean); err != nil {
			t.Errorf("chunk %d: %v", chunk, err)
		}
		if err := iotest.TestReader(newReflectScanner(iotest.OneByteReader(bytes.NewReader(clean[:300])), value, nil), clean[:300]); err != nil {
			t.Errorf("one byte: %v", err)
		}
	}
	// The end's refusal (trailers) holds back what was held.
	s := newReflectScanner(bytes.NewReader([]byte("abc")), value, func() error { return errReflected })
	if out, err := io.ReadAll(s); err != errReflected || len(out) != 0 {
		t.Errorf("end refusal: %q %v", out, err)
	}
}

// chunker reads data n bytes at a time.
type chunker struct {
	data []byte
	n    int
}

func (c *chunker) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// Answers read whole share a budget (WholeBudget): past it an answer is
// scanned as it streams instead, which keeps the value from the agent
// just the same (cut off), and a clean answer passes whole. The budget
// is given back after each answer.
func TestInjectWholeBudget(t *testing.T) {
	u, roots := newEchoUpstream(t)
	var released []string
	in := injectorFor(t, roots, &released)
	in.WholeBudget = 1
	raw := injectedRaw(t, in, u, "GET /headers HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
	if bytes.Contains(raw, []byte(reflValue)) {
		t.Fatalf("the value reached the agent past the budget:\n%.300s", raw)
	}
	resp, body, err := parse(t, raw, "GET")
	if resp.StatusCode != 200 || err == nil || strings.Contains(body, reflValue) {
		t.Errorf("past the budget, an echo: %d %v (want 200, cut off)", resp.StatusCode, err)
	}
	raw = injectedRaw(t, in, u, "GET /plain HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
	if resp, body, err := parse(t, raw, "GET"); resp.StatusCode != 200 || err != nil || body != "nothing of yours" {
		t.Errorf("control past the budget: %d %v %q", resp.StatusCode, err, body)
	}
	in.WholeBudget = 0
	raw = injectedRaw(t, in, u, "GET /headers HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
	if resp, _, _ := parse(t, raw, "GET"); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("within the budget, an echo: %d, want 502", resp.StatusCode)
	}
	in.mu.Lock()
	held := in.whole
	in.mu.Unlock()
	if held != 0 {
		t.Errorf("%d bytes of the budget still held after the answers", held)
	}
}
