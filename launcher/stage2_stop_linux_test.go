package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process whose main thread has exited (pthread_exit) while another
// runs on: its /proc/PID/stat, the main thread's, reads Z, yet it runs.
const leaderExits = `#include <pthread.h>
#include <unistd.h>
static void *run(void *a) { for (;;) usleep(1000); return a; }
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, run, 0);
	pthread_exit(0);
}
`

// Stage 2's Ctrl-Z check reads every thread: a process whose main
// thread is a zombie is running while another thread is, and stopped
// once every thread is. The control: its process-level state reads Z,
// which the check accepted before (a re-test kept a tree running
// through Ctrl-Z so).
func TestThreadsStopped(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("no C compiler (cgo builds need one): %v", err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "leader.c"), filepath.Join(dir, "leader")
	must(t, os.WriteFile(src, []byte(leaderExits), 0o644))
	if out, err := exec.Command(cc, "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	must(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	state := func() byte {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			return s[i+2]
		}
		return 0
	}
	pollUntil(t, "the main thread to exit", func() bool { return state() == 'Z' })
	if threadsStopped(pid) {
		t.Fatal("a process with a running thread reads as stopped")
	}
	must(t, syscall.Kill(pid, syscall.SIGSTOP))
	pollUntil(t, "every thread to stop", func() bool { return threadsStopped(pid) })
	must(t, syscall.Kill(pid, syscall.SIGCONT))
	pollUntil(t, "a thread to run again", func() bool { return !threadsStopped(pid) })
}

// pollUntil polls cond for up to 5 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
