package backup

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)

// The whole path a recursive delete takes: stage, the caller deletes,
// restore; the restored tree equals the original byte for byte, with
// modes, times and link targets, every entry the given owner's (as
// root), setuid and setgid gone.
func TestStageDeleteRestore(t *testing.T) {
	w := newWorld(t, 0)
	tree := filepath.Join(w.ws, "tree")
	buildTree(t, tree, w.outside)
	before := snapshot(t, tree)

	b, err := w.store.Stage(openPath(t, tree), "rm -rf tree", t0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Type != TypeDir || b.Skipped != 1 || b.Entries != len(before) || b.Bytes < 3<<20 || !b.Created.Equal(t0) || b.Label != "rm -rf tree" {
		t.Fatalf("info %+v (snapshot has %d entries)", b.Info, len(before))
	}
	if storeHolds(t, w.storeDir, secret) {
		t.Fatal("the store holds the content of a file outside the tree: a link was followed")
	}
	// The snapshot's times are unchanged by the staging (atime aside).
	compareSnapshots(t, before, snapshot(t, tree))

	removeTree(t, tree)
	ws := openPath(t, w.ws)
	if err := w.store.Restore(b.ID, ws, "tree", self()); err != nil {
		t.Fatal(err)
	}
	want := restoredAs(withoutSockets(before), self())
	compareSnapshots(t, want, snapshot(t, tree))
	if _, err := os.Lstat(filepath.Join(tree, "sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a socket was restored: %v", err)
	}

	// Restoring again under the same name is refused, the tree untouched.
	wantErr(t, w.store.Restore(b.ID, ws, "tree", self()), ErrExists)
	compareSnapshots(t, want, snapshot(t, tree))
	// Under another name, beside it: the same tree.
	must(t, w.store.Restore(b.ID, ws, "tree.again", self()))
	compareSnapshots(t, want, snapshot(t, filepath.Join(w.ws, "tree.again")))
	if es, _ := os.ReadDir(w.ws); len(es) != 2 {
		t.Errorf("workspace after restores: %v (a temporary tree left?)", es)
	}

	// What the store says of it: the manifest (read back from disk) has
	// every entry exactly, odd names included.
	must(t, w.store.Verify(b.ID))
	info, entries, err := w.store.Show(b.ID)
	must(t, err)
	if !reflect.DeepEqual(info, b.Info) || !reflect.DeepEqual(entries, b.Tree) {
		t.Fatalf("Show differs from what Stage returned")
	}
	find := func(p string) Entry {
		for _, e := range entries {
			if e.Path == p {
				return e
			}
		}
		t.Fatalf("no entry %q", p)
		return Entry{}
	}
	if e := find("link-rel"); e.Type != TypeSymlink || e.Target != "../../outside/secret" {
		t.Errorf("link-rel: %+v", e)
	}
	if e := find("link\nodd"); e.Target != "tar\xffget\nwith newline" {
		t.Errorf("odd link: %+v", e)
	}
	if e := find("bad\xff\xfename/x\xc0\n"); e.Type != TypeFile || e.Size != int64(len("inside a non-UTF-8 directory")) {
		t.Errorf("non-UTF-8 name: %+v", e)
	}
	if e := find("sock"); !e.Skipped || e.Type != TypeSocket {
		t.Errorf("socket: %+v", e)
	}
	if e := find("a/b"); e.Mode != 0o2700 {
		t.Errorf("a/b mode %#o", e.Mode)
	}
	infos, err := w.store.List()
	must(t, err)
	if len(infos) != 1 || !reflect.DeepEqual(infos[0], b.Info) {
		t.Fatalf("List: %+v", infos)
	}
	// The stored copy keeps modes only in the manifest.
	st, err := os.Stat(dataPath(w, b.ID, "exec.sh"))
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("stored copy mode %v, want 0600", st.Mode())
	}
}

// A regular file, an O_PATH one, and a symbolic link can be backed up
// too; the link is kept as a link.
func TestStageFileAndLink(t *testing.T) {
	w := newWorld(t, 0)
	file := filepath.Join(w.ws, "f")
	put(t, file, randomBytes(t, 100000), 0o640)
	setTime(t, file, t0)
	link := filepath.Join(w.ws, "l")
	must(t, os.Symlink(filepath.Join(w.outside, "secret"), link))
	setTime(t, link, t0.Add(time.Second))
	before := snapshot(t, w.ws)

	readable, err := os.Open(file)
	must(t, err)
	defer readable.Close()
	for i, src := range []*os.File{readable, openPath(t, file), openPath(t, link)} {
		b, err := w.store.Stage(src, "file", t0.Add(time.Duration(i)))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		name := []string{"f", "f", "l"}[i]
		want := []Type{TypeFile, TypeFile, TypeSymlink}[i]
		if b.Type != want || b.Entries != 1 {
			t.Fatalf("%d: %+v", i, b.Info)
		}
		must(t, os.Remove(filepath.Join(w.ws, name)))
		must(t, w.store.Restore(b.ID, openPath(t, w.ws), name, self()))
	}
	after := snapshot(t, w.ws)
	delete(before, ".") // the workspace's own time changed
	delete(after, ".")
	compareSnapshots(t, before, after)
	if storeHolds(t, w.storeDir, secret) {
		t.Fatal("the link was followed")
	}
}

// A source that is neither a directory, a file nor a link is refused.
func TestStageRefusesFIFOSource(t *testing.T) {
	w := newWorld(t, 0)
	p := filepath.Join(w.ws, "fifo")
	must(t, unix.Mkfifo(p, 0o600))
	_, err := w.store.Stage(openPath(t, p), "x", t0)
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("error %v", err)
	}
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

// A tree holding the store itself is refused (it would copy itself).
func TestStageRefusesTreeHoldingStore(t *testing.T) {
	w := newWorld(t, 0)
	_, err := w.store.Stage(openPath(t, w.base), "x", t0)
	if err == nil || !strings.Contains(err.Error(), "backup store itself") {
		t.Fatalf("error %v", err)
	}
}

func smallTree(t *testing.T, dir string, size int) {
	t.Helper()
	must(t, os.Mkdir(dir, 0o755))
	put(t, filepath.Join(dir, "f"), randomBytes(t, size), 0o644)
}

// Eviction: nothing is evicted unless the caller allows it (the person
// was shown which): a source that does not fit beside the backups kept
// is ErrNoRoom naming the oldest backups in the way, and only with
// exactly those allowed do they go, oldest first, only as many as
// needed; an incomplete one is never counted (and is cleaned away); a
// source that cannot fit even with every backup evicted is ErrNoRoom,
// with its sizes, names none in the way, and nothing is evicted; a
// backup in use is passed over.
func TestQuotaEviction(t *testing.T) {
	const each = 2000 + 2*EntryCharge // a tree of 2000 bytes: its directory and one file
	const quota = 3*each + 1000       // three fit, not four
	w := newWorld(t, quota)
	s := w.store
	stage := func(name string, size int, i int, evict []string) (*Backup, error) {
		dir := filepath.Join(w.ws, name)
		if _, err := os.Lstat(dir); err != nil {
			smallTree(t, dir, size)
		}
		return s.StageEvicting(openPath(t, dir), name, t0.Add(time.Duration(i)*time.Minute), evict)
	}
	noRoom := func(err error, inTheWay ...string) *NoRoomError {
		t.Helper()
		var nr *NoRoomError
		if !errors.As(err, &nr) || !errors.Is(err, ErrNoRoom) {
			t.Fatalf("error %v, want a NoRoomError", err)
		}
		var way []string
		for _, in := range nr.InTheWay {
			way = append(way, in.ID)
		}
		if !slices.Equal(way, inTheWay) {
			t.Fatalf("in the way %q, want %q (%v)", way, inTheWay, err)
		}
		return nr
	}
	var all []string
	for i := range 3 {
		b, err := stage("t"+string(rune('1'+i)), 2000, i, nil)
		must(t, err)
		if b.Size != each {
			t.Fatalf("size %d", b.Size)
		}
		all = append(all, b.ID)
	}
	if got := ids(t, s); !slices.Equal(got, all) || !slices.IsSorted(got) {
		t.Fatalf("ids %q, want %q", got, all)
	}

	// An incomplete staging from a crash, large: not counted.
	crashed := filepath.Join(w.storeDir, stagePrefix+newID(t0))
	must(t, os.Mkdir(crashed, 0o700))
	put(t, filepath.Join(crashed, "junk"), randomBytes(t, 50000), 0o600)

	// A fourth does not fit beside three: the oldest is in the way, and
	// stays unless it is allowed to go (Stage allows none).
	_, err := s.Stage(openPath(t, filepath.Join(w.ws, "t1")), "t4", t0.Add(4*time.Minute))
	noRoom(err, all[0])
	_, err = stage("t4", 2000, 4, all[1:])
	noRoom(err, all[0])
	if got := ids(t, s); !slices.Equal(got, all) {
		t.Fatalf("a staging that was not allowed to evict did: %q, want %q", got, all)
	}
	if _, err := os.Lstat(crashed); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the crashed staging is still there: %v", err)
	}
	b4, err := stage("t4", 2000, 4, all[:1])
	must(t, err)
	if got, want := ids(t, s), []string{all[1], all[2], b4.ID}; !slices.Equal(got, want) {
		t.Fatalf("after one eviction %q, want %q", got, want)
	}

	// Too big even for an empty store: nothing evicted, whatever is
	// allowed, and none is in the way.
	before := ids(t, s)
	_, err = stage("huge", quota, 5, before)
	nr := noRoom(err)
	if nr.Need != quota+2*EntryCharge || nr.Quota != quota || nr.Used != 3*each || nr.Evictable != nr.Used || nr.Disk {
		t.Fatalf("NoRoomError %+v", nr)
	}
	if got := ids(t, s); !slices.Equal(got, before) {
		t.Fatalf("a refused staging evicted: %q, want %q", got, before)
	}

	// The oldest is being restored (locked): the next oldest is the one
	// in the way, and goes.
	lock, err := s.openBackup(before[0], false)
	must(t, err)
	_, err = stage("t6", 2000, 6, nil)
	noRoom(err, before[1])
	b6, err := stage("t6", 2000, 6, before[1:2])
	must(t, err)
	if got, want := ids(t, s), []string{before[0], before[2], b6.ID}; !slices.Equal(got, want) {
		t.Fatalf("eviction with the oldest in use %q, want %q", got, want)
	}
	// Fits only if the locked one went too: refused, nothing evicted.
	before = ids(t, s)
	_, err = stage("t7", quota-each-2*EntryCharge+1000, 7, before) // more than two evictions free, less than three
	if nr := noRoom(err); nr.Evictable != 2*each {
		t.Fatalf("error %v (%+v)", err, nr)
	}
	if got := ids(t, s); !slices.Equal(got, before) {
		t.Fatalf("a refused staging evicted: %q, want %q", got, before)
	}
	wantErr(t, s.Remove(before[0]), ErrInUse)
	unix.Close(lock)

	// Fits after evicting everything: everything goes, once allowed.
	_, err = stage("t8", quota-each-2*EntryCharge+1000, 8, nil)
	noRoom(err, before...)
	b8, err := stage("t8", quota-each-2*EntryCharge+1000, 8, before)
	must(t, err)
	if got := ids(t, s); !slices.Equal(got, []string{b8.ID}) {
		t.Fatalf("ids %q", got)
	}
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

func TestRemove(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, 10)
	b, err := w.store.Stage(openPath(t, dir), "x", t0)
	must(t, err)
	must(t, w.store.Remove(b.ID))
	if got := ids(t, w.store); len(got) != 0 {
		t.Fatalf("ids %q", got)
	}
	wantErr(t, w.store.Remove(b.ID), ErrNotFound)
	wantErr(t, w.store.Verify(b.ID), ErrNotFound)
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

// The source changing between the copy and the second walk fails the
// staging, whatever changed, and leaves nothing behind.
func TestSourceChangedDuringStaging(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(dir string) error
	}{
		{"content", func(d string) error { return os.WriteFile(filepath.Join(d, "sub", "f"), []byte("changed!"), 0o644) }},
		{"same size", func(d string) error { return os.WriteFile(filepath.Join(d, "sub", "f"), []byte("original"), 0o644) }},
		{"new file", func(d string) error { return os.WriteFile(filepath.Join(d, "zz-new"), nil, 0o644) }},
		{"removed", func(d string) error { return os.Remove(filepath.Join(d, "sub", "f")) }},
		{"mode", func(d string) error { return os.Chmod(filepath.Join(d, "sub", "f"), 0o600) }},
		{"link", func(d string) error {
			os.Remove(filepath.Join(d, "l"))
			return os.Symlink("elsewhere", filepath.Join(d, "l"))
		}},
		{"mtime", func(d string) error {
			return os.Chtimes(filepath.Join(d, "sub", "f"), time.Now(), time.Now().Add(time.Hour))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 0)
			dir := filepath.Join(w.ws, "d")
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			put(t, filepath.Join(dir, "sub", "f"), []byte("ORIGINAL"), 0o644)
			must(t, os.Symlink("target", filepath.Join(dir, "l")))
			testHookAfterCopy = func() { must(t, tc.change(dir)) }
			defer func() { testHookAfterCopy = nil }()
			_, err := w.store.Stage(openPath(t, dir), "x", t0)
			wantErr(t, err, ErrChanged)
			if got := ids(t, w.store); len(got) != 0 {
				t.Fatalf("ids %q", got)
			}
			if l := leftovers(t, w.storeDir); len(l) > 0 {
				t.Fatalf("leftovers %q", l)
			}
		})
	}
}

// A file growing while it is copied.
func TestSourceGrowsDuringCopy(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, 1000)
	testHookVisit = func(rel string) {
		if rel == "f" {
			f, err := os.OpenFile(filepath.Join(dir, "f"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			f.Write(randomBytes(t, 5000))
			f.Close()
		}
	}
	defer func() { testHookVisit = nil }()
	_, err := w.store.Stage(openPath(t, dir), "x", t0)
	wantErr(t, err, ErrChanged)
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

// Symbolic links swapped into the tree while it is walked are not
// followed: a directory or a file replaced by a link to the outside
// between its lookup and its opening, or a directory being walked
// replaced by a link (the walk holds descriptors; the second walk sees
// the link). Each is ErrChanged; the store never holds the outside's
// content and keeps nothing of the attempt.
func TestSymlinkSwapDuringWalk(t *testing.T) {
	for _, tc := range []struct{ at, swap string }{
		{"sub", "sub"},       // a directory, just before it is opened
		{"sub/f", "sub/f"},   // a file, just before it is opened
		{"sub/f", "sub"},     // the directory being walked
		{"sub/inner", "sub"}, // ...deeper
		{"sub/inner/g", "sub/inner"},
	} {
		t.Run(tc.at+"->"+tc.swap, func(t *testing.T) {
			w := newWorld(t, 0)
			dir := filepath.Join(w.ws, "d")
			must(t, os.MkdirAll(filepath.Join(dir, "sub", "inner"), 0o755))
			put(t, filepath.Join(dir, "sub", "f"), []byte("inside"), 0o644)
			put(t, filepath.Join(dir, "sub", "inner", "g"), []byte("inside"), 0o644)
			must(t, os.Mkdir(filepath.Join(w.outside, "inner"), 0o755))
			put(t, filepath.Join(w.outside, "f"), []byte(secret), 0o644)
			put(t, filepath.Join(w.outside, "g"), []byte(secret), 0o644)
			put(t, filepath.Join(w.outside, "inner", "g"), []byte(secret), 0o644)
			swapped := false
			testHookVisit = func(rel string) {
				if rel != tc.at || swapped {
					return
				}
				swapped = true
				p := filepath.Join(dir, tc.swap)
				must(t, os.Rename(p, p+".moved"))
				target := filepath.Join(w.outside, filepath.Base(tc.swap))
				if tc.swap == "sub" {
					target = w.outside
				}
				must(t, os.Symlink(target, p))
			}
			defer func() { testHookVisit = nil }()
			_, err := w.store.Stage(openPath(t, dir), "x", t0)
			if !swapped {
				t.Fatal("the hook never ran")
			}
			wantErr(t, err, ErrChanged)
			if storeHolds(t, w.storeDir, secret) {
				t.Fatal("the store holds the outside's content")
			}
			if l := leftovers(t, w.storeDir); len(l) > 0 {
				t.Fatalf("leftovers %q", l)
			}
		})
	}
}

// A mount point inside the tree is refused (rm -r would not stop there,
// but neither does fs cross it).
func TestStageRefusesMountPoint(t *testing.T) {
	requireRoot(t, "to mount a tmpfs")
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, 10)
	mountTmpfs(t, filepath.Join(dir, "mnt"), "1m")
	_, err := w.store.Stage(openPath(t, dir), "x", t0)
	if !errors.Is(err, unix.EXDEV) || !strings.Contains(err.Error(), "mount point") {
		t.Fatalf("error %v", err)
	}
}

// Verify and Restore detect a stored copy that no longer matches its
// manifest; Restore then leaves nothing at the destination.
func TestTamperedCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(w *world, id string) error
	}{
		{"byte flipped", func(w *world, id string) error {
			p := dataPath(w, id, "sub", "f")
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 1
			return os.WriteFile(p, b, 0o600)
		}},
		{"truncated", func(w *world, id string) error { return os.Truncate(dataPath(w, id, "sub", "f"), 3) }},
		{"removed", func(w *world, id string) error { return os.Remove(dataPath(w, id, "sub", "f")) }},
		{"added", func(w *world, id string) error {
			return os.WriteFile(dataPath(w, id, "sub", "extra"), nil, 0o600)
		}},
		{"link retargeted", func(w *world, id string) error {
			p := dataPath(w, id, "l")
			os.Remove(p)
			return os.Symlink("elsewhere", p)
		}},
		{"file made a link", func(w *world, id string) error {
			p := dataPath(w, id, "sub", "f")
			os.Remove(p)
			return os.Symlink(filepath.Join(w.outside, "secret"), p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 0)
			dir := filepath.Join(w.ws, "d")
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			put(t, filepath.Join(dir, "sub", "f"), randomBytes(t, 70000), 0o644)
			must(t, os.Symlink("target", filepath.Join(dir, "l")))
			b, err := w.store.Stage(openPath(t, dir), "x", t0)
			must(t, err)
			must(t, w.store.Verify(b.ID))
			must(t, tc.tamper(w, b.ID))
			wantErr(t, w.store.Verify(b.ID), ErrCorrupt)
			removeTree(t, dir)
			err = w.store.Restore(b.ID, openPath(t, w.ws), "d", self())
			if tc.name == "added" {
				// Restore follows the manifest: an extra stored file is
				// not restored, and the rest is intact.
				must(t, err)
				return
			}
			wantErr(t, err, ErrCorrupt)
			if es, _ := os.ReadDir(w.ws); len(es) != 0 {
				t.Fatalf("the failed restore left %v", es)
			}
		})
	}
}

// Verify checks the manifest's summary (what list and show print)
// against its entries: a changed count or byte total is ErrCorrupt, not
// "every file matches its hash".
func TestVerifyManifestSummary(t *testing.T) {
	for _, field := range []string{"type", "entry_count", "files", "skipped", "bytes"} {
		t.Run(field, func(t *testing.T) {
			w := newWorld(t, 0)
			dir, b := stagedTree(t, w, 5000, "d")
			removeTree(t, dir)
			must(t, w.store.Verify(b.ID))
			p := filepath.Join(w.storeDir, b.ID, manifestName)
			raw, err := os.ReadFile(p)
			must(t, err)
			var m map[string]json.RawMessage
			must(t, json.Unmarshal(raw, &m))
			m[field] = json.RawMessage(`7`)
			if field == "type" {
				m[field] = json.RawMessage(`"file"`)
			}
			raw, err = json.Marshal(m)
			must(t, err)
			must(t, os.WriteFile(p, raw, 0o600))
			wantErr(t, w.store.Verify(b.ID), ErrCorrupt)
		})
	}
}

// Restore refuses ids that are not ids, names that are not one name, and
// a name that exists or appears during the restore; nothing existing is
// changed.
func TestRestoreRefusals(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, 5000)
	b, err := w.store.Stage(openPath(t, dir), "x", t0)
	must(t, err)
	ws := openPath(t, w.ws)

	for _, id := range []string{"", "../x", "..", ".", "x/../../etc", "/etc", b.ID + "/..", "../" + b.ID,
		b.ID[:len(b.ID)-1] + "A", b.ID[:len(b.ID)-1] + "g", strings.Replace(b.ID, "T", "t", 1), stagePrefix + b.ID, b.ID + "\n"} {
		wantErr(t, w.store.Restore(id, ws, "n", self()), ErrBadID)
		wantErr(t, w.store.Verify(id), ErrBadID)
		wantErr(t, w.store.Remove(id), ErrBadID)
		_, _, err := w.store.Show(id)
		wantErr(t, err, ErrBadID)
	}
	missing := newID(t0.Add(time.Hour))
	wantErr(t, w.store.Restore(missing, ws, "n", self()), ErrNotFound)
	for _, name := range []string{"", ".", "..", "a/b", "../d", "/abs", "a\x00b", strings.Repeat("n", 256)} {
		wantErr(t, w.store.Restore(b.ID, ws, name, self()), ErrBadName)
	}

	// The name exists: a file, a directory, a dangling link.
	must(t, os.WriteFile(filepath.Join(w.ws, "file"), []byte("keep"), 0o644))
	must(t, os.Symlink("nowhere", filepath.Join(w.ws, "dangling")))
	for _, name := range []string{"d", "file", "dangling"} {
		wantErr(t, w.store.Restore(b.ID, ws, name, self()), ErrExists)
	}
	if got, _ := os.ReadFile(filepath.Join(w.ws, "file")); string(got) != "keep" {
		t.Fatal("an existing file was changed")
	}

	// The name appears while the tree is being restored.
	testHookBeforeRestoreRename = func() {
		must(t, os.WriteFile(filepath.Join(w.ws, "late"), []byte("made meanwhile"), 0o644))
	}
	defer func() { testHookBeforeRestoreRename = nil }()
	wantErr(t, w.store.Restore(b.ID, ws, "late", self()), ErrExists)
	if got, _ := os.ReadFile(filepath.Join(w.ws, "late")); string(got) != "made meanwhile" {
		t.Fatal("the name made meanwhile was changed")
	}
	es, _ := os.ReadDir(w.ws)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), RestorePrefix) {
			t.Fatalf("temporary tree left: %s", e.Name())
		}
	}
	must(t, w.store.Verify(b.ID)) // the backup is still there
}

func TestOpen(t *testing.T) {
	base := t.TempDir()

	t.Run("made 0700 with a marker", func(t *testing.T) {
		dir := filepath.Join(base, "new", "store")
		s, err := Open(dir, 0)
		must(t, err)
		defer s.Close()
		st, err := os.Lstat(dir)
		must(t, err)
		if st.Mode().Perm() != 0o700 || s.Quota() != DefaultQuota {
			t.Fatalf("mode %v quota %d", st.Mode(), s.Quota())
		}
		if _, err := os.Lstat(filepath.Join(dir, markerName)); err != nil {
			t.Fatal(err)
		}
		s2, err := Open(dir, 5) // opened again: fine
		must(t, err)
		s2.Close()
	})
	t.Run("symlink", func(t *testing.T) {
		real := filepath.Join(base, "real")
		must(t, os.Mkdir(real, 0o700))
		link := filepath.Join(base, "link")
		must(t, os.Symlink(real, link))
		if _, err := Open(link, 0); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("writable by others", func(t *testing.T) {
		for i, mode := range []os.FileMode{0o777, 0o720, 0o702, 0o777 | os.ModeSticky} {
			dir := filepath.Join(base, "w"+strconv.Itoa(i))
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chmod(dir, mode))
			if _, err := Open(dir, 0); err == nil || !strings.Contains(err.Error(), "can write") {
				t.Fatalf("mode %v: error %v", mode, err)
			}
		}
	})
	t.Run("not empty, not a store", func(t *testing.T) {
		dir := filepath.Join(base, "home")
		must(t, os.Mkdir(dir, 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "precious"), []byte("x"), 0o600))
		if _, err := Open(dir, 0); err == nil || !strings.Contains(err.Error(), "not a backup store") {
			t.Fatalf("error %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "precious")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("negative quota", func(t *testing.T) {
		if _, err := Open(filepath.Join(base, "q"), -1); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("someone else's", func(t *testing.T) {
		requireRoot(t, "to chown")
		dir := filepath.Join(base, "theirs")
		must(t, os.Mkdir(dir, 0o700))
		must(t, os.Chown(dir, 1234, 1234))
		if _, err := Open(dir, 0); err == nil || !strings.Contains(err.Error(), "belongs to uid 1234") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("crash leftovers removed", func(t *testing.T) {
		dir := filepath.Join(base, "crashed")
		s, err := Open(dir, 0)
		must(t, err)
		src := filepath.Join(base, "src")
		smallTree(t, src, 100)
		b, err := s.Stage(openPath(t, src), "x", t0)
		must(t, err)
		s.Close()
		stage := filepath.Join(dir, stagePrefix+newID(t0))
		del := filepath.Join(dir, deletePrefix+newID(t0))
		noManifest := filepath.Join(dir, newID(t0.Add(time.Second)))
		for _, d := range []string{stage, del, noManifest} {
			must(t, os.MkdirAll(filepath.Join(d, dataName, "x"), 0o700))
			put(t, filepath.Join(d, dataName, "x", "f"), []byte("partial"), 0o600)
		}
		foreign := filepath.Join(dir, "notes.txt") // not ours: kept
		must(t, os.WriteFile(foreign, nil, 0o600))
		s, err = Open(dir, 0)
		must(t, err)
		defer s.Close()
		for _, d := range []string{stage, del, noManifest} {
			if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: still there (%v)", filepath.Base(d), err)
			}
		}
		if _, err := os.Lstat(foreign); err != nil {
			t.Error(err)
		}
		if got := ids(t, s); !slices.Equal(got, []string{b.ID}) {
			t.Fatalf("ids %q", got)
		}
		must(t, s.Verify(b.ID))
	})
	t.Run("damaged manifest listed, not counted", func(t *testing.T) {
		dir := filepath.Join(base, "damaged")
		s, err := Open(dir, 0)
		must(t, err)
		defer s.Close()
		src := filepath.Join(base, "src2")
		smallTree(t, src, 100)
		b, err := s.Stage(openPath(t, src), "x", t0)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, b.ID, manifestName), []byte("{not json"), 0o600))
		infos, err := s.List()
		must(t, err)
		if len(infos) != 1 || infos[0].Problem == "" {
			t.Fatalf("List %+v", infos)
		}
		wantErr(t, s.Verify(b.ID), ErrCorrupt)
		must(t, s.Remove(b.ID))
	})
}

func TestIDs(t *testing.T) {
	var prev string
	for i := range 50 {
		id := newID(t0.Add(time.Duration(i*i) * time.Nanosecond * 997))
		if !ValidID(id) {
			t.Fatalf("%q not valid", id)
		}
		if id <= prev {
			t.Fatalf("%q sorts before %q", id, prev)
		}
		prev = id
	}
	if id := newID(t0); !strings.HasPrefix(id, "20260102T030405.000000600Z-") {
		t.Fatalf("id %q", id)
	}
}

// The manifest keeps names and targets that are not UTF-8 byte for byte
// (base64), and plain ones readable.
func TestManifestJSON(t *testing.T) {
	in := []Entry{
		{Path: ".", Type: TypeDir, Mode: 0o755, MTime: t0},
		{Path: "plain\nnewline", Type: TypeFile, Size: 3, SHA256: "ab"},
		{Path: "bad\xff", Type: TypeSymlink, Target: "t\xfe"},
	}
	b, err := json.Marshal(in)
	must(t, err)
	if !strings.Contains(string(b), `"path":"plain\nnewline"`) || !strings.Contains(string(b), `"path_b64"`) || !strings.Contains(string(b), `"target_b64"`) {
		t.Fatalf("manifest %s", b)
	}
	var out []Entry
	must(t, json.Unmarshal(b, &out))
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip %+v, want %+v", out, in)
	}
	if err := json.Unmarshal([]byte(`[{"path":"a","path_b64":"Yg=="}]`), &out); err == nil {
		t.Fatal("both path and path_b64 accepted")
	}
}

// A tree that grows between its measure and its copy (so the quota was
// planned for less) is refused, even though both walks agree.
func TestSourceGrowsAfterMeasure(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	smallTree(t, dir, 100)
	testHookAfterEvict = func() { must(t, os.WriteFile(filepath.Join(dir, "g"), []byte("late"), 0o644)) }
	defer func() { testHookAfterEvict = nil }()
	_, err := w.store.Stage(openPath(t, dir), "x", t0)
	wantErr(t, err, ErrChanged)
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}
