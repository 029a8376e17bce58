package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// Client calls one component over mutual TLS.
type Client struct {
	http   *http.Client
	server pki.Role
}

// NewClient is a client with credential leaf for the component of role
// server, reached by dial (a Unix socket, or the agent's TCP listener).
// It refuses to build when the call table forbids the call. onReject sees
// a server that fails the check (another session, the wrong role).
func NewClient(leaf *pki.Leaf, server pki.Role, dial func(ctx context.Context) (net.Conn, error), onReject func(pki.RejectEvent)) (*Client, error) {
	cfg, err := pki.ClientConfig(leaf, server, onReject)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		TLSClientConfig:       cfg,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       time.Minute,
		DisableCompression:    true,
		Proxy:                 nil, // never through HTTP_PROXY: the peer is a session component
	}
	return &Client{http: &http.Client{Transport: tr}, server: server}, nil
}

// Call asks op with req (JSON-encoded) and decodes the result into result
// when the answer is allowed. An error means no decision was had.
func (c *Client) Call(ctx context.Context, op string, req, result any) (Decision, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Decision{}, fmt.Errorf("rpc: %s %s: encode: %w", c.server, op, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+string(c.server)+"/v1/"+op, bytes.NewReader(body))
	if err != nil {
		return Decision{}, fmt.Errorf("rpc: %s %s: %w", c.server, op, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return Decision{}, fmt.Errorf("rpc: %s %s: %w", c.server, op, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return Decision{}, fmt.Errorf("rpc: %s %s: read the answer: %w", c.server, op, err)
	}
	if len(b) > MaxBody {
		return Decision{}, fmt.Errorf("rpc: %s %s: answer larger than %d bytes", c.server, op, MaxBody)
	}
	var r Response
	if err := json.Unmarshal(b, &r); err != nil || r.Decision.Reason == 0 {
		return Decision{}, fmt.Errorf("rpc: %s %s: not an answer (HTTP %d)", c.server, op, resp.StatusCode)
	}
	if r.Decision.Allowed && result != nil && len(r.Result) > 0 {
		if err := json.Unmarshal(r.Result, result); err != nil {
			return r.Decision, fmt.Errorf("rpc: %s %s: decode the result: %w", c.server, op, err)
		}
	}
	return r.Decision, nil
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }
