package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs"
)

// The watch on the git configs (configWatch) has events waiting, for fs
// (FIONREAD on its copy of the descriptor), once anything happens in
// what it watches, and fs (fs.ConfigNews, told the watch's names) takes
// them to concern a config for an edit in place, a config replaced by a
// rename, an included file or a person's ~/.gitconfig made where none
// was, a repository made (git init) in a workspace that had none. Files
// made beside them (git's lock files, a file in the workspace or the
// home directory, a file in a watched directory with a name that leads
// to a config in another: config beside a .git to be) concern no
// config; once fs has read them, none wait.
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
	waiting := func() bool {
		n, err := unix.IoctlGetInt(int(fsCopy.Fd()), unix.TIOCINQ)
		return err != nil || n > 0
	}
	news := fs.NewConfigNews(int(fsCopy.Fd()), w.watched())
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
		// The workspace root is watched for .git alone: config there is
		// the name of a config only in ws/.git (the agent writing it in a
		// loop had each write read every config of the workspace again).
		{"a file named config where .git is watched for", func() { write(filepath.Join(bare, "config"), "") }, false},
		{"a file named config renamed into place there", func() {
			write(filepath.Join(bare, "config.tmp"), "x")
			if err := os.Rename(filepath.Join(bare, "config.tmp"), filepath.Join(bare, "config")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a file named .gitconfig in the workspace", func() { write(filepath.Join(bare, ".gitconfig"), "") }, false},
		{"git init there", func() { write(filepath.Join(bare, ".git/config"), "[core]\n\thooksPath = hk\n") }, true},
	} {
		c.do()
		if got := waiting(); got != (c.what != "nothing") {
			t.Errorf("%s: events waiting %v", c.what, got)
		}
		if got := news.Stale(); got != c.relevant {
			t.Errorf("%s: fs takes it to concern a config: %v, want %v", c.what, got, c.relevant)
		}
		if waiting() {
			t.Errorf("%s: events waiting after fs read them", c.what)
		}
		// As a recheck does: the files read now are watched (the
		// rename's new config, the file made), fs told their names.
		news.Read(func() (_, _, _ []string, _ error) {
			_, _, files := fs.GitConfigWatched([]string{ws, bare}, fs.MaxProtectedWalk)
			w.arm(files)
			return nil, nil, w.watched(), nil
		})
	}
}

// Past maxWatchedNames names per directory, fs is told each name for
// every directory watched (fs.AnyWatch): a file named config where only
// .git leads to a config concerns one again, asked more often but
// within the answer's bound, and an edit of a config still does.
func TestConfigWatchTooManyNames(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	ws, bare := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git/config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
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
	w.arm(files)
	defer func(n int) { maxWatchedNames = n }(maxWatchedNames)
	maxWatchedNames = 2
	names := w.watched()
	if !slices.Contains(names, fs.WatchedName(fs.AnyWatch, "config")) || !slices.Contains(names, fs.WatchedName(fs.AnyWatch, ".git")) {
		t.Fatalf("names %q: want each for any directory", names)
	}
	news := fs.NewConfigNews(int(fsCopy.Fd()), names)
	if err := os.WriteFile(filepath.Join(bare, "config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !news.Stale() {
		t.Errorf("config made where .git is watched for: not taken to concern a config with the names for any directory")
	}
}
