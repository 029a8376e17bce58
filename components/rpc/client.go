package rpc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// callTimeout bounds a call whose context has no deadline.
const callTimeout = 2 * time.Minute

// maxIdle is how many connections a client keeps for its next calls.
const maxIdle = 4

// Client calls one component over mutual TLS, one request at a time per
// connection, keeping up to maxIdle connections open between calls. It is
// safe for concurrent use.
type Client struct {
	cfg    *tls.Config
	dial   func(ctx context.Context) (net.Conn, error)
	server pki.Role

	mu   sync.Mutex
	idle []*clientConn
	// one serialises calls on a single connection (NewClientConn).
	one *sync.Mutex
}

type clientConn struct {
	tc     *tls.Conn
	br     *bufio.Reader
	pinned bool // the one connection (NewClientConn): see pinnedRoundTrip
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
	return &Client{cfg: cfg, dial: dial, server: server}, nil
}

// NewClientTLS is a client that uses cfg as it is: no call-table check,
// no server check beyond what cfg asks. It is for the register's probes,
// which play a caller the session did not make (a certificate from
// another CA) and must get the server's verdict, not their own.
func NewClientTLS(cfg *tls.Config, server pki.Role, dial func(ctx context.Context) (net.Conn, error)) *Client {
	return &Client{cfg: cfg, dial: dial, server: server}
}

// NewClientConn is a client over the one connection c (one end of a
// socketpair the launcher made), for a caller that may not open sockets:
// calls take turns on it, and once it breaks every call fails.
func NewClientConn(leaf *pki.Leaf, server pki.Role, c net.Conn, onReject func(pki.RejectEvent)) (*Client, error) {
	var mu sync.Mutex
	given := false
	cl, err := NewClient(leaf, server, func(context.Context) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if given {
			return nil, errors.New("the one connection to the component has ended")
		}
		given = true
		return c, nil
	}, onReject)
	if err != nil {
		return nil, err
	}
	cl.one = &sync.Mutex{}
	return cl, nil
}

// Call asks op with args (JSON-encoded) and decodes the result into result
// when the answer is allowed. An error means no decision was had.
func (c *Client) Call(ctx context.Context, op string, args, result any) (Decision, error) {
	d, _, err := c.CallData(ctx, op, args, nil, result)
	return d, err
}

// CallData is Call with raw bytes sent beside the arguments and the
// answer's raw bytes returned (only when allowed).
func (c *Client) CallData(ctx context.Context, op string, args any, data []byte, result any) (Decision, []byte, error) {
	fail := func(format string, a ...any) (Decision, []byte, error) {
		return Decision{}, nil, fmt.Errorf("rpc: %s %s: %s", c.server, op, fmt.Sprintf(format, a...))
	}
	body, err := json.Marshal(args)
	if err != nil {
		return fail("encode: %v", err)
	}
	if len(body) > MaxBody || len(data) > MaxData {
		return fail("request of %d bytes of arguments and %d of data, over the limit of %d and %d", len(body), len(data), MaxBody, MaxData)
	}
	if c.one != nil {
		c.one.Lock()
		defer c.one.Unlock()
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	// A kept connection the server has since closed (idle timeout) fails
	// before any answer: the request was not served, so it is sent once
	// more on a new connection. A fresh connection gets no second try.
	for attempt := 0; ; attempt++ {
		cc, reused, err := c.conn(ctx, attempt > 0)
		if err != nil {
			return fail("%v", err)
		}
		frame, err := cc.roundTrip(ctx, op, body, data)
		var gu gaveUp
		if errors.As(err, &gu) {
			c.put(cc) // answered all the same: the connection is in step
			return fail("%v", gu.err)
		}
		if err != nil {
			cc.tc.Close()
			if reused && errors.Is(err, errNoAnswer) {
				continue
			}
			return fail("%v", err)
		}
		c.put(cc)
		meta, rdata, err := parseResponse(frame)
		if err != nil {
			return fail("not an answer")
		}
		// One pass for the usual answer: the decision, and the result
		// straight into the caller's (a server sends one only with an
		// allowed decision). Anything else is read again, as below, for
		// what is wrong with it.
		if result != nil {
			fast := struct {
				Decision Decision `json:"decision"`
				Result   any      `json:"result"`
			}{Result: result}
			if json.Unmarshal(meta, &fast) == nil && fast.Decision.Allowed && fast.Decision.Reason != 0 {
				return fast.Decision, rdata, nil
			}
		}
		var r Response
		if json.Unmarshal(meta, &r) != nil || r.Decision.Reason == 0 {
			return fail("not an answer")
		}
		if !r.Decision.Allowed {
			return r.Decision, nil, nil
		}
		if result != nil && len(r.Result) > 0 {
			if err := json.Unmarshal(r.Result, result); err != nil {
				return r.Decision, nil, fmt.Errorf("rpc: %s %s: decode the result: %w", c.server, op, err)
			}
		}
		return r.Decision, rdata, nil
	}
}

// errNoAnswer is a connection that ended before a byte of the answer.
var errNoAnswer = errors.New("the connection ended before an answer")

// gaveUp is a call on the one connection its caller gave up on (ctx
// ended): the server was told, and its answer read and dropped.
type gaveUp struct{ err error }

func (g gaveUp) Error() string { return g.err.Error() }

// cancelByte, sent between a request and its answer on the one
// connection, says its caller gave up on it; a frame's length never
// starts with it (maxFrame is below 2^24).
const cancelByte = 0xff

// pinnedRoundTrip is roundTrip on the one connection, which cannot be
// made again: closing it to cancel a call (as roundTrip does) would end
// every later call too (a Code Mode script that ended while fs asked the
// person about its write cut bash off from fs for the session). A call
// given up on is told to the server with cancelByte instead, which ends
// its handler as a closed connection would (Watch), and its answer is
// still read, within callTimeout.
func (cc *clientConn) pinnedRoundTrip(ctx context.Context, op string, body, data []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, gaveUp{err} // nothing sent
	}
	cc.tc.SetDeadline(time.Now().Add(callTimeout))
	var mu sync.Mutex
	sent, cancelled := false, false
	tell := func() {
		cc.tc.SetDeadline(time.Now().Add(callTimeout))
		cc.tc.Write([]byte{cancelByte})
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if cancelled = true; sent {
			tell()
		}
	})
	defer stop()
	if err := writeRequest(cc.tc, op, body, data); err != nil {
		return nil, err
	}
	mu.Lock()
	if sent = true; cancelled {
		tell() // not within the request's bytes
	}
	mu.Unlock()
	b, err := readFrame(cc.br, nil)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case cancelled:
		return nil, gaveUp{ctx.Err()}
	}
	return b, nil
}

func (cc *clientConn) roundTrip(ctx context.Context, op string, body, data []byte) ([]byte, error) {
	if cc.pinned {
		return cc.pinnedRoundTrip(ctx, op, body, data)
	}
	dl, _ := ctx.Deadline()
	cc.tc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { cc.tc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := writeRequest(cc.tc, op, body, data); err != nil {
		return nil, errNoAnswer
	}
	got := false
	b, err := readFrame(cc.br, func() { got = true })
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !got && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
			return nil, errNoAnswer
		}
		return nil, err
	}
	return b, nil
}

// conn is a kept connection (reused) or, when there is none or fresh is
// set, a new one with its handshake done.
func (c *Client) conn(ctx context.Context, fresh bool) (*clientConn, bool, error) {
	if !fresh {
		c.mu.Lock()
		if n := len(c.idle); n > 0 {
			cc := c.idle[n-1]
			c.idle = c.idle[:n-1]
			c.mu.Unlock()
			return cc, true, nil
		}
		c.mu.Unlock()
	}
	raw, err := c.dial(ctx)
	if err != nil {
		return nil, false, err
	}
	tc := tls.Client(raw, c.cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, false, err
	}
	return &clientConn{tc: tc, br: bufio.NewReaderSize(tc, 64<<10), pinned: c.one != nil}, false, nil
}

func (c *Client) put(cc *clientConn) {
	cc.tc.SetDeadline(time.Time{})
	if c.one != nil {
		c.mu.Lock()
		c.idle = append(c.idle[:0], cc) // the one connection, kept
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) < maxIdle {
		c.idle = append(c.idle, cc)
		return
	}
	cc.tc.Close()
}

// Close drops idle connections.
func (c *Client) Close() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cc := range idle {
		cc.tc.Close()
	}
}
