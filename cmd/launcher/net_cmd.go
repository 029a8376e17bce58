package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/pinfold/pinfold/components/session"
)

const netHelp = `Usage (as the agent, in a launch with [network] mode = "proxy": a
components-mode session, or beside a wrapper-mode agent):
  launcher net get URL     print the body of URL, fetched through net

Asks the session's net component (the proxy at PINFOLD_NET), which
decides the host and every address it resolves to under the policy's
[network] table. Ordinary tools reach it too, through HTTP_PROXY and
HTTPS_PROXY, which the launcher sets.

A request net refuses prints the reason and the rule and exits 119; any
other HTTP status above 399 exits 125.
` + exitCodesHelp

func (e env) netVerb(args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(e.stdout, netHelp)
		return nil
	}
	if len(args) == 0 || args[0] != "get" {
		return fail(exitUsage, "run `launcher net --help`", "net: want `net get URL`")
	}
	rest, err := e.parse(flags("net get"), netHelp, args[1:], 1)
	if err != nil {
		return err
	}
	addr := os.Getenv(session.EnvNet)
	if addr == "" {
		return fail(exitUsage, "run it inside the agent that `launcher --policy-sha256 M --policy P -- AGENT` starts under a policy with [network] mode = \"proxy\"",
			"net: not inside a launch in \"proxy\" mode: %s is not set (the launcher sets it for the agent, in components and wrapper mode)", session.EnvNet)
	}
	u, err := url.Parse(rest[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(exitUsage, "", "net get: %q is not an http or https URL", rest[0])
	}
	c := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}}
	resp, err := c.Get(u.String())
	if err != nil {
		return fail(exitFailure, "", "net get %s: %v", u, err)
	}
	defer resp.Body.Close()
	if rule := resp.Header.Get("X-Pinfold-Rule"); resp.StatusCode == http.StatusForbidden && rule != "" {
		return &cliError{code: exitDenied, err: fmt.Errorf("net get %s: denied (%s, rule %s)", u, resp.Header.Get("X-Pinfold-Reason"), rule)}
	}
	if _, err := io.Copy(e.stdout, resp.Body); err != nil {
		return fail(exitFailure, "", "net get %s: %v", u, err)
	}
	if resp.StatusCode >= 400 {
		return fail(exitFailure, "", "net get %s: HTTP %s", u, resp.Status)
	}
	return nil
}
