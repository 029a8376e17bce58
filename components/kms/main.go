package kms

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// The descriptors the launcher hands the kms process.
const (
	fdBootstrap = 3 // the Bootstrap as JSON, then end of file
	fdListener  = 4 // the listening Unix socket kms serves on
)

// maxBootstrap bounds what kms reads from its bootstrap pipe.
const maxBootstrap = 16 << 20

// Bootstrap is everything the launcher hands kms, over a pipe: its
// credential and the session CA, the policy's [[secrets]] rules, and the
// vault's secrets, unsealed.
type Bootstrap struct {
	CAPEM   []byte          `json:"ca_pem"`
	CertPEM []byte          `json:"cert_pem"`
	KeyPEM  []byte          `json:"key_pem"`
	Rules   []policy.Secret `json:"rules"`
	Secrets []Secret        `json:"secrets"`
	// Peers are the uids whose processes may connect at all (SO_PEERCRED,
	// before TLS); empty: the socket's mode and mutual TLS alone.
	Peers []uint32 `json:"peers"`
}

// Main is the kms process. It reads its bootstrap, takes its listener,
// keeps the secrets the rules name in locked memory, confines itself (no
// files, no new sockets, no exec) and serves until it is killed. It
// returns an exit status only when it could not start.
func Main() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "kms")
	if err := serve(log); err != nil {
		log.Error("kms stopped", "error", err)
		return 1
	}
	return 0
}

func serve(log *slog.Logger) error {
	// Not dumpable before the secrets are read, not only once confined.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	// The Go runtime takes the lowest free descriptors for itself (its
	// poller), so "fd 3 is open" proves nothing: the launcher's are a pipe
	// and a listening socket.
	if !isPipe(fdBootstrap) || !isListening(fdListener) {
		return errors.New("kms runs only as a component the launcher starts (no bootstrap pipe and listening socket on descriptors 3 and 4)")
	}
	f := os.NewFile(fdBootstrap, "bootstrap")
	lf := os.NewFile(fdListener, "listener")
	raw, err := io.ReadAll(io.LimitReader(f, maxBootstrap+1))
	f.Close()
	if err != nil || len(raw) > maxBootstrap {
		return fmt.Errorf("read the bootstrap: %v (or larger than %d bytes)", err, maxBootstrap)
	}
	var b Bootstrap
	err = json.Unmarshal(raw, &b)
	clear(raw)
	if err != nil {
		return fmt.Errorf("decode the bootstrap: %w", err)
	}
	leaf, err := pki.ParseLeaf(b.CAPEM, b.CertPEM, b.KeyPEM, pki.KMS)
	clear(b.KeyPEM)
	if err != nil {
		return err
	}
	store, err := NewStore(b.Secrets, b.Rules)
	for _, s := range b.Secrets {
		clear(s.Value)
	}
	if err != nil {
		return err
	}
	defer store.Close()
	ln, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	if _, ok := ln.(*net.UnixListener); !ok {
		return fmt.Errorf("listener: a %T, want a Unix socket", ln)
	}
	// Everything kms will ever hold is open: from here it has no files,
	// makes no sockets and runs no program.
	if err := launcher.ConfineComponent(launcher.ComponentConfinement{}); err != nil {
		return err
	}
	srv := rpc.NewServer(leaf, log)
	if len(b.Peers) > 0 {
		srv.AllowPeers(b.Peers...)
	}
	Register(srv, store)
	log.Info("serving", "secrets", len(store.spans), "rules", len(b.Rules))
	return srv.Serve(ln)
}

func isPipe(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

func isListening(fd int) bool {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	return err == nil && v == 1
}
