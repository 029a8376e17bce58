package site

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// verifyWithin runs Verify and fails the test if it has not returned
// after a few seconds; it then calls before and opens each of fifos for
// writing, which lets an open blocked on one return.
func verifyWithin(t *testing.T, dir string, sum [sha256.Size]byte, before func(), fifos ...string) ([]Problem, error, bool) {
	t.Helper()
	type result struct {
		p   []Problem
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := Verify(dir, sum)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.p, r.err, true
	case <-time.After(5 * time.Second):
		t.Errorf("Verify(%s) has not returned after 5 s: blocked on a FIFO", dir)
		before()
		for _, f := range fifos {
			if w, err := os.OpenFile(f, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		<-done
		return nil, nil, false
	}
}

// A manifest.json that is a FIFO, a link (to a file outside the site with
// the very bytes pinned) or a directory is refused as not a regular
// file, at once. Control: the same bytes as a regular file verify.
func TestVerifyManifestOpenedOnce(t *testing.T) {
	man := []byte(`{"version":1,"files":{}}`)
	sum := sha256.Sum256(man)
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(outside, man, 0o644)
	for _, c := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"a FIFO", "not a regular file", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"a link out of the site", "not a regular file (a symbolic link)", func(p string) error { return os.Symlink(outside, p) }},
		{"a directory", "not a regular file", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"a regular file (control)", "", func(p string) error { return os.WriteFile(p, man, 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			p := filepath.Join(d, ManifestName)
			if err := c.make(p); err != nil {
				t.Fatal(err)
			}
			problems, err, ok := verifyWithin(t, d, sum, func() {}, p)
			if !ok {
				return
			}
			if c.want == "" {
				if err != nil || len(problems) != 0 {
					t.Errorf("%v %v", problems, err)
				}
				return
			}
			if err == nil || !strings.HasSuffix(err.Error(), `manifest.json": `+c.want) {
				t.Errorf("want an error ending %q, got %v (problems %v)", c.want, err, problems)
			}
		})
	}
}

// A listed file swapped, again and again, with a FIFO or with a link to a
// file outside the site (renameat2 RENAME_EXCHANGE, atomic) while Verify
// runs: each run returns, and says only that the file is not a regular
// file. Checking the file and then opening its name again would now and
// then block on the FIFO, or read the outside file and call it changed.
func TestVerifySwappedFile(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, partner := range []string{"fifo", "link"} {
		t.Run(partner, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "site")
			sum, err := Write(d, files)
			if err != nil {
				t.Fatal(err)
			}
			listed := filepath.Join(d, "style.css")
			other := filepath.Join(t.TempDir(), "partner")
			if partner == "fifo" {
				err = unix.Mkfifo(other, 0o644)
			} else {
				evil := filepath.Join(t.TempDir(), "evil.css")
				os.WriteFile(evil, []byte("body{display:none}"), 0o644)
				err = os.Symlink(evil, other)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.Renameat2(unix.AT_FDCWD, listed, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
				if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
					t.Fatalf("renameat2 RENAME_EXCHANGE: %v", err)
				}
				t.Skipf("needs renameat2 RENAME_EXCHANGE on the temp directory's file system, have: %v", err)
			}
			stop, stopped := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(stopped)
				for {
					select {
					case <-stop:
						return
					default:
						unix.Renameat2(unix.AT_FDCWD, listed, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
					}
				}
			}()
			halt := func() {
				select {
				case <-stop:
				default:
					close(stop)
					<-stopped
				}
			}
			defer halt()
			for i := 0; i < 400; i++ {
				problems, err, ok := verifyWithin(t, d, sum, halt, listed, other)
				if !ok {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range problems {
					if !strings.HasPrefix(p.String(), `"style.css": not a regular file`) {
						t.Fatalf("run %d: %s", i, p)
					}
				}
			}
		})
	}
}
