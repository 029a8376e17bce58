package backup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// recordedUID stands for the owner fs records through its idmapped
// mount: its throwaway uid, which later sessions reuse.
const recordedUID = 1907603510

// Restore gives every entry the owner the caller names, never the
// recorded one, and never restores setuid or setgid: a file, a directory
// and a link recorded as recordedUID with mode 04755 (02755) come back
// as the given owner's, 0755. Both inside a tree and as a backup's root
// (whose metadata is set after the rename).
func TestRestoreGivesTheCallersOwner(t *testing.T) {
	requireRoot(t, "backing up and restoring entries owned by other users")
	want := Owner{UID: 4242, GID: 4343}
	check := func(t *testing.T, p string, link bool) {
		t.Helper()
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		if int(st.Uid) != want.UID || int(st.Gid) != want.GID {
			t.Errorf("%s: restored as %d:%d, want %d:%d", p, st.Uid, st.Gid, want.UID, want.GID)
		}
		if !link && st.Mode&07777 != 0o755 {
			t.Errorf("%s: restored with mode %#o, want 0755", p, st.Mode&07777)
		}
	}
	recorded := func(p string, mode os.FileMode) {
		must(t, os.Lchown(p, recordedUID, recordedUID))
		if mode != 0 {
			must(t, os.Chmod(p, mode))
		}
	}

	t.Run("tree", func(t *testing.T) {
		w := newWorld(t, 0)
		dir := filepath.Join(w.ws, "d")
		must(t, os.Mkdir(dir, 0o755))
		must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
		put(t, filepath.Join(dir, "file"), []byte("#!/bin/sh\n"), 0o755)
		put(t, filepath.Join(dir, "sgid"), []byte("#!/bin/sh\n"), 0o755)
		must(t, os.Symlink("file", filepath.Join(dir, "link")))
		recorded(filepath.Join(dir, "file"), 0o755|os.ModeSetuid)
		recorded(filepath.Join(dir, "sgid"), 0o755|os.ModeSetgid)
		recorded(filepath.Join(dir, "sub"), 0o755|os.ModeSetuid|os.ModeSetgid)
		recorded(filepath.Join(dir, "link"), 0)
		recorded(dir, 0o755|os.ModeSetuid)
		b, err := w.store.Stage(openPath(t, dir), "d", t0)
		must(t, err)
		for _, e := range b.Tree {
			if e.UID != recordedUID || e.GID != recordedUID {
				t.Fatalf("the manifest records %s as %d:%d", e.Path, e.UID, e.GID)
			}
		}
		removeTree(t, dir)
		must(t, w.store.Restore(b.ID, openPath(t, w.ws), "d", want))
		check(t, dir, false)
		check(t, filepath.Join(dir, "sub"), false)
		check(t, filepath.Join(dir, "file"), false)
		check(t, filepath.Join(dir, "sgid"), false)
		check(t, filepath.Join(dir, "link"), true)
		// The manifest still says what fs saw.
		_, entries, err := w.store.Show(b.ID)
		must(t, err)
		if entries[0].UID != recordedUID || entries[0].Mode != 0o4755 {
			t.Errorf("the manifest's root now reads %d %#o", entries[0].UID, entries[0].Mode)
		}
	})
	t.Run("file root", func(t *testing.T) {
		w := newWorld(t, 0)
		f := filepath.Join(w.ws, "f")
		put(t, f, []byte("x"), 0o755)
		recorded(f, 0o755|os.ModeSetuid)
		b, err := w.store.Stage(openPath(t, f), "f", t0)
		must(t, err)
		must(t, os.Remove(f))
		must(t, w.store.Restore(b.ID, openPath(t, w.ws), "f", want))
		check(t, f, false)
	})
	t.Run("link root", func(t *testing.T) {
		w := newWorld(t, 0)
		l := filepath.Join(w.ws, "l")
		must(t, os.Symlink("anywhere", l))
		recorded(l, 0)
		b, err := w.store.Stage(openPath(t, l), "l", t0)
		must(t, err)
		must(t, os.Remove(l))
		must(t, w.store.Restore(b.ID, openPath(t, w.ws), "l", want))
		check(t, l, true)
	})
}

// An owner that is not a user and group (fchown's -1 would leave the
// entry root's) is refused before anything is made.
func TestRestoreOwnerRefusals(t *testing.T) {
	w := newWorld(t, 0)
	f := filepath.Join(w.ws, "f")
	put(t, f, []byte("x"), 0o644)
	b, err := w.store.Stage(openPath(t, f), "f", t0)
	must(t, err)
	must(t, os.Remove(f))
	ws := openPath(t, w.ws)
	for _, owner := range []Owner{{UID: -1, GID: 0}, {UID: 0, GID: -1}} {
		if err := w.store.Restore(b.ID, ws, "f", owner); err == nil || errors.Is(err, ErrExists) {
			t.Errorf("owner %v: error %v", owner, err)
		}
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("owner %v: something was restored", owner)
		}
	}
	must(t, w.store.Restore(b.ID, ws, "f", self()))
}
