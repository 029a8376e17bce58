package probe

import (
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"
)

// httpGet fetches url through the proxy HTTP_PROXY names (always: Go's
// own reading of the variables never proxies loopback targets, which the
// tests' upstreams are) and prints
// `status N RULE FIRSTLINE`: the status, the X-Pinfold-Rule header ("-"
// when absent) and the body's first line. It exits 0 when an answer came
// (whatever its status), and fails the probe when none did.
func httpGet(url string) {
	resp, body := fetch(url)
	fmt.Println(answerLine(resp, body))
	os.Exit(0)
}

// fetch GETs url as httpGet does, and reads at most 1 MiB of the body;
// it fails the probe when no answer came.
func fetch(url string) (*http.Response, []byte) {
	tr := &http.Transport{}
	if p := os.Getenv("HTTP_PROXY"); p != "" {
		pu, err := neturl.Parse(p)
		if err != nil {
			broke(fmt.Errorf("HTTP_PROXY %q: %w", p, err))
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: tr}
	resp, err := c.Get(url)
	if err != nil {
		broke(fmt.Errorf("http-get %s: %w", url, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		broke(fmt.Errorf("http-get %s: the body: %w", url, err))
	}
	return resp, body
}

// answerLine is `status N RULE FIRSTLINE`.
func answerLine(resp *http.Response, body []byte) string {
	line, _, _ := strings.Cut(string(body), "\n")
	rule := resp.Header.Get("X-Pinfold-Rule")
	if rule == "" {
		rule = "-"
	}
	return fmt.Sprintf("status %d %s %s", resp.StatusCode, rule, strings.TrimSpace(line))
}
