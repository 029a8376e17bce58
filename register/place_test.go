package register

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checks refuse at once, saying where to put the binary, when no
// sandbox could run it where it is: from /tmp or /dev/shm themselves, or
// (as root, the agent under a throwaway uid) behind a directory others
// cannot search or as a file others cannot run. Each check reported
// "inconclusive" instead, with a reason of a hint alone.
func TestRunnableThere(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "pinfold-place-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	open := filepath.Join(dir, "open")
	shut := filepath.Join(dir, "shut")
	for _, d := range []string{open, shut} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Chmod(dir, 0o755))
	must(t, os.Chmod(shut, 0o700))
	bin := filepath.Join(open, "launcher")
	hidden := filepath.Join(shut, "launcher")
	private := filepath.Join(open, "private")
	for _, p := range []string{bin, hidden} {
		must(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	}
	must(t, os.WriteFile(private, []byte("#!/bin/sh\n"), 0o700))
	for _, c := range []struct {
		path string
		root bool
		why  string // "" for none
	}{
		{bin, true, ""},
		{bin, false, ""},
		{hidden, true, shut + " is not searchable by other users"},
		{hidden, false, ""},
		{private, true, "not executable by other users"},
		{"/tmp/launcher", false, "/tmp is a directory every sandbox replaces"},
		{"/dev/shm/launcher", true, "/dev/shm is a directory every sandbox replaces"},
		// The checks' workspaces are beneath /var/tmp, and a write path
		// beneath an exec path is refused: every check was inconclusive.
		{"/var/tmp/launcher", false, "/var/tmp holds the checks' workspaces"},
		{"/var/launcher", true, "/var holds the checks' workspaces"},
		{"/launcher", false, "/ holds the checks' workspaces"},
		{"/var/tmpx/launcher", true, "no such file"},
		// A directory whose name only begins as one above it does is not.
		{"/var/t/launcher", false, ""},
		{filepath.Join(open, "gone"), true, "no such file"},
	} {
		err := runnableThere(c.path, c.root)
		var pe *PlaceError
		switch {
		case c.why == "" && err != nil:
			t.Errorf("%s (root %v): %v", c.path, c.root, err)
		case c.why != "" && (!errors.As(err, &pe) || !strings.Contains(err.Error(), c.why)):
			t.Errorf("%s (root %v): got %v, want an error saying %q", c.path, c.root, err, c.why)
		case pe != nil && !strings.Contains(pe.Hint(), "install -m 755 "+c.path):
			t.Errorf("%s: hint %q", c.path, pe.Hint())
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
