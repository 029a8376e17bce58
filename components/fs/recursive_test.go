package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
)

// recursiveWorld is a world whose Root deletes trees with a backup store
// beside the workspace and scripted answers.
func recursiveWorld(t *testing.T, quota int64, answers ...bool) (*world, *backup.Store, *[]string) {
	t.Helper()
	w := newWorld(t)
	store, err := backup.Open(filepath.Join(t.TempDir(), "store"), quota)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var asked []string
	w.root.Recursive = &Recursive{Store: store, Confirm: func(action, detail string, q Question) (bool, string) {
		kind := map[Question]string{AskDelete: "confirm", AskEvict: "evict", AskIrreversible: "irreversible"}[q]
		asked = append(asked, kind+": "+action)
		if len(answers) == 0 {
			return false, "no answer"
		}
		a := answers[0]
		answers = answers[1:]
		if a {
			return true, "approved"
		}
		return false, "declined"
	}}
	for rel, content := range map[string]string{"build/a.o": "aaa", "build/sub/b.o": "bbb", "build/sub/deep/c": "c"} {
		w.file(t, rel, content)
	}
	os.Symlink(filepath.Join(w.outside, "secret"), filepath.Join(w.ws, "build", "out-link"))
	return w, store, &asked
}

// Confirmed: the tree is backed up, verified and removed (the outside
// file a link pointed at stays); the backup restores it byte for byte.
func TestDeleteRecursiveBackedUp(t *testing.T) {
	w, store, asked := recursiveWorld(t, 0, true)
	res, err := w.root.DeleteRecursive("build")
	if err != nil || res.Backup == "" || res.Irreversible {
		t.Fatalf("%+v %v", res, err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, "build"))
	if b, _ := os.ReadFile(filepath.Join(w.outside, "secret")); string(b) != secret {
		t.Fatal("the outside file a link pointed at changed")
	}
	if len(*asked) != 1 || !strings.Contains((*asked)[0], `delete "build"`) {
		t.Errorf("questions %q", *asked)
	}
	if err := store.Verify(res.Backup); err != nil {
		t.Fatal(err)
	}
	ws, err := os.Open(w.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := store.Restore(res.Backup, ws, "build", backup.Owner{UID: os.Geteuid(), GID: os.Getegid()}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"build/a.o": "aaa", "build/sub/b.o": "bbb", "build/sub/deep/c": "c"} {
		if b, err := os.ReadFile(filepath.Join(w.ws, rel)); err != nil || string(b) != want {
			t.Errorf("%s after restore: %q %v", rel, b, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(w.ws, "build", "out-link")); err != nil || l != filepath.Join(w.outside, "secret") {
		t.Errorf("link after restore: %q %v", l, err)
	}
}

// Another tree renamed onto the name while the person is asked is left
// alone (it is in no backup), as is the confirmed tree under its new
// name; a file swapped for the confirmed one likewise. A hunt found the
// swapped-in tree removed and a backup named for it.
func TestDeleteRecursiveSwappedName(t *testing.T) {
	for _, kind := range []string{"dir", "file"} {
		w, _, _ := recursiveWorld(t, 0)
		w.file(t, "junk/a.o", "junk")
		w.file(t, "important/thesis.tex", "years of work")
		target := "junk"
		if kind == "file" {
			w.file(t, "junk.txt", "junk")
			w.file(t, "important.txt", "years of work")
			target = "junk.txt"
		}
		w.root.Recursive.Confirm = func(string, string, Question) (bool, string) {
			// The agent's renames, served while the question is open.
			must(t, w.root.Rename(target, target+".old", false))
			must(t, w.root.Rename(strings.Replace(target, "junk", "important", 1), target, false))
			return true, "yes"
		}
		_, err := w.root.DeleteRecursive(target)
		if KindOf(err) != KindFailed || !strings.Contains(err.Error(), "left as it is") {
			t.Errorf("%s: %v, want a failure that says the new tree was left", kind, err)
		}
		in := map[string]string{"dir": "junk/thesis.tex", "file": "junk.txt"}[kind]
		if b, err := os.ReadFile(filepath.Join(w.ws, in)); err != nil || string(b) != "years of work" {
			t.Errorf("%s: the swapped-in tree is %q, %v", kind, b, err)
		}
		old := map[string]string{"dir": "junk.old/a.o", "file": "junk.txt.old"}[kind]
		if _, err := os.Stat(filepath.Join(w.ws, old)); err != nil {
			t.Errorf("%s: the confirmed tree: %v", kind, err)
		}
	}
}

// Between the backup and the removal no change of fs's runs: a tree the
// agent moves into the one being removed (so that it would go with no
// backup of its own) waits, and then finds no directory to move into.
func TestDeleteRecursiveHoldsChanges(t *testing.T) {
	w, _, _ := recursiveWorld(t, 0, true)
	w.file(t, "junk/a.o", "junk")
	w.file(t, "important/thesis.tex", "years of work")
	moved := make(chan error, 1)
	testHookStaged = func() {
		go func() { moved <- w.root.Rename("important", "junk/important", false) }()
		select {
		case err := <-moved:
			moved <- err
			t.Errorf("a rename ran between the backup and the removal: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer func() { testHookStaged = nil }()
	if _, err := w.root.DeleteRecursive("junk"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-moved:
		if err == nil {
			t.Error("the rename into the removed tree succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rename still waits after the delete")
	}
	if b, err := os.ReadFile(filepath.Join(w.ws, "important/thesis.tex")); err != nil || string(b) != "years of work" {
		t.Errorf("important: %q, %v", b, err)
	}
}

// Not confirmed (declined, or no answer): nothing is backed up or
// removed.
func TestDeleteRecursiveCancelled(t *testing.T) {
	for _, answers := range [][]bool{{false}, nil} {
		w, store, _ := recursiveWorld(t, 0, answers...)
		_, err := w.root.DeleteRecursive("build")
		if KindOf(err) != KindNeedsConfirmation || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("%v: %v", answers, err)
		}
		if _, err := os.Stat(filepath.Join(w.ws, "build/sub/deep/c")); err != nil {
			t.Errorf("%v: the tree was touched: %v", answers, err)
		}
		if l, _ := store.List(); len(l) != 0 {
			t.Errorf("%v: a backup was made: %v", answers, l)
		}
	}
}

// When no backup fits, the delete needs the second, irreversible
// confirmation: without it nothing is removed; with it the tree goes and
// the answer says there is no backup.
func TestDeleteRecursiveNoRoom(t *testing.T) {
	w, _, asked := recursiveWorld(t, 1, true, false) // a 1-byte store
	_, err := w.root.DeleteRecursive("build")
	if KindOf(err) != KindNeedsConfirmation || !strings.Contains(err.Error(), "irreversible") {
		t.Fatalf("declined irreversible: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "build/a.o")); err != nil {
		t.Fatalf("the tree was touched: %v", err)
	}
	if len(*asked) != 2 || !strings.HasPrefix((*asked)[1], "irreversible: ") || !strings.Contains((*asked)[1], "WITHOUT a backup") {
		t.Errorf("questions %q", *asked)
	}
	w2, _, _ := recursiveWorld(t, 1, true, true)
	res, err := w2.root.DeleteRecursive("build")
	if err != nil || !res.Irreversible || res.Backup != "" {
		t.Fatalf("confirmed irreversible: %+v %v", res, err)
	}
	mustNotExistHost(t, filepath.Join(w2.ws, "build"))
}

// A backup that fails for any other reason cancels the delete: here the
// tree holds a mount point, which the store refuses to copy.
func TestDeleteRecursiveBackupFails(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatal("requires root (to mount a tmpfs in the tree)")
		}
		t.Skip("requires root (to mount a tmpfs in the tree)")
	}
	w, _, _ := recursiveWorld(t, 0, true)
	mnt := filepath.Join(w.ws, "build", "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	_, err := w.root.DeleteRecursive("build")
	if KindOf(err) != KindFailed || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "build/sub/deep/c")); err != nil {
		t.Fatalf("the tree was touched: %v", err)
	}
}

// A protected tree needs its own approval before the delete is even
// offered; an escape is refused before anything is asked.
func TestDeleteRecursiveProtectedAndEscapes(t *testing.T) {
	w, _, asked := recursiveWorld(t, 0, true)
	w.file(t, ".git/hooks/pre-commit", "x")
	if _, err := w.root.DeleteRecursive(".git"); KindOf(err) != KindProtected {
		t.Errorf(".git without approval: %v", err)
	}
	w.symlink(t, w.outside, "to-outside")
	if _, err := w.root.DeleteRecursive("to-outside/dir"); KindOf(err) != KindEscape {
		t.Errorf("through a link: %v", err)
	}
	if _, err := w.root.DeleteRecursive("../outside"); KindOf(err) != KindBadRequest {
		t.Errorf("..: %v", err)
	}
	if len(*asked) != 0 {
		t.Errorf("asked %q", *asked)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "dir", "secret")); err != nil {
		t.Fatal(err)
	}
}

// Backup (bash's, after the person confirmed a shell deletion) asks
// nobody and changes nothing; the backup verifies; the whole workspace
// can be kept; no room is its own kind; hidden and escaping paths are
// refused like everywhere else.
func TestBackupForBash(t *testing.T) {
	w, store, asked := recursiveWorld(t, 0)
	id, err := w.root.Backup("build")
	if err != nil || id == "" {
		t.Fatalf("%q %v", id, err)
	}
	if len(*asked) != 0 {
		t.Errorf("Backup asked the person: %q", *asked)
	}
	if b, err := os.ReadFile(filepath.Join(w.ws, "build/sub/b.o")); err != nil || string(b) != "bbb" {
		t.Fatalf("the tree changed: %q %v", b, err)
	}
	if err := store.Verify(id); err != nil {
		t.Fatal(err)
	}
	if id, err := w.root.Backup("."); err != nil || id == "" {
		t.Fatalf("the whole workspace: %q %v", id, err)
	}
	for _, p := range []string{"../x", "build/out-link/x", "build/out-link", "/etc"} {
		if _, err := w.root.Backup(p); err == nil {
			t.Errorf("Backup(%q) succeeded", p)
		}
	}
	full, _, _ := recursiveWorld(t, 1)
	if _, err := full.root.Backup("build"); KindOf(err) != KindNoRoom || Decide(err).Rule != RuleNoRoom {
		t.Errorf("no room: %v (%+v)", err, Decide(err))
	}
	none := newWorld(t)
	if _, err := none.root.Backup("."); KindOf(err) != KindNeedsConfirmation {
		t.Errorf("without a store: %v", err)
	}
}

// backup is bash's alone: the agent asking for one is refused by role.
func TestBackupOpBashOnly(t *testing.T) {
	w, store, _ := recursiveWorld(t, 0)
	h := handlers(w.root)[OpBackup]
	args := []byte(`{"path":"build"}`)
	if d, _, _ := h(context.Background(), pki.Agent, args, nil); d.Allowed || d.Reason != rpc.ReasonCallerRole {
		t.Errorf("the agent: %+v", d)
	}
	if l, _ := store.List(); len(l) != 0 {
		t.Fatalf("the agent's request made a backup: %v", l)
	}
	d, res, _ := h(context.Background(), pki.Bash, args, nil)
	if !d.Allowed || res.(BackupResult).ID == "" {
		t.Errorf("bash: %+v %+v", d, res)
	}
}

// A delete whose backup fits only by evicting older backups asks the
// person again, naming that: declined, nothing is deleted or evicted;
// confirmed, the older backup goes and the tree is deleted with its own.
// (Evicting unasked let an agent drop the backup of a tree it had
// deleted, by deleting junk of its own.)
func TestDeleteRecursiveEvictionAsked(t *testing.T) {
	w, store, asked := recursiveWorld(t, 0, true, true, false, true, true)
	first, err := w.root.DeleteRecursive("build")
	if err != nil || first.Backup == "" {
		t.Fatalf("%+v %v", first, err)
	}
	kept, err := store.List()
	if err != nil || len(kept) != 1 {
		t.Fatalf("%v %v", kept, err)
	}
	// The same store with room for one such tree and a half.
	small, err := backup.Open(store.Dir(), kept[0].Size+kept[0].Size/2)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	w.root.Recursive.Store = small
	for rel, content := range map[string]string{"junk/a.o": "aaa", "junk/sub/b.o": "bbb", "junk/sub/deep/c": "c"} {
		w.file(t, rel, content)
	}
	_, err = w.root.DeleteRecursive("junk")
	if KindOf(err) != KindNeedsConfirmation || !strings.Contains(err.Error(), "nothing was deleted or evicted") {
		t.Fatalf("eviction declined: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "junk/a.o")); err != nil {
		t.Fatalf("the tree was touched: %v", err)
	}
	if l, _ := small.List(); len(l) != 1 || l[0].ID != first.Backup {
		t.Fatalf("backups after a declined eviction: %+v", l)
	}
	if len(*asked) != 3 || !strings.HasPrefix((*asked)[2], "evict: ") || !strings.Contains((*asked)[2], "EVICTING 1 older backups") {
		t.Fatalf("questions %q", *asked)
	}
	res, err := w.root.DeleteRecursive("junk")
	if err != nil || res.Backup == "" || res.Irreversible {
		t.Fatalf("eviction confirmed: %+v %v", res, err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, "junk"))
	if l, _ := small.List(); len(l) != 1 || l[0].ID != res.Backup {
		t.Fatalf("backups after a confirmed eviction: %+v", l)
	}
}

// The eviction question names every backup it would evict (none goes
// unnamed: a question too long is not asked at all), each by what was
// deleted, quoted to ASCII and cut, when, and its size.
func TestInTheWay(t *testing.T) {
	at := time.Date(2026, 12, 1, 16, 30, 0, 0, time.UTC)
	var infos []backup.Info
	for i, l := range []string{"thesis", "a\x1b[2Jb", strings.Repeat("é", 100), "d", "e", "f"} {
		infos = append(infos, backup.Info{ID: fmt.Sprintf("id%d", i), Label: l, Created: at, Size: 14000})
	}
	got := inTheWay(infos)
	const when = ` made 2026-12-01 16:30 UTC (14000 bytes)`
	want := `id0, the backup of "thesis"` + when + `; id1, the backup of "a\x1b[2Jb"` + when + `; ` +
		`id2, the backup of "` + strings.Repeat(`\u00e9`, 8) + `…"` + when + `; id3, the backup of "d"` + when + `; id4, the backup of "e"` + when + `; id5, the backup of "f"` + when
	if got != want {
		t.Errorf("inTheWay:\n got %s\nwant %s", got, want)
	}
}
