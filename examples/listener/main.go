// Command listener is the demo's stand-in for a service on the host: it
// listens on 127.0.0.1, prints its port, and accepts connections until its
// standard input closes or a minute passes. scripts/demo uses it to show
// that a confined agent cannot reach the host's loopback.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
}
