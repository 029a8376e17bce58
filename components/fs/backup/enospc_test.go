package backup

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size at dir (made if missing) and
// unmounts it when the test ends. The caller has checked for root.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o700))
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("mounting a tmpfs: %v", err)
		}
		t.Skipf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
}

// fullWorld is a world whose store lives on a 1 MiB tmpfs, with one small
// backup already in it.
func fullWorld(t *testing.T) (*world, *Backup) {
	t.Helper()
	requireRoot(t, "to mount a small tmpfs as the store")
	base := t.TempDir()
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	must(t, os.Mkdir(w.ws, 0o755))
	must(t, os.Mkdir(w.outside, 0o755))
	mnt := filepath.Join(base, "mnt")
	mountTmpfs(t, mnt, "1m")
	w.storeDir = filepath.Join(mnt, "store")
	s, err := Open(w.storeDir, 0) // the 3 GiB default: the disk is the limit
	must(t, err)
	t.Cleanup(func() { s.Close() })
	w.store = s
	first := filepath.Join(w.ws, "first")
	smallTree(t, first, 20000)
	b, err := s.Stage(openPath(t, first), "first", t0)
	must(t, err)
	return w, b
}

// checkUntouched: the earlier backup is complete and verifies, and
// nothing of the failed staging is left.
func checkUntouched(t *testing.T, w *world, b *Backup) {
	t.Helper()
	if got := ids(t, w.store); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("ids %q, want only the earlier backup", got)
	}
	must(t, w.store.Verify(b.ID))
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

func bigTree(t *testing.T, w *world, name string, files, size int) string {
	t.Helper()
	dir := filepath.Join(w.ws, name)
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	for i := range files {
		put(t, filepath.Join(dir, "sub", string(rune('a'+i))), randomBytes(t, size), 0o644)
	}
	return dir
}

// A source bigger than the store's file system: refused before anything
// is copied or evicted (ErrNoRoom, the disk's sizes), so the caller can
// ask for the irreversible-delete confirmation.
func TestFullDiskRefusedUpFront(t *testing.T) {
	w, first := fullWorld(t)
	dir := bigTree(t, w, "big", 4, 512<<10) // 2 MiB
	_, err := w.store.Stage(openPath(t, dir), "big", t0.Add(time.Minute))
	var nr *NoRoomError
	if !errors.As(err, &nr) || !nr.Disk || nr.DiskNeed < 2<<20 || nr.DiskFree > 1<<20 {
		t.Fatalf("error %v (%+v), want a NoRoomError for the disk", err, nr)
	}
	checkUntouched(t, w, first)
}

// ENOSPC during the copy: an error that says so, the partial staging
// removed, the earlier backup untouched, and the store usable after.
func TestFullDiskMidCopy(t *testing.T) {
	t.Run("bigger than the disk", func(t *testing.T) {
		w, first := fullWorld(t)
		testSkipDiskCheck = true
		defer func() { testSkipDiskCheck = false }()
		dir := bigTree(t, w, "big", 4, 512<<10)
		_, err := w.store.Stage(openPath(t, dir), "big", t0.Add(time.Minute))
		if !errors.Is(err, unix.ENOSPC) {
			t.Fatalf("error %v, want ENOSPC", err)
		}
		checkUntouched(t, w, first)
	})
	t.Run("disk filled by someone else after the check", func(t *testing.T) {
		w, first := fullWorld(t)
		dir := bigTree(t, w, "mid", 3, 100<<10) // 300 KiB, fits when checked
		filler := filepath.Join(filepath.Dir(w.storeDir), "filler")
		testHookAfterEvict = func() {
			f, err := os.Create(filler)
			must(t, err)
			defer f.Close()
			buf := make([]byte, 4096)
			for {
				if _, err := f.Write(buf); err != nil {
					break // full
				}
			}
			// Leave a little room, so the copy starts and fails part-way.
			st, _ := f.Stat()
			must(t, f.Truncate(st.Size()-150<<10))
		}
		defer func() { testHookAfterEvict = nil }()
		_, err := w.store.Stage(openPath(t, dir), "mid", t0.Add(time.Minute))
		if !errors.Is(err, unix.ENOSPC) {
			t.Fatalf("error %v, want ENOSPC", err)
		}
		checkUntouched(t, w, first)

		// Room again: the same source stages, and the delete-restore
		// round trip works on this store.
		testHookAfterEvict = nil
		must(t, os.Remove(filler))
		b, err := w.store.Stage(openPath(t, dir), "mid", t0.Add(2*time.Minute))
		must(t, err)
		before := snapshot(t, dir)
		removeTree(t, dir)
		must(t, w.store.Restore(b.ID, openPath(t, w.ws), "mid", self()))
		compareSnapshots(t, before, snapshot(t, dir))
	})
}
