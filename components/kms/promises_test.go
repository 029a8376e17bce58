package kms

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The header is the AEAD's additional data, as doc.go promises, not only
// an input to the key: the sealed part opened with the right key and
// nonce but without the header as additional data fails its tag. (Today
// every header field also changes the key or is checked by value, so only
// this test tells whether the header is authenticated as such: a field
// added later would otherwise go unauthenticated unnoticed.) The control
// opens it with the header.
func TestVaultHeaderIsAdditionalData(t *testing.T) {
	for _, key := range []Key{pass(t, "p"), func() Key {
		k, err := KeyFile(bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}()} {
		b := sealed(t, key, "a")
		h := b[:headerSize]
		params := KDFParams{Time: binary.BigEndian.Uint32(h[11:]), MemoryKiB: binary.BigEndian.Uint32(h[15:]), Threads: h[19]}
		aead, err := newAEAD(key, params, h[20:36])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aead.Open(nil, h[36:headerSize], b[headerSize:], h); err != nil {
			t.Fatalf("%s: control: opening with the header as additional data: %v", kdfName(key.kdf), err)
		}
		if _, err := aead.Open(nil, h[36:headerSize], b[headerSize:], nil); err == nil {
			t.Errorf("%s: the sealed part opens without the header as additional data", kdfName(key.kdf))
		}
	}
}

// The ceiling on argon2id work a header may ask for is the one doc.go and
// vault.go state in absolute terms (t ≤ 8, m ≤ 256 MiB, p ≤ 8), not just
// "whatever maxKDF is": a header one past each is refused before any work
// is done. The control: a header at each bound is not refused for its
// parameters (it fails its tag, having been sealed at another cost).
func TestVaultCeilingIsAbsolute(t *testing.T) {
	key := pass(t, "p")
	b := sealed(t, key, "a")
	for _, c := range []struct {
		off      int
		put      func([]byte, uint32)
		at, over uint32
	}{
		{11, binary.BigEndian.PutUint32, 8, 9},
		{15, binary.BigEndian.PutUint32, 256 << 10, 256<<10 + 1},
		{19, func(b []byte, v uint32) { b[0] = byte(v) }, 8, 9},
	} {
		h := bytes.Clone(b)
		c.put(h[c.off:], c.over)
		start := time.Now()
		if _, err := Open(h, key); err == nil || !strings.Contains(err.Error(), "outside what this launcher opens") {
			t.Errorf("header byte %d = %d: %v", c.off, c.over, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("header byte %d = %d: refusing took %v: the work was done", c.off, c.over, d)
		}
		if err := checkParams(kdfArgon2id, func() KDFParams {
			p := KDFParams{Time: 1, MemoryKiB: 64, Threads: 1}
			switch c.off {
			case 11:
				p.Time = c.at
			case 15:
				p.MemoryKiB = c.at
			default:
				p.Threads, p.MemoryKiB = uint8(c.at), 64
			}
			return p
		}()); err != nil {
			t.Errorf("control: header byte %d = %d (the bound itself) refused: %v", c.off, c.at, err)
		}
	}
}

// A vault its group may read or write is refused like one others may
// (doc.go: read only if "only its owner may read"). The control: 0600.
func TestVaultGroupModesRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v", "vault")
	if err := WriteFile(path, sealed(t, pass(t, "p"), "a")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o600, 0o640, 0o620, 0o610} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		switch {
		case mode == 0o600 && err != nil:
			t.Fatalf("control: mode 0600: %v", err)
		case mode != 0o600 && (err == nil || !strings.Contains(err.Error(), "others may read or change it")):
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
}

// Lock is exclusive: a second taker (another open of the lock file, as
// another launcher's would be) waits, and is told so, until the first
// releases it; then it gets it.
func TestLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v", "vault")
	release, err := Lock(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{}, 1)
	got := make(chan func(), 1)
	go func() {
		r, err := Lock(path, func() { waited <- struct{}{} })
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	select {
	case <-waited:
	case r := <-got:
		r()
		release()
		t.Fatal("a second Lock got the lock while the first held it")
	case <-time.After(10 * time.Second):
		t.Fatal("the second Lock neither waited nor got the lock in 10s")
	}
	select {
	case r := <-got:
		r()
		t.Fatal("the second Lock got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(10 * time.Second):
		t.Fatal("the second Lock did not get the lock once it was released")
	}
}
