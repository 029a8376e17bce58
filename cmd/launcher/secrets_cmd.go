package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/kms"
)

const secretsHelp = `Usage:
  launcher secrets add NAME [--vault FILE] [--key-file FILE]
  launcher secrets list [--json] [--vault FILE] [--key-file FILE]
  launcher secrets rm NAME [--vault FILE] [--key-file FILE]
  launcher secrets rekey [--vault FILE] [--key-file FILE] [--new-key-file FILE]

The vault holds the secrets that component mode's kms releases to the
net component for [[secrets]] rules; the agent never sees them. It is
sealed with XChaCha20-Poly1305, under a key from a passphrase (argon2id,
asked on the terminal without echo) or from a key file of at least 32
random bytes (--key-file; mode 0600). The default vault is
$XDG_CONFIG_HOME/pinfold/vault (~/.config/pinfold/vault).

add    reads the value from stdin (one trailing newline, LF or CR LF,
       dropped), or from the terminal without echo (under 4095 bytes:
       the terminal cuts a longer line, so it is refused). A value is sent in
       an HTTP header: a control character in it (but a tab) is refused,
       and so is a space or tab at either end (a header drops them).
       The first add makes the vault.
list   names and dates, never values.
rm     removes one secret.
rekey  seals the vault under a new passphrase or --new-key-file.

Every change is written atomically: the old vault or the new one, never
half of either. A bad or taken name, or one rm does not find, exits 120.

` + exitCodesHelp

func (e env) secrets(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, secretsHelp)
		return silentExit(exitUsage)
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "-help" {
		fmt.Fprint(e.stdout, secretsHelp)
		return nil
	}
	fset := flags("secrets " + sub)
	vaultPath := fset.String("vault", "", "")
	keyFile := fset.String("key-file", "", "")
	var newKeyFile *string
	var asJSON *bool
	nargs := 0
	switch sub {
	case "add", "rm":
		nargs = 1
	case "list":
		asJSON = fset.Bool("json", false, "")
	case "rekey":
		newKeyFile = fset.String("new-key-file", "", "")
	default:
		return fail(exitUsage, "run `launcher secrets --help`", "unknown secrets command %q", sub)
	}
	rest, err := e.parse(fset, secretsHelp, args[1:], nargs)
	if err != nil {
		return err
	}
	// A name no secret can have is said at once: before the lock, the
	// passphrase and the value are asked for.
	if sub == "add" || sub == "rm" {
		if err := kms.CheckName(rest[0]); err != nil {
			return fail(exitUsage, "a secret's name is a lower-case letter, then lower-case letters, digits, '_' or '-', at most 64 (as the policy's [[secrets]] names it)", "secrets %s: %v", sub, err)
		}
	}
	path := *vaultPath
	if path == "" {
		if path, err = kms.DefaultPath(); err != nil {
			return err
		}
	}
	// A name ending in '/', "." or ".." is a directory's: the first add
	// made it (the lock goes in the directory the name's last part is
	// taken to be in) before refusing it as not a regular file.
	if b := filepath.Base(path); strings.HasSuffix(path, "/") || b == "." || b == ".." {
		return fail(exitUsage, "name the vault file, e.g. --vault DIR/vault", "secrets: --vault %s names a directory, not a vault file", path)
	}
	tty := openTerminal()
	if tty != nil {
		defer tty.Close()
	}
	if err := guardMemory(); err != nil {
		return err
	}
	// One change at a time: read, change and write under the vault's
	// lock. list changes nothing, and the vault is replaced whole by a
	// rename: it reads without the lock (so without writing beside it).
	// A vault refused (a FIFO, a directory, a device, a loose mode) is
	// said before the lock, which would make a .lock file beside it; and
	// only add makes a vault: rm or rekey of one that is not there (a
	// mistyped --vault) is said before the lock makes its directory.
	if sub != "list" {
		if _, err := kms.ReadFile(path); err != nil && !(sub == "add" && errors.Is(err, kms.ErrNoVault)) {
			return err
		}
	}
	// So is a key file: one refused (a typo, a loose mode) must not
	// leave the first add's directory and .lock file made.
	var key kms.Key
	if *keyFile != "" {
		if key, err = kms.ReadKeyFile(*keyFile); err != nil {
			return err
		}
	}
	// A new key file that is the vault itself (or another hard link to
	// it) would seal the vault under its own old bytes, which the new
	// vault then replaces: every secret would be lost.
	if newKeyFile != nil && *newKeyFile != "" {
		if a, err := os.Stat(*newKeyFile); err == nil {
			if b, err := os.Stat(path); err == nil && os.SameFile(a, b) {
				return fail(exitUsage, "keep the key file apart from the vault, e.g. head -c 32 /dev/urandom > KEY; chmod 600 KEY", "secrets rekey: --new-key-file %s is the vault itself: the vault would be sealed under bytes its rewrite destroys", *newKeyFile)
			}
		}
	}
	if sub != "list" {
		unlock, err := kms.Lock(path, func() {
			fmt.Fprintf(e.stderr, "launcher: waiting for the lock of the vault %s: another `launcher secrets` is changing it (and may be at a prompt)\n", path)
		})
		if err != nil {
			return err
		}
		defer unlock()
	}
	data, err := kms.ReadFile(path)
	creating := errors.Is(err, kms.ErrNoVault) && sub == "add"
	if err != nil && !creating {
		return err
	}
	// What the header says comes before any prompt: a newer or damaged
	// vault, or one sealed with a key file, is said so at once.
	if !creating {
		pass, err := kms.NeedsPassphrase(data)
		if err != nil {
			return err
		}
		if !pass && *keyFile == "" {
			return fail(exitUsage, "give --key-file FILE", "secrets: the vault %s is sealed with a key file", path)
		}
	}
	if *keyFile == "" {
		if key, err = e.vaultKey("", "--key-file", tty, creating); err != nil {
			return err
		}
	}
	var v *kms.Vault
	if creating {
		v = kms.New(key)
	} else if v, err = kms.Open(data, key); errors.Is(err, kms.ErrWrongKey) && *keyFile != "" {
		// A key file's every byte is the key: one edited or written
		// again (a newline added or dropped) is another key. The tag
		// fails the same for a vault changed or cut short, with the
		// right key file: the hint names both.
		return fail(exitFailure, "the key file must be the very bytes the vault was sealed with: an editor's added or dropped final newline makes another key; if it is, the vault was changed or cut short (put back a copy)", "%v", err)
	} else if err != nil {
		return err
	}
	switch sub {
	case "list":
		return e.listSecrets(v, *asJSON)
	case "add":
		// A taken name (or a full vault) is said before the value is
		// read: it was said after, once the person had typed or pasted
		// the value for nothing, and a stdin left open hung the add.
		taken := func(err error) error {
			if errors.Is(err, kms.ErrExists) {
				return fail(exitUsage, "`launcher secrets rm "+rest[0]+"` first to replace it, or choose another name", "%v", err)
			}
			return err
		}
		if err := v.CheckNew(rest[0]); err != nil {
			return taken(err)
		}
		value, err := readValue(rest[0])
		if err != nil {
			return err
		}
		defer clear(value)
		if err := v.Add(rest[0], value, time.Now()); err != nil {
			return taken(err)
		}
	case "rm":
		if err := v.Remove(rest[0]); errors.Is(err, kms.ErrNoSecret) {
			return fail(exitUsage, "`launcher secrets list` shows the names", "%v", err)
		} else if err != nil {
			return err
		}
	case "rekey":
		newKey, err := e.vaultKey(*newKeyFile, "--new-key-file", tty, true)
		if err != nil {
			return err
		}
		v.Rekey(newKey)
	}
	sealed, err := v.Seal()
	if err != nil {
		return err
	}
	if err := kms.WriteFile(path, sealed); errors.Is(err, kms.ErrNotDurable) {
		fmt.Fprintf(e.stderr, "launcher: warning: %v\n", err)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "launcher: vault %s: %d secret(s)\n", path, len(v.Secrets))
	return nil
}

func (e env) listSecrets(v *kms.Vault, asJSON bool) error {
	type entry struct {
		Name  string    `json:"name"`
		Added time.Time `json:"added"`
	}
	list := []entry{}
	for _, s := range v.Secrets {
		list = append(list, entry{s.Name, s.Added})
	}
	if asJSON {
		return e.writeJSON(list)
	}
	for _, s := range list {
		fmt.Fprintf(e.stdout, "%s\tadded %s\n", s.Name, s.Added.Format(time.DateOnly))
	}
	return nil
}

// vaultKey is the key from a key file, or a passphrase asked on the
// terminal (twice when it is new).
func (e env) vaultKey(keyFile, flag string, tty *os.File, isNew bool) (kms.Key, error) {
	if keyFile != "" {
		return kms.ReadKeyFile(keyFile)
	}
	if tty == nil {
		return kms.Key{}, fail(exitUsage, "give "+flag+" FILE (at least 32 random bytes, mode 0600)", "secrets: no terminal to ask the passphrase on")
	}
	prompt := "vault passphrase: "
	if isNew {
		prompt = "new vault passphrase: "
	}
	p, err := readHidden(tty, tty, prompt)
	if err != nil {
		return kms.Key{}, err
	}
	defer clear(p)
	// A new passphrase the terminal may have cut would count for its
	// first 4095 bytes alone, unknown to its person. One already sealing
	// a vault is read as it was when sealed, cut the same way: it opens.
	if isNew && len(p) >= maxTerminalLine {
		return kms.Key{}, fail(exitUsage, "choose a shorter passphrase, or give "+flag+" FILE (at least 32 random bytes, mode 0600)", "secrets: the passphrase is %d bytes or more, where the terminal cuts a line", maxTerminalLine)
	}
	if isNew {
		again, err := readHidden(tty, tty, "again: ")
		if err != nil {
			return kms.Key{}, err
		}
		defer clear(again)
		if !bytes.Equal(p, again) {
			return kms.Key{}, errors.New("secrets: the two passphrases differ")
		}
	}
	return kms.Passphrase(p)
}

// readValue reads a secret's value: without echo when stdin is a
// terminal, else all of stdin with one line end (LF or CR LF) dropped.
func readValue(name string) ([]byte, error) {
	if isTerminal(os.Stdin) {
		v, err := readHidden(os.Stdin, os.Stderr, "value of "+name+": ")
		// The terminal drops what is typed past its line buffer without
		// a word: a long token pasted at the prompt was stored cut.
		if err == nil && len(v) >= maxTerminalLine {
			clear(v)
			return nil, fail(exitUsage, "give a value this long on stdin: launcher secrets add "+name+" < FILE", "secrets: the value of %q is %d bytes or more, where the terminal cuts a line: it may have been cut short", name, maxTerminalLine)
		}
		return v, err
	}
	// Read at most the longest value, its line end (CR LF) and one byte
	// more: a longer stdin is said to be longer, not to be the size it
	// was cut at.
	b, err := io.ReadAll(io.LimitReader(os.Stdin, kms.MaxValueSize+3))
	if err != nil {
		return nil, fmt.Errorf("secrets: read the value from stdin: %w", err)
	}
	if len(b) > kms.MaxValueSize+2 {
		clear(b)
		return nil, fmt.Errorf("secrets: the value of %q on stdin is more than %d bytes, the most a secret may hold", name, kms.MaxValueSize)
	}
	// One line end, LF or CR LF; a CR without an LF is the value's own.
	if v, ok := bytes.CutSuffix(b, []byte("\n")); ok {
		return bytes.TrimSuffix(v, []byte("\r")), nil
	}
	return b, nil
}
