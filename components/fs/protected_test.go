package fs

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// ProtectedIn finds the built-in names at any depth and git's files
// beneath any .git (submodules' too), the policy's own paths that exist,
// never through a symbolic link, and keeps only the outermost.
func TestProtectedIn(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{".bashrc", "src/.vscode/settings.json", ".git/hooks/pre-commit", ".git/config",
		".git/modules/lib/hooks/post-checkout", ".git/modules/lib/config", ".git/objects/ab/hooks",
		".git/modules/objects/hooks/post-checkout",
		"sub/.git/config", "sub/.ssh/id", "src/main.go", "docs/.env", "notes/config",
		".git/config.worktree", ".gitconfig", ".config/git/config", ".config/nvim/init.lua", "git/config"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(ws, "link"))
	must(t, os.MkdirAll(filepath.Join(ws, "wt"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "wt", ".git"), []byte("gitdir: ../.git/worktrees/wt\n"), 0o644))
	got, err := ProtectedIn(ws, []string{filepath.Join(ws, "docs/.env"), filepath.Join(ws, "absent"), filepath.Join(ws, ".git/hooks/x")})
	if err != nil {
		t.Fatal(err)
	}
	rel := relativeTo(ws, got)
	want := []string{".bashrc", ".config/git", ".git/config", ".git/config.worktree", ".git/hooks", ".git/modules/lib/config", ".git/modules/lib/hooks", ".git/modules/objects/hooks", ".gitconfig", "docs/.env", "src/.vscode", "sub/.git/config", "sub/.ssh", "wt/.git"}
	if !slices.Equal(rel, want) {
		t.Errorf("got %q\nwant %q", rel, want)
	}
}

// A protected name that is a symbolic link (a hooks directory kept
// elsewhere, a .git pointing at another repository) cannot be made
// read-only: an error, not a silent gap.
func TestProtectedInSymlink(t *testing.T) {
	for _, link := range []string{".git/hooks", ".bashrc", "sub/.git", ".vscode"} {
		ws := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
		must(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, link)), 0o755))
		must(t, os.Symlink(filepath.Join(ws, "scripts"), filepath.Join(ws, link)))
		if _, err := ProtectedIn(ws, nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: %v", link, err)
		}
	}
}

// ProtectedNamesIn lists those links instead (each one itself, not what
// it points at), and whatever else ProtectedIn finds.
func TestProtectedNamesInSymlink(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "scripts"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "scripts", "config"), []byte("x"), 0o644))
	must(t, os.Symlink("../scripts/config", filepath.Join(ws, ".git", "commondir")))
	must(t, os.Symlink("scripts", filepath.Join(ws, ".vscode")))
	must(t, os.Symlink("scripts", filepath.Join(ws, "policy-extra")))
	got, err := ProtectedNamesIn(ws, []string{filepath.Join(ws, "policy-extra")})
	if err != nil {
		t.Fatal(err)
	}
	rel := relativeTo(ws, got)
	if want := []string{".git/commondir", ".git/hooks", ".vscode", "policy-extra"}; !slices.Equal(rel, want) {
		t.Errorf("got %q, want %q", rel, want)
	}
	if _, err := ProtectedIn(ws, nil); err == nil {
		t.Error("control: ProtectedIn took the links")
	}
}

// ProtectedNamesIn lists a FIFO at a protected name too (git would block
// reading it), and goes on past what it cannot look through: a protected
// name beside a tree too deep for the walk is still found, and the error
// says what was skipped, in a message of bounded length.
func TestProtectedNamesInGoesOn(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(ws, ".git", "commondir"), 0o644))
	// Made relative to each level: the whole path is longer than PATH_MAX.
	dir, err := os.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	for range maxRemoveDepth + 2 {
		must(t, syscall.Mkdirat(int(dir.Fd()), "d", 0o755))
		next, err := openDirAt(dir, "d")
		dir.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir = next
	}
	dir.Close()
	got, err := ProtectedNamesIn(ws, nil)
	if rel := relativeTo(ws, got); !slices.Equal(rel, []string{".git/commondir"}) {
		t.Errorf("got %q", rel)
	}
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("what was skipped: %v", err)
	}
	if _, err := ProtectedIn(ws, nil); err == nil {
		t.Error("ProtectedIn answered from part of the tree")
	}
}

// The walk after a command has no entry limit and no path length limit:
// a long chain of long names, sorted before .git, neither stops it nor
// hides the .git at its end, and 20 directories of 200 entries each do not
// delay the top .git (a directory's .git is walked before its other
// subdirectories).
func TestProtectedNamesInLongPaths(t *testing.T) {
	ws := t.TempDir()
	dir, err := os.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("\x01", 250)
	for range 20 { // 5,000 bytes of path
		must(t, syscall.Mkdirat(int(dir.Fd()), long, 0o755))
		next, err := openDirAt(dir, long)
		dir.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir = next
	}
	must(t, syscall.Mkdirat(int(dir.Fd()), ".git", 0o755))
	gitDir, err := openDirAt(dir, ".git")
	dir.Close()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Openat(int(gitDir.Fd()), "commondir", syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
	gitDir.Close()
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	for i := range 20 {
		d := filepath.Join(ws, "-", strconv.Itoa(i))
		must(t, os.MkdirAll(d, 0o755))
		for j := range 200 {
			must(t, os.WriteFile(filepath.Join(d, strconv.Itoa(j)), nil, 0o644))
		}
	}
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".git", "commondir"), []byte("../evil\n"), 0o644))
	got, err := ProtectedNamesIn(ws, nil)
	if err != nil {
		t.Fatalf("the walk did not look through everything: %v", err)
	}
	rel := relativeTo(ws, got)
	slices.SortFunc(rel, func(a, b string) int { return len(a) - len(b) })
	if len(rel) != 2 || rel[0] != ".git/commondir" || !strings.HasSuffix(rel[1], "/.git/commondir") || len(rel[1]) < 5000 {
		t.Errorf("got %d paths: %.80q", len(rel), rel)
	}
}

func openDirAt(dir *os.File, name string) (*os.File, error) {
	fd, err := syscall.Openat(int(dir.Fd()), name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// relativeTo is paths, each relative to dir.
func relativeTo(dir string, paths []string) []string {
	var rel []string
	for _, p := range paths {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, r)
	}
	return rel
}

// A tree too large to walk is an error, not a partial answer.
func TestProtectedInTooLarge(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "many")
	os.Mkdir(dir, 0o755)
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, strings.Repeat("f", 1+i%50)+string(rune('a'+i%26))+string(rune('a'+i/26))), nil, 0o644)
	}
	if _, _, err := protectedBothLimit(ws, nil, 100); err == nil || !strings.Contains(err.Error(), "more than 100 entries") {
		t.Fatalf("%v", err)
	}
	if _, _, err := protectedBothLimit(ws, nil, 1000); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A link where a name decides protection beneath it is found, never
// followed: a hunt's command linked .git/modules to a tree holding a
// hook (the person's git submodule update then ran it), and .config to a
// directory holding git/config, and neither was seen after the command.
// Before a command such a link refuses it, as a link at a protected name
// does; a link elsewhere (not inside .git) is nothing to either.
func TestProtectedNamesLinkedAncestors(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "mods", "sub", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.Symlink("../mods", filepath.Join(ws, ".git", "modules")))
	must(t, os.MkdirAll(filepath.Join(ws, "cfgdata", "git"), 0o755))
	must(t, os.Symlink("cfgdata", filepath.Join(ws, ".config")))
	must(t, os.Symlink("mods", filepath.Join(ws, "plain-link"))) // control
	got, err := ProtectedNamesIn(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := relativeTo(ws, got)
	for _, want := range []string{".config", ".git/modules"} {
		if !slices.Contains(rel, want) {
			t.Errorf("%s not found: %q", want, rel)
		}
	}
	if slices.Contains(rel, "plain-link") {
		t.Errorf("a link outside .git was taken for protected: %q", rel)
	}
	if _, err := ProtectedIn(ws, nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ProtectedIn with a linked .git/modules: %v", err)
	}
}

// A protected file with a second name (a hard link the person made)
// refuses commands: the read-only mount is over one name, and a command
// writing the other changed it with no new inode to notice.
func TestProtectedInRefusesHardLinked(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "dot"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "dot", "bashrc"), []byte("x"), 0o644))
	must(t, os.Link(filepath.Join(ws, "dot", "bashrc"), filepath.Join(ws, ".bashrc")))
	if _, err := ProtectedIn(ws, nil); err == nil || !strings.Contains(err.Error(), "2 names") {
		t.Errorf("ProtectedIn with a hard-linked .bashrc: %v", err)
	}
	must(t, os.Remove(filepath.Join(ws, "dot", "bashrc")))
	if _, err := ProtectedIn(ws, nil); err != nil {
		t.Errorf("control, one name: %v", err)
	}
}

// A bare repository (or any directory git takes for a git directory by
// what it holds: HEAD with objects and refs, HEAD with commondir, or
// objects and refs that a commondir may name) is a .git by another name:
// its hooks and config are found wherever it is and whatever it is
// called, and its objects are not walked; so are those of a NAME.git
// that holds no repository yet (git init --bare keeps them). They were
// not: a command could write NAME.git/hooks, which git --git-dir=NAME.git
// or a later clone ran.
func TestProtectedInBareRepo(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{
		"repo.git/HEAD", "repo.git/config", "repo.git/hooks/post-update", "repo.git/info/attributes", "repo.git/description",
		"repo.git/objects/ab/hooks", "repo.git/refs/heads/main",
		"docs/HEAD", "docs/objects/info/packs", "docs/refs/tags/v1", "docs/config",
		"wt/HEAD", "wt/commondir", "wt/config.worktree",
		"common/objects/x", "common/refs/x", "common/hooks/pre-commit",
		// NAME.git, before it holds a repository: its hooks and config.
		"empty.git/hooks/x", "empty.git/config", "empty.git/src/config",
		// Controls: a part of a layout is none.
		"half/HEAD", "half/objects/x", "half/config", "src/config",
	} {
		p := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	got, err := ProtectedIn(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"common/hooks", "docs/config", "empty.git/config", "empty.git/hooks", "repo.git/config", "repo.git/hooks", "wt/commondir", "wt/config.worktree"}
	if rel := relativeTo(ws, got); !slices.Equal(rel, want) {
		t.Errorf("got %q\nwant %q", rel, want)
	}
}

// In a directory that folds case (ext4 casefold, chattr +F), the scan
// behind bash's read-only mounts matches names as fs's matcher does:
// folded, fully (a ligature "pro\ufb01le", a ".s\u200dsh"), since a
// .GIT/hooks, a .Bashrc or a .SSH made there is the file git and the
// shell use. It compared exactly, so none of them was mounted read-only.
// This kernel folds no directory: caseFolded says which do (ci and all
// beneath it but ci/plain); cs, not folding, holds the same names as a
// control, as does ci/plain (a directory made not to fold inside one
// that does).
func TestProtectedInFolds(t *testing.T) {
	ws := t.TempDir()
	names := []string{".Bashrc", ".SSH/id", ".s\u200dsh/id", ".pro\ufb01le", ".GIT/Hooks/pre-commit", ".GIT/CONFIG",
		".GIT/OBJECTS/ab/hooks", ".GIT/modules/x/HOOKS/post-checkout", ".Config/GIT/config", "R.Git/HOOKS/x", "wt/.Git"}
	for _, d := range []string{"ci", "cs", "ci/plain"} {
		for _, f := range names {
			p := filepath.Join(ws, d, f)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte("x"), 0o644))
		}
	}
	// scanKey compares folded names with the built-in ones as they are.
	for _, n := range slices.Concat(protectedNames, gitProtected, []string{gitDir, xdgDir, xdgGit, "objects"}) {
		if foldKey(n) != n {
			t.Fatalf("the built-in name %q is not folded (%q): scanKey would not match it", n, foldKey(n))
		}
	}
	folds := filepath.Join(ws, "ci")
	defer func(f func(int) bool) { caseFolded = f }(caseFolded)
	caseFolded = func(fd int) bool {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		must(t, err)
		return (p == folds || beneathPath(p, folds)) && !(p == folds+"/plain" || beneathPath(p, folds+"/plain"))
	}
	var want []string
	for _, f := range []string{".Bashrc", ".SSH", ".s\u200dsh", ".pro\ufb01le", ".GIT/Hooks", ".GIT/CONFIG", ".GIT/modules/x/HOOKS", ".Config/GIT", "R.Git/HOOKS", "wt/.Git"} {
		want = append(want, "ci/"+f)
	}
	slices.Sort(want)
	got, err := ProtectedIn(ws, nil)
	must(t, err)
	if rel := relativeTo(ws, got); !slices.Equal(rel, want) {
		t.Errorf("got %q\nwant %q", rel, want)
	}
	names2, err := ProtectedNamesIn(ws, nil)
	must(t, err)
	if rel := relativeTo(ws, names2); !slices.Equal(rel, want) {
		t.Errorf("names: got %q\nwant %q", rel, want)
	}

	// A link at a folded .git is found, never followed; not where the
	// directory does not fold.
	for _, d := range []string{"ci/l", "cs/l"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
		must(t, os.Symlink("../..", filepath.Join(ws, d, ".GIT")))
	}
	if _, err := ProtectedIn(ws, nil); err == nil || !strings.Contains(err.Error(), "ci/l/.GIT is a symbolic link") {
		t.Errorf("a link at ci/l/.GIT: %v, want it refused", err)
	}
	names2, err = ProtectedNamesIn(ws, nil)
	must(t, err)
	if rel := relativeTo(ws, names2); !slices.Contains(rel, "ci/l/.GIT") || slices.Contains(rel, "cs/l/.GIT") {
		t.Errorf("with links: got %q, want ci/l/.GIT and not cs/l/.GIT", rel)
	}
}

// ProtectedMounts (wrapper mode's read-only paths) covers what it can and
// says the rest, where ProtectedIn refuses: a link or a hard-linked file
// at a protected name, a tree past its budget (shared by every write
// path), the paths past the most it may return (the shallowest kept). A
// write path inside another is looked through once.
func TestProtectedMounts(t *testing.T) {
	ws, other := t.TempDir(), t.TempDir()
	for _, f := range []string{".git/hooks/pre-commit", ".git/config", "a/b/.git/config", "a/.vscode/x", "nested/.bashrc"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, gitFile(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("elsewhere", filepath.Join(ws, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".profile"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(other, ".profile"), filepath.Join(other, "profile-too")); err != nil {
		t.Fatal(err)
	}
	dirs := []string{ws, filepath.Join(ws, "a"), other}
	mounts, names, uncovered := ProtectedMounts(dirs, MaxProtectedWalk, 100)
	want := []string{ws + "/.git/config", ws + "/.git/hooks", ws + "/a/.vscode", ws + "/nested/.bashrc", ws + "/a/b/.git/config"}
	if !slices.Equal(mounts, want) {
		t.Errorf("mounts = %q, want %q", mounts, want)
	}
	if len(uncovered) != 2 || !strings.Contains(uncovered[0], "/.mcp.json (a symbolic link at a protected name") ||
		!strings.Contains(uncovered[1], "/.profile (2 names: writable by another)") {
		t.Errorf("uncovered = %q", uncovered)
	}

	// names holds the link and the hard-linked file too: they were there.
	for _, n := range []string{ws + "/.mcp.json", other + "/.profile", ws + "/.git/hooks"} {
		if !slices.Contains(names, n) {
			t.Errorf("names %q lacks %s", names, n)
		}
	}
	// The most kept, counting the directories pinned above them (.git
	// for both of its paths: 3 mounts): the shallowest, and the rest said.
	mounts, _, uncovered = ProtectedMounts([]string{ws}, MaxProtectedWalk, 3)
	if !slices.Equal(mounts, want[:2]) || len(uncovered) != 2 || !strings.Contains(uncovered[1], "3 protected paths past the 3 mounts one launch makes inside the write paths, from "+ws+"/a/.vscode") {
		t.Errorf("at most 3: mounts %q, uncovered %q", mounts, uncovered)
	}
	// a/.vscode needs a pinned too: 5 mounts for three paths.
	if mounts, _, _ = ProtectedMounts([]string{ws}, MaxProtectedWalk, 4); !slices.Equal(mounts, want[:2]) {
		t.Errorf("at most 4: mounts %q", mounts)
	}
	if mounts, _, _ = ProtectedMounts([]string{ws}, MaxProtectedWalk, 5); !slices.Equal(mounts, want[:3]) {
		t.Errorf("at most 5: mounts %q", mounts)
	}

	// A budget of entries for all the write paths: ws alone holds more
	// than 5 entries, so other is not looked through at all.
	mounts, _, uncovered = ProtectedMounts([]string{ws, other}, 5, 100)
	if len(uncovered) != 3 || !strings.Contains(uncovered[0], "more than 5 entries") ||
		!strings.Contains(uncovered[1], "protected names in "+other+" (not looked for") {
		t.Errorf("budget 5: mounts %q, uncovered %q", mounts, uncovered)
	}
	// What is made afterwards, and only that, is ProtectedMade's: a new
	// repository's config and a .vscode; a hook in hooks, which was
	// there, is not new.
	for _, f := range []string{"fresh/.git/config", "fresh/.vscode/tasks.json", ".git/hooks/post-merge"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, gitFile(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if made, unseen := ProtectedMade(dirs, names, MaxProtectedWalk); len(unseen) != 0 || !slices.Equal(made, []string{ws + "/fresh/.git/config", ws + "/fresh/.vscode"}) {
		t.Errorf("made = %q, unseen %q", made, unseen)
	}
	if made, _ := ProtectedMade(dirs, append(names, ws+"/fresh"), MaxProtectedWalk); len(made) != 0 {
		t.Errorf("made beneath a name that was there: %q", made)
	}

}

// A FIFO at a protected name (a previous agent's) is neither mounted nor
// left unsaid: the agent could put a .vscode directory in its place, and
// the end-of-launch walk would count it as there before.
func TestProtectedMountsFifo(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, ".vscode"), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts, names, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if len(mounts) != 0 || !slices.Equal(names, []string{ws + "/.vscode"}) ||
		len(uncovered) != 1 || !strings.Contains(uncovered[0], "/.vscode (a FIFO or socket at a protected name") {
		t.Errorf("mounts %q, names %q, uncovered %q", mounts, names, uncovered)
	}
}

// When not all fit, the write path's own repository and start-up files
// go first: decoys as deep as .git/hooks that sort before it by name
// (!1/.vscode), or a bare repository beside it, do not push it out.
func TestProtectedMountsDecoys(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"!1/.vscode", "!2/.vscode", ".git/hooks", "!b.git/objects", "!b.git/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/config", "!b.git/config"} {
		if err := os.WriteFile(filepath.Join(ws, f), gitFile(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// .git is pinned for both of its paths: 3 mounts.
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 3)
	if !slices.Equal(mounts, []string{ws + "/.git/config", ws + "/.git/hooks"}) || len(uncovered) != 1 {
		t.Errorf("mounts %q, uncovered %q", mounts, uncovered)
	}
	// Then the bare repository beside it (its config and pinned
	// directory), then the decoys.
	if mounts, _, _ := ProtectedMounts([]string{ws}, MaxProtectedWalk, 5); !slices.Equal(mounts, []string{ws + "/.git/config", ws + "/.git/hooks", ws + "/!b.git/config"}) {
		t.Errorf("at most 5: mounts %q", mounts)
	}
}

// A link in a protected directory to a file in the write paths has that
// file mounted too (a hook linked to the project's tools/pre-commit, as
// many repositories have it); a link by way of another link, or a file
// of the directory with another name, is said.
func TestProtectedMountsLinkedFrom(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{".git/hooks", "tools", "lib"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"tools/pre-commit", "lib/hook", "notes"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "post-merge"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, dest := range map[string]string{
		".git/hooks/pre-commit": "../../tools/pre-commit",
		".git/hooks/post-merge": filepath.Join(outside, "post-merge"), // not the agent's to change
		"toolslink":             "lib",
		".git/hooks/pre-push":   "../../toolslink/hook", // by way of a link the agent may repoint
	} {
		if err := os.Symlink(dest, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(ws, "notes"), filepath.Join(ws, ".git/hooks/post-checkout")); err != nil {
		t.Fatal(err)
	}
	mounts, _, uncovered := ProtectedMounts([]string{ws}, MaxProtectedWalk, 100)
	if !slices.Equal(mounts, []string{ws + "/.git/hooks", ws + "/tools/pre-commit"}) {
		t.Errorf("mounts = %q", mounts)
	}
	if len(uncovered) != 2 || !strings.Contains(uncovered[0], "/.git/hooks/post-checkout (2 names") ||
		!strings.Contains(uncovered[1], "/.git/hooks/pre-push (a link to "+ws+"/toolslink/hook in the write paths") {
		t.Errorf("uncovered = %q", uncovered)
	}
}

// gitFile is what a test writes to the file p: a git config (there, git
// reads it) holds a section, anything else an x.
func gitFile(p string) []byte {
	if filepath.Base(p) == "config" {
		return []byte("[core]\n")
	}
	return []byte("x")
}
