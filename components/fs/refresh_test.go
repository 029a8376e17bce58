package fs

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
)

// readConfigsOf is a Root.Refresh that reads the git configs of the
// workspace ws with the launcher's reader (GitConfigNamedIn), as the
// session does for fs, and counts its calls.
func readConfigsOf(t *testing.T, ws string, calls *int) func() []string {
	return func() []string {
		*calls++
		named, notes := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
		if len(notes) > 0 {
			t.Errorf("notes: %q", notes)
		}
		return relativeTo(ws, named)
	}
}

// After the person approves a change of a git config that names a new
// core.hooksPath, an included file or a program, fs protects what it
// names: a write there is asked about (and refused on a no), where
// before the fix it went ahead unasked and the person's next git commit
// ran it. Writes elsewhere are neither asked about nor make fs read the
// configs again; a declined change reads nothing either.
func TestRefreshAfterApprovedConfigChange(t *testing.T) {
	gitTestHome(t)
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.ws, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(w.ws, ".githooks"), 0o755))
	var calls int
	w.root.Refresh = readConfigsOf(t, w.ws, &calls)
	var asked []string
	yes := true
	w.root.Approve = func(action, _ string) (bool, string) {
		asked = append(asked, action)
		if yes {
			return true, "approved"
		}
		return false, "declined"
	}
	must(t, w.root.Mkdir("tools"))
	must(t, w.root.Write("tools/other.sh", []byte("x"), false))
	if len(asked) != 0 || calls != 0 {
		t.Fatalf("an ordinary write was asked about (%q) or read the configs (%d)", asked, calls)
	}
	yes = false
	if err := w.root.Write(".git/config", []byte("[core]\n\thooksPath = .elsewhere\n"), false); KindOf(err) != KindProtected {
		t.Fatalf("declined: %v", err)
	}
	if calls != 0 {
		t.Errorf("a declined change read the configs (%d)", calls)
	}
	yes = true
	cfg := "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n[include]\n\tpath = ../x.gitconfig\n"
	if err := w.root.Write(".git/config", []byte(cfg), false); err != nil {
		t.Fatalf("approved: %v", err)
	}
	if calls != 1 {
		t.Errorf("the approved change read the configs %d times, want 1", calls)
	}
	yes = false
	for _, p := range []string{".githooks/pre-commit", "tools/fsmon.sh", "x.gitconfig"} {
		n := len(asked)
		err := w.root.Write(p, []byte("#!/bin/sh\necho pwned\n"), false)
		if KindOf(err) != KindProtected || len(asked) != n+1 || !strings.Contains(asked[n], quoteForQuestion(p)) {
			t.Errorf("%s, named by the approved config, was written without the person's yes: %v (asked %q)", p, err, asked[n:])
		}
		mustNotExistHost(t, filepath.Join(w.ws, p))
	}
	// A rename onto it is asked about too; what lies beside it is not.
	w.file(t, "tools/evil", "#!/bin/sh\n")
	if err := w.root.Rename("tools/evil", ".githooks/post-checkout", false); KindOf(err) != KindProtected {
		t.Errorf("a rename into the new hooks directory: %v", err)
	}
	n := len(asked)
	if err := w.root.Write("tools/other.sh", []byte("y"), false); err != nil || len(asked) != n {
		t.Errorf("control: a write beside the named program: %v, asked %q", err, asked[n:])
	}
	if calls != 1 {
		t.Errorf("declined and ordinary changes read the configs: %d calls, want 1", calls)
	}
}

// An included file changed with the person's approval can name a hooks
// directory too: what the new include names is protected after it.
func TestRefreshAfterApprovedInclude(t *testing.T) {
	gitTestHome(t)
	w := newWorld(t, "shared.gitconfig")
	w.file(t, ".git/config", "[include]\n\tpath = ../shared.gitconfig\n")
	var calls int
	w.root.Refresh = readConfigsOf(t, w.ws, &calls)
	w.root.Approve = func(string, string) (bool, string) { return true, "approved" }
	if err := w.root.Write("shared.gitconfig", []byte("[core]\n\thooksPath = hk\n"), false); err != nil {
		t.Fatal(err)
	}
	w.root.Approve = nil
	must(t, os.Mkdir(filepath.Join(w.ws, "hk"), 0o755))
	if err := w.root.Write("hk/pre-push", []byte("x"), false); KindOf(err) != KindProtected {
		t.Errorf("the hooks directory the approved include names was written: %v", err)
	}
}

// A change checked against the protected paths before the approved
// change's refresh does not land after it: while Refresh runs, other
// changes wait (the gate), and then are checked against what it found.
func TestRefreshHoldsOtherChanges(t *testing.T) {
	w := newWorld(t)
	must(t, os.MkdirAll(filepath.Join(w.ws, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(w.ws, "hk"), 0o755))
	inRefresh, release := make(chan struct{}), make(chan struct{})
	w.root.Refresh = func() []string {
		close(inRefresh)
		<-release
		return []string{"hk"}
	}
	var mu sync.Mutex
	approving := true
	w.root.Approve = func(string, string) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return approving, "answered"
	}
	changed := make(chan error, 1)
	go func() { changed <- w.root.Write(".git/config", []byte("[core]\n\thooksPath = hk\n"), false) }()
	<-inRefresh
	mu.Lock()
	approving = false
	mu.Unlock()
	wrote := make(chan error, 1)
	go func() { wrote <- w.root.Write("hk/pre-commit", []byte("x"), false) }()
	select {
	case err := <-wrote:
		t.Fatalf("a write went on while the configs were read again: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-changed; err != nil {
		t.Fatalf("the approved change: %v", err)
	}
	if err := <-wrote; KindOf(err) != KindProtected {
		t.Errorf("the write that waited was not checked against the refreshed paths: %v", err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, "hk/pre-commit"))
}

// What fs adds to its protected paths stays: a refresh that names less
// (a config read again without the hooks directory, or not read at all)
// drops nothing; a path fs would not take is not added.
func TestMatcherAddKeeps(t *testing.T) {
	m, err := newMatcher([]string{"policy.toml"})
	must(t, err)
	if bad := m.add([]string{"hk", "hk", "../out", "/abs", ".", "a//b"}); len(bad) != 4 {
		t.Errorf("bad paths taken: %q", bad)
	}
	m.add(nil)
	for _, p := range []string{"policy.toml", "hk/pre-commit"} {
		if _, ok := m.protected(components(p), false); !ok {
			t.Errorf("%s is not protected", p)
		}
	}
	if _, ok := m.ancestor(components("hk"), false); ok {
		t.Errorf("hk is its own protected path, not an ancestor of one")
	}
	if len(m.extra) != 2 {
		t.Errorf("protected paths %q, want policy.toml and hk once each", m.extra)
	}
}

// ProtectedNow, what a command's worker has read-only, is ProtectedBoth
// with what the git configs name now, from one walk: the hooks directory
// and the program a .git/config names are mounted (ProtectedBoth alone,
// the control, has neither), and named lists them for the session to
// keep, existing or not. A path of extra named hooks is no repository's:
// a config beside it is not read.
func TestProtectedNowReadsConfigs(t *testing.T) {
	gitTestHome(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		".git/config": "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/m\n[include]\n\tpath = ../later.gitconfig\n",
		".githooks/":  "",
		"tools/m":     "#!/bin/sh\n",
		"x":           "mine",
		"p/hooks/":    "",
		"p/config":    "not a git config [",
	})
	j := func(p string) string { return filepath.Join(ws, p) }
	mounts, names, named, notes, err := ProtectedNow(ws, []string{j("x"), j("p/hooks")})
	if err != nil || len(notes) > 0 {
		t.Fatalf("ProtectedNow: %v, notes %q", err, notes)
	}
	for _, want := range []string{".git/config", ".githooks", "tools/m", "x", "p/hooks"} {
		if !slices.Contains(mounts, j(want)) || !slices.Contains(names, j(want)) {
			t.Errorf("%s is not mounted or named: mounts %q, names %q", want, mounts, names)
		}
	}
	if want := []string{j(".githooks"), j("later.gitconfig"), j("tools/m")}; !slices.Equal(named, want) {
		t.Errorf("named %q, want %q", named, want)
	}
	control, _, err := ProtectedBoth(ws, []string{j("x")})
	if err != nil || slices.Contains(control, j(".githooks")) || slices.Contains(control, j("tools/m")) {
		t.Errorf("control: ProtectedBoth alone mounts what the config names: %q, %v", control, err)
	}
}

// Over the approval channel, a refresh that fails adds nothing and is
// said in fs's log; notes on what the launcher could not read are said;
// a path fs does not take is said and left out, the others kept.
func TestRefreshOverSays(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	failed := refreshOver(func() ([]string, []string, error) { return nil, nil, errors.New("no answer from the launcher: EOF") }, log)
	if got := failed(); got != nil || !strings.Contains(logs.String(), "were not read again") || !strings.Contains(logs.String(), "no answer from the launcher") {
		t.Errorf("a failed refresh: %q; log %s", got, logs.String())
	}
	logs.Reset()
	read := refreshOver(func() ([]string, []string, error) {
		return []string{".githooks", "../out", "tools/m"}, []string{".git/config (not read: line 3: an unclosed quote)"}, nil
	}, log)
	if got := read(); !slices.Equal(got, []string{".githooks", "tools/m"}) {
		t.Errorf("paths taken: %q", got)
	}
	for _, want := range []string{"an unclosed quote", "../out"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q: %s", want, logs.String())
		}
	}
}

// watchedRecheck is a Root.Stale and Root.Recheck as fs has them in a
// session (main.go), on a real inotify watch of the workspace's .git
// directory (for the name config) and .git/config: Stale is
// ConfigNews's, and Recheck reads the configs (readConfigsOf), or fails
// with fail set.
func watchedRecheck(t *testing.T, ws string, calls *int, fail *bool) (stale func() bool, recheck func() ([]string, error)) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	must(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	var names []string
	for p, mask := range map[string]uint32{".git": unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE, ".git/config": unix.IN_MODIFY | unix.IN_DELETE_SELF} {
		wd, err := unix.InotifyAddWatch(fd, filepath.Join(ws, p), mask)
		if err != nil {
			t.Fatal(err)
		}
		if p == ".git" {
			names = []string{WatchedName(int32(wd), "config")}
		}
	}
	read := readConfigsOf(t, ws, calls)
	news := NewConfigNews(fd, names)
	return news.Stale, func() ([]string, error) {
		paths, _, err := news.Read(func() ([]string, []string, []string, error) {
			if *fail {
				return nil, nil, nil, errors.New("no answer from the launcher: EOF")
			}
			return read(), nil, names, nil
		})
		return paths, err
	}
}

// A config the person edits by hand (not through fs) while fs serves:
// before fs serves a change that arrives after the edit, it has the
// configs read again (Root.Stale, Root.Recheck), so a write into the
// core.hooksPath the edit added is asked about (refused here) where
// before it was written unasked until fs's next approved change, and
// the person's next commit ran it. Edited in place, and replaced by a
// rename (the include added then names a new file). A write elsewhere,
// or after a file made beside the config, reads nothing; a recheck that
// fails refuses the change with why, and the next change asks again.
func TestRecheckAfterPersonEdits(t *testing.T) {
	gitTestHome(t)
	w := newWorld(t)
	w.file(t, ".git/config", "[core]\n\tbare = false\n")
	must(t, os.MkdirAll(filepath.Join(w.ws, "hk"), 0o755))
	var refreshes, rechecks int
	fail := false
	w.root.Refresh = readConfigsOf(t, w.ws, &refreshes)
	w.root.Stale, w.root.Recheck = watchedRecheck(t, w.ws, &rechecks, &fail)
	wantOK(t, "a write before any edit", w.root.Write("hk/readme", []byte("x"), false))
	if rechecks != 0 {
		t.Fatalf("read the configs with nothing changed: %d", rechecks)
	}
	// In place, as git config core.hooksPath hk does not (it renames) but
	// an editor may.
	cfg := filepath.Join(w.ws, ".git/config")
	f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("\thooksPath = hk\n")
	must(t, err)
	must(t, f.Close())
	wantKind(t, "a write into the hooks directory the person's edit names", w.root.Write("hk/pre-commit", []byte("#!/bin/sh\necho pwned\n"), false), KindProtected)
	mustNotExistHost(t, filepath.Join(w.ws, "hk/pre-commit"))
	if rechecks != 1 || refreshes != 0 {
		t.Errorf("rechecks %d, refreshes %d: want 1, 0", rechecks, refreshes)
	}
	wantOK(t, "a write elsewhere", w.root.Write("other", []byte("x"), false))
	// Git's lock file beside the config is news that concerns no config:
	// read and dropped, nothing read again.
	must(t, os.WriteFile(filepath.Join(w.ws, ".git/index.lock"), nil, 0o644))
	wantOK(t, "a write after a lock file was made", w.root.Write("other", []byte("y"), false))
	if rechecks != 1 {
		t.Errorf("a write with no config changed read the configs again: %d", rechecks)
	}
	// Replaced by a rename, naming an included file.
	tmp := filepath.Join(w.ws, ".git/config.new")
	must(t, os.WriteFile(tmp, []byte("[core]\n\thooksPath = hk\n[include]\n\tpath = ../inc.gitconfig\n"), 0o644))
	must(t, os.Rename(tmp, cfg))
	wantKind(t, "a write of the file the renamed config includes", w.root.Write("inc.gitconfig", []byte("[core]\n\tfsmonitor = x/y\n"), false), KindProtected)
	mustNotExistHost(t, filepath.Join(w.ws, "inc.gitconfig"))
	// A recheck that fails: refused, saying why; the next asks again.
	must(t, os.Mkdir(filepath.Join(w.ws, "hk2"), 0o755))
	must(t, os.WriteFile(tmp, []byte("[core]\n\thooksPath = hk2\n"), 0o644))
	must(t, os.Rename(tmp, cfg))
	fail = true
	err = w.root.Write("hk2/pre-commit", []byte("x"), false)
	wantKind(t, "a write while the configs cannot be read again", err, KindProtected)
	if err == nil || !strings.Contains(err.Error(), "could not be read again") || !strings.Contains(err.Error(), "no answer from the launcher") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, "hk2/pre-commit"))
	fail = false
	wantKind(t, "a write into hk2, named now", w.root.Write("hk2/pre-commit", []byte("x"), false), KindProtected)
	mustNotExistHost(t, filepath.Join(w.ws, "hk2/pre-commit"))
	wantOK(t, "a write elsewhere, read again", w.root.Write("other", []byte("y"), false))
}

// approve.WatchAll among the names (the launcher's answer had too many
// to send): every event concerns a config; with the names themselves,
// an event of another name does not.
func TestConfigNewsWatchAll(t *testing.T) {
	dir := t.TempDir()
	for _, names := range [][]string{{approve.WatchAll}, {WatchedName(1, "config")}} {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		must(t, err)
		wd, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE)
		if err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		if names[0] != approve.WatchAll {
			names = []string{WatchedName(int32(wd), "config")}
		}
		news := NewConfigNews(fd, names)
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprint("other", len(names[0]))), nil, 0o644))
		if got, want := news.Stale(), names[0] == approve.WatchAll; got != want {
			t.Errorf("names %q: an event of another name concerns a config: %v, want %v", names, got, want)
		}
		unix.Close(fd)
	}
}
