// Command proxy measures the net component's forward proxy
// (components/net's Proxy, deciding with the real Egress policy) next to
// direct loopback TCP, in one run:
//
//   - bulk throughput: one large body streamed from a loopback server
//     (never held in memory), read directly, through a CONNECT tunnel, and
//     as an absolute-form GET through the proxy (next to the same GET
//     made directly), with a bare io.Copy relay as a reference; MB/s
//     medians of interleaved repetitions and the ratio to direct;
//   - connection rate: new connections a second, each a tiny exchange and
//     a close, through CONNECT and directly, with bounded concurrency;
//   - concurrency: 1,000 CONNECT tunnels held open at once, each echoing
//     one message once all are up, and the time to establish them.
//
// The proxy allows loopback only through unsafe_allow_private, as a
// policy would; every listener and every address dialled is in
// 127.0.0.0/8. It needs no root: it raises RLIMIT_NOFILE's soft limit to
// the hard one (and the hard one too when it may) for the tunnels.
//
// With -json FILE it also writes bench/report Reports, once the run has
// ended cleanly:
//
//   - FILE: bulk throughput, one row per path (median MB/s, no p90), the
//     ratios to direct in its notes;
//   - FILE with "-rate" before ".json": connection rate, one row per path
//     (median connections/s), the ratio in its notes;
//   - FILE with "-hold" before ".json": the tunnels held at once, rows
//     "<path>: establish" and "<path>: echo" (ms for all n to be up, and
//     for every one to echo; one run each), the verdict lines in its
//     notes. Not written (and an old one removed) when the descriptor
//     limit is too low to measure.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/bench/report"
	proxy "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/policy"
)

// loopback is the only range this command listens on or dials.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// Time bounds: every connection and every wait has one.
const (
	opTimeout    = 20 * time.Second // one bulk download, one phase of the tunnels
	connTimeout  = 10 * time.Second // one short connection
	closeTimeout = 10 * time.Second // shutting a server or the proxy down
	chunk        = 64 << 10         // the servers' writes
	readBuf      = 128 << 10        // the clients' reads
)

func main() {
	sizeMiB := flag.Int("size", 256, "bulk body, MiB")
	reps := flag.Int("reps", 5, "bulk repetitions per path")
	nconns := flag.Int("conns", 5000, "connections per round of the rate test")
	rounds := flag.Int("rounds", 3, "rounds of the rate test per path")
	workers := flag.Int("workers", 64, "concurrent connections in the rate test")
	ntunnels := flag.Int("tunnels", 1000, "tunnels held open at once")
	out := flag.String("json", "", "also write bulk throughput to this file, and connection rate and tunnels held to its -rate and -hold siblings, as bench/report JSON reports")
	flag.Parse()
	if *sizeMiB < 1 || *reps < 1 || *nconns < 1 || *rounds < 1 || *workers < 1 || *ntunnels < 1 {
		fail(errors.New("every count must be at least 1"))
	}
	size := int64(*sizeMiB) << 20
	fdLimit := raiseNoFile(uint64(4**ntunnels + 512))
	baseG := runtime.NumGoroutine()
	started := time.Now()

	// Servers. Each rate-test path and the tunnels have their own echo
	// listener, so that the connections left in TIME_WAIT by one do not
	// use up the ephemeral ports of another's 4-tuples.
	stream := listen("stream", func(c net.Conn) {
		c.SetDeadline(time.Now().Add(opTimeout))
		writeN(c, streamSize.Load())
	})
	web := listenHTTP(size)
	echoDirect := listen("echo", echoConn)
	echoProxied := listen("echo", echoConn)
	echoTunnels := listen("echo", echoConn)
	relay := listen("relay", func(c net.Conn) {
		up, err := dial(stream.addr, time.Now().Add(connTimeout))
		if err != nil {
			return
		}
		defer up.Close()
		c.SetDeadline(time.Now().Add(opTimeout))
		up.SetDeadline(time.Now().Add(opTimeout))
		done := make(chan struct{})
		go func() {
			io.Copy(up, c)
			up.(*net.TCPConn).CloseWrite()
			close(done)
		}()
		io.Copy(c, up)
		c.(*net.TCPConn).CloseWrite()
		<-done
	})

	// The proxy: the real egress policy, allowing loopback only through
	// unsafe_allow_private; public targets would pass its SSRF check,
	// which is why every target here is a loopback literal checked
	// before it is sent.
	eg, err := proxy.NewEgress(policy.Network{
		Mode:               policy.NetProxy,
		BlockAll:           false,
		UnsafeAllowPrivate: []policy.CIDR{policy.CIDR(loopback)},
	}, nil)
	check(err)
	px := &proxy.Proxy{Decider: eg, Parse: proxy.SplitHostPort, Log: slog.New(slog.DiscardHandler)}
	pln, err := net.Listen("tcp4", "127.0.0.1:0")
	check(err)
	pxAddr := mustLoopback(pln.Addr().String())
	pxDone := make(chan error, 1)
	go func() { pxDone <- px.Serve(pln) }()

	directHTTP := httpClient(nil)
	proxiedHTTP := httpClient(&url.URL{Scheme: "http", Host: pxAddr})
	bodyURL := "http://" + mustLoopback(web.addr) + "/bulk"

	// 1. Bulk throughput.
	paths := []struct {
		name string
		get  func(n int64) error
	}{
		{"direct TCP stream", func(n int64) error { return readStream(stream.addr, n) }},
		{"proxy CONNECT tunnel", func(n int64) error { return readTunnel(pxAddr, stream.addr, n) }},
		{"reference: bare io.Copy relay", func(n int64) error { return readStream(relay.addr, n) }},
		{"direct HTTP GET", func(n int64) error { return readGET(directHTTP, bodyURL, n) }},
		{"proxy absolute-form GET", func(n int64) error { return readGET(proxiedHTTP, bodyURL, n) }},
	}
	// A warm-up round (a small body on the same paths: the servers'
	// and the proxy's first connections, the buffers' first use).
	web.size.Store(8 << 20)
	streamSize.Store(8 << 20)
	for _, p := range paths {
		check(p.get(8 << 20))
	}
	web.size.Store(size)
	streamSize.Store(size)
	mbps := make([][]float64, len(paths))
	for range *reps {
		for i, p := range paths {
			start := time.Now()
			if err := p.get(size); err != nil {
				fail(fmt.Errorf("%s: %w", p.name, err))
			}
			mbps[i] = append(mbps[i], float64(size)/time.Since(start).Seconds()/1e6)
		}
	}
	med := make([]float64, len(paths))
	for i := range paths {
		med[i] = median(mbps[i])
	}
	fmt.Printf("bulk: %d MiB body, %d runs each, interleaved (median MB/s, ratio to direct)\n", *sizeMiB, *reps)
	bulkRatio := []string{
		1: fmt.Sprintf("%.2f of direct TCP  (target ≥ 0.80)", med[1]/med[0]),
		2: fmt.Sprintf("%.2f of direct TCP", med[2]/med[0]),
		4: fmt.Sprintf("%.2f of direct GET  (target ≥ 0.80)", med[4]/med[3]),
	}
	var bulkNotes []string
	for i, p := range paths {
		if bulkRatio[i] == "" {
			fmt.Printf("  %-32s %8.0f\n", p.name, med[i])
			continue
		}
		fmt.Printf("  %-32s %8.0f   %s\n", p.name, med[i], bulkRatio[i])
		bulkNotes = append(bulkNotes, p.name+": "+bulkRatio[i])
	}

	// 2. Connection rate.
	direct := func() error { return echoOnce(echoDirect.addr, "") }
	tunnel := func() error { return echoOnce(pxAddr, echoProxied.addr) }
	for _, fn := range []func() error{direct, tunnel} { // warm-up
		_, err := rate(100, 8, fn)
		check(err)
	}
	var directRates, tunnelRates []float64
	for range *rounds {
		r, err := rate(*nconns, *workers, direct)
		check(err)
		directRates = append(directRates, r)
		r, err = rate(*nconns, *workers, tunnel)
		check(err)
		tunnelRates = append(tunnelRates, r)
	}
	dr, tr := median(directRates), median(tunnelRates)
	fmt.Printf("\nconnection rate: %d connections × %d rounds, %d at a time (median connections/s)\n", *nconns, *rounds, *workers)
	fmt.Printf("  %-32s %8.0f\n", "direct TCP, echo, close", dr)
	rateRatio := fmt.Sprintf("%.2f of direct", tr/dr)
	fmt.Printf("  %-32s %8.0f   %s\n", "CONNECT, echo, close", tr, rateRatio)

	// 3. Tunnels held at once.
	fmt.Printf("\nconcurrency: %d connections held open at once, then one echo each (RLIMIT_NOFILE %d)\n", *ntunnels, fdLimit)
	var holds []held
	if need := uint64(4**ntunnels + 256); fdLimit < need {
		fmt.Printf("  not measured: %d tunnels need about %d descriptors (client, proxy both ways, server)\n", *ntunnels, need)
	} else {
		holds = append(holds, hold("direct TCP", *ntunnels, *workers, echoTunnels, "", ""))
		holds = append(holds, hold("CONNECT tunnels", *ntunnels, *workers, echoTunnels, pxAddr, echoTunnels.addr))
	}

	// Cleanup: the proxy, then the servers; then every goroutine this
	// command started must be gone.
	directHTTP.CloseIdleConnections()
	proxiedHTTP.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	err = px.Shutdown(ctx)
	cancel()
	check(err)
	select {
	case err := <-pxDone:
		check(err)
	case <-time.After(closeTimeout):
		fail(errors.New("the proxy's Serve did not return after Shutdown"))
	}
	for _, s := range []*server{stream, echoDirect, echoProxied, echoTunnels, relay} {
		s.close()
	}
	web.close()
	leftG := runtime.NumGoroutine()
	for end := time.Now().Add(closeTimeout); leftG > baseG && time.Now().Before(end); leftG = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("\ngoroutines before %d, after cleanup %d; whole run %.1fs\n", baseG, leftG, time.Since(started).Seconds())
	if leftG > baseG {
		fail(fmt.Errorf("%d goroutines left behind", leftG-baseG))
	}

	if *out != "" {
		bulk := report.NewReport("proxy", fmt.Sprintf("Bulk throughput of a %d MiB body over loopback: direct, through the net component's proxy (CONNECT and absolute-form GET) and a bare io.Copy relay (%d interleaved runs each).", *sizeMiB, *reps), "MB/s", report.Higher)
		for i, p := range paths {
			bulk.Add(p.name, med[i], 0, len(mbps[i]))
		}
		bulk.Notes = bulkNotes
		check(bulk.WriteFile(*out))

		rt := report.NewReport("proxy", fmt.Sprintf("New connections a second over loopback, each an echo and a close, direct and through a CONNECT tunnel (%d connections × %d rounds, %d at a time).", *nconns, *rounds, *workers), "connections/s", report.Higher)
		rt.Date = bulk.Date
		rt.Add("direct TCP, echo, close", dr, 0, len(directRates))
		rt.Add("CONNECT, echo, close", tr, 0, len(tunnelRates))
		rt.Notes = []string{"CONNECT, echo, close: " + rateRatio}
		check(rt.WriteFile(report.WithSuffix(*out, "-rate")))

		holdFile := report.WithSuffix(*out, "-hold")
		if len(holds) == 0 {
			if err := os.Remove(holdFile); err != nil && !errors.Is(err, os.ErrNotExist) {
				check(err)
			}
		} else {
			hr := report.NewReport("proxy", fmt.Sprintf("Time to open %d connections held at once, directly and as CONNECT tunnels, and then to echo one message on each.", *ntunnels), "ms", report.Lower)
			hr.Date = bulk.Date
			for _, h := range holds {
				hr.Add(h.name+": establish", ms(h.established), 0, 1)
			}
			for _, h := range holds {
				hr.Add(h.name+": echo", ms(h.echo), 0, 1)
			}
			for _, h := range holds {
				hr.Notes = append(hr.Notes, h.notes...)
			}
			check(hr.WriteFile(holdFile))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// streamSize is what the stream server sends on each connection.
var streamSize atomic.Int64

// mustLoopback returns addr if it is an IPv4 address in 127.0.0.0/8 with a
// port, and stops the command otherwise.
func mustLoopback(addr string) string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() || !loopback.Contains(ap.Addr()) || ap.Port() == 0 {
		fail(fmt.Errorf("%q is not a 127.0.0.0/8 address and port: this command talks to loopback only", addr))
	}
	return addr
}

// dial connects to a loopback address, and only to one.
func dial(addr string, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{Deadline: deadline}
	return d.Dial("tcp4", mustLoopback(addr))
}

// server is a loopback TCP listener whose connections are each handled by
// one goroutine; close ends them all.
type server struct {
	addr      string
	ln        net.Listener
	wg        sync.WaitGroup
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	open      atomic.Int64 // connections being handled now
	closeOnce sync.Once
}

func listen(name string, handle func(net.Conn)) *server {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	check(err)
	s := &server{addr: mustLoopback(ln.Addr().String()), ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					fmt.Fprintf(os.Stderr, "proxy bench: %s accept: %v\n", name, err)
				}
				return
			}
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.open.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					c.Close()
					s.open.Add(-1)
				}()
				handle(c)
			}()
		}
	}()
	return s
}

// close stops accepting, closes every connection and waits for the
// handlers.
func (s *server) close() {
	s.closeOnce.Do(func() {
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		if !waitTimeout(&s.wg, closeTimeout) {
			fail(fmt.Errorf("server %s: handlers still running after close", s.addr))
		}
	})
}

// waitTimeout waits for wg until d has passed; false if it had to stop.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false // the waiter is left behind; the command is ending
	}
}

// pattern is what the servers send, a chunk at a time.
var pattern = func() []byte {
	b := make([]byte, chunk)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}()

// writeN writes n bytes of pattern to w.
func writeN(w io.Writer, n int64) error {
	for n > 0 {
		k := min(n, int64(len(pattern)))
		if _, err := w.Write(pattern[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// echoConn echoes until the client half-closes or the deadline.
func echoConn(c net.Conn) {
	c.SetDeadline(time.Now().Add(opTimeout + connTimeout))
	io.Copy(c, c)
}

// webServer serves /bulk, a body of size bytes.
type webServer struct {
	addr string
	srv  *http.Server
	done chan error
	size atomic.Int64
}

func listenHTTP(size int64) *webServer {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	check(err)
	w := &webServer{addr: mustLoopback(ln.Addr().String()), done: make(chan error, 1)}
	w.size.Store(size)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bulk", func(rw http.ResponseWriter, r *http.Request) {
		n := w.size.Load()
		rw.Header().Set("Content-Type", "application/octet-stream")
		rw.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		writeN(rw, n)
	})
	w.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: connTimeout,
		WriteTimeout:      opTimeout,
		IdleTimeout:       connTimeout,
	}
	go func() { w.done <- w.srv.Serve(ln) }()
	return w
}

func (w *webServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.srv.Close()
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		fail(errors.New("the HTTP server did not stop"))
	}
}

// httpClient makes a client that dials loopback only, through the proxy
// at via (absolute-form requests) or directly when via is nil — never
// through a proxy named by the environment.
func httpClient(via *url.URL) *http.Client {
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: connTimeout}
			return d.DialContext(ctx, "tcp4", mustLoopback(addr))
		},
		DisableKeepAlives:  true,
		DisableCompression: true,
		ForceAttemptHTTP2:  false,
		ReadBufferSize:     readBuf,
	}
	if via != nil {
		mustLoopback(via.Host)
		tr.Proxy = http.ProxyURL(via)
	}
	return &http.Client{Transport: tr, Timeout: opTimeout}
}

// drain reads r to its end and checks that it held n bytes.
func drain(r io.Reader, n int64) error {
	buf := make([]byte, readBuf)
	var got int64
	for {
		k, err := r.Read(buf)
		got += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("after %d bytes: %w", got, err)
		}
	}
	if got != n {
		return fmt.Errorf("read %d bytes, want %d", got, n)
	}
	return nil
}

// readStream reads the stream server's body straight from addr.
func readStream(addr string, n int64) error {
	c, err := dial(addr, time.Now().Add(connTimeout))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(opTimeout))
	return drain(c, n)
}

// connect dials the proxy at pxAddr and asks it for a tunnel to target;
// the reader holds the tunnel's first bytes if the proxy's answer brought
// any.
func connect(pxAddr, target string, deadline time.Time) (net.Conn, *bufio.Reader, error) {
	mustLoopback(target)
	c, err := dial(pxAddr, deadline)
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("CONNECT %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, nil, fmt.Errorf("CONNECT %s: %s (%s, %s)", target, resp.Status,
			resp.Header.Get("X-Pinfold-Rule"), resp.Header.Get("X-Pinfold-Reason"))
	}
	return c, br, nil
}

// readTunnel reads the stream server's body through a CONNECT tunnel.
func readTunnel(pxAddr, target string, n int64) error {
	c, br, err := connect(pxAddr, target, time.Now().Add(opTimeout))
	if err != nil {
		return err
	}
	defer c.Close()
	return drain(br, n)
}

// readGET downloads u with client.
func readGET(client *http.Client, u string, n int64) error {
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET: %s (%s, %s)", resp.Status,
			resp.Header.Get("X-Pinfold-Rule"), resp.Header.Get("X-Pinfold-Reason"))
	}
	return drain(resp.Body, n)
}

var ping = []byte("ping\n")

// echoOnce connects to addr (through a CONNECT tunnel to target when
// target is set), sends ping, reads it back and closes.
func echoOnce(addr, target string) error {
	deadline := time.Now().Add(connTimeout)
	var c net.Conn
	var r io.Reader
	var err error
	if target == "" {
		c, err = dial(addr, deadline)
		r = c
	} else {
		c, r, err = connect(addr, target, deadline)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	if _, err := c.Write(ping); err != nil {
		return err
	}
	got := make([]byte, len(ping))
	if _, err := io.ReadFull(r, got); err != nil {
		return err
	}
	if !bytes.Equal(got, ping) {
		return fmt.Errorf("echo: got %q", got)
	}
	return nil
}

// rate runs fn n times, workers at a time, and returns runs a second.
func rate(n, workers int, fn func() error) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := fn(); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	// Every fn is bounded by connTimeout, so this wait is bounded too;
	// the limit is a backstop.
	if !waitTimeout(&wg, time.Duration(n/workers+2)*connTimeout) {
		return 0, errors.New("rate: workers stuck")
	}
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// held is what hold measured: the times, and the lines it printed.
type held struct {
	name              string
	established, echo time.Duration
	notes             []string
}

// hold opens n connections to echo (through CONNECT tunnels via pxAddr to
// target when pxAddr is set), workers at a time, and keeps every one open
// until all are up; then each echoes one message. It prints how many were
// held, the peak the echo server saw, and the times, and returns them.
func hold(name string, n, workers int, echo *server, pxAddr, target string) (res held) {
	res.name = name
	deadline := time.Now().Add(opTimeout)
	conns := make([]net.Conn, n)
	readers := make([]io.Reader, n)
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				var c net.Conn
				var r io.Reader
				var err error
				if pxAddr == "" {
					c, err = dial(echo.addr, deadline)
					r = c
				} else {
					c, r, err = connect(pxAddr, target, deadline)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				c.SetDeadline(deadline)
				conns[i], readers[i] = c, r
			}
		}()
	}
	if !waitTimeout(&wg, 2*opTimeout) {
		fail(errors.New("hold: dialers stuck"))
	}
	established := time.Since(start)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		// The echo server's side ends once the close has gone through
		// the proxy (and the proxy's tunnel with it).
		for end := time.Now().Add(closeTimeout); echo.open.Load() > 0 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		if k := echo.open.Load(); k > 0 {
			fmt.Printf("  %-18s %d connections still open at the echo server %v after close\n", "", k, closeTimeout)
			res.notes = append(res.notes, fmt.Sprintf("%s: %d connections still open at the echo server %v after close", name, k, closeTimeout))
		}
	}()
	// All are up from the client's side; the server's accepts may lag a
	// little behind the proxy's dials.
	for end := time.Now().Add(connTimeout); echo.open.Load() < int64(n)-failed.Load() && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	upAtServer := echo.open.Load()

	var echoed atomic.Int64
	var ewg sync.WaitGroup
	start = time.Now()
	for i := range n {
		if conns[i] == nil {
			continue
		}
		ewg.Add(1)
		go func() {
			defer ewg.Done()
			// No space after the word: net refuses a tunnel whose first
			// bytes begin like an HTTP request (a token, a space).
			msg := []byte(fmt.Sprintf("tunnel-%d\n", i))
			if _, err := conns[i].Write(msg); err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(readers[i], got); err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			if bytes.Equal(got, msg) {
				echoed.Add(1)
			}
		}()
	}
	if !waitTimeout(&ewg, 2*opTimeout) {
		fail(errors.New("hold: echoes stuck"))
	}
	echoTime := time.Since(start)
	verdict := "all held"
	if echoed.Load() != int64(n) || upAtServer != int64(n) {
		verdict = "NOT all held"
	}
	summary := fmt.Sprintf("%s: %d/%d established in %v (%.0f/s), %d open at the echo server at once, %d echoed in %v",
		verdict, int64(n)-failed.Load(), n, established.Round(time.Millisecond),
		float64(n)/established.Seconds(), upAtServer, echoed.Load(), echoTime.Round(time.Millisecond))
	fmt.Printf("  %-18s %s\n", name, summary)
	res.established, res.echo = established, echoTime
	res.notes = append(res.notes, name+": "+summary)
	if err, _ := firstErr.Load().(error); err != nil {
		fmt.Printf("  %-18s first error: %v\n", "", err)
		res.notes = append(res.notes, fmt.Sprintf("%s: first error: %v", name, err))
	}
	return res
}

// raiseNoFile raises RLIMIT_NOFILE's soft limit to the hard one, and the
// hard one to want when it is lower and the process may (root); it
// returns the soft limit in force.
func raiseNoFile(want uint64) uint64 {
	var lim syscall.Rlimit
	check(syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Max < want {
		up := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return want
		}
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "proxy bench: raising RLIMIT_NOFILE:", err)
		}
		check(syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	}
	return lim.Cur
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "proxy bench:", err)
	os.Exit(1)
}
