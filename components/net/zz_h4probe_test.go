package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// rawUp accepts one connection at a time, records what it read (until a
// pause) and answers with answer.
func rawUp(t *testing.T, answer string) (netip.AddrPort, chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var b strings.Builder
				buf := make([]byte, 4096)
				for {
					c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
					n, err := c.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						break
					}
				}
				got <- b.String()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				io.WriteString(c, answer)
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), got
}

func TestH4Probe(t *testing.T) {
	up, got := rawUp(t, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nRAWBYTES")
	res := &pxResolver{names: map[string][]netip.Addr{"a.test": {pxLoopback}}}
	h := pxStart(t, nil, res, nil)
	port := pxPort(up)
	for _, raw := range []string{
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET http://a.test:" + port + "/ HTTP/1.1\r\nHost: evil.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: x\r\n\r\n",
		"POST http://a.test:" + port + "/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3;ext=1\r\nabc\r\n0\r\n\r\n",
		"GET http://a.test:" + port + "/ HTTP/1.1\r\nHost: a.test\r\nX: a\r\n b\r\n\r\n",
		"GET http://a.test:" + port + "/ HTTP/1.1\nHost: a.test\nX: 1\n\n",
		"GET http://a.test:" + port + "/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"GET http://a.test:" + port + "/ HTTP/1.0\r\n\r\n",
		"GET http://a.test:" + port + "/ HTTP/2.0\r\n\r\n",
		"GET http://a.test:" + port + "/ HTTP/1.1\r\nHost: a.test\r\nTE: trailers\r\nConnection: te, Host\r\n\r\n",
	} {
		c := h.conn(t)
		io.WriteString(c, raw)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(bufio.NewReader(c))
		fmt.Printf("=== %q\n--- client got: %q\n", raw, b)
		select {
		case s := <-got:
			fmt.Printf("--- upstream got: %q\n", s)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
