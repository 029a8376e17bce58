package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/session"
)

const netHelp = `Usage (as the agent, in a launch with [network] mode = "proxy": a
components-mode session, or beside a wrapper-mode agent):
  launcher net get URL     print the body of URL, fetched through net

Asks the session's net component (the proxy at PINFOLD_NET), which
decides the host and every address it resolves to under the policy's
[network] table. Ordinary tools reach it too, through HTTP_PROXY and
HTTPS_PROXY, which the launcher sets.

Exit status:
  0    fetched, with a status below 400
  119  net decided against it: "denied", with net's reason and rule (403:
       the host, every address, a redirect, the method or a header; 502
       secrets.reflected: the answer carried an injected secret)
  120  a bad command line or URL, or PINFOLD_NET is not set
  125  not fetched, and no decision: net's own failure, with its reason and
       rule (502: the name did not resolve, no address answered, the
       upstream failed; 504: a timeout; 400: a malformed request), no usable
       answer from net, or the site answered an HTTP status above 399 (its
       body is printed)
net's reason and rule are believed from its headers in plain HTTP and on
an https connection it intercepts; through a byte tunnel the answer is the
site's alone.
` + exitCodesHelp

// netGetRoots are the roots net get trusts for https; nil, the system's
// (SSL_CERT_FILE, which the launcher points at a bundle holding the
// interception CA when it intercepts). Tests set their own.
var netGetRoots *x509.CertPool

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
	// A refusal of a CONNECT (https) reaches the caller only as an error
	// naming its status: net's rule and reason are kept from its headers.
	var connect atomic.Pointer[netAnswer]
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}),
		OnProxyConnectResponse: func(_ context.Context, _ *url.URL, _ *http.Request, r *http.Response) error {
			if r.StatusCode != http.StatusOK {
				connect.Store(readNetAnswer(r))
			}
			return nil
		}}
	if netGetRoots != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: netGetRoots}
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: 5 * time.Minute, Transport: tr}
	resp, err := c.Get(u.String())
	if a := connect.Load(); a != nil {
		return a.err(u)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return fail(exitFailure, "", "net get %s: no usable answer from the session's net component (%s=%s): %v", u, session.EnvNet, addr, err)
	}
	if err != nil { // past net: the site's TLS, or its answer, failed
		return fail(exitFailure, "", "net get %s: %v", u, err)
	}
	defer resp.Body.Close()
	// Only net says X-Pinfold-*: it drops the headers from upstreams'
	// answers, in plain HTTP and on connections it intercepts.
	if resp.Header.Get("X-Pinfold-Reason") != "" && netSaid(resp) {
		return readNetAnswer(resp).err(u)
	}
	if _, err := io.Copy(e.stdout, resp.Body); err != nil {
		return fail(exitFailure, "", "net get %s: %v", u, err)
	}
	if resp.StatusCode >= 400 {
		return fail(exitFailure, "", "net get %s: the site answered HTTP %s", u, resp.Status)
	}
	return nil
}

// netAnswer is net's own answer to a request it did not carry out: its
// status, X-Pinfold-Reason and X-Pinfold-Rule, and the first line of its
// text.
type netAnswer struct {
	status       string
	code         int
	reason, rule string
	text         string
}

func readNetAnswer(r *http.Response) *netAnswer {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1024))
	line, _, _ := strings.Cut(string(b), "\n")
	return &netAnswer{status: r.Status, code: r.StatusCode, reason: r.Header.Get("X-Pinfold-Reason"), rule: r.Header.Get("X-Pinfold-Rule"),
		text: strings.TrimSpace(line)}
}

// err is net get's error for a: a decision of net's exits 119 and says
// "denied": every 403 (a host, an address, a redirect, a method or a
// header its rules refuse) and the answer it held back because it carried
// an injected secret (502, secrets.reflected). Its other answers decided
// nothing (502: the name did not resolve, no allowed address answered,
// the upstream failed, kms gave no secret; 504: a timeout; 400: a
// malformed request) and exit 125, with net's reason and rule.
func (a *netAnswer) err(u *url.URL) error {
	if a.reason == "" { // not net's words: what listens there is not net
		return fail(exitFailure, "", "net get %s: the proxy at %s answered HTTP %s, without net's reason and rule", u, session.EnvNet, a.status)
	}
	code, what := exitFailure, "not fetched, and not a policy decision"
	if a.code == http.StatusForbidden || a.reason == netc.ReasonSecretReflected {
		code, what = exitDenied, "denied"
	}
	msg := fmt.Sprintf("net get %s: %s (%s, rule %s; HTTP %s)", u, what, a.reason, a.rule, a.status)
	if a.text != "" {
		msg += ": " + printable(a.text)
	}
	return &cliError{code: code, err: errors.New(msg)}
}

// netSaid reports whether resp's X-Pinfold-* headers are net's: in plain
// HTTP net drops an upstream's, and so it does on an https connection it
// intercepts (a host a [[secrets]] rule names), whose certificate chains
// to the session's interception CA (the very certificate in the agent's
// credential directory, not one of its name); through any other https
// connection, a byte tunnel, the answer is the upstream's alone and its
// headers prove nothing (a site could fake a denial).
func netSaid(resp *http.Response) bool {
	if resp.TLS == nil {
		return true
	}
	ca := interceptionCA()
	if ca == nil {
		return false
	}
	for _, chain := range resp.TLS.VerifiedChains {
		if len(chain) > 0 && chain[len(chain)-1].Equal(ca) {
			return true
		}
	}
	return false
}

// interceptionCA is the session's interception CA, from the agent's
// credential directory; nil when the session intercepts nothing.
func interceptionCA() *x509.Certificate {
	dir := os.Getenv(session.EnvCredentials)
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, session.InjectCAFile))
	if err != nil {
		return nil
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil
	}
	return c
}
