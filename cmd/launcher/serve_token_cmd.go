package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pinfold/pinfold/gateway"
)

const serveTokenHelp = `Usage:
  launcher serve token add NAME [--cap host.execute]... [--tokens FILE]
  launcher serve token list [--json] [--tokens FILE]
  launcher serve token revoke NAME [--tokens FILE]

Owner tokens let a client use ` + "`launcher serve`" + `, the MCP-over-HTTP
gateway. The store keeps each token's name, capabilities, creation date
and the sha256 of its secret, never the secret. The default store is
$XDG_CONFIG_HOME/pinfold/serve-tokens.json
(~/.config/pinfold/serve-tokens.json); it must be a regular file of
yours, mode 0600, in a directory others cannot write. When the gateway's
policy reaches the store, that directory must hold nothing else but the
launcher's own files (the default vault): every change replaces the
store by rename, so sessions' sandboxes cover the whole directory.

add     makes a token and prints its secret (pft_...) on stdout, once:
        only its sha256 is stored, so it will not be shown again; keep it
        where the client reads it (when stdout will not take it, the
        token is revoked again and add fails). NAME is 1-64 of a-z, 0-9,
        '.', '_' and '-', starting with a letter or digit. --cap grants a
        capability (repeatable); the only one is host.execute. Without
        --cap the token carries none.
list    names, capabilities and dates; never secrets or hashes.
revoke  removes a token; the gateway refuses it at its next use, and
        ends its sessions within a second. A capability taken out of a
        token (the store edited by hand) ends its full-access sessions
        the same way.

Every change is made under a lock and written atomically: the old store
or the new one, never half of either. An unknown capability, a bad or
taken name, or an unknown name to revoke exits 120; a store file that is
refused or not valid exits 125.

` + exitCodesHelp

// capFlags collects --cap NAME.
type capFlags []string

func (c *capFlags) String() string     { return strings.Join(*c, ",") }
func (c *capFlags) Set(s string) error { *c = append(*c, s); return nil }
func (c *capFlags) repeatable()        {}

// serveToken is `launcher serve token …`; `launcher serve` dispatches here.
func (e env) serveToken(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, serveTokenHelp)
		return silentExit(exitUsage)
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "-help" {
		fmt.Fprint(e.stdout, serveTokenHelp)
		return nil
	}
	fset := flags("serve token " + sub)
	storePath := fset.String("tokens", "", "")
	var caps capFlags
	var asJSON *bool
	nargs := 0
	switch sub {
	case "add":
		fset.Var(&caps, "cap", "")
		nargs = 1
	case "revoke":
		nargs = 1
	case "list":
		asJSON = fset.Bool("json", false, "")
	default:
		return fail(exitUsage, "run `launcher serve token --help`", "unknown serve token command %q", sub)
	}
	rest, err := e.parse(fset, serveTokenHelp, args[1:], nargs)
	if err != nil {
		return err
	}
	path := *storePath
	if path == "" {
		if path, err = gateway.DefaultStorePath(); err != nil {
			return fail(exitUsage, "give --tokens FILE", "%v", err)
		}
	}
	store := gateway.Store{Path: path}
	switch sub {
	case "add":
		return e.addServeToken(store, rest[0], caps)
	case "revoke":
		if err := gateway.CheckName(rest[0]); err != nil {
			return fail(exitUsage, serveTokenNameHint, "%v", err)
		}
		if err := store.Revoke(rest[0]); errors.Is(err, gateway.ErrNotDurable) {
			fmt.Fprintf(e.stderr, "launcher: warning: %v\n", err)
		} else if err != nil {
			return tokenStoreError(err)
		}
		fmt.Fprintf(e.stderr, "launcher: token %q revoked from %s\n", rest[0], path)
		return nil
	default:
		return e.listServeTokens(store, *asJSON)
	}
}

const serveTokenNameHint = "a token name is 1-64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"

func (e env) addServeToken(store gateway.Store, name string, caps []string) error {
	if err := gateway.CheckName(name); err != nil {
		return fail(exitUsage, serveTokenNameHint, "%v", err)
	}
	if err := gateway.CheckCaps(caps); err != nil {
		return fail(exitUsage, "give --cap "+strings.Join(gateway.Capabilities, " or --cap "), "%v", err)
	}
	secret, err := store.Add(name, caps, time.Now())
	if errors.Is(err, gateway.ErrNotDurable) {
		fmt.Fprintf(e.stderr, "launcher: warning: %v\n", err)
	} else if err != nil {
		return tokenStoreError(err)
	}
	// The secret is nowhere else: when it cannot be written (stdout a
	// full disk, a closed pipe), a token nobody can present is revoked
	// again, not left in the store with a zero exit.
	if _, werr := fmt.Fprintln(e.stdout, secret); werr != nil {
		if rerr := store.Revoke(name); rerr != nil && !errors.Is(rerr, gateway.ErrNotDurable) {
			return fail(exitFailure, "revoke it: `launcher serve token revoke "+name+"`", "serve token add: the secret could not be written to stdout (%v), and the token %q could not be revoked: %v", werr, name, rerr)
		}
		return fail(exitFailure, "write stdout to a file or terminal that takes it", "serve token add: the secret could not be written to stdout (%v): the token %q was revoked again, nothing was added", werr, name)
	}
	fmt.Fprintf(e.stderr, "launcher: token %q added to %s; its secret, on stdout, will not be shown again\n", name, store.Path)
	return nil
}

func (e env) listServeTokens(store gateway.Store, asJSON bool) error {
	toks, err := store.List()
	if err != nil {
		return tokenStoreError(err)
	}
	// Names, capabilities and dates only: the hash is of no use to a
	// reader, and a listing gets pasted into places a store does not.
	type entry struct {
		Name    string   `json:"name"`
		Caps    []string `json:"caps"`
		Created string   `json:"created"`
	}
	list := []entry{}
	for _, t := range toks {
		list = append(list, entry{t.Name, t.Caps, t.Created})
	}
	if asJSON {
		return e.writeJSON(list)
	}
	for _, t := range list {
		caps := strings.Join(t.Caps, ",")
		if caps == "" {
			caps = "none"
		}
		fmt.Fprintf(e.stdout, "%s\tcaps %s\tcreated %s\n", t.Name, caps, t.Created)
	}
	return nil
}

// tokenStoreError gives the store's refusals their exit code and hint.
func tokenStoreError(err error) error {
	switch {
	case errors.Is(err, gateway.ErrTokenExists):
		return fail(exitUsage, "choose another name, or revoke the old token first (`launcher serve token revoke NAME`)", "%w", err)
	case errors.Is(err, gateway.ErrNoSuchToken):
		return fail(exitUsage, "`launcher serve token list` shows the names", "%w", err)
	case errors.Is(err, gateway.ErrNewerStore):
		// Not a store to move aside: the launcher that wrote it reads it.
		return fail(exitFailure, "upgrade the launcher, or use the one that wrote it", "%w", err)
	case errors.Is(err, gateway.ErrBadStore):
		return fail(exitFailure, "the store must be a regular file of yours, mode 0600, in a directory only you can write, as `launcher serve token add` writes it; fix it, or move it aside and add the tokens again", "%w", err)
	}
	return err
}
