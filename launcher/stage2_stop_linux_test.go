package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

const threadsChildEnv = "PINFOLD_THREADS_STOPPED_PID"

// Stage 2's check fails closed: when /proc cannot be read for want of a
// descriptor (an agent had lowered stage 2's RLIMIT_NOFILE, a hunt), a
// running process does not read as stopped, nor gone. The control: with
// descriptors to spare the same check sees the stopped process stopped.
// A child runs the check, so that the test process keeps its limit.
func TestThreadsStoppedFailsClosed(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "30")
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	check := func(exhaust bool) string {
		t.Helper()
		c := exec.Command(os.Args[0], "-test.run=^TestThreadsStoppedChild$", "-test.count=1")
		c.Env = append(os.Environ(), threadsChildEnv+"="+strconv.Itoa(cmd.Process.Pid))
		if exhaust {
			c.Env = append(c.Env, threadsChildEnv+"_EXHAUST=1")
		}
		return childVerdict(t, c, "threads: ")
	}
	if got := check(true); got != "running (EMFILE)" {
		t.Fatalf("a running process, /proc unreadable for want of descriptors: %s, want running (EMFILE)", got)
	}
	must(t, cmd.Process.Signal(syscall.SIGSTOP))
	pollUntil(t, "sleep to stop", func() bool { return threadsStopped(cmd.Process.Pid) })
	if got := check(true); got != "running (EMFILE)" {
		t.Fatalf("a stopped process, /proc unreadable for want of descriptors: %s, want running (EMFILE): not knowing is not stopped", got)
	}
	if got := check(false); got != "stopped" {
		t.Fatalf("control: a stopped process with descriptors to spare: %s, want stopped", got)
	}
}

// TestThreadsStoppedChild is TestThreadsStoppedFailsClosed's child: it
// prints "threads: " and stage 2's verdict on the pid it is given, with
// every descriptor its limit allows in use when asked to.
func TestThreadsStoppedChild(t *testing.T) {
	pid, err := strconv.Atoi(os.Getenv(threadsChildEnv))
	if err != nil {
		return // not run by TestThreadsStoppedFailsClosed
	}
	note := ""
	if os.Getenv(threadsChildEnv+"_EXHAUST") != "" {
		var l syscall.Rlimit
		must(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l))
		l.Cur = 64
		must(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l))
		for range 64 {
			if _, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0); err != nil {
				if err != syscall.EMFILE {
					t.Fatal(err)
				}
				note = " (EMFILE)"
				break
			}
		}
		if note == "" {
			t.Fatal("64 descriptors opened under a limit of 64")
		}
	}
	if threadsStopped(pid) {
		fmt.Println("threads: stopped" + note)
	} else {
		fmt.Println("threads: running" + note)
	}
}

// Stage 2's watch over a stopped tree sees a process that ran and
// stopped again between two looks: its mark (each thread with how many
// times it was given a CPU) changes, though every look at its state finds
// it stopped (a re-test's agent ran for moments at a time, continued by a
// timer, and took the terminal between looks). The control: a process
// that stays stopped keeps its mark.
func TestProcessMarkSeesARun(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "30")
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	must(t, cmd.Process.Signal(syscall.SIGSTOP))
	pollUntil(t, "sleep to stop", func() bool { return threadsStopped(pid) })
	before, ok := processMark(pid)
	if !ok {
		t.Fatal("no mark for a stopped process")
	}
	time.Sleep(50 * time.Millisecond)
	if still, ok := processMark(pid); !ok || still != before {
		t.Fatalf("control: a process that stayed stopped changed its mark (%x, then %x, %v)", before, still, ok)
	}
	// It must run to take the second stop.
	must(t, cmd.Process.Signal(syscall.SIGCONT))
	must(t, cmd.Process.Signal(syscall.SIGSTOP))
	pollUntil(t, "sleep to stop again", func() bool { return threadsStopped(pid) })
	after, ok := processMark(pid)
	if !ok || after == before {
		t.Fatalf("a process that ran and stopped again kept its mark (%x, then %x, %v): the watch would not see it", before, after, ok)
	}
}

const reapChildEnv = "PINFOLD_REAP_CHILD"

// Init reaps at most reapBatch children before it looks at its pipes
// again: a tree that orphans processes as fast as init reaps them held
// it in an unbounded reaping loop, stage 1's signals and the watch over
// a stopped tree waiting (a review). What is left waits as a zombie for
// the next pass, and the agent's status comes with it. A child runs the
// check, so that it reaps no other child of the test process.
func TestStage2ReapBounded(t *testing.T) {
	c := exec.Command(os.Args[0], "-test.run=^TestStage2ReapChild$", "-test.count=1")
	c.Env = append(os.Environ(), reapChildEnv+"=1")
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reap: checked\n") {
		t.Fatalf("the child's check failed (%v):\n%s", err, out)
	}
}

// TestStage2ReapChild is TestStage2ReapBounded's child: it ends
// reapBatch+10 children and then the agent, and reaps them with init's
// step; "reap: checked" says every check held.
func TestStage2ReapChild(t *testing.T) {
	if os.Getenv(reapChildEnv) == "" {
		return // not run by TestStage2ReapBounded
	}
	const extra = 10
	// One thread starts them all: the kernel keeps each thread's children
	// in a list of its own, oldest first, and stage 2 is one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var pids []int
	for range reapBatch + extra {
		p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
		must(t, err)
		pids = append(pids, p.Pid)
	}
	// The youngest child waits behind all the others.
	agent, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "exit 7"}, &os.ProcAttr{})
	must(t, err)
	pids = append(pids, agent.Pid)
	state := func(pid int) byte {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
			return b[i+2]
		}
		return 0 // reaped
	}
	pollUntil(t, "every child to end", func() bool {
		for _, pid := range pids {
			if state(pid) != 'Z' {
				return false
			}
		}
		return true
	})
	left := func() (n int) {
		for _, pid := range pids {
			if state(pid) != 0 {
				n++
			}
		}
		return n
	}
	if r, _ := reapC(agent.Pid, reapBatch); r != -1 || left() != extra+1 {
		t.Fatalf("one pass over %d ended children returned %d and left %d; want -1 (more may wait) and %d left: a pass reaps at most %d",
			len(pids), r, left(), extra+1, reapBatch)
	}
	if r, st := reapC(agent.Pid, reapBatch); r != agent.Pid || !st.Exited() || st.ExitStatus() != 7 || left() != 0 {
		t.Fatalf("the next pass returned %d (status %v) and left %d; want the agent (%d, exit 7) and none left", r, st, left(), agent.Pid)
	}
	if r, _ := reapC(agent.Pid, reapBatch); r != 0 {
		t.Fatalf("a pass with no child left returned %d, want 0", r)
	}
	fmt.Println("reap: checked")
}

const stopTreeChildEnv = "PINFOLD_STOP_TREE_SELF"

// Stage 2's stop of the tree fails closed: when it cannot read
// /proc/self, which tells it whether /proc is its pid namespace's, the
// tree is killed, not stopped by one round and left to the person's
// shell unwatched (a review). The control: with /proc/self readable the
// same stop leaves the tree stopped. A child runs each as pid 1 of a pid
// namespace of its own with its own /proc, as stage 2 is, so that its
// kill(-1) reaches nothing else.
func TestStage2StopTreeFailsClosed(t *testing.T) {
	requireFeature(t, "root (pid and mount namespaces)", os.Geteuid() == 0, fmt.Sprintf("euid %d", os.Geteuid()))
	run := func(self string) string {
		t.Helper()
		c := exec.Command(os.Args[0], "-test.run=^TestStage2StopTreeChild$", "-test.count=1")
		c.Env = append(os.Environ(), stopTreeChildEnv+"="+self)
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
		return childVerdict(t, c, "stop_tree: ")
	}
	if got := run("/proc/self"); got != "0, the tree stopped" {
		t.Fatalf("control: /proc/self readable: %s, want 0, the tree stopped", got)
	}
	if got := run("/nonexistent/self"); got != "1, the tree killed" {
		t.Fatalf("/proc/self unreadable: %s, want 1, the tree killed: a tree stage 2 cannot look at must not be left unwatched", got)
	}
}

// TestStage2StopTreeChild is TestStage2StopTreeFailsClosed's child, pid
// 1 of a new pid namespace: it starts a process, stops the tree reading
// the link it is given, and prints "stop_tree: " with what the stop
// returned and what became of the process.
func TestStage2StopTreeChild(t *testing.T) {
	self := os.Getenv(stopTreeChildEnv)
	if self == "" {
		return // not run by TestStage2StopTreeFailsClosed
	}
	if os.Getpid() != 1 {
		t.Fatalf("pid %d, not 1 of a pid namespace of its own: kill(-1) would reach the host", os.Getpid())
	}
	must(t, syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""))
	must(t, syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""))
	cmd := exec.Command("/bin/sleep", "30")
	must(t, cmd.Start())
	r := stopTreeC(self)
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WUNTRACED, nil)
	must(t, err)
	fate := fmt.Sprintf("status %#x", uint32(ws))
	switch {
	case ws.Stopped():
		fate = "stopped"
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		fate = "killed"
	}
	fmt.Printf("stop_tree: %d, the tree %s\n", r, fate)
}

// On a kernel whose schedstat reads 0 for every thread (one without
// schedstats or delay accounting prints "0 0 0"), the watch's mark falls
// back to status and still sees a stopped process that ran; it marked
// every thread 0 before, and the watch was blind (a review). The status
// file is the stopped process's own; the schedstat file reads 0 as such
// a kernel's does. The control: a kernel without schedstat (the file
// missing) took status already. A thread on the CPU since the mark was
// taken has not switched out, and is seen by its state.
func TestStage2MarkSchedstatZero(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "30")
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	must(t, cmd.Process.Signal(syscall.SIGSTOP))
	pollUntil(t, "sleep to stop", func() bool { return threadsStopped(pid) })
	dir := t.TempDir()
	zero := filepath.Join(dir, "schedstat")
	must(t, os.WriteFile(zero, []byte("0 0 0\n"), 0o644))
	status := fmt.Sprintf("/proc/%d/task/%d/status", pid, pid)
	kernels := []struct{ name, schedstat string }{
		{"schedstat reads 0", zero},
		{"control: no schedstat", filepath.Join(dir, "missing")},
	}
	before := map[string]uint64{}
	for _, k := range kernels {
		v, r := threadRunsC(k.schedstat, status)
		if r != 1 {
			t.Fatalf("%s: a stopped thread cannot be told (%d)", k.name, r)
		}
		if again, r := threadRunsC(k.schedstat, status); r != 1 || again != v {
			t.Fatalf("%s: control: a thread that stayed stopped changed its mark (%x, then %x, %d)", k.name, v, again, r)
		}
		before[k.name] = v
	}
	// It must run to take the second stop.
	must(t, cmd.Process.Signal(syscall.SIGCONT))
	must(t, cmd.Process.Signal(syscall.SIGSTOP))
	pollUntil(t, "sleep to stop again", func() bool { return threadsStopped(pid) })
	for _, k := range kernels {
		if after, r := threadRunsC(k.schedstat, status); r != 1 || after == before[k.name] {
			t.Fatalf("%s: a thread that ran and stopped again kept its mark (%x, then %x, %d): the watch would not see it", k.name, before[k.name], after, r)
		}
	}
	fake := func(state string) string {
		p := filepath.Join(dir, "status-"+state)
		must(t, os.WriteFile(p, []byte("Name:\tx\nState:\t"+state+"\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t2\n"), 0o644))
		return p
	}
	stopped, sr := threadRunsC(zero, fake("T (stopped)"))
	running, rr := threadRunsC(zero, fake("R (running)"))
	if sr != 1 || rr != 1 || stopped == running {
		t.Fatalf("a thread that reads running marks as one that reads stopped with the same switches (%x, %d; %x, %d)", stopped, sr, running, rr)
	}
	// A machine with thousands of CPUs prints masks of kilobytes before
	// the counts: the whole file is read.
	long := filepath.Join(dir, "status-long")
	must(t, os.WriteFile(long, []byte("Name:\tx\nState:\tT (stopped)\nCpus_allowed:\t"+strings.Repeat("ffffffff,", 512)+
		"\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t2\n"), 0o644))
	if v, r := threadRunsC(zero, long); r != 1 || v != stopped {
		t.Fatalf("a status of 4.7 kB: %x, %d; want %x, 1 as for the short one", v, r, stopped)
	}
	noCounts := filepath.Join(dir, "status-short")
	must(t, os.WriteFile(noCounts, []byte("Name:\tx\nState:\tT (stopped)\n"), 0o644))
	if _, r := threadRunsC(zero, noCounts); r != 0 {
		t.Fatalf("a status without its switch counts: %d, want 0 (cannot be told)", r)
	}
}

// childVerdict runs the test's child c and returns what follows prefix on
// the line of its output that starts with it.
func childVerdict(t *testing.T, c *exec.Cmd, prefix string) string {
	t.Helper()
	out, err := c.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	t.Fatalf("the child printed no verdict (%v):\n%s", err, out)
	return ""
}
