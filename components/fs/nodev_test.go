package fs

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// detachedTmpfs is a new tmpfs mount that is attached nowhere (nothing to
// unmount: it goes with its last descriptor), with attrs, holding a
// regular file, /dev/null's device node, a FIFO and a link.
func detachedTmpfs(t *testing.T, attrs int) *Root {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatal("requires root (to make a tmpfs mount and a device node)")
		}
		t.Skip("requires root (to make a tmpfs mount and a device node)")
	}
	ctx, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		t.Fatal("fsopen:", err)
	}
	defer unix.Close(ctx)
	if err := unix.FsconfigCreate(ctx); err != nil {
		t.Fatal("fsconfig:", err)
	}
	mnt, err := unix.Fsmount(ctx, unix.FSMOUNT_CLOEXEC, attrs)
	if err != nil {
		t.Fatal("fsmount:", err)
	}
	fd, err := unix.Openat(mnt, "plain", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, err = unix.Write(fd, []byte("control"))
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []error{
		unix.Mknodat(mnt, "null", unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))),
		unix.Mkfifoat(mnt, "fifo", 0o644),
		unix.Symlinkat("plain", mnt, "link"),
	} {
		if e != nil {
			t.Fatal(e)
		}
	}
	root, err := NewRoot(mnt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// Read skips its look before opening only where the kernel itself
// refuses to open a device (a nodev mount), and there explains a refused
// open by what the path is, as it does elsewhere.
func TestReadNodevRoot(t *testing.T) {
	for _, c := range []struct {
		name  string
		attrs int
	}{
		{"nodev", unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID},
		{"devices allowed", unix.MOUNT_ATTR_NOSUID},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := detachedTmpfs(t, c.attrs)
			if want := c.attrs&unix.MOUNT_ATTR_NODEV != 0; root.nodev != want {
				t.Fatalf("nodev = %v on a mount with nodev %v", root.nodev, want)
			}
			if b, eof, err := root.Read("plain", 0, 0); err != nil || string(b) != "control" || !eof {
				t.Errorf("read plain: %q eof %v %v", b, eof, err)
			}
			if b, eof, err := root.Read("plain", 2, 3); err != nil || string(b) != "ntr" || eof {
				t.Errorf("read plain 2+3: %q eof %v %v", b, eof, err)
			}
			_, _, err := root.Read("null", 0, 0)
			wantKind(t, "read a device", err, KindBadRequest)
			_, _, err = root.Read("link", 0, 0)
			wantKind(t, "read a link", err, KindEscape)
			_, _, err = root.Read("missing", 0, 0)
			wantKind(t, "read a missing file", err, KindNotFound)
			done := make(chan error, 1)
			go func() {
				_, _, err := root.Read("fifo", 0, 0)
				done <- err
			}()
			select {
			case err := <-done:
				wantKind(t, "read a FIFO", err, KindBadRequest)
			case <-time.After(5 * time.Second):
				t.Fatal("read of a FIFO blocked")
			}
		})
	}
}

// A file that grows between the open and the read: what was there at
// the open is read, the rest of the buffer too, and the end is reported
// only from a short read.
func TestReadShortIsTheEnd(t *testing.T) {
	w := newWorld(t)
	w.file(t, "f", "0123456789")
	for _, c := range []struct {
		off, n  int
		want    string
		wantEOF bool
	}{
		{0, 0, "0123456789", true},
		{0, 10, "0123456789", true},
		{0, 9, "012345678", false},
		{9, 0, "9", true},
		{10, 0, "", true},
		{11, 0, "", true},
	} {
		b, eof, err := w.root.Read("f", int64(c.off), c.n)
		if err != nil || string(b) != c.want || eof != c.wantEOF {
			t.Errorf("read f %d+%d: %q eof %v %v; want %q eof %v", c.off, c.n, b, eof, err, c.want, c.wantEOF)
		}
	}
}

// A file that holds more than its size said at the open (it grew before
// the read) is read to its end, or to the length asked, not cut at the
// buffer sized by the open.
func TestReadGrownFile(t *testing.T) {
	w := newWorld(t)
	w.file(t, "f", "0123456789")
	grown := "0123456789" + strings.Repeat("x", 10000)
	for _, c := range []struct {
		n       int
		want    string
		wantEOF bool
	}{
		{0, grown, true},
		{100, grown[:100], false},
		{len(grown), grown, true},
	} {
		w.file(t, "f", "0123456789")
		testHookBeforeRead = func(n int) {
			if n == 0 {
				w.file(t, "f", grown)
			}
		}
		b, eof, err := w.root.Read("f", 0, c.n)
		testHookBeforeRead = nil
		if err != nil || string(b) != c.want || eof != c.wantEOF {
			t.Errorf("read the grown f 0+%d: %d bytes, eof %v, %v; want %d bytes, eof %v", c.n, len(b), eof, err, len(c.want), c.wantEOF)
		}
	}
}

// A read allocates about what it reads: the buffer is sized by the file,
// not by the limit or a page to spare (a 1 KiB read allocated 5 KiB, the
// most of a component round trip's collector work).
func TestReadAllocatesItsFile(t *testing.T) {
	w := newWorld(t)
	w.file(t, "f", strings.Repeat("a", 1024))
	const reads = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range reads {
		if b, _, err := w.root.Read("f", 0, 0); err != nil || len(b) != 1024 {
			t.Fatalf("read f: %d bytes, %v", len(b), err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / reads; per > 2048 {
		t.Errorf("a read of a 1 KiB file allocated %d bytes; want at most 2048", per)
	}
}
