package gateway

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	removeIdleGroupAfter(t)
	run := func(idle bool) string {
		cmd := exec.Command("/bin/sh", "-c", `p() { cut -d' ' -f41 /proc/$$/stat; }; p; chrt -o -p 0 $$ >/dev/null 2>&1 && echo changed; p`)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
		var out strings.Builder
		cmd.Stdout = &out
		start := func() (struct{}, error) { return struct{}{}, cmd.Start() }
		var err error
		if idle {
			_, err = startIdle(start, nil)
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
	noThread(t, func(task string) string {
		if schedPolicy(t, "self/task/"+task) == unix.SCHED_IDLE {
			return "thread " + task + " of the gateway is still SCHED_IDLE"
		}
		return ""
	})
}

// noThread waits (up to 5 s) until wrong says nothing of every thread of
// this process, and fails with what it last said otherwise.
func noThread(t *testing.T, wrong func(task string) string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tasks, _ := os.ReadDir("/proc/self/task")
		said := ""
		for _, task := range tasks {
			if w := wrong(task.Name()); w != "" {
				said = w
			}
		}
		if said == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(said)
		}
	}
}

// removeIdleGroupAfter removes the idle cpu group's directory when t ends if
// it was not there when t began, and returns it ("" with no v1 cpu
// hierarchy): the test's own then, removed once its children are gone (a
// dead task leaves its group a moment after it is reaped), or left busy
// where a gateway's guests joined it meanwhile.
func removeIdleGroupAfter(t *testing.T) string {
	point, ok := cpuV1Mount()
	if !ok {
		return ""
	}
	dir := filepath.Join(point, cpuGroupOf(t, "self"), idleGroupName)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		t.Cleanup(func() {
			for end := time.Now().Add(2 * time.Second); os.Remove(dir) != nil && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	return dir
}

// cpuGroupOf is task's group in the v1 cpu hierarchy (a pid, or
// "self/task/TID"), "" when it is in none.
func cpuGroupOf(t *testing.T, task string) string {
	t.Helper()
	g, _ := cpuGroupIn(filepath.Join("/proc", task, "cgroup"))
	return g
}

// SCHED_IDLE counts only within a task's group, and with autogroups a
// session of its own is one: what startIdle starts, and everything it
// starts, session leaders included, is in the idle cpu group beneath the
// gateway's own in the v1 cpu hierarchy (where it is mounted), and no
// thread of the gateway stays there. (Measured, not tested here: 4 idle busy loops,
// each after setsid, took 80% of a CPU from an ordinary one outside the
// group, and under 1% inside it.)
func TestStartIdleCPUGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make the cgroup")
	}
	dir := removeIdleGroupAfter(t)
	if dir == "" {
		t.Skip("no cgroup v1 cpu hierarchy mounted at its root")
	}
	own := cpuGroupOf(t, "self")
	if filepath.Base(own) == idleGroupName {
		t.Fatalf("the test itself is in %s", dir)
	}
	cmd := exec.Command("/bin/sh", "-c", "cat /proc/$$/cgroup; setsid cat /proc/self/cgroup")
	var out strings.Builder
	cmd.Stdout = &out
	if _, err := startIdle(func() (struct{}, error) { return struct{}{}, cmd.Start() }, nil); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	var groups []string
	for line := range strings.Lines(out.String()) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
			groups = append(groups, parts[2])
		}
	}
	idle := filepath.Join(own, idleGroupName)
	if want := []string{idle, idle}; !slices.Equal(groups, want) {
		t.Errorf("the child's and its setsid child's cpu groups: %q, want %q", groups, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.idle")); err == nil && strings.TrimSpace(string(b)) != "1" {
		t.Errorf("%s/cpu.idle is %q, want 1", dir, b)
	}
	noThread(t, func(task string) string {
		if g := cpuGroupOf(t, "self/task/"+task); g != own {
			return "thread " + task + " of the gateway is not back in " + own + " (in " + g + ")"
		}
		return ""
	})
}

// Where the idle cpu group cannot be joined (here: the v1 cpu hierarchy is
// said to be at a regular file, so no group can be made in it), a guest's
// child still starts at SCHED_IDLE, and the gateway's log says once, at
// the first guest, that guests are at SCHED_IDLE only and why: not once
// per guest, and not never (it said nothing before).
func TestStartIdleNoCPUGroupLoggedOnce(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "not-a-hierarchy")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(m func() (string, bool)) { idleCPUMount = m }(idleCPUMount)
	idleCPUMount = func() (string, bool) { return notDir, true }
	if _, err := threadCPUGroup(); err != nil {
		t.Skipf("this process is in no v1 cpu group (%v): the group's path is not reached", err)
	}
	var log strings.Builder
	g := &Gateway{log: slog.New(slog.NewJSONHandler(&log, nil))}
	for i := range 3 {
		cmd := exec.Command("/bin/sh", "-c", `cut -d' ' -f41 /proc/$$/stat >&2; read _`)
		var out strings.Builder
		cmd.Stderr = &out // stdout is the transport's
		conn, err := idleTransport{&mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, g.noIdleGroup}.Connect(context.Background())
		if err != nil {
			t.Fatalf("guest %d: %v", i, err)
		}
		conn.Close() // the shell's read ends; it exits
		if got := strings.TrimSpace(out.String()); got != "5" {
			t.Errorf("guest %d: scheduling policy %q, want 5 (SCHED_IDLE, without the group)", i, got)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "SCHED_IDLE only") || !strings.Contains(lines[0], notDir) {
		t.Errorf("the gateway's log after 3 guests without the idle group:\n%s\nwant one line that guests run at SCHED_IDLE only, naming why (%s)", log.String(), notDir)
	}
}
