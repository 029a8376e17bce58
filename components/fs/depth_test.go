package fs

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// deepTree makes n nested directories "a" in dir (by descriptor: the host
// path would pass PATH_MAX) and returns their workspace-relative path.
func deepTree(t *testing.T, dir string, n int) string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := unix.Mkdirat(fd, "a", 0o755); err != nil {
			unix.Close(fd)
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "a", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	return strings.TrimSuffix(strings.Repeat("a/", n), "/")
}

// TestDeepPathLooksOnce: a change at the bottom of a deep tree looks at
// each directory of its path for a git layout (gitLayout). Looking at
// each by its whole path from the root resolved depth²/2 names: at the
// 2047 a path of MaxPath bytes can have, a rename cost close to a second
// of fs's time, and an agent may send many. Each directory is looked at
// once, opened beneath the one above it.
func TestDeepPathLooksOnce(t *testing.T) {
	w := newWorld(t)
	const n = 2000
	deep := deepTree(t, w.ws, n)
	resolved := 0
	testHookResolve = func(p string) { resolved += strings.Count(p, "/") + 1 }
	t.Cleanup(func() { testHookResolve = nil })
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"write", func() error { return w.root.Write(deep+"/f", []byte("x"), false) }},
		{"mkdir", func() error { return w.root.Mkdir(deep + "/m") }},
		{"rename", func() error { return w.root.Rename(deep+"/f", deep+"/g", false) }},
		{"delete", func() error { return w.root.Delete(deep + "/g") }},
	} {
		resolved = 0
		if err := op.do(); err != nil {
			t.Fatalf("%s at depth %d: %v", op.name, n, err)
		}
		// The operation itself resolves the path a few times (its parent,
		// for a rename both ends); the look must not add depth² to that.
		if most := 20 * n; resolved > most {
			t.Errorf("%s at depth %d resolved %d names, more than %d: the look is quadratic in depth", op.name, n, resolved, most)
		}
	}
}
