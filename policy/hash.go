package policy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/pinfold/pinfold/internal/privfile"
)

// Digest is the sha256 of a policy file's exact bytes: what sha256sum prints.
type Digest [sha256.Size]byte

// Hash returns the digest of the exact bytes.
func Hash(data []byte) Digest { return sha256.Sum256(data) }

// String returns the digest as 64 lower-case hex digits.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// ParseDigest accepts 64 hex digits, optionally prefixed by "sha256:".
func ParseDigest(s string) (Digest, error) {
	var d Digest
	h := strings.TrimPrefix(s, "sha256:")
	if len(h) != 2*len(d) {
		return d, fmt.Errorf("pinned hash is %d characters, want 64 hex digits (optionally prefixed by \"sha256:\")", len(h))
	}
	if _, err := hex.Decode(d[:], []byte(h)); err != nil {
		return d, fmt.Errorf("pinned hash is not hexadecimal: want 64 hex digits (optionally prefixed by \"sha256:\")")
	}
	return d, nil
}

// Verify compares the digest of data with want in constant time. The error
// wraps ErrHashMismatch and deliberately carries neither digest: the person
// must compute the hash on their own, not paste back what the launcher saw.
func Verify(data []byte, want Digest) error {
	got := Hash(data)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return ErrHashMismatch
	}
	return nil
}

// ReadFile reads a policy file once, refusing anything that is not a
// regular file and anything over MaxFileSize before reading it whole. The
// bytes it returns are the bytes to hash and then to parse: there is no
// second read for the file to change between.
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read policy %s: not a regular file but %s", path, privfile.Kind(st.Mode()))
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("read policy %s: the file is %d bytes, over the %d-byte limit: is this the policy?", path, st.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("read policy %s: the file grew past the %d-byte limit while being read", path, MaxFileSize)
	}
	return data, nil
}
