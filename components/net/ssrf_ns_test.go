package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/pinfold/pinfold/internal/nstest"
	"github.com/pinfold/pinfold/policy"
)

// The SSRF test's addresses. They exist only on the loopback interface of
// a network namespace the test makes, which has no other interface: no
// packet to them can leave it.
var (
	ssrfMeta     = netip.MustParseAddr("169.254.169.254") // ClassMetadata
	ssrfInternal = netip.MustParseAddr("10.1.2.3")        // ClassPrivate
	ssrfLink     = netip.MustParseAddr("169.254.1.1")     // ClassLinkLocal
	ssrfPublic   = netip.MustParseAddr("1.2.3.4")         // ClassPublic, a stand-in for an outside host
	ssrfLoop     = netip.MustParseAddr("127.0.0.1")       // ClassLoopback
	ssrfOwn      = netip.MustParseAddr("203.0.114.7")     // ClassPublic, an address of the machine's own net did not read

	// The outside host is in a namespace of its own, behind a veth pair:
	// a connection to it has another source than its destination, as a
	// real outside host's has (net refuses one whose source is its
	// destination: the machine itself, Egress.DecideConn).
	ssrfOutside = netip.MustParsePrefix("1.2.3.1/24") // the test namespace's end
)

// ssrfRequireRoot skips (or, with PINFOLD_REQUIRE_ALL_FEATURES=1, fails)
// when the test cannot make network namespaces.
func ssrfRequireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("requires root (to make a network namespace and add addresses to its loopback), found euid %d", os.Geteuid())
		}
		t.Skipf("requires root (to make a network namespace and add addresses to its loopback), found euid %d", os.Geteuid())
	}
}

// ssrfServer is an HTTP server inside the namespace that counts the
// connections it accepted and the requests it answered.
type ssrfServer struct {
	name  string
	addr  netip.AddrPort
	conns atomic.Int64
	reqs  atomic.Int64
}

// ssrfEnv is the namespace, its servers, the fake resolver and a record
// of every address any proxy of the test dialled.
type ssrfEnv struct {
	t       *testing.T
	ns      netns.NsHandle
	outside netns.NsHandle // the outside host's: ssrfPublic, behind a veth pair

	meta, link, internal, public, loop, own *ssrfServer

	mu      sync.Mutex
	dials   []netip.AddrPort
	lookups map[string]int
}

// newSSRFEnv makes the namespace, adds the addresses and starts the
// servers.
func newSSRFEnv(t *testing.T) *ssrfEnv {
	t.Helper()
	ssrfRequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("requires the ip command (iproute2) to add addresses to the namespace's loopback: %v", err)
		}
		t.Skipf("requires the ip command (iproute2) to add addresses to the namespace's loopback: %v", err)
	}
	ns, err := nstest.NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	e := &ssrfEnv{t: t, ns: ns, lookups: map[string]int{}}

	// Confinement first: the namespace must have loopback and nothing
	// else, so that even an address the test got wrong is unreachable
	// from the host's side.
	if err := nstest.In(ns, func() error {
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		if len(ifs) != 1 || ifs[0].Flags&net.FlagLoopback == 0 {
			return fmt.Errorf("the test's namespace has interfaces %v, want loopback alone", ifs)
		}
		for _, a := range []netip.Addr{ssrfMeta, ssrfLink, ssrfInternal, ssrfOwn} {
			// A child forked by this locked thread is in its namespace.
			out, err := exec.Command("ip", "addr", "add", netip.PrefixFrom(a, 32).String(), "dev", ifs[0].Name).CombinedOutput()
			if err != nil {
				return fmt.Errorf("ip addr add %s: %v: %s", a, err, out)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	outside, err := nstest.NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outside.Close() })
	ssrfVeth(t, ns, outside)
	e.outside = outside

	e.meta = e.serve("metadata", netip.AddrPortFrom(ssrfMeta, 80), nil)
	e.own = e.serve("own", netip.AddrPortFrom(ssrfOwn, 80), nil)
	e.link = e.serve("link-local", netip.AddrPortFrom(ssrfLink, 80), nil)
	e.internal = e.serve("internal", netip.AddrPortFrom(ssrfInternal, 0), nil)
	// The same port as internal, so that one name can resolve to both.
	e.public = e.serveIn(e.outside, "public", netip.AddrPortFrom(ssrfPublic, e.internal.addr.Port()), nil)
	e.loop = e.serve("loopback", netip.AddrPortFrom(ssrfLoop, 0), func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/to-meta":
			http.Redirect(w, r, "http://meta.test/latest/meta-data/", http.StatusFound)
		case "/to-meta-ip":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-internal":
			http.Redirect(w, r, "http://"+e.internal.addr.String()+"/", http.StatusFound)
		default:
			return false
		}
		return true
	})
	return e
}

// ssrfVeth joins ns to outside by a veth pair: ssrfOutside on ns's end,
// ssrfPublic on outside's.
func ssrfVeth(t *testing.T, ns, outside netns.NsHandle) {
	t.Helper()
	run := func(extra []*os.File, args ...string) error {
		// A child forked by the locked thread is in its namespace.
		cmd := exec.Command("ip", args...)
		cmd.ExtraFiles = extra
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := nstest.In(ns, func() error {
		if err := run(nil, "link", "add", "pfin", "type", "veth", "peer", "name", "pfout"); err != nil {
			return err
		}
		// The outside namespace is the child's descriptor 3.
		f := os.NewFile(uintptr(outside), "outside namespace")
		if err := run([]*os.File{f}, "link", "set", "pfout", "netns", "/proc/self/fd/3"); err != nil {
			return err
		}
		if err := run(nil, "addr", "add", ssrfOutside.String(), "dev", "pfin"); err != nil {
			return err
		}
		return run(nil, "link", "set", "pfin", "up")
	}); err != nil {
		t.Fatal(err)
	}
	if err := nstest.In(outside, func() error {
		if err := run(nil, "addr", "add", netip.PrefixFrom(ssrfPublic, ssrfOutside.Bits()).String(), "dev", "pfout"); err != nil {
			return err
		}
		return run(nil, "link", "set", "pfout", "up")
	}); err != nil {
		t.Fatal(err)
	}
}

// serve starts an HTTP server whose listener is made inside the
// namespace; it answers its name as the body unless special handles the
// request.
func (e *ssrfEnv) serve(name string, at netip.AddrPort, special func(http.ResponseWriter, *http.Request) bool) *ssrfServer {
	return e.serveIn(e.ns, name, at, special)
}

// serveIn is serve with its listener in ns.
func (e *ssrfEnv) serveIn(ns netns.NsHandle, name string, at netip.AddrPort, special func(http.ResponseWriter, *http.Request) bool) *ssrfServer {
	t := e.t
	t.Helper()
	var ln net.Listener
	if err := nstest.In(ns, func() (err error) {
		ln, err = net.Listen("tcp4", at.String())
		return err
	}); err != nil {
		t.Fatalf("listening on %s in the test's namespace: %v", at, err)
	}
	s := &ssrfServer{name: name, addr: netip.MustParseAddrPort(ln.Addr().String())}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.reqs.Add(1)
			if special != nil && special(w, r) {
				return
			}
			io.WriteString(w, name)
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(slog.DiscardHandler, slog.LevelError),
	}
	go srv.Serve(nulListener{ln})
	t.Cleanup(func() { srv.Close() })
	return s
}

// nulListener's connections drop the marker line (one byte 0x80) their
// client sends first: the test's requests through a CONNECT tunnel start
// with one, since net refuses a tunnel whose first bytes are an HTTP
// request (or whose first line holds a version). Not a NUL: net skips
// control bytes, as Netty does, and decides the request behind them.
type nulListener struct{ net.Listener }

func (l nulListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &nulConn{Conn: c}, nil
}

type nulConn struct {
	net.Conn
	seen int // bytes read so far, up to len(nulLine)
}

const nulLine = "\x80\r\n"

func (c *nulConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		// Drop what matches the marker so far: it may come in pieces.
		skip := 0
		for skip < n && c.seen < len(nulLine) {
			if b[skip] != nulLine[c.seen] {
				c.seen = len(nulLine) // no marker: the rest passes as it is
				break
			}
			c.seen++
			skip++
		}
		if n = copy(b, b[skip:n]); n > 0 || err != nil {
			return n, err
		}
	}
}

// LookupNetIP is the proxy's resolver: fixed names; "rebind.test"
// answers the public address the first time and the internal one after.
// Answers come back IPv4-mapped, as Go's resolver gives A records.
func (e *ssrfEnv) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	e.mu.Lock()
	n := e.lookups[host]
	e.lookups[host] = n + 1
	e.mu.Unlock()
	var as []netip.Addr
	switch host {
	case "meta.test":
		as = []netip.Addr{ssrfMeta}
	case "internal.test":
		as = []netip.Addr{ssrfInternal}
	case "mixed.test":
		as = []netip.Addr{ssrfInternal, ssrfPublic}
	case "public.test":
		as = []netip.Addr{ssrfPublic}
	case "own.test":
		as = []netip.Addr{ssrfOwn}
	case "rebind.test":
		as = []netip.Addr{ssrfInternal}
		if n == 0 {
			as = []netip.Addr{ssrfPublic}
		}
	default:
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for i, a := range as {
		as[i] = netip.AddrFrom16(a.As16())
	}
	return as, nil
}

func (e *ssrfEnv) lookupCount(host string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lookups[host]
}

// dial is the proxy's dialer: it records the address, refuses anything
// but the namespace's own addresses, and connects from inside the
// namespace.
func (e *ssrfEnv) dial(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	e.mu.Lock()
	e.dials = append(e.dials, ap)
	e.mu.Unlock()
	switch ap.Addr() {
	case ssrfMeta, ssrfLink, ssrfInternal, ssrfPublic, ssrfLoop, ssrfOwn:
	default:
		e.t.Errorf("the proxy dialled %s, which is none of the namespace's addresses", ap)
		return nil, errors.New("test: not an address of the namespace")
	}
	var c net.Conn
	var err error
	if nerr := nstest.In(e.ns, func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, ap.String())
		return nil
	}); nerr != nil {
		return nil, nerr
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// dialsTo counts the proxy's dials to ap so far.
func (e *ssrfEnv) dialsTo(ap netip.AddrPort) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, d := range e.dials {
		if d == ap {
			n++
		}
	}
	return n
}

// proxy starts a Proxy deciding with the real Egress built from n, its
// listener on 127.0.0.1 inside the namespace (and given to NewEgress as a
// self listener, as the launcher does), and returns the listener's
// address.
func (e *ssrfEnv) proxy(n policy.Network) netip.AddrPort {
	t := e.t
	t.Helper()
	var ln net.Listener
	if err := nstest.In(e.ns, func() (err error) {
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	at := netip.MustParseAddrPort(ln.Addr().String())
	eg, err := NewEgress(n, []netip.AddrPort{at})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	p := &Proxy{
		Decider:     eg,
		Parse:       SplitHostPort,
		Resolver:    e,
		Dial:        e.dial,
		Log:         slog.New(slog.DiscardHandler),
		DialTimeout: 2 * time.Second,
		TunnelIdle:  5 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return at
}

// ssrfReply is what the client got.
type ssrfReply struct {
	status         int
	rule, reason   string
	location, body string
}

func (r ssrfReply) String() string {
	return fmt.Sprintf("%d rule=%q reason=%q location=%q body=%q", r.status, r.rule, r.reason, r.location, r.body)
}

// do sends one request to the proxy from inside the namespace: method
// GET with an absolute URL, or CONNECT with an authority (then, on 200,
// a GET / through the tunnel, whose answer is the reply's body).
func (e *ssrfEnv) do(t *testing.T, px netip.AddrPort, method, target string) ssrfReply {
	t.Helper()
	var c net.Conn
	var err error
	if nerr := nstest.In(e.ns, func() error {
		c, err = net.DialTimeout("tcp4", px.String(), 2*time.Second)
		return nil
	}); nerr != nil {
		t.Fatal(nerr)
	}
	if err != nil {
		t.Fatalf("connecting to the proxy: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	host := target
	if method != http.MethodConnect {
		host = strings.TrimPrefix(target, "http://")
		host, _, _ = strings.Cut(host, "/")
	}
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", method, target, host); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: reading the proxy's answer: %v", method, target, err)
	}
	defer resp.Body.Close()
	r := ssrfReply{
		status:   resp.StatusCode,
		rule:     resp.Header.Get("X-Pinfold-Rule"),
		reason:   resp.Header.Get("X-Pinfold-Reason"),
		location: resp.Header.Get("Location"),
	}
	if method == http.MethodConnect && resp.StatusCode == http.StatusOK {
		// A marker line first (dropped by the server, nulConn): net
		// refuses a tunnel whose first bytes are an HTTP request.
		if _, err := fmt.Fprintf(c, nulLine+"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target); err != nil {
			t.Fatal(err)
		}
		inner, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("CONNECT %s: reading through the tunnel: %v", target, err)
		}
		defer inner.Body.Close()
		resp = inner
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, target, err)
	}
	r.body = string(b)
	return r
}

// refused asserts a 403 with rule and reason, and that neither the
// proxy dialled s nor s answered a request meanwhile.
func (e *ssrfEnv) refused(t *testing.T, px netip.AddrPort, method, target string, s *ssrfServer, rule, reason string) {
	t.Helper()
	reqs, dials := s.reqs.Load(), e.dialsTo(s.addr)
	r := e.do(t, px, method, target)
	if r.status != http.StatusForbidden || r.rule != rule || r.reason != reason {
		t.Errorf("%s %s: got %v, want 403 rule=%q reason=%q", method, target, r, rule, reason)
	}
	if !strings.HasPrefix(r.body, "pinfold: "+reason+" ("+rule+")") {
		t.Errorf("%s %s: the refusal's body is %q, not the proxy's own", method, target, r.body)
	}
	if d := e.dialsTo(s.addr) - dials; d != 0 {
		t.Errorf("%s %s: the proxy dialled the %s server (%s) %d times", method, target, s.name, s.addr, d)
	}
	if n := s.reqs.Load() - reqs; n != 0 {
		t.Errorf("%s %s: the %s server answered %d requests", method, target, s.name, n)
	}
}

// reached asserts a 200 whose body is s's name (the control: the target
// is really there), with exactly one dial to s and one request to it.
func (e *ssrfEnv) reached(t *testing.T, px netip.AddrPort, method, target string, s *ssrfServer) {
	t.Helper()
	reqs, dials := s.reqs.Load(), e.dialsTo(s.addr)
	r := e.do(t, px, method, target)
	if r.status != http.StatusOK || r.body != s.name {
		t.Errorf("%s %s: got %v, want 200 with the %s server's body", method, target, r, s.name)
	}
	if d := e.dialsTo(s.addr) - dials; d != 1 {
		t.Errorf("%s %s: the proxy dialled the %s server (%s) %d times, want 1", method, target, s.name, s.addr, d)
	}
	if n := s.reqs.Load() - reqs; n != 1 {
		t.Errorf("%s %s: the %s server answered %d requests, want 1", method, target, s.name, n)
	}
}

func ssrfCIDRs(ss ...string) []policy.CIDR {
	cs := make([]policy.CIDR, len(ss))
	for i, s := range ss {
		cs[i] = policy.CIDR(netip.MustParsePrefix(s))
	}
	return cs
}

// TestSSRFInNetns runs the real Proxy with the real Egress against real
// servers on private, metadata, loopback and public addresses, all inside
// a network namespace of the test's own: every refusal is matched by a
// control in which the same target, allowed, answers.
func TestSSRFInNetns(t *testing.T) {
	e := newSSRFEnv(t)
	iport := strconv.Itoa(int(e.internal.addr.Port()))
	internalName := "http://internal.test:" + iport + "/"
	internalLit := "http://" + e.internal.addr.String() + "/"
	loopBase := "http://" + e.loop.addr.String()
	const metaName, metaLit = "http://meta.test/latest/meta-data/", "http://169.254.169.254/latest/meta-data/"

	// Policies as the [network] table gives them. block_all is false
	// but where said: every name is allowed, and only the SSRF check
	// stands between a name and a private address.
	open := e.proxy(policy.Network{})
	priv10 := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("10.0.0.0/8")})
	linkLocal := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("169.254.0.0/16")})
	everything := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("0.0.0.0/0")})
	metaExact := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("169.254.169.254/32")})
	loop := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("127.0.0.0/8")})
	loopLinkLocal := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("127.0.0.0/8", "169.254.0.0/16")})
	loopMeta := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("127.0.0.0/8", "169.254.169.254/32")})
	blockAll := e.proxy(policy.Network{
		BlockAll:           true,
		Allow:              []policy.Domain{"internal.test", "public.test"},
		UnsafeAllowPrivate: ssrfCIDRs("10.0.0.0/8"),
	})

	t.Run("private", func(t *testing.T) {
		e.refused(t, open, "GET", internalName, e.internal, "ssrf.private", ReasonDeniedAddress)
		e.refused(t, open, "GET", internalLit, e.internal, "ssrf.private", ReasonDeniedHost)
		if n := e.internal.reqs.Load(); n != 0 {
			t.Errorf("the internal server answered %d requests before any was allowed", n)
		}
		// Control: the same targets, allowed by a range.
		e.reached(t, priv10, "GET", internalName, e.internal)
		e.reached(t, priv10, "GET", internalLit, e.internal)
	})

	t.Run("metadata", func(t *testing.T) {
		// Neither a link-local range nor even 0.0.0.0/0 opens the
		// metadata address: only a range of exactly that address does.
		for _, px := range []netip.AddrPort{open, linkLocal, everything} {
			e.refused(t, px, "GET", metaName, e.meta, "ssrf.metadata", ReasonDeniedAddress)
			e.refused(t, px, "GET", metaLit, e.meta, "ssrf.metadata", ReasonDeniedHost)
			e.refused(t, px, http.MethodConnect, "meta.test:80", e.meta, "ssrf.metadata", ReasonDeniedAddress)
			e.refused(t, px, http.MethodConnect, "169.254.169.254:80", e.meta, "ssrf.metadata", ReasonDeniedHost)
		}
		if n := e.meta.reqs.Load(); n != 0 {
			t.Errorf("the metadata server answered %d requests before any was allowed", n)
		}
		// Control.
		e.reached(t, metaExact, "GET", metaName, e.meta)
		e.reached(t, metaExact, "GET", metaLit, e.meta)
		e.reached(t, metaExact, http.MethodConnect, "meta.test:80", e.meta)
		// The broad range does open the rest of link-local: the
		// metadata refusal above is about the address, not the range.
		e.refused(t, open, "GET", "http://169.254.1.1/", e.link, "ssrf.link-local", ReasonDeniedHost)
		e.reached(t, linkLocal, "GET", "http://169.254.1.1/", e.link)
	})

	t.Run("redirect", func(t *testing.T) {
		metaReqs, metaDials := e.meta.reqs.Load(), e.dialsTo(e.meta.addr)
		// Control: the loopback server is reachable, and its redirect
		// is passed on when the redirect's target is allowed.
		e.reached(t, loop, "GET", loopBase+"/", e.loop)
		if r := e.do(t, loopMeta, "GET", loopBase+"/to-meta"); r.status != http.StatusFound || r.location != metaName {
			t.Errorf("a redirect to an allowed metadata target: got %v, want the 302 passed on", r)
		}
		// The refusals: the loopback server is asked (and answers 302),
		// the metadata server never.
		for _, px := range []netip.AddrPort{loop, loopLinkLocal} {
			for _, path := range []string{"/to-meta", "/to-meta-ip"} {
				loopReqs := e.loop.reqs.Load()
				e.refused(t, px, "GET", loopBase+path, e.meta, "ssrf.metadata", ReasonDeniedRedirect)
				if n := e.loop.reqs.Load() - loopReqs; n != 1 {
					t.Errorf("GET %s%s: the loopback server answered %d requests, want 1 (the redirect)", loopBase, path, n)
				}
			}
		}
		e.refused(t, loop, "GET", loopBase+"/to-internal", e.internal, "ssrf.private", ReasonDeniedRedirect)
		if d, n := e.dialsTo(e.meta.addr)-metaDials, e.meta.reqs.Load()-metaReqs; d != 0 || n != 0 {
			t.Errorf("redirects: the proxy dialled the metadata server %d times and it answered %d requests; want 0", d, n)
		}
	})

	t.Run("connect", func(t *testing.T) {
		e.refused(t, open, http.MethodConnect, e.internal.addr.String(), e.internal, "ssrf.private", ReasonDeniedHost)
		e.refused(t, open, http.MethodConnect, "internal.test:"+iport, e.internal, "ssrf.private", ReasonDeniedAddress)
		// Control: a tunnel, and a request through it.
		e.reached(t, priv10, http.MethodConnect, e.internal.addr.String(), e.internal)
		e.reached(t, priv10, http.MethodConnect, "internal.test:"+iport, e.internal)
	})

	t.Run("block_all", func(t *testing.T) {
		// Address literals are refused even in an allowed range (allow
		// rules take names), and even when public.
		e.refused(t, blockAll, "GET", internalLit, e.internal, "network.block_all", ReasonDeniedHost)
		e.refused(t, blockAll, http.MethodConnect, e.internal.addr.String(), e.internal, "network.block_all", ReasonDeniedHost)
		e.refused(t, blockAll, "GET", "http://"+e.public.addr.String()+"/", e.public, "network.block_all", ReasonDeniedHost)
		// A name not allowed, though its address would pass.
		e.refused(t, blockAll, "GET", "http://mixed.test:"+iport+"/", e.public, "network.block_all", ReasonDeniedHost)
		// Control: the allowed names for the same servers.
		e.reached(t, blockAll, "GET", internalName, e.internal)
		e.reached(t, blockAll, "GET", "http://public.test:"+iport+"/", e.public)
	})

	t.Run("mixed and rebinding", func(t *testing.T) {
		// A name with a private and a public address: only the public
		// one is dialled.
		reqs, dials := e.internal.reqs.Load(), e.dialsTo(e.internal.addr)
		e.reached(t, open, "GET", "http://mixed.test:"+iport+"/", e.public)
		e.reached(t, open, http.MethodConnect, "mixed.test:"+iport, e.public)
		if d, n := e.dialsTo(e.internal.addr)-dials, e.internal.reqs.Load()-reqs; d != 0 || n != 0 {
			t.Errorf("mixed.test: the proxy dialled the internal server %d times and it answered %d requests; want 0", d, n)
		}
		// rebind.test answers public once, then private: the proxy
		// looks up once per request and dials what it checked, so the
		// first request reaches the public server and the second is
		// refused; neither reaches the internal one.
		rebind := "http://rebind.test:" + iport + "/"
		e.reached(t, open, "GET", rebind, e.public)
		if n := e.lookupCount("rebind.test"); n != 1 {
			t.Errorf("rebind.test was looked up %d times for one request, want 1", n)
		}
		e.refused(t, open, "GET", rebind, e.internal, "ssrf.private", ReasonDeniedAddress)
		if n := e.lookupCount("rebind.test"); n != 2 {
			t.Errorf("rebind.test was looked up %d times for two requests, want 2", n)
		}
	})

	t.Run("the machine's own address", func(t *testing.T) {
		// 203.0.114.7 is public by its range and none of the addresses
		// the Egress was given (SetHostAddrs: here none, as for one the
		// machine made after net started), but it is the machine's own:
		// the connection's source is its destination. Refused once
		// dialled, before anything is sent on it.
		for _, tc := range []struct{ method, target string }{
			{"GET", "http://own.test/"},
			{"GET", "http://" + ssrfOwn.String() + "/"},
			{http.MethodConnect, "own.test:80"},
			{http.MethodConnect, ssrfOwn.String() + ":80"},
		} {
			reqs := e.own.reqs.Load()
			r := e.do(t, open, tc.method, tc.target)
			if r.status != http.StatusForbidden || r.rule != "ssrf.loopback" || r.reason != ReasonDeniedAddress {
				t.Errorf("%s %s: got %v, want 403 rule=ssrf.loopback reason=%s", tc.method, tc.target, r, ReasonDeniedAddress)
			}
			if n := e.own.reqs.Load() - reqs; n != 0 {
				t.Errorf("%s %s: the machine's own server answered %d requests", tc.method, tc.target, n)
			}
		}
		// Control: a range of that address opens it, as it opens the
		// machine's known addresses.
		ownExact := e.proxy(policy.Network{UnsafeAllowPrivate: ssrfCIDRs("203.0.114.7/32")})
		e.reached(t, ownExact, "GET", "http://own.test/", e.own)
		e.reached(t, ownExact, http.MethodConnect, "own.test:80", e.own)
	})

	t.Run("self", func(t *testing.T) {
		// The proxy's own listener, even where loopback is allowed.
		for _, m := range []string{"GET", http.MethodConnect} {
			target := loop.String()
			if m == "GET" {
				target = "http://" + target + "/"
			}
			if r := e.do(t, loop, m, target); r.status != http.StatusForbidden || r.rule != "ssrf.self" {
				t.Errorf("%s %s, the proxy's own address: got %v, want 403 ssrf.self", m, target, r)
			}
		}
	})

	// Every connection a server accepted was a dial the proxy made for
	// a control: no refused request touched a server. (A server accepts
	// after the client's connect returns: wait for the counts to settle.)
	for _, s := range []*ssrfServer{e.meta, e.link, e.internal, e.public, e.loop, e.own} {
		want := int64(e.dialsTo(s.addr))
		for deadline := time.Now().Add(2 * time.Second); s.conns.Load() != want && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if got := s.conns.Load(); got != want {
			t.Errorf("the %s server accepted %d connections; the proxy dialled it %d times", s.name, got, want)
		}
	}
}
