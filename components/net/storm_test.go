package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	stormTotal   = 10000
	stormBatch   = 1000
	stormWorkers = 64
	stormGCOff   = stormTotal - 3000 // connections made without a GC after them
)

// pxOpenFDs counts this process's open descriptors.
// Pipes are not counted: tunnels splice, and the runtime keeps the
// pipes splice goes through in a pool it empties over garbage
// collections (which this test holds back on purpose); the proxy makes
// no pipe of its own, so a leak of its sockets still shows.
func pxOpenFDs(t testing.TB) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting descriptors: %v", err)
	}
	n := 0
	for _, e := range es {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && !strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}

// stormFDLimit raises the soft descriptor limit to the hard one and
// returns the batch size it allows.
func stormFDLimit(t *testing.T) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Logf("raising RLIMIT_NOFILE to %d: %v", lim.Max, err)
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
	// Per client connection, at most: the client's end, the proxy's end,
	// and for a tunnel or a forward the proxy's upstream and the
	// upstream server's end.
	room := int(lim.Cur) - pxOpenFDs(t) - 256
	batch := min(stormBatch, room/4)
	if batch < 100 {
		t.Skipf("RLIMIT_NOFILE is %d (hard %d): too low to hold even 100 connections of the storm at once", lim.Cur, lim.Max)
	}
	return batch
}

// TestProxyStorm opens 10,000 client connections in batches, each batch
// held open at once: idle ones, garbage, headers cut short, denied
// CONNECTs, tunnels, forwards, and ones that hang up at once. When all
// are closed, the proxy's goroutines and descriptors are back to what
// they were.
func TestProxyStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("the storm is long; not in -short")
	}
	batch := stormFDLimit(t)

	echo := pxEcho(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "web")
	}))
	t.Cleanup(web.Close)
	wap := netip.MustParseAddrPort(web.Listener.Addr().String())
	dec := &pxDecider{hosts: map[string]string{"denied.test": "network.deny[0]"}}
	res := &pxResolver{names: map[string][]netip.Addr{"echo.test": {pxLoopback}, "web.test": {pxLoopback}}}
	h := pxStart(t, dec, res, func(p *Proxy) {
		p.HeaderTimeout = 5 * time.Second
		p.TunnelIdle = 10 * time.Second
	})
	// The decider and dialer record every call: make them forget, so the
	// storm's bookkeeping does not count as growth.
	forget := func() {
		dec.mu.Lock()
		dec.hostCalls, dec.addrCalls = nil, nil
		dec.mu.Unlock()
		res.mu.Lock()
		res.calls = nil
		res.mu.Unlock()
		h.dial.mu.Lock()
		h.dial.dials = nil
		h.dial.mu.Unlock()
	}

	connectEcho := "CONNECT echo.test:" + pxPort(echo) + " HTTP/1.1\r\nHost: echo.test\r\n\r\n"
	getWeb := "GET http://web.test:" + pxPort(wap) + "/ HTTP/1.1\r\nHost: web.test\r\nConnection: close\r\n\r\n"
	denied := "CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test\r\n\r\n"

	// act does kind k's part on an open connection and reports whether
	// the proxy behaved as it should.
	act := func(c net.Conn, k int) error {
		switch k % 7 {
		case 0: // idle
			return nil
		case 1: // garbage
			io.WriteString(c, "\x00\xff\x16\x03 garbage garbage\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return fmt.Errorf("garbage: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				return fmt.Errorf("garbage: status %d", resp.StatusCode)
			}
		case 2: // headers cut short
			io.WriteString(c, "GET http://web.test/ HTTP/1.1\r\nHost: we")
		case 3: // denied
			io.WriteString(c, denied)
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
			if err != nil {
				return fmt.Errorf("denied: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				return fmt.Errorf("denied: status %d", resp.StatusCode)
			}
		case 4: // tunnel
			io.WriteString(c, connectEcho+";") // not a word: that could begin an HTTP request, refused in a tunnel
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil {
				return fmt.Errorf("tunnel: %w", err)
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("tunnel: status %d", resp.StatusCode)
			}
			if b, err := br.ReadByte(); err != nil || b != ';' {
				return fmt.Errorf("tunnel: echo %q %v", b, err)
			}
		case 5: // forward
			io.WriteString(c, getWeb)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return fmt.Errorf("forward: %w", err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(b) != "web" {
				return fmt.Errorf("forward: status %d body %q", resp.StatusCode, b)
			}
		case 6: // hang up at once
			c.Close()
		}
		return nil
	}

	// Warm up (lazily made descriptors and goroutines: the poller, the
	// servers' first connections), then take the baseline.
	for k := 0; k < 7; k++ {
		c := h.conn(t)
		if err := act(c, k); err != nil {
			t.Fatalf("warm-up: %v", err)
		}
		c.Close()
	}
	pxWaitUntil(t, func() bool { return false }, 300*time.Millisecond)
	forget()
	runtime.GC()
	baseG, baseFD := runtime.NumGoroutine(), pxOpenFDs(t)

	var failures atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	for done := 0; done < stormTotal; done += batch {
		n := min(batch, stormTotal-done)
		if done < stormGCOff && done+batch >= stormGCOff {
			// From here on no collection runs until the count is
			// taken: a connection dropped without Close would otherwise
			// be closed by its finalizer and its leak hidden. (Not for
			// the whole storm, to bound the heap.)
			runtime.GC()
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
		}
		deadline := time.Now().Add(20 * time.Second)
		conns := make([]net.Conn, n)
		next := atomic.Int64{}
		var wg sync.WaitGroup
		for w := 0; w < stormWorkers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					d := net.Dialer{Deadline: deadline}
					c, err := d.Dial("tcp", h.addr)
					if err != nil {
						failures.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Errorf("dial: %w", err))
						continue
					}
					c.SetDeadline(deadline)
					conns[i] = c
					if err := act(c, done+i); err != nil {
						failures.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
				}
			}()
		}
		wg.Wait()
		if time.Now().After(deadline) {
			t.Fatalf("batch at %d did not finish within its deadline", done)
		}
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}
	t.Logf("%d connections in batches of %d in %v; %d failed", stormTotal, batch, time.Since(start).Round(time.Millisecond), failures.Load())
	if f := failures.Load(); f > 0 {
		t.Errorf("%d connections were not answered as they should be; first: %v", f, firstErr.Load())
	}

	forget()
	var g, fds int
	if !pxWaitUntil(t, func() bool {
		forget()
		// No runtime.GC here: a connection dropped without Close would be
		// closed by its finalizer and hide the leak.
		g, fds = runtime.NumGoroutine(), pxOpenFDs(t)
		return g <= baseG+5 && fds <= baseFD
	}, 15*time.Second) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("after the storm: %d goroutines (baseline %d), %d descriptors (baseline %d)\ndescriptors: %v\n%s", g, baseG, fds, baseFD, pxFDKinds(), buf)
	}
	t.Logf("after the storm: %d goroutines (baseline %d), %d descriptors (baseline %d)", g, baseG, fds, baseFD)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MiB, sys %d MiB, gcs %d", ms.HeapAlloc>>20, ms.Sys>>20, ms.NumGC)

	// And the proxy still serves.
	c := h.conn(t)
	if err := act(c, 4); err != nil {
		t.Fatalf("after the storm: %v", err)
	}
}

// pxWaitUntil polls ok every 50ms until it holds or d has passed.
func pxWaitUntil(t testing.TB, ok func() bool, d time.Duration) bool {
	t.Helper()
	end := time.Now().Add(d)
	for {
		if ok() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pxFDKinds counts this process's descriptors by what they are ("socket",
// "pipe", a file's name).
func pxFDKinds() map[string]int {
	kinds := map[string]int{}
	es, _ := os.ReadDir("/proc/self/fd")
	for _, e := range es {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		kinds[pxFDKindRE.ReplaceAllString(l, "")]++
	}
	return kinds
}

var pxFDKindRE = regexp.MustCompile(`:\[[0-9]+\]$`)
