package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinfold/pinfold/policy"
)

var injectRules = []policy.Secret{
	{Name: "github", Hosts: []policy.Domain{"api.github.com", "*.githubusercontent.com"}, Header: "Authorization", Template: "Bearer {secret}"},
}

// upstream is a loopback TLS server standing in for the real host; it
// records the headers it got.
type upstream struct {
	srv   *httptest.Server
	mu    sync.Mutex
	auth  []string
	uris  []string // each request's target, as the upstream read it
	hosts []string // each request's Host, as the upstream read it
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.uris = append(u.uris, r.RequestURI)
		u.hosts = append(u.hosts, r.Host)
		u.mu.Unlock()
		io.WriteString(w, "hello from "+r.Host)
	}))
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	return u
}

// The test's upstream certificate is for "example.com"; the injector is
// told the upstream host is api.github.com, so it must verify the
// upstream for that name: the test's roots carry a certificate for it.
func injectorFor(t *testing.T, roots *x509.CertPool, released *[]string) *Injector {
	t.Helper()
	ca, err := NewInjectCA(injectRules, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &Injector{CA: ca, Rules: injectRules, Roots: roots,
		Release: func(_ context.Context, name, host string) ([]byte, error) {
			*released = append(*released, name+"@"+host)
			return []byte("ghp_real_value"), nil
		}}
}

// agentTLS is the agent's side: it trusts the interception CA.
func agentTLS(t *testing.T, c net.Conn, in *Injector, host string) *tls.Conn {
	pool := x509.NewCertPool()
	pool.AddCert(in.CA.Cert)
	return tls.Client(c, &tls.Config{ServerName: host, RootCAs: pool})
}

// serveInjected runs the injector between a pipe (the agent) and a real
// TCP connection to the loopback upstream, and returns the agent's end.
// The agent connected to host:443.
func serveInjected(t *testing.T, in *Injector, u *upstream, host string) (net.Conn, chan error) {
	return serveInjectedPort(t, in, u, host, 443)
}

// serveInjectedPort is serveInjected for a CONNECT to host:port.
func serveInjectedPort(t *testing.T, in *Injector, u *upstream, host string, port uint16) (net.Conn, chan error) {
	agentEnd, proxyEnd := net.Pipe()
	up, err := net.Dial("tcp", u.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- in.Serve(context.Background(), proxyEnd, host, port, in.Rule(host), up) }()
	return agentEnd, done
}

// interceptedAgent is an agent's TLS connection, intercepted by an
// injector for host, to a loopback upstream: the upstream, the injector,
// what kms released, the agent's end, and Serve's result.
func interceptedAgent(t *testing.T, host string) (*upstream, *Injector, *[]string, *tls.Conn, chan error) {
	t.Helper()
	u, roots := upstreamFor(t, host)
	released := &[]string{}
	in := injectorFor(t, roots, released)
	agentEnd, done := serveInjected(t, in, u, host)
	return u, in, released, agentTLS(t, agentEnd, in, host), done
}

// upstreamRoots trusts the test server's certificate under the name
// api.github.com (httptest's certificate names example.com: the
// injector verifies against the name it was told, so a pool with that
// certificate alone does not do; VerifyPeerCertificate is not ours to
// change, so the test server's cert is reissued for the name).
func upstreamFor(t *testing.T, host string) (*upstream, *x509.CertPool) {
	u := newUpstream(t)
	cert, key, pool := selfSigned(t, host)
	u.srv.TLS.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}}
	return u, pool
}

// The agent's request to a rule's host leaves with the rule's header
// set from the value kms released for that host (the placeholder the
// agent sent replaced); the agent never receives the value.
func TestInjectSetsHeader(t *testing.T) {
	const host = "api.github.com"
	u, _, released, a, done := interceptedAgent(t, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(a, "GET /user HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: Bearer PLACEHOLDER\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	a.Close()
	<-done
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello from api.github.com") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if len(u.auth) != 1 || u.auth[0] != "Bearer ghp_real_value" {
		t.Errorf("upstream got Authorization %q", u.auth)
	}
	if len(*released) != 1 || (*released)[0] != "github@api.github.com" {
		t.Errorf("released %v", *released)
	}
	if strings.Contains(string(body), "ghp_real_value") || strings.Contains(strings.Join(resp.Header.Values("Authorization"), ""), "ghp") {
		t.Error("the value came back to the agent")
	}
}

// A request on the intercepted connection whose Host is another name is
// refused before any value is fetched; the control is the test above.
func TestInjectRefusesOtherHost(t *testing.T) {
	const host = "api.github.com"
	u, _, released, a, done := interceptedAgent(t, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(a, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	<-done
	if resp.StatusCode != 403 || resp.Header.Get("X-Pinfold-Reason") != "host-mismatch" || len(*released) != 0 || len(u.auth) != 0 {
		t.Errorf("%d %v released %v upstream %v", resp.StatusCode, resp.Header, *released, u.auth)
	}
}

// An upstream whose certificate does not verify for the host gets no
// request (and so no value): 502.
func TestInjectVerifiesUpstream(t *testing.T) {
	const host = "api.github.com"
	u, _ := upstreamFor(t, host)
	var released []string
	in := injectorFor(t, x509.NewCertPool(), &released) // roots that trust nothing
	agentEnd, done := serveInjected(t, in, u, host)
	a := agentTLS(t, agentEnd, in, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "upstream handshake") {
		t.Errorf("Serve: %v", err)
	}
	if resp.StatusCode != 502 || len(released) != 0 || len(u.auth) != 0 {
		t.Errorf("%d released %v upstream %v", resp.StatusCode, released, u.auth)
	}
}

// The interception CA is name-constrained to the rules' hosts: a
// certificate it signs for any other name does not verify, for the
// wildcard rule only names beneath the suffix do, and the CA's key does
// not sign further CAs (path length 0).
func TestInjectCANameConstraints(t *testing.T) {
	ca, err := NewInjectCA(injectRules, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	in := &Injector{CA: ca, Rules: injectRules}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for host, want := range map[string]bool{
		"api.github.com":            true,
		"raw.githubusercontent.com": true,
		"evil.com":                  false,
		"github.com":                false,
		"githubusercontent.com":     false,
		"api.github.com.evil.com":   false,
		"xapi.github.com":           false,
	} {
		c, err := in.leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool})
		if (err == nil) != want {
			t.Errorf("%s: verified %v, want %v (%v)", host, err == nil, want, err)
		}
	}
	back, err := ParseInjectCA(ca.CertPEM(), mustKeyPEM(t, ca))
	if err != nil || !back.Cert.Equal(ca.Cert) {
		t.Errorf("PEM round trip: %v", err)
	}
	if !ca.Cert.MaxPathLenZero || !ca.Cert.PermittedDNSDomainsCritical {
		t.Error("the CA may sign CAs, or its constraints are not critical")
	}
	if _, err := NewInjectCA(nil, time.Now(), time.Hour); err == nil {
		t.Error("a CA with no hosts (no constraint) was made")
	}
}

func mustKeyPEM(t *testing.T, ca *InjectCA) []byte {
	b, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An interim answer (103 Early Hints) is passed on and the final answer
// follows on the same connection, so the next request gets its own
// answer, not the previous one's.
func TestInjectInterimAnswers(t *testing.T) {
	const host = "api.github.com"
	u, roots := upstreamFor(t, host)
	u.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
		}
		io.WriteString(w, "answer for "+r.URL.Path)
	})
	var released []string
	in := injectorFor(t, roots, &released)
	agentEnd, done := serveInjected(t, in, u, host)
	a := agentTLS(t, agentEnd, in, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(a)
	io.WriteString(a, "GET /hints HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
	var got []string
	for len(got) < 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, body))
	}
	io.WriteString(a, "GET /second HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, body))
	a.Close()
	<-done
	want := []string{"103 ", "200 answer for /hints", "200 answer for /second"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("answers %q, want %q", got, want)
	}
}

// Inside an intercepted connection, an answer redirecting to a target
// the policy refuses becomes 403, as for plain HTTP; one to an allowed
// target passes (the control).
func TestInjectRedirects(t *testing.T) {
	const host = "api.github.com"
	u, roots := upstreamFor(t, host)
	u.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	var released []string
	in := injectorFor(t, roots, &released)
	var asked []string
	in.CheckRedirect = func(_ context.Context, base *url.URL, loc string) (string, bool) {
		asked = append(asked, base.Host+" -> "+loc)
		return "ssrf.metadata", strings.Contains(loc, "169.254.169.254")
	}
	for _, c := range []struct {
		to     string
		status int
	}{{"http://169.254.169.254/latest/", 403}, {"https://api.github.com/elsewhere", 302}} {
		agentEnd, done := serveInjected(t, in, u, host)
		a := agentTLS(t, agentEnd, in, host)
		a.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(a, "GET /r?to="+url.QueryEscape(c.to)+" HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(a), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body) // unread, the body's write waits out Close's 5 s
		a.Close()
		<-done
		if resp.StatusCode != c.status || (c.status == 403 && resp.Header.Get("X-Pinfold-Reason") != "denied-redirect") {
			t.Errorf("redirect to %s: %d %v", c.to, resp.StatusCode, resp.Header)
		}
	}
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "api.github.com -> ") {
		t.Errorf("asked %q", asked)
	}
}

// An answer that keeps moving is passed on however long it lasts; one
// that stops for longer than the idle time is cut off there. (Deadlines
// were once set per request: a model's answer streamed for more than two
// minutes was cut.)
func TestInjectIdleNotTotal(t *testing.T) {
	const host = "api.github.com"
	const idle = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, pause := 8, 100*time.Millisecond // 800 ms, each pause well within idle
		if r.URL.Path == "/stall" {
			n, pause = 2, 3*idle
		}
		for i := range n {
			if i > 0 {
				time.Sleep(pause)
			}
			fmt.Fprintf(w, "chunk %d\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	cert, key, roots := selfSigned(t, host)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		path   string
		chunks int
	}{{"/stream", 8}, {"/stall", 1}} {
		var released []string
		in := injectorFor(t, roots, &released)
		in.Idle = idle
		agentEnd, proxyEnd := net.Pipe()
		up, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- in.Serve(context.Background(), proxyEnd, host, 443, in.Rule(host), up) }()
		a := agentTLS(t, agentEnd, in, host)
		a.SetDeadline(time.Now().Add(10 * time.Second))
		start := time.Now()
		io.WriteString(a, "GET "+c.path+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(a), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		a.Close()
		<-done
		if got := strings.Count(string(body), "chunk "); got != c.chunks {
			t.Errorf("%s: %d chunks after %v (idle %v), want %d", c.path, got, time.Since(start).Round(time.Millisecond), idle, c.chunks)
		}
	}
}
