package session

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs"
)

// The watch on the git configs (configWatch) has news, for fs (FIONREAD
// on its copy of the descriptor), once anything happens in what it
// watches, and drain says whether it concerned a config: an edit in
// place, a config replaced by a rename, an included file or a person's
// ~/.gitconfig made where none was, a repository made (git init) in a
// workspace that had none. Files made beside them (git's lock files, a
// file in the workspace) are news that concerns no config; once
// drained, there is no news.
func TestConfigWatchSeesEdits(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	ws, bare := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ws, ".git/config"), "[include]\n\tpath = ../inc.gitconfig\n")
	w, err := newConfigWatch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fsCopy, err := w.File()
	if err != nil {
		t.Fatal(err)
	}
	defer fsCopy.Close()
	_, _, files := fs.GitConfigWatched([]string{ws, bare}, fs.MaxProtectedWalk)
	if fresh, notes := w.arm(files); !fresh || len(notes) > 0 {
		t.Fatalf("arm: fresh %v, notes %q (files %q)", fresh, notes, files)
	}
	news := func() bool {
		n, err := unix.IoctlGetInt(int(fsCopy.Fd()), unix.TIOCINQ)
		return err != nil || n > 0
	}
	for _, c := range []struct {
		what     string
		do       func()
		relevant bool
	}{
		{"nothing", func() {}, false},
		{"git's lock file beside the config", func() { write(filepath.Join(ws, ".git/index.lock"), "") }, false},
		{"a file in a workspace with a repository", func() { write(filepath.Join(ws, "notes.txt"), "") }, false},
		{"the config edited in place", func() {
			f, err := os.OpenFile(filepath.Join(ws, ".git/config"), os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString("[core]\n\thooksPath = hk\n")
				f.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the config replaced by a rename", func() {
			write(filepath.Join(ws, ".git/config.lock"), "[core]\n\thooksPath = hk2\n[include]\n\tpath = ../inc.gitconfig\n")
			if err := os.Rename(filepath.Join(ws, ".git/config.lock"), filepath.Join(ws, ".git/config")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the included file made", func() { write(filepath.Join(ws, "inc.gitconfig"), "[core]\n\tfsmonitor = x/y\n") }, true},
		{"~/.gitconfig made", func() { write(filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = /x\n") }, true},
		{"a file in the home directory", func() { write(filepath.Join(home, ".lesshst"), "") }, false},
		{"a file in a workspace without a repository", func() { write(filepath.Join(bare, "main.go"), "") }, false},
		{"git init there", func() { write(filepath.Join(bare, ".git/config"), "[core]\n\thooksPath = hk\n") }, true},
	} {
		c.do()
		if got := news(); got != (c.what != "nothing") {
			t.Errorf("%s: news %v", c.what, got)
		}
		if got := w.drain(); got != c.relevant {
			t.Errorf("%s: drain says it concerns a config: %v, want %v", c.what, got, c.relevant)
		}
		if news() {
			t.Errorf("%s: news after the drain", c.what)
		}
		// As refreshNamed does after a relevant event: the files read
		// now are watched (the rename's new config, the file made).
		_, _, files := fs.GitConfigWatched([]string{ws, bare}, fs.MaxProtectedWalk)
		w.arm(files)
	}
}
