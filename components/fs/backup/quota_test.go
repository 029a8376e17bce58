package backup

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// encodedLen is what encoding/json (or base64) makes of a string, byte
// for byte: every single byte, the runes it escapes, and mixtures.
func TestEncodedLen(t *testing.T) {
	cases := []string{"", ".", "a/b", "new\nline", "tab\t", "q\"b\\", "<a&b>", "\u2028\u2029", "\x7f", "é✓😀",
		"bad\xff", "\xe2\x80", "\xe2\x80\xa8x", strings.Repeat("\xff", 4000), strings.Repeat("d", 255)}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range cases {
		var want int
		if b, err := json.Marshal(s); err == nil && json.Valid(b) && strings.ToValidUTF8(s, "") == s {
			want = len(b) - 2
		} else {
			want = (len(s) + 2) / 3 * 4
		}
		if got := encodedLen(s); got != int64(want) {
			t.Errorf("encodedLen(%q) = %d, want %d", s, got, want)
		}
	}
}

// lineLen is exactly an entry's JSON and its comma, so the manifest's
// size is known before it is written.
func TestLineLen(t *testing.T) {
	maxTime := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	cases := []Entry{
		{Path: ".", Type: TypeDir, Mode: 0o755, MTime: t0},
		{Path: "a/b", Type: TypeFile, Mode: 0o644, MTime: time.Unix(0, 0).UTC(), Size: 12345, SHA256: unhashed},
		{Path: "empty", Type: TypeFile, MTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SHA256: unhashed},
		{Path: "bad\xff/new\nline<&>", Type: TypeSymlink, Mode: 0o777, MTime: t0, UID: math.MaxUint32, GID: 1000, Target: "t\xfe"},
		{Path: "l", Type: TypeSymlink, MTime: t0, Target: "../\u2028\"x\"\\"},
		{Path: "s", Type: TypeSocket, Mode: 0o7777, MTime: maxTime, Skipped: true, UID: math.MaxUint32, GID: math.MaxUint32},
		{Path: "f", Type: TypeFile, MTime: maxTime, Size: math.MaxInt64, SHA256: unhashed},
		{Path: "n", Type: TypeFile, MTime: t0, Size: math.MinInt64},
		{Type: TypeFIFO, MTime: t0},
	}
	for _, e := range cases {
		b, err := json.Marshal(e)
		must(t, err)
		if got, want := lineLen(&e), int64(len(b)+1); got != want {
			t.Errorf("lineLen(%+v) = %d, want %d (%s)", e, got, want, b)
		}
	}
}

// A tree of links with long targets that are not UTF-8 (base64 in the
// manifest): every link used to count EntryCharge, so 2047 of them "fit"
// a 1 MiB quota while taking 20 MB of disk and an 11 MB manifest. Their
// targets now count, so the tree does not fit; no backup is made.
func TestQuotaChargesLinkTargets(t *testing.T) {
	const quota = 1 << 20
	w := newWorld(t, quota)
	dir := filepath.Join(w.ws, "links")
	must(t, os.Mkdir(dir, 0o755))
	target := strings.Repeat("\xff", 4000)
	for i := range quota/EntryCharge - 1 {
		must(t, os.Symlink(target, filepath.Join(dir, "link"+strconv.Itoa(i))))
	}
	_, err := w.store.Stage(openPath(t, dir), "links", t0)
	var nr *NoRoomError
	if !errors.As(err, &nr) || nr.Disk || nr.Manifest != 0 || nr.Need < (quota/EntryCharge-1)*(4000+5336) {
		t.Fatalf("error %v (%+v), want a NoRoomError for the quota", err, nr)
	}
	if got := ids(t, w.store); len(got) != 0 {
		t.Fatalf("backups %q", got)
	}
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

// What a backup is charged is every entry's EntryCharge, its names
// beyond NameAllowance as the manifest encodes them, its content and its
// link target; the manifest written is never larger than that charge
// without the file contents, whatever the names.
func TestChargeBoundsManifest(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "t")
	must(t, os.Mkdir(dir, 0o755))
	long := strings.Repeat("\xfe", 255)
	p := dir
	for range 8 { // a chain of long names that are not UTF-8
		p = filepath.Join(p, long)
		must(t, os.Mkdir(p, 0o755))
	}
	put(t, filepath.Join(p, strings.Repeat("<", 255)), []byte("content"), 0o644) // escaped 6 bytes each
	must(t, os.Symlink(strings.Repeat("\x01", 4000), filepath.Join(p, strings.Repeat("&", 200))))
	must(t, os.Symlink("short", filepath.Join(dir, "s")))
	b, err := w.store.Stage(openPath(t, dir), "t", t0)
	must(t, err)
	var want int64
	for _, e := range b.Tree {
		want += entryCharge(&e)
	}
	if b.Size != want {
		t.Fatalf("Size %d, want %d", b.Size, want)
	}
	// The link's target: 4000 bytes stored, 24000 in the manifest.
	if b.Size < b.Bytes+4000+24000+9*EntryCharge {
		t.Fatalf("Size %d does not count the link's target", b.Size)
	}
	st, err := os.Stat(filepath.Join(w.storeDir, b.ID, manifestName))
	must(t, err)
	if st.Size() > b.Size-b.Bytes {
		t.Fatalf("the manifest is %d bytes, more than the %d charged for all but contents", st.Size(), b.Size-b.Bytes)
	}
	_, entries, err := w.store.Show(b.ID)
	must(t, err)
	if len(entries) != len(b.Tree) {
		t.Fatalf("%d entries shown, %d staged", len(entries), len(b.Tree))
	}
}

// deepChain makes depth directories named name, each inside the last,
// beneath dir.
func deepChain(t *testing.T, dir string, depth int, name string) {
	t.Helper()
	must(t, os.Mkdir(dir, 0o755))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	for range depth {
		must(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		must(t, err)
		fd = next
	}
	unix.Close(fd)
	t.Cleanup(func() { os.RemoveAll(dir) })
}

// A 1000-deep chain of 255-byte names has a 128 MB manifest (its paths
// grow with depth squared) though it is charged far less than the
// default quota: it does not fit (the manifest's limit), the measure
// stops as soon as it passes it, and no backup is made.
func TestManifestLimit(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "deep")
	deepChain(t, dir, 1000, strings.Repeat("d", 255))
	_, err := w.store.Stage(openPath(t, dir), "deep", t0)
	var nr *NoRoomError
	if !errors.As(err, &nr) || !errors.Is(err, ErrNoRoom) || nr.Manifest <= MaxManifest || nr.Manifest > MaxManifest+256*1000+1024 || nr.Disk {
		t.Fatalf("error %v (%+v), want a NoRoomError for the manifest", err, nr)
	}
	if !strings.Contains(err.Error(), "manifest would take more than") {
		t.Fatalf("error %q does not say why", err)
	}
	if got := ids(t, w.store); len(got) != 0 {
		t.Fatalf("backups %q", got)
	}
	if l := leftovers(t, w.storeDir); len(l) > 0 {
		t.Fatalf("leftovers %q", l)
	}
}

// The disk estimate counts a link's target twice: in the stored link and
// base64 in the manifest. Links whose targets fill the store's file
// system are refused up front (the disk's NoRoomError), not half copied.
func TestDiskEstimateCountsLinkTargets(t *testing.T) {
	w, first := fullWorld(t) // a 1 MiB tmpfs
	dir := filepath.Join(w.ws, "links")
	must(t, os.Mkdir(dir, 0o755))
	target := strings.Repeat("\xff", 4000)
	for i := range 160 { // about 1.5 MB with their manifest; 0.7 MB as a block and a line each
		must(t, os.Symlink(target, filepath.Join(dir, "link"+strconv.Itoa(i))))
	}
	_, err := w.store.Stage(openPath(t, dir), "links", t0.Add(time.Minute))
	var nr *NoRoomError
	if !errors.As(err, &nr) || !nr.Disk || nr.DiskNeed < 160*(4096+5336) {
		t.Fatalf("error %v (%+v), want a NoRoomError for the disk", err, nr)
	}
	checkUntouched(t, w, first)
}

// A backup is charged at least the disk its copy takes: many empty
// directories and one-byte files take a block each in the store, which
// a flat 512 bytes an entry undercounted eightfold.
func TestQuotaChargesSmallEntries(t *testing.T) {
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "small")
	must(t, os.Mkdir(dir, 0o755))
	for i := range 300 {
		must(t, os.Mkdir(filepath.Join(dir, "d"+strconv.Itoa(i)), 0o755))
		put(t, filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x"), 0o644)
	}
	b, err := w.store.Stage(openPath(t, dir), "small", time.Now())
	must(t, err)
	var used int64
	must(t, filepath.Walk(filepath.Join(w.storeDir, b.ID), func(_ string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		used += info.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	}))
	if b.Size < used {
		t.Errorf("charged %d bytes for a backup that takes %d on disk", b.Size, used)
	}
}
