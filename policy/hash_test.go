package policy

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHashMatchesSha256sum pins Hash to what the person runs by hand.
func TestHashMatchesSha256sum(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.toml")
	files = append(files, "testdata/invalid/text-binary-png.toml", "testdata/invalid/text-bom.toml")
	for _, f := range files {
		out, err := exec.Command("/usr/bin/sha256sum", f).Output()
		if err != nil {
			t.Fatalf("sha256sum %s: %v", f, err)
		}
		want, _, _ := strings.Cut(string(out), " ")
		data, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := Hash(data).String(); got != want {
			t.Errorf("Hash(%s) = %s, sha256sum says %s", f, got, want)
		}
		d, err := ParseDigest(want)
		if err != nil || d != Hash(data) || Verify(data, d) != nil {
			t.Errorf("%s: ParseDigest(%s) = %v, %v; Verify = %v", f, want, d, err, Verify(data, d))
		}
	}
}

func TestParseDigest(t *testing.T) {
	const hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" // sha256 of nothing
	const wrongLen = ` characters, want 64 hex digits (optionally prefixed by "sha256:")`
	const notHex = `pinned hash is not hexadecimal: want 64 hex digits (optionally prefixed by "sha256:")`
	tests := []struct {
		in, err string
	}{
		{hex, ""},
		{strings.ToUpper(hex), ""},
		{"sha256:" + hex, ""},
		{"sha256:" + strings.ToUpper(hex), ""},
		{"", "pinned hash is 0" + wrongLen},
		{"sha256:", "pinned hash is 0" + wrongLen},
		{hex[:63], "pinned hash is 63" + wrongLen},
		{hex + "0", "pinned hash is 65" + wrongLen},
		{"sha512:" + hex, "pinned hash is 71" + wrongLen},
		{"SHA256:" + hex, "pinned hash is 71" + wrongLen},
		{"sha256:sha256:" + hex, "pinned hash is 71" + wrongLen},
		{" " + hex[1:], notHex},
		{hex[:63] + "g", notHex},
		{hex[:62] + "\n", "pinned hash is 63" + wrongLen},
		{hex[:63] + "\n", notHex},
		{strings.Repeat("é", 32), notHex}, // 64 bytes, not 64 digits
	}
	for _, tt := range tests {
		d, err := ParseDigest(tt.in)
		if tt.err == "" {
			if err != nil || d.String() != hex {
				t.Errorf("ParseDigest(%q) = %s, %v; want %s", tt.in, d, err, hex)
			}
			continue
		}
		if err == nil || err.Error() != tt.err {
			t.Errorf("ParseDigest(%q) error = %v, want %s", tt.in, err, tt.err)
		}
	}
}

func TestVerify(t *testing.T) {
	data, err := os.ReadFile("testdata/valid/offline.toml")
	if err != nil {
		t.Fatal(err)
	}
	pin := Hash(data)
	if err := Verify(append([]byte(nil), data...), pin); err != nil {
		t.Errorf("Verify of the same bytes: %v", err)
	}
	for _, i := range []int{0, len(data) / 2, len(data) - 1} {
		changed := append([]byte(nil), data...)
		changed[i] ^= 1
		err := Verify(changed, pin)
		if !errors.Is(err, ErrHashMismatch) {
			t.Errorf("Verify with byte %d changed = %v, want ErrHashMismatch", i, err)
			continue
		}
		// The error names neither digest: the person computes the hash.
		if s := err.Error(); strings.Contains(s, pin.String()) || strings.Contains(s, Hash(changed).String()) {
			t.Errorf("Verify error carries a digest: %s", s)
		}
	}
	if err := Verify(append(data, '\n'), pin); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("Verify with a byte appended = %v, want ErrHashMismatch", err)
	}
	if err := Verify(nil, Hash(nil)); err != nil {
		t.Errorf("Verify(nil, Hash(nil)) = %v", err)
	}
	// A pin that differs from the digest in one bit of any byte is a
	// mismatch: every byte of the pin is compared, not a prefix.
	for i := range len(pin) {
		near := pin
		near[i] ^= 0x01
		if err := Verify(data, near); !errors.Is(err, ErrHashMismatch) {
			t.Errorf("Verify with byte %d of the pin changed = %v, want ErrHashMismatch", i, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	sized := func(name string, size int64) string {
		t.Helper()
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil { // sparse
			t.Fatal(err)
		}
		return p
	}
	big := sized("big.toml", MaxFileSize+1)
	tests := []struct {
		name, path, err string
		notExist        bool
	}{
		{name: "directory", path: dir, err: "read policy " + dir + ": not a regular file but a directory"},
		{name: "fifo", path: fifo, err: "read policy " + fifo + ": not a regular file but a FIFO"},
		{name: "/dev/zero", path: "/dev/zero", err: "read policy /dev/zero: not a regular file but a character device"},
		{name: "over MaxFileSize", path: big, err: "read policy " + big + ": the file is 1048577 bytes, over the 1048576-byte limit: is this the policy?"},
		{name: "missing", path: filepath.Join(dir, "nope"), err: "read policy: open " + dir + "/nope: no such file or directory", notExist: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A FIFO or device must be refused without blocking on it.
			done := make(chan error, 1)
			go func() {
				_, err := ReadFile(tt.path)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadFile(%s) blocked", tt.path)
			}
			if err == nil || err.Error() != tt.err {
				t.Fatalf("ReadFile(%s) = %v, want %s", tt.path, err, tt.err)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v, want %v", got, tt.notExist)
			}
		})
	}

	// Control: exactly MaxFileSize bytes, and a regular small file, are read whole.
	data, err := ReadFile(sized("max.toml", MaxFileSize))
	if err != nil || len(data) != MaxFileSize {
		t.Errorf("ReadFile of MaxFileSize bytes = %d bytes, %v", len(data), err)
	}
	want, _ := os.ReadFile("testdata/valid/ports.toml")
	if got, err := ReadFile("testdata/valid/ports.toml"); err != nil || string(got) != string(want) {
		t.Errorf("ReadFile(ports.toml) = %q, %v", got, err)
	}
	// A symlink to a regular file is followed (the CLI names the file).
	link := filepath.Join(dir, "link.toml")
	if err := os.Symlink(filepath.Join(dir, "max.toml"), link); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(link); err != nil || len(data) != MaxFileSize {
		t.Errorf("ReadFile through a symlink = %d bytes, %v", len(data), err)
	}
}
