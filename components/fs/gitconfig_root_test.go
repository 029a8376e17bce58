package fs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// gitRoot resolves a repository's relative values where git does: the
// last core.worktree (relative to the git directory), the parent of a
// .git, the worktree its gitdir file names, or a bare repository itself.
func TestGitRoot(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"linked/gitdir": dir + "/wt/.git\n",
		"rel/gitdir":    "../wt2/.git\n",
		"bare.git/":     "",
	})
	wt := func(v string) gitVar { return gitVar{section: "core", key: "worktree", value: v} }
	for _, c := range []struct {
		name, g string
		vars    []gitVar
		want    string
	}{
		{"the last core.worktree", dir + "/x/.git", []gitVar{wt("/first"), wt("../second")}, dir + "/x/second"},
		{"an absolute core.worktree", dir + "/bare.git", []gitVar{wt("/abs/tree/")}, "/abs/tree"},
		{"a subsection's worktree is none", dir + "/x/.git", []gitVar{{section: "core", sub: "s", key: "worktree", value: "/no"}}, dir + "/x"},
		{"a .git's parent", dir + "/x/.GIT", nil, dir + "/x"},
		{"a linked worktree", dir + "/linked", nil, dir + "/wt"},
		{"a linked worktree, relative", dir + "/rel", nil, dir + "/wt2"},
		{"a bare repository", dir + "/bare.git", nil, dir + "/bare.git"},
	} {
		if got := gitRoot(c.g, c.vars); got != c.want {
			t.Errorf("%s: gitRoot = %q, want %q", c.name, got, c.want)
		}
	}
}

// cfgVar is section.key = value as read from a config file /cfg.
func cfgVar(section, key, value string) gitVar {
	return gitVar{section: section, key: key, value: value, name: section + "." + key, file: "/cfg"}
}

// valuesNamed takes a value's first word when it holds a slash and is no
// URL or ref (a colon alone, as in a path, is no URL), an alias's leading
// ! dropped, ~/ as home, relative ones in root.
func TestValuesNamed(t *testing.T) {
	v := cfgVar
	got, _ := valuesNamed([]gitVar{
		v("core", "fsmonitor", "tools/fs:mon --x"),
		v("alias", "z", "  !bin/z arg"),
		v("core", "sshcommand", "~/bin/ssh -v"),
		v("http", "proxy", "http://proxy/x"),
		v("notes", "rewriteref", "refs/notes/x"),
		v("core", "pager", "less -R"),
		v("core", "hookspath", "my hooks"),
		v("remote", "url", "../up.git"),
		v("diff", "textconv", "rules/conv"),
		v("gpg", "program", "~"),
	}, "/root", &expander{home: "/home/p"})
	var paths []string
	for _, n := range got {
		paths = append(paths, n.path)
	}
	want := []string{"/root/tools/fs:mon", "/root/bin/z", "/home/p/bin/ssh", "/root/my hooks", "/root/rules/conv"}
	if !slices.Equal(paths, want) {
		t.Errorf("named %q, want %q", paths, want)
	}
	if len(got) == 5 && (!got[3].dir || got[0].dir) {
		t.Errorf("core.hooksPath alone is a directory: %+v", got)
	}
	if got, _ := valuesNamed([]gitVar{v("core", "fsmonitor", "tools/x")}, "", &expander{}); len(got) != 0 {
		t.Errorf("a relative value with no root: %+v", got)
	}
	// ~ alone is home (a core.hooksPath of ~ is the person's home).
	if got, _ := valuesNamed([]gitVar{v("core", "hookspath", "~")}, "/root", &expander{home: "/home/p"}); len(got) != 1 || got[0].path != "/home/p" {
		t.Errorf("~ alone: %+v", got)
	}
}

// git expands ~user (getpwnam) and a leading %(prefix)/ (its install
// prefix, /usr for Debian's git 2.39: git config --type=path says
// /usr/x for %(prefix)/x, /root/x for ~root/x, and fails on
// ~nosuchuser/x) in a pathname value (core.hooksPath, include.path,
// core.fsmonitor, which it then runs), and sh expands ~user in a word:
// each was taken for a path in the working tree (/root/~bob/hooks). A
// user /etc/passwd does not hold is not known, and said, never taken for
// nothing. git 2.39 runs gpg.program as written (a ~ of the working tree).
func TestValuesNamedUserAndPrefix(t *testing.T) {
	dir := t.TempDir()
	passwd := dir + "/passwd"
	must(t, os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/sh\nbob:x:1000:1000:Bob,,,:/home/bob:/bin/sh\nbob:x:1001:1001::/second:/bin/sh\nbroken:line\n"), 0o644))
	oldPasswd, oldPrefixes := passwdFile, gitPrefixes
	passwdFile, gitPrefixes = passwd, func() []string { return []string{"/usr", "/opt/git"} }
	t.Cleanup(func() { passwdFile, gitPrefixes = oldPasswd, oldPrefixes })
	v := cfgVar
	x := &expander{home: "/home/p"}
	got, notes := valuesNamed([]gitVar{
		v("core", "hookspath", "~bob/hooks"),
		v("core", "fsmonitor", "~bob/bin/mon --x"),
		v("core", "sshcommand", "env ~root/ssh"),
		v("core", "hookspath", "~bob"),
		v("core", "hookspath", "%(prefix)/share/hooks"),
		v("core", "fsmonitor", "%(prefix)/bin/mon --x"),
		v("core", "hookspath", "~nobody/hooks"),
		v("core", "pager", "less ~broken/x"),
		v("gpg", "program", "~/bin/gpg"),
	}, "/root", x)
	var paths []string
	for _, n := range got {
		paths = append(paths, n.path)
	}
	want := []string{"/home/bob/hooks", "/home/bob/bin/mon", "/root/ssh", "/home/bob", "/usr/share/hooks", "/opt/git/share/hooks",
		"/usr/bin/mon", "/opt/git/bin/mon", "/root/~/bin/gpg", "/home/p/bin/gpg"}
	if !slices.Equal(paths, want) {
		t.Errorf("named %q\nwant %q", paths, want)
	}
	if want := []string{
		"core.hookspath in /cfg names ~nobody/hooks (the home of ~nobody is not known: no such user in " + passwd + ": what it names is not covered)",
		"core.pager in /cfg names ~broken/x (the home of ~broken is not known: no such user in " + passwd + ": what it names is not covered)",
	}; !slices.Equal(notes, want) {
		t.Errorf("notes %q\nwant %q", notes, want)
	}
	// A user database that cannot be read is said as such.
	passwdFile = dir + "/missing"
	if _, notes := valuesNamed([]gitVar{v("core", "hookspath", "~bob/hooks")}, "/root", &expander{}); len(notes) != 1 ||
		!strings.Contains(notes[0], "the home of ~bob is not known: "+dir+"/missing not read: open "+dir+"/missing: no such file or directory") {
		t.Errorf("an unreadable passwd: notes %q", notes)
	}
	// A config naming many is said in bounded length, the rest counted.
	var many []gitVar
	for i := range 1000 {
		many = append(many, v("core", "hookspath", fmt.Sprintf("~u%d/hooks", i)))
	}
	x = &expander{}
	if _, notes := valuesNamed(many, "/root", x); len(notes) != maxNamedSaid || x.more != 1000-maxNamedSaid {
		t.Errorf("1000 users not known: %d notes, %d more", len(notes), x.more)
	}
}

// A linked worktree's git directory in the write paths, its checkout
// elsewhere: its own config.worktree is read (found by its commondir,
// though it has no config of its own); and with no repository at all in
// or above the write paths, the person's global configs still name what
// lies there, each path once though named twice, a path beside it kept.
func TestGitConfigNamedWorktreeConfigAndNoRepository(t *testing.T) {
	gitTestHome(t)
	ws, outside := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config":                       "[core]\n",
		".git/worktrees/wt/HEAD":            "x",
		".git/worktrees/wt/commondir":       "../..\n",
		".git/worktrees/wt/gitdir":          outside + "/wt/.git\n",
		".git/worktrees/wt/config.worktree": "[core]\n\thooksPath = " + ws + "/wthooks\n",
	})
	if got, _ := GitConfigNamedIn([]string{ws}, MaxProtectedWalk); !slices.Contains(got, ws+"/wthooks") {
		t.Errorf("config.worktree: named %q", got)
	}
	lone := t.TempDir()
	home := os.Getenv("HOME")
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\tfsmonitor = " + lone + "/fsmon\n[diff \"a\"]\n\ttextconv = " + lone + "/fsmon\n[diff \"b\"]\n\ttextconv = " + lone + "/fsmon2\n"})
	if got, _ := GitConfigNamedIn([]string{lone}, MaxProtectedWalk); !slices.Equal(got, []string{lone + "/fsmon", lone + "/fsmon2"}) {
		t.Errorf("no repository: named %q", got)
	}
}
