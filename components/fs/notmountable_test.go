package fs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// notMountable says why each path a config names cannot be mounted
// read-only as what it is named as: a directory (core.hooksPath) must be
// one, a program a regular file with one name, by a path of real
// directories, inside the write paths and holding none of them.
func TestNotMountable(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"hooks/": "", "prog": "x", "twice": "x", "sub/": "", "real/prog": "x"})
	must(t, os.Link(filepath.Join(ws, "twice"), filepath.Join(ws, "twice2")))
	must(t, syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644))
	must(t, os.Symlink("prog", filepath.Join(ws, "link")))
	must(t, os.Symlink("real", filepath.Join(ws, "via")))
	dirs := []string{ws, filepath.Join(ws, "sub", "w")}
	for _, c := range []struct {
		path string
		dir  bool
		want string // "" when it can be mounted
	}{
		{"hooks", true, ""},
		{"prog", false, ""},
		{"missing", false, "does not exist"},
		{"sub", true, "is a write path or holds one"},
		{"link", false, "is a symbolic link"},
		{"via/prog", false, "is reached through a symbolic link"},
		{"prog", true, "is not a directory"},
		{"hooks", false, "is not a regular file"},
		{"fifo", false, "is not a regular file"},
		{"twice", false, "has 2 names"},
	} {
		got := notMountable(filepath.Join(ws, c.path), c.dir, dirs)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s (dir %v): %q, want %q", c.path, c.dir, got, c.want)
		}
	}
}
