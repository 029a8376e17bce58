// Package boot is the start every component process shares: it makes
// itself not dumpable before reading anything, checks that the
// descriptors the launcher hands it are what they must be (the Go runtime
// takes the lowest free descriptors for itself, so "open" proves
// nothing), reads its bootstrap from the pipe on fd 3 (bounded; the raw
// bytes wiped), takes its listening Unix socket on fd 4, and turns its
// credential into a session leaf and an rpc server.
package boot

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
)

// The descriptors every component gets; a component's own start at 5.
const (
	FDBootstrap = 3 // the bootstrap as JSON, then end of file
	FDListener  = 4 // the listening Unix socket in the session directory
)

// Credential is a component's part of the session, as every bootstrap
// carries it (embedded: its fields sit at the bootstrap's top level).
type Credential struct {
	CAPEM   []byte `json:"ca_pem"`
	CertPEM []byte `json:"cert_pem"`
	KeyPEM  []byte `json:"key_pem"`
	// Peers are the uids whose processes may connect to the Unix socket
	// at all (SO_PEERCRED, before TLS); empty: mutual TLS alone.
	Peers []uint32 `json:"peers"`
}

// Start begins the component role: not dumpable; fd 3 a pipe and fd 4 a
// listening socket (else it refuses, naming what is missing); the
// bootstrap (at most max bytes) decoded into b; the Unix listener
// returned.
func Start(role pki.Role, max int, b any) (net.Listener, error) {
	if !IsListening(FDListener) {
		unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		return nil, fmt.Errorf("%s runs only as a component the launcher starts (no bootstrap pipe and listening socket on descriptors 3 and 4)", role)
	}
	if err := Read(role, max, b); err != nil {
		return nil, err
	}
	lf := os.NewFile(FDListener, "listener")
	ln, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return nil, fmt.Errorf("listener: %w", err)
	}
	if _, ok := ln.(*net.UnixListener); !ok {
		ln.Close()
		return nil, fmt.Errorf("listener: a %T, want a Unix socket", ln)
	}
	return ln, nil
}

// Read is Start for a component without a session socket (net beside a
// wrapper-mode agent): not dumpable, then the bootstrap from the pipe on
// fd 3 decoded into b.
func Read(role pki.Role, max int, b any) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	if !IsPipe(FDBootstrap) {
		return fmt.Errorf("%s runs only as a component the launcher starts (no bootstrap pipe on descriptor 3)", role)
	}
	f := os.NewFile(FDBootstrap, "bootstrap")
	raw, err := readWiping(f, max+1)
	f.Close()
	defer clear(raw)
	if err != nil || len(raw) > max {
		return fmt.Errorf("read the bootstrap: %v (or larger than %d bytes)", err, max)
	}
	if err := json.Unmarshal(raw, b); err != nil {
		return fmt.Errorf("decode the bootstrap: %w", err)
	}
	return nil
}

// readWiping reads r to its end, at most limit bytes, into one buffer it
// grows itself, clearing each buffer it outgrows: io.ReadAll leaves the
// chunks it copied from on the heap, where the bootstrap's secrets would
// stay unwiped (a hunt found a vault's values in kms's heap so).
func readWiping(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(limit, 64<<10))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			bigger := make([]byte, len(buf), min(2*cap(buf), limit))
			copy(bigger, buf)
			clear(buf[:cap(buf)])
			buf = bigger
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// Server parses the credential as role's leaf (wiping the key's PEM) and
// returns an rpc server for it that admits the credential's peers.
func (c *Credential) Server(role pki.Role, log *slog.Logger) (*rpc.Server, error) {
	leaf, err := c.Leaf(role)
	if err != nil {
		return nil, err
	}
	return c.ServerFor(leaf, log), nil
}

// Leaf parses the credential as role's leaf, wiping the key's PEM (a
// component that also calls others serves and calls with it).
func (c *Credential) Leaf(role pki.Role) (*pki.Leaf, error) {
	leaf, err := pki.ParseLeaf(c.CAPEM, c.CertPEM, c.KeyPEM, role)
	clear(c.KeyPEM)
	return leaf, err
}

// ServerFor is an rpc server for leaf that admits the credential's peers.
func (c *Credential) ServerFor(leaf *pki.Leaf, log *slog.Logger) *rpc.Server {
	srv := rpc.NewServer(leaf, log)
	if len(c.Peers) > 0 {
		srv.AllowPeers(c.Peers...)
	}
	return srv
}

// IsPipe, IsListening, IsDir and IsSocket say what descriptor fd is.
func IsPipe(fd int) bool { return fdType(fd) == unix.S_IFIFO }

func IsListening(fd int) bool {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	return err == nil && v == 1
}

func IsDir(fd int) bool { return fdType(fd) == unix.S_IFDIR }

// IsSocket says whether fd is a socket (a connected one, for a
// socketpair's end).
func IsSocket(fd int) bool { return fdType(fd) == unix.S_IFSOCK && !IsListening(fd) }

func fdType(fd int) uint32 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Mode & unix.S_IFMT
}

// MaxLog bounds what a component writes to its log (its stderr, a file in
// the session directory on a tmpfs): an agent that floods a component
// with refused requests must not fill the host's /run.
const MaxLog = 32 << 20

// Run is a component process's main: serve with the role's log, and an
// exit status of 1, logged, when it could not start (0 otherwise: a
// component serves until it is killed).
func Run(role pki.Role, serve func(*slog.Logger) error) int {
	log := Logger(role)
	if err := serve(log); err != nil {
		log.Error(string(role)+" stopped", "error", err)
		return 1
	}
	return 0
}

// Logger is the component role's log: text on stderr, at most MaxLog
// bytes, then one line saying the rest was dropped.
func Logger(role pki.Role) *slog.Logger {
	return slog.New(slog.NewTextHandler(&cappedWriter{w: os.Stderr, left: MaxLog}, nil)).With("component", string(role))
}

// cappedWriter passes on whole writes while they fit, then drops them.
type cappedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	left int
	cut  bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case len(p) <= c.left:
		c.left -= len(p)
		return c.w.Write(p)
	case !c.cut:
		c.cut = true
		fmt.Fprintf(c.w, "log: over %d bytes: the rest of this component's log is dropped\n", MaxLog)
	}
	return len(p), nil // dropped, not failed: the component goes on
}
