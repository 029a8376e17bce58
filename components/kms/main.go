package kms

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// fdNet is, when the session has net, kms's end of a socketpair whose
// other end net holds.
const fdNet = 5

// maxBootstrap bounds what kms reads from its bootstrap pipe.
const maxBootstrap = 16 << 20

// Bootstrap is everything the launcher hands kms, over a pipe: its
// credential and the session CA, the policy's [[secrets]] rules, and the
// vault's secrets, unsealed.
type Bootstrap struct {
	boot.Credential
	Rules   []policy.Secret `json:"rules"`
	Secrets []Secret        `json:"secrets"`
}

// Main is the kms process. It reads its bootstrap, takes its listener,
// keeps the secrets the rules name in locked memory, confines itself (no
// files, no new sockets, no exec) and serves until it is killed. It
// returns an exit status only when it could not start.
func Main() int {
	return boot.Run(pki.KMS, serve)
}

func serve(log *slog.Logger) error {
	// Looked at first: the Go runtime takes free descriptors for itself.
	hasNet := boot.IsSocket(fdNet)
	// Not dumpable before the secrets are read, not only once confined.
	var b Bootstrap
	ln, err := boot.Start(pki.KMS, maxBootstrap, &b)
	if err != nil {
		return err
	}
	srv, err := b.Server(pki.KMS, log)
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
	// Everything kms will ever hold is open: from here it has no files,
	// makes no sockets and runs no program.
	if err := launcher.ConfineComponent(launcher.ComponentConfinement{}); err != nil {
		return err
	}
	Register(srv, store)
	// net's one way in: it opens no sockets, so the launcher handed each
	// of them an end of a socketpair.
	if hasNet {
		f := os.NewFile(fdNet, "net")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("net's connection: %w", err)
		}
		if err := srv.ServeConn(c); err != nil {
			return err
		}
	}
	log.Info("serving", "secrets", len(store.spans), "rules", len(b.Rules))
	return srv.Serve(ln)
}
