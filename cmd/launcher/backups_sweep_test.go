package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs/backup"
)

// holdOpens holds every open of the file p by another process (a
// fanotify permission event, not answered) and reports each such
// process's pid; opens by this process go ahead. Stopped at the test's
// end, which lets what is still held go on. It skips where the kernel
// has no fanotify permission events.
func holdOpens(t *testing.T, p string) <-chan int32 {
	t.Helper()
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_LARGEFILE)
	if err != nil {
		t.Skipf("no fanotify here: %v", err)
	}
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN_PERM, unix.AT_FDCWD, p); err != nil {
		unix.Close(fd)
		t.Skipf("no fanotify permission events here: %v", err)
	}
	fan := os.NewFile(uintptr(fd), "fanotify") // non-blocking: Close ends a Read
	held := make(chan int32, 8)
	done := make(chan struct{})
	var heldFds []int32
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := fan.Read(buf)
			if err != nil {
				return
			}
			for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
				m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
				if int(m.Pid) == os.Getpid() {
					resp := unix.FanotifyResponse{Fd: m.Fd, Response: unix.FAN_ALLOW}
					fan.Write(unsafe.Slice((*byte)(unsafe.Pointer(&resp)), unsafe.Sizeof(resp)))
					unix.Close(int(m.Fd))
				} else {
					heldFds = append(heldFds, m.Fd)
					held <- m.Pid
				}
				off += int(m.Event_len)
			}
		}
	}()
	t.Cleanup(func() {
		fan.Close()
		<-done
		for _, f := range heldFds {
			unix.Close(int(f))
		}
	})
	return held
}

// restoreChild runs `launcher backups restore ID --workspace WS` as a
// child process and returns it once it is held opening the backup's file
// (holdOpens): by then its temporary tree's root is made, in dir, whose
// name is returned too.
func restoreChild(t *testing.T, w *backupsWorld, id, dir string, held <-chan int32) (*exec.Cmd, string) {
	t.Helper()
	before := restoreTemps(t, dir)
	cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "backups", "restore", id, "--workspace", w.ws}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			unix.Kill(cmd.Process.Pid, unix.SIGKILL)
			cmd.Wait()
		}
	})
	select {
	case pid := <-held:
		if int(pid) != cmd.Process.Pid {
			t.Fatalf("held an open by %d, not the child %d", pid, cmd.Process.Pid)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the restoring child never opened the backup's file")
	}
	for _, n := range restoreTemps(t, dir) {
		if !slices.Contains(before, n) {
			return cmd, n
		}
	}
	t.Fatal("the restoring child made no temporary tree")
	return nil, ""
}

func restoreTemps(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), backup.RestorePrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// killChild kills the child by its pid (kill -9) and waits for it.
func killChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := unix.Kill(cmd.Process.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child was not killed: %v", err)
	}
}

// A restore killed outright (kill -9) cannot remove its temporary tree,
// root's and 0700 in the workspace, which the workspace's owner cannot
// remove; the next restore into that directory does, and leaves the tree
// of one still running. Each child is the real verb, held as it opens
// the backup's file (its tree's root made by then), and killed by pid.
func TestBackupsRestoreSweepsKilled(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "sub", "d")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "sub/d", "sub/d")
	var stored string
	filepath.WalkDir(filepath.Join(w.store, id), func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && e.Name() == "f" {
			stored = p
		}
		return nil
	})
	if stored == "" {
		t.Fatal("the backup's copy of f is not in the store")
	}
	held := holdOpens(t, stored)
	sub := filepath.Join(w.ws, "sub")

	killed, stale := restoreChild(t, w, id, sub, held)
	killChild(t, killed)
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(sub, stale), &st); err != nil || st.Uid != 0 || st.Mode&07777 != 0o700 {
		t.Fatalf("the killed restore's tree: %v, uid %d, mode %#o; want root's, 0700", err, st.Uid, st.Mode&07777)
	}
	running, live := restoreChild(t, w, id, sub, held)

	if code, out, errs := w.run(t, "restore", id); code != 0 {
		t.Fatalf("the next restore: %d %s %s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(sub, stale)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed restore's tree is still there after the next restore: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(sub, live)); err != nil {
		t.Errorf("the running restore's tree was removed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(d, "f")); err != nil || string(b) != "data" {
		t.Errorf("the next restore: %q %v", b, err)
	}

	killChild(t, running)
	if code, out, errs := w.run(t, "restore", id, "--as", "again"); code != 0 {
		t.Fatalf("the restore after: %d %s %s", code, out, errs)
	}
	if left := restoreTemps(t, sub); len(left) != 0 {
		t.Errorf("left after the second killed restore: %v", left)
	}
}
