package gateway

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// LimitConnections bounds the connections the gateway's server holds at
// once to max: each holds a descriptor and a goroutine until it ends,
// and without a bound a flood of idle connections took descriptors until
// none were left for the token store, session logs and sandboxes (every
// request then failed), at any rate the flood could open them. A
// connection over the bound never reaches the server: it is answered
// with a plain HTTP 503 when plain (a TLS client would take a plain
// answer for garbage, so it is only closed), by at most maxRefusing at
// once, each waiting at most refuseWait for the request it answers;
// beyond those it is closed at once. ln is the TCP listener itself,
// under any TLS one.
//
// One source (an IPv4 address, an IPv6 /64) holds at most perSource of
// them: otherwise a single client with no token filled every place, and
// owners were refused until it let go (a review). Many sources together
// still can; the bound is then what keeps the gateway's descriptors.
// Loopback is not a source: every local client comes from it, and a
// share of its own would only lower the bound for all of them at once.
func (g *Gateway) LimitConnections(ln net.Listener, max, perSource int, plain bool) net.Listener {
	return &connLimit{Listener: ln, slots: make(chan struct{}, max), refusing: make(chan struct{}, maxRefusing), plain: plain, g: g,
		perSource: perSource, sources: map[netip.Prefix]int{}}
}

// PerSource is the share of max connections one source may hold that
// serve uses: an eighth, so that eight busy clients fill it, one does not.
func PerSource(max int) int { return (max + 7) / 8 }

// A refused connection is answered after its request's first bytes came
// (an HTTP client takes an answer that comes before its request for
// garbage), or refuseWait; at most maxRefusing are answered at once.
const (
	refuseWait  = time.Second
	maxRefusing = 32
)

type connLimit struct {
	net.Listener
	slots    chan struct{} // one per connection held
	refusing chan struct{} // one per connection being refused
	plain    bool
	g        *Gateway

	perSource int
	mu        sync.Mutex
	sources   map[netip.Prefix]int // connections held, by source (sourceOf)
}

// sourceOf is the source a connection counts against: its IPv4 address,
// or its IPv6 address's /64 (what one host is usually given); an address
// that is not IP counts as one source of its own kind.
func sourceOf(c net.Conn) netip.Prefix {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// take counts c against its source, or says it is over its share.
func (l *connLimit) take(src netip.Prefix) bool {
	if src.Addr().IsLoopback() {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sources[src] >= l.perSource {
		return false
	}
	l.sources[src]++
	return true
}

func (l *connLimit) give(src netip.Prefix) {
	if src.Addr().IsLoopback() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sources[src]--; l.sources[src] <= 0 {
		delete(l.sources, src)
	}
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c)
		why := fmt.Sprintf("too many connections (the most is %d)", cap(l.slots))
		select {
		case l.slots <- struct{}{}:
			if l.take(src) {
				return &heldConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots; l.give(src) })}, nil
			}
			<-l.slots
			why = fmt.Sprintf("too many connections from your address (the most is %d)", l.perSource)
		default:
		}
		l.g.requestLog.Warn("connection refused: "+why, "source", src.String())
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				l.refuse(c, why)
			}()
		default:
			c.Close()
		}
	}
}

// refuse answers a connection over the bound and closes it; what the
// client sent is read first (without waiting, once the answer is out),
// so that the close is not a reset that loses the answer.
func (l *connLimit) refuse(c net.Conn, why string) {
	defer c.Close()
	if !l.plain {
		return
	}
	var buf [4096]byte
	c.SetDeadline(time.Now().Add(refuseWait))
	c.Read(buf[:])
	// The wait may have spent the deadline, which holds for writes too:
	// a client that sent nothing yet is still answered, not just closed.
	c.SetDeadline(time.Now().Add(refuseWait))
	body := "pinfold gateway: " + why + ": try again later\n"
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	tc.CloseWrite()
	// A read that does not wait (a passed deadline would not read at
	// all): what is already there, at most 64 KiB.
	if rc, err := tc.SyscallConn(); err == nil {
		rc.Read(func(fd uintptr) bool {
			for range 16 {
				if n, err := unix.Read(int(fd), buf[:]); n < len(buf) || err != nil {
					break
				}
			}
			return true
		})
	}
}

// heldConn gives its place back when it is closed (once, however many
// times the server closes it).
type heldConn struct {
	net.Conn
	release func()
}

func (c *heldConn) Close() error {
	defer c.release()
	return c.Conn.Close()
}

// CloseWrite is the TCP connection's: the server half-closes a
// connection before closing it, so that its last answer is not lost to a
// reset.
func (c *heldConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
