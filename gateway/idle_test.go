package gateway

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// schedPolicy is the scheduling policy of task (a pid, or "self/task/TID")
// from /proc's stat, field 41.
func schedPolicy(t *testing.T, task string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", task, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	p, err := strconv.Atoi(fields[41-3])
	if err != nil {
		t.Fatalf("%s: stat field 41: %v", task, err)
	}
	return p
}

// What startIdle starts runs at SCHED_IDLE and, without CAP_SYS_NICE and
// with RLIMIT_NICE 0 (what a guest's sandbox has), cannot leave it; the
// gateway's own threads do not keep it. The control: the same child
// started plainly is SCHED_OTHER, and its chrt succeeds.
func TestStartIdle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to start the child as nobody")
	}
	if _, err := exec.LookPath("chrt"); err != nil {
		t.Skip("chrt (util-linux) is not installed")
	}
	run := func(idle bool) string {
		cmd := exec.Command("/bin/sh", "-c", `p() { cut -d' ' -f41 /proc/$$/stat; }; p; chrt -o -p 0 $$ >/dev/null 2>&1 && echo changed; p`)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
		var out strings.Builder
		cmd.Stdout = &out
		start := func() (struct{}, error) { return struct{}{}, cmd.Start() }
		var err error
		if idle {
			_, err = startIdle(start)
		} else {
			_, err = start()
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var nice unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &nice); err != nil || nice.Cur != 0 {
		t.Skipf("this process's RLIMIT_NICE is %d, not 0 (%v): the child could leave SCHED_IDLE by it", nice.Cur, err)
	}
	if got, want := run(true), "5\n5\n"; got != want {
		t.Errorf("started idle: policy before and after chrt -o %q, want %q (SCHED_IDLE, kept)", got, want)
	}
	// chrt works where it is allowed (to the policy the task has).
	if got, want := run(false), "0\nchanged\n0\n"; got != want {
		t.Errorf("control, started plainly: %q, want %q", got, want)
	}
	// The idle thread ended with its goroutine.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks, _ := os.ReadDir("/proc/self/task")
		idle := ""
		for _, task := range tasks {
			if schedPolicy(t, "self/task/"+task.Name()) == unix.SCHED_IDLE {
				idle = task.Name()
			}
		}
		if idle == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s of the gateway is still SCHED_IDLE", idle)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
