package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// The store leaves a twentieth of its file system free (the host's /var
// is not filled to the last block by what an agent chose to back up),
// and inodes too: a tree that would fit only into that reserve is no
// room, and so is one with more entries than the free inodes allow.
// The controls: a smaller tree, and fewer files.
func TestDiskReserve(t *testing.T) {
	requireRoot(t, "to mount small tmpfs file systems as stores")
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	must(t, os.Mkdir(ws, 0o755))
	open := func(name, opts string) *Store {
		mnt := filepath.Join(base, name)
		must(t, os.MkdirAll(mnt, 0o700))
		if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts+",mode=0700"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
		s, err := Open(filepath.Join(mnt, "store"), 0)
		must(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	// 4 MiB: a 3.9 MiB tree fits its free space, not beside the reserve.
	s := open("bytes", "size=4m")
	tree := func(name string, files, size int) string {
		dir := filepath.Join(ws, name)
		must(t, os.MkdirAll(dir, 0o755))
		for i := range files {
			put(t, filepath.Join(dir, fmt.Sprint(i)), randomBytes(t, size), 0o644)
		}
		return dir
	}
	_, err := s.Stage(openPath(t, tree("near-full", 1, 3900<<10)), "near-full", t0)
	var nr *NoRoomError
	if !errors.As(err, &nr) || !nr.Disk || !strings.Contains(err.Error(), "kept free") {
		t.Fatalf("a tree only the reserve would hold: %v", err)
	}
	if _, err := s.Stage(openPath(t, tree("fits", 1, 3<<20)), "fits", t0); err != nil {
		t.Fatalf("control, 3 MiB: %v", err)
	}
	// 200 inodes: 300 entries do not fit; 100 do.
	s = open("inodes", "size=64m,nr_inodes=200")
	_, err = s.Stage(openPath(t, tree("many", 300, 10)), "many", t0)
	if !errors.As(err, &nr) || nr.Inodes != 301 || !strings.Contains(err.Error(), "inodes") {
		t.Fatalf("more entries than inodes: %v (%+v)", err, nr)
	}
	if _, err := s.Stage(openPath(t, tree("few", 100, 10)), "few", t0); err != nil {
		t.Fatalf("control, 100 files: %v", err)
	}
}
