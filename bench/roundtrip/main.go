// Command roundtrip measures the agent's fs round trip: a read of a
// 1 KiB file from the agent's network namespace, through the listener
// made there and handed to the component, over mutual TLS and the rpc
// protocol, answered by fs's own operations — next to a plain Unix-socket
// echo of the same payload, to an echo over mutual TLS with the same
// certificates (the floor of any design with TLS), and to the same read
// over the component's Unix socket (what the agent's TCP path adds is
// the difference). It
// prints medians, p90s and the ratio to the echo; with -json FILE it also
// writes them as a bench/report Report to FILE (one row per path, median
// and p90 in µs, the ratio in its notes). It needs root (it makes a
// network namespace).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/components/bridge"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/nstest"
	"golang.org/x/sys/unix"
)

func main() {
	n := flag.Int("n", 2000, "round trips per path")
	size := flag.Int("size", 1024, "payload bytes")
	out := flag.String("json", "", "also write the results to this file, as a bench/report JSON report")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "roundtrip: needs root (it makes a network namespace)")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "pinfold-roundtrip-")
	check(err)
	defer os.RemoveAll(dir)
	payload := make([]byte, *size)
	rand.Read(payload)
	// The component logs every answer, a line to a file (its stderr, in
	// the session directory): so does the bench's.
	logFile, err := os.Create(filepath.Join(dir, "fs.log"))
	check(err)
	defer logFile.Close()
	logged := slog.New(slog.NewTextHandler(logFile, nil)).With("component", "fs")

	// Plain: a Unix-socket echo, one connection.
	plainSock := filepath.Join(dir, "plain.sock")
	pl, err := net.Listen("unix", plainSock)
	check(err)
	go echo(pl)
	pc, err := net.Dial("unix", plainSock)
	check(err)
	buf := make([]byte, *size)
	plain := measure(*n, func() {
		_, err := pc.Write(payload)
		check(err)
		_, err = io.ReadFull(pc, buf)
		check(err)
	})
	if !bytes.Equal(buf, payload) {
		panic("plain echo changed the payload")
	}

	// The fs component's own server (its operations over a Root, as the
	// fs process serves them), asked to read a file holding the payload.
	sess, err := pki.NewSession("bench", time.Now())
	check(err)
	fsLeaf, err := sess.Issue(pki.FS)
	check(err)
	agentLeaf, err := sess.Issue(pki.Agent)
	check(err)
	srv := rpc.NewServer(fsLeaf, logged)
	wsDir := filepath.Join(dir, "ws")
	check(os.Mkdir(wsDir, 0o755))
	check(os.WriteFile(filepath.Join(wsDir, "payload"), payload, 0o644))
	// As the launcher hands it to fs: a detached clone of the workspace's
	// mount, nodev, nosuid and noexec (components/session; the idmap it
	// also has costs nothing per request).
	wfd, err := unix.Open(wsDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	check(err)
	tree, err := unix.OpenTree(wfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	check(err)
	unix.Close(wfd)
	check(unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}))
	root, err := fs.NewRoot(tree, nil)
	check(err)
	fs.Register(srv, root)
	compSock := filepath.Join(dir, "fs.sock")
	cl, err := net.Listen("unix", compSock)
	check(err)
	go srv.Serve(cl)
	// The floor of any design with mutual TLS: an echo of the payload
	// over TLS 1.3 with the same certificates, nothing else.
	scfg, err := pki.ServerConfig(fsLeaf, nil)
	check(err)
	ccfg, err := pki.ClientConfig(agentLeaf, pki.FS, nil)
	check(err)
	tlsSock := filepath.Join(dir, "tls.sock")
	tl, err := tls.Listen("unix", tlsSock, scfg)
	check(err)
	go echo(tl)
	tc, err := tls.Dial("unix", tlsSock, ccfg)
	check(err)
	tlsEcho := measure(*n, func() {
		_, err := tc.Write(payload)
		check(err)
		_, err = io.ReadFull(tc, buf)
		check(err)
	})
	ns, err := nstest.NewLoopback()
	check(err)
	defer ns.Close()
	ctx := context.Background()
	var got []byte
	// The same rpc over mutual TLS, straight to the Unix socket: what the
	// agent's TCP path adds is the difference.
	direct, err := rpc.NewClient(agentLeaf, pki.FS, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", compSock)
	}, nil)
	check(err)
	unbridged := measure(*n, func() {
		r, d, err := fs.NewClient(direct).Read(ctx, "payload", 0, 0)
		check(err)
		if !d.Allowed {
			panic("fs read denied: " + d.Detail)
		}
		got = r.Data
	})
	// The agent's path: a listener made in its namespace and handed to
	// the component, which accepts on it (components/bridge).
	hl, err := bridge.ListenIn(ns, "127.0.0.1:0")
	check(err)
	go srv.Serve(hl)
	haddr := hl.Addr().String()
	handed, err := rpc.NewClient(agentLeaf, pki.FS, func(ctx context.Context) (c net.Conn, err error) {
		nerr := nstest.In(ns, func() error { c, err = (&net.Dialer{}).DialContext(ctx, "tcp4", haddr); return nil })
		if nerr != nil {
			return nil, nerr
		}
		return c, err
	}, nil)
	check(err)
	agent := measure(*n, func() {
		r, d, err := fs.NewClient(handed).Read(ctx, "payload", 0, 0)
		check(err)
		if !d.Allowed {
			panic("fs read denied: " + d.Detail)
		}
		got = r.Data
	})
	if !bytes.Equal(got, payload) {
		panic("the component's echo changed the payload")
	}
	fmt.Printf("round trip of %d bytes, %d each (median, p90)\n", *size, *n)
	fmt.Printf("plain unix echo            %8.1fµs %8.1fµs\n", plain.med, plain.p90)
	fmt.Printf("mutual TLS echo            %8.1fµs %8.1fµs\n", tlsEcho.med, tlsEcho.p90)
	fmt.Printf("fs read over the socket    %8.1fµs %8.1fµs\n", unbridged.med, unbridged.p90)
	fmt.Printf("agent → its listener → fs  %8.1fµs %8.1fµs\n", agent.med, agent.p90)
	ratio := fmt.Sprintf("agent fs read / plain echo: %.1f (target ≤ 2)", agent.med/plain.med)
	fmt.Println(ratio)
	if *out != "" {
		r := report.NewReport("roundtrip", fmt.Sprintf("Round trip of a %d-byte read: a plain Unix-socket echo, the fs component's read over its socket, and the agent's path through its listener and mutual TLS.", *size), "µs", report.Lower)
		r.Add("plain unix echo", plain.med, plain.p90, *n)
		r.Add("mutual TLS echo", tlsEcho.med, tlsEcho.p90, *n)
		r.Add("fs read over the socket", unbridged.med, unbridged.p90, *n)
		r.Add("agent → its listener → fs", agent.med, agent.p90, *n)
		r.Notes = []string{ratio}
		check(r.WriteFile(*out))
	}
}

// echo copies back what each connection to l sends.
func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go io.Copy(c, c)
	}
}

type stats struct{ med, p90 float64 }

// measure times fn n times after a warm-up of n/10 (which also opens the
// connection and does the TLS handshake once).
func measure(n int, fn func()) stats {
	for range n / 10 {
		fn()
	}
	d := make([]float64, n)
	for i := range d {
		start := time.Now()
		fn()
		d[i] = float64(time.Since(start).Nanoseconds()) / 1e3
	}
	slices.Sort(d)
	return stats{d[n/2], d[n*9/10]}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "roundtrip:", err)
		os.Exit(1)
	}
}
