package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Stage 2 opens every listed path refusing symlinks in any component, so a
// directory swapped for a symlink after the policy was checked (SR-23) is
// refused rather than followed. This calls stage 2's own C function.
func TestOpenNoFollow(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "swapped")); err != nil {
		t.Fatal(err)
	}
	fd, err := openNoFollowC(filepath.Join(real, "sub"))
	if err != nil {
		t.Fatalf("control: a real path: %v", err)
	}
	unix.Close(fd)
	for _, p := range []string{filepath.Join(dir, "swapped"), filepath.Join(dir, "swapped", "sub"), "/proc/self/cwd"} {
		fd, err := openNoFollowC(p)
		if err == nil {
			unix.Close(fd)
			t.Errorf("%s was followed", p)
		} else if !errors.Is(err, unix.ELOOP) {
			t.Errorf("%s: %v, want ELOOP", p, err)
		}
	}
}
