package kms

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/pinfold/pinfold/policy"
)

// The vault file: a fixed header, then the sealed payload. The whole
// header is the AEAD's additional data, so a changed parameter, salt or
// version fails to open like a changed ciphertext.
//
//	magic    8  "PFVAULT\x00"
//	version  2  big endian, formatVersion
//	kdf      1  kdfArgon2id or kdfKeyFile
//	time     4  argon2id passes (0 for a key file)
//	memory   4  argon2id KiB (0 for a key file)
//	threads  1  argon2id lanes (0 for a key file)
//	salt     16
//	nonce    24 XChaCha20-Poly1305
//	sealed   …  the payload (JSON) and its 16-byte tag
const (
	magic         = "PFVAULT\x00"
	formatVersion = 1
	headerSize    = 8 + 2 + 1 + 4 + 4 + 1 + 16 + chacha20poly1305.NonceSizeX

	kdfArgon2id = 1
	kdfKeyFile  = 2
)

// Argon2id parameters for new vaults (RFC 9106's second recommended
// option), and the most an existing header may ask for: a tampered header
// must not make opening the vault exhaust memory or time before the tag
// is even checked. No launcher seals above the default (Seal raises a
// lower cost to it), so the bound is a few times the default's work
// (seconds and 256 MiB), not the 16 times and 1 GiB it once was.
var (
	defaultKDF = KDFParams{Time: 3, MemoryKiB: 64 << 10, Threads: 4}
	maxKDF     = KDFParams{Time: 8, MemoryKiB: 256 << 10, Threads: 8}
)

// Limits on what a vault holds.
const (
	maxSecrets   = 1000
	maxValueSize = 64 << 10
	maxVaultSize = headerSize + maxSecrets*(maxValueSize*2) + 1<<20
)

// MaxValueSize is the most bytes one secret's value may hold.
const MaxValueSize = maxValueSize

// KDFParams are argon2id's cost parameters.
type KDFParams struct {
	Time      uint32
	MemoryKiB uint32
	Threads   uint8
}

// Key unlocks a vault: a passphrase, stretched with argon2id, or the
// contents of a key file. Build one with Passphrase or KeyFile.
type Key struct {
	kdf    byte
	secret []byte
}

// Wipe clears the key's bytes (a Vault opened with it can no longer be
// sealed): the launcher holds them no longer than it needs them.
func (k Key) Wipe() { clear(k.secret) }

// Passphrase is a key from a passphrase. It must not be empty.
func Passphrase(p []byte) (Key, error) {
	if len(p) == 0 {
		return Key{}, errors.New("vault: the passphrase is empty")
	}
	return Key{kdfArgon2id, bytes.Clone(p)}, nil
}

// minKeyFileSize is the least a key file must hold: it is used as is
// (hashed, not stretched), so it must be random, like `head -c 32
// /dev/urandom`.
const minKeyFileSize = 32

// KeyFile is a key from a key file's contents.
func KeyFile(contents []byte) (Key, error) {
	if len(contents) < minKeyFileSize {
		return Key{}, fmt.Errorf("vault: the key file holds %d bytes; it needs at least %d random bytes (head -c 32 /dev/urandom > FILE)", len(contents), minKeyFileSize)
	}
	return Key{kdfKeyFile, bytes.Clone(contents)}, nil
}

// Secret is one named value.
type Secret struct {
	Name  string    `json:"name"`
	Value []byte    `json:"value"`
	Added time.Time `json:"added"`
}

// Vault is an unsealed vault: its secrets, and how it was sealed.
type Vault struct {
	Secrets []Secret
	key     Key
	kdf     KDFParams
	minKDF  KDFParams // the least cost Seal uses for a passphrase
}

// payload is what is sealed.
type payload struct {
	Secrets []Secret `json:"secrets"`
}

// New is an empty vault sealed with key (argon2id at the default cost
// for a passphrase).
func New(key Key) *Vault {
	v := &Vault{}
	v.Rekey(key)
	return v
}

// Errors callers decide on.
var (
	// ErrWrongKey: the tag does not verify (wrong passphrase or key file,
	// or the file was altered: the two cannot be told apart).
	ErrWrongKey = errors.New("vault: wrong passphrase or key, or the vault was altered")
	// ErrNewerFormat: a vault written by a newer launcher.
	ErrNewerFormat = errors.New("vault: written by a newer launcher")
	// ErrExists: Add was given a name the vault holds.
	ErrExists = errors.New("is already there")
	// ErrNoSecret: Remove was given a name the vault does not hold.
	ErrNoSecret = errors.New("no secret named")
)

// Open unseals a vault file's bytes.
func Open(data []byte, key Key) (*Vault, error) {
	h, err := header(data)
	if err != nil {
		return nil, err
	}
	kdf := h[10]
	params := KDFParams{Time: binary.BigEndian.Uint32(h[11:]), MemoryKiB: binary.BigEndian.Uint32(h[15:]), Threads: h[19]}
	salt, nonce := h[20:36], h[36:headerSize]
	if kdf != key.kdf {
		return nil, fmt.Errorf("vault: sealed with %s, opened with %s", kdfName(kdf), kdfName(key.kdf))
	}
	if err := checkParams(kdf, params); err != nil {
		return nil, err
	}
	aead, err := newAEAD(key, params, salt)
	if err != nil {
		return nil, err
	}
	plain, err := aead.Open(nil, nonce, data[headerSize:], h)
	if err != nil {
		return nil, ErrWrongKey
	}
	var p payload
	err = json.Unmarshal(plain, &p)
	clear(plain)
	if err != nil {
		return nil, fmt.Errorf("vault: sealed contents do not decode: %w", err)
	}
	v := &Vault{Secrets: p.Secrets, key: key, kdf: params, minKDF: defaultKDF}
	if err := v.check(); err != nil {
		return nil, err
	}
	return v, nil
}

// header checks what can be checked without the key (size, magic,
// version) and returns the header.
func header(data []byte) ([]byte, error) {
	if len(data) > maxVaultSize {
		return nil, fmt.Errorf("vault: %d bytes, more than a vault can hold (%d)", len(data), maxVaultSize)
	}
	// An empty file, or one cut inside the version, is said as such: the
	// magic is not wrong, there is too little of it.
	switch {
	case len(data) == 0:
		return nil, errors.New("vault: the file is empty (0 bytes), not a vault")
	case len(data) < 10 && strings.HasPrefix(magic+"\x00\x00", string(data)):
		return nil, fmt.Errorf("vault: truncated: %d bytes, the header and tag alone take %d", len(data), headerSize+chacha20poly1305.Overhead)
	case len(data) < 10 || string(data[:8]) != magic:
		return nil, errors.New("vault: not a pinfold vault (bad magic)")
	}
	switch version := binary.BigEndian.Uint16(data[8:]); {
	case version > formatVersion:
		return nil, fmt.Errorf("%w: format version %d, this launcher knows %d: upgrade the launcher", ErrNewerFormat, version, formatVersion)
	case version < 1:
		return nil, fmt.Errorf("vault: format version %d does not exist", version)
	}
	if len(data) < headerSize+chacha20poly1305.Overhead {
		return nil, fmt.Errorf("vault: truncated: %d bytes, the header and tag alone take %d", len(data), headerSize+chacha20poly1305.Overhead)
	}
	return data[:headerSize], nil
}

// NeedsPassphrase reads the vault's header, before any key is asked for:
// whether it is sealed with a passphrase (true) or a key file (false), or
// why it cannot be opened by this launcher at all.
func NeedsPassphrase(data []byte) (bool, error) {
	h, err := header(data)
	if err != nil {
		return false, err
	}
	switch h[10] {
	case kdfArgon2id:
		return true, nil
	case kdfKeyFile:
		return false, nil
	}
	return false, fmt.Errorf("vault: unknown key derivation %d", h[10])
}

// Seal returns the vault file's bytes: a fresh salt and nonce each time.
func (v *Vault) Seal() ([]byte, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	plain, err := json.Marshal(payload{Secrets: v.Secrets})
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	defer clear(plain)
	h := make([]byte, headerSize)
	copy(h, magic)
	binary.BigEndian.PutUint16(h[8:], formatVersion)
	h[10] = v.key.kdf
	if v.key.kdf == kdfArgon2id {
		// A vault opened with a lower cost is resealed at least at the
		// default one: a weak setting does not outlive its next change.
		v.kdf = KDFParams{Time: max(v.kdf.Time, v.minKDF.Time), MemoryKiB: max(v.kdf.MemoryKiB, v.minKDF.MemoryKiB), Threads: max(v.kdf.Threads, v.minKDF.Threads)}
	}
	binary.BigEndian.PutUint32(h[11:], v.kdf.Time)
	binary.BigEndian.PutUint32(h[15:], v.kdf.MemoryKiB)
	h[19] = v.kdf.Threads
	if _, err := rand.Read(h[20:headerSize]); err != nil { // salt and nonce
		return nil, fmt.Errorf("vault: %w", err)
	}
	aead, err := newAEAD(v.key, v.kdf, h[20:36])
	if err != nil {
		return nil, err
	}
	return aead.Seal(h, h[36:headerSize], plain, h), nil
}

// Rekey reseals the vault with another key from now on (argon2id at the
// default cost for a passphrase).
func (v *Vault) Rekey(key Key) { v.rekey(key, defaultKDF) }

func (v *Vault) rekey(key Key, cost KDFParams) {
	v.key = key
	v.kdf, v.minKDF = KDFParams{}, KDFParams{}
	if key.kdf == kdfArgon2id {
		v.kdf, v.minKDF = cost, cost
	}
}

// Add adds a secret; the name must be new and the value not empty.
func (v *Vault) Add(name string, value []byte, now time.Time) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := checkValue(name, value); err != nil {
		return err
	}
	// A value goes only into a header ([[secrets]]' template), which
	// cannot carry a control character: Go's writer turns CR and LF into
	// spaces (so what goes up is not the value net looks for in the
	// answer) and a server may refuse the rest. A vault that holds one
	// already still opens (net looks for such a value as it was sent).
	if i := bytes.IndexFunc(value, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f) }); i >= 0 {
		return fmt.Errorf("vault: the value of %q holds the control character %#02x at byte %d, which no HTTP header carries (a value from a file: its line ends are part of it)", name, value[i], i)
	}
	// Nor does a header carry a blank at a value's ends (RFC 9110): Go's
	// writer trims it, so the upstream got, and could echo, another value
	// than the one stored. It is almost always a paste's stray space.
	if n := len(value); value[0] == ' ' || value[0] == '\t' || value[n-1] == ' ' || value[n-1] == '\t' {
		return fmt.Errorf("vault: the value of %q begins or ends with a blank (a space or tab), which an HTTP header does not carry (pasted with a stray space?)", name)
	}
	if err := v.CheckNew(name); err != nil {
		return err
	}
	v.Secrets = append(v.Secrets, Secret{Name: name, Value: bytes.Clone(value), Added: now.UTC().Truncate(time.Second)})
	return nil
}

// CheckNew is Add's refusal of a name the vault holds (ErrExists), or of
// one more secret than it may hold, alone: said before a value is asked
// for.
func (v *Vault) CheckNew(name string) error {
	if v.index(name) >= 0 {
		return fmt.Errorf("vault: %q %w (remove it first to replace it)", name, ErrExists)
	}
	if len(v.Secrets) >= maxSecrets {
		return fmt.Errorf("vault: already holds %d secrets, the most it may", maxSecrets)
	}
	return nil
}

// Remove removes a secret by name.
func (v *Vault) Remove(name string) error {
	i := v.index(name)
	if i < 0 {
		return fmt.Errorf("vault: %w %q", ErrNoSecret, name)
	}
	clear(v.Secrets[i].Value)
	v.Secrets = slices.Delete(v.Secrets, i, i+1)
	return nil
}

func (v *Vault) index(name string) int {
	return slices.IndexFunc(v.Secrets, func(s Secret) bool { return s.Name == name })
}

// check holds for every vault sealed or opened.
func (v *Vault) check() error {
	if len(v.Secrets) > maxSecrets {
		return fmt.Errorf("vault: %d secrets, more than %d", len(v.Secrets), maxSecrets)
	}
	seen := map[string]bool{}
	for _, s := range v.Secrets {
		if err := checkName(s.Name); err != nil {
			return err
		}
		if err := checkValue(s.Name, s.Value); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("vault: %q appears twice", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// checkName holds names to what a policy's [[secrets]] can name.
// CheckName refuses a name a secret cannot have, before anything is
// read or asked.
func CheckName(name string) error { return checkName(name) }

func checkName(name string) error {
	if err := policy.CheckSecretName(name); err != nil {
		return fmt.Errorf("vault: %w (a letter, then lower-case letters, digits, '_' or '-')", err)
	}
	return nil
}

func checkValue(name string, value []byte) error {
	switch {
	case len(value) == 0:
		return fmt.Errorf("vault: the value of %q is empty", name)
	case len(value) > maxValueSize:
		return fmt.Errorf("vault: the value of %q is %d bytes, more than %d", name, len(value), maxValueSize)
	}
	return nil
}

func checkParams(kdf byte, p KDFParams) error {
	switch kdf {
	case kdfArgon2id:
		if p.Time < 1 || p.Time > maxKDF.Time || p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > maxKDF.MemoryKiB || p.Threads < 1 || p.Threads > maxKDF.Threads {
			return fmt.Errorf("vault: argon2id parameters t=%d m=%dKiB p=%d are outside what this launcher opens (t ≤ %d, m ≤ %dKiB, p ≤ %d)", p.Time, p.MemoryKiB, p.Threads, maxKDF.Time, maxKDF.MemoryKiB, maxKDF.Threads)
		}
	case kdfKeyFile:
		if p != (KDFParams{}) {
			return errors.New("vault: a key-file vault carries no argon2id parameters")
		}
	default:
		return fmt.Errorf("vault: unknown key derivation %d", kdf)
	}
	return nil
}

// derive makes the 32-byte sealing key. A passphrase is stretched with
// argon2id; a key file's random contents are hashed with the salt, under
// a label that keeps this use apart from any other.
// newAEAD is the vault's cipher under the key derived from k; the
// derived bytes are cleared once the cipher holds them.
func newAEAD(k Key, p KDFParams, salt []byte) (cipher.AEAD, error) {
	dk := derive(k, p, salt)
	defer clear(dk)
	aead, err := chacha20poly1305.NewX(dk)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	return aead, nil
}

func derive(k Key, p KDFParams, salt []byte) []byte {
	if k.kdf == kdfArgon2id {
		return argon2.IDKey(k.secret, salt, p.Time, p.MemoryKiB, p.Threads, chacha20poly1305.KeySize)
	}
	h := sha256.New()
	h.Write([]byte("pinfold vault key file v1\x00"))
	h.Write(salt)
	h.Write(k.secret)
	return h.Sum(nil)
}

func kdfName(kdf byte) string {
	switch kdf {
	case kdfArgon2id:
		return "a passphrase"
	case kdfKeyFile:
		return "a key file"
	}
	return fmt.Sprintf("unknown key derivation %d", kdf)
}
