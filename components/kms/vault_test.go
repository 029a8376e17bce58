package kms

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cheap is argon2id at a cost tests can afford many times over.
var cheap = KDFParams{Time: 1, MemoryKiB: 64, Threads: 1}

func pass(t *testing.T, p string) Key {
	t.Helper()
	k, err := Passphrase([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sealed(t *testing.T, key Key, names ...string) []byte {
	t.Helper()
	v := &Vault{}
	v.rekey(key, cheap)
	for _, n := range names {
		if err := v.Add(n, []byte("value of "+n), time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := v.Seal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVaultRoundTrip(t *testing.T) {
	kf, err := KeyFile(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]Key{"passphrase": pass(t, "correct horse"), "key file": kf} {
		b := sealed(t, key, "github", "npm-token")
		v, err := Open(b, key)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(v.Secrets) != 2 || v.Secrets[0].Name != "github" || string(v.Secrets[1].Value) != "value of npm-token" ||
			!v.Secrets[0].Added.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: opened %+v", name, v.Secrets)
		}
		if bytes.Contains(b, []byte("value of")) || bytes.Contains(b, []byte("github")) {
			t.Errorf("%s: a value or a name is in the file in clear", name)
		}
		// Each seal draws a fresh salt and nonce.
		again, err := v.Seal()
		if err != nil || bytes.Equal(again[20:headerSize], b[20:headerSize]) {
			t.Errorf("%s: resealing reused the salt and nonce (%v)", name, err)
		}
	}
	// The default cost is what New gives a passphrase vault.
	if v := New(pass(t, "x")); v.kdf != defaultKDF {
		t.Errorf("New: cost %+v, want %+v", v.kdf, defaultKDF)
	}
}

// A wrong key, a key of the other kind, and any changed byte are refused;
// the right key opens the same bytes (the control).
func TestVaultRefusesWrongKeyAndTampering(t *testing.T) {
	key := pass(t, "correct horse")
	b := sealed(t, key, "a")
	if _, err := Open(b, key); err != nil {
		t.Fatalf("control: %v", err)
	}
	if _, err := Open(b, pass(t, "correct horsf")); !errors.Is(err, ErrWrongKey) {
		t.Errorf("wrong passphrase: %v", err)
	}
	kf, _ := KeyFile(bytes.Repeat([]byte{1}, 32))
	if _, err := Open(b, kf); err == nil || !strings.Contains(err.Error(), "sealed with a passphrase, opened with a key file") {
		t.Errorf("key file on a passphrase vault: %v", err)
	}
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x01
		if _, err := Open(c, key); err == nil {
			t.Errorf("byte %d changed: opened", i)
		}
	}
	for n := range len(b) {
		if _, err := Open(b[:n], key); err == nil {
			t.Fatalf("truncated to %d of %d bytes: opened", n, len(b))
		}
	}
	if _, err := Open(append(bytes.Clone(b), 0), key); !errors.Is(err, ErrWrongKey) {
		t.Errorf("a byte appended: %v", err)
	}
}

func TestVaultHeaderChecks(t *testing.T) {
	key := pass(t, "p")
	b := sealed(t, key, "a")
	newer := bytes.Clone(b)
	binary.BigEndian.PutUint16(newer[8:], formatVersion+1)
	if _, err := Open(newer, key); !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "upgrade the launcher") {
		t.Errorf("newer format: %v", err)
	}
	// A header asking for more argon2id work than allowed is refused
	// before any is done (this would take 4 TiB).
	greedy := bytes.Clone(b)
	binary.BigEndian.PutUint32(greedy[15:], 1<<32-1)
	start := time.Now()
	if _, err := Open(greedy, key); err == nil || !strings.Contains(err.Error(), "outside what this launcher opens") {
		t.Errorf("greedy parameters: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing greedy parameters took %v: the work was done", d)
	}
	// Each bound, just past it, is refused before any work.
	for _, c := range []struct {
		off  int
		put  func([]byte, uint32)
		over uint32
	}{
		{11, binary.BigEndian.PutUint32, maxKDF.Time + 1},
		{15, binary.BigEndian.PutUint32, maxKDF.MemoryKiB + 1},
		{19, func(b []byte, v uint32) { b[0] = byte(v) }, uint32(maxKDF.Threads) + 1},
	} {
		h := bytes.Clone(b)
		c.put(h[c.off:], c.over)
		if _, err := Open(h, key); err == nil || !strings.Contains(err.Error(), "outside what this launcher opens") {
			t.Errorf("header byte %d = %d: %v", c.off, c.over, err)
		}
	}
	if _, err := Open(append([]byte("NOTVAULT"), b[8:]...), key); err == nil || !strings.Contains(err.Error(), "bad magic") {
		t.Errorf("bad magic: %v", err)
	}
	// Too little of a vault is not "bad magic": an empty file, or one cut
	// before its version ends.
	if _, err := NeedsPassphrase(nil); err == nil || !strings.Contains(err.Error(), "the file is empty") {
		t.Errorf("empty: %v", err)
	}
	for n := 1; n < 10; n++ {
		if _, err := NeedsPassphrase(b[:n]); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("truncated: %d bytes", n)) {
			t.Errorf("cut to %d bytes: %v", n, err)
		}
	}
}

func TestVaultEdits(t *testing.T) {
	v := &Vault{}
	v.rekey(pass(t, "p"), cheap)
	now := time.Now()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(v.Add("a", []byte("1"), now))
	must(v.Add("tab", []byte("a\tb ü"), now)) // a header carries HTAB and UTF-8
	must(v.Remove("tab"))
	for _, c := range []struct {
		name, value, want string
	}{
		{"a", "2", "already there"},
		{"b", "", "empty"},
		{"", "x", "secret name"},
		{"1abc", "x", "secret name"},
		{"a b", "x", "secret name"},
		{"a/b", "x", "secret name"},
		{"GitHub", "x", "upper-case"},
		{"npm.token", "x", "secret name"},
		{strings.Repeat("a", 65), "x", "longer than 64"},
		{"c", strings.Repeat("x", maxValueSize+1), "more than"},
		{"c", "tok\r\nX-Injected: 1", "control character 0x0d at byte 3"},
		{"c", "tok\n", "control character 0x0a at byte 3"},
		{"c", "t\x00k", "control character 0x00 at byte 1"},
		{"c", "tok\x7f", "control character 0x7f"},
		// A header's value has no blank at its ends: Go trims it, and
		// the upstream got another value than the one stored.
		{"c", "tok ", "begins or ends with a blank"},
		{"c", " tok", "begins or ends with a blank"},
		{"c", "tok\t", "begins or ends with a blank"},
		{"c", "\ttok", "begins or ends with a blank"},
	} {
		if err := v.Add(c.name, []byte(c.value), now); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%q, %d bytes): %v, want %q", c.name, len(c.value), err, c.want)
		}
	}
	if err := v.Remove("nope"); err == nil || !strings.Contains(err.Error(), `no secret named "nope"`) {
		t.Errorf("Remove unknown: %v", err)
	}
	must(v.Remove("a"))
	if len(v.Secrets) != 0 {
		t.Errorf("after Remove: %+v", v.Secrets)
	}
	// Rekey: the old key no longer opens what is sealed next.
	must(v.Add("a", []byte("1"), now))
	newKey := pass(t, "new")
	v.rekey(newKey, cheap)
	b, err := v.Seal()
	must(err)
	if _, err := Open(b, pass(t, "p")); !errors.Is(err, ErrWrongKey) {
		t.Errorf("old key after rekey: %v", err)
	}
	if w, err := Open(b, newKey); err != nil || len(w.Secrets) != 1 {
		t.Errorf("new key after rekey: %v", err)
	}
	if _, err := Passphrase(nil); err == nil {
		t.Error("empty passphrase accepted")
	}
	if _, err := KeyFile(make([]byte, 31)); err == nil {
		t.Error("31-byte key file accepted")
	}
}

func TestVaultFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pinfold", "vault")
	if _, err := ReadFile(path); !errors.Is(err, ErrNoVault) {
		t.Errorf("missing vault: %v", err)
	}
	data := sealed(t, pass(t, "p"), "a")
	if err := WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, st.Mode().Perm(), want, err)
		}
	}
	// Replacing leaves no temporary file behind.
	if err := WriteFile(path, sealed(t, pass(t, "p"), "b")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("after replacing: %d files in the vault's directory, want 1", len(ents))
	}
	// Refused: a symlink, a file others may read, a directory.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("symlink: %v", err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("mode 0644: %v", err)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	keyPath := filepath.Join(dir, "key")
	if err := os.WriteFile(keyPath, make([]byte, 16), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(keyPath); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("short key file: %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	key, _ := Passphrase([]byte("p"))
	v := &Vault{}
	v.rekey(key, cheap)
	v.Add("a", []byte("1"), time.Unix(0, 0))
	b, _ := v.Seal()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Open(data, key)
		if err == nil && w.check() != nil {
			t.Errorf("opened a vault that fails its own checks")
		}
	})
}

// A FIFO, a file of another user, or a directory others may write is
// refused, and the FIFO at once (opening it must not wait for a writer).
// The control: the same vault at a proper path reads.
func TestVaultFileRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v", "vault")
	data := sealed(t, pass(t, "p"), "a")
	if err := WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatalf("control: %v", err)
	}
	// A directory above the vault's that others may write (no sticky
	// bit): they could swap the vault's directory for another.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "above the vault") {
		t.Errorf("a vault beneath a directory others may write: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO as the vault blocked")
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		if err := os.WriteFile(other, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(other); err == nil || !strings.Contains(err.Error(), "belongs to uid 1000") {
			t.Errorf("another user's file: %v", err)
		}
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(open, "vault"), data); err == nil || !strings.Contains(err.Error(), "others could replace the vault") {
		t.Errorf("world-writable directory: %v", err)
	}
	// Nor is a vault read from there: another user could have put an
	// older one back.
	if err := os.WriteFile(filepath.Join(open, "vault"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(filepath.Join(open, "vault")); err == nil || !strings.Contains(err.Error(), "others could replace the vault") {
		t.Errorf("a vault read from a world-writable directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing", "vault")); !errors.Is(err, ErrNoVault) {
		t.Errorf("no directory: %v, want ErrNoVault", err)
	}
}

// A passphrase vault opened with a lower argon2id cost than the default
// is resealed at the default: a weak setting does not outlive a change.
func TestVaultSealRaisesCost(t *testing.T) {
	key := pass(t, "p")
	v, err := Open(sealed(t, key, "a"), key) // sealed at the cheap cost
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Seal()
	if err != nil {
		t.Fatal(err)
	}
	got := KDFParams{Time: binary.BigEndian.Uint32(b[11:]), MemoryKiB: binary.BigEndian.Uint32(b[15:]), Threads: b[19]}
	if got != defaultKDF {
		t.Errorf("resealed at %+v, want %+v", got, defaultKDF)
	}
}

// A key file named by a descriptor (process substitution, <(cmd)) is
// refused as what it is, a pipe, with the way out; it was refused as "a
// symlink" (a hunt). A symlink elsewhere is still said to be one.
func TestReadKeyFileDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := ReadKeyFile(fd); err == nil || !strings.Contains(err.Error(), "is a descriptor (a pipe, as <(cmd) gives), not a file") {
		t.Errorf("%s: %v", fd, err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "key"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(link); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("a symlink: %v", err)
	}
}
