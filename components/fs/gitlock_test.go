package fs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A lock file in a git directory is git's until git renames it onto the
// file it locks: git commit -a holds .git/index.lock while the person
// writes the message, then makes it .git/index. fs wrote lock files
// unasked ("holds nothing git reads"), so an agent that replaced a held
// lock changed .git/index (or a bare repository's packed-refs, or
// .git/config while git config ran) without the person's approval. A
// write or a mkdir of one asks now; removing one (a git that died left
// it) does not.
func TestGitLockNotWritten(t *testing.T) {
	w := newWorld(t)
	w.file(t, ".git/HEAD", "ref: refs/heads/main\n")
	w.file(t, ".git/index", "the person's index")
	w.file(t, "repo.git/HEAD", "ref: refs/heads/main\n")
	must(t, os.MkdirAll(filepath.Join(w.ws, "repo.git/objects"), 0o755))
	must(t, os.MkdirAll(filepath.Join(w.ws, "repo.git/refs"), 0o755))
	r := w.root

	// git holds the lock (made O_EXCL, its new content written), and
	// renames it into place once it is done.
	for _, c := range []struct{ lock, file string }{
		{".git/index.lock", ".git/index"},
		{".git/config.lock", ".git/config"},
		{"repo.git/packed-refs.lock", "repo.git/packed-refs"},
		// git config --global, where the workspace is a home; git init
		// --bare in a NAME.git that holds no repository yet.
		{".gitconfig.lock", ".gitconfig"},
		{"new.git/config.lock", "new.git/config"},
	} {
		w.file(t, c.lock, "git's new content")
		wantKind(t, "write "+c.lock+" held by git", r.Write(c.lock, []byte("the agent's"), false), KindProtected)
		must(t, os.Rename(filepath.Join(w.ws, c.lock), filepath.Join(w.ws, c.file)))
		if b, _ := os.ReadFile(filepath.Join(w.ws, c.file)); string(b) != "git's new content" {
			t.Errorf("%s after git committed its lock: %q", c.file, b)
		}
		wantKind(t, "write "+c.lock+" (create only)", r.Write(c.lock, []byte("the agent's"), true), KindProtected)
		wantKind(t, "mkdir "+c.lock, r.Mkdir(c.lock), KindProtected)
		// Control: a lock a git that died left may be removed.
		w.file(t, c.lock, "stale")
		wantOK(t, "delete "+c.lock, r.Delete(c.lock))
	}
	// Controls: lock files elsewhere are ordinary files.
	for _, p := range []string{"Cargo.lock", "sub/x.lock", "git.lock", ".lock", "new.git/x.lock"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(w.ws, p)), 0o755))
		wantOK(t, "write "+p, r.Write(p, []byte("x"), false))
	}
}

// The same with git itself: git commit -a waits for its message holding
// .git/index.lock; a write of the lock through fs meanwhile became
// .git/index when the commit ended.
func TestGitLockNotWrittenWhileGitCommits(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	w := newWorld(t)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = w.ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", ".")
	w.file(t, "a", "one\n")
	run("add", "a")
	run("-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "one")
	w.file(t, "a", "two\n")

	// The editor says it waits, then waits for the test (bounded).
	sync := t.TempDir()
	ready, goOn := filepath.Join(sync, "ready"), filepath.Join(sync, "go")
	editor := `touch "` + ready + `"; i=0; while [ ! -e "` + goOn + `" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo two > "$1"`
	cmd := exec.Command(git, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qa")
	cmd.Dir = w.ws
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "GIT_EDITOR=sh -c '"+editor+"' --")
	done := make(chan error, 1)
	must(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("git's editor did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(w.ws, ".git/index.lock")); err != nil {
		t.Fatalf("git commit -a does not hold index.lock while its editor runs here: %v", err)
	}
	wantKind(t, "write .git/index.lock while git commits", w.root.Write(".git/index.lock", []byte("the agent's index"), false), KindProtected)
	must(t, os.WriteFile(goOn, nil, 0o644))
	select {
	case err := <-done:
		if err != nil {
			t.Logf("git commit: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("git commit did not end")
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".git/index")); string(b) == "the agent's index" {
		t.Errorf(".git/index is what the agent wrote to the lock, unasked")
	}
}

// In a directory that folds case, .gitconfig.LOCK (or .gitconfig.loc\u212a,
// KELVIN SIGN folding to k) is the file git holds as .gitconfig.lock:
// fs's write replaces it, and git renames it onto .gitconfig. The lock's
// suffix compared exactly let such a write through unasked. The kernel
// here has no casefold; the matching is what is tested, as
// TestProtectedInFolds does.
func TestGitLockFolds(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.ws, "ci/new.git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(w.ws, "cs/new.git"), 0o755))
	folds := filepath.Join(w.ws, "ci")
	defer func(f func(int) bool) { caseFolded = f }(caseFolded)
	caseFolded = func(fd int) bool {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		must(t, err)
		return p == folds || beneathPath(p, folds)
	}
	for _, p := range []string{"ci/.gitconfig.LOCK", "ci/.gitconfig.loc\u212a", "ci/.GitConfig.Lock", "ci/new.git/config.LOCK", "ci/new.git/Config.Lock"} {
		wantKind(t, "write "+p, w.root.Write(p, []byte("the agent's"), false), KindProtected)
		wantKind(t, "mkdir "+p, w.root.Mkdir(p), KindProtected)
	}
	// Controls: where the directory does not fold these are other names.
	for _, p := range []string{"cs/.gitconfig.LOCK", "cs/new.git/config.LOCK", "ci/x.LOCK"} {
		wantOK(t, "write "+p, w.root.Write(p, []byte("x"), false))
	}
}
