package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Resolver is the proxy's own name lookup; *net.Resolver satisfies it.
// The proxy calls it at most once per target and dials only addresses it
// returned that the Decider allowed.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// maxResponseHeaderBytes bounds an upstream's answer head, forwarded or
// on an intercepted connection (answerReader) (64 KiB: more than any
// real one). With DefaultMaxConns connections, each also
// holding two 64 KiB buffers and a copy buffer of at most tunnelBufSize,
// net's worst case stays within its memory limit (a hunt: 1 MiB heads on
// 2,048 connections took net past 512 MiB, which ended the session).
const maxResponseHeaderBytes = 64 << 10

// Defaults for the Proxy's limits, used when a field is zero.
const (
	DefaultMaxConns       = 1024
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxHeaderBytes = 32 << 10
	DefaultDialTimeout    = 10 * time.Second
	DefaultTunnelIdle     = 5 * time.Minute
)

// Reasons, the X-Pinfold-Reason header of a refusal: short machine words.
const (
	ReasonBadRequest     = "bad-request"     // origin-form, a scheme other than http, a malformed target
	ReasonDeniedHost     = "denied-host"     // DecideHost refused the name or literal
	ReasonDeniedAddress  = "denied-address"  // DecideAddr refused every address
	ReasonResolveFailed  = "resolve-failed"  // the name did not resolve (502)
	ReasonDialFailed     = "dial-failed"     // no allowed address answered (502)
	ReasonTimeout        = "timeout"         // dialling or the upstream timed out (504)
	ReasonUpstreamFailed = "upstream-failed" // the upstream's answer could not be had (502)
	ReasonDeniedRedirect = "denied-redirect" // a 3xx whose Location is a refused target
	ReasonDeniedMethod   = "denied-method"   // TRACE or TRACK (reflectiveMethod): never sent on
)

// Rules of the refusals the proxy makes itself (the others are the
// Decider's Verdict.Rule).
const (
	RuleRequest  = "proxy.request"
	RuleResolve  = "proxy.resolve"
	RuleDial     = "proxy.dial"
	RuleUpstream = "proxy.upstream"
	RuleRedirect = "proxy.redirect"
	RuleTrace    = "proxy.trace"
)

// Proxy is the HTTP forward proxy engine: CONNECT tunnels and
// absolute-form plain HTTP. Every target is decided by Decider: the name
// (DecideHost), then each address the Resolver gave, looked up once
// (DecideAddr). Only an address that was checked is dialled, as a
// netip.AddrPort: the dialer never sees a name, so DNS rebinding has no
// second lookup to win.
//
// Refusals answer 403 (policy), 400 (malformed), 431 (headers too large),
// 502 (resolve or dial failure) or 504 (timeout), with a short text body
// and the headers X-Pinfold-Rule and X-Pinfold-Reason, and are logged with
// the client's address, the target (host and port, never a path), the rule
// and the decision. Request bodies and header values are never logged.
//
// Set the exported fields before Serve; do not change them after.
type Proxy struct {
	Decider  Decider
	Resolver Resolver // nil: net.DefaultResolver
	// Dial connects to an address the Decider allowed. nil: a net.Dialer
	// (MPTCP off) with DialTimeout.
	Dial func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
	// Parse splits and normalises a request's authority (SplitHostPort);
	// defaultPort is 80 for absolute-form http, 0 for CONNECT (the port is
	// required there).
	Parse func(authority string, defaultPort uint16) (Host, uint16, error)
	Log   *slog.Logger // nil: slog.Default()

	// MaxConns bounds the client connections served at once; further
	// connections wait in the listen backlog (bounded by the kernel)
	// until one ends.
	MaxConns int
	// HeaderTimeout bounds reading a request's headers; a client that is
	// slower is disconnected.
	HeaderTimeout time.Duration
	// IdleTimeout bounds a keep-alive client connection's wait for its
	// next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431 beyond).
	MaxHeaderBytes int
	// DialTimeout bounds the lookup and each dial attempt.
	DialTimeout time.Duration
	// TunnelIdle closes a tunnel (or a forwarded exchange) that moved no
	// byte in either direction for this long.
	TunnelIdle time.Duration
	// AllowECH lets a byte tunnel's ClientHello carry
	// encrypted_client_hello (network.allow_ech); its outer server_name
	// is still held to the CONNECT host.
	AllowECH bool

	// Intercept, when set, is asked about each allowed CONNECT; when it
	// says yes, InterceptTLS is given the client connection (after "200
	// Connection established", any bytes the client already sent still
	// readable from it) and the upstream connection to the checked
	// address, instead of a byte tunnel. It must close both. This is the
	// seam for secret injection (TLS termination).
	Intercept    func(h Host, port uint16) bool
	InterceptTLS func(ctx context.Context, client net.Conn, h Host, port uint16, upstream net.Conn) error

	mu     sync.Mutex
	srv    *http.Server
	tr     *http.Transport
	sem    chan struct{}
	conns  map[net.Conn]struct{} // hijacked clients and upstreams, closed by Shutdown
	closed bool
	wg     sync.WaitGroup // tunnels and forwards in flight
}

func (p *Proxy) maxConns() int       { return limitOr(p.MaxConns, DefaultMaxConns) }
func (p *Proxy) maxHeaderBytes() int { return limitOr(p.MaxHeaderBytes, DefaultMaxHeaderBytes) }

func (p *Proxy) headerTimeout() time.Duration { return limitOr(p.HeaderTimeout, DefaultHeaderTimeout) }
func (p *Proxy) idleTimeout() time.Duration   { return limitOr(p.IdleTimeout, DefaultIdleTimeout) }
func (p *Proxy) dialTimeout() time.Duration   { return limitOr(p.DialTimeout, DefaultDialTimeout) }
func (p *Proxy) tunnelIdle() time.Duration    { return limitOr(p.TunnelIdle, DefaultTunnelIdle) }

func limitOr[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func (p *Proxy) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

func (p *Proxy) resolver() Resolver {
	if p.Resolver != nil {
		return p.Resolver
	}
	return net.DefaultResolver
}

// errProxyClosed is what setup answers after Shutdown.
var errProxyClosed = errors.New("proxy: shut down")

// setup makes the server and the transport once.
func (p *Proxy) setup() (*http.Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errProxyClosed
	}
	if p.srv != nil {
		return p.srv, nil
	}
	if p.Decider == nil {
		return nil, errors.New("proxy: no Decider")
	}
	if p.Parse == nil {
		return nil, errors.New("proxy: no Parse")
	}
	p.sem = make(chan struct{}, p.maxConns())
	p.conns = map[net.Conn]struct{}{}
	p.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            dialPinned,
		DisableKeepAlives:      true, // every forward has its own, checked, connection
		DisableCompression:     true, // Accept-Encoding passes as the client sent it
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		ResponseHeaderTimeout:  p.tunnelIdle(),
		ExpectContinueTimeout:  time.Second,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
		// A bulk body through 4 KiB reads costs a system call per 4 KiB.
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 64 << 10,
	}
	p.srv = &http.Server{
		Handler:                      http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout:            p.headerTimeout(),
		IdleTimeout:                  p.idleTimeout(),
		MaxHeaderBytes:               p.maxHeaderBytes(),
		DisableGeneralOptionsHandler: true, // "OPTIONS *" is origin-form: 400
		ErrorLog:                     slog.NewLogLogger(p.log().Handler(), slog.LevelDebug),
	}
	return p.srv, nil
}

// Serve accepts client connections on ln until Shutdown (then it returns
// nil) or until ln fails. It may be called for several listeners; they
// share MaxConns.
func (p *Proxy) Serve(ln net.Listener) error {
	srv, err := p.setup()
	if err == errProxyClosed {
		ln.Close()
		return nil
	}
	if err != nil {
		return err
	}
	err = srv.Serve(&limitListener{Listener: ln, sem: p.sem, done: make(chan struct{})})
	if err == http.ErrServerClosed {
		return nil
	}
	return err
}

// Shutdown stops the proxy: it closes the listeners, every tunnel and
// every upstream connection, then waits (until ctx ends) for the
// requests in flight to finish; when ctx ends first it closes what is
// left and returns ctx's error.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	srv, tr := p.srv, p.tr
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		srv.Close()
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	tr.CloseIdleConnections()
	return err
}

// track registers connections for Shutdown to close and counts one
// exchange in flight; false (and nothing registered) after Shutdown.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.conns, c)
	}
	p.mu.Unlock()
	p.wg.Done()
}

// refusal is a request the proxy will not carry out.
type refusal struct {
	status int
	reason string
	rule   string
	detail string
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	p.serveForward(w, r)
}

// refuse answers a refusal and logs it.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, target string, f *refusal) {
	p.log().Warn("refused", "client", r.RemoteAddr, "method", r.Method, "target", target,
		"decision", "deny", "rule", f.rule, "reason", f.reason, "status", f.status, "detail", f.detail)
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Pinfold-Rule", f.rule)
	h.Set("X-Pinfold-Reason", f.reason)
	w.WriteHeader(f.status)
	msg := "pinfold: " + f.reason + " (" + f.rule + ")"
	// An address refusal's detail names the address a name resolved to:
	// the log keeps it, the client is not told (net must not be a way to
	// learn the inside's addresses).
	if f.detail != "" && f.reason != ReasonDeniedAddress && f.reason != ReasonDeniedRedirect {
		msg += ": " + f.detail
	}
	io.WriteString(w, msg+"\n")
}

// proxyAuthority is h and port as an authority, for logs and for the
// forwarded request's Host (the port omitted when it is omit).
func proxyAuthority(h Host, port, omit uint16) string {
	s := h.String()
	if h.IsIP() && h.Addr.Is6() {
		s = "[" + s + "]"
	}
	if port == omit {
		return s
	}
	return s + ":" + strconv.Itoa(int(port))
}

// decide asks the Decider about h:port, resolves a name once and returns
// the addresses DecideAddr allowed, in the resolver's order.
func (p *Proxy) decide(ctx context.Context, h Host, port uint16) ([]netip.Addr, Verdict, *refusal) {
	if port == 0 {
		return nil, Verdict{}, &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "no port"}
	}
	hv := p.Decider.DecideHost(h, port)
	if !hv.Allowed {
		return nil, hv, &refusal{http.StatusForbidden, ReasonDeniedHost, hv.Rule, hv.Detail}
	}
	var addrs []netip.Addr
	if h.IsIP() {
		addrs = []netip.Addr{h.Addr}
	} else {
		rctx, cancel := context.WithTimeout(ctx, p.dialTimeout())
		// Relative, as every client resolves: Go's resolver does not find
		// /etc/hosts entries for an absolute name ("localhost."). The
		// search list may then try NAME.SEARCHDOMAIN after NAME: every
		// address it yields is still classified below, and an
		// intercepted host's upstream must still prove NAME itself.
		found, err := p.resolver().LookupNetIP(rctx, "ip", h.Name)
		cancel()
		if err != nil || len(found) == 0 {
			return nil, hv, &refusal{http.StatusBadGateway, ReasonResolveFailed, RuleResolve, "the name did not resolve"}
		}
		addrs = make([]netip.Addr, 0, len(found))
		for _, a := range found {
			// Go's resolver hands A records back as IPv4-mapped IPv6;
			// the address is the IPv4 one, and that is what is decided
			// and dialled.
			addrs = append(addrs, a.Unmap())
		}
	}
	allowed := make([]netip.Addr, 0, len(addrs))
	var denied *Verdict
	for _, a := range addrs {
		if !a.IsValid() {
			continue
		}
		av := p.Decider.DecideAddr(h, a, port)
		if av.Allowed {
			allowed = append(allowed, a)
		} else if denied == nil {
			denied = &av
		}
	}
	if len(allowed) == 0 {
		if denied == nil {
			return nil, hv, &refusal{http.StatusBadGateway, ReasonResolveFailed, RuleResolve, "no usable address"}
		}
		return nil, *denied, &refusal{http.StatusForbidden, ReasonDeniedAddress, denied.Rule, denied.Detail}
	}
	return allowed, hv, nil
}

// ConnDecider is a Decider that also looks at each connection the proxy
// made to an address DecideAddr allowed, by its two ends, before anything
// is sent on it (Egress is one). A refused connection is closed, and the
// next allowed address tried.
type ConnDecider interface {
	DecideConn(h Host, local, remote netip.AddrPort) Verdict
}

// dialAllowed dials the allowed addresses in order and returns the first
// connection made (and, with a ConnDecider, allowed).
func (p *Proxy) dialAllowed(ctx context.Context, h Host, addrs []netip.Addr, port uint16) (net.Conn, netip.AddrPort, *refusal) {
	dial := p.Dial
	if dial == nil {
		dial = p.defaultDial
	}
	cd, _ := p.Decider.(ConnDecider)
	// However many addresses, the whole attempt is bounded.
	ctx, cancel := context.WithTimeout(ctx, 3*p.dialTimeout())
	defer cancel()
	timedOut := false
	var denied *Verdict
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		dctx, dcancel := context.WithTimeout(ctx, p.dialTimeout())
		c, err := dial(dctx, "tcp", ap)
		dcancel()
		if err == nil {
			if cd == nil {
				return c, ap, nil
			}
			v := cd.DecideConn(h, connEnd(c.LocalAddr()), connEnd(c.RemoteAddr()))
			if v.Allowed {
				return c, ap, nil
			}
			c.Close()
			p.log().Warn("dial refused", "target", ap.String(), "rule", v.Rule, "detail", v.Detail)
			if denied == nil {
				denied = &v
			}
			continue
		}
		p.log().Warn("dial", "target", ap.String(), "error", err.Error())
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			timedOut = true
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case denied != nil:
		return nil, netip.AddrPort{}, &refusal{http.StatusForbidden, ReasonDeniedAddress, denied.Rule, denied.Detail}
	case timedOut:
		return nil, netip.AddrPort{}, &refusal{http.StatusGatewayTimeout, ReasonTimeout, RuleDial, "connecting timed out"}
	}
	return nil, netip.AddrPort{}, &refusal{http.StatusBadGateway, ReasonDialFailed, RuleDial, "could not connect"}
}

// connEnd is a connection's end as an address and port; the zero value
// when it is not TCP (ConnDecider refuses that).
func connEnd(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	return netip.AddrPort{}
}

func (p *Proxy) defaultDial(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
	d := &net.Dialer{Timeout: p.dialTimeout()}
	d.SetMultipathTCP(false)
	// An address literal: no lookup. Not DialTCP with a zero local
	// address: that binds ":0" first, and net's Landlock refuses bind.
	c, err := d.DialContext(ctx, network, addr.String())
	if err != nil {
		return nil, err // never a typed nil
	}
	return c, nil
}

// serveConnect decides and dials a CONNECT's target, then tunnels.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	authority := r.RequestURI
	if authority == "" || strings.HasPrefix(authority, "/") {
		p.refuse(w, r, "", &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "CONNECT needs host:port"})
		return
	}
	h, port, err := p.Parse(authority, 0)
	if err != nil {
		p.refuse(w, r, "", &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "malformed host"})
		return
	}
	target := proxyAuthority(h, port, 0)
	addrs, hv, f := p.decide(r.Context(), h, port)
	if f != nil {
		p.refuse(w, r, target, f)
		return
	}
	up, ap, f := p.dialAllowed(r.Context(), h, addrs, port)
	if f != nil {
		p.refuse(w, r, target, f)
		return
	}
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		p.refuse(w, r, target, &refusal{http.StatusInternalServerError, ReasonUpstreamFailed, RuleRequest, "cannot take the connection"})
		return
	}
	if !p.track(client, up) {
		client.Close()
		up.Close()
		return
	}
	defer p.untrack(client, up)
	defer client.Close()
	defer up.Close()
	client.SetDeadline(time.Time{})

	intercept := p.Intercept != nil && p.InterceptTLS != nil && p.Intercept(h, port)
	p.log().Info("allowed", "client", r.RemoteAddr, "method", r.Method, "target", target, "addr", ap.String(),
		"decision", "allow", "rule", hv.Rule, "intercept", intercept)

	client.SetWriteDeadline(time.Now().Add(p.dialTimeout()))
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	client.SetWriteDeadline(time.Time{})
	if intercept {
		c := client
		if brw.Reader.Buffered() > 0 {
			c = &bufferedConn{Conn: client, r: brw.Reader}
		}
		if err := p.InterceptTLS(r.Context(), c, h, port, up); err != nil {
			p.log().Warn("intercept failed", "client", r.RemoteAddr, "target", target, "error", err)
		}
		return
	}
	// Bytes the client sent right behind its CONNECT (a ClientHello) are
	// the start of its first message.
	early, _ := brw.Reader.Peek(brw.Reader.Buffered())
	runTunnel(client, up, p.tunnelIdle(), func(clk *tunnelClock, abort func()) bool {
		return p.openTunnel(r.RemoteAddr, target, h, client, up, early, clk, abort)
	})
}

// openTunnel passes the client's first message to up once checkFirst
// allows it; false (both sides closed, or up half-closed) when it does
// not, or the client is gone.
func (p *Proxy) openTunnel(clientAddr, target string, h Host, client, up net.Conn, early []byte, clk *tunnelClock, abort func()) bool {
	first, f, err := readFirst(client, early, h, clk, p.AllowECH, func(b []byte) error {
		up.SetWriteDeadline(time.Now().Add(clk.idle))
		_, err := up.Write(b)
		return err
	})
	if f != nil {
		// Logged as a refused CONNECT: the session's summary counts it
		// as a denial.
		p.log().Warn("refused", "client", clientAddr, "method", http.MethodConnect, "target", target,
			"decision", "deny", "rule", f.rule, "reason", f.reason, "detail", f.detail)
		abort()
		return false
	}
	if err == io.EOF {
		if cw, ok := up.(halfCloser); ok && cw.CloseWrite() == nil {
			return false
		}
	}
	if err != nil {
		abort()
		return false
	}
	up.SetWriteDeadline(time.Now().Add(clk.idle))
	if _, err := up.Write(first); err != nil {
		abort()
		return false
	}
	clk.last.Store(time.Now().UnixNano())
	return true
}

// bufferedConn reads what the server had buffered before the connection
// itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

var tunnelBufs = sync.Pool{New: func() any { b := make([]byte, tunnelBufSize); return &b }}

// tunnelBufSize is a busy copy's buffer: 256 KiB moves a bulk download
// at about four fifths of direct loopback speed here, where 32 KiB
// managed two fifths (bench/proxy). A copy starts with a small buffer of
// its own and takes a big one only while reads fill the small one, and
// gives it back when they stop: a thousand idle tunnels must not hold
// half a gigabyte.
const (
	tunnelBufSize = 256 << 10
	smallBufSize  = 16 << 10
)

// copyBuf is one copy direction's buffer, sized by how busy it is.
type copyBuf struct {
	small []byte
	big   *[]byte
}

func newCopyBuf() *copyBuf { return &copyBuf{small: make([]byte, smallBufSize)} }

// get is the buffer for the next read.
func (c *copyBuf) get() []byte {
	if c.big != nil {
		return *c.big
	}
	return c.small
}

// filled says how much the last read brought: a full small buffer asks
// for the big one, and a read that would have fitted the small one with
// room to spare gives it back.
func (c *copyBuf) filled(n int) {
	switch {
	case c.big == nil && n == len(c.small):
		c.big = tunnelBufs.Get().(*[]byte)
	case c.big != nil && n < len(c.small)/2:
		c.release()
	}
}

func (c *copyBuf) release() {
	if c.big != nil {
		tunnelBufs.Put(c.big)
		c.big = nil
	}
}

// runTunnel copies both ways until both sides are done, an error, or idle
// with no byte moving either way. A side's end of stream is passed on as
// a half-close.
//
// Nothing of the client's goes to up before open has read its first
// message and passed it on (true: the copy goes on from there; false:
// open closed the tunnel, or half-closed up). The upstream's bytes flow
// from the start, so a server that speaks first is heard.
func runTunnel(client, up net.Conn, idle time.Duration, open func(*tunnelClock, func()) bool) {
	clk := &tunnelClock{idle: idle}
	clk.last.Store(time.Now().UnixNano())
	var once sync.Once
	abort := func() { once.Do(func() { client.Close(); up.Close() }) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		if open(clk, abort) {
			tunnelCopy(up, client, idle, &clk.last, abort)
		}
	}()
	if relayFirst(client, up, clk, abort) {
		tunnelCopy(client, up, idle, &clk.last, abort)
	}
	<-done
}

type halfCloser interface{ CloseWrite() error }

// tunnelCopy copies src to dst until src ends (then half-closes dst), fails,
// or the tunnel has been idle for idle.
func tunnelCopy(dst, src net.Conn, idle time.Duration, last *atomic.Int64, abort func()) {
	dt, dok := tcpConn(dst)
	st, sok := tcpConn(src)
	if dok && sok {
		spliceCopy(dt, st, idle, last, abort)
		return
	}
	cb := newCopyBuf()
	defer cb.release()
	deadline := time.Now().Add(idle)
	src.SetReadDeadline(deadline)
	for {
		buf := cb.get()
		n, err := src.Read(buf)
		cb.filled(n)
		if n > 0 {
			now := time.Now()
			last.Store(now.UnixNano())
			dst.SetWriteDeadline(now.Add(idle))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				abort()
				return
			}
			// Push the read deadline on only now and then: it is not free.
			if now.Add(idle).Sub(deadline) > idle/8 {
				deadline = now.Add(idle)
				src.SetReadDeadline(deadline)
			}
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Idle this way; the other way may have moved.
			next := time.Unix(0, last.Load()).Add(idle)
			if time.Until(next) > 0 {
				deadline = next
				src.SetReadDeadline(deadline)
				continue
			}
		}
		if err == io.EOF {
			if cw, ok := dst.(halfCloser); ok && cw.CloseWrite() == nil {
				return
			}
		}
		abort()
		return
	}
}

// tcpConn is c's TCP connection, beneath the slot it holds (limitConn):
// the copy reads and writes it directly, so the kernel can splice; the
// tunnel still closes c.
func tcpConn(c net.Conn) (*net.TCPConn, bool) {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	t, ok := c.(*net.TCPConn)
	return t, ok
}

// spliceChunk is how much one splice call moves before the idle clock is
// wound again.
const spliceChunk = 1 << 20

// spliceCopy is tunnelCopy between two TCP connections: the kernel moves
// the bytes (splice, through io.Copy and TCPConn.ReadFrom), so a tunnel
// holds no buffer of its own however busy or idle it is.
//
// The write deadline lies one idle time past the read deadline: the copy
// reads bytes into a pipe and then writes them, and a write whose
// deadline has passed fails before it writes anything, which would drop
// bytes read just before the read deadline (a trickle meets a deadline
// every idle time, since one CopyN returns only at 1 MiB or a deadline).
// Only a destination stuck that long more fails the write.
func spliceCopy(dst, src *net.TCPConn, idle time.Duration, last *atomic.Int64, abort func()) {
	wind := func(deadline time.Time) {
		src.SetReadDeadline(deadline)
		dst.SetWriteDeadline(deadline.Add(idle))
	}
	wind(time.Now().Add(idle))
	for {
		n, err := io.CopyN(dst, src, spliceChunk)
		if n > 0 {
			now := time.Now()
			last.Store(now.UnixNano())
			wind(now.Add(idle))
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Idle this way (or a slow trickle, which moved n): the other
			// way may have moved.
			next := time.Unix(0, last.Load()).Add(idle)
			if n > 0 || time.Until(next) > 0 {
				if n == 0 {
					wind(next)
				}
				continue
			}
		}
		if errors.Is(err, io.EOF) && dst.CloseWrite() == nil {
			return
		}
		abort()
		return
	}
}

// ctxKeyPinned carries a forward's already-dialled connection to the
// transport's DialContext.
type ctxKeyPinned struct{}

type pinnedConn struct {
	mu sync.Mutex
	c  net.Conn
}

// dialPinned hands the transport the connection made to the checked
// address, once. It never dials anything itself.
func dialPinned(ctx context.Context, _, _ string) (net.Conn, error) {
	pc, _ := ctx.Value(ctxKeyPinned{}).(*pinnedConn)
	if pc == nil {
		return nil, errors.New("proxy: no checked connection")
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	c := pc.c
	pc.c = nil
	if c == nil {
		return nil, errors.New("proxy: checked connection already used")
	}
	return c, nil
}

// proxyHopHeaders belong to one connection and are never passed on;
// Proxy-Authorization is the client's credential for this proxy.
var proxyHopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func stripHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range proxyHopHeaders {
		h.Del(k)
	}
}

// serveForward decides an absolute-form request's target, sends the
// request over a connection to the checked address and answers with the
// response, unless it redirects to a refused target.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	u := r.URL
	if u == nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" || strings.HasPrefix(r.RequestURI, "/") || r.RequestURI == "*" {
		p.refuse(w, r, "", &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "a proxy request needs an absolute http:// URL (or CONNECT)"})
		return
	}
	if u.Scheme != "http" {
		p.refuse(w, r, "", &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "only http:// is forwarded; use CONNECT for https"})
		return
	}
	h, port, err := p.Parse(u.Host, 80)
	if err != nil {
		p.refuse(w, r, "", &refusal{http.StatusBadRequest, ReasonBadRequest, RuleRequest, "malformed host"})
		return
	}
	target := proxyAuthority(h, port, 0)
	// TRACE answers with the request itself: no use to an agent, and
	// refused wherever net reads the method (doc.go), before any lookup.
	if m := reflectiveMethod(r, false); m != "" {
		p.refuse(w, r, target, &refusal{http.StatusForbidden, ReasonDeniedMethod, RuleTrace, m + " sends the request back; net does not forward it"})
		return
	}
	ctx := r.Context()
	addrs, hv, f := p.decide(ctx, h, port)
	if f != nil {
		p.refuse(w, r, target, f)
		return
	}
	up, ap, f := p.dialAllowed(ctx, h, addrs, port)
	if f != nil {
		p.refuse(w, r, target, f)
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	defer up.Close()
	p.log().Info("allowed", "client", r.RemoteAddr, "method", r.Method, "target", target, "addr", ap.String(),
		"decision", "allow", "rule", hv.Rule)

	idle := p.tunnelIdle()
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Time{}) // the next request on this connection starts afresh
	authority := proxyAuthority(h, port, 80)
	out := r.Clone(context.WithValue(ctx, ctxKeyPinned{}, &pinnedConn{c: &idleConn{Conn: up, idle: idle}}))
	out.RequestURI = ""
	out.URL = &url.URL{Scheme: "http", Host: authority, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	out.Host = authority
	out.Close = false
	stripHopHeaders(out.Header)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // not Go's default
	}
	if r.Body != nil && r.Body != http.NoBody {
		out.Body = &idleBody{ReadCloser: r.Body, rc: rc, idle: idle}
	}

	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			p.refuse(w, r, target, &refusal{http.StatusGatewayTimeout, ReasonTimeout, RuleUpstream, "the upstream did not answer in time"})
		} else if ctx.Err() == nil {
			p.refuse(w, r, target, &refusal{http.StatusBadGateway, ReasonUpstreamFailed, RuleUpstream, "the upstream's answer could not be read"})
		}
		return
	}
	defer resp.Body.Close()

	// net takes Upgrade and Connection off every request (hop-by-hop), so
	// a 101 answers an upgrade net never asked for. Passed on, it told
	// the agent the connection now spoke another protocol while net went
	// on reading HTTP requests from it and answering each with the
	// upstream's next 101 (a hunt): a byte stream net cannot look into
	// is a CONNECT tunnel's business (a ws:// client behind a proxy
	// uses CONNECT), never a forward's.
	if resp.StatusCode == http.StatusSwitchingProtocols {
		p.refuse(w, r, target, &refusal{http.StatusBadGateway, ReasonUpstreamFailed, RuleUpstream, "the upstream switched protocols, which net does not ask for on plain HTTP (use CONNECT)"})
		return
	}

	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// One Location is an answer net can decide, as inside an
		// intercepted connection: clients differ on which of several they
		// follow, and each was a lookup of its own, one after another.
		// An upstream's head of 64 KiB holds some two thousand, each a
		// name net looked up in turn, waiting up to DialTimeout on one
		// whose resolver stalls, while the agent's request waited (a
		// hunt): hours, and as many queries.
		locs := resp.Header.Values("Location")
		if len(locs) > 1 {
			p.refuse(w, r, target, &refusal{http.StatusForbidden, ReasonDeniedRedirect, RuleRedirect, "the answer has more than one Location"})
			return
		}
		for _, loc := range locs {
			if f := p.checkLocation(ctx, out.URL, loc); f != nil {
				p.refuse(w, r, target, f)
				return
			}
		}
	}

	dst := w.Header()
	for k, vs := range resp.Header {
		dst[k] = append([]string(nil), vs...)
	}
	stripHopHeaders(dst)
	// Only net says X-Pinfold-*: an upstream could fake a denial, under
	// any name a client may read as one of them (X_Pinfold_Rule).
	for k := range dst {
		if pinfoldHeader(k) {
			delete(dst, k)
		}
	}
	w.WriteHeader(resp.StatusCode)
	cb := newCopyBuf()
	defer cb.release()
	var wound time.Time
	for {
		buf := cb.get()
		n, rerr := resp.Body.Read(buf)
		cb.filled(n)
		if n > 0 {
			now := time.Now()
			if now.Sub(wound) > idle/8 { // winding the deadline is not free
				rc.SetWriteDeadline(now.Add(idle))
				wound = now
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			// A read that filled the buffer has more behind it: flush
			// only when the upstream paused (a stream, an event, the end).
			if n < len(buf) {
				rc.Flush()
			}
		}
		if rerr != nil {
			return // the body ended, or broke off: the client sees the cut
		}
	}
}

// checkLocation decides a redirect's target as a request to it would be
// decided (the name, then every address of one lookup). A redirect to
// the same target passes; one to a refused or unknowable target is a
// refusal.
// CheckRedirect decides a redirect's target the way checkLocation does,
// for an answer the proxy reads inside an intercepted connection: nil
// when the target may be followed, else the rule that refuses it.
func (p *Proxy) CheckRedirect(ctx context.Context, base *url.URL, loc string) (rule string, refused bool) {
	if f := p.checkLocation(ctx, base, loc); f != nil {
		return f.rule, true
	}
	return "", false
}

func (p *Proxy) checkLocation(ctx context.Context, base *url.URL, loc string) *refusal {
	deny := func(rule, detail string) *refusal {
		return &refusal{http.StatusForbidden, ReasonDeniedRedirect, rule, detail}
	}
	// WHATWG URL parsers (browsers, Node's fetch) read a backslash as a
	// slash and drop tabs and line breaks anywhere, so "/\host" is
	// scheme-relative to them and a path to Go's url: a Location they
	// would read apart is not decided, it is refused.
	if strings.ContainsAny(loc, "\\\x7f") || strings.TrimSpace(loc) != loc || strings.IndexFunc(loc, func(r rune) bool { return r < 0x20 }) >= 0 {
		return deny(RuleRedirect, "a redirect with a backslash, a control character or surrounding blanks")
	}
	// So is one whose authority is empty ("///host/x", "http:///host"):
	// WHATWG parsers skip any number of slashes before an http(s)
	// authority and read the host after them, where Go's url reads an
	// empty one and a path on the same host.
	if emptyAuthority(loc) {
		return deny(RuleRedirect, "a redirect with an empty authority")
	}
	u, err := base.Parse(loc)
	if err != nil {
		return deny(RuleRedirect, "malformed redirect")
	}
	var def uint16
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		def = 80
	case "https", "wss":
		def = 443
	default:
		return deny(RuleRedirect, "a redirect to a scheme the proxy does not carry")
	}
	if def == 80 && u.Host == base.Host {
		return nil // the target already decided
	}
	if u.Host == "" {
		return deny(RuleRedirect, "a redirect without a host")
	}
	h, port, err := p.Parse(u.Host, def)
	if err != nil {
		return deny(RuleRedirect, "malformed redirect host")
	}
	if _, _, f := p.decide(ctx, h, port); f != nil {
		if f.status == http.StatusForbidden {
			return deny(f.rule, "redirect to a refused target: "+f.detail)
		}
		return deny(f.rule, "redirect to a target that could not be checked")
	}
	return nil
}

// emptyAuthority reports whether loc, after any scheme, starts with "//"
// and an empty authority: nothing, or "/", "?" or "#" next.
func emptyAuthority(loc string) bool {
	rest := loc
	if i := strings.IndexByte(loc, ':'); i > 0 && isScheme(loc[:i]) {
		rest = loc[i+1:]
	}
	return strings.HasPrefix(rest, "//") && (len(rest) == 2 || strings.IndexByte("/?#", rest[2]) >= 0)
}

// isScheme reports whether s is an RFC 3986 scheme name.
func isScheme(s string) bool {
	for i, c := range []byte(s) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// idleConn is the upstream of a forward: a read or write that waits
// longer than idle fails.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(b)
}

func (c *idleConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	return c.Conn.Write(b)
}

// idleBody is a forwarded request's body: a client that stops sending it
// for idle is cut off.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.idle))
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		// The server's own read that watches for the client going away
		// starts at the body's end; it must not inherit the deadline,
		// or a long response would be cut off after idle.
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// limitListener lets at most cap(sem) accepted connections be open at
// once: Accept waits for one to close before it accepts again, and the
// rest wait in the kernel's bounded backlog.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, sem: l.sem}, nil
}

func (l *limitListener) Close() error {
	err := net.ErrClosed
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// limitConn gives its slot back when closed.
type limitConn struct {
	net.Conn
	sem  chan struct{}
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.sem })
	return err
}

// CloseWrite half-closes the connection when it can (TCP).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(halfCloser); ok {
		return cw.CloseWrite()
	}
	return fmt.Errorf("proxy: %T cannot half-close", c.Conn)
}
