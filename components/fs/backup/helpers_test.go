package backup

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const secret = "OUTSIDE-SECRET-4b1d9f"

// requireRoot skips (or, with PINFOLD_REQUIRE_ALL_FEATURES=1, fails)
// when not root.
func requireRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("requires root (%s), found euid %d (PINFOLD_REQUIRE_ALL_FEATURES=1 turns this skip into a failure)", why, os.Geteuid())
		}
		t.Skipf("requires root (%s), found euid %d", why, os.Geteuid())
	}
}

// world is a workspace, a directory beside it standing for the rest of
// the host (holding a secret no backup may contain) and a store.
type world struct {
	base, ws, outside, storeDir string
	store                       *Store
}

func newWorld(t *testing.T, quota int64) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), storeDir: filepath.Join(base, "store")}
	for _, d := range []string{w.ws, w.outside} {
		must(t, os.Mkdir(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(w.outside, "secret"), []byte(secret), 0o644))
	t.Cleanup(func() { writable(w.ws) }) // restored read-only directories, for TempDir's clean-up
	s, err := Open(w.storeDir, quota)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w.store = s
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// openPath opens p as the fs component would hand it over: O_PATH, not
// following a final link.
func openPath(t *testing.T, p string) *os.File {
	t.Helper()
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), p)
	t.Cleanup(func() { f.Close() })
	return f
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func put(t *testing.T, p string, data []byte, mode os.FileMode) {
	t.Helper()
	must(t, os.WriteFile(p, data, 0o600))
	must(t, os.Chmod(p, mode))
}

// setTime sets p's modification time (a link's own), nanoseconds kept.
func setTime(t *testing.T, p string, tm time.Time) {
	t.Helper()
	ts := []unix.Timespec{unix.NsecToTimespec(tm.UnixNano()), unix.NsecToTimespec(tm.UnixNano())}
	must(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW))
}

// buildTree makes, at dir, a tree with nested, empty and read-only
// directories, a few-MiB file, modes with setuid/setgid/sticky, names
// with newlines and bytes that are not UTF-8, symbolic links (one
// pointing outside, absolute, dangling, to a directory, with an odd
// target), a FIFO, a socket (not kept), and, as root, foreign owners and
// a mode-0000 file. Every entry gets its own nanosecond mtime.
func buildTree(t *testing.T, dir, outside string) {
	t.Helper()
	root := os.Geteuid() == 0
	mk := func(p string) { must(t, os.Mkdir(p, 0o700)) }
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	mk(dir)
	mk(j("a"))
	mk(j("a", "b"))
	mk(j("a", "b", "c"))
	mk(j("a", "ro"))
	mk(j("empty"))
	mk(j("sticky"))
	mk(j("bad\xff\xfename"))
	put(t, j("a", "b", "deep.txt"), []byte("deep\n"), 0o640)
	put(t, j("a", "ro", "f.txt"), []byte("read only"), 0o444)
	put(t, j("big.bin"), randomBytes(t, 3<<20+17), 0o644)
	put(t, j("exec.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	put(t, j("setuid"), []byte("su"), 0o755|os.ModeSetuid)
	put(t, j("empty.txt"), nil, 0o644)
	put(t, j("new\nline"), []byte("a name with a newline"), 0o600)
	put(t, j("bad\xff\xfename", "x\xc0\n"), []byte("inside a non-UTF-8 directory"), 0o644)
	must(t, os.Symlink(filepath.Join("..", "..", "outside", "secret"), j("link-rel")))
	must(t, os.Symlink(filepath.Join(outside, "secret"), j("link-abs")))
	must(t, os.Symlink(outside, j("link-outdir")))
	must(t, os.Symlink("does/not/exist", j("link-dangling")))
	must(t, os.Symlink("a/b", j("link-dir")))
	must(t, os.Symlink("tar\xffget\nwith newline", j("link\nodd")))
	must(t, unix.Mkfifo(j("fifo"), 0o640))
	must(t, unix.Mknod(j("sock"), unix.S_IFSOCK|0o644, 0))
	if root {
		put(t, j("nothing"), []byte("mode 0000"), 0)
		put(t, j("owned"), []byte("owned by someone else"), 0o644)
		must(t, os.Lchown(j("owned"), 1234, 5678))
		must(t, os.Chmod(j("owned"), 0o644|os.ModeSetgid))
		must(t, os.Lchown(j("link-dir"), 4321, 8765))
		must(t, os.Lchown(j("a", "b"), 1111, 2222))
	}
	// Modes and times, children before their directories.
	modes := map[string]os.FileMode{
		j("a", "ro"): 0o555, j("a", "b", "c"): 0o750, j("sticky"): 0o777 | os.ModeSticky,
		j("bad\xff\xfename"): 0o755, j("a"): 0o755, dir: 0o755, j("a", "b"): 0o700 | os.ModeSetgid,
	}
	base := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		paths = append(paths, p)
		return nil
	})
	sort.Slice(paths, func(a, b int) bool { return len(paths[a]) > len(paths[b]) }) // deepest first
	for i, p := range paths {
		if m, ok := modes[p]; ok {
			must(t, os.Chmod(p, m))
		}
		setTime(t, p, base.Add(time.Duration(i)*time.Hour+time.Duration(i*7919+13)))
	}
}

// node is what a snapshot records of one entry.
type node struct {
	Type     uint32
	Mode     uint32
	MTime    unix.Timespec
	UID, GID uint32
	Size     int64
	SHA      string
	Target   string
	Dev      uint64 // devices only
	IsSocket bool
}

// snapshot records every entry beneath dir (links not followed).
func snapshot(t *testing.T, dir string) map[string]node {
	t.Helper()
	out := map[string]node{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		n := node{Type: st.Mode & unix.S_IFMT, Mode: st.Mode & 07777, MTime: st.Mtim, UID: st.Uid, GID: st.Gid}
		switch n.Type {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			n.Size, n.SHA = int64(len(b)), hex.EncodeToString(sum[:])
		case unix.S_IFLNK:
			n.Target, err = os.Readlink(p)
			if err != nil {
				return err
			}
		case unix.S_IFSOCK:
			n.IsSocket = true
		}
		out[rel] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withoutSockets(m map[string]node) map[string]node {
	out := map[string]node{}
	for k, v := range m {
		if !v.IsSocket {
			out[k] = v
		}
	}
	return out
}

func compareSnapshots(t *testing.T, want, got map[string]node) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%q: missing after restore", k)
			continue
		}
		if g != w {
			t.Errorf("%q: restored as %+v, want %+v", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%q: restored but was not there", k)
		}
	}
}

// removeTree deletes dir as the caller of a recursive delete would,
// making read-only directories writable first.
func removeTree(t *testing.T, dir string) {
	t.Helper()
	writable(dir)
	must(t, os.RemoveAll(dir))
}

func writable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
}

// storeHolds reports whether any file beneath dir contains needle.
func storeHolds(t *testing.T, dir, needle string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(needle)) {
				found = true
			}
		}
		return nil
	})
	return found
}

// leftovers lists the store's names other than the marker, the lock and
// complete backups' ids.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if n == markerName || n == lockName {
			continue
		}
		if validID(n) {
			if _, err := os.Lstat(filepath.Join(dir, n, manifestName)); err == nil {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

func ids(t *testing.T, s *Store) []string {
	t.Helper()
	infos, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range infos {
		out = append(out, in.ID)
	}
	return out
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}

func dataPath(w *world, id string, rel ...string) string {
	return filepath.Join(append([]string{w.storeDir, id, dataName}, rel...)...)
}

// self is this process as the owner of a restored tree.
func self() Owner { return Owner{UID: os.Geteuid(), GID: os.Getegid()} }

// restoredAs is what a snapshot of a tree looks like restored for owner:
// every entry owner's, setuid and setgid gone.
func restoredAs(m map[string]node, owner Owner) map[string]node {
	out := map[string]node{}
	for k, v := range m {
		v.UID, v.GID, v.Mode = uint32(owner.UID), uint32(owner.GID), v.Mode&^(unix.S_ISUID|unix.S_ISGID)
		out[k] = v
	}
	return out
}

// stagedTree makes a tree of files entries at w.ws/d and stages it with
// label: the start of most tests here.
func stagedTree(t *testing.T, w *world, files int, label string) (string, *Backup) {
	t.Helper()
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, files)
	b, err := w.store.Stage(openPath(t, dir), label, t0)
	must(t, err)
	return dir, b
}
