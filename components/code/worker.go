package code

// The worker: a process of its own for each script (DESIGN.md §6). The
// parent (Spawn) starts the launcher binary again with WorkerEntry, in a
// new network namespace (an empty one: no interface but a down loopback)
// and, as root, under a throwaway uid; the worker makes itself not
// dumpable, reads its limits (the first line on stdin), sets its rlimits,
// confines itself (ConfineComponent: Landlock handling every file right
// with no rule but its own /proc task list, no TCP, seccomp refusing
// exec, sockets, namespaces and the rest) and only then reads the script
// (the second line) and runs it in a fresh isolate. It speaks only over
// stdin and stdout, one JSON message per line: the tool calls it makes
// and, last, how the run ended. The parent serves the calls, counts the
// budget itself (a worker taken over by its script cannot spend more),
// bounds every line it reads, and kills the worker from outside when the
// deadline passes: a runaway VM never outlives its deadline by more than
// WorkerGrace.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/launcher"
)

// WorkerEntry is the hidden first argument with which the launcher binary
// runs as a Code Mode worker.
const WorkerEntry = "__pinfold_code_worker"

// WorkerGrace is how long after the deadline the parent waits for the
// worker's own answer before it kills it.
const WorkerGrace = 250 * time.Millisecond

// The messages on the worker's pipes.
type (
	// workerOut is a line from the worker: a tool call or the end.
	workerOut struct {
		Call *workerCall `json:"call,omitempty"`
		Done *workerDone `json:"done,omitempty"`
	}
	workerCall struct {
		ID   int             `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	// workerReply is the parent's answer to a call.
	workerReply struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result,omitempty"`
		Error  string          `json:"error,omitempty"`
	}
	workerDone struct {
		Result *Result      `json:"result,omitempty"`
		Limit  *LimitError  `json:"limit,omitempty"`
		Script *ScriptError `json:"script,omitempty"`
		Error  string       `json:"error,omitempty"`
	}
)

// maxReplyLine bounds a tool's answer to the worker (and so what one
// pinfold.call can bring into the VM): a 1 MiB result, JSON-escaped at
// its worst (six bytes a byte), fits.
const maxReplyLine = 8 << 20

// encoder is a JSON line writer that leaves <, > and & as they are (the
// default escaping makes each six bytes).
func encoder(w io.Writer) *json.Encoder {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return e
}

// afterConfine, when set (by the worker's tests alone), runs once the
// worker is confined and before it reads the script.
var afterConfine func()

// afterRun, when set (by the worker's tests alone), runs once the script
// has ended and before the worker says how.
var afterRun func()

// WorkerMain is the worker process. It returns its exit status: 0 once it
// has said how the run ended, 1 when it could not start or confine.
func WorkerMain() int {
	// The worker lives for one script, and most of what its collector
	// would do is waste: it runs only when the Go heap nears
	// workerGoHeap (tool replies are what grows it). RLIMIT_DATA below
	// still bounds the whole process.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(workerGoHeap)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "code worker: not dumpable:", err)
		return 1
	}
	// The limits line is read a byte at a time: nothing of the script
	// is read before the worker is confined.
	var lim Limits
	if err := readFirstLine(os.Stdin, 4<<10, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "code worker: limits:", err)
		return 1
	}
	in := bufio.NewReaderSize(os.Stdin, maxReplyLine)
	if err := confineWorker(lim); err != nil {
		fmt.Fprintln(os.Stderr, "code worker:", err)
		return 1
	}
	if afterConfine != nil {
		afterConfine()
	}
	var script string
	if err := readLine(in, 6*lim.ScriptSize+64, &script); err != nil {
		fmt.Fprintln(os.Stderr, "code worker: script:", err)
		return 1
	}
	w := &workerSide{out: encoder(os.Stdout), waiting: map[int]chan workerReply{}, large: make(chan struct{}, maxInFlight)}
	go w.readReplies(in)
	res, err := Run(context.Background(), script, lim, w.call)
	if afterRun != nil {
		afterRun()
	}
	done := &workerDone{Result: res}
	var le *LimitError
	var se *ScriptError
	// A run that broke a limit or failed still says what it logged
	// (res, without a value, unless the VM was abandoned).
	switch {
	case errors.As(err, &le):
		done = &workerDone{Limit: le, Result: res}
	case errors.As(err, &se):
		done = &workerDone{Script: se, Result: res}
	case err != nil:
		done = &workerDone{Error: err.Error()}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.out.Encode(workerOut{Done: done}); err != nil {
		return 1
	}
	return 0
}

// confineWorker sets the worker's rlimits and confines it: no files, no
// sockets, no exec, no new namespaces. The network namespace it runs in
// is the parent's doing (Spawn).
func confineWorker(lim Limits) error {
	for _, r := range workerRlimits(lim) {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("rlimit %d: %w", r.res, err)
		}
	}
	return launcher.ConfineComponent(launcher.ComponentConfinement{})
}

// workerRlimit is a resource limit the worker sets on itself (soft and
// hard).
type workerRlimit struct {
	res int
	v   uint64
}

func workerRlimits(lim Limits) []workerRlimit {
	return []workerRlimit{
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_NOFILE, 64},
		// As root the worker's uid is a throwaway one of its own: its
		// processes and threads are the worker's alone (the runtime's
		// threads count).
		{unix.RLIMIT_NPROC, workerNproc()},
		// The VM's heap plus the Go runtime's own: a VM the memory limit
		// somehow missed still cannot take the host's memory. (Not
		// RLIMIT_AS: the runtime and the C library reserve address space
		// far beyond what they use, and threads fail to start under it.)
		{unix.RLIMIT_DATA, uint64(lim.Memory) + workerRuntimeData},
		// Not inherited from the gateway or whoever started the
		// launcher, as stage 2 does for the agent: no raised priority
		// (a guest's SCHED_IDLE is kept only without one) and no
		// real-time scheduling.
		{unix.RLIMIT_NICE, 0},
		{unix.RLIMIT_RTPRIO, 0},
	}
}

// throwawayArg tells the worker it runs under a throwaway uid.
const throwawayArg = "throwaway-uid"

// workerNproc is RLIMIT_NPROC for the worker: small under a throwaway
// uid (as root); unprivileged the uid is the person's, whose other
// processes count too, so the inherited limit stays.
func workerNproc() uint64 {
	if slices.Contains(os.Args, throwawayArg) {
		return WorkerPids
	}
	var r unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NPROC, &r)
	return r.Cur
}

// workerGoHeap is the Go heap at which the worker's collector runs: a
// few large tool replies (maxReplyLine is 8 MiB) and their decoding.
const workerGoHeap = 64 << 20

// workerRuntimeData is the data the worker may use beyond the VM's heap:
// the Go runtime's own heap and the C library's arenas.
const workerRuntimeData = 1 << 30

// readLine decodes one line of at most max bytes into v.
func readLine(r *bufio.Reader, max int, v any) error {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return fmt.Errorf("a line longer than %d bytes", max)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	return json.Unmarshal(line, v)
}

// readFirstLine decodes the first line of r, read a byte at a time (at
// most max bytes), into v.
func readFirstLine(r io.Reader, max int, v any) error {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= max {
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		if b[0] == '\n' {
			return json.Unmarshal(line, v)
		}
		line = append(line, b[0])
	}
	return fmt.Errorf("a line longer than %d bytes", max)
}

// WriteLimits writes the worker's first line, its limits: the launcher's
// to write (in a session, before it hands the channel to bash), so that
// whoever serves the worker cannot loosen them.
func WriteLimits(w io.Writer, lim Limits) error {
	b, err := json.Marshal(lim)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// workerSide is the worker's end: calls go out with an id, replies come
// back in any order.
type workerSide struct {
	mu      sync.Mutex
	out     *json.Encoder
	next    int
	waiting map[int]chan workerReply
	broken  error
	// large holds a place for each call with arguments past smallArgs
	// that is sent and not yet answered. The parent reads no line while
	// maxInFlight of those wait (parentSide.serve): a worker that sent
	// more blocked in its write, holding mu, and the run's end waited
	// behind it until the deadline.
	large chan struct{}
}

func (w *workerSide) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	// The encoder only compacts args (already compact), so the parent
	// measures them as here.
	if len(args) > smallArgs {
		select {
		case w.large <- struct{}{}:
			defer func() { <-w.large }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w.mu.Lock()
	if w.broken != nil {
		w.mu.Unlock()
		return nil, w.broken
	}
	// ctx ends with the run (Run returns): a call still waiting here
	// then is not sent, so none reaches the parent after the run's end.
	if err := ctx.Err(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	w.next++
	id := w.next
	ch := make(chan workerReply, 1)
	w.waiting[id] = ch
	err := w.out.Encode(workerOut{Call: &workerCall{ID: id, Name: name, Args: args}})
	w.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("the parent is gone: %w", err)
	}
	select {
	case r := <-ch:
		if r.Error != "" {
			return nil, errors.New(r.Error)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *workerSide) readReplies(in *bufio.Reader) {
	for {
		var r workerReply
		err := readLine(in, maxReplyLine, &r)
		w.mu.Lock()
		if err != nil {
			w.broken = fmt.Errorf("the parent's channel: %w", err)
			for id, ch := range w.waiting {
				ch <- workerReply{ID: id, Error: w.broken.Error()}
				delete(w.waiting, id)
			}
			w.mu.Unlock()
			return
		}
		if ch, ok := w.waiting[r.ID]; ok {
			ch <- r
			delete(w.waiting, r.ID)
		}
		w.mu.Unlock()
	}
}

// Worker is a started worker process.
type Worker struct {
	cmd       *exec.Cmd
	cg        *launcher.Cgroup // as root: the worker's own group
	release   io.Closer
	stderr    *cappedBuffer
	done      chan struct{}
	err       error
	oomKilled bool
	// mu guards exited: the worker has ended and is about to be
	// reaped, after which its pid (and process group id) may be
	// another process's.
	mu     sync.Mutex
	exited bool
}

// StartWorker starts argv (the launcher binary and WorkerEntry; a test
// binary in tests) as a worker for a run under lim: in a new network and
// IPC namespace, with an empty environment, in a new session, killed
// with its parent; as root under a throwaway uid and in a cgroup of its
// own (WorkerCgroupSpec: its memory and processes bounded by the kernel,
// whatever the worker does; removed when it ends), otherwise in a user
// namespace of its own (the person's uid inside, so exec leaves it no
// capability) with its rlimits alone. stdin and stdout are its only
// channel (a pipe each, or one socket for both).
func StartWorker(argv []string, lim Limits, stdin io.Reader, stdout io.Writer) (*Worker, error) {
	if err := checkLimits(lim); err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout = stdin, stdout
	// Descriptors this process inherited without close-on-exec (launcher
	// code run's from the person's shell) would be open in the worker,
	// where neither Landlock nor seccomp looks at them. (A launch marks
	// them at its start; code run does not launch.)
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return nil, fmt.Errorf("code: mark inherited descriptors close-on-exec: %w", err)
	}
	w := &Worker{cmd: cmd, stderr: &cappedBuffer{left: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	// Its own session and process group, which Kill ends. It cannot fork
	// once confined (launcher.ConfineComponent), so the group is the
	// worker alone. (Not a pid namespace: go-landlock's all-threads
	// restriction hangs in one whose /proc is the host's.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true, Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC}
	cmd.WaitDelay = time.Second // a descendant holding stderr open cannot hold Wait
	if os.Geteuid() == 0 {
		uid, claim, err := launcher.ClaimThrowawayID()
		if err != nil {
			return nil, err
		}
		cg, err := workerCgroup(launcher.ProbeForLaunch().Cgroup, WorkerCgroupSpec(uid, lim))
		if err != nil {
			claim.Close()
			return nil, err
		}
		w.cg, w.release = cg, claim
		if fd, ok := cg.CgroupFD(); ok {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		}
		cmd.Args = append(cmd.Args, throwawayArg)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
	} else {
		uid, gid := os.Geteuid(), os.Getegid()
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	// The parent-death signal follows the thread that forks, not the
	// process: the worker is started from a goroutine locked to its
	// thread for the worker's whole life (a thread the runtime ends when
	// another locked goroutine exits would take the worker with it).
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		// Its end is awaited without reaping it first: until it is
		// reaped its pid is no one else's, and Kill signals its
		// process group only until then.
		pid := cmd.Process.Pid
		for {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
				break
			}
		}
		w.mu.Lock()
		w.exited = true
		w.mu.Unlock()
		w.err = cmd.Wait()
		w.endGroup()
		close(w.done)
	}()
	if err := <-started; err != nil {
		w.endGroup()
		return nil, fmt.Errorf("code: start the worker: %w", err)
	}
	// Where the host has v1 groups (hybrid, v1) the worker joins them
	// now: it reads its limits line before anything else, and until
	// WriteLimits it has allocated nothing of the script's.
	if w.cg != nil {
		if err := w.cg.Add(cmd.Process.Pid); err != nil {
			w.Kill()
			return nil, fmt.Errorf("code: the worker's cgroup: %w", err)
		}
	}
	return w, nil
}

// endGroup, once the worker has ended, notes whether the kernel killed
// it for its cgroup's memory limit, kills whatever the group still holds
// and waits until it is empty (the wait for the worker reaches it alone:
// a process it started may still be dying of the process group's
// SIGKILL, or be in a session of its own, and the group could not be
// removed), removes the group and then releases the uid (the group's
// name holds it).
func (w *Worker) endGroup() {
	if w.cg != nil {
		n, err := w.cg.OOMKills()
		w.oomKilled = err == nil && n > 0
		ctx, cancel := context.WithTimeout(context.Background(), groupKillWait)
		err = w.cg.Kill(ctx)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "launcher: warning: a Code Mode worker's cgroup: %v\n", err)
		}
		if err := w.cg.Remove(); err != nil {
			fmt.Fprintf(os.Stderr, "launcher: warning: a Code Mode worker's cgroup: %v\n", err)
		}
	}
	if w.release != nil {
		w.release.Close()
	}
}

// OOMKilled says whether the kernel ended the worker for its cgroup's
// memory limit; valid once Done is closed.
func (w *Worker) OOMKilled() bool { return w.oomKilled }

// WorkerPids bounds a worker's processes and threads (the Go runtime's
// count): RLIMIT_NPROC under its throwaway uid and its cgroup's pids.max.
// Confined, it starts no process; its threads are a few per CPU the
// runtime uses.
const WorkerPids = 64

// workerCgroupMargin is the memory a worker's cgroup allows beyond the
// VM's heap (Limits.Memory): the Go heap (workerGoHeap, which large tool
// replies grow; maxReplyLine is one), the runtime's stacks and the
// program's own pages. RLIMIT_DATA leaves workerRuntimeData, far more:
// it counts address space the runtime reserves, the cgroup what is used.
const workerCgroupMargin = 256 << 20

// workerCgroup makes the cgroup of a worker started as root. Root is
// bound by no rlimit on processes, and RLIMIT_DATA leaves four workers a
// session's memory outside the agent's: the worker gets a cgroup, or
// does not start (SR-04), refused as the agent is where the host cannot
// give it one (launcher.CgroupRefusal, with its hint).
func workerCgroup(info launcher.CgroupInfo, spec launcher.CgroupSpec) (*launcher.Cgroup, error) {
	if err := launcher.CgroupSupported(info); err != nil {
		return nil, fmt.Errorf("code: the worker's cgroup: %w", launcher.CgroupRefusal(info, err))
	}
	cg, err := launcher.CreateCgroup(info, spec)
	if err != nil {
		return nil, fmt.Errorf("code: the worker's cgroup: %w", err)
	}
	return cg, nil
}

// WorkerCgroupSpec is the cgroup of the worker started under the
// throwaway uid: named like the agent's groups (s-<launcher pid>-…, so a
// later launch sweeps it if this launcher is killed) and unique while
// the uid is claimed; memory for the VM's heap and the margin, without
// swap; WorkerPids processes.
func WorkerCgroupSpec(uid int, lim Limits) launcher.CgroupSpec {
	return launcher.CgroupSpec{Session: fmt.Sprintf("s-%d-code-%d", os.Getpid(), uid),
		Pids: WorkerPids, Memory: lim.Memory + workerCgroupMargin}
}

// groupKillWait bounds the kill of what a worker's group holds when the
// worker has ended.
const groupKillWait = 5 * time.Second

// Kill ends the worker (by the pid it started) and waits for it. Its
// process group is signalled only while the worker has not ended: once
// it is reaped the group's id is a pid the kernel may give any process
// (Spawn's Kill after a run that ended by itself killed, as root, the
// group of whatever process got it next).
func (w *Worker) Kill() {
	w.mu.Lock()
	if !w.exited {
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL) // the worker's process group (Setsid)
	}
	w.mu.Unlock()
	w.cmd.Process.Kill() // by pidfd where the kernel has them: never another process
	<-w.done
}

// Done is closed when the worker has ended.
func (w *Worker) Done() <-chan struct{} { return w.done }

// Stderr is the start of what the worker said on stderr.
func (w *Worker) Stderr() string { return w.stderr.String() }

// Spawn runs script in a new worker (StartWorker) and serves it (Serve)
// with tool, enforcing the deadline from outside too: the worker is
// killed WorkerGrace after it, whatever it is doing. It returns what Run
// returned in the worker; the worker is gone when it returns.
func Spawn(ctx context.Context, argv []string, script string, lim Limits, tool Tool) (*Result, error) {
	if err := checkJob(script, lim); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	start := time.Now()
	w, err := StartWorker(argv, lim, inR, outW)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	defer w.Kill()
	defer inW.Close()
	defer outR.Close()
	// One short line: the pipe holds it whether or not the worker reads.
	if err := WriteLimits(inW, lim); err != nil {
		return nil, fmt.Errorf("code: the worker's limits: %w", err)
	}
	runCtx, cancel := context.WithDeadline(ctx, start.Add(lim.Deadline))
	defer cancel()
	type ended struct {
		res *Result
		err error
	}
	out := make(chan ended, 1)
	go func() {
		res, err := Serve(runCtx, outR, inW, script, lim, tool)
		out <- ended{res, err}
	}()
	kill := time.NewTimer(time.Until(start.Add(lim.Deadline + WorkerGrace)))
	defer kill.Stop()
	select {
	case e := <-out:
		var we *workerError
		if errors.As(e.err, &we) {
			// What it said is whole once it has ended.
			select {
			case <-w.Done():
				if w.OOMKilled() {
					return e.res, cgroupMemoryLimit(lim)
				}
			case <-time.After(time.Second):
			}
			return e.res, fmt.Errorf("%w (%s)", e.err, w.Stderr())
		}
		return e.res, e.err
	case <-kill.C:
		return nil, &LimitError{Limit: "deadline", Detail: fmt.Sprintf("the script ran past its deadline of %s and its worker was killed", lim.Deadline)}
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// checkJob refuses bad limits and a script over its size before any
// process starts.
func checkJob(script string, lim Limits) error {
	if err := checkLimits(lim); err != nil {
		return err
	}
	if len(script) > lim.ScriptSize {
		return &LimitError{Limit: "script_size", Detail: fmt.Sprintf("the script is %d bytes, more than the %d allowed", len(script), lim.ScriptSize)}
	}
	return nil
}

// workerError is a worker that broke the protocol or ended without
// saying how the run ended.
type workerError struct{ msg string }

func (e *workerError) Error() string { return "code: the worker failed: " + e.msg }

// cgroupMemoryLimit is the error of a run whose worker the kernel killed
// for its cgroup's memory limit.
func cgroupMemoryLimit(lim Limits) *LimitError {
	return &LimitError{Limit: "memory", Detail: fmt.Sprintf("the worker passed its cgroup's memory limit (the heap's %d bytes and %d for the runtime) and the kernel killed it", lim.Memory, workerCgroupMargin)}
}

// In a session the worker's starter (the launcher) and the one that
// serves it (bash) are two processes: bash sees the channel close, only
// the launcher sees the worker's cgroup. The launcher tells bash how the
// worker ended on a pipe of its own beside the channel (WriteEnd), and
// bash reads it when the run failed for want of the worker (WorkerEnd).
// One line: endMemory, or nothing.
const endMemory = "memory"

// endWait bounds bash's wait for the launcher's word once the channel has
// closed: the launcher writes it when the worker has been reaped and its
// cgroup emptied, which follows the worker's death closely.
const endWait = 5 * time.Second

// WriteEnd writes to end how the worker ended, once it has (Done): the
// memory limit if the kernel killed it for its cgroup's, else an empty
// line.
func (w *Worker) WriteEnd(end io.Writer) error {
	<-w.done
	line := "\n"
	if w.oomKilled {
		line = endMemory + "\n"
	}
	_, err := io.WriteString(end, line)
	return err
}

// WorkerEnd is err, Serve's error for a run in a worker that WriteEnd
// reports on through end, made into the memory limit (as Spawn makes it)
// where the run failed for want of the worker and the worker's starter
// says the kernel killed it for memory. Any other error, a nil end, an
// end without read deadlines, or no word within endWait leaves err as it
// is. end must be pollable (boot.ReceiveFiles makes what it passes so):
// the wait then holds no thread, and ends at the deadline.
func WorkerEnd(err error, end *os.File, lim Limits) error {
	var we *workerError
	if end == nil || !errors.As(err, &we) || end.SetReadDeadline(time.Now().Add(endWait)) != nil {
		return err
	}
	b := make([]byte, len(endMemory)+1)
	if n, _ := io.ReadFull(end, b); string(b[:n]) == endMemory+"\n" {
		return cgroupMemoryLimit(lim)
	}
	return err
}

// Serve is the parent's side of a worker's channel (r from its stdout, w
// to its stdin), once its limits are written (WriteLimits): it hands the
// worker the script, serves its tool
// calls with tool (in goroutines of their own, with a context that ends
// at ctx's end and when Serve returns; the budget counted here, whatever
// the worker counts) and returns how the run ended. Every line it reads
// is bounded. It returns at ctx's end too; killing the worker is the
// caller's. The run ends when Serve knows how it ended: no call begins
// after that (one the worker sent that was still waiting its turn never
// runs), and Result.ToolCalls is the calls that began. With any error
// once the script is handed over it also returns a Result with a nil
// Value: the tool calls that began (a run that fails after some has had
// their effects) and, with a *LimitError or *ScriptError, the logs the
// worker sent, if any.
func Serve(ctx context.Context, r io.Reader, w io.Writer, script string, lim Limits, tool Tool) (*Result, error) {
	if err := checkJob(script, lim); err != nil {
		return nil, err
	}
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the calls still running when the run has ended
	p := &parentSide{tool: tool, lim: lim, in: encoder(w)}
	// The limits line is already written (WriteLimits). The script goes
	// beside the rest: a worker that does not read must not hold the
	// parent past the deadline (a pipe holds 64 KiB, a script more).
	go func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.in.Encode(script)
	}()
	type ended struct {
		done *workerDone
		err  error
	}
	out := make(chan ended, 1)
	go func() {
		d, err := p.serve(ctx, bufio.NewReaderSize(r, 64<<10))
		out <- ended{d, err}
	}()
	// failed is a run that ended with an error: what is known of it,
	// without a value.
	failed := func(err error, done *workerDone) (*Result, error) {
		res := &Result{Logs: []string{}, ToolCalls: p.end()}
		if done != nil && done.Result != nil && done.Result.Logs != nil {
			res.Logs = done.Result.Logs
			n := 0
			for i, l := range res.Logs {
				res.Logs[i] = isoEscape(l)
				n += len(res.Logs[i]) + 1
			}
			if n > lim.Output {
				res.Logs = []string{} // the worker's word, past what it may say
			}
		}
		return res, err
	}
	var e ended
	select {
	case e = <-out:
	case <-outer.Done():
		if errors.Is(outer.Err(), context.DeadlineExceeded) {
			return failed(&LimitError{Limit: "deadline", Detail: fmt.Sprintf("the script ran past its deadline of %s", lim.Deadline)}, nil)
		}
		return failed(context.Cause(outer), nil)
	}
	switch {
	case e.err != nil:
		if p.limit != nil {
			return failed(p.limit, nil)
		}
		return failed(&workerError{e.err.Error()}, nil)
	// What the worker says of how the run failed is one line (its
	// script may have written the message; a worker taken over, all).
	case e.done.Limit != nil:
		return failed(&LimitError{Limit: isoOneLine(e.done.Limit.Limit, 64), Detail: isoOneLine(e.done.Limit.Detail, isoMaxMessage)}, e.done)
	case e.done.Script != nil:
		return failed(&ScriptError{Message: isoOneLine(e.done.Script.Message, isoMaxMessage), Stack: isoEscapeLines(e.done.Script.Stack, isoMaxStackText)}, e.done)
	case e.done.Error != "":
		return failed(errors.New("code: "+isoOneLine(e.done.Error, isoMaxMessage)), nil)
	case e.done.Result == nil:
		return failed(&workerError{"it ended without a result"}, nil)
	case e.done.Result.Value == nil:
		// Run's result always has one ("null" for undefined); without
		// it, code run printed an empty line and exited 0.
		return failed(&workerError{"its result has no value"}, nil)
	}
	// The worker's word is not taken: its lines are escaped again and
	// measured against the cap, its value must be JSON.
	res := e.done.Result
	n := len(res.Value)
	for i, l := range res.Logs {
		res.Logs[i] = isoEscape(l)
		n += len(res.Logs[i]) + 1
	}
	if n > lim.Output {
		return failed(&LimitError{Limit: "output", Detail: fmt.Sprintf("the result and the logs are %d bytes, more than the %d allowed", n, lim.Output)}, nil)
	}
	// JSON is UTF-8 text (json.Valid lets any other byte pass inside a
	// string, and one such as 0x9b would reach a terminal raw).
	if !json.Valid(res.Value) || !utf8.Valid(res.Value) {
		return failed(&workerError{"its result is not JSON"}, nil)
	}
	res.ToolCalls = p.end()
	return res, nil
}

// checkLimits refuses limits that would leave a run unbounded.
func checkLimits(l Limits) error {
	if l.Memory <= 0 || l.Stack <= 0 || l.Deadline <= 0 || l.Output <= 0 || l.ScriptSize <= 0 || l.ToolCalls < 0 {
		return fmt.Errorf("code: every limit must be set (memory, stack, deadline, output and script size above 0, tool calls 0 or more): %+v", l)
	}
	return nil
}

// maxInFlight bounds the tool calls of one run that are served at once,
// and those with arguments past smallArgs that wait or run. Unbounded, a
// hunt's script made 100 fetches of 6 MiB bodies to a slow server at
// once, and bash, which serves a session's scripts in 512 MiB, was killed
// for memory, stopping the session. (A session runs at most four scripts
// at once.)
const (
	maxInFlight = 4
	smallArgs   = 64 << 10
)

// parentSide serves one worker's calls.
type parentSide struct {
	tool Tool
	lim  Limits
	mu   sync.Mutex
	in   *json.Encoder
	// calls is counted apart from mu, which the script's writer holds
	// while a worker does not read: the count is read at the deadline.
	calls atomic.Int64
	limit *LimitError // a limit the parent enforced, which ended the run
	// begun counts the calls whose tool was called, until ended: a call
	// begins only before the run's end, and the answer counts exactly
	// those (calls counts what the worker sent, for the budget).
	startMu sync.Mutex
	begun   int
	ended   bool
}

// begin says whether a call may begin (the run has not ended) and counts
// it.
func (p *parentSide) begin() bool {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if p.ended {
		return false
	}
	p.begun++
	return true
}

// end ends the run for the calls: none begins after it. It returns how
// many began.
func (p *parentSide) end() int {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.ended = true
	return p.begun
}

// serve reads the worker's lines until its last: each call is answered
// (in its own goroutine: a slow tool does not hold the others, up to
// maxInFlight at a time), the budget
// counted here. Lines are bounded by the output cap (or a call's largest
// argument, when that is more): a worker cannot make the parent hold more.
func (p *parentSide) serve(ctx context.Context, r *bufio.Reader) (*workerDone, error) {
	// The output, JSON-escaped at its worst, or a call's argument.
	bound := max(6*p.lim.Output, isoMaxArgs) + 1<<20
	// What the serving process holds of the calls is bounded: at most
	// maxInFlight run at once (each with its answer, and a fetch with its
	// body a few times over), and at most maxInFlight more than
	// smallArgs wait or run (past them, no line is read until one has
	// been answered: the worker waits, its deadline still holds; the
	// worker's own side sends no more than that, so its end is never
	// held behind a write of its own). Calls with small arguments wait
	// without holding up the reading, so the run's end is read behind
	// them.
	running := make(chan struct{}, maxInFlight)
	large := make(chan struct{}, maxInFlight)
	for {
		var m workerOut
		if err := readLine(r, bound, &m); err != nil {
			return nil, err
		}
		switch {
		case m.Done != nil:
			return m.Done, nil
		case m.Call != nil:
			if over := p.calls.Add(1) > int64(p.lim.ToolCalls); over {
				p.limit = &LimitError{Limit: "tool_calls", Detail: fmt.Sprintf("more than %d tool calls", p.lim.ToolCalls)}
				return nil, p.limit
			}
			c := *m.Call
			isLarge := len(c.Args) > smallArgs
			if isLarge {
				select {
				case large <- struct{}{}:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			// A tool still running when the run ends has its context
			// cancelled (Serve's return); its answer then goes to a
			// closed pipe. One not begun by then never begins.
			go func() {
				if isLarge {
					defer func() { <-large }()
				}
				select {
				case running <- struct{}{}:
					defer func() { <-running }() // once answered
				case <-ctx.Done():
					return
				}
				if !p.begin() {
					return // the run has ended: its answer is out
				}
				res, err := p.tool(ctx, c.Name, c.Args)
				rep := workerReply{ID: c.ID, Result: res}
				if err != nil {
					rep = workerReply{ID: c.ID, Error: err.Error()}
				} else if len(res) > maxReplyLine/6-1024 {
					rep = workerReply{ID: c.ID, Error: fmt.Sprintf("%s: its result is %d bytes, more than one call may bring in", c.Name, len(res))}
				}
				p.mu.Lock()
				p.in.Encode(rep)
				p.mu.Unlock()
			}()
		default:
			return nil, errors.New("a message that is neither a call nor the end")
		}
	}
}

// cappedBuffer keeps the first bytes of the worker's stderr, for errors.
type cappedBuffer struct {
	mu   sync.Mutex
	b    []byte
	left int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(p), c.left)
	c.b = append(c.b, p[:n]...)
	c.left -= n
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.b) == 0 {
		return "no message"
	}
	return string(c.b)
}
