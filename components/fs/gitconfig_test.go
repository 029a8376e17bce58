package fs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The config reader takes git's syntax as git does, and refuses what it
// cannot read rather than take it for a file that names nothing.
func TestParseGitConfig(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string // section|sub|key=value, or key! for no value
		err      string
	}{
		{"section and key", "[core]\n\thooksPath = .githooks\n", []string{"core||hookspath=.githooks"}, ""},
		{"names fold case", "[CoRe]\nHooksPATH=x", []string{"core||hookspath=x"}, ""},
		{"subsection kept as written", "[diff \"Tool\"]\n  textconv = ./conv\n", []string{"diff|Tool|textconv=./conv"}, ""},
		{"subsection escapes", "[a \"x\\\"y\\\\z\\q\"]\nk=v\n", []string{"a|x\"y\\zq|k=v"}, ""},
		{"old subsection folds", "[Diff.Tool]\nk = v\n", []string{"diff|tool|k=v"}, ""},
		{"no value", "[core]\n\tbare\n\tk = \n", []string{"core||bare!", "core||k="}, ""},
		{"blanks", "[a]\nk =  x \t y   \n", []string{"a||k=x   y"}, ""},
		{"quotes", "[a]\nk = \"x # y\" z ; c\n", []string{"a||k=x # y z"}, ""},
		{"escapes", "[a]\nk = \"q\\\"b\\\\n\\nt\\tb\\b\"\n", []string{"a||k=q\"b\\n\nt\tb\b"}, ""},
		{"comments", "# c\n; c\n[a] # c\nk = v # c\nj = v;c\n", []string{"a||k=v", "a||j=v"}, ""},
		{"continuation", "[a]\nk = ab\\\n  cd\n", []string{"a||k=ab  cd"}, ""},
		{"key on the header's line", "[core] fsmonitor = x\n", []string{"core||fsmonitor=x"}, ""},
		{"CRLF and BOM", "\xef\xbb\xbf[a]\r\nk = v\r\n", []string{"a||k=v"}, ""},
		{"no final newline", "[a]\nk = \"v\"", []string{"a||k=v"}, ""},
		// git's isspace has \r: one not in a CRLF is a blank, so a
		// trailing one is dropped, not part of the path.
		{"a lone CR is a blank", "[core]\r\thooksPath = .githooks\r\r\n\tk = a\rb\n", []string{"core||hookspath=.githooks", "core||k=a b"}, ""},
		{"a quoted CR is kept", "[a]\nk = \"x\r\"\n", []string{"a||k=x\r"}, ""},
		// git hands a value on as a C string.
		{"a NUL ends a value", "[core]\nhooksPath = .githooks\x00x\n", []string{"core||hookspath=.githooks"}, ""},
		{"names with digits and dashes", "[my-Tool2]\nmy-Cmd2 = !./x\n", []string{"my-tool2||my-cmd2=!./x"}, ""},
		{"a variable before a section", "k = v\n", nil, "before any section"},
		{"unclosed header", "[core\nk = v\n", nil, "malformed section header"},
		{"unclosed subsection", "[a \"x]\nk = v\n", nil, "unclosed subsection"},
		{"junk after subsection", "[a \"x\" ]\n", nil, "not followed by ]"},
		{"empty header", "[]\n", nil, "no name"},
		{"unclosed quote", "[a]\nk = \"v\n", nil, "unclosed quote"},
		{"unknown escape", "[a]\nk = \\q\n", nil, "unknown escape"},
		{"junk after a name", "[a]\nk v\n", nil, "after the name"},
		{"a comment after a name alone", "[a]\nk # c\n", nil, "after the name"},
		{"a name not starting with a letter", "[a]\n1k = v\n", nil, "line 2: unexpected text"},
		{"plain text", "x", nil, "before any section"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vars, err := parseGitConfig([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q (vars %v)", err, c.err, vars)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vars {
				s := v.section + "|" + v.sub + "|" + v.key
				if v.noValue {
					s += "!"
				} else {
					s += "=" + v.value
				}
				got = append(got, s)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
			// And as git itself reads it, where git is installed.
			if want, ok := gitConfigList(t, c.in); ok {
				var list strings.Builder
				for _, v := range vars {
					list.WriteString(v.section + ".")
					if v.sub != "" {
						list.WriteString(v.sub + ".")
					}
					list.WriteString(v.key)
					if !v.noValue {
						list.WriteString("=" + v.value)
					}
					list.WriteString("\n")
				}
				if list.String() != want {
					t.Errorf("read as %q, git reads %q", list.String(), want)
				}
			}
		})
	}
}

// gitConfigList is what git config --list says of a file holding text
// (ok false where git is not installed).
func gitConfigList(t *testing.T, text string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return "", false
	}
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "config", "--file", f, "--list").Output()
	if err != nil {
		t.Fatalf("git config --list: %v", err)
	}
	return string(out), true
}

// Includes are read whatever includeIf's condition, relative to the
// including file (~/ is $HOME), and recorded as named files; what cannot
// be read (malformed, too large, a FIFO, past the depth or a cycle) is a
// note naming the file, never a silent pass. A missing include is
// nothing to git, and nothing here.
func TestGitConfigReaderIncludes(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(dir, "repo/.git/config"), "[include]\n\tpath = ../../shared.gitconfig\n[includeIf \"onbranch:x\"]\n\tpath = ~/home.inc\n[include]\n\tpath = missing\n")
	write(filepath.Join(dir, "shared.gitconfig"), "[core]\n\tfsmonitor = tools/fsmon\n[include]\n\tpath = sub/bad\n\tpath = big\n\tpath = fifo\n")
	write(filepath.Join(dir, "sub/bad"), "[core\n")
	write(filepath.Join(dir, "big"), "[a]\n"+strings.Repeat("#", maxGitConfigSize))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	write(filepath.Join(home, "home.inc"), "[alias]\n\tz = !tools/z\n")
	r := &cfgReader{x: expander{home: home}}
	r.read(filepath.Join(dir, "repo/.git/config"), 0)
	var vals, incs []string
	for _, v := range r.vars {
		vals = append(vals, v.name+"="+v.value)
	}
	for _, n := range r.includes {
		incs = append(incs, n.path)
	}
	if want := []string{"include.path=../../shared.gitconfig", "core.fsmonitor=tools/fsmon", "include.path=sub/bad", "include.path=big", "include.path=fifo",
		"includeIf.onbranch:x.path=~/home.inc", "alias.z=!tools/z", "include.path=missing"}; !slices.Equal(vals, want) {
		t.Errorf("vars %q\nwant %q", vals, want)
	}
	if want := []string{dir + "/shared.gitconfig", dir + "/sub/bad", dir + "/big", dir + "/fifo", home + "/home.inc", dir + "/repo/.git/missing"}; !slices.Equal(incs, want) {
		t.Errorf("includes %q\nwant %q", incs, want)
	}
	if len(r.notes) != 3 || !strings.Contains(r.notes[0], dir+"/sub/bad (not read: line 1: a malformed section header") ||
		!strings.Contains(r.notes[1], dir+"/big (larger than 1048576 bytes") || !strings.Contains(r.notes[2], dir+"/fifo (not a regular file") {
		t.Errorf("notes %q", r.notes)
	}
	for _, n := range r.notes {
		if !strings.HasSuffix(n, ": the programs and includes it names are not covered)") {
			t.Errorf("a note does not say what is not covered: %q", n)
		}
	}

	// Past git's depth of includes: a chain of 12 files, and a cycle.
	for i := range 12 {
		write(filepath.Join(dir, fmt.Sprintf("chain/%d", i)), fmt.Sprintf("[include]\n\tpath = %d\n", i+1))
	}
	r = &cfgReader{}
	r.read(filepath.Join(dir, "chain/0"), 0)
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], dir+"/chain/11 (included more than 10 deep") {
		t.Errorf("chain: notes %q", r.notes)
	}
	write(filepath.Join(dir, "cycle/a"), "[include]\n\tpath = b\n")
	write(filepath.Join(dir, "cycle/b"), "[include]\n\tpath = a\n")
	r = &cfgReader{}
	r.read(filepath.Join(dir, "cycle/a"), 0)
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "included more than 10 deep") || r.files != 11 {
		t.Errorf("cycle: %d files, notes %q", r.files, r.notes)
	}
	// Past the bytes one walk reads: a file of 1 MiB including itself
	// over and over, within the bounds of depth and files.
	write(filepath.Join(dir, "wide"), strings.Repeat("[include]\n\tpath = wide\n", maxGitConfigSize/30))
	r = &cfgReader{}
	r.read(filepath.Join(dir, "wide"), 0)
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], dir+"/wide (past the 8388608 bytes of config read, as any after it") || r.bytes > maxGitConfigBytes+maxGitConfigSize {
		t.Errorf("wide: %d files, %d bytes, notes %q", r.files, r.bytes, r.notes)
	}
	// And past the number of files one walk reads, said once.
	r = &cfgReader{files: maxGitConfigFiles}
	r.read(filepath.Join(dir, "cycle/a"), 0)
	r.read(filepath.Join(dir, "chain/0"), 0)
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], fmt.Sprintf("/cycle/a (past the %d config files read, as any after it", maxGitConfigFiles)) {
		t.Errorf("files: notes %q", r.notes)
	}
	// The bound of files is 4096 from a fresh reader: one config naming
	// 4100 includes that do not exist (each an open, if no bytes) stops
	// past the 4096th, and says so.
	var many strings.Builder
	many.WriteString("[include]\n")
	for i := range 4100 {
		fmt.Fprintf(&many, "\tpath = missing-%d\n", i)
	}
	write(filepath.Join(dir, "many"), many.String())
	r = &cfgReader{}
	r.read(filepath.Join(dir, "many"), 0)
	if r.files != 4097 || len(r.notes) != 1 || !strings.Contains(r.notes[0], "past the 4096 config files read") {
		t.Errorf("many includes: %d files, notes %q", r.files, r.notes)
	}
}

// gitTestHome gives the test its own $HOME, no $XDG_CONFIG_HOME and no
// system config, so the machine's own git configs are not read.
func gitTestHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	old := systemGitConfig
	systemGitConfig = filepath.Join(home, "no-system-config")
	t.Cleanup(func() { systemGitConfig = old })
	return home
}

// writeTree makes files (path: content) beneath dir; a path ending in /
// is a directory.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for f, s := range files {
		p := filepath.Join(dir, f)
		if strings.HasSuffix(f, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(s), 0o755))
	}
}

// The bound on config read is on all the repositories together, so the
// shallowest are read first: a previous agent's nested repository whose
// config includes itself (read at each depth, past the 8 MiB bound),
// sorting first by name, does not leave the workspace's own config, and
// its core.hooksPath, unread. What it stopped is still said.
func TestProtectedMountsGitConfigDecoyFirst(t *testing.T) {
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config":    "[core]\n\thooksPath = .githooks\n",
		".githooks/":     "",
		"!a/.git/config": strings.Repeat("[include]\n\tpath = config\n", maxGitConfigSize/30),
	})
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if rel := relativeTo(ws, mounts); !slices.Contains(rel, ".githooks") {
		t.Errorf("the workspace's own core.hooksPath is not mounted: %q (uncovered %q)", rel, uncovered)
	}
	if !slices.ContainsFunc(uncovered, func(u string) bool {
		return strings.Contains(u, ws+"/!a/.git/config (past the 8388608 bytes of config read")
	}) {
		t.Errorf("the bound is not said: %q", uncovered)
	}
}

// An alias that is no !command may set config for the command it runs
// (git's -c, split as git splits an alias): git x runs the core.fsmonitor
// of alias.x = -c core.fsmonitor=tools/m status, so what those name is
// named too; a boolean, a value with no slash or a word that is no -c
// names nothing.
func TestProtectedMountsGitConfigAliasOptions(t *testing.T) {
	wantMounts(t, map[string]string{
		".git/config": "[alias]\n\tx = -c core.fsmonitor=tools/m status\n\tci = -c core.hooksPath=.githooks -c \"diff.Tool.textconv=tools/my conv\" commit\n" +
			"\tst = -c color.status=always -c core.bare status\n\tl = log -- src/a.go\n\tbad = -c 'core.editor=tools/ed\n",
		"tools/m":    "x",
		"tools/my":   "x",
		"tools/ed":   "x",
		".githooks/": "",
		"src/a.go":   "x",
	}, ".git/config", ".githooks", "tools/m", "tools/my")
}

// wantMounts writes tree into a new workspace (with a home of its own)
// and requires ProtectedMounts to mount exactly want there (relative),
// leaving nothing uncovered.
func wantMounts(t *testing.T, tree map[string]string, want ...string) {
	t.Helper()
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, tree)
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if rel := relativeTo(ws, mounts); !slices.Equal(rel, want) || len(uncovered) != 0 {
		t.Errorf("mounts %q, uncovered %q; want %q", rel, uncovered, want)
	}
}

// A config may name a path in the write paths through the person's own
// links outside them (a ~/src leading to the disk the workspace is on;
// the policy names real paths): git opens it there, so it is mounted.
// A link inside the write paths is the agent's and is said, not followed.
func TestProtectedMountsGitConfigThroughLinks(t *testing.T) {
	home := gitTestHome(t)
	ws, outside := t.TempDir(), t.TempDir()
	must(t, os.Symlink(ws, filepath.Join(outside, "src")))
	must(t, os.Symlink(filepath.Join(ws, "tools"), filepath.Join(outside, "agents")))
	writeTree(t, ws, map[string]string{
		".git/config": "[core]\n\thooksPath = " + outside + "/src/.githooks\n",
		".githooks/":  "",
		"tools/":      "",
		"real/prog":   "x",
	})
	must(t, os.Symlink("../real", filepath.Join(ws, "tools/link")))
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\tfsmonitor = " + outside + "/agents/link/prog\n"})
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if rel := relativeTo(ws, mounts); !slices.Equal(rel, []string{".git/config", ".githooks"}) ||
		len(uncovered) != 1 || uncovered[0] != "core.fsmonitor in "+home+"/.gitconfig names "+ws+"/tools/link/prog, which is reached through a symbolic link the agent may change" {
		t.Errorf("mounts %q, uncovered %q", rel, uncovered)
	}
}

// A repository whose config is not read at all, past the bound another
// repository's used up (one as deep, sorting first), is named, so the
// person sees their own among them, not only the file the bound was
// reached in; the person's own config still names paths in it.
func TestProtectedMountsGitConfigUnreadSaid(t *testing.T) {
	home := gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"!a/.git/config": strings.Repeat("[include]\n\tpath = config\n", maxGitConfigSize/30),
		"b/.git/config":  "[core]\n\thooksPath = .githooks\n",
		"b/tools/mon":    "x",
	})
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\tfsmonitor = tools/mon\n"})
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if !slices.Contains(uncovered, ws+"/b/.git/config (not read: past the bound of config one launch reads; the programs and includes they name are not covered)") {
		t.Errorf("the unread repository is not named: %q", uncovered)
	}
	if rel := relativeTo(ws, mounts); !slices.Contains(rel, "b/tools/mon") {
		t.Errorf("the person's own config no longer names b/tools/mon: %q", rel)
	}
}

// A remote's and a submodule's variables are mostly URLs and refs, but
// git runs a remote's uploadpack and receivepack itself (by the shell,
// from the working tree's root) when the remote is a path, and a
// submodule's update = !command: those are programs as any other.
func TestProtectedMountsGitConfigRemotePrograms(t *testing.T) {
	wantMounts(t, map[string]string{
		".git/config": "[remote \"origin\"]\n\turl = ../up\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tuploadpack = ./tools/up\n" +
			"\treceivepack = tools/rp --quiet\n[submodule \"lib\"]\n\turl = ./lib.git\n\tupdate = !tools/supd\n",
		"tools/up":   "x",
		"tools/rp":   "x",
		"tools/supd": "x",
		"lib.git/":   "",
	}, ".git/config", "tools/rp", "tools/supd", "tools/up")
}

// What a repository's config names in the workspace is mounted read-only
// after the repository's own paths: a core.hooksPath relative to the
// working tree, an absolute one, a bare repository's (relative to it),
// a submodule's (its core.worktree), a program (fsmonitor, textconv, an
// alias, one with a URL past its first word), an included file and what it names. What does not exist yet,
// is a link or is the write path itself is said; what lies outside the write paths, a URL, a ref or
// a program found by PATH is nothing.
func TestProtectedMountsGitConfig(t *testing.T) {
	gitTestHome(t)
	ws, outside := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config": "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n\tpager = less -R\n" +
			"[include]\n\tpath = ../shared.gitconfig\n[alias]\n\tz = !tools/z.sh --all\n[diff \"x\"]\n\ttextconv = ./scripts/conv\n" +
			"[remote \"origin\"]\n\turl = ../up.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tmerge = refs/heads/main\n" +
			"[credential]\n\thelper = " + outside + "/helper\n[http]\n\tproxy = http://proxy/x\n" +
			"[gpg]\n\tprogram = tools/gpg\n[init]\n\ttemplateDir = ./templates\n",
		".git/hooks/":             "",
		".githooks/":              "",
		"tools/fsmon.sh":          "x",
		"tools/z.sh":              "x",
		"tools/gpg":               "x",
		"templates/":              "",
		"scripts/conv":            "x",
		"up.git/":                 "",
		"shared.gitconfig":        "[filter \"y\"]\n\tclean = tools/clean\n\tsmudge = tools/linked\n",
		"sub/.git/config":         "[core]\n\thooksPath = " + ws + "/abs-hooks\n",
		"top/.git/config":         "[core]\n\thooksPath = ..\n",
		"abs-hooks/":              "",
		"bare.git/HEAD":           "x",
		"bare.git/objects/":       "",
		"bare.git/refs/":          "",
		"bare.git/config":         "[core]\n\tbare = true\n\thooksPath = myhooks\n",
		"bare.git/myhooks/":       "",
		".git/modules/lib/config": "[core]\n\tworktree = ../../../lib\n\tsshCommand = ./ssh-wrap\n",
		"lib/ssh-wrap":            "x",
	})
	must(t, os.WriteFile(filepath.Join(outside, "helper"), []byte("x"), 0o755))
	must(t, os.Symlink("z.sh", filepath.Join(ws, "tools/linked")))
	mounts, names, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	rel := relativeTo(ws, mounts)
	// The workspace's repositories' own paths first, then what they
	// name, then a nested repository's.
	want := []string{".git/config", ".git/hooks", ".git/modules/lib/config", "bare.git/config",
		".githooks", "abs-hooks", "bare.git/myhooks", "lib/ssh-wrap", "scripts/conv", "shared.gitconfig", "tools/fsmon.sh", "tools/gpg", "tools/z.sh",
		"sub/.git/config", "top/.git/config"}
	if len(rel) != len(want) || !slices.Equal(rel[:4], want[:4]) || !slices.Equal(rel[len(rel)-2:], want[len(want)-2:]) {
		t.Errorf("not in rank: %q", rel)
	}
	if slices.Sort(rel); !slices.Equal(rel, slices.Sorted(slices.Values(want))) {
		t.Errorf("mounts %q\nwant %q", rel, slices.Sorted(slices.Values(want)))
	}
	if len(uncovered) != 3 || uncovered[0] != "core.hooksPath in "+ws+"/top/.git/config names "+ws+", which is a write path or holds one: it cannot be made read-only inside them" ||
		uncovered[1] != "filter.y.clean in "+ws+"/shared.gitconfig names "+ws+"/tools/clean, which does not exist: the agent may make it" ||
		uncovered[2] != "filter.y.smudge in "+ws+"/shared.gitconfig names "+ws+"/tools/linked, which is a symbolic link: nothing can be mounted over it" {
		t.Errorf("uncovered %q", uncovered)
	}
	if !slices.Contains(names, ws+"/tools/fsmon.sh") || !slices.Contains(names, ws+"/.githooks") || slices.Contains(names, ws+"/tools/clean") {
		t.Errorf("names %q", names)
	}

	// The agent makes the program that did not exist, and writes into one
	// that did: only the new one is made. A directory a value names
	// (init.templateDir) is no program: what is made in it is seen.
	writeTree(t, ws, map[string]string{"tools/clean": "x", ".githooks/pre-commit": "x", "templates/.vscode/tasks.json": "x"})
	if made, unseen := ProtectedMade([]string{ws}, names, MaxProtectedWalk); !slices.Equal(made, []string{ws + "/templates/.vscode", ws + "/tools/clean"}) || len(unseen) != 0 {
		t.Errorf("made %q, unseen %q", made, unseen)
	}

	// With tools alone as the write path, the repository it lies in
	// still names its programs there; what lies outside it (.githooks,
	// scripts/conv, the write path's parent) is not the agent's: not
	// mounted, not said.
	mounts, _, uncovered = ProtectedMounts([]string{filepath.Join(ws, "tools")}, MaxProtectedWalk, 100)
	if rel := relativeTo(ws, mounts); !slices.Equal(rel, []string{"tools/clean", "tools/fsmon.sh", "tools/gpg", "tools/z.sh"}) ||
		len(uncovered) != 1 || !strings.Contains(uncovered[0], "/tools/linked, which is a symbolic link") {
		t.Errorf("tools alone: mounts %q, uncovered %q", rel, uncovered)
	}
}

// A linked worktree's git directory (.git/worktrees/NAME, its commondir
// naming the repository's) takes the repository's config, resolved in
// the worktree's own root, which its gitdir file names; and a write
// path holding only the worktree finds that config by its .git file.
func TestProtectedMountsGitConfigWorktree(t *testing.T) {
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config":                 "[core]\n\thooksPath = .githooks\n",
		".githooks/":                  "",
		".git/worktrees/wt/HEAD":      "x",
		".git/worktrees/wt/commondir": "../..\n",
		".git/worktrees/wt/gitdir":    ws + "/wt/.git\n",
		"wt/.git":                     "gitdir: " + ws + "/.git/worktrees/wt\n",
	})
	_, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if len(uncovered) != 1 || uncovered[0] != "core.hooksPath in "+ws+"/.git/config names "+ws+"/wt/.githooks, which does not exist: the agent may make it" {
		t.Errorf("uncovered %q", uncovered)
	}
	// The worktree alone as the write path: its .git file names the git
	// directory, outside, whose config names wt/.githooks.
	must(t, os.Mkdir(filepath.Join(ws, "wt/.githooks"), 0o755))
	mounts, _, uncovered := ProtectedMounts([]string{ws + "/wt"}, MaxProtectedWalk, 100)
	if !slices.Equal(mounts, []string{ws + "/wt/.git", ws + "/wt/.githooks"}) || len(uncovered) != 0 {
		t.Errorf("the worktree alone: mounts %q, uncovered %q", mounts, uncovered)
	}
	// A config that cannot be read is said once, though the repository
	// and its worktree each read it.
	writeTree(t, ws, map[string]string{".git/config": "[core\n"})
	if _, _, uncovered = ProtectedMounts([]string{ws}, MaxProtectedWalk, 100); len(uncovered) != 1 || !strings.Contains(uncovered[0], ws+"/.git/config (not read: line 1") {
		t.Errorf("a malformed config: uncovered %q", uncovered)
	}
}

// A write path inside a repository's working tree (the agent given its
// src) is git's to find that repository from: a core.hooksPath of the
// repository's that lies in the write path is covered, whether its .git
// is a directory or a file naming one.
func TestProtectedMountsGitConfigEnclosing(t *testing.T) {
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"repo/.git/config":  "[core]\n\thooksPath = src/hooks\n",
		"repo/src/hooks/":   "",
		"repo/src/lib/x.go": "x",
		"store/wt/config":   "[core]\n\tfsmonitor = src/mon\n",
		"wt/.git":           "gitdir: ../store/wt\n",
		"wt/src/mon":        "x",
	})
	for dir, want := range map[string]string{"repo/src": "repo/src/hooks", "repo/src/lib": "", "wt/src": "wt/src/mon"} {
		mounts, _, uncovered := ProtectedMounts([]string{filepath.Join(ws, dir)}, MaxProtectedWalk, 100)
		if rel := relativeTo(ws, mounts); want == "" && len(rel) != 0 || want != "" && !slices.Equal(rel, []string{want}) || len(uncovered) != 0 {
			t.Errorf("%s: mounts %q, uncovered %q, want %q", dir, rel, uncovered, want)
		}
	}
}

// The person's own configs ($XDG_CONFIG_HOME/git/config, ~/.gitconfig,
// the system one) apply to every repository: a relative core.hooksPath
// there is each repository's, an absolute program inside the write
// paths is covered, and a config that cannot be read is said. Without a
// repository in the write paths, only the absolute paths count.
func TestProtectedMountsGlobalGitConfig(t *testing.T) {
	home := gitTestHome(t)
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{".git/config": "[core]\n", "tools/global-fsmon": "x", "lone/tools/prog": "x"})
	writeTree(t, xdg, map[string]string{"git/config": "[core]\n\thooksPath = .husky\n"})
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\tfsmonitor = " + ws + "/tools/global-fsmon\n[include]\n\tpath = " + ws + "/inc\n"})
	systemGitConfig = filepath.Join(home, "system")
	writeTree(t, home, map[string]string{"system": "[alias]\n\tp = !" + ws + "/lone/tools/prog\n\tbad"})
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if rel := relativeTo(ws, mounts); !slices.Equal(rel, []string{".git/config", "tools/global-fsmon", "lone/tools/prog"}) {
		t.Errorf("mounts %q", rel)
	}
	if len(uncovered) != 2 || uncovered[0] != "core.hooksPath in "+xdg+"/git/config names "+ws+"/.husky, which does not exist: the agent may make it" ||
		uncovered[1] != "include.path in "+home+"/.gitconfig names "+ws+"/inc, which does not exist: the agent may make it" {
		t.Errorf("uncovered %q", uncovered)
	}
	// A config naming many paths that cannot be covered is said in
	// bounded length.
	var many strings.Builder
	many.WriteString("[alias]\n")
	for i := range 1000 {
		fmt.Fprintf(&many, "\ta%d = !%s/absent/%d\n", i, ws, i)
	}
	writeTree(t, xdg, map[string]string{"git/config": many.String()})
	if _, _, uncovered = ProtectedMounts([]string{ws}, MaxProtectedWalk, 100); len(uncovered) != maxNamedSaid+1 ||
		uncovered[maxNamedSaid] != "981 more paths git configs name that cannot be made read-only" {
		t.Errorf("1001 uncovered: %d said, the last %q", len(uncovered), uncovered[len(uncovered)-1])
	}
	// Not XDG's: ~/.config/git/config, when $XDG_CONFIG_HOME is not set.
	t.Setenv("XDG_CONFIG_HOME", "")
	writeTree(t, home, map[string]string{".config/git/config": "[core]\n\tsshCommand = " + ws + "/tools/ssh\n"})
	writeTree(t, home, map[string]string{".gitconfig": "[core\n"})
	_, _, uncovered = ProtectedMounts([]string{ws + "/lone"}, MaxProtectedWalk, 100)
	if len(uncovered) != 1 || !strings.Contains(uncovered[0], home+"/.gitconfig (not read: line 1") {
		t.Errorf("no repository, a malformed ~/.gitconfig: uncovered %q", uncovered)
	}
	_, _, uncovered = ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if !slices.Contains(uncovered, "core.sshCommand in "+home+"/.config/git/config names "+ws+"/tools/ssh, which does not exist: the agent may make it") {
		t.Errorf("~/.config/git/config: uncovered %q", uncovered)
	}
}

// What a config names may be a previous agent's choice and the launcher
// root: readConfigFile opens nothing that is not a regular file (a
// device acts on open: a watchdog, a tape drive), so here a FIFO shows no
// open at all to inotify, and a parse error quotes none of the file.
func TestReadConfigFileOpensOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, fifo, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	if _, err := readConfigFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v, want not a regular file", err)
	}
	buf := make([]byte, 4096)
	if n, _ := unix.Read(in, buf); n > 0 {
		t.Errorf("the FIFO was opened (%d bytes of inotify events)", n)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("[a]\ntopsecretword x\n[b \"hidden\" extra]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &cfgReader{}
	r.read(secret, 0)
	if len(r.notes) != 1 || strings.Contains(r.notes[0], "topsecretword") {
		t.Errorf("notes %q: want one, quoting nothing of the file", r.notes)
	}
}

// A kernel's file passes for a regular one (/proc/kmsg is one, and takes
// the messages a read gives from the system's log): an include.path or a
// commondir naming one, a previous agent's choice read as root, is not
// read.
func TestReadConfigFileNotKernelFiles(t *testing.T) {
	for _, p := range []string{"/proc/self/status", "/sys/kernel/uevent_seqnum"} {
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		if _, err := readConfigFile(p); err == nil || !strings.Contains(err.Error(), "a file of the kernel's") {
			t.Errorf("%s: %v, want a file of the kernel's", p, err)
		}
	}
}

// GitConfigNamedIn (components mode) gives what the configs name strictly
// inside the workspace, there yet or not, to protect as files.protected:
// not the workspace itself (core.hooksPath = . would make all of it
// protected), nor what lies outside it.
func TestGitConfigNamedIn(t *testing.T) {
	gitTestHome(t)
	ws, outside := t.TempDir(), t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config":    "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n[alias]\n\ta = !./\n\tb = !" + outside + "/x\n[include]\n\tpath = ../sub.gitconfig\n",
		"tools/fsmon.sh": "x",
	})
	got, notRead := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
	want := []string{filepath.Join(ws, ".githooks"), filepath.Join(ws, "sub.gitconfig"), filepath.Join(ws, "tools", "fsmon.sh")} // the include, not there yet
	if !slices.Equal(got, want) || len(notRead) != 0 {
		t.Errorf("got %q (not read %q), want %q", got, notRead, want)
	}
	// A config that cannot be read is said, here and by ProtectedMade
	// at the end of a wrapper-mode launch, never taken for one naming
	// nothing.
	writeTree(t, ws, map[string]string{"sub.gitconfig": "[core\n"})
	const bad = "/sub.gitconfig (not read: line 1"
	if _, notRead := GitConfigNamedIn([]string{ws}, MaxProtectedWalk); len(notRead) != 1 || !strings.Contains(notRead[0], ws+bad) {
		t.Errorf("a malformed include: not read %q", notRead)
	}
	if _, unseen := ProtectedMade([]string{ws}, nil, MaxProtectedWalk); !slices.ContainsFunc(unseen, func(u string) bool { return strings.Contains(u, ws+bad) }) {
		t.Errorf("a malformed include: ProtectedMade's unseen %q", unseen)
	}
}

// The programs a value names are those git runs: gpg's whole value (run
// with no shell), a value with none of the shell's special characters
// whole, and otherwise every word of every command sh runs in it (a
// command's name a program, the rest words given to it), quotes taken
// away, assignments' values words, a word an expansion makes known
// only at run time none. Each of these was read as the value's first
// blank-separated word, and then as its first command's name alone: a
// file the agent could write stayed writable while git ran it (git
// 2.39 runs .githooks/mon.sh for core.fsmonitor = sh .githooks/mon.sh,
// tools/evil for core.pager = cat; tools/evil, tools/x for
// core.pager = cat $(tools/x), tools/ssh for core.sshCommand = env
// tools/ssh, scripts/x.sh for alias.x = !bash scripts/x.sh, tools/conv.py
// for a textconv = sh tools/conv.py).
func TestProgramOf(t *testing.T) {
	for _, c := range []struct {
		section, key, value string
		progs, args         []string
	}{
		{"gpg", "program", "tools/my gpg", []string{"tools/my gpg"}, nil},
		{"gpg", "program", " tools/gpg ", []string{"tools/gpg"}, nil},
		{"core", "fsmonitor", "'tools/my mon.sh' --x", []string{"tools/my mon.sh"}, []string{"--x"}},
		{"core", "fsmonitor", `"tools/my mon.sh"`, []string{"tools/my mon.sh"}, nil},
		{"core", "fsmonitor", `tools/my\ mon.sh`, []string{"tools/my mon.sh"}, nil},
		{"core", "sshcommand", "GIT_TRACE=1 tools/ssh -v", []string{"tools/ssh"}, []string{"1", "-v"}},
		{"alias", "x", "!A=1 B=2 'tools/x y' z", []string{"tools/x y"}, []string{"1", "2", "z"}},
		{"alias", "x", "!tools/x|cat", []string{"tools/x", "cat"}, nil},
		{"core", "pager", "tools/pager", []string{"tools/pager"}, nil},
		{"core", "fsmonitor", "tools/fsmon.sh --flag", []string{"tools/fsmon.sh"}, []string{"--flag"}},
		{"core", "sshcommand", "$HOME/bin/ssh", nil, nil},
		{"core", "sshcommand", `"$X/ssh"`, nil, nil},
		{"core", "sshcommand", "tools/ss*", nil, nil},
		{"core", "sshcommand", "'unclosed", nil, nil},
		{"core", "sshcommand", "A=1", nil, []string{"1"}},
		{"core", "sshcommand", "~/bin/ssh -v", []string{"~/bin/ssh"}, []string{"-v"}},
		// Past the first word, and past the first command.
		{"core", "fsmonitor", "sh .githooks/mon.sh", []string{"sh"}, []string{".githooks/mon.sh"}},
		{"core", "sshcommand", "env tools/ssh", []string{"env"}, []string{"tools/ssh"}},
		{"alias", "x", "!bash scripts/x.sh", []string{"bash"}, []string{"scripts/x.sh"}},
		{"diff", "textconv", "python3 tools/conv.py", []string{"python3"}, []string{"tools/conv.py"}},
		{"core", "pager", "less; tools/evil", []string{"less", "tools/evil"}, nil},
		{"core", "pager", "less -R && tools/a || tools/b & tools/c\ntools/d", []string{"less", "tools/a", "tools/b", "tools/c", "tools/d"}, []string{"-R"}},
		{"core", "pager", "cat $(tools/x)", []string{"cat", "tools/x"}, nil},
		{"core", "pager", `less "$(tools/x --y 'a b')"`, []string{"less", "tools/x"}, []string{"--y", "a b"}},
		{"core", "pager", "echo `tools/b`x", []string{"echo", "tools/b"}, nil},
		{"core", "pager", `sh -c "$(cat $(tools/n) "$(tools/m)")"`, []string{"sh", "cat", "tools/n", "tools/m"}, []string{"-c"}},
		{"alias", "f", `!f() { tools/f "$@"; }; f`, []string{"f", "tools/f", "f"}, nil},
		{"core", "pager", "(cd sub && ./run) > tools/log 2>&1", []string{"cd", "./run"}, []string{"sub", "tools/log", "1"}},
		{"core", "pager", "X=$(tools/y) tools/z", []string{"tools/y", "tools/z"}, nil},
		{"core", "pager", "# comment tools/no\ntools/c # tools/no", []string{"tools/c"}, nil},
		{"core", "pager", "if tools/t; then tools/u; fi", []string{"tools/t", "tools/u"}, nil},
		{"core", "pager", "tools/a 'unclosed", []string{"tools/a"}, nil},
		// A ~ sh leaves (some of its prefix quoted, up to and with the
		// first slash) is a name in the working directory; one it
		// expands is kept for the expander (dash, as git 2.39 runs
		// them: sh "~/x" runs ./~/x, sh ~/"x" and X=~/x $HOME/x).
		{"alias", "x", `!sh "~/x"`, []string{"sh"}, []string{"./~/x"}},
		{"alias", "x", `!sh '~/x' \~/y ~"/z" "~"/w`, []string{"sh"}, []string{"./~/x", "./~/y", "./~/z", "./~/w"}},
		{"alias", "x", `!sh ~/"x" ~bob/y ~`, []string{"sh"}, []string{"~/x", "~bob/y", "~"}},
		{"alias", "x", `!X=~/x Y="~/y" ~/bin/z > "~/log"`, []string{"~/bin/z"}, []string{"~/x", "./~/y", "./~/log"}},
		{"alias", "x", `!"~/x"; ""~/y`, []string{"./~/x", "./~/y"}, nil},
		// An alias without ! is git's own command: the programs its
		// options and arguments give it to run are words too (git 2.39
		// runs each, from the working tree's root but where said).
		{"alias", "r", "rebase --exec tools/r1", []string{"rebase", "tools/r1"}, nil},
		{"alias", "r", "rebase -x 'sh tools/r2 a' HEAD~1", []string{"rebase", "sh"}, []string{"tools/r2", "a"}},
		{"alias", "r", "rebase --exec=tools/r3 -xtools/r4 --ex tools/r5 -ix tools/r6", []string{"rebase", "tools/r3", "tools/r4", "tools/r5", "tools/r6"}, nil},
		{"alias", "r", "-c core.editor=true -p rebase -x \"tools/r7; tools/r8\"", []string{"-c", "tools/r7", "tools/r8"}, nil},
		{"alias", "d", "difftool -y --extcmd tools/d1 -x tools/d2 --extcmd=tools/d3 -yxtools/d4", []string{"difftool", "tools/d1", "tools/d2", "tools/d3", "tools/d4"}, nil},
		{"alias", "b", "bisect run tools/b1 arg", []string{"bisect", "tools/b1"}, []string{"arg"}},
		{"alias", "b", "bisect run 'sh tools/b2; x'", []string{"bisect", "sh tools/b2; x"}, nil},
		{"alias", "s", "submodule foreach 'tools/s1 a; tools/s2'", []string{"submodule", "tools/s1", "tools/s2"}, []string{"a"}},
		{"alias", "s", "submodule --quiet foreach --recursive sh tools/s3", []string{"submodule", "sh"}, []string{"tools/s3"}},
		{"alias", "f", "filter-branch -f --tree-filter tools/f1 --msg-filter 'sh ../../tools/f2'", []string{"filter-branch", "tools/f1", "sh"}, []string{"../../tools/f2"}},
		{"alias", "g", "grep -Otools/g1 --open-files-in-pager=tools/g2", []string{"grep", "tools/g1", "tools/g2"}, nil},
		{"alias", "u", "fetch --upload-pack=tools/u1 ../up", []string{"fetch", "tools/u1"}, nil},
		{"alias", "u", "clone -u 'sh tools/u2' ../up", []string{"clone", "sh"}, []string{"tools/u2"}},
		{"alias", "u", "push --receive-pack tools/u3 --exec=tools/u4", []string{"push", "tools/u3", "tools/u4"}, nil},
		{"alias", "u", "ls-remote --exec=tools/u5", []string{"ls-remote", "tools/u5"}, nil},
		{"alias", "u", "archive --remote=../up --exec=tools/u6 HEAD", []string{"archive", "tools/u6"}, nil},
		// Not options git runs: pull has no --exec (git refuses it), log
		// none at all, an option's value no program (rebase --onto).
		{"alias", "p", "pull --rebase --exec tools/no ../up", []string{"pull"}, nil},
		{"alias", "l", "log -x tools/no", []string{"log"}, nil},
		{"alias", "r", "rebase --onto tools/no x", []string{"rebase"}, nil},
	} {
		var progs, args []string
		for _, w := range programWords(gitVar{section: c.section, key: c.key, value: c.value}, nil) {
			if w.arg {
				args = append(args, w.text)
			} else {
				progs = append(progs, w.text)
			}
		}
		if !slices.Equal(progs, c.progs) || !slices.Equal(args, c.args) {
			t.Errorf("programWords(%s.%s = %q): programs %q, words given to them %q; want %q, %q", c.section, c.key, c.value, progs, args, c.progs, c.args)
		}
	}
	// Read once, however deep the nesting (a config of 1 MiB).
	deep := strings.Repeat("$(x ", 1<<17) + "tools/deep" + strings.Repeat(")", 1<<17)
	if w := programWords(gitVar{section: "core", key: "pager", value: deep}, nil); len(w) != 1<<17+1 || w[len(w)-1].text != "tools/deep" || !w[len(w)-1].arg || w[0].text != "x" || w[0].arg {
		t.Errorf("deep nesting: %d words", len(w))
	}
	// And what a config names so is protected.
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config": "[gpg]\n\tprogram = tools/my gpg\n[core]\n\tsshCommand = GIT_TRACE=1 'tools/my ssh' -v\n",
	})
	got, _ := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
	for _, p := range []string{"tools/my gpg", "tools/my ssh"} {
		if !slices.Contains(got, filepath.Join(ws, p)) {
			t.Errorf("%s is not named: %q", p, got)
		}
	}
}

// A program git runs past a value's first word is covered (git 2.39
// runs each of these: core.fsmonitor = sh .githooks/mon.sh runs
// .githooks/mon.sh, core.pager = "cat; tools/evil" runs tools/evil, and so
// on): a command's name as before, and each word given to one that is a
// file, since it may be what it runs. One that is not there (git log
// origin/main..x) is not said, nor a directory (gofmt -w ./src) mounted
// or protected; an alias without ! is git's own command and names
// nothing past its -c options. In components mode each is protected
// whether it is there or not, but for a directory.
func TestProtectedMountsGitConfigPastFirstWord(t *testing.T) {
	tree := map[string]string{
		".git/config": "[core]\n\tfsmonitor = sh .githooks/mon.sh\n\tsshCommand = env tools/ssh\n\tpager = \"less; tools/evil\"\n\teditor = vi $(tools/x)\n" +
			"[alias]\n\tx = !bash scripts/x.sh\n\tlg = !git log origin/main..HEAD\n\tfmt = !gofmt -w ./src\n\tl = log -- src/a.go\n" +
			"[diff \"foo\"]\n\ttextconv = python3 tools/conv.py\n",
		".githooks/mon.sh": "x",
		"tools/ssh":        "x",
		"tools/evil":       "x",
		"tools/x":          "x",
		"tools/conv.py":    "x",
		"scripts/x.sh":     "x",
		"src/a.go":         "x",
	}
	wantMounts(t, tree, ".git/config", ".githooks/mon.sh", "scripts/x.sh", "tools/conv.py", "tools/evil", "tools/ssh", "tools/x")
	ws := t.TempDir()
	writeTree(t, ws, tree)
	got, notRead := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
	want := []string{".githooks/mon.sh", "origin/main..HEAD", "scripts/x.sh", "tools/conv.py", "tools/evil", "tools/ssh", "tools/x"}
	if rel := relativeTo(ws, got); !slices.Equal(rel, want) || len(notRead) != 0 {
		t.Errorf("components mode: named %q (not read %q), want %q", rel, notRead, want)
	}
	// One not there at the start that the agent makes is named when a
	// wrapper-mode launch ends.
	writeTree(t, ws, map[string]string{".git/config": "[core]\n\tfsmonitor = sh tools/new.sh\n"})
	_, names, _ := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	writeTree(t, ws, map[string]string{"tools/new.sh": "x"})
	if made, unseen := ProtectedMade([]string{ws}, names, MaxProtectedWalk); !slices.Equal(made, []string{ws + "/tools/new.sh"}) || len(unseen) != 0 {
		t.Errorf("made %q, unseen %q", made, unseen)
	}
}

// A pathname value's ~user and %(prefix)/ lead where git takes them
// (TestValuesNamedUserAndPrefix): a core.hooksPath in a user's home, or
// an include in git's prefix, that lies in the write paths is covered,
// and what the included file names too; a ~user /etc/passwd does not
// hold is said, not taken for nothing.
func TestProtectedMountsGitConfigUserAndPrefix(t *testing.T) {
	gitTestHome(t)
	ws := t.TempDir()
	passwd := filepath.Join(t.TempDir(), "passwd")
	must(t, os.WriteFile(passwd, []byte("bob:x:1000:1000::"+ws+"/bob:/bin/sh\n"), 0o644))
	oldPasswd, oldPrefixes := passwdFile, gitPrefixes
	passwdFile, gitPrefixes = passwd, func() []string { return []string{ws + "/prefix"} }
	t.Cleanup(func() { passwdFile, gitPrefixes = oldPasswd, oldPrefixes })
	writeTree(t, ws, map[string]string{
		".git/config":            "[core]\n\thooksPath = ~bob/hooks\n\tfsmonitor = ~nobody/mon\n[include]\n\tpath = ~bob/inc\n\tpath = %(prefix)/etc/inc\n",
		"bob/hooks/":             "",
		"bob/inc":                "[core]\n\tsshCommand = tools/ssh-from-bob\n",
		"prefix/etc/inc":         "[diff \"x\"]\n\ttextconv = tools/conv-from-prefix\n",
		"tools/ssh-from-bob":     "x",
		"tools/conv-from-prefix": "x",
	})
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	want := []string{".git/config", "bob/hooks", "bob/inc", "prefix/etc/inc", "tools/conv-from-prefix", "tools/ssh-from-bob"}
	if rel := relativeTo(ws, mounts); !slices.Equal(slices.Sorted(slices.Values(rel)), want) {
		t.Errorf("mounts %q, want %q", rel, want)
	}
	if len(uncovered) != 1 || uncovered[0] != "core.fsmonitor in "+ws+"/.git/config names ~nobody/mon (the home of ~nobody is not known: no such user in "+passwd+": what it names is not covered)" {
		t.Errorf("uncovered %q", uncovered)
	}
}

// What git itself runs for such values is what is named: with git
// installed, a repository whose core.fsmonitor, core.sshCommand,
// core.editor, an alias and a textconv each run a script past their
// first word, whose aliases without ! give git's own commands programs
// to run (rebase's exec, difftool's extcmd, bisect run, submodule
// foreach, a filter-branch filter, grep's pager, an upload-pack, an
// alias set by -c, an alias naming the person's alias of rebase), and
// an alias runs "~/q1" (a ~ sh leaves: the
// working tree's ~ directory), has git run them (each script notes its
// name), and each is among what GitConfigNamedIn names and
// ProtectedMounts mounts.
func TestGitConfigNamedAsGitRuns(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := gitTestHome(t)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("FILTER_BRANCH_SQUELCH_WARNING", "1")
	// An alias of the repository's naming one of the person's.
	writeTree(t, home, map[string]string{".gitconfig": "[alias]\n\tbase = -c core.editor=true rebase -i\n"})
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "a@b")
	}
	ws, up := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "ran")
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput() // what it runs may fail: that it ran is what counts
		t.Logf("git %q: %v %s", args, err, out)
	}
	git("init", "-q")
	git("-C", up, "init", "-q")
	git("-C", up, "commit", "-q", "--allow-empty", "-m", "x")
	scripts := []string{".githooks/mon.sh", "tools/ssh", "tools/x", "scripts/x.sh", "tools/conv.sh",
		"tools/r1", "tools/r2", "tools/r3", "tools/r4", "tools/d1", "tools/b1", "tools/s1", "tools/f1", "tools/g1", "tools/u1", "tools/c1", "~/q1"}
	for _, s := range scripts {
		writeTree(t, ws, map[string]string{s: "#!/bin/sh\necho '" + s + "' >> " + log + "\n"})
	}
	writeTree(t, ws, map[string]string{"a.txt": "a\n", ".gitattributes": "a.txt diff=foo\n"})
	git("add", "a.txt", ".gitattributes")
	git("commit", "-qm", "x")
	git("-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sm")
	writeTree(t, ws, map[string]string{"a.txt": "a2\n"})
	git("commit", "-qam", "y")
	f, err := os.OpenFile(filepath.Join(ws, ".git/config"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("[core]\n\tfsmonitor = sh .githooks/mon.sh\n\tsshCommand = env tools/ssh\n\teditor = \"true $(tools/x)\"\n" +
		"[alias]\n\tx = !sh scripts/x.sh\n[diff \"foo\"]\n\ttextconv = sh tools/conv.sh\n" +
		"[alias]\n\tr = rebase -x tools/r1 --exec=tools/r2 -ix \\\"sh tools/r3\\\"\n\td = difftool -y --extcmd tools/d1\n\tb = bisect run tools/b1\n" +
		"\ts = submodule foreach " + ws + "/tools/s1\n\tf = filter-branch -f --msg-filter 'sh ../../tools/f1'\n\tg = grep -Otools/g1\n" +
		"\tu = fetch --upload-pack=\\\"sh tools/u1\\\"\n\tc = -c alias.y=!tools/c1 y\n\tq = !sh \\\"~/q1\\\"\n\tch = base --exec tools/r4\n")
	must(t, err)
	must(t, f.Close())
	git("r", "HEAD~1")
	git("ch", "HEAD~1")
	git("d", "HEAD~1", "HEAD")
	git("bisect", "start", "HEAD", "HEAD~1")
	git("b")
	git("bisect", "reset")
	git("s")
	git("f", "HEAD~1..HEAD")
	git("g", "a")
	git("u", up)
	git("c")
	git("q")
	writeTree(t, ws, map[string]string{"a.txt": "b\n"})
	git("status")
	git("fetch", "ssh://h/x")
	git("commit", "--allow-empty")
	git("x")
	git("diff")
	b, _ := os.ReadFile(log)
	ran := slices.Compact(slices.Sorted(slices.Values(strings.Fields(string(b)))))
	if !slices.Equal(ran, slices.Sorted(slices.Values(scripts))) {
		t.Fatalf("git ran %q, want %q", ran, slices.Sorted(slices.Values(scripts)))
	}
	named, notRead := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	for _, s := range ran {
		if !slices.Contains(named, filepath.Join(ws, s)) || !slices.Contains(mounts, filepath.Join(ws, s)) {
			t.Errorf("git ran %s: named %q (not read %q), mounts %q (uncovered %q)", s, named, notRead, mounts, uncovered)
		}
	}
	// filter-branch runs its filters in its temporary tree: what a
	// relative word there names is said as not covered elsewhere.
	if !slices.Contains(uncovered, "alias.f in "+ws+"/.git/config names ../../tools/f1, which git runs in filter-branch's temporary tree (-d's, or .git-rewrite/t, a commit's files for --tree-filter) (not covered there)") {
		t.Errorf("the filter's directory is not said: %q", uncovered)
	}
}
