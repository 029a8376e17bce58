package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stage2Entry is the hidden first argument that turns the launcher binary
// into stage 2. It is not a command: stage 2 refuses to run unless its
// plan pipe is open.
const Stage2Entry = "__pinfold_stage2"

// File descriptors stage 1 passes to stage 2, in this order after stdio.
const (
	fdPlan    = 3 // stage 1 → stage 2: the plan, written once stage 2 is in its cgroup
	fdReport  = 4 // stage 2 → stage 1: "ok" when the agent has started, or the failed step
	fdControl = 5 // stage 1 → stage 2: forwarded signals, one byte each; EOF means stage 1 died
	fdUserns  = 6 // optional: user namespace for the workspace's idmapped mount
)

// stepError names the Boundary step that failed, so stage 1 can say which.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }

func step(name string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{name, err}
}

// Stage2Main is stage 2. It reads the plan, applies every Boundary to
// itself in the order of DESIGN.md §3, starts the agent as its only child
// and stays as the pid namespace's init: it reaps, relays forwarded signals
// and exits with the agent's status. It never returns.
//
// Why init and not execve: in a new pid namespace the first process is
// pid 1, which the kernel shields from every signal it has no handler for
// and which must reap orphans. An agent exec'd as pid 1 would ignore
// Ctrl-C and leak zombies. So stage 2 confines itself whole — all threads,
// so there is nothing unconfined left to attack — and the agent inherits
// exactly that confinement through fork and exec.
func Stage2Main() {
	runtime.LockOSThread() // never unlocked: credential and prctl state is per thread
	// Every signal the agent could send pid 1 (SIGABRT, SIGQUIT, SIGTRAP…)
	// is caught, so none makes the Go runtime dump and exit. Stage 2 acts
	// only on what stage 1 relays over the control pipe.
	signal.Notify(make(chan os.Signal, 1))
	report := os.NewFile(fdReport, "report")
	control := os.NewFile(fdControl, "control")
	plan, err := readPlanFD()
	if err == nil {
		err = confine(plan)
	}
	if err == nil {
		// Confined: stage 1 prints its summary, then says go.
		fmt.Fprintln(report, "ready")
		var b [1]byte
		if n, rerr := control.Read(b[:]); n != 1 || b[0] != goByte {
			os.Exit(exitStage2Failed) // stage 1 is gone or changed its mind
		} else if rerr != nil {
			err = rerr
		}
	}
	var agent int
	if err == nil {
		agent, err = start(plan)
	}
	if err == nil {
		fmt.Fprintln(report, "ok")
		report.Close()
		os.Exit(supervise(agent, control))
	}
	fmt.Fprintf(report, "error: %v\n", err)
	os.Exit(exitStage2Failed)
}

// goByte on the control pipe lets a confined stage 2 start the agent;
// every later byte is a signal number.
const goByte = 0

// exitStage2Failed is stage 2's exit code when it could not start the
// agent; stage 1 reads the reason from the report pipe.
const exitStage2Failed = 125

func readPlanFD() (*Plan, error) {
	f := os.NewFile(fdPlan, "plan")
	if f == nil {
		return nil, errors.New("stage 2 started without a plan pipe")
	}
	defer f.Close()
	return ReadPlan(bufio.NewReader(f))
}

// confine applies the Boundaries in order. Each step fails closed; nothing
// runs if any step fails.
func confine(p *Plan) error {
	// 1. Namespaces were created by clone(2) flags in stage 1, and stage 1
	//    wrote the plan only after placing this process in its cgroup.
	// 2. Mount namespace: private propagation, hidden socket directories,
	//    private /tmp and /dev/shm, fresh /proc, idmapped workspace.
	if err := step("mounts", setupMounts(p)); err != nil {
		return err
	}
	// 3. Network: loopback up in the new network namespace.
	if p.NewNet {
		if err := step("network", loopbackUp()); err != nil {
			return err
		}
	}
	// 4. Resource limits.
	for _, r := range p.Rlimits {
		lim := &unix.Rlimit{Cur: r.Value, Max: r.Value}
		if r.AtMost {
			var cur unix.Rlimit
			if err := unix.Getrlimit(r.Resource, &cur); err == nil && cur.Max < r.Value {
				lim = &unix.Rlimit{Cur: cur.Max, Max: cur.Max}
			}
		}
		if err := unix.Setrlimit(r.Resource, lim); err != nil {
			return step("rlimits", fmt.Errorf("set %s to %d: %w", r.Name, r.Value, err))
		}
	}
	// 5. Identity: throwaway uid/gid (root launches), every capability
	//    cleared, no_new_privs.
	if err := step("identity", dropPrivileges(p.Identity)); err != nil {
		return err
	}
	// 6. Landlock: files, TCP ports, scopes.
	if err := step("landlock", applyLandlock(p.Landlock)); err != nil {
		return err
	}
	// 7. Every descriptor above 2 is marked close-on-exec, so the agent
	//    inherits none of them (SR-10). Closing them outright would pull the
	//    Go runtime's own descriptors from under it.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return step("close fds", err)
	}
	// 8. seccomp, last.
	prog, err := UnmarshalSeccomp(p.Seccomp)
	if err != nil {
		return step("seccomp", err)
	}
	return step("seccomp", LoadSeccomp(prog))
}

// start starts the agent (step 9) with the environment the policy built.
func start(p *Plan) (int, error) {
	proc, err := os.StartProcess(p.Path, p.Argv, &os.ProcAttr{
		Dir:   p.Dir,
		Env:   p.Env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return 0, step("exec", err)
	}
	return proc.Pid, nil
}

// supervise is init: it reaps every child, relays signals forwarded by
// stage 1 to the agent, and returns the agent's exit status (128+N for a
// signal). When it returns, stage 2 exits and the kernel kills whatever is
// left in the pid namespace.
func supervise(agent int, control *os.File) int {
	// Landlock's thread-by-thread enforcement (before ABI 8's TSYNC) gives
	// each thread its own sibling domain, and signal scoping refuses
	// signals across sibling domains. So every kill is sent from this,
	// the locked thread that started the agent and shares its domain.
	relay := make(chan syscall.Signal)
	go func() {
		buf := make([]byte, 1)
		for {
			if _, err := control.Read(buf); err != nil {
				close(relay) // stage 1 is gone: nobody supervises the agent any more
				return
			}
			relay <- syscall.Signal(buf[0])
		}
	}()
	exited := make(chan int, 1)
	go func() { exited <- reap(agent) }()
	for {
		select {
		case sig, ok := <-relay:
			if !ok {
				unix.Kill(agent, unix.SIGKILL)
				return 128 + int(unix.SIGKILL)
			}
			unix.Kill(agent, sig)
		case code := <-exited:
			return code
		}
	}
}

// reap waits for every child and returns the agent's exit status (128+N
// for a signal).
func reap(agent int) int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return exitStage2Failed
		}
		if pid != agent {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// relayedSignals are the signals the launcher forwards to the agent.
var relayedSignals = []os.Signal{
	unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT,
	unix.SIGWINCH, unix.SIGUSR1, unix.SIGUSR2,
}
