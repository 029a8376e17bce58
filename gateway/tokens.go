package gateway

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/privfile"
)

// CapHostExecute is the capability to use the gateway's tools that act
// on the host.
const CapHostExecute = "host.execute"

// Capabilities are the capabilities a token may carry; any other is
// refused, in a new token and in the store file alike.
var Capabilities = []string{CapHostExecute}

// Token is one owner token as the store keeps it: never the secret, only
// its sha256.
type Token struct {
	Name    string   `json:"name"`
	Hash    string   `json:"sha256"`  // hex sha256 of the whole secret, "pft_" included
	Caps    []string `json:"caps"`    // sorted, each in Capabilities
	Created string   `json:"created"` // RFC 3339, UTC
}

// Has reports whether the token carries capability c.
func (t Token) Has(c string) bool { return slices.Contains(t.Caps, c) }

const (
	tokenSecretPrefix = "pft_"
	tokenSecretBytes  = 32
	// tokenSecretLen is the prefix and 43 characters of unpadded base64url.
	tokenSecretLen = len(tokenSecretPrefix) + (tokenSecretBytes*8+5)/6

	tokenStoreVersion = 1
	maxTokenStoreSize = 1 << 20
	maxTokens         = 1000 // far below what maxTokenStoreSize holds, so a full store stays readable
	maxTokenNameLen   = 64
)

var (
	// ErrTokenExists: Add was given a name the store already has.
	ErrTokenExists = errors.New("a token by that name exists")
	// ErrNoSuchToken: Revoke was given a name the store does not have.
	ErrNoSuchToken = errors.New("no such token")
	// ErrBadStore: the store file, or its directory, is refused (a
	// symlink, not a regular file, not the caller's, open to others, too
	// large) or is not a valid token store.
	ErrBadStore = errors.New("tokens: bad store")
	// ErrNewerStore: a store written by a newer launcher (a version
	// above this one's); it is ErrBadStore too.
	ErrNewerStore = errors.New("written by a newer launcher")
	// ErrNotDurable: the new store is in place, but syncing its directory
	// failed, so a crash now might bring back the old one.
	ErrNotDurable = errors.New("tokens: the change is made, but the directory could not be synced")
)

// DefaultStorePath is where the owner's tokens live:
// $XDG_CONFIG_HOME/pinfold/serve-tokens.json, else
// ~/.config/pinfold/serve-tokens.json.
func DefaultStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("tokens: no config directory for the default store: %w", err)
	}
	return filepath.Join(dir, "pinfold", "serve-tokens.json"), nil
}

// CheckName says why name cannot name a token: it must be 1-64 of
// a-z, 0-9, '.', '_' and '-', starting with a letter or a digit.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("tokens: a token name is empty")
	case len(name) > maxTokenNameLen:
		return fmt.Errorf("tokens: token name %.20q... is %d bytes, more than %d", name, len(name), maxTokenNameLen)
	case !isTokenNameStart(name[0]):
		return fmt.Errorf("tokens: token name %q starts with %q: it must start with a-z or 0-9", name, name[0])
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isTokenNameStart(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("tokens: token name %q has %q: only a-z, 0-9, '.', '_' and '-' are allowed", name, c)
		}
	}
	return nil
}

func isTokenNameStart(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// CheckCaps says why caps cannot be a token's capabilities: each must be
// one of Capabilities. A repeated capability is no error.
func CheckCaps(caps []string) error {
	for _, c := range caps {
		if !slices.Contains(Capabilities, c) {
			return fmt.Errorf("tokens: unknown capability %q (known: %s)", c, strings.Join(Capabilities, ", "))
		}
	}
	return nil
}

// Store is the owner's token store, a JSON file at Path:
//
//	{"version": 1, "tokens": [{"name": …, "sha256": …, "caps": […], "created": …}, …]}
//
// A missing file holds no tokens. Every method reads the file afresh, so a
// token revoked by another process is refused at its next use. Changes
// (Add, Revoke) take an flock on Path+".lock" around their read, change
// and write, so that two processes cannot lose one another's change, and
// replace the file atomically.
type Store struct{ Path string }

// Add makes a token named name with capabilities caps and returns its
// secret, which exists nowhere else: the store keeps only its sha256.
// If the only failure is ErrNotDurable, the token is in place and the
// secret is returned with the error.
func (s Store) Add(name string, caps []string, now time.Time) (secret string, err error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if err := CheckCaps(caps); err != nil {
		return "", err
	}
	caps = slices.Compact(slices.Sorted(slices.Values(caps)))
	if caps == nil {
		caps = []string{} // `[]`, not `null`, in the file
	}
	if err := s.refusedFile(); err != nil {
		return "", err
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	toks, err := s.read()
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(toks, func(t Token) bool { return t.Name == name }) {
		return "", fmt.Errorf("tokens: %q: %w in %s", name, ErrTokenExists, s.Path)
	}
	if len(toks) >= maxTokens {
		return "", fmt.Errorf("tokens: %s already holds %d tokens, the most it may", s.Path, len(toks))
	}
	secret, err = newTokenSecret()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(secret))
	toks = append(toks, Token{
		Name:    name,
		Hash:    hex.EncodeToString(sum[:]),
		Caps:    caps,
		Created: now.UTC().Format(time.RFC3339),
	})
	if err := s.write(toks); errors.Is(err, ErrNotDurable) {
		return secret, err
	} else if err != nil {
		return "", err
	}
	return secret, nil
}

// List returns the tokens, sorted by name; none if the file is missing.
func (s Store) List() ([]Token, error) {
	toks, err := s.read()
	if err != nil {
		return nil, err
	}
	if toks == nil {
		toks = []Token{}
	}
	return toks, nil
}

// Revoke removes the token named name.
func (s Store) Revoke(name string) error {
	// A store that is not there holds nothing to revoke: said before the
	// lock, which would make its directory and a .lock file (a mistyped
	// --tokens).
	if _, err := os.Lstat(s.Path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tokens: revoke %q: %w: there is no store at %s", name, ErrNoSuchToken, s.Path)
	}
	if err := s.refusedFile(); err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	toks, err := s.read()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(toks, func(t Token) bool { return t.Name == name })
	if i < 0 {
		return fmt.Errorf("tokens: revoke %q: %w in %s", name, ErrNoSuchToken, s.Path)
	}
	return s.write(slices.Delete(toks, i, i+1))
}

// refusedFile says why the store file itself is refused (not a regular
// file, another's, a loose mode), before Add or Revoke take the lock,
// which would make a .lock beside a directory or a FIFO. No file, or a
// symlink, is left to the lock and read (which refuse the symlink).
func (s Store) refusedFile() error {
	st, err := os.Lstat(s.Path)
	if err != nil || st.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	return checkTokenFileInfo(s.Path, st)
}

// Verify returns the token whose secret is secret. A malformed secret,
// an unknown one, and a store that cannot be read or is not valid all
// give false: Verify fails closed, and List says why a store is refused.
// It never panics, whatever secret is.
func (s Store) Verify(secret string) (Token, bool) {
	// The format is public: refusing a malformed secret early leaks nothing.
	if !wellFormedSecret(secret) {
		return Token{}, false
	}
	toks, err := s.read()
	if err != nil {
		return Token{}, false
	}
	return matchSecret(toks, secret)
}

// wellFormedSecret: "pft_" and the unpadded base64url of 32 bytes, in
// its one canonical spelling (no stray bits in the last character, no
// newlines, which the base64 decoder would skip).
func wellFormedSecret(secret string) bool {
	if len(secret) != tokenSecretLen || !strings.HasPrefix(secret, tokenSecretPrefix) {
		return false
	}
	body := secret[len(tokenSecretPrefix):]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	return err == nil && len(raw) == tokenSecretBytes
}

// matchSecret compares the secret's sha256 with every token's, in
// constant time and in full, whichever matches: the time taken depends
// on how many tokens there are, not on which one (if any) matched.
//
// A plain sha256, not a password hash, is right here: a secret is 256
// random bits, so there is nothing to stretch against guessing, and the
// stored hash gives no way back to the secret.
func matchSecret(toks []Token, secret string) (Token, bool) {
	sum := sha256.Sum256([]byte(secret))
	var want [sha256.Size]byte
	found, at := 0, 0
	for i, t := range toks {
		// checkTokens held every Hash to 64 hex digits; should one not
		// be, it matches nothing.
		if len(t.Hash) != len(want)*2 {
			continue
		}
		n, _ := hex.Decode(want[:], []byte(t.Hash))
		eq := subtle.ConstantTimeCompare(sum[:], want[:]) & subtle.ConstantTimeEq(int32(n), int32(len(want)))
		at = subtle.ConstantTimeSelect(eq, i, at)
		found |= eq
	}
	if found != 1 {
		return Token{}, false
	}
	return toks[at], true
}

func newTokenSecret() (string, error) {
	var raw [tokenSecretBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("tokens: random secret: %w", err)
	}
	return tokenSecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:]), nil
}

// tokenFile is the file's JSON. Pointers tell a missing key from a zero one.
type tokenFile struct {
	Version *int     `json:"version"`
	Tokens  *[]Token `json:"tokens"`
}

// read reads and checks the store; a missing file holds no tokens.
func (s Store) read() ([]Token, error) {
	var cached []Token
	b, key, err := readTokenFile(s.Path, func(key string) bool {
		parsed.Lock()
		defer parsed.Unlock()
		if parsed.path == s.Path && parsed.key == key {
			cached = slices.Clone(parsed.toks)
			return true
		}
		return false
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cached != nil {
		return cached, nil
	}
	if testHookDecode != nil {
		testHookDecode()
	}
	toks, err := decodeTokens(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadStore, s.Path, err)
	}
	parsed.Lock()
	parsed.path, parsed.key, parsed.toks = s.Path, key, slices.Clone(toks)
	parsed.Unlock()
	return toks, nil
}

// parsed is the last store decoded, by what its file was (fileKey): a
// gateway verifies a token on every request, and bad tokens, which a
// peer over its failure limit still has checked (a valid one is served
// whatever its address did), must not each cost a read and decode of
// the whole store. Every check of the file and its directories still
// runs each time; only the same file, unchanged, is not read again.
var parsed struct {
	sync.Mutex
	path, key string
	toks      []Token
}

// testHookDecode, set by a test, runs before each decode of a store.
var testHookDecode func()

// fileKey says which file, and which version of it, st is: a store is
// replaced by rename (a new inode) and any change moves its ctime.
func fileKey(st *syscall.Stat_t) string {
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// decodeTokens decodes a store strictly (unknown keys, trailing data, a
// missing or other version are errors) and checks every token.
func decodeTokens(b []byte) ([]Token, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f tokenFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a token store: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a token store: more after the JSON object")
	}
	switch {
	case f.Version == nil:
		return nil, errors.New("no \"version\"")
	case *f.Version > tokenStoreVersion:
		return nil, fmt.Errorf("version %d: this launcher reads version %d (%w)", *f.Version, tokenStoreVersion, ErrNewerStore)
	case *f.Version != tokenStoreVersion:
		return nil, fmt.Errorf("version %d: this launcher reads version %d", *f.Version, tokenStoreVersion)
	case f.Tokens == nil:
		return nil, errors.New("no \"tokens\" list")
	}
	toks := *f.Tokens
	if err := checkTokens(toks); err != nil {
		return nil, err
	}
	for i := range toks {
		if toks[i].Caps == nil {
			toks[i].Caps = []string{}
		}
	}
	slices.SortFunc(toks, func(a, b Token) int { return strings.Compare(a.Name, b.Name) })
	return toks, nil
}

// checkTokens holds for every store read.
func checkTokens(toks []Token) error {
	if len(toks) > maxTokens {
		return fmt.Errorf("%d tokens, more than %d", len(toks), maxTokens)
	}
	names := map[string]bool{}
	hashes := map[string]bool{}
	for i, t := range toks {
		if err := CheckName(t.Name); err != nil {
			return fmt.Errorf("token %d: %w", i+1, err)
		}
		if err := checkTokenHash(t.Hash); err != nil {
			return fmt.Errorf("token %q: %w", t.Name, err)
		}
		if err := CheckCaps(t.Caps); err != nil {
			return fmt.Errorf("token %q: %w", t.Name, err)
		}
		if !slices.IsSorted(t.Caps) || len(slices.Compact(slices.Clone(t.Caps))) != len(t.Caps) {
			return fmt.Errorf("token %q: caps are not sorted and distinct", t.Name)
		}
		if _, err := time.Parse(time.RFC3339, t.Created); err != nil {
			return fmt.Errorf("token %q: created %q is not an RFC 3339 time", t.Name, t.Created)
		}
		if names[t.Name] {
			return fmt.Errorf("token %q appears twice", t.Name)
		}
		if hashes[t.Hash] {
			return fmt.Errorf("token %q has the same sha256 as another", t.Name)
		}
		names[t.Name], hashes[t.Hash] = true, true
	}
	return nil
}

// checkTokenHash: 64 lower-case hex digits, as Add writes them.
func checkTokenHash(h string) error {
	if len(h) != 2*sha256.Size {
		return fmt.Errorf("sha256 is %d characters, not %d", len(h), 2*sha256.Size)
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return errors.New("sha256 is not lower-case hex")
		}
	}
	return nil
}

// readTokenFile reads the store. It refuses a symlink, anything but a
// regular file, a file not the caller's or open to others, one in a
// directory others may write (or beneath one, without the sticky bit),
// and more than maxTokenStoreSize. A missing file is an error that is fs.ErrNotExist.
func readTokenFile(path string, cached func(key string) bool) ([]byte, string, error) {
	// Its directory and those above, as for writing: whoever may write
	// them could put back a store with a revoked token in it.
	for _, check := range []func(string, string) error{privfile.CheckDir, privfile.CheckAncestors} {
		err := check(filepath.Dir(path), "token store")
		var np *privfile.NotPrivateError
		if errors.As(err, &np) {
			return nil, "", fmt.Errorf("%w: %v", ErrBadStore, err)
		}
	}
	// O_NONBLOCK: a FIFO planted at the path must not block the open
	// before the checks below refuse it.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, "", fmt.Errorf("%w: %s is a symlink: refusing it", ErrBadStore, path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("tokens: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("tokens: %w", err)
	}
	if err := checkTokenFileInfo(path, st); err != nil {
		return nil, "", err
	}
	if st.Size() > maxTokenStoreSize {
		return nil, "", fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadStore, path, st.Size(), maxTokenStoreSize)
	}
	key := fileKey(st.Sys().(*syscall.Stat_t))
	if cached != nil && cached(key) {
		return nil, key, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenStoreSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("tokens: read %s: %w", path, err)
	}
	if len(b) > maxTokenStoreSize {
		return nil, "", fmt.Errorf("%w: %s grew past %d bytes while read", ErrBadStore, path, maxTokenStoreSize)
	}
	return b, key, nil
}

// checkTokenFileInfo: a regular file, the caller's, that no one else may read
// or write.
func checkTokenFileInfo(path string, st os.FileInfo) error {
	uid := st.Sys().(*syscall.Stat_t).Uid
	switch {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrBadStore, path)
	case uid != uint32(os.Geteuid()):
		return fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d): refusing it", ErrBadStore, path, uid, os.Geteuid())
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o: others may read or change it (chmod 600 %s)", ErrBadStore, path, st.Mode().Perm(), path)
	}
	return nil
}

// write replaces the store atomically: a new file in the same directory,
// written and synced, renamed over the old one, and the directory synced.
// A crash leaves the old store or the new one, never half of either.
// After the rename an error is ErrNotDurable: the change is made.
func (s Store) write(toks []Token) (err error) {
	slices.SortFunc(toks, func(a, b Token) int { return strings.Compare(a.Name, b.Name) })
	if err := checkTokens(toks); err != nil {
		return fmt.Errorf("tokens: not writing a store that would not read back: %v", err)
	}
	v := tokenStoreVersion
	data, err := json.MarshalIndent(tokenFile{Version: &v, Tokens: &toks}, "", "  ")
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(s.Path)
	if err := tokenDir(dir); err != nil {
		return err
	}
	err = privfile.Replace(s.Path, data)
	if errors.Is(err, privfile.ErrNotDurable) {
		return fmt.Errorf("%w: %v", ErrNotDurable, err)
	}
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	return nil
}

// lock takes the store's lock (Path+".lock", flock'ed), waiting for a
// holder; the returned function releases it. flock locks belong to the
// open file, so two Stores in one process exclude each other as two
// processes do.
func (s Store) lock() (func(), error) {
	if err := tokenDir(filepath.Dir(s.Path)); err != nil {
		return nil, err
	}
	name := s.Path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symlink: refusing it", ErrBadStore, name)
	}
	if err != nil {
		return nil, fmt.Errorf("tokens: lock: %w", err)
	}
	st, err := f.Stat()
	if err == nil {
		err = checkTokenFileInfo(name, st)
	}
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tokens: lock %s: %w", name, err)
	}
	return func() { f.Close() }, nil
}

// tokenDir makes dir (0700) if missing, and refuses one that is not a
// directory, not the caller's, or writable by others (they could put back
// a store with a revoked token in it).
func tokenDir(dir string) error {
	err := privfile.Dir(dir, "store")
	var np *privfile.NotPrivateError
	switch {
	case errors.As(err, &np):
		return fmt.Errorf("%w: %v", ErrBadStore, err)
	case err != nil:
		return fmt.Errorf("tokens: %w", err)
	}
	return nil
}
