package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Stage 2 reaches each mount point one component at a time, refusing a
// symlink anywhere on the way (a write tree attached earlier may have been
// changed under it), and makes missing components only inside the tmpfs
// that covers the tree and outside every tree attached before it.
func TestMountPointWalk(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cover := filepath.Join(root, "cover") // stands for a private /tmp
	ws := filepath.Join(cover, "ws")      // a write tree attached earlier
	must(t, os.MkdirAll(filepath.Join(ws, "docs", "licenses"), 0o755))
	must(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(ws, "swapped")))
	must(t, os.MkdirAll(filepath.Join(root, "elsewhere", "licenses"), 0o755))

	walk := func(path string, dir bool, cover string) (string, error) {
		fd, where, err := mountPointC([]string{ws, path}, []bool{true, dir}, 1, cover)
		if err == nil {
			unix.Close(fd)
		}
		return where, err
	}
	// The control: an existing directory through the earlier tree.
	if _, err := walk(filepath.Join(ws, "docs", "licenses"), true, cover); err != nil {
		t.Fatalf("control: %v", err)
	}
	// A symlink swapped in on the way is refused where it is.
	where, err := walk(filepath.Join(ws, "swapped", "licenses"), true, cover)
	if !errors.Is(err, unix.ELOOP) || where != filepath.Join(ws, "swapped") {
		t.Errorf("through a symlink: %v at %q, want ELOOP at the link", err, where)
	}
	if _, err := os.Stat(filepath.Join(root, "elsewhere", "licenses", "x")); err == nil {
		t.Error("the walk made something through the symlink")
	}
	// Missing components inside the earlier tree are the host's business:
	// not made.
	if _, err := walk(filepath.Join(ws, "missing", "deeper"), true, cover); !errors.Is(err, unix.ENOENT) {
		t.Errorf("missing inside the earlier tree: %v, want ENOENT", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "missing")); err == nil {
		t.Error("a directory was made inside the earlier tree")
	}
	// Inside the cover and outside the earlier tree they are made, a file
	// for a file tree.
	if _, err := walk(filepath.Join(cover, "new", "dir"), true, cover); err != nil {
		t.Errorf("new directory in the cover: %v", err)
	}
	if st, err := os.Stat(filepath.Join(cover, "new", "dir")); err != nil || !st.IsDir() {
		t.Errorf("new directory not made: %v", err)
	}
	if _, err := walk(filepath.Join(cover, "new", "file"), false, cover); err != nil {
		t.Errorf("new file in the cover: %v", err)
	}
	if st, err := os.Lstat(filepath.Join(cover, "new", "file")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("new file not made: %v", err)
	}
	// Without a cover nothing is made.
	if _, err := walk(filepath.Join(root, "uncovered"), true, ""); !errors.Is(err, unix.ENOENT) {
		t.Errorf("uncovered missing path: %v, want ENOENT", err)
	}
}
