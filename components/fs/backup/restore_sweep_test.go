package backup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// restoreChildEnv tells the test binary, run as a child, which restore
// to run and stop in (TestRestoreChild): the store, the backup's id and
// the directory, one a line.
const restoreChildEnv = "PINFOLD_TEST_RESTORE_CHILD"

// TestRestoreChild is not a test of its own: run as a child by
// TestRestoreSweepsKilled, it restores a backup and stops part way (the
// root made and marked, its first file restored), says "ready" on its
// standard output, and waits to be killed.
func TestRestoreChild(t *testing.T) {
	arg := os.Getenv(restoreChildEnv)
	if arg == "" {
		t.Skip("run as a child by TestRestoreSweepsKilled")
	}
	f := strings.Split(arg, "\n")
	s, err := Open(f[0], 0)
	must(t, err)
	testHookAfterMake = func(out int, name string) {
		if name == "sub" {
			fmt.Println("ready")
			time.Sleep(time.Hour)
		}
	}
	err = s.Restore(f[1], openPath(t, f[2]), "back", Owner{UID: 4242, GID: 4343})
	t.Fatalf("the restore was to stop part way, it ended: %v", err)
}

// startRestoreChild runs a restore of id into w.ws in a child process and
// returns, once it has stopped part way, the child and the temporary
// name it builds its tree under. The child is killed at the test's end
// if it still runs.
func startRestoreChild(t *testing.T, w *world, id string) (*exec.Cmd, string) {
	t.Helper()
	before := tempNames(t, w.ws)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), restoreChildEnv+"="+strings.Join([]string{w.storeDir, id, w.ws}, "\n"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			unix.Kill(cmd.Process.Pid, unix.SIGKILL)
			cmd.Wait()
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the restoring child ended before it was ready")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the restoring child did not get ready")
	}
	for _, n := range tempNames(t, w.ws) {
		if !slices.Contains(before, n) {
			return cmd, n
		}
	}
	t.Fatal("the restoring child made no temporary tree")
	return nil, ""
}

// kill kills the child by its pid, as SIGKILL would end a restore the
// person ran, and waits for it.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	must(t, unix.Kill(cmd.Process.Pid, unix.SIGKILL))
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child was not killed: %v", err)
	}
}

func tempNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), RestorePrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A restore killed with SIGKILL cannot remove its temporary tree, which
// stays root's and 0700 where the workspace's owner cannot remove it;
// the next restore into that directory does. It removes only such a
// tree: marked by a restore (an attribute only root can set) and not
// locked by one still running; not another user's directory, root's
// own unmarked one, a marked file, nor a link to a marked directory.
func TestRestoreSweepsKilled(t *testing.T) {
	requireRoot(t, "a restore's mark is a trusted extended attribute, root's")
	w := newWorld(t, 0)
	dir := filepath.Join(w.ws, "d")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	put(t, filepath.Join(dir, "a"), []byte("first"), 0o644)
	put(t, filepath.Join(dir, "sub", "f"), []byte("second"), 0o644)
	b, err := w.store.Stage(openPath(t, dir), "d", t0)
	must(t, err)
	removeTree(t, dir)

	child, stale := startRestoreChild(t, w, b.ID)
	kill(t, child)
	var st unix.Stat_t
	must(t, unix.Lstat(filepath.Join(w.ws, stale), &st))
	if st.Uid != 0 || st.Mode&07777 != 0o700 {
		t.Fatalf("the killed restore's tree is %d, %#o; want root's, 0700", st.Uid, st.Mode&07777)
	}
	if _, err := os.Lstat(filepath.Join(w.ws, stale, "a")); err != nil {
		t.Fatalf("the killed restore's tree holds nothing: %v", err)
	}
	live, running := startRestoreChild(t, w, b.ID)

	// Look-alikes, none a restore's.
	wsfd, err := unix.Open(w.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(wsfd)
	foreignDir(t, wsfd, RestorePrefix+"foreign")
	must(t, os.Mkdir(filepath.Join(w.ws, RestorePrefix+"unmarked"), 0o700))
	markedDir := filepath.Join(w.outside, "marked")
	must(t, os.Mkdir(markedDir, 0o700))
	must(t, os.WriteFile(filepath.Join(markedDir, "keep"), []byte("x"), 0o600))
	must(t, unix.Setxattr(markedDir, restoreMark, []byte("1"), 0))
	must(t, os.Symlink(markedDir, filepath.Join(w.ws, RestorePrefix+"link")))
	markedFile := filepath.Join(w.ws, RestorePrefix+"file")
	must(t, os.WriteFile(markedFile, []byte("x"), 0o600))
	must(t, unix.Setxattr(markedFile, restoreMark, []byte("1"), 0))

	must(t, w.store.Restore(b.ID, openPath(t, w.ws), "again", self()))
	if _, err := os.Lstat(filepath.Join(w.ws, stale)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed restore's tree is still there: %v", err)
	}
	for _, n := range []string{running, RestorePrefix + "foreign", RestorePrefix + "unmarked", RestorePrefix + "link", RestorePrefix + "file"} {
		if _, err := os.Lstat(filepath.Join(w.ws, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if _, err := os.ReadFile(filepath.Join(w.ws, RestorePrefix+"foreign", "precious")); err != nil {
		t.Errorf("the other user's directory lost its file: %v", err)
	}
	if _, err := os.ReadFile(filepath.Join(markedDir, "keep")); err != nil {
		t.Errorf("the link was followed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(w.ws, running, "a")); err != nil {
		t.Errorf("the running restore's tree was emptied: %v", err)
	}
	// The restored tree carries no mark.
	if _, err := unix.Lgetxattr(filepath.Join(w.ws, "again"), restoreMark, nil); !errors.Is(err, unix.ENODATA) {
		t.Errorf("the restored tree has the mark: %v", err)
	}

	// Killed in turn, the running one's tree is the next restore's to remove.
	kill(t, live)
	must(t, w.store.Restore(b.ID, openPath(t, w.ws), "third", self()))
	if _, err := os.Lstat(filepath.Join(w.ws, running)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the second killed restore's tree is still there: %v", err)
	}
}

// A file system that refuses flock (EOPNOTSUPP, ENOLCK, EINVAL: some
// network file systems) does not stop a restore: its tree goes unlocked
// and so unmarked (a mark without the lock would make it the next
// restore's to remove). The restore failed there once the tree's root
// was locked. Another error of the lock still fails the restore, leaving
// nothing.
func TestRestoreWithoutFlock(t *testing.T) {
	w := newWorld(t, 0)
	dir, b := stagedTree(t, w, 3, "d")
	want := snapshot(t, dir)
	defer func() { lockTree, testHookBeforeRestoreRename = flock, nil }()
	for _, errno := range []unix.Errno{unix.EOPNOTSUPP, unix.ENOLCK, unix.EINVAL} {
		lockTree = func(int, int) error { return errno }
		marked := true
		testHookBeforeRestoreRename = func() {
			names := tempNames(t, w.ws)
			if len(names) != 1 {
				t.Fatalf("%v: temporary trees %q, want one", errno, names)
			}
			_, err := unix.Lgetxattr(filepath.Join(w.ws, names[0]), restoreMark, nil)
			marked = !errors.Is(err, unix.ENODATA)
		}
		name := "back-" + strconv.Itoa(int(errno))
		if err := w.store.Restore(b.ID, openPath(t, w.ws), name, self()); err != nil {
			t.Errorf("flock refused (%v): the restore failed: %v", errno, err)
			continue
		}
		if marked {
			t.Errorf("flock refused (%v): the unlocked tree was marked", errno)
		}
		compareSnapshots(t, restoredAs(want, self()), snapshot(t, filepath.Join(w.ws, name)))
	}
	// Control: a lock that fails otherwise fails the restore.
	lockTree = func(int, int) error { return unix.EIO }
	testHookBeforeRestoreRename = nil
	if err := w.store.Restore(b.ID, openPath(t, w.ws), "eio", self()); !errors.Is(err, unix.EIO) {
		t.Errorf("flock failing with EIO: %v, want the restore to fail with it", err)
	}
	if n := tempNames(t, w.ws); len(n) != 0 {
		t.Errorf("the failed restore left %q", n)
	}
}
