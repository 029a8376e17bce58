package probe

import (
	"bufio"
	"fmt"
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
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	rule := resp.Header.Get("X-Pinfold-Rule")
	if rule == "" {
		rule = "-"
	}
	fmt.Printf("status %d %s %s\n", resp.StatusCode, rule, strings.TrimSpace(line))
	os.Exit(0)
}
