package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// What a hunt of intercepted connections found, each fixed here.

// rawUpstream answers every request with raw, given the request's
// Authorization value (without "Bearer ").
func rawUpstream(t *testing.T, host string, raw func(auth string) string) (*upstream, *Injector) {
	t.Helper()
	u, roots := upstreamFor(t, host)
	u.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString(raw(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		brw.Flush()
	})
	var released []string
	return u, injectorFor(t, roots, &released)
}

// exchangeRaw sends one request on an intercepted connection and returns
// what the agent got and Serve's error.
func exchangeRaw(t *testing.T, in *Injector, u *upstream, host, request string) (string, error) {
	t.Helper()
	agentEnd, done := serveInjected(t, in, u, host)
	a := agentTLS(t, agentEnd, in, host)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(a, request)
	got, _ := io.ReadAll(a)
	a.Close()
	select {
	case err := <-done:
		return string(got), err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end")
	}
	return "", nil
}

// An upstream that echoes the value in a malformed answer made Serve's
// error quote it, and net logs that error: the value stayed at rest in
// net.log.
func TestInjectValueNotInErrors(t *testing.T) {
	const host = "api.github.com"
	u, in := rawUpstream(t, host, func(auth string) string {
		return "HTTP/1.1 200 OK\r\nBearer " + auth + "\r\n\r\n"
	})
	got, err := exchangeRaw(t, in, u, host, "GET / HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
	if err == nil || strings.Contains(err.Error(), "ghp_real_value") || !strings.Contains(err.Error(), "[the secret]") {
		t.Errorf("Serve's error: %v", err)
	}
	if strings.Contains(got, "ghp_real_value") || !strings.Contains(got, "502") {
		t.Errorf("the agent got %q", got)
	}
}

// A header NAME holding the value was canonicalised by Go (ghp_ became
// Ghp_) before the scan, and passed on.
func TestInjectRefusesValueAsHeaderName(t *testing.T) {
	const host = "api.github.com"
	u, in := rawUpstream(t, host, func(auth string) string {
		return "HTTP/1.1 200 OK\r\n" + auth + ": 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
	})
	got, _ := exchangeRaw(t, in, u, host, "GET / HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
	if strings.Contains(strings.ToLower(got), "ghp_real_value") || !strings.Contains(got, RuleSecretsReflected) {
		t.Errorf("the agent got %q", got)
	}
}

// A Host with something other than a numeric port after the name went
// upstream with the value set; only the name, or the name and a port,
// do now. Control: the name with :443.
func TestInjectHostStrict(t *testing.T) {
	const host = "api.github.com"
	for hostHdr, ok := range map[string]bool{
		"api.github.com:443,evil.example": false,
		"api.github.com:evil.example":     false,
		"[api.github.com]:443":            false,
		"api.github.com:":                 false,
		"api.github.com:443":              true,
		"API.github.com.":                 true,
	} {
		u, roots := upstreamFor(t, host)
		var released []string
		in := injectorFor(t, roots, &released)
		got, _ := exchangeRaw(t, in, u, host, "GET / HTTP/1.1\r\nHost: "+hostHdr+"\r\nConnection: close\r\n\r\n")
		u.mu.Lock()
		sent := len(u.auth) > 0
		u.mu.Unlock()
		if sent != ok || (!ok && !strings.Contains(got, RuleSecretsHost)) {
			t.Errorf("Host %q: value sent %v (want %v); the agent got %.80q", hostHdr, sent, ok, got)
		}
	}
}

// The request head on an intercepted connection was read without a
// bound (64 MiB took 245 MiB of net's heap): it is refused past
// injectMaxHeaderBytes with 431, before kms is asked.
func TestInjectHeadBounded(t *testing.T) {
	const host = "api.github.com"
	u, _, released, a, done := interceptedAgent(t, host)
	a.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		fmt.Fprintf(a, "GET / HTTP/1.1\r\nHost: api.github.com\r\nX-Big: ")
		chunk := strings.Repeat("a", 64<<10)
		for range 64 { // 4 MiB: far past the bound; stops once net closes
			if _, err := io.WriteString(a, chunk); err != nil {
				return
			}
		}
		io.WriteString(a, "\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 4 MiB head: %v, %v", resp, err)
	}
	a.Close()
	<-done
	if len(*released) != 0 || len(u.auth) != 0 {
		t.Errorf("kms was asked (%q) or the upstream reached (%q)", *released, u.auth)
	}
}

// X-Pinfold-* trailers from the upstream reached the agent, where they
// could pass for net's own refusal.
func TestInjectCleansTrailers(t *testing.T) {
	const host = "api.github.com"
	u, in := rawUpstream(t, host, func(string) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Pinfold-Rule\r\nConnection: close\r\n\r\n" +
			"2\r\nok\r\n0\r\nX-Pinfold-Rule: fake\r\nX-Other: kept\r\n\r\n"
	})
	got, _ := exchangeRaw(t, in, u, host, "GET / HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
	if strings.Contains(got, "fake") || !strings.Contains(got, "ok") {
		t.Errorf("the agent got %q", got)
	}
}

// The certificates made for the names a wildcard rule matches are
// bounded: the agent chooses the names.
func TestInjectLeafCacheBounded(t *testing.T) {
	_, roots := upstreamFor(t, "api.github.com")
	var released []string
	in := injectorFor(t, roots, &released)
	for i := range maxLeaves + 50 {
		if _, err := in.leaf(fmt.Sprintf("x%d.example.com", i)); err != nil {
			t.Fatal(err)
		}
	}
	in.mu.Lock()
	n := len(in.certs)
	in.mu.Unlock()
	if n > maxLeaves {
		t.Errorf("%d certificates kept, want at most %d", n, maxLeaves)
	}
}

// An agent that asks Expect: 100-continue (curl does for a large body)
// is told to go on at once, not left to its own timeout; the upstream
// gets the body without the Expect; another expectation is refused.
func TestInjectExpectContinue(t *testing.T) {
	const host = "api.github.com"
	t.Run("100-continue", func(t *testing.T) {
		_, _, _, a, done := interceptedAgent(t, host)
		a.SetDeadline(time.Now().Add(10 * time.Second))
		body := strings.Repeat("x", 2048)
		io.WriteString(a, "POST /upload HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: Bearer PLACEHOLDER\r\nExpect: 100-continue\r\nContent-Length: 2048\r\nConnection: close\r\n\r\n")
		br := bufio.NewReader(a)
		// The body is not sent yet: the answer must come without it.
		a.SetReadDeadline(time.Now().Add(3 * time.Second))
		interim, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer before the body: %v", err)
		}
		if interim.StatusCode != http.StatusContinue {
			t.Fatalf("first answer %d, want 100", interim.StatusCode)
		}
		a.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(a, body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		a.Close()
		<-done
		if resp.StatusCode != 200 || !strings.Contains(string(got), "hello from api.github.com") {
			t.Fatalf("%d %q", resp.StatusCode, got)
		}
	})
	t.Run("other expectation", func(t *testing.T) {
		_, _, released, a, done := interceptedAgent(t, host)
		a.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(a, "POST /upload HTTP/1.1\r\nHost: api.github.com\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx")
		resp, err := http.ReadResponse(bufio.NewReader(a), nil)
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		<-done
		if resp.StatusCode != http.StatusExpectationFailed || resp.Header.Get("X-Pinfold-Rule") != RuleSecretsRequest {
			t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("X-Pinfold-Rule"))
		}
		if len(*released) != 0 {
			t.Errorf("the value was released for a refused request: %v", *released)
		}
	})
}

// Only the first Location of an intercepted 3xx was checked: a second
// one, or the one after an empty first, went to the agent unchecked.
// Several Locations, or an empty one, are refused; one allowed Location
// passes (the control).
func TestInjectRedirectEveryLocation(t *testing.T) {
	const host = "api.github.com"
	for _, c := range []struct {
		locs   []string
		status string
	}{
		{[]string{"https://api.github.com/ok", "http://169.254.169.254/latest/"}, "403"},
		{[]string{"", "http://169.254.169.254/latest/"}, "403"},
		{[]string{"https://api.github.com/ok", "https://api.github.com/ok"}, "403"},
		{[]string{""}, "403"},
		{[]string{"https://api.github.com/ok"}, "302"},
	} {
		head := ""
		for _, l := range c.locs {
			head += "Location: " + l + "\r\n"
		}
		u, in := rawUpstream(t, host, func(string) string {
			return "HTTP/1.1 302 Found\r\n" + head + "Content-Length: 0\r\nConnection: close\r\n\r\n"
		})
		var asked []string
		in.CheckRedirect = func(_ context.Context, _ *url.URL, loc string) (string, bool) {
			asked = append(asked, loc)
			return "ssrf.metadata", strings.Contains(loc, "169.254.169.254")
		}
		got, _ := exchangeRaw(t, in, u, host, "GET / HTTP/1.1\r\nHost: api.github.com\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(got, "HTTP/1.1 "+c.status) {
			t.Errorf("Locations %q: the agent got %q (asked %q)", c.locs, got, asked)
		}
		if c.status == "403" && !strings.Contains(got, "X-Pinfold-Reason: "+ReasonDeniedRedirect) {
			t.Errorf("Locations %q: not a redirect refusal: %q", c.locs, got)
		}
	}
}
