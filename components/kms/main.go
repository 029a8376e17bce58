package kms

import (
	"encoding/base64"
	"encoding/json"
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

// Encode is b as JSON, each secret's value encoded by hand into the one
// buffer it returns, which the caller clears: encoding/json builds its
// output in a pooled buffer that would keep a copy of every value after
// the caller's own were cleared. (The credential's key, a key of this
// session alone, goes through encoding/json.)
func (b Bootstrap) Encode() ([]byte, error) {
	rest, err := json.Marshal(struct {
		boot.Credential
		Rules []policy.Secret `json:"rules"`
	}{b.Credential, b.Rules})
	if err != nil {
		return nil, err
	}
	names, added := make([][]byte, len(b.Secrets)), make([][]byte, len(b.Secrets))
	size := len(rest) + len(`,"secrets":[]`)
	for i, s := range b.Secrets {
		if names[i], err = json.Marshal(s.Name); err == nil {
			added[i], err = json.Marshal(s.Added)
		}
		if err != nil {
			return nil, err
		}
		size += len(`{"name":,"value":"","added":}`) + len(names[i]) + base64.StdEncoding.EncodedLen(len(s.Value)) + len(added[i])
		if i > 0 {
			size++ // the comma before it
		}
	}
	out := make([]byte, 0, size) // never grown: growing would leave a copy behind
	out = append(out, rest[:len(rest)-1]...)
	out = append(out, `,"secrets":[`...)
	for i, s := range b.Secrets {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"name":`...)
		out = append(out, names[i]...)
		out = append(out, `,"value":"`...)
		n := len(out)
		out = out[:n+base64.StdEncoding.EncodedLen(len(s.Value))]
		base64.StdEncoding.Encode(out[n:], s.Value)
		out = append(out, `","added":`...)
		out = append(out, added[i]...)
		out = append(out, '}')
	}
	return append(out, "]}"...), nil
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
