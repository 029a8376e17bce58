package code

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/pidtest"
	"github.com/pinfold/pinfold/launcher"
)

// The test binary is also the worker: started with WorkerEntry it runs
// WorkerMain (with "probe", after trying to open a file and sockets once
// confined: the test-only build of the worker the issue asks for).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerEntry {
		if len(os.Args) > 2 && os.Args[2] == "probe" {
			afterConfine = func() {
				fmt.Fprintf(os.Stderr, "PROBE %s\n", escapeProbe())
				os.Exit(0)
			}
		}
		if len(os.Args) > 2 && os.Args[2] == "limits" {
			afterConfine = func() {
				var nice, rt unix.Rlimit
				unix.Getrlimit(unix.RLIMIT_NICE, &nice)
				unix.Getrlimit(unix.RLIMIT_RTPRIO, &rt)
				fmt.Fprintf(os.Stderr, "LIMITS nice=%d/%d rtprio=%d/%d\n", nice.Cur, nice.Max, rt.Cur, rt.Max)
				os.Exit(0)
			}
		}
		if len(os.Args) > 2 && os.Args[2] == "inherited" {
			afterConfine = func() {
				_, err := unix.Write(inheritedFD, []byte("out of the worker"))
				fmt.Fprintf(os.Stderr, "INHERITED %v\n", err)
				os.Exit(0)
			}
		}
		if len(os.Args) > 2 && (os.Args[2] == "hog" || os.Args[2] == "fill") {
			// Memory outside the VM's heap, within RLIMIT_DATA: what only
			// the worker's cgroup bounds (hog: past it; fill: most of
			// it). The script runs after it.
			n := hogBytes
			if os.Args[2] == "fill" {
				n = fillBytes
			}
			afterConfine = func() {
				b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
				if err != nil {
					fmt.Fprintf(os.Stderr, "HOG %v\n", err)
					os.Exit(1)
				}
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
			}
		}
		if len(os.Args) > 2 && os.Args[2] == "gc" {
			afterRun = func() {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				fmt.Fprintf(os.Stderr, "GC %d\n", m.NumGC)
				os.Exit(0)
			}
		}
		if len(os.Args) > 2 && os.Args[2] == "escape" {
			os.Exit(escapeGroup())
		}
		os.Exit(WorkerMain())
	}
	os.Exit(m.Run())
}

// escapeProbe tries what a confined worker must not do and says how each
// attempt ended ("ok" is a failure of the confinement).
func escapeProbe() string {
	res := func(err error) string {
		if err == nil {
			return "ok"
		}
		return "denied(" + err.Error() + ")"
	}
	_, ferr := os.Open("/etc/passwd")
	ifd, ierr := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if ierr == nil {
		unix.Close(ifd)
	}
	ufd, uerr := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if uerr == nil {
		unix.Close(ufd)
	}
	// A child the way fork makes one; it exits before running Go code.
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e == 0 && pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var perr error
	if e != 0 {
		perr = e
	} else {
		var ws unix.WaitStatus
		unix.Wait4(int(pid), &ws, 0, nil)
	}
	return fmt.Sprintf("file=%s inet=%s unix=%s fork=%s", res(ferr), res(ierr), res(uerr), res(perr))
}

// workerArgv is the test binary as a worker. As root the worker runs under
// a throwaway uid, which cannot reach the go tool's private build
// directory: it runs a copy in a directory anyone may enter.
func workerArgv(t *testing.T, extra ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		dir, err := os.MkdirTemp("/var/tmp", "pinfold-code-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		must(t, os.Chmod(dir, 0o755))
		copied := filepath.Join(dir, "worker")
		src, err := os.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := os.OpenFile(copied, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		must(t, dst.Close())
		exe = copied
	}
	return append([]string{exe, WorkerEntry}, extra...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testLimits() Limits {
	return Limits{Memory: 64 << 20, Stack: 1 << 20, Deadline: 5 * time.Second, ToolCalls: 20, Output: 1 << 20, ScriptSize: 256 << 10}
}

// Confined, the worker can open no file, make no socket and start no
// process; the same
// probe in this (unconfined) process can: the refusals are the
// confinement's.
func TestWorkerConfined(t *testing.T) {
	if got := escapeProbe(); strings.Contains(got, "denied") {
		t.Fatalf("control: the probe fails unconfined: %s", got)
	}
	_, err := Spawn(context.Background(), workerArgv(t, "probe"), "return 1", testLimits(), nil)
	if err == nil {
		t.Fatal("the probe worker returned a result")
	}
	msg := err.Error()
	i := strings.Index(msg, "PROBE ")
	if i < 0 {
		t.Fatalf("no probe report: %v", err)
	}
	report := msg[i:]
	for _, what := range []string{"file=denied(", "inet=denied(", "unix=denied(", "fork=denied("} {
		if !strings.Contains(report, what) {
			t.Errorf("want %s in %q", what, report)
		}
	}
}

// The worker raises no priority and schedules nothing in real time,
// whatever RLIMIT_NICE and RLIMIT_RTPRIO it inherits (as stage 2 sets
// them for the agent): a guest's SCHED_IDLE holds only without them.
func TestWorkerNoPriorityLimits(t *testing.T) {
	raised := unix.Rlimit{Cur: 20, Max: 40}
	var nice, rt unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_NICE, &nice))
	must(t, unix.Getrlimit(unix.RLIMIT_RTPRIO, &rt))
	if unix.Setrlimit(unix.RLIMIT_NICE, &raised) != nil || unix.Setrlimit(unix.RLIMIT_RTPRIO, &raised) != nil {
		unix.Setrlimit(unix.RLIMIT_NICE, &nice)
		t.Skip("raising the limits the worker inherits needs CAP_SYS_RESOURCE (TestWorkerRlimitsNoPriority checks what it sets)")
	}
	defer unix.Setrlimit(unix.RLIMIT_NICE, &nice)
	defer unix.Setrlimit(unix.RLIMIT_RTPRIO, &rt)
	_, err := Spawn(context.Background(), workerArgv(t, "limits"), "return 1", testLimits(), nil)
	msg := fmt.Sprint(err)
	i := strings.Index(msg, "LIMITS ")
	if i < 0 {
		t.Fatalf("no limits report: %v", err)
	}
	if got := strings.TrimSpace(msg[i:]); !strings.HasPrefix(got, "LIMITS nice=0/0 rtprio=0/0") {
		t.Errorf("the worker's limits (inherited: nice and rtprio 20/40): %q, want all 0", got)
	}
}

// What the worker sets on itself, checked where TestWorkerNoPriorityLimits
// cannot raise what it inherits (no CAP_SYS_RESOURCE).
func TestWorkerRlimitsNoPriority(t *testing.T) {
	want := map[int]string{unix.RLIMIT_NICE: "RLIMIT_NICE", unix.RLIMIT_RTPRIO: "RLIMIT_RTPRIO"}
	for _, r := range workerRlimits(testLimits()) {
		if _, ok := want[r.res]; ok && r.v == 0 {
			delete(want, r.res)
		}
	}
	for _, name := range want {
		t.Errorf("the worker does not set %s to 0", name)
	}
}

// inheritedFD is where TestWorkerInheritsNoDescriptor leaves a pipe open.
const inheritedFD = 100

// The worker speaks only over stdin and stdout: a descriptor its parent
// holds without close-on-exec (one it inherited itself, as launcher code
// run may from the person's shell) is not open in the worker, which a
// hostile script would otherwise write to past every confinement
// (Landlock and seccomp do not look at a descriptor already open).
func TestWorkerInheritsNoDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// dup2 sets no close-on-exec: as a descriptor inherited from a shell.
	must(t, unix.Dup2(int(w.Fd()), inheritedFD))
	defer unix.Close(inheritedFD)
	_, err = Spawn(context.Background(), workerArgv(t, "inherited"), "return 1", testLimits(), nil)
	msg := fmt.Sprint(err)
	if !strings.Contains(msg, "INHERITED ") {
		t.Fatalf("no report from the worker: %v", err)
	}
	if !strings.Contains(msg, "INHERITED bad file descriptor") {
		t.Errorf("the worker wrote to a descriptor it inherited: %s", msg[strings.Index(msg, "INHERITED "):])
	}
}

// A script runs in a worker: its tool calls reach the parent's tool, its
// result and logs come back, and the parent counts the calls.
func TestSpawnRuns(t *testing.T) {
	var seen []string
	tool := func(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		seen = append(seen, name+string(args))
		if name == "fail" {
			return nil, errors.New("no such file")
		}
		return json.RawMessage(`{"n":` + fmt.Sprint(len(name)) + `}`), nil
	}
	script := `
const a = await pinfold.call("read", {path: "x"});
let failed = "";
try { await pinfold.call("fail", null); } catch (e) { failed = String(e.message); }
pinfold.log("got", a.n);
return {n: a.n, failed};`
	res, err := Spawn(context.Background(), workerArgv(t), script, testLimits(), tool)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		N      int    `json:"n"`
		Failed string `json:"failed"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil || v.N != 4 || !strings.Contains(v.Failed, "no such file") {
		t.Errorf("value %s (%v)", res.Value, err)
	}
	if res.ToolCalls != 2 || len(seen) != 2 || len(res.Logs) != 1 || !strings.Contains(res.Logs[0], "got") {
		t.Errorf("calls %d seen %q logs %q", res.ToolCalls, seen, res.Logs)
	}
}

// A run that fails after tool calls says so: the calls it made (their
// effects stand) and what it logged come back with the error, whether
// the script threw, broke a limit in the worker or the parent ended it.
func TestSpawnFailureSaysWhatRan(t *testing.T) {
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage("1"), nil
	}
	lim := testLimits()
	lim.ToolCalls = 3
	for _, c := range []struct{ script, want string }{
		{`await pinfold.call("w", 1); await pinfold.call("w", 2); pinfold.log("wrote"); throw new Error("boom")`, "boom"},
		{`await pinfold.call("w", 1); await pinfold.call("w", 2); pinfold.log("wrote"); pinfold.log("x".repeat(2 << 20))`, "output"},
		{`await pinfold.call("w", 1); await pinfold.call("w", 2); pinfold.log("wrote"); for (;;) {}`, "deadline"},
	} {
		l := lim
		if c.want == "deadline" {
			l.Deadline = time.Second
		}
		res, err := Spawn(context.Background(), workerArgv(t), c.script, l, tool)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.script, err, c.want)
			continue
		}
		if res == nil || res.ToolCalls != 2 || res.Value != nil {
			t.Errorf("%s: %v: result %+v, want 2 tool calls and no value", c.script, err, res)
			continue
		}
		if c.want != "deadline" && (len(res.Logs) != 1 || res.Logs[0] != `"wrote"`) {
			t.Errorf("%s: logs %q", c.script, res.Logs)
		}
	}
}

// Serve returns at its deadline even when the worker reads nothing: the
// script, larger than a pipe holds, is still being written (and holds
// the channel's lock) when the deadline passes.
func TestServeDeadlineWorkerNotReading(t *testing.T) {
	outR, outW, err := os.Pipe()
	must(t, err)
	inR, inW, err := os.Pipe()
	must(t, err)
	defer func() { outR.Close(); outW.Close(); inR.Close(); inW.Close() }()
	lim := testLimits()
	lim.Deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), lim.Deadline)
	defer cancel()
	script := "//" + strings.Repeat("x", lim.ScriptSize-2)
	type ended struct {
		res *Result
		err error
	}
	out := make(chan ended, 1)
	go func() {
		res, err := Serve(ctx, outR, inW, script, lim, nil)
		out <- ended{res, err}
	}()
	select {
	case e := <-out:
		var le *LimitError
		if !errors.As(e.err, &le) || le.Limit != "deadline" || e.res == nil || e.res.ToolCalls != 0 {
			t.Errorf("%+v, %v: want the deadline", e.res, e.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return at its deadline while the worker read nothing")
	}
}

// The parent enforces the deadline from outside: a worker that never
// answers (here: the test binary asked to hang before it reads its
// limits) is killed WorkerGrace after the deadline.
func TestSpawnKillsAtDeadline(t *testing.T) {
	lim := testLimits()
	lim.Deadline = 300 * time.Millisecond
	start := time.Now()
	_, err := Spawn(context.Background(), []string{"/bin/sh", "-c", "sleep 30"}, "return 1", lim, nil)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "deadline" {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > lim.Deadline+WorkerGrace+2*time.Second {
		t.Errorf("returned after %s", d)
	}
}

// The parent counts the budget itself: a worker making more calls than
// allowed ends the run, whatever the worker's own count says.
func TestSpawnToolBudget(t *testing.T) {
	lim := testLimits()
	lim.ToolCalls = 3
	n := 0
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		n++
		return json.RawMessage("1"), nil
	}
	_, err := Spawn(context.Background(), workerArgv(t), `for (let i = 0; i < 10; i++) await pinfold.call("t", i); return 1`, lim, tool)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "tool_calls" || n > 3 {
		t.Fatalf("%v after %d calls", err, n)
	}
}

// Bad limits and oversized scripts are refused before any process starts.
func TestSpawnRefusesBadInput(t *testing.T) {
	lim := testLimits()
	lim.Deadline = 0
	if _, err := Spawn(context.Background(), []string{"/nonexistent"}, "return 1", lim, nil); err == nil || !strings.Contains(err.Error(), "every limit") {
		t.Errorf("zero deadline: %v", err)
	}
	lim = testLimits()
	lim.ScriptSize = 10
	var le *LimitError
	if _, err := Spawn(context.Background(), []string{"/nonexistent"}, "return 12345678", lim, nil); !errors.As(err, &le) || le.Limit != "script_size" {
		t.Errorf("script size: %v", err)
	}
}

// The worker's process is gone when Spawn returns, whatever happened.
func TestSpawnLeavesNoProcess(t *testing.T) {
	lim := testLimits()
	lim.Deadline = 200 * time.Millisecond
	before := countChildren(t)
	Spawn(context.Background(), []string{"/bin/sh", "-c", "sleep 30"}, "return 1", lim, nil)
	if after := countChildren(t); after > before {
		t.Errorf("%d children before, %d after", before, after)
	}
}

// countChildren counts this process's children, over all its threads.
func countChildren(t *testing.T) int {
	t.Helper()
	n := 0
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", os.Getpid(), task.Name()))
		n += len(strings.Fields(string(b)))
	}
	return n
}

// A runaway script (a loop the VM's interrupt must stop) ends with the
// deadline error, and its worker is gone, within the deadline and the
// grace.
func TestSpawnRunawayLoop(t *testing.T) {
	lim := testLimits()
	lim.Deadline = 300 * time.Millisecond
	start := time.Now()
	_, err := Spawn(context.Background(), workerArgv(t), "for (;;) { try { for (;;) {} } catch (e) {} }", lim, nil)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "deadline" {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > lim.Deadline+WorkerGrace+2*time.Second {
		t.Errorf("returned after %s", d)
	}
}

// What JSON would spell six bytes a byte (<, >, &) crosses the channel
// at its size: a 100 KB script of them runs, and a 1 MB tool result of
// them reaches the script; a later call still works.
func TestSpawnEscapingSizes(t *testing.T) {
	big := `"` + strings.Repeat("<", 1_000_000) + `"`
	tool := func(_ context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
		if name == "big" {
			return json.RawMessage(big), nil
		}
		return json.RawMessage(`"small"`), nil
	}
	script := "// " + strings.Repeat("<&>", 33_000) + "\nconst b = await pinfold.call(\"big\", null);\nconst s = await pinfold.call(\"s\", null);\nreturn [b.length, s];"
	res, err := Spawn(context.Background(), workerArgv(t), script, testLimits(), tool)
	if err != nil || string(res.Value) != `[1000000,"small"]` {
		t.Fatalf("%v %v", res, err)
	}
}

// A tool call's argument past isoMaxArgs is the script's error, which it
// can catch, not a broken channel that ends the run; and 1 MiB of line
// breaks (a text file for write_file, 2 MiB as JSON) reaches the tool
// under a small output cap, which once bounded the worker's every line.
func TestSpawnLargeArgument(t *testing.T) {
	lim := testLimits()
	lim.Output = 16 << 10
	tool := func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprint(len(args))), nil
	}
	script := `const n = await pinfold.call("len", "\n".repeat(1 << 20));
let err = "";
try { await pinfold.call("len", "x".repeat(7 << 20)) } catch (e) { err = e.message }
return [n, err]`
	res, err := Spawn(context.Background(), workerArgv(t), script, lim, tool)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		N   int
		Err string
	}
	if err := json.Unmarshal(res.Value, &[]any{&v.N, &v.Err}); err != nil || v.N != 2<<20+2 || !strings.Contains(v.Err, "more than the 6356992 one call carries") {
		t.Errorf("value %.200s (%v)", res.Value, err)
	}
}

// The parent serves at most maxInFlight of a run's calls at once (each
// holds its argument and answer in the serving process: a hunt's 100
// fetches of 6 MiB bodies to a slow server got bash killed for memory);
// a script making 20 at once still gets every answer.
func TestSpawnCallsInFlight(t *testing.T) {
	var mu sync.Mutex
	now, most := 0, 0
	tool := func(ctx context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		now++
		most = max(most, now)
		mu.Unlock()
		defer func() { mu.Lock(); now--; mu.Unlock() }()
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
		return args, nil
	}
	script := `const ps = []; for (let i = 0; i < 20; i++) ps.push(pinfold.call("slow", i));
return (await Promise.all(ps)).reduce((a, b) => a + b)`
	res, err := Spawn(context.Background(), workerArgv(t), script, testLimits(), tool)
	if err != nil || string(res.Value) != "190" {
		t.Fatalf("%+v %v", res, err)
	}
	if most > maxInFlight {
		t.Errorf("%d calls were served at once, more than %d", most, maxInFlight)
	}
	// Calls waiting their turn do not hold up the end: a script that
	// makes 10 calls to a tool that never answers and returns at once
	// gets its value, not the deadline.
	hang := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// (The wait lets the worker send the calls before its end.)
	script = `for (let i = 0; i < 10; i++) pinfold.call("hang", i).catch(() => 0);
const t = Date.now(); while (Date.now() - t < 300) {}
return 1`
	res, err = Spawn(context.Background(), workerArgv(t), script, testLimits(), hang)
	if err != nil || string(res.Value) != "1" {
		t.Errorf("calls left waiting: %+v %v", res, err)
	}
}

// A script that returns while large calls wait ends with its value at
// once: the worker's end is not held behind calls the parent is not
// reading (once maxInFlight calls of more than smallArgs were in flight
// the parent stopped reading, and the end waited behind the worker's own
// blocked write until the deadline), and no call begins after the run's
// end: the answer counts the calls that began, and no other ever does.
func TestSpawnEndNotHeldByLargeCalls(t *testing.T) {
	var begun atomic.Int64
	tool := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		begun.Add(1)
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
		}
		return json.RawMessage("1"), nil
	}
	lim := testLimits()
	lim.ToolCalls, lim.Deadline = 200, 8*time.Second
	script := `const s = "a".repeat(100000); for (let i = 0; i < 20; i++) pinfold.call("x", s); return 1`
	start := time.Now()
	res, err := Spawn(context.Background(), workerArgv(t), script, lim, tool)
	took := time.Since(start)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("after %s: %+v %v, want the value 1", took, res, err)
	}
	if took > lim.Deadline/2 {
		t.Errorf("the run returned after %s, its end held behind its calls", took)
	}
	at := begun.Load()
	// Long enough for a call left waiting to begin once the slots free
	// (the tools end with the run's context).
	time.Sleep(time.Second)
	if n := begun.Load(); n != at || int64(res.ToolCalls) != n || n > maxInFlight {
		t.Errorf("%d calls had begun when the run returned, %d a second later, the answer says %d (at most %d run at once)", at, n, res.ToolCalls, maxInFlight)
	}
}

// A worker the kernel kills for its cgroup's memory while its calls wait
// (200 un-awaited calls of 6 MB, each held in the worker) is answered as
// the memory limit, at once, with the calls that began; not as the
// deadline. (The "fill" worker takes most of its memory first, so that
// the limit comes within seconds: unfilled, 200 such calls took 18.)
func TestSpawnManyLargeCallsMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root; unprivileged the worker has its rlimits alone")
	}
	var begun atomic.Int64
	// Slow tools (here: answered only when the run ends), so the calls
	// pile up in the worker.
	tool := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		begun.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	lim := testLimits()
	lim.ToolCalls, lim.Deadline = 200, 20*time.Second
	script := `const s = "a".repeat(6000000); for (let i = 0; i < 200; i++) pinfold.call("x", s); return 1`
	start := time.Now()
	res, err := Spawn(context.Background(), workerArgv(t, "fill"), script, lim, tool)
	took := time.Since(start)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "memory" {
		t.Fatalf("after %s: %+v %v, want the memory limit", took, res, err)
	}
	if took > lim.Deadline/2 {
		t.Errorf("the memory limit came after %s", took)
	}
	time.Sleep(time.Second)
	if res == nil || res.Value != nil || int64(res.ToolCalls) != begun.Load() {
		t.Errorf("result %+v, want no value and the %d calls that began", res, begun.Load())
	}
	if left := codeGroups(t); len(left) > 0 {
		t.Errorf("groups left after the worker ended: %v", left)
	}
}

// Once Serve has read how the run ended, no call begins: a call the
// worker sent that still waits its turn (past maxInFlight) never runs,
// those running have their context ended, and the answer counts the
// calls that began. (Those waiting began once the running ones ended,
// after the run's answer was out.)
func TestServeNothingBeginsAfterEnd(t *testing.T) {
	outR, outW, err := os.Pipe()
	must(t, err)
	inR, inW, err := os.Pipe()
	must(t, err)
	defer func() { outR.Close(); inR.Close(); inW.Close() }()
	var lines strings.Builder
	for i := 1; i <= 3*maxInFlight; i++ {
		fmt.Fprintf(&lines, `{"call":{"id":%d,"name":"x","args":%d}}`+"\n", i, i)
	}
	go func() {
		defer outW.Close()
		io.ReadAll(io.LimitReader(inR, 1))
		fmt.Fprint(outW, lines.String())
		// The worker's end comes once the first calls have begun.
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintln(outW, `{"done":{"result":{"value":1,"logs":[],"tool_calls":0}}}`)
	}()
	var begun atomic.Int64
	tool := func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		begun.Add(1)
		select {
		case <-time.After(600 * time.Millisecond):
		case <-ctx.Done():
		}
		return json.RawMessage("1"), nil
	}
	lim := testLimits()
	lim.ToolCalls = 100
	res, err := Serve(context.Background(), outR, inW, "return 1", lim, tool)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("%+v %v", res, err)
	}
	at := begun.Load()
	time.Sleep(1500 * time.Millisecond)
	if n := begun.Load(); n != at || int64(res.ToolCalls) != n || n != maxInFlight {
		t.Errorf("%d calls had begun when Serve returned, %d a second later, the answer says %d; want the %d that ran", at, n, res.ToolCalls, maxInFlight)
	}
}

// Nothing leaves the worker once its run has ended: a call whose run's
// context has ended (Run returned, the worker is about to say how) is
// not sent to the parent, which would serve it after the end.
func TestWorkerSendsNothingAfterEnd(t *testing.T) {
	var out strings.Builder
	w := &workerSide{out: encoder(&out), waiting: map[int]chan workerReply{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range []string{"1", `"` + strings.Repeat("a", smallArgs) + `"`} {
		if _, err := w.call(ctx, "x", json.RawMessage(args)); err == nil {
			t.Errorf("a call of %d bytes after the run's end: no error", len(args))
		}
	}
	if out.Len() != 0 {
		t.Errorf("sent after the run's end: %.100q", out.String())
	}
}

// The worker's collector stays off while what its tool replies leave
// behind fits in workerGoHeap (5 replies of 1 MiB, about 4 MiB of
// garbage each, which the default setting would collect at 4 MiB), and
// runs once it goes past it (40 replies, which with the collector
// simply off would all stay in memory).
func TestWorkerCollector(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"` + big + `"`), nil
	}
	collections := func(calls int) int {
		t.Helper()
		lim := testLimits()
		lim.ToolCalls = calls
		lim.Memory = 256 << 20
		script := fmt.Sprintf(`let n = 0; for (let i = 0; i < %d; i++) n += (await pinfold.call("t", i)).length; return n`, calls)
		start := time.Now()
		_, err := Spawn(context.Background(), workerArgv(t, "gc"), script, lim, tool)
		t.Logf("%d calls: %v %v", calls, time.Since(start), err)
		msg := fmt.Sprint(err)
		i := strings.Index(msg, "GC ")
		if i < 0 {
			t.Fatalf("no report from the worker: %v", err)
		}
		var n int
		if _, err := fmt.Sscanf(msg[i:], "GC %d", &n); err != nil {
			t.Fatalf("report %q: %v", msg[i:], err)
		}
		return n
	}
	if n := collections(5); n != 0 {
		t.Errorf("5 replies: %d collections, want none", n)
	}
	if n := collections(40); n == 0 {
		t.Errorf("40 replies: no collection, want the collector to run past %d MiB", workerGoHeap>>20)
	}
}

// Serve does not take the worker's word for its value: a worker taken
// over by its script that sends a value with a byte that is not UTF-8
// (0x9b, a terminal's CSI in 8-bit mode) inside a string, which
// json.Valid lets pass, is a failed worker; the same value as UTF-8
// (the control) is served.
func TestServeValueIsUTF8(t *testing.T) {
	for value, ok := range map[string]bool{"\"a\x9b[31mb\"": false, "\"a\u009b[31mb\"": true} {
		res, err := serveFake(t, fmt.Sprintf(`{"done":{"result":{"value":%s,"logs":[],"tool_calls":0}}}`, value))
		var we *workerError
		if ok != (err == nil) || !ok && (!errors.As(err, &we) || !strings.Contains(err.Error(), "not JSON")) {
			t.Errorf("value %q: %+v, %v", value, res, err)
		}
	}
}

// A run that ended well has a value (a script that returns nothing
// returns null): a worker taken over by its script that says the run
// ended with a result and no value is a failed worker, not a success
// that prints nothing. The same result with its value is served.
func TestServeResultHasValue(t *testing.T) {
	for done, ok := range map[string]bool{`{"logs":[],"tool_calls":0}`: false, `{"value":null,"logs":[],"tool_calls":0}`: true} {
		res, err := serveFake(t, `{"done":{"result":`+done+`}}`)
		var we *workerError
		if ok != (err == nil) || !ok && (!errors.As(err, &we) || !strings.Contains(err.Error(), "no value")) || ok && string(res.Value) != "null" {
			t.Errorf("result %s: %+v, %v", done, res, err)
		}
	}
}

// How a run failed is one line, whoever wrote it: an exception's
// message with line breaks (the script's text) reaches the serving side
// escaped from a real worker, and a worker taken over that sends line
// breaks itself has them escaped by Serve; they could otherwise pass for
// lines of their own after execute_code's error ("logs:", a tool call).
func TestFailureIsOneLine(t *testing.T) {
	const forged = "boom\nlogs:\n\"all written\""
	// The isolate (in-process Run, as the bench runs it) escapes it.
	_, err := Run(context.Background(), fmt.Sprintf("throw new Error(%q)", forged), testLimits(), nil)
	if err == nil || strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("Run: %q, want one line", err)
	}
	_, err = Spawn(context.Background(), workerArgv(t), fmt.Sprintf("throw new Error(%q)", forged), testLimits(), nil)
	if err == nil || strings.ContainsAny(err.Error(), "\n\r") || !strings.Contains(err.Error(), `boom\nlogs:\n"all written"`) {
		t.Errorf("a real worker: %q, want one line", err)
	}
	for _, done := range []string{
		`{"script":{"Message":"boom\nlogs:\n\"all written\""}}`,
		`{"limit":{"Limit":"memory\nx","Detail":"a\rb"}}`,
		`{"error":"broken\u2028x"}`,
	} {
		_, err = serveFake(t, `{"done":`+done+`}`)
		if err == nil || strings.ContainsAny(err.Error(), "\n\r\u2028") {
			t.Errorf("worker says %s: %q, want one line", done, err)
		}
	}
}

// hogBytes is what the "hog" worker takes outside the VM's heap: past
// its cgroup's limit with testLimits (64 MiB and the margin), within its
// RLIMIT_DATA (64 MiB and workerRuntimeData).
const hogBytes = 640 << 20

// fillBytes is what the "fill" worker takes outside the VM's heap: most
// of its cgroup's limit with testLimits, so that what its script makes
// the worker hold (a few large tool calls) passes it soon.
const fillBytes = 224 << 20

// The worker's cgroup: named for this launcher (swept if it is killed),
// memory for the heap and the margin, the worker's process limit; every
// name it makes is one a cgroup takes.
func TestWorkerCgroupSpec(t *testing.T) {
	lim := testLimits()
	spec := WorkerCgroupSpec(4242, lim)
	if spec.Memory != lim.Memory+workerCgroupMargin || spec.Pids != WorkerPids || WorkerPids != 64 {
		t.Errorf("spec %+v: want memory %d, pids 64", spec, lim.Memory+workerCgroupMargin)
	}
	if want := fmt.Sprintf("s-%d-code-4242", os.Getpid()); spec.Session != want {
		t.Errorf("name %q, want %q", spec.Session, want)
	}
	// The largest pid and uid still make a valid name.
	long := fmt.Sprintf("s-%d-code-%d", 1<<22, uint32(1<<32-1))
	if len(long) > 64 || strings.Trim(long, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		t.Errorf("%q is not a cgroup name the launcher takes", long)
	}
	if workerCgroupMargin >= workerRuntimeData || hogBytes <= lim.Memory+workerCgroupMargin || hogBytes >= lim.Memory+workerRuntimeData {
		t.Error("the margins no longer leave room between the cgroup's limit and RLIMIT_DATA for the hog test")
	}
}

// As root the worker runs in its own group in every hierarchy that
// bounds it (v1 pids and memory, the v2 group), which is gone once the
// worker has ended.
func TestWorkerCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root; unprivileged the worker has its rlimits alone")
	}
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	defer w.Close()
	wk, err := StartWorker(workerArgv(t), testLimits(), r, io.Discard)
	must(t, err)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", wk.cmd.Process.Pid))
	wk.Kill()
	must(t, err)
	// Each v1 hierarchy with pids or memory holds it in the group; with
	// none (pure v2) the v2 line does.
	name := fmt.Sprintf("/pinfold/s-%d-code-", os.Getpid())
	bounding := 0
	for line := range strings.Lines(string(b)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		ctrls := strings.Split(f[1], ",")
		if slices.Contains(ctrls, "pids") || slices.Contains(ctrls, "memory") {
			bounding++
			if !strings.Contains(f[2], name) {
				t.Errorf("the worker is not in its own group in %s: %s", f[1], f[2])
			}
		}
	}
	if v2, _, _ := strings.Cut(string(b[strings.Index(string(b), "0::"):]), "\n"); bounding == 0 && !strings.Contains(v2, name) {
		t.Errorf("the worker is in no group of its own: /proc/PID/cgroup says\n%s", b)
	}
	if left := codeGroups(t); len(left) > 0 {
		t.Errorf("groups left after the worker ended: %v", left)
	}
}

// escapeGroup is the "escape" worker (before WorkerMain, unconfined): once
// the parent says go (after StartWorker has placed it in every group) it
// starts a process in a session of its own, which the parent's SIGKILL
// to the worker's process group does not reach, says its pid, and waits
// for stdin to close.
func escapeGroup() int {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return 1
	}
	c := exec.Command("/bin/sleep", "30")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "ESCAPE", err)
		return 1
	}
	fmt.Printf("%d\n", c.Process.Pid)
	io.Copy(io.Discard, in)
	return 0
}

// Whatever the worker's group holds is gone once the worker has ended,
// and the group with it: the worker's process-group SIGKILL and the wait
// for the worker reach neither a process that left the process group nor
// one that is still dying (a CI run under load found TestSpawnKillsAtDeadline's
// "sh -c 'sleep 30'" leaving its sleep in the group for a few ms after sh
// was reaped: the group could not be removed, and the later tests found
// it). Here the worker starts a process in a session of its own.
func TestWorkerGroupKilledWhole(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root; unprivileged the worker has its rlimits alone")
	}
	inR, inW, err := os.Pipe()
	must(t, err)
	defer inW.Close()
	outR, outW, err := os.Pipe()
	must(t, err)
	defer outR.Close()
	wk, err := StartWorker(workerArgv(t, "escape"), testLimits(), inR, outW)
	inR.Close()
	outW.Close()
	must(t, err)
	defer wk.Kill()
	_, err = inW.WriteString("go\n")
	must(t, err)
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("the worker started no process: %v (%s)", err, wk.Stderr())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	must(t, err)
	// Pinned, so that the checks and the cleanup reach this process and
	// never one that reused its pid.
	pidfd, err := unix.PidfdOpen(pid, 0)
	must(t, err)
	t.Cleanup(func() {
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, 5000)
		unix.Close(pidfd)
		for _, d := range codeGroups(t) {
			unix.Rmdir(d)
		}
	})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	must(t, err)
	if name := fmt.Sprintf("/pinfold/s-%d-code-", os.Getpid()); !strings.Contains(string(b), name) {
		t.Fatalf("the worker's process is not in the worker's group:\n%s", b)
	}
	if pgid, err := unix.Getpgid(pid); err != nil || pgid == wk.cmd.Process.Pid {
		t.Fatalf("the worker's process is in the worker's process group (%d, %v)", pgid, err)
	}
	wk.Kill()
	// The group is empty once Kill returns; the process may still be a
	// zombie its new parent has not reaped, which the pidfd shows as
	// ended.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 5000); n != 1 || err != nil {
		t.Errorf("the worker's process %d outlived the worker (poll: %d, %v)", pid, n, err)
	}
	if left := codeGroups(t); len(left) > 0 {
		t.Errorf("groups left after the worker ended: %v", left)
	}
}

// A worker that takes memory past its cgroup's limit (outside the VM's
// heap, which the VM's own limit does not see, within RLIMIT_DATA) is
// killed by the kernel; the run ends with the memory limit, and its
// group is gone.
func TestSpawnCgroupMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root; unprivileged the worker has its rlimits alone")
	}
	_, err := Spawn(context.Background(), workerArgv(t, "hog"), "return 1", testLimits(), nil)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "memory" {
		t.Errorf("a worker past its cgroup's memory limit: %v, want the memory limit", err)
	}
	if left := codeGroups(t); len(left) > 0 {
		t.Errorf("groups left after the worker ended: %v", left)
	}
}

// codeGroups lists the Code Mode workers' groups of this process in
// every mounted cgroup hierarchy.
func codeGroups(t *testing.T) []string {
	t.Helper()
	prefix := fmt.Sprintf("s-%d-code-", os.Getpid())
	var found []string
	err := filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			found = append(found, p)
		}
		return nil
	})
	must(t, err)
	return found
}

// As root on a host with no cgroup to bound it, the worker is refused as
// the agent's launch is (launcher.CgroupRefusal: SR-04, with the probe's
// hint, the one the launch gives), before anything is made.
func TestWorkerCgroupRefused(t *testing.T) {
	const hint = "mount cgroup2 at /sys/fs/cgroup (mount -t cgroup2 cgroup2 /sys/fs/cgroup)"
	info := launcher.CgroupInfo{Mode: launcher.CgroupNone}
	info.Detail, info.Hint = "no cgroup file system is mounted", hint
	_, err := workerCgroup(info, WorkerCgroupSpec(60000, Limits{Memory: 64 << 20}))
	var refused *launcher.RefusedError
	if !errors.As(err, &refused) || refused.Hint != hint || !strings.Contains(err.Error(), "no cgroup file system is mounted") || !strings.Contains(err.Error(), "(SR-04)") {
		t.Fatalf("%v (%#v)", err, refused)
	}
}

// serveFake is Serve of "return 1" with a worker that reads the script's
// first byte and answers line.
func serveFake(t *testing.T, line string) (*Result, error) {
	t.Helper()
	outR, outW, err := os.Pipe()
	must(t, err)
	inR, inW, err := os.Pipe()
	must(t, err)
	defer func() { outR.Close(); inR.Close(); inW.Close() }()
	go func() {
		defer outW.Close()
		io.ReadAll(io.LimitReader(inR, 1))
		fmt.Fprintln(outW, line)
	}()
	return Serve(context.Background(), outR, inW, "return 1", testLimits(), nil)
}

// Kill on a worker that has ended and been reaped (Spawn's deferred Kill
// after every run that ended by itself) signals no process that got its
// pid since: a process-group SIGKILL to the old pid reached whatever
// group leader the kernel gave that pid next, as root any process's.
// The pid is handed on by ns_last_pid, as a busy host does by wrapping
// (pid_max is 32768 here).
func TestWorkerKillAfterEndSparesReusedPid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("placing a process at a pid (ns_last_pid) needs root")
	}
	// No limits line: the worker ends at once.
	wk, err := StartWorker(workerArgv(t), testLimits(), strings.NewReader(""), io.Discard)
	must(t, err)
	<-wk.Done()
	pid := wk.cmd.Process.Pid
	ended := pidtest.SessionLeaderAt(t, pid)
	wk.Kill()
	select {
	case err := <-ended:
		t.Errorf("Kill on the ended worker killed pid %d's new owner, a process in a session of its own: %v", pid, err)
	case <-time.After(300 * time.Millisecond):
	}
}

// A script error's stack is the script's text too (it may set e.stack):
// its lines keep their breaks, but no control character, carriage return
// or bidirectional override in them reaches whoever shows it, from the
// isolate or from a worker that says otherwise; and a worker's is
// bounded as the isolate's is.
func TestStackIsEscaped(t *testing.T) {
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\r\u202e\u2028\x9b") }
	_, err := Run(context.Background(), `const e = new Error("x"); e.stack = "at a\u001b[2J\u202e\r\nlauncher: error: forged\u2028\u009b"; throw e`, testLimits(), nil)
	var se *ScriptError
	if !errors.As(err, &se) || raw(se.Stack) || !strings.Contains(se.Stack, "forged") {
		t.Errorf("Run: %v, stack %q: want the forged stack escaped", err, stackOf(err))
	}
	_, err = serveFake(t, `{"done":{"script":{"Message":"m","Stack":"a\u001b[2J\nb\rc\u202e`+strings.Repeat("x", 1<<20)+`"}}}`)
	if !errors.As(err, &se) || raw(se.Stack) || len(se.Stack) > isoMaxStackText+64 {
		t.Errorf("a worker's stack: %v, %.200q (%d bytes): want it escaped and bounded", err, stackOf(err), len(stackOf(err)))
	}
}

func stackOf(err error) string {
	var se *ScriptError
	if errors.As(err, &se) {
		return se.Stack
	}
	return ""
}

// WorkerEnd makes a run that failed for want of its worker (the channel
// closed: "the worker failed: EOF") the memory limit where the worker's
// starter says the kernel killed it for memory, and leaves it as it was
// where the starter says nothing of the kind, says nothing at all, or
// the run failed otherwise.
func TestWorkerEnd(t *testing.T) {
	lim := testLimits()
	failed := &workerError{"EOF"}
	// said is a pipe's read end after the launcher wrote line (if any) and
	// closed its end.
	said := func(line string, write bool) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if write {
			io.WriteString(w, line)
		}
		w.Close()
		t.Cleanup(func() { r.Close() })
		return r
	}
	// A file without read deadlines (a blocking descriptor) is not
	// waited on: its read could hold a thread for as long as the writer
	// keeps its end open.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	fd, err := unix.Dup(int(r.Fd())) // Fd leaves the pipe in blocking mode
	if err != nil {
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fd), "blocking")
	defer blocking.Close()
	io.WriteString(w, endMemory+"\n")
	for _, c := range []struct {
		name  string
		err   error
		end   *os.File
		limit string // "" : err unchanged
	}{
		{"killed for memory", failed, said(endMemory+"\n", true), "memory"},
		{"ended otherwise", failed, said("\n", true), ""},
		{"no word", failed, said("", false), ""},
		{"no pipe", failed, nil, ""},
		{"a script's own error", &ScriptError{Message: "boom"}, said(endMemory+"\n", true), ""},
		{"no deadlines", failed, blocking, ""},
	} {
		got := WorkerEnd(c.err, c.end, lim)
		var le *LimitError
		switch {
		case c.limit == "" && got != c.err:
			t.Errorf("%s: %v, want %v unchanged", c.name, got, c.err)
		case c.limit != "" && (!errors.As(got, &le) || le.Limit != c.limit || !strings.Contains(le.Detail, "cgroup's memory limit")):
			t.Errorf("%s: %v, want the %s limit", c.name, got, c.limit)
		}
	}
}
