package fs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The operations on ordinary files, as controls for what follows.
func TestOperations(t *testing.T) {
	w := newWorld(t)
	r := w.root
	if err := r.Write("a.txt", []byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	st, err := r.Stat("a.txt")
	if err != nil || st.Type != TypeFile || st.Size != 5 || st.Mode != 0o644 || time.Since(st.MTime) > time.Minute {
		t.Errorf("stat: %+v %v", st, err)
	}
	if st, err := r.Stat("."); err != nil || st.Type != TypeDir {
		t.Errorf("stat .: %+v %v", st, err)
	}
	b, eof, err := r.Read("a.txt", 0, 0)
	if err != nil || string(b) != "hello" || !eof {
		t.Errorf("read: %q %v %v", b, eof, err)
	}
	b, eof, err = r.Read("a.txt", 1, 3)
	if err != nil || string(b) != "ell" || eof {
		t.Errorf("read 1,3: %q %v %v", b, eof, err)
	}
	b, eof, err = r.Read("a.txt", 2, 3)
	if err != nil || string(b) != "llo" || !eof {
		t.Errorf("read 2,3: %q %v %v", b, eof, err)
	}
	b, eof, err = r.Read("a.txt", 99, 3)
	if err != nil || len(b) != 0 || !eof {
		t.Errorf("read past the end: %q %v %v", b, eof, err)
	}
	_, _, err = r.Read("a.txt", -1, 3)
	wantKind(t, "negative offset", err, KindBadRequest)
	wantKind(t, "write create-only over a.txt", r.Write("a.txt", []byte("x"), true), KindBadRequest)
	wantOK(t, "write create-only b.txt", r.Write("b.txt", []byte("x"), true))
	wantOK(t, "mkdir d", r.Mkdir("d"))
	wantKind(t, "mkdir d again", r.Mkdir("d"), KindBadRequest)
	wantKind(t, "mkdir in a missing directory", r.Mkdir("nope/d"), KindNotFound)
	wantOK(t, "write d/c.txt", r.Write("d/c.txt", []byte("c"), false))
	wantKind(t, "write over a directory", r.Write("d", []byte("x"), false), KindBadRequest)
	wantKind(t, "write beneath a file", r.Write("a.txt/x", []byte("x"), false), KindBadRequest)
	_, _, err = r.Read("d", 0, 0)
	wantKind(t, "read a directory", err, KindBadRequest)
	_, _, err = r.Read("missing", 0, 0)
	wantKind(t, "read a missing file", err, KindNotFound)
	_, err = r.Stat("missing/x")
	wantKind(t, "stat beneath a missing dir", err, KindNotFound)

	ents, trunc, err := r.List(".")
	if err != nil || trunc {
		t.Fatalf("list: %v %v", err, trunc)
	}
	want := []Entry{{"a.txt", TypeFile, 5}, {"b.txt", TypeFile, 1}, {"d", TypeDir, ents[2].Size}}
	if fmt.Sprint(ents) != fmt.Sprint(want) {
		t.Errorf("list: %v, want %v", ents, want)
	}
	_, _, err = r.List("a.txt")
	wantKind(t, "list a file", err, KindBadRequest)

	// Rename: no replacing unless asked.
	wantKind(t, "rename onto an existing name", r.Rename("a.txt", "b.txt", false), KindBadRequest)
	wantOK(t, "rename with overwrite", r.Rename("a.txt", "b.txt", true))
	wantOK(t, "rename into a directory", r.Rename("b.txt", "d/b.txt", false))
	wantKind(t, "rename a missing name", r.Rename("a.txt", "z", false), KindNotFound)
	wantKind(t, "rename a directory into itself", r.Rename("d", "d/e", false), KindBadRequest)
	if b, _, _ := r.Read("d/b.txt", 0, 0); string(b) != "hello" {
		t.Errorf("after renames: %q", b)
	}

	// Delete: files and empty directories only.
	wantKind(t, "delete a non-empty directory", r.Delete("d"), KindBadRequest)
	wantOK(t, "delete d/b.txt", r.Delete("d/b.txt"))
	wantOK(t, "delete d/c.txt", r.Delete("d/c.txt"))
	wantOK(t, "delete the empty d", r.Delete("d"))
	wantKind(t, "delete a missing name", r.Delete("d"), KindNotFound)
	_, rerr := r.DeleteRecursive(".")
	wantKind(t, "delete-recursive", rerr, KindNeedsConfirmation)

	// The workspace itself is no mutation's target.
	wantKind(t, "delete .", r.Delete("."), KindBadRequest)
	wantKind(t, "write .", r.Write(".", nil, false), KindBadRequest)
	wantKind(t, "rename .", r.Rename(".", "x", false), KindBadRequest)
	wantKind(t, "mkdir .", r.Mkdir("."), KindBadRequest)
	if _, err := os.Stat(w.ws); err != nil {
		t.Fatal(err)
	}
	w.outsideUnchanged(t)
}

// Every malformed path is refused before anything is looked up, by every
// operation; the clean spelling of the same file is the control.
func TestMalformedPaths(t *testing.T) {
	w := newWorld(t)
	w.file(t, "sub/f", "in")
	rel, _ := filepath.Rel(w.ws, filepath.Join(w.outside, "secret"))
	paths := []string{
		"", "..", "../outside/secret", rel, "sub/../../outside/secret", "sub/../f",
		filepath.Join(w.outside, "secret"), "/etc/passwd",
		"sub/f\x00", "sub\x00/f", "sub/f\xff", "./sub/f", "sub//f", "sub/f/", strings.Repeat("x/", 2100) + "f",
	}
	for _, p := range paths {
		ops := map[string]error{}
		_, ops["stat"] = w.root.Stat(p)
		_, _, ops["read"] = w.root.Read(p, 0, 0)
		_, _, ops["list"] = w.root.List(p)
		ops["write"] = w.root.Write(p, []byte("x"), false)
		ops["mkdir"] = w.root.Mkdir(p)
		ops["delete"] = w.root.Delete(p)
		ops["rename from"] = w.root.Rename(p, "new", false)
		ops["rename to"] = w.root.Rename("sub/f", p, true)
		_, ops["delete-recursive"] = w.root.DeleteRecursive(p)
		for op, err := range ops {
			wantKind(t, fmt.Sprintf("%s %q", op, p), err, KindBadRequest)
		}
	}
	if b, _, err := w.root.Read("sub/f", 0, 0); err != nil || string(b) != "in" {
		t.Errorf("control read sub/f: %q %v", b, err)
	}
	w.outsideUnchanged(t)
}

// Symbolic links that lead out, as a file, as a directory, as the last
// component and in the middle of a path, absolute and relative: none is
// followed. Links that stay inside are not followed either (fs follows
// none); a link itself can be stat'ed, listed and deleted.
func TestSymlinks(t *testing.T) {
	w := newWorld(t)
	w.file(t, "real/f", "in")
	w.symlink(t, filepath.Join(w.outside, "secret"), "abs-file")
	w.symlink(t, "../outside/secret", "rel-file")
	w.symlink(t, w.outside, "abs-dir")
	w.symlink(t, "../outside", "rel-dir")
	w.symlink(t, "real/f", "inside-file")
	w.symlink(t, "real", "inside-dir")
	w.symlink(t, "/proc/self/root/etc", "proc")
	os.Mkdir(filepath.Join(w.ws, "sub"), 0o755)
	w.symlink(t, "../../outside", "sub/deep")
	r := w.root

	for _, p := range []string{"abs-file", "rel-file", "inside-file", "proc"} {
		_, _, err := r.Read(p, 0, 0)
		wantKind(t, "read "+p, err, KindEscape)
		wantKind(t, "write "+p, r.Write(p, []byte("pwned"), false), KindEscape)
		st, err := r.Stat(p)
		if err != nil || st.Type != TypeSymlink {
			t.Errorf("stat %s (the link itself): %+v %v", p, st, err)
		}
	}
	for _, d := range []string{"abs-dir", "rel-dir", "inside-dir", "sub/deep", "proc"} {
		for _, p := range []string{d, d + "/secret", d + "/dir/secret", d + "/f", d + "/new"} {
			if p != d {
				_, err := r.Stat(p)
				wantKind(t, "stat "+p, err, KindEscape)
				_, _, err = r.Read(p, 0, 0)
				wantKind(t, "read "+p, err, KindEscape)
				wantKind(t, "write "+p, r.Write(p, []byte("pwned"), false), KindEscape)
				wantKind(t, "mkdir "+p, r.Mkdir(p), KindEscape)
				wantKind(t, "delete "+p, r.Delete(p), KindEscape)
				wantKind(t, "rename from "+p, r.Rename(p, "stolen", false), KindEscape)
				wantKind(t, "rename to "+p, r.Rename("real/f", p, true), KindEscape)
			}
		}
		_, _, err := r.List(d)
		wantKind(t, "list "+d, err, KindEscape)
		_, _, err = r.List(d + "/dir")
		wantKind(t, "list "+d+"/dir", err, KindEscape)
	}
	// Renaming and deleting a link moves or removes the link, not its
	// target.
	wantOK(t, "rename the link abs-file", r.Rename("abs-file", "moved-link", false))
	wantOK(t, "delete the link moved-link", r.Delete("moved-link"))
	wantOK(t, "delete the link abs-dir", r.Delete("abs-dir"))
	ents, _, err := r.List(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name == "rel-dir" && e.Type != TypeSymlink {
			t.Errorf("list shows rel-dir as %s", e.Type)
		}
		if e.Name == "stolen" {
			t.Errorf("something was renamed to stolen")
		}
	}
	if b, _, err := r.Read("real/f", 0, 0); err != nil || string(b) != "in" {
		t.Errorf("control read real/f: %q %v", b, err)
	}
	w.outsideUnchanged(t)
}

// A directory swapped for a symbolic link between two operations: the
// second resolves afresh and refuses. Then the same swap as a race,
// thousands of times, against every mutation: nothing outside changes.
func TestParentSwappedForSymlink(t *testing.T) {
	w := newWorld(t)
	r := w.root
	wantOK(t, "mkdir d", r.Mkdir("d"))
	wantOK(t, "write d/f", r.Write("d/f", []byte("one"), false))
	os.Rename(filepath.Join(w.ws, "d"), filepath.Join(w.ws, "d.real"))
	w.symlink(t, filepath.Join(w.outside, "dir"), "d")
	wantKind(t, "write d/f after the swap", r.Write("d/f", []byte("pwned"), false), KindEscape)
	wantKind(t, "write d/secret after the swap", r.Write("d/secret", []byte("pwned"), false), KindEscape)
	_, _, err := r.Read("d/secret", 0, 0)
	wantKind(t, "read d/secret after the swap", err, KindEscape)
	w.outsideUnchanged(t)

	// The race: a goroutine swaps "race" between a directory and a link
	// to the outside; the others keep mutating beneath it.
	os.Mkdir(filepath.Join(w.ws, "race.dir"), 0o755)
	w.symlink(t, filepath.Join(w.outside, "dir"), "race.link")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dir, link, cur := filepath.Join(w.ws, "race.dir"), filepath.Join(w.ws, "race.link"), filepath.Join(w.ws, "race")
		os.Rename(dir, cur)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Exchange atomically, so "race" always exists as one or the other.
			unix.Renameat2(unix.AT_FDCWD, cur, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
		}
	}()
	var ok, refused atomic.Int64
	var wg2 sync.WaitGroup
	for g := range 4 {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for i := range 500 {
				name := fmt.Sprintf("race/secret-%d-%d", g, i)
				errs := []error{
					r.Write("race/secret", []byte("pwned"), false),
					r.Write(name, []byte("pwned"), true),
					r.Mkdir(name + ".d"),
					r.Delete("race/secret"),
					r.Rename("race/secret", "grabbed", true),
					r.Rename(name, "race/secret", true),
				}
				_, _, e := r.Read("race/secret", 0, 0)
				errs = append(errs, e)
				for _, err := range errs {
					if err == nil {
						ok.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}
		}()
	}
	wg2.Wait()
	close(stop)
	wg.Wait()
	t.Logf("race: %d operations went through inside, %d refused", ok.Load(), refused.Load())
	if ok.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the race did not race: %d ok, %d refused", ok.Load(), refused.Load())
	}
	w.outsideUnchanged(t)
	if b, err := os.ReadFile(filepath.Join(w.ws, "grabbed")); err == nil && string(b) == secret {
		t.Errorf("the outside secret was renamed into the workspace")
	}
}

// A FIFO: stat says so, read and write refuse it at once (no open that
// waits for a writer), and it can be deleted.
func TestFIFO(t *testing.T) {
	w := newWorld(t)
	if err := unix.Mkfifo(filepath.Join(w.ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.file(t, "plain", "control")
	done := make(chan error, 1)
	go func() {
		_, _, err := w.root.Read("fifo", 0, 0)
		done <- err
	}()
	select {
	case err := <-done:
		wantKind(t, "read fifo", err, KindBadRequest)
	case <-time.After(5 * time.Second):
		t.Fatal("read of a FIFO blocked")
	}
	if st, err := w.root.Stat("fifo"); err != nil || st.Type != TypeFIFO {
		t.Errorf("stat fifo: %+v %v", st, err)
	}
	wantKind(t, "write fifo", w.root.Write("fifo", []byte("x"), false), KindBadRequest)
	if b, _, err := w.root.Read("plain", 0, 0); err != nil || string(b) != "control" {
		t.Errorf("control read: %q %v", b, err)
	}
	wantOK(t, "delete fifo", w.root.Delete("fifo"))
	// /dev/null as a device node inside the workspace is refused too,
	// without being opened for reading.
	if os.Geteuid() == 0 {
		if err := unix.Mknod(filepath.Join(w.ws, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
			_, _, err := w.root.Read("null", 0, 0)
			wantKind(t, "read a device", err, KindBadRequest)
			if st, err := w.root.Stat("null"); err != nil || st.Type != TypeDevice {
				t.Errorf("stat null: %+v %v", st, err)
			}
		}
	}
}

// A hard link inside the workspace to a file outside it is, to path
// resolution, an ordinary file: read shows the outside file (a limit, in
// doc.go). Writes replace the name, so the outside file is never written;
// delete removes the name only.
func TestHardLinkLimit(t *testing.T) {
	w := newWorld(t)
	if err := os.Link(filepath.Join(w.outside, "secret"), filepath.Join(w.ws, "hl")); err != nil {
		t.Skip("no hard link across these directories:", err)
	}
	b, _, err := w.root.Read("hl", 0, 0)
	if err != nil || string(b) != secret {
		t.Errorf("read hl: %q %v (the documented limit: a hard link reads through)", b, err)
	}
	wantOK(t, "write hl", w.root.Write("hl", []byte("replaced"), false))
	if b, _, _ := w.root.Read("hl", 0, 0); string(b) != "replaced" {
		t.Errorf("hl after write: %q", b)
	}
	w.outsideUnchanged(t)
	os.Link(filepath.Join(w.outside, "secret"), filepath.Join(w.ws, "hl2"))
	wantOK(t, "delete hl2", w.root.Delete("hl2"))
	w.outsideUnchanged(t)
}

// Protected paths: every mutation of them, onto them, out of them or of
// an ancestor by rename is refused; reads are not; case variants and
// near names are other files (the controls).
func TestProtected(t *testing.T) {
	w := newWorld(t, "secrets/prod.env", "conf/policy.toml")
	for rel, c := range map[string]string{
		".git/config": "[core]", ".git/hooks/pre-commit": "#!/bin/sh", ".git/HEAD": "ref: refs/heads/main",
		".bashrc": "rc", "sub/.profile": "p", ".ssh/authorized_keys": "k", ".vscode/settings.json": "{}",
		".mcp.json": "{}", "secrets/prod.env": "TOKEN", "conf/policy.toml": "x", ".git/modules/lib/config": "[core]",
		"staging/hooks/pre-commit": "evil", "staging/config": "[core] hooksPath=/tmp", "plain": "plain",
	} {
		w.file(t, rel, c)
	}
	before := snapshot(t, w.ws)
	r := w.root
	targets := []string{
		".git/config", ".git/hooks", ".git/hooks/pre-commit", ".git/hooks/new", ".git/commondir",
		".git/modules/lib/config", ".git/modules/lib/hooks/post-checkout",
		".bashrc", ".profile", ".zshrc", ".bash_profile", ".bash_aliases", "sub/.profile", "sub/.zshrc",
		".ssh", ".ssh/authorized_keys", ".ssh/new", ".vscode", ".vscode/settings.json", ".vscode/tasks.json",
		".mcp.json", "sub/.mcp.json", "secrets/prod.env", "conf/policy.toml",
		".git/HEAD", ".git/info/exclude", // git's state: all of .git but lock files
	}
	for _, p := range targets {
		wantKind(t, "write "+p, r.Write(p, []byte("pwned"), false), KindProtected)
		wantKind(t, "mkdir "+p, r.Mkdir(p), KindProtected)
		wantKind(t, "delete "+p, r.Delete(p), KindProtected)
		wantKind(t, "rename "+p+" away", r.Rename(p, "taken", false), KindProtected)
		wantKind(t, "rename plain onto "+p, r.Rename("plain", p, true), KindProtected)
	}
	// Ancestors: moving .git or a directory onto .git, a file named .git
	// (it would point git at another directory), the bootstrap paths'
	// directories.
	for _, rn := range [][2]string{
		{".git", "git.old"}, {"staging", ".git"}, {"staging", "sub/.git"}, {".git/hooks", "h"},
		{"staging/hooks", ".git/hooks"}, {"staging", ".git/modules/x"}, {"secrets", "s"}, {"staging", "secrets"},
		{"conf", "c"}, {"plain", ".git"}, {".git/HEAD", "HEAD"},
	} {
		wantKind(t, fmt.Sprintf("rename %s → %s", rn[0], rn[1]), r.Rename(rn[0], rn[1], true), KindProtected)
	}
	wantKind(t, "write a .git file", r.Write("sub/.git", []byte("gitdir: ../staging"), false), KindProtected)
	wantKind(t, "write .git", r.Write(".git", []byte("gitdir: staging"), false), KindProtected)
	if after := snapshot(t, w.ws); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused mutation changed the workspace:\n%v\n%v", before, after)
	}
	// Reads of them are allowed.
	if b, _, err := r.Read(".git/config", 0, 0); err != nil || string(b) != "[core]" {
		t.Errorf("read .git/config: %q %v", b, err)
	}
	if _, _, err := r.List(".ssh"); err != nil {
		t.Errorf("list .ssh: %v", err)
	}
	if _, err := r.Stat(".bashrc"); err != nil {
		t.Errorf("stat .bashrc: %v", err)
	}
	// Controls: near names and case variants (other files here).
	for _, p := range []string{
		".gitignore", ".bashrc.bak", "bashrc", ".git-hooks/x",
		"hooks/x", "secrets/dev.env", "conf/other.toml", ".GIT", ".Bashrc", ".SSH", ".VSCODE", ".MCP.JSON",
	} {
		os.MkdirAll(filepath.Join(w.ws, filepath.Dir(p)), 0o755)
		wantOK(t, "write "+p, r.Write(p, []byte("ok"), false))
	}
	wantOK(t, "mkdir .Git", r.Mkdir(".Git"))
	wantOK(t, "write .Git/config", r.Write(".Git/config", []byte("variant"), false))
	wantOK(t, "rename .Git → Git2", r.Rename(".Git", "Git2", false))
	wantOK(t, "rename plain → plain2", r.Rename("plain", "plain2", false))
	wantOK(t, "mkdir nested/.git (an empty one)", func() error { r.Mkdir("nested"); return r.Mkdir("nested/.git") }())
	wantOK(t, "delete .GIT", r.Delete(".GIT"))
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".git/config")); string(b) != "[core]" {
		t.Errorf(".git/config changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".bashrc")); string(b) != "rc" {
		t.Errorf(".bashrc changed: %q", b)
	}
}

// Writes and reads bounded by MaxData; a large file is read in pieces.
func TestSizes(t *testing.T) {
	w := newWorld(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), MaxData/16)
	wantKind(t, "write MaxData+1", w.root.Write("big", append(big, 'x'), false), KindBadRequest)
	if _, err := os.Lstat(filepath.Join(w.ws, "big")); err == nil {
		t.Errorf("the oversized write left a file")
	}
	wantOK(t, "write MaxData", w.root.Write("big", big, false))
	_, _, err := w.root.Read("big", 0, MaxData+1)
	wantKind(t, "read MaxData+1", err, KindBadRequest)
	_, _, err = w.root.Read("big", 0, -1)
	wantKind(t, "read -1", err, KindBadRequest)
	b, eof, err := w.root.Read("big", 0, MaxData)
	if err != nil || !bytes.Equal(b, big) || !eof {
		t.Errorf("read MaxData: %d %v %v", len(b), eof, err)
	}
	// A file larger than one read, by host: two pieces.
	w.put(t, filepath.Join(w.ws, "bigger"), string(big)+"tail")
	b, eof, err = w.root.Read("bigger", 0, 0)
	if err != nil || len(b) != MaxData || eof {
		t.Errorf("first piece: %d %v %v", len(b), eof, err)
	}
	b, eof, err = w.root.Read("bigger", MaxData, 0)
	if err != nil || string(b) != "tail" || !eof {
		t.Errorf("second piece: %q %v %v", b, eof, err)
	}
	if tf := tempFiles(t, w.ws); len(tf) != 0 {
		t.Errorf("temporary files left: %v", tf)
	}
}

// A write keeps the old file's permission bits but never setuid, setgid
// or sticky; a new file is 0644 whatever the umask, never executable.
func TestWriteModes(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		old, want uint32
	}{{0o755, 0o755}, {0o600, 0o600}, {0o4755, 0o755}, {0o2750, 0o750}, {0o1777, 0o777}, {0o6711, 0o711}} {
		name := fmt.Sprintf("m%o", c.old)
		w.file(t, name, "old")
		if err := os.Chmod(filepath.Join(w.ws, name), os.FileMode(c.old&0o777)|modeBits(c.old)); err != nil {
			t.Fatal(err)
		}
		wantOK(t, "write "+name, w.root.Write(name, []byte("new"), false))
		st, err := w.root.Stat(name)
		if err != nil || st.Mode != c.want {
			t.Errorf("%s after write: %o %v, want %o", name, st.Mode, err, c.want)
		}
	}
	old := unix.Umask(0)
	err := w.root.Write("fresh", []byte("x"), true)
	unix.Umask(old)
	wantOK(t, "write fresh", err)
	if st, _ := w.root.Stat("fresh"); st.Mode != 0o644 {
		t.Errorf("new file: %o, want 644", st.Mode)
	}
}

func modeBits(m uint32) os.FileMode {
	var f os.FileMode
	if m&0o4000 != 0 {
		f |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		f |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		f |= os.ModeSticky
	}
	return f
}

// Readers never see a partial write; no temporary file outlives a write,
// successful or not.
func TestWriteAtomic(t *testing.T) {
	w := newWorld(t)
	a, b := bytes.Repeat([]byte("a"), MaxData), bytes.Repeat([]byte("b"), MaxData/2)
	wantOK(t, "first write", w.root.Write("f", a, false))
	stop := make(chan struct{})
	var torn atomic.Value
	var reads atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, _, err := w.root.Read("f", 0, 0)
				if err != nil {
					torn.Store(err.Error())
					return
				}
				if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					torn.Store(fmt.Sprintf("%d bytes, first %q last %q", len(got), got[:1], got[len(got)-1:]))
					return
				}
				reads.Add(1)
			}
		}()
	}
	for i := range 100 {
		d := a
		if i%2 == 0 {
			d = b
		}
		if err := w.root.Write("f", d, false); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if v := torn.Load(); v != nil {
		t.Errorf("a reader saw: %v", v)
	}
	t.Logf("%d concurrent reads", reads.Load())
	if tf := tempFiles(t, w.ws); len(tf) != 0 {
		t.Errorf("temporary files after successful writes: %v", tf)
	}

	// A write that fails at its rename: a create-only write whose name
	// appears meanwhile, and a write whose name becomes a directory.
	testHookBeforeRename = func() { os.WriteFile(filepath.Join(w.ws, "late"), []byte("first"), 0o644) }
	wantKind(t, "create-only losing the race", w.root.Write("late", []byte("second"), true), KindBadRequest)
	testHookBeforeRename = func() { os.Mkdir(filepath.Join(w.ws, "dirlate"), 0o755) }
	err := w.root.Write("dirlate", []byte("x"), false)
	testHookBeforeRename = nil
	if err == nil {
		t.Errorf("write over a directory made meanwhile succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "late")); string(b) != "first" {
		t.Errorf("create-only replaced the file: %q", b)
	}
	if tf := tempFiles(t, w.ws); len(tf) != 0 {
		t.Errorf("temporary files after failed writes: %v", tf)
	}
}

// A write that runs out of space fails, leaves the old content and no
// temporary file.
func TestWriteNoSpace(t *testing.T) {
	requireRoot(t)
	w := newWorld(t)
	mnt := filepath.Join(w.ws, "small")
	os.Mkdir(mnt, 0o755)
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skip("tmpfs:", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	root, err := OpenRoot(mnt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	wantOK(t, "small write", root.Write("f", []byte("old"), false))
	err = root.Write("f", bytes.Repeat([]byte("x"), 512<<10), false)
	wantKind(t, "write beyond the space", err, KindFailed)
	if b, _, _ := root.Read("f", 0, 0); string(b) != "old" {
		t.Errorf("after a failed write: %q", b)
	}
	if tf := tempFiles(t, mnt); len(tf) != 0 {
		t.Errorf("temporary files after ENOSPC: %v", tf)
	}
}

// A mount inside the workspace (a tmpfs, a bind mount of the outside) is
// not entered: RESOLVE_NO_XDEV.
func TestMountInside(t *testing.T) {
	requireRoot(t)
	w := newWorld(t)
	for _, d := range []string{"mnt", "bind"} {
		os.Mkdir(filepath.Join(w.ws, d), 0o755)
	}
	// Controls before mounting: plain directories.
	wantOK(t, "write mnt/f before the mount", w.root.Write("mnt/f", []byte("under"), false))
	if _, _, err := w.root.List("bind"); err != nil {
		t.Errorf("list bind before the mount: %v", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(w.ws, "mnt"), "tmpfs", 0, "size=1m"); err != nil {
		t.Skip("tmpfs:", err)
	}
	t.Cleanup(func() { unix.Unmount(filepath.Join(w.ws, "mnt"), unix.MNT_DETACH) })
	os.WriteFile(filepath.Join(w.ws, "mnt", "g"), []byte("on tmpfs"), 0o644)
	if err := unix.Mount(w.outside, filepath.Join(w.ws, "bind"), "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(filepath.Join(w.ws, "bind"), unix.MNT_DETACH) })
	r := w.root
	for _, p := range []string{"mnt", "mnt/g", "bind", "bind/secret", "bind/dir/secret"} {
		_, err := r.Stat(p)
		wantKind(t, "stat "+p, err, KindEscape)
		_, _, err = r.Read(p, 0, 0)
		wantKind(t, "read "+p, err, KindEscape)
		_, _, err = r.List(p)
		wantKind(t, "list "+p, err, KindEscape)
	}
	for _, p := range []string{"mnt/g", "mnt/new", "bind/secret", "bind/new", "bind/dir/x"} {
		wantKind(t, "write "+p, r.Write(p, []byte("pwned"), false), KindEscape)
		wantKind(t, "mkdir "+p, r.Mkdir(p+".d"), KindEscape)
		wantKind(t, "delete "+p, r.Delete(p), KindEscape)
		wantKind(t, "rename from "+p, r.Rename(p, "stolen", false), KindEscape)
	}
	// The mount points themselves: the kernel refuses to remove or move them.
	if err := r.Delete("bind"); err == nil {
		t.Errorf("deleted the mount point bind")
	}
	if err := r.Rename("bind", "bound", false); err == nil {
		t.Errorf("renamed the mount point bind")
	}
	// Control: the rest of the workspace works.
	wantOK(t, "write beside the mounts", r.Write("beside", []byte("ok"), false))
	if b, _ := os.ReadFile(filepath.Join(w.ws, "mnt", "g")); string(b) != "on tmpfs" {
		t.Errorf("the tmpfs file changed: %q", b)
	}
	unix.Unmount(filepath.Join(w.ws, "bind"), unix.MNT_DETACH)
	w.outsideUnchanged(t)
}

// List: sorted, bounded, a link shown as a link.
func TestList(t *testing.T) {
	w := newWorld(t)
	for _, n := range []string{"c", "a", "B", "b"} {
		w.file(t, "d/"+n, n)
	}
	w.symlink(t, w.outside, "d/link")
	ents, trunc, err := w.root.List("d")
	if err != nil || trunc {
		t.Fatal(err, trunc)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name+":"+string(e.Type))
	}
	if got := strings.Join(names, " "); got != "B:file a:file b:file c:file link:symlink" {
		t.Errorf("list d: %s", got)
	}
	many := filepath.Join(w.ws, "many")
	os.Mkdir(many, 0o755)
	for i := range MaxList + 5 {
		f, err := os.Create(filepath.Join(many, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	ents, trunc, err = w.root.List("many")
	if err != nil || !trunc || len(ents) != MaxList {
		t.Errorf("list many: %d entries, truncated %v, %v", len(ents), trunc, err)
	}
	for i := 1; i < len(ents); i++ {
		if ents[i-1].Name >= ents[i].Name {
			t.Fatalf("not sorted at %d", i)
		}
	}
	os.Remove(filepath.Join(many, "f00000"))
	os.Remove(filepath.Join(many, "f00001"))
	os.Remove(filepath.Join(many, "f00002"))
	os.Remove(filepath.Join(many, "f00003"))
	os.Remove(filepath.Join(many, "f00004"))
	ents, trunc, err = w.root.List("many")
	if err != nil || trunc || len(ents) != MaxList {
		t.Errorf("list exactly MaxList: %d entries, truncated %v, %v", len(ents), trunc, err)
	}
}

// A protected path's mutation goes ahead only when the person approves:
// the question names the operation and the path (quoted, unprintable
// bytes escaped) and the rule; a refusal carries the person's reason;
// an unprotected path is never asked about.
func TestProtectedApproval(t *testing.T) {
	w := newWorld(t)
	var asked []string
	answer := false
	w.root.Approve = func(action, detail string) (bool, string) {
		asked = append(asked, action+" | "+detail)
		if answer {
			return true, "approved"
		}
		return false, "declined"
	}
	if err := w.root.Mkdir(".git"); err != nil {
		t.Fatal(err) // .git itself is not protected; hooks and config are
	}
	err := w.root.Write(".git/config", []byte("[core]\n"), false)
	if KindOf(err) != KindProtected || !strings.Contains(err.Error(), "declined") {
		t.Fatalf("declined: %v", err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, ".git/config"))
	answer = true
	if err := w.root.Write(".git/config", []byte("[core]\n"), false); err != nil {
		t.Fatalf("approved: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, ".git/config")); string(b) != "[core]\n" {
		t.Errorf("approved write: %q", b)
	}
	if len(asked) != 2 || !strings.Contains(asked[0], `write ".git/config"`) || !strings.Contains(asked[0], "fs.protected") {
		t.Errorf("questions: %q", asked)
	}
	if err := w.root.Write("plain.txt", []byte("x"), false); err != nil || len(asked) != 2 {
		t.Errorf("an unprotected write was asked about or failed: %v %q", err, asked)
	}
	w.root.Approve = func(action, _ string) (bool, string) { asked = append(asked, action); return false, "no" }
	w.root.Write(".ssh/a\nb", []byte("x"), false)
	if last := asked[len(asked)-1]; strings.Contains(last, "\n") || !strings.Contains(last, `\n`) {
		t.Errorf("the question shows a raw newline: %q", last)
	}
}

// A file with another name (or a tree holding one) is not moved into a
// protected path, even with the person's yes: a command could write it
// through the other name. Each control moves the same kind of thing
// with one name, or a shared file to a path that is not protected.
func TestRenameIntoProtectedSingleLinked(t *testing.T) {
	w := newWorld(t)
	w.root.Approve = func(string, string) (bool, string) { return true, "approved" }
	must(t, w.root.Mkdir(".git"))
	must(t, w.root.Mkdir(".git/hooks"))
	w.file(t, "tools/pre-commit", "#!/bin/sh\n")
	must(t, os.Link(filepath.Join(w.ws, "tools/pre-commit"), filepath.Join(w.ws, "y")))
	if err := w.root.Rename("tools/pre-commit", ".git/hooks/pre-commit", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "2 names") {
		t.Fatalf("a file with two names moved into .git/hooks: %v", err)
	}
	if err := w.root.Rename("tools/pre-commit", "tools/renamed", false); err != nil {
		t.Fatalf("control: a shared file moved elsewhere: %v", err)
	}
	w.file(t, "hooks2/post-checkout", "#!/bin/sh\n")
	must(t, os.Link(filepath.Join(w.ws, "hooks2/post-checkout"), filepath.Join(w.ws, "z")))
	if err := w.root.Rename("hooks2", ".vscode", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "post-checkout in the tree has 2 names") {
		t.Fatalf("a tree with a shared file moved to .vscode: %v", err)
	}
	must(t, os.Remove(filepath.Join(w.ws, "z")))
	if err := w.root.Rename("hooks2", ".vscode", false); err != nil {
		t.Fatalf("control: the tree with one name each: %v", err)
	}
	must(t, os.Remove(filepath.Join(w.ws, "y")))
	if err := w.root.Rename("tools/renamed", ".git/hooks/pre-commit", false); err != nil {
		t.Fatalf("control: a file with one name: %v", err)
	}
}

// Nor is a symbolic link, or a tree holding one: a hunt moved a link to
// a workspace script into .git/hooks with one yes, then changed the hook
// by writing the script, with no question.
func TestRenameIntoProtectedNoLink(t *testing.T) {
	w := newWorld(t)
	w.root.Approve = func(string, string) (bool, string) { return true, "approved" }
	must(t, w.root.Mkdir(".git"))
	must(t, w.root.Mkdir(".git/hooks"))
	w.file(t, "tools/lint.sh", "#!/bin/sh\nexit 0\n")
	w.symlink(t, "../../tools/lint.sh", "pc")
	if err := w.root.Rename("pc", ".git/hooks/pre-commit", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link moved into .git/hooks: %v", err)
	}
	w.file(t, "cfg/settings.json", "{}")
	w.symlink(t, "../tools/lint.sh", "cfg/task.sh")
	if err := w.root.Rename("cfg", ".vscode", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "task.sh in the tree is a symbolic link") {
		t.Errorf("a tree holding a link moved to .vscode: %v", err)
	}
	// Controls: the link moves elsewhere; the tree without it moves in.
	wantOK(t, "a link elsewhere", w.root.Rename("pc", "pc2", false))
	must(t, os.Remove(filepath.Join(w.ws, "cfg/task.sh")))
	wantOK(t, "the tree without its link", w.root.Rename("cfg", ".vscode", false))
}

// Nor is a FIFO, a socket or a device, or a tree holding one: a FIFO
// moved to .git/config with one yes (the question names its path, not
// its type) has for content whatever a command writes into it when git
// opens it, and the launcher, which reads regular files only, never
// sees it: the same change with no new inode and no question as a
// second name's. They moved in before.
func TestRenameIntoProtectedRegularOnly(t *testing.T) {
	w := newWorld(t)
	w.root.Approve = func(string, string) (bool, string) { return true, "approved" }
	must(t, w.root.Mkdir(".git"))
	must(t, unix.Mkfifo(filepath.Join(w.ws, "fifo"), 0o644))
	must(t, unix.Mknod(filepath.Join(w.ws, "sock"), unix.S_IFSOCK|0o644, 0))
	for _, from := range []string{"fifo", "sock"} {
		if err := w.root.Rename(from, ".git/config", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s moved to .git/config: %v", from, err)
		}
	}
	w.file(t, "cfg/settings.json", "{}")
	must(t, unix.Mkfifo(filepath.Join(w.ws, "cfg/tasks.json"), 0o644))
	if err := w.root.Rename("cfg", ".vscode", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "tasks.json in the tree is not a regular file") {
		t.Errorf("a tree holding a FIFO moved to .vscode: %v", err)
	}
	// Controls: they move elsewhere; the tree without the FIFO moves in.
	wantOK(t, "a FIFO elsewhere", w.root.Rename("fifo", "fifo2", false))
	wantOK(t, "a socket elsewhere", w.root.Rename("sock", "sock2", false))
	must(t, os.Remove(filepath.Join(w.ws, "cfg/tasks.json")))
	wantOK(t, "the tree without its FIFO", w.root.Rename("cfg", ".vscode", false))
}

// In a directory that folds case, the link check matches the target as
// guard does: a file with a second name (or a link) moved to .GIT/hooks,
// a Kelvin-sign "hooKs", a ".s\u200dsh" or a ligature "con\ufb01g" lands
// in the protected path there. It matched exactly, so such a rename,
// approved once, put a shared file into .git/hooks (a leftover of the
// case-folding hunt).
// This kernel folds no directory: the matching is what is tested, with
// the target's directory taken to fold.
func TestSingleLinkedFolds(t *testing.T) {
	w := newWorld(t)
	w.file(t, "tools/pre-commit", "#!/bin/sh\n")
	must(t, os.Link(filepath.Join(w.ws, "tools/pre-commit"), filepath.Join(w.ws, "other")))
	w.symlink(t, "tools/pre-commit", "link")
	for _, from := range []string{"tools/pre-commit", "link"} {
		src, err := w.root.openParent("rename", from)
		must(t, err)
		defer unix.Close(src.fd)
		for _, to := range []string{".GIT/hooks/pre-commit", ".GIT/hoo\u212as/pre-commit", ".s\u200dsh/rc", ".Git/con\ufb01g", "x/.GIT"} {
			if err := w.root.singleLinked("rename", to, src, true); KindOf(err) != KindProtected {
				t.Errorf("%s to %q in a folding directory: %v, want it refused", from, to, err)
			}
			// Control: a directory that does not fold has other names.
			if err := w.root.singleLinked("rename", to, src, false); err != nil {
				t.Errorf("%s to %q in a directory that does not fold: %v", from, to, err)
			}
		}
		// Control: a name that is not protected, folded or not.
		if err := w.root.singleLinked("rename", "x/hooks", src, true); err != nil {
			t.Errorf("%s to x/hooks: %v", from, err)
		}
	}
}

// A rename between two names of one file is refused: rename(2) does
// nothing then and reports success, and fs would too.
func TestRenameSameFile(t *testing.T) {
	w := newWorld(t)
	w.file(t, "a", "x")
	must(t, os.Link(filepath.Join(w.ws, "a"), filepath.Join(w.ws, "b")))
	if err := w.root.Rename("a", "b", true); KindOf(err) != KindBadRequest || !strings.Contains(err.Error(), "same file") {
		t.Errorf("rename between two names of one file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(w.ws, "a")); err != nil {
		t.Errorf("a: %v", err)
	}
	w.file(t, "c", "y")
	wantOK(t, "control: over another file", w.root.Rename("a", "c", true))
}

func mustNotExistHost(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("%s exists: %v", p, err)
	}
}

// Where the launcher's own files lie in the workspace, fs neither reads,
// lists, changes nor removes them, nor anything beneath; the control is
// a sibling of theirs that fs serves.
func TestHiddenAuthority(t *testing.T) {
	w := newWorld(t)
	w.file(t, "policy.toml", "version = 1\n")
	w.file(t, ".config/pinfold/vault", "sealed")
	w.file(t, "notes.txt", "mine")
	if err := w.root.Hide([]string{"policy.toml", ".config/pinfold"}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"read policy":     func() error { _, _, err := w.root.Read("policy.toml", 0, 0); return err }(),
		"stat vault":      func() error { _, err := w.root.Stat(".config/pinfold/vault"); return err }(),
		"list the dir":    func() error { _, _, err := w.root.List(".config/pinfold"); return err }(),
		"write policy":    w.root.Write("policy.toml", []byte("x"), false),
		"delete vault":    w.root.Delete(".config/pinfold/vault"),
		"rename away":     w.root.Rename("policy.toml", "p2.toml", false),
		"rename over":     w.root.Rename("notes.txt", "policy.toml", true),
		"delete the tree": func() error { _, err := w.root.DeleteRecursive(".config/pinfold"); return err }(),
	} {
		if KindOf(err) != KindAuthority {
			t.Errorf("%s: %v", name, err)
		}
	}
	ents, _, err := w.root.List(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	if strings.Contains(strings.Join(names, " "), "policy.toml") || !strings.Contains(strings.Join(names, " "), "notes.txt") {
		t.Errorf("listing %v", names)
	}
	if b, _, err := w.root.Read("notes.txt", 0, 0); err != nil || string(b) != "mine" {
		t.Errorf("control: %q %v", b, err)
	}
	if err := w.root.Hide([]string{"../x"}); err == nil {
		t.Error("a hidden path outside the workspace was taken")
	}
}

// A directory holding a hidden path is neither moved nor removed: renamed,
// the hidden path would be served under its new name (found by a hunt:
// the vault was read, and the policy file rewritten and put back).
func TestHiddenAuthorityAncestors(t *testing.T) {
	w := newWorld(t)
	w.file(t, ".config/pinfold/vault", "sealed")
	w.file(t, "conf/pinfold.toml", "version = 1\n")
	w.file(t, "conf2/other.txt", "mine")
	w.file(t, "spare/x", "x")
	if err := w.root.Mkdir("empty"); err != nil {
		t.Fatal(err)
	}
	if err := w.root.Hide([]string{".config/pinfold/vault", "conf/pinfold.toml", "absent/vault"}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"rename the grandparent":     w.root.Rename(".config", "cfg", false),
		"rename the parent":          w.root.Rename(".config/pinfold", ".config/p2", false),
		"rename the other parent":    w.root.Rename("conf", "c2", false),
		"rename onto an ancestor":    w.root.Rename("spare", "absent", false),
		"delete the parent":          w.root.Delete("conf"),
		"delete recursively":         func() error { _, err := w.root.DeleteRecursive(".config"); return err }(),
		"delete recursively, parent": func() error { _, err := w.root.DeleteRecursive("conf"); return err }(),
	} {
		if KindOf(err) != KindAuthority {
			t.Errorf("%s: %v, want an authority refusal", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(w.ws, ".config/pinfold/vault")); err != nil || string(b) != "sealed" {
		t.Errorf("the vault is %q, %v", b, err)
	}
	// Case variants are hidden too: a case-insensitive directory would
	// serve the file under them.
	for name, err := range map[string]error{
		"read a case variant":   func() error { _, _, err := w.root.Read("CONF/Pinfold.TOML", 0, 0); return err }(),
		"rename a case variant": w.root.Rename(".CONFIG", "cfg", false),
	} {
		if KindOf(err) != KindAuthority {
			t.Errorf("%s: %v, want an authority refusal", name, err)
		}
	}
	// Controls: a sibling tree moves; a path that merely shares a prefix
	// of a component (conf2) is not an ancestor.
	wantOK(t, "rename a sibling", w.root.Rename("conf2", "conf3", false))
	wantOK(t, "rename an empty dir", w.root.Rename("empty", "empty2", false))

	// With a backup store the person is not even asked.
	rw, _, asked := recursiveWorld(t, 0, true)
	rw.file(t, ".config/pinfold/vault", "sealed")
	if err := rw.root.Hide([]string{".config/pinfold/vault"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.root.DeleteRecursive(".config"); KindOf(err) != KindAuthority || len(*asked) > 0 {
		t.Errorf("recursive delete of the vault's ancestor: %v, asked %q", err, *asked)
	}
}

// forCall: a yes the person gives after the call's caller left is no;
// with the caller there it stands; the shared Root is not changed.
func TestForCallCallerLeft(t *testing.T) {
	r := &Root{
		Approve:   func(string, string) (bool, string) { return true, "approved" },
		Recursive: &Recursive{Confirm: func(string, string, Question) (bool, string) { return true, "delete" }},
	}
	ctx, cancel := context.WithCancel(context.Background())
	live := r.forCall(ctx)
	if yes, _ := live.Approve("a", "d"); !yes {
		t.Error("approve with the caller there: no")
	}
	if yes, _ := live.Recursive.Confirm("a", "d", AskDelete); !yes {
		t.Error("confirm with the caller there: no")
	}
	cancel()
	if yes, why := live.Approve("a", "d"); yes || !strings.Contains(why, "left") {
		t.Errorf("approve after the caller left: %v %q", yes, why)
	}
	if yes, why := live.Recursive.Confirm("a", "d", AskIrreversible); yes || !strings.Contains(why, "left") {
		t.Errorf("confirm after the caller left: %v %q", yes, why)
	}
	if yes, _ := r.Approve("a", "d"); !yes {
		t.Error("the shared Root changed")
	}
	if yes, _ := r.Recursive.Confirm("a", "d", AskDelete); !yes {
		t.Error("the shared Recursive changed")
	}
}

// A question names the whole change, so two different changes never read
// alike: a rename shows both ends in its direction, and whether it
// replaces; a write shows its size and how it begins; a rename between
// two protected paths is asked once, naming both.
func TestQuestionNamesTheWholeChange(t *testing.T) {
	w := newWorld(t)
	var asked []string
	w.root.Approve = func(action, detail string) (bool, string) {
		asked = append(asked, action+" | "+detail)
		return false, "declined"
	}
	must(t, w.root.Mkdir(".git"))
	w.file(t, "payload", "#!/bin/sh\necho one\necho two\necho three\n")
	w.file(t, ".git/hooks/pre-commit", "#!/bin/sh\n")
	w.root.Rename("payload", ".git/hooks/pre-commit", false)
	w.root.Rename(".git/hooks/pre-commit", "payload", true)
	w.root.Write(".git/hooks/post-commit", []byte("#!/bin/sh\necho one\necho two\necho three\n"), false)
	w.root.Write(".git/hooks/pre-push", nil, false)
	w.root.Rename(".git/hooks/pre-commit", ".git/config", false)
	want := []string{
		`rename "payload" to ".git/hooks/pre-commit" (asked by the agent) | ".git/hooks" is protected`,
		`rename ".git/hooks/pre-commit" to "payload", replacing what is there (asked by the agent) | ".git/hooks" is protected`,
		`write ".git/hooks/post-commit": 39 bytes, beginning "#!/bin/sh\necho one\necho two" … (asked by the agent)`,
		`write ".git/hooks/pre-push": 0 bytes (empty) (asked by the agent)`,
		`rename ".git/hooks/pre-commit" to ".git/config" (asked by the agent) | ".git/hooks" and ".git/config" are protected`,
	}
	if len(asked) != len(want) {
		t.Fatalf("%d questions, want %d: %q", len(asked), len(want), asked)
	}
	for i := range want {
		if !strings.HasPrefix(asked[i], want[i]) {
			t.Errorf("question %d:\n got %q\nwant %q…", i, asked[i], want[i])
		}
	}
}

// Hidden names compare as a case-insensitive directory compares them:
// full folding, so "seßion" is the session directory there (found by a
// hunt; EqualFold let it through).
func TestHiddenFullFold(t *testing.T) {
	w := newWorld(t)
	w.file(t, "session/key", "k")
	if err := w.root.Hide([]string{"session"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := w.root.Read("se\u00dfion/key", 0, 0)
	wantKind(t, "read seßion/key", err, KindAuthority)
	wantKind(t, "write SE\u00dfION/x", w.root.Write("SE\u00dfION/x", []byte("x"), false), KindAuthority)
	// Control: another name is not hidden.
	_, _, err = w.root.Read("se\u00dfions/key", 0, 0)
	wantKind(t, "read seßions/key", err, KindNotFound)
}

// Everything beneath a .git but lock files is protected, not only hooks
// and config: git resumes from the state there, and a rebase's todo list
// runs its exec lines on git rebase --continue (bash's eighth hunt found
// it through a command; fs wrote the same file with no question, found
// by a hunt).
func TestProtectedGitState(t *testing.T) {
	w := newWorld(t)
	w.file(t, ".git/HEAD", "ref: refs/heads/main\n")
	w.file(t, "sub/.git/HEAD", "ref: refs/heads/main\n")
	w.file(t, "todo", "exec sh -c 'rm -rf ~'\n")
	r := w.root
	for _, p := range []string{".git/rebase-merge", "sub/.git/sequencer"} {
		wantKind(t, "mkdir "+p, r.Mkdir(p), KindProtected)
	}
	os.MkdirAll(filepath.Join(w.ws, ".git/rebase-merge"), 0o755)
	for _, p := range []string{".git/rebase-merge/git-rebase-todo", ".git/HEAD", ".git/info/exclude", "sub/.git/HEAD", ".git/objects/info/alternates"} {
		wantKind(t, "write "+p, r.Write(p, []byte("exec sh -c 'rm -rf ~'\n"), false), KindProtected)
	}
	wantKind(t, "rename the todo in", r.Rename("todo", ".git/rebase-merge/git-rebase-todo", false), KindProtected)
	wantKind(t, "delete .git/HEAD", r.Delete(".git/HEAD"), KindProtected)
	if _, err := os.Lstat(filepath.Join(w.ws, ".git/rebase-merge/git-rebase-todo")); err == nil {
		t.Errorf("the todo list was written")
	}
	// A lock file git renames into place once done (TestGitLockNotWritten):
	// not written; one a git that died left may be removed (the control).
	wantKind(t, "write .git/index.lock", r.Write(".git/index.lock", nil, false), KindProtected)
	w.file(t, ".git/index.lock", "")
	wantOK(t, "delete .git/index.lock", r.Delete(".git/index.lock"))
}

// A bare repository is protected like a .git wherever it is and
// whatever it is called (git takes a directory for one by what it holds:
// HEAD, objects and refs): a write to its hooks, its config or its
// info/attributes, or anything else in it but a lock file, asks, and so
// does moving it. It did not (a documented limit): a write to
// NAME.git/hooks ran with the person's next git --git-dir=NAME.git, and
// one to docs/config with the next git status a prompt ran in docs.
// Making the last part of such a layout asks too, naming the repository
// it would make, or hooks could be written first and the repository
// made after.
func TestBareRepoProtected(t *testing.T) {
	w := newWorld(t)
	var asked []string
	w.root.Approve = func(action, detail string) (bool, string) {
		asked = append(asked, action+" | "+detail)
		return false, "no"
	}
	bare := func(dir string, names ...string) {
		for _, n := range names {
			must(t, os.MkdirAll(filepath.Join(w.ws, dir, n), 0o755))
		}
	}
	for _, dir := range []string{"repo.git", "docs"} {
		w.file(t, dir+"/HEAD", "ref: refs/heads/main\n")
		bare(dir, "objects", "refs/heads", "hooks", "info")
		for _, p := range []string{"hooks/post-update", "config", "info/attributes", "packed-refs", "refs/heads/main"} {
			wantKind(t, "write "+dir+"/"+p, w.root.Write(dir+"/"+p, []byte("x"), false), KindProtected)
		}
		wantKind(t, "mkdir "+dir+"/hooks2", w.root.Mkdir(dir+"/hooks2"), KindProtected)
		wantKind(t, "rename "+dir, w.root.Rename(dir, "moved", false), KindProtected)
		w.file(t, "hook", "#!/bin/sh\n")
		wantKind(t, "rename into "+dir, w.root.Rename("hook", dir+"/hooks/pre-receive", false), KindProtected)
		// A lock file a git that died left may be removed, as in .git;
		// not written (git renames a lock it holds into place).
		wantKind(t, "write "+dir+"/packed-refs.lock", w.root.Write(dir+"/packed-refs.lock", nil, false), KindProtected)
		w.file(t, dir+"/packed-refs.lock", "")
		wantOK(t, "delete "+dir+"/packed-refs.lock", w.root.Delete(dir+"/packed-refs.lock"))
	}
	// A worktree's git directory (HEAD and commondir), and the directory
	// a commondir names (objects and refs), are git directories too.
	w.file(t, "wt/HEAD", "ref: refs/heads/main\n")
	w.file(t, "wt/commondir", "../common\n")
	bare("common", "objects", "refs")
	wantKind(t, "write wt/config.worktree", w.root.Write("wt/config.worktree", []byte("x"), false), KindProtected)
	wantKind(t, "write common/config", w.root.Write("common/config", []byte("x"), false), KindProtected)

	// Controls: ordinary files, a part of a layout, a .git-less tree.
	for _, p := range []string{"src/main.go", "half/hooks/post-update", "half/config", "notes/config", "repo.git.txt"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(w.ws, p)), 0o755))
		wantOK(t, "write "+p, w.root.Write(p, []byte("x"), false))
	}
	bare("half", "objects")
	n := len(asked)
	wantOK(t, "mkdir half/info", w.root.Mkdir("half/info"))
	wantOK(t, "write half/HEAD", w.root.Write("half/HEAD", []byte("ref: refs/heads/main\n"), false))
	if len(asked) != n {
		t.Errorf("ordinary writes were asked about: %q", asked[n:])
	}
	// The last part of a layout: refs beside objects, commondir beside
	// HEAD, HEAD beside commondir. The question says why.
	wantKind(t, "mkdir half/refs", w.root.Mkdir("half/refs"), KindProtected)
	if last := asked[len(asked)-1]; !strings.Contains(last, `it would make "half" a git repository`) {
		t.Errorf("the question does not say why: %q", last)
	}
	wantKind(t, "write half/commondir", w.root.Write("half/commondir", []byte("../common\n"), false), KindProtected)
	w.file(t, "wt2/commondir", "../common\n")
	wantKind(t, "write wt2/HEAD", w.root.Write("wt2/HEAD", []byte("x"), false), KindProtected)
	w.file(t, "dir/objects", "")
	wantKind(t, "rename onto dir/refs", w.root.Rename("src/main.go", "dir/refs", false), KindProtected)
	mustNotExistHost(t, filepath.Join(w.ws, "half/refs"))
	// Made behind fs's back, the layout protects what was written first.
	bare("half", "refs")
	wantKind(t, "write half/hooks/post-update", w.root.Write("half/hooks/post-update", []byte("y"), false), KindProtected)
	// A directory that folds case takes REFS for refs: matched so there.
	if _, made, ok := w.root.protects(components("dir/REFS"), guardPlain, true); !ok || made != "dir" {
		t.Errorf("dir/REFS beside dir/objects, folded: %v %q", ok, made)
	}
	if _, _, ok := w.root.protects(components("dir/REFS"), guardPlain, false); ok {
		t.Errorf("dir/REFS beside dir/objects, not folded: protected")
	}
}

// A delete makes nothing: one of a layout's name that is not there (a
// refs beside an objects) fails as not found, asking nothing. It asked
// whether to make the directory a git repository (a review).
func TestDeleteMakesNoLayout(t *testing.T) {
	w := newWorld(t)
	asked := 0
	w.root.Approve = func(action, detail string) (bool, string) { asked++; return false, "no" }
	must(t, os.MkdirAll(filepath.Join(w.ws, "half", "objects"), 0o755))
	wantKind(t, "delete half/refs", w.root.Delete("half/refs"), KindNotFound)
	if asked != 0 {
		t.Errorf("a delete of a missing half/refs asked %d questions", asked)
	}
	// Control: making it still asks.
	wantKind(t, "mkdir half/refs", w.root.Mkdir("half/refs"), KindProtected)
	if asked != 1 {
		t.Errorf("mkdir half/refs asked %d questions, want 1", asked)
	}
}

// Two changes at once that together complete a bare repository's layout
// are one after the other: the second sees the first's name and asks.
// Each looked before either made its name, and both went through
// without a question (most of 200 tries: a review found it), for a
// mkdir of each, a write of each and a move onto the second name.
func TestBareLayoutRace(t *testing.T) {
	w := newWorld(t)
	w.file(t, "src", "x")
	ops := map[string][2]func(d string) error{
		"mkdir": {
			func(d string) error { return w.root.Mkdir(d + "/objects") },
			func(d string) error { return w.root.Mkdir(d + "/refs") },
		},
		"write": {
			func(d string) error { return w.root.Write(d+"/HEAD", []byte("ref: refs/heads/main\n"), false) },
			func(d string) error { return w.root.Write(d+"/commondir", []byte("../common\n"), false) },
		},
		"rename": {
			func(d string) error { return w.root.Mkdir(d + "/objects") },
			func(d string) error {
				if err := w.root.Mkdir(d + "-refs"); err != nil {
					return err
				}
				return w.root.Rename(d+"-refs", d+"/refs", false)
			},
		},
	}
	for name, op := range ops {
		for i := range 200 {
			d := fmt.Sprintf("%s%d", name, i)
			must(t, os.Mkdir(filepath.Join(w.ws, d), 0o755))
			var errs [2]error
			var wg sync.WaitGroup
			for j := range 2 {
				wg.Add(1)
				go func() { defer wg.Done(); errs[j] = op[j](d) }()
			}
			wg.Wait()
			if errs[0] == nil && errs[1] == nil {
				t.Errorf("%s: %s completed a git directory's layout with no question", name, d)
				break
			}
		}
	}
}

// An offset past the end reads nothing and says so, whatever its size: at
// math.MaxInt64 the kernel's pread said EINVAL, reported as "invalid (a
// directory into itself?)" (found by a hunt).
func TestReadHugeOffset(t *testing.T) {
	w := newWorld(t)
	w.file(t, "f", "hello")
	for _, off := range []int64{5, 6, 1 << 62, math.MaxInt64 - 1, math.MaxInt64} {
		b, eof, err := w.root.Read("f", off, 10)
		if err != nil || len(b) != 0 || !eof {
			t.Errorf("read at %d: %q %v %v, want nothing and the end", off, b, eof, err)
		}
	}
}

// A path protected because a directory above it holds a git directory's
// layout says so: nothing in its own names tells why (a review: a
// workspace with objects and refs at its top refused src/app.js as
// "src" is protected, and nothing more).
func TestLayoutProtectionSaysWhy(t *testing.T) {
	w := newWorld(t)
	for _, d := range []string{"objects", "refs", "src"} {
		must(t, os.MkdirAll(filepath.Join(w.ws, d), 0o755))
	}
	err := w.root.Write("src/app.js", []byte("x"), false)
	wantKind(t, "write src/app.js", err, KindProtected)
	if !strings.Contains(err.Error(), `"." holds a git directory (objects and refs`) {
		t.Errorf("the refusal does not say which git directory protects it: %v", err)
	}
	var asked string
	w.root.Approve = func(action, detail string) (bool, string) { asked = detail; return false, "no" }
	wantKind(t, "write src/app.js asked", w.root.Write("src/app.js", []byte("x"), false), KindProtected)
	if !strings.Contains(asked, `"." holds a git directory`) {
		t.Errorf("the question does not say which git directory protects it: %q", asked)
	}
}

// A tree moved into a protected path is looked through whole, or the move
// is refused: singleLinked passed over a directory it could not open (no
// descriptor left in a deep tree, an unreadable directory) and moved a
// link deep inside it with the person's yes.
func TestRenameIntoProtectedUncheckedTree(t *testing.T) {
	w := newWorld(t)
	w.root.Approve = func(string, string) (bool, string) { return true, "approved" }
	w.file(t, "tools/lint.sh", "#!/bin/sh\n")
	const depth = 64
	deep := filepath.Join(w.ws, "stage")
	for i := range depth {
		deep = filepath.Join(deep, fmt.Sprintf("d%d", i))
	}
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.Symlink(strings.Repeat("../", depth+1)+"tools/lint.sh", filepath.Join(deep, "pc")))

	// Fewer descriptors left than the tree is deep.
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var old unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old))
	low := old
	low.Cur = uint64(len(fds) + depth/2)
	must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	err = w.root.Rename("stage", ".vscode", false)
	must(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &old))
	if KindOf(err) != KindProtected || !strings.Contains(err.Error(), "could not be looked through") {
		t.Errorf("a tree not looked through whole moved to .vscode: %v", err)
	}
	mustNotExistHost(t, filepath.Join(w.ws, ".vscode"))
	// Control: looked through, the link is found.
	if err := w.root.Rename("stage", ".vscode", false); KindOf(err) != KindProtected || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("control: the link deep in the tree: %v", err)
	}
	must(t, os.Remove(filepath.Join(deep, "pc")))
	wantOK(t, "the tree without the link", w.root.Rename("stage", ".vscode", false))
}
