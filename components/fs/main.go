package fs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
)

// The descriptors the launcher hands the fs process.
const (
	fdBootstrap = 3 // the Bootstrap as JSON, then end of file
	fdListener  = 4 // the listening Unix socket fs serves on
	fdRoot      = 5 // the workspace: an O_PATH directory descriptor (a detached idmapped clone)
	// Optional: a second listening socket, the TCP listener the launcher
	// made in the agent's network namespace. fs serves it the same way.
	fdAgentListener = 6
)

// maxBootstrap bounds what fs reads from its bootstrap pipe.
const maxBootstrap = 1 << 20

// landlockRoot is the path of the Landlock rule that lets fs write
// beneath its root descriptor. The trailing "/." matters: the launcher
// opens a rule's path with O_NOFOLLOW, and "/proc/self/fd/5" opened so
// is the magic link itself (a procfs symlink inode), whose rule grants
// nothing beneath the workspace; "/proc/self/fd/5/." follows the link in
// the middle of the path and ends on the directory.
var landlockRoot = "/proc/self/fd/" + strconv.Itoa(fdRoot) + "/."

// Bootstrap is everything the launcher hands fs, over a pipe: its
// credential and the session CA, the uids that may connect, and the
// workspace-relative paths protected beyond the built-in ones.
type Bootstrap struct {
	CAPEM   []byte `json:"ca_pem"`
	CertPEM []byte `json:"cert_pem"`
	KeyPEM  []byte `json:"key_pem"`
	// Peers are the uids whose processes may connect at all (SO_PEERCRED,
	// before TLS); empty: the socket's mode and mutual TLS alone.
	Peers []uint32 `json:"peers"`
	// Protected are workspace-relative paths (the policy file, the vault,
	// the session directory, the backup store when they lie inside the
	// workspace, and the policy's own): no mutation touches them or what
	// is beneath them.
	Protected []string `json:"protected"`
}

// Main is the fs process. It reads its bootstrap, takes its listener and
// its root descriptor, confines itself (files beneath the root only, no
// new sockets, no exec) and serves until it is killed. It returns an
// exit status only when it could not start.
func Main() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "fs")
	if err := serve(log); err != nil {
		log.Error("fs stopped", "error", err)
		return 1
	}
	return 0
}

func serve(log *slog.Logger) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	// The Go runtime takes the lowest free descriptors for itself, so
	// "open" proves nothing: the launcher's are a pipe, a listening
	// socket and a directory.
	if !isPipe(fdBootstrap) || !isListening(fdListener) || !isDir(fdRoot) {
		return errors.New("fs runs only as a component the launcher starts (no bootstrap pipe, listening socket and workspace directory on descriptors 3, 4 and 5)")
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
	leaf, err := pki.ParseLeaf(b.CAPEM, b.CertPEM, b.KeyPEM, pki.FS)
	clear(b.KeyPEM)
	if err != nil {
		return err
	}
	root, err := NewRoot(fdRoot, b.Protected)
	if err != nil {
		return err
	}
	defer root.Close()
	ln, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	if _, ok := ln.(*net.UnixListener); !ok {
		return fmt.Errorf("listener: a %T, want a Unix socket", ln)
	}
	var agentLn net.Listener
	if isListening(fdAgentListener) {
		af := os.NewFile(fdAgentListener, "agent listener")
		agentLn, err = net.FileListener(af)
		af.Close()
		if err != nil {
			return fmt.Errorf("agent listener: %w", err)
		}
	}
	// From here fs reaches files beneath its root only, makes no socket
	// and runs no program.
	if err := launcher.ConfineComponent(confinement(landlockRoot)); err != nil {
		return err
	}
	// A confinement that leaves fs unable to resolve paths would answer
	// every request with a denial: refuse to start instead.
	if _, err := root.Stat("."); err != nil {
		return fmt.Errorf("confined, fs cannot resolve its root: %w", err)
	}
	srv := rpc.NewServer(leaf, log)
	if len(b.Peers) > 0 {
		srv.AllowPeers(b.Peers...)
	}
	Register(srv, root)
	log.Info("serving", "protected", len(b.Protected), "agent_listener", agentLn != nil)
	if agentLn == nil {
		return srv.Serve(ln)
	}
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(agentLn) }()
	go func() { errs <- srv.Serve(ln) }()
	return <-errs
}

func isPipe(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

func isListening(fd int) bool {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	return err == nil && v == 1
}

func isDir(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// confinement is fs's: files beneath its root (named by rootPath), no
// sockets, no programs, and openat2 kept for its resolution.
func confinement(rootPath string) launcher.ComponentConfinement {
	return launcher.ComponentConfinement{Write: []string{rootPath}, Openat2: true}
}
