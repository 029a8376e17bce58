package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The question for a git config's write says what of it git runs or
// reads, wherever it stands: the question shows only a write's first
// lines, and a core.hooksPath at the end of a long config is what the
// person says yes to.
func TestQuestionSaysConfig(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.ws, ".git", "hooks"), 0o755))
	var asked []string
	w.root.Approve = func(action, _ string) (bool, string) {
		asked = append(asked, action)
		return false, "declined"
	}
	cfg := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[user]\n\tname = A Person\n\temail = a@example.com\n" +
		"[remote \"origin\"]\n\turl = ../upstream\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
		"[core]\n\thooksPath = .githooks\n[alias]\n\tst = !sh tools/x\n[include]\n\tpath = ../x.gitconfig\n"
	for _, c := range []struct {
		path, data string
		want, not  []string
	}{
		{".git/config", cfg,
			[]string{`core.hooksPath = ".githooks"`, `alias.st = "!sh tools/x"`, `include.path = "../x.gitconfig"`, `remote.origin.url = "../upstream"`},
			[]string{"user.name", "filemode", "fetch", "repositoryformatversion"}},
		{".git/config", "[core\n", []string{"git would not read it as a config (line 1"}, nil},
		{".git/config", "[core]\n\tfilemode = true\n", nil, []string{"among what git runs"}},
		{".git/hooks/pre-commit", cfg, nil, []string{"among what git runs", "would not read"}},
	} {
		n := len(asked)
		if err := w.root.Write(c.path, []byte(c.data), false); KindOf(err) != KindProtected || len(asked) != n+1 {
			t.Fatalf("write %s: %v, asked %q", c.path, err, asked[n:])
		}
		// What the list says, past the write's first lines.
		q := strings.Replace(asked[n], beginning([]byte(c.data)), "", 1)
		for _, s := range c.want {
			if !strings.Contains(q, s) {
				t.Errorf("the question for %s does not say %s: %s", c.path, s, q)
			}
		}
		for _, s := range c.not {
			if strings.Contains(q, s) {
				t.Errorf("the question for %s says %s: %s", c.path, s, q)
			}
		}
	}
	for _, p := range []string{"notes/config", "x.gitconfig", "sub/.gitconfig", "bare.git/config", "a/.git/worktrees/w/config.worktree"} {
		got := configSays(p, []byte("[core]\n\tfsmonitor = tools/m\n"))
		if want := strings.HasSuffix(p, "gitconfig") || strings.Contains(p, ".git/") || strings.HasPrefix(p, "bare.git/"); (got != "") != want {
			t.Errorf("configSays(%s) = %q, want said: %v", p, got, want)
		}
	}
}

// What a write's question says of a config (configSays) parses the
// written data as git config: a third of a second for a MiB of short
// variables, a hundred times the write. It was worked out for every
// write to a config's name, x.gitconfig included, which is no protected
// path and asks nobody, and for every refused write of .git/config with
// nobody to ask: an agent could make fs spend that as often as it
// liked. It is worked out only when the person is asked.
func TestWriteQuestionOnlyWhenAsked(t *testing.T) {
	parsed := 0
	defer func(f func(string, []byte) string) { sayConfig = f }(sayConfig)
	sayConfig = func(p string, data []byte) string { parsed++; return configSays(p, data) }
	w := newWorld(t)
	big := bytes.Repeat([]byte("[s]\nk=v\n"), MaxData/8)
	wantOK(t, "write x.gitconfig", w.root.Write("x.gitconfig", big, false))
	wantOK(t, "write x.git.gitconfig", w.root.Write("x.git.gitconfig", big, false))
	wantKind(t, "write .git/config, nobody to ask", w.root.Write(".git/config", big, false), KindProtected)
	if parsed != 0 {
		t.Errorf("the data was parsed for a question %d times, and no question was asked", parsed)
	}
	// Control: asked, the question says what the config sets.
	var asked string
	w.root.Approve = func(action, detail string) (bool, string) { asked = action; return false, "no" }
	wantKind(t, "write .git/config, asked", w.root.Write(".git/config", []byte("[core]\n\tfsmonitor = tools/m\n"), false), KindProtected)
	if parsed != 1 || !strings.Contains(asked, `core.fsmonitor = "tools/m"`) {
		t.Errorf("asked %q, parsed %d times; want the fsmonitor said, parsed once", asked, parsed)
	}
}
