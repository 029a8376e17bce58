package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// foreignDir makes, beneath out, the directory name holding the file
// "precious", both owned by uid 1234: what a process that may write the
// destination, but not that directory, could move into a restore's way.
func foreignDir(t *testing.T, out int, name string) {
	t.Helper()
	must(t, unix.Mkdirat(out, name, 0o755))
	fd, err := unix.Openat(out, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	f, err := unix.Openat(fd, "precious", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	must(t, err)
	unix.Write(f, []byte("not the restore's"))
	unix.Close(f)
	must(t, unix.Fchownat(fd, "precious", 1234, 1234, unix.AT_SYMLINK_NOFOLLOW))
	must(t, unix.Fchown(fd, 1234, 1234))
}

func tempTreeName(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), RestorePrefix) {
			return e.Name()
		}
	}
	t.Fatalf("no temporary tree in %s", dir)
	return ""
}

// When the final rename fails, Restore removes what it made and nothing
// else: here the temporary tree was moved aside and a directory it did
// not make put under its name (and the destination name taken, so the
// rename fails). The directory put there keeps its contents; what the
// restore made is emptied.
func TestRestoreFailedRenameRemovesOnlyItsOwn(t *testing.T) {
	requireRoot(t, "a directory owned by another user")
	w := newWorld(t, 0)
	dir, b := stagedTree(t, w, 5000, "d")
	removeTree(t, dir)

	testHookBeforeRestoreRename = func() {
		tmp := tempTreeName(t, w.ws)
		must(t, os.Rename(filepath.Join(w.ws, tmp), filepath.Join(w.ws, "moved")))
		ws, err := unix.Open(w.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		must(t, err)
		defer unix.Close(ws)
		foreignDir(t, ws, tmp)
		must(t, os.WriteFile(filepath.Join(w.ws, "d"), []byte("made meanwhile"), 0o644))
	}
	defer func() { testHookBeforeRestoreRename = nil }()
	wantErr(t, w.store.Restore(b.ID, openPath(t, w.ws), "d", self()), ErrExists)

	es, err := os.ReadDir(w.ws)
	must(t, err)
	var foreign string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), RestorePrefix) {
			foreign = e.Name()
		}
	}
	if foreign == "" {
		t.Fatalf("the directory put under the temporary name was removed (workspace: %v)", es)
	}
	if got, err := os.ReadFile(filepath.Join(w.ws, foreign, "precious")); err != nil || string(got) != "not the restore's" {
		t.Fatalf("the directory put under the temporary name lost its contents: %q, %v", got, err)
	}
	if left, _ := os.ReadDir(filepath.Join(w.ws, "moved")); len(left) != 0 {
		t.Errorf("what the restore made was not emptied: %v", left)
	}
}

// An entry replaced between being made and being opened is refused, and
// what replaced it is neither written into nor given another owner.
func TestRestoreRefusesReplacedEntry(t *testing.T) {
	requireRoot(t, "entries owned by another user")
	t.Run("directory", func(t *testing.T) {
		w := newWorld(t, 0)
		dir, b := stagedTree(t, w, 5000, "d")
		removeTree(t, dir)
		testHookAfterMake = func(out int, name string) {
			if !strings.HasPrefix(name, RestorePrefix) {
				return
			}
			must(t, unix.Renameat(out, name, out, "moved"))
			foreignDir(t, out, name)
		}
		defer func() { testHookAfterMake = nil }()
		err := w.store.Restore(b.ID, openPath(t, w.ws), "d", self())
		if !errors.Is(err, errReplaced) {
			t.Fatalf("error %v, want %v", err, errReplaced)
		}
		foreign := tempTreeName(t, w.ws)
		es, err := os.ReadDir(filepath.Join(w.ws, foreign))
		must(t, err)
		if len(es) != 1 || es[0].Name() != "precious" {
			t.Fatalf("the directory put in the way was written into: %v", es)
		}
		if _, err := os.Lstat(filepath.Join(w.ws, "d")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("something was restored: %v", err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		w := newWorld(t, 0)
		link := filepath.Join(w.ws, "l")
		must(t, os.Symlink("target", link))
		b, err := w.store.Stage(openPath(t, link), "l", t0)
		must(t, err)
		must(t, os.Remove(link))
		testHookAfterMake = func(out int, name string) {
			must(t, unix.Unlinkat(out, name, 0))
			must(t, unix.Symlinkat("target", out, name))
			must(t, unix.Fchownat(out, name, 1234, 1234, unix.AT_SYMLINK_NOFOLLOW))
		}
		defer func() { testHookAfterMake = nil }()
		err = w.store.Restore(b.ID, openPath(t, w.ws), "l", self())
		if !errors.Is(err, errReplaced) {
			t.Fatalf("error %v, want %v", err, errReplaced)
		}
		var st unix.Stat_t
		must(t, unix.Lstat(filepath.Join(w.ws, tempTreeName(t, w.ws)), &st))
		if st.Uid != 1234 || st.Gid != 1234 {
			t.Fatalf("the link put in the way was given to %d:%d", st.Uid, st.Gid)
		}
	})
}

// A restore whose context is cancelled part way (the CLI's Ctrl-C)
// stops, and removes what it had made: no partial tree is left under
// the temporary name (root's and 0700, which the workspace's owner could
// not remove), and nothing under the name.
func TestRestoreCancelledRemovesPartialTree(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	must(t, os.Mkdir(dir, 0o755))
	put(t, filepath.Join(dir, "a"), randomBytes(t, 3<<20), 0o644)
	must(t, os.Mkdir(filepath.Join(dir, "b"), 0o755))
	put(t, filepath.Join(dir, "b", "c"), randomBytes(t, 100), 0o644)
	b, err := w.store.Stage(openPath(t, dir), "d", t0)
	must(t, err)
	removeTree(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	made := 0
	testHookAfterMake = func(out int, name string) {
		// "a", a file of three blocks, is restored by then.
		if made++; name == "b" {
			cancel()
		}
	}
	defer func() { testHookAfterMake = nil }()
	err = w.store.RestoreContext(ctx, b.ID, openPath(t, w.ws), "d", self())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
	if made != 2 {
		t.Errorf("%d entries made by name, want 2 (the root and b)", made)
	}
	es, err := os.ReadDir(w.ws)
	must(t, err)
	if len(es) != 0 {
		t.Fatalf("a cancelled restore left %v", es)
	}
}
