package privfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Replace writes the whole new content, mode 0600, over the old file and
// leaves no temporary file; a directory that is not there fails and
// leaves nothing.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vault")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, []byte("new content")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new content" {
		t.Fatalf("%q, %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := Replace(filepath.Join(dir, "missing", "vault"), []byte("x")); err == nil {
		t.Error("a missing directory was written")
	}
	// A directory in the way: the rename fails, the temporary file goes.
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adir", "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(filepath.Join(dir, "adir"), []byte("x")); err == nil {
		t.Error("replaced a non-empty directory")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind after a failure: %v", ents)
	}
}

// A file is never renamed over a device, FIFO, socket or directory: as
// root, replacing /dev/null would break every program. The test makes
// its own (a FIFO, a directory, and, as root, a character device node
// like /dev/null's in its temporary directory) and checks each is left.
func TestReplaceRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{fifo: "a FIFO", sub: "a directory"}
	if os.Geteuid() == 0 {
		null := filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
		targets[null] = "a character device"
	}
	for p, what := range targets {
		before, _ := os.Lstat(p)
		err := Replace(p, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: %v, want a refusal naming %s", p, err, what)
		}
		if after, _ := os.Lstat(p); after == nil || after.Mode() != before.Mode() {
			t.Errorf("%s was replaced", p)
		}
	}
	// Controls: a regular file and a missing one are written.
	for _, p := range []string{filepath.Join(dir, "new"), fifo + "-absent"} {
		if err := Replace(p, []byte("x")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := Replace(filepath.Join(dir, "new"), []byte("y")); err != nil {
		t.Errorf("over a regular file: %v", err)
	}
}

// A writer killed between its temporary file and the rename leaves the
// file behind; the next Replace of the same file removes it once it is
// old, and leaves a young one (a live writer's), another file's, a
// name that is not CreateTemp's and one that is not a regular file.
func TestReplaceSweepsLeftTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	old := time.Now().Add(-2 * staleAfter)
	put := func(name string, age time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("ciphertext"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, age, age); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := put(".tokens-123456", old)
	young := put(".tokens-654321", time.Now())
	other := put(".vault-111111", old)
	named := put(".tokens-notes", old)
	if err := os.Mkdir(filepath.Join(dir, ".tokens-222222"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
	for _, p := range []string{young, other, named, filepath.Join(dir, ".tokens-222222"), path} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

// A directory above, writable by others without the sticky bit, or
// another user's, is refused, named; as resolved through a link too.
// The controls: the same tree with that directory 0755, or sticky.
func TestCheckAncestors(t *testing.T) {
	base := t.TempDir()
	a := filepath.Join(base, "a")
	b := filepath.Join(a, "b")
	if err := os.MkdirAll(b, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	for mode, refused := range map[os.FileMode]bool{0o777: true, 0o775: true, 0o755: false, 0o777 | os.ModeSticky: false} {
		if err := os.Chmod(a, mode); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{b, link} {
			err := CheckAncestors(dir, "vault")
			var np *NotPrivateError
			if refused != errors.As(err, &np) || refused && !strings.Contains(err.Error(), "directory "+a+", above the vault") {
				t.Errorf("%s under %s mode %o: %v", dir, a, mode, err)
			}
		}
	}
	if os.Geteuid() == 0 {
		if err := os.Chmod(a, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(a, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckAncestors(b, "vault"); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("another user's directory above: %v", err)
		}
	}
}

// A relative name is resolved from the working directory, and every
// directory holding a link on the way is checked: a link in a directory
// others may write can be replaced there, however safe where it leads.
func TestCheckAncestorsResolves(t *testing.T) {
	base := t.TempDir()
	open, safe, priv := filepath.Join(base, "open"), filepath.Join(base, "safe"), filepath.Join(base, "priv")
	for _, d := range []string{filepath.Join(open, "sub"), filepath.Join(safe, "vd"), priv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(open, "sub"))
	if err := CheckAncestors(".", "vault"); err == nil || !strings.Contains(err.Error(), "directory "+open+", above the vault") {
		t.Errorf("a relative name beneath %s: %v", open, err)
	}
	// priv/link -> open/l2 -> safe: safe/vd is reached through a link in open.
	if err := os.Symlink(filepath.Join(open, "l2"), filepath.Join(priv, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(safe, filepath.Join(open, "l2")); err != nil {
		t.Fatal(err)
	}
	if err := CheckAncestors(filepath.Join(priv, "link", "vd"), "vault"); err == nil || !strings.Contains(err.Error(), "directory "+open+", above the vault") {
		t.Errorf("through a link held by %s: %v", open, err)
	}
	// ".." after a link is taken where the link leads: priv/into/../vd
	// is open/sub/../vd to the kernel, beneath open, whatever the text
	// says (folded, it would be priv/vd).
	if err := os.MkdirAll(filepath.Join(open, "vd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(priv, "vd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(open, "sub"), filepath.Join(priv, "into")); err != nil {
		t.Fatal(err)
	}
	if err := CheckAncestors(priv+"/into/../vd", "vault"); err == nil || !strings.Contains(err.Error(), "directory "+open+", above the vault") {
		t.Errorf("\"..\" after a link into %s: %v", open, err)
	}
	// The controls: safe/vd named directly; the chain once open is 0755.
	if err := CheckAncestors(filepath.Join(safe, "vd"), "vault"); err != nil {
		t.Errorf("control, named directly: %v", err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckAncestors(filepath.Join(priv, "link", "vd"), "vault"); err != nil {
		t.Errorf("control, the chain with %s 0755: %v", open, err)
	}
}

// A full disk fails the write with the old file as it was, and says so
// (naming the file once, not the temporary file's write twice); no
// temporary file is left.
func TestReplaceFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount a small tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=64k,mode=0700"); err != nil {
		t.Skipf("mounting a tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	path := filepath.Join(dir, "vault")
	// A first write that fails makes nothing, and does not call it
	// unchanged.
	if err := Replace(path, make([]byte, 128<<10)); !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), path+" was not made: write ") {
		t.Errorf("full disk, first write: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed first write left %s: %v", path, err)
	}
	if err := Replace(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := Replace(path, make([]byte, 128<<10))
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), path+" is unchanged: write ") || strings.Count(err.Error(), "write ") != 1 {
		t.Errorf("full disk: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the old file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// A directory Dir makes is 0700 whatever the umask (0277 made it 0500:
// the vault could not be written in it); one that was there keeps its
// mode.
func TestDirUmask(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	base := t.TempDir()
	made := filepath.Join(base, "a", "b")
	defer os.Chmod(filepath.Dir(made), 0o700) // made 0500 too: let TempDir remove it
	if err := Dir(made, "vault"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(made); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("made under umask 0277: %v %v", st.Mode(), err)
	}
	kept := filepath.Join(base, "kept")
	if err := os.Mkdir(kept, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := Dir(kept, "vault"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o500 {
		t.Errorf("a directory that was there: %v", st.Mode())
	}
}
