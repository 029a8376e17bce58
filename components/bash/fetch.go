package bash

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pinfold/pinfold/components/rpc"
)

// fetchClient is the scripts' HTTP client: every request goes through
// net's proxy (the same decisions as the agent's: domain rules, SSRF,
// secret injection) over a connection the launcher makes for each
// (bash opens no socket). It trusts the system's roots, read now, and
// the session's interception CA.
func fetchClient(rc *RunnerClient, trustPEM []byte) (*http.Client, error) {
	roots, err := x509.SystemCertPool()
	if err != nil {
		return nil, fmt.Errorf("the system's roots: %w", err)
	}
	if len(trustPEM) > 0 && !roots.AppendCertsFromPEM(trustPEM) {
		return nil, errors.New("the interception CA does not parse")
	}
	tr := &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "net"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			f, _, err := rc.StartCode(ctx, Job{Kind: JobNet})
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return net.FileConn(f)
		},
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:     true, // a connection per request: each one the launcher's
		ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

// FetchArgs and FetchResult are the fetch tool's, for Code Mode's
// scripts and the MCP server alike.
type FetchArgs struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// FetchResult is an answer: its status, headers (one value each) and
// body, which is UTF-8 text.
type FetchResult struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// fetch runs one request for a script.
func (b *Broker) fetch(ctx context.Context, a FetchArgs) (json.RawMessage, error) {
	if b.Fetch == nil {
		return nil, errors.New(`fetch: this session has no network (network.mode is not "proxy")`)
	}
	r, err := Fetch(ctx, b.Fetch, a)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// Fetch runs one request with c (whose transport goes through net's
// proxy): http and https only, the body read up to what one answer
// carries, text only. A refusal by net is an answer like any other
// (403 with X-Pinfold-Rule); redirects are not followed (c's policy).
func Fetch(ctx context.Context, c *http.Client, a FetchArgs) (FetchResult, error) {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return FetchResult{}, fmt.Errorf("fetch: %q is not an http or https URL", a.URL)
	}
	method := a.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(a.Body))
	if err != nil {
		return FetchResult{}, fmt.Errorf("fetch: %v", err)
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return FetchResult{}, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, rpc.MaxData+1))
	switch {
	case err != nil:
		return FetchResult{}, fmt.Errorf("fetch: reading the body: %v", err)
	case len(body) > rpc.MaxData:
		return FetchResult{}, fmt.Errorf("fetch: the body is larger than %d bytes", rpc.MaxData)
	case !utf8.Valid(body):
		return FetchResult{}, errors.New("fetch: the body is not UTF-8 text")
	}
	h := map[string]string{}
	for k := range resp.Header {
		h[k] = resp.Header.Get(k)
	}
	return FetchResult{Status: resp.StatusCode, Headers: h, Body: string(body)}, nil
}
