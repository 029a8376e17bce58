package launcher

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/policy"
)

// session is one running stage 2 and what stage 1 made for it.
type session struct {
	cmd           *exec.Cmd
	control       *os.File
	cg            *Cgroup
	planW         *os.File
	join          int // v1 cgroup tasks files passed to stage 2, which joins them first
	report        *bufio.Reader
	reportR       *os.File
	tty           int           // the person's terminal (a standard stream), or -1
	relay         *ptyRelay     // the agent's own terminal, when tty is one
	ttyOut        *os.File      // tty opened for the agent's output, when neither stdout nor stderr is it
	ttyModes      *unix.Termios // its modes before the launch, set again when the agent is gone
	stderr        io.Writer
	readOnly      int      // paths mounted read-only inside the write paths (LaunchOptions.ReadOnly)
	uncovered     []string // what the caller could not cover (LaunchOptions.Uncovered)
	listenCovered bool
	netns         bool
	pass          *os.File            // stage 1's end of the socket stage 2 hands the proxy's listener over
	stops         chan syscall.Signal // the agent stopped, with this signal (run)
	suspends      chan os.Signal      // the person's Ctrl-Z, when it reaches the launcher (run)
	sigs          <-chan os.Signal    // the signals relayed to the agent (Launch's subscription)
	deferred      []os.Signal         // read from sigs while waiting for the foreground, relayed by wait
	heldOver      func()              // the relay's hold of a stop that a signal ended in the background (stopped), released at fg
	conts         chan os.Signal      // SIGCONT, while heldOver is set
}

// namespacesRefused probes the namespaces as hello does, once the clone
// that ProbeForLaunch leaves them to has failed: a host that cannot make
// them (user namespaces disabled, a limit of 0) is a Boundary it cannot
// enforce, refused with hello's reason and hint (exit 124), not a failure
// of the launcher's own. nil when they can be made after all.
func namespacesRefused(p *policy.Policy, h Host) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.UserNS, h.NetNS, h.PidNS, h.MountNS = probeNamespaces(ctx, h.Root)
	return refusals(Assess(p, h))
}

// cloneStage2 creates the cgroup and clones stage 2 into its namespaces
// (and its v2 group). Stage 2 then boots and waits for its plan while
// stage 1 builds it. On any error everything made is undone.
func cloneStage2(o LaunchOptions, h Host, id IdentityPlan, newNet bool) (s *session, err error) {
	s = &session{tty: -1, netns: newNet, stderr: o.Stderr}
	defer func() {
		if err != nil {
			s.cleanup()
			s = nil
		}
	}()
	if h.Root {
		if err := CgroupSupported(h.Cgroup); err != nil {
			return s, CgroupRefusal(h.Cgroup, err)
		}
		var tag [6]byte
		rand.Read(tag[:])
		spec := CgroupSpec{
			Session: fmt.Sprintf("s-%d-%s", os.Getpid(), hex.EncodeToString(tag[:])),
			Pids:    int64(o.Policy.Limits.Processes),
		}
		// Without a memory controller the plan bounds each process's
		// address space instead (RLIMIT_AS, SD-05), as hello says: the
		// launch failed (125) on a host whose memory hierarchy was gone.
		if h.Cgroup.HasController("memory") {
			spec.Memory = int64(o.Policy.Limits.Memory)
		}
		s.cg, err = CreateCgroup(h.Cgroup, spec)
		if err != nil {
			return s, err
		}
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		return s, err
	}
	defer planR.Close()
	s.planW = planW
	reportR, reportW, err := os.Pipe()
	if err != nil {
		return s, err
	}
	defer reportW.Close()
	s.reportR = reportR
	s.report = bufio.NewReader(reportR)
	controlR, controlW, err := os.Pipe()
	if err != nil {
		return s, err
	}
	defer controlR.Close()
	s.control = controlW

	attr := &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
		Pdeathsig:  syscall.SIGKILL,
	}
	if newNet {
		attr.Cloneflags |= unix.CLONE_NEWNET
	}
	files := []*os.File{fdPlan - 3: planR, fdReport - 3: reportW, fdControl - 3: controlR}
	if !h.Root {
		// Unprivileged: a user namespace mapping the person's own ids, and
		// the capabilities stage 2 needs to build the sandbox inside it,
		// which it drops before the agent starts.
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	}
	if s.cg != nil {
		// v2: cloned into the group. v1: stage 2 joins its groups itself,
		// first thing, through these files; the agent and everything it
		// starts are then inside.
		if fd, ok := s.cg.CgroupFD(); ok {
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		}
		join, err := s.cg.JoinFiles()
		if err != nil {
			return s, err
		}
		for _, f := range join {
			defer f.Close()
		}
		files = append(files[:fdJoin-3], join...)
		s.join = len(join)
	}
	if o.Beside != nil && o.Beside.ProxyPort() != 0 {
		// After the cgroup files: stage 2 sends the proxy's listener on it.
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return s, fmt.Errorf("proxy listener socket: %w", err)
		}
		unix.SetNonblock(fds[0], true) // pollable, so the wait below has a deadline
		s.pass = os.NewFile(uintptr(fds[0]), "proxy-pass")
		child := os.NewFile(uintptr(fds[1]), "proxy-pass-child")
		defer child.Close()
		files = append(files[:fdJoin-3+s.join], child)
	}
	stdout, stderr, err := terminalsWriteOnly(o.Stdin, o.Stdout, o.Stderr)
	if err != nil {
		return s, err
	}
	for _, c := range []io.Writer{stdout, stderr} {
		if f, ok := c.(*os.File); ok && c != io.Writer(o.Stdout) && c != o.Stderr {
			defer f.Close()
		}
	}
	var stdin io.Reader = o.Stdin
	var master, slave *os.File
	if tty, _ := ownTerminal(o.Stdin, o.Stdout, o.Stderr); tty >= 0 {
		// A terminal of the agent's own (relay_linux.go): each standard
		// stream that is the person's terminal is the pty's slave, and
		// stage 2 leads a session of its own with the slave as its
		// controlling terminal.
		s.tty = tty
		s.ttyModes, _ = unix.IoctlGetTermios(s.tty, unix.TCGETS)
		if master, slave, err = newPTY(tty); err != nil {
			return s, &RefusedError{Boundary: "terminal", Detail: err.Error(), Hint: "give the agent other standard streams: </dev/null >out.log 2>&1"}
		}
		defer slave.Close()
		ctty := -1
		streams := []*io.Writer{nil, &stdout, &stderr}
		for i, f := range []*os.File{o.Stdin, fileOf(stdout), fileOf(stderr)} {
			if !sameTerminal(f, tty) {
				continue
			}
			if i == 0 {
				stdin = slave
			} else {
				*streams[i] = slave
			}
			if ctty < 0 {
				ctty = i
			}
		}
		attr.Setsid, attr.Setctty, attr.Ctty = true, true, ctty
	}
	s.cmd = &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{"launcher", Stage2Entry},
		Env:         []string{},
		Dir:         "/",
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		ExtraFiles:  files,
		SysProcAttr: attr,
	}
	PreparePidfd()
	if err := s.cmd.Start(); err != nil {
		if master != nil {
			master.Close()
		}
		if refused := namespacesRefused(o.Policy, h); refused != nil {
			return s, refused
		}
		return s, fmt.Errorf("start stage 2 in new namespaces: %w (run `launcher hello` to see what this host allows)", err)
	}
	if master != nil {
		slave.Close() // stage 2's now: the agent's output ends when its tree is gone
		out := io.Writer(nil)
		for _, w := range []io.Writer{o.Stdout, o.Stderr} {
			if f := fileOf(w); out == nil && sameTerminal(f, s.tty) {
				out = f
			}
		}
		if out == nil {
			f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", s.tty), os.O_WRONLY|unix.O_NOCTTY, 0)
			if err != nil {
				master.Close()
				return s, fmt.Errorf("open the terminal for the agent's output: %w", err)
			}
			s.ttyOut = f
			out = f
		}
		if s.relay, err = newRelay(s.tty, master, out, sameTerminal(o.Stdin, s.tty)); err != nil {
			master.Close()
			return s, err
		}
	}
	return s, nil
}

// fileOf is w as a file, or nil.
func fileOf(w io.Writer) *os.File {
	f, _ := w.(*os.File)
	return f
}

// sendPlan hands stage 2 its plan and waits until stage 2 is in its
// cgroup and confined ("ready").
func (s *session) sendPlan(plan *Plan) error {
	plan.Join = s.join
	b, err := plan.MarshalBinary()
	if err == nil {
		_, err = s.planW.Write(b)
	}
	s.planW.Close()
	if err != nil {
		err = fmt.Errorf("send plan: %w", err)
	} else {
		err = s.expect("ready")
	}
	return err
}

// expect reads stage 2's next report line and fails unless it is want.
func (s *session) expect(want string) error {
	line, _ := s.report.ReadString('\n')
	if line == want+"\n" {
		return nil
	}
	s.cmd.Wait()
	report := strings.TrimSpace(strings.TrimPrefix(line, "error: "))
	if report == "" {
		report = fmt.Sprintf("exited before reporting (%v)", s.cmd.ProcessState)
	}
	return &StepFailedError{Report: report, Status: s.cmd.ProcessState.ExitCode()}
}

// receiveProxyListener takes the listener stage 2 made in the agent's
// namespace (it sent it before reporting ready).
func (s *session) receiveProxyListener() (*os.File, error) {
	defer func() { s.pass.Close(); s.pass = nil }()
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	s.pass.SetReadDeadline(time.Now().Add(10 * time.Second))
	rc, err := s.pass.SyscallConn()
	if err != nil {
		return nil, err
	}
	var n, oobn int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	}); err != nil {
		return nil, fmt.Errorf("receive the proxy's listener: %w", err)
	}
	if rerr != nil || n != 1 {
		return nil, fmt.Errorf("receive the proxy's listener: %v", rerr)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("receive the proxy's listener: not one descriptor came")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy listener")
	if v, err := unix.GetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
		f.Close()
		return nil, errors.New("receive the proxy's listener: what came is not a listening socket")
	}
	return f, nil
}

// run lets the confined stage 2 start the agent. From then on stage 2
// reports the agent's stops ("stop N") on the same pipe: they come on
// s.stops until the pipe ends.
func (s *session) run() error {
	if s.relay != nil {
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, syscall.SIGCONT)
		ended, err := s.toForeground(cont)
		signal.Stop(cont)
		if err == nil && ended != 0 {
			return endedError(ended)
		}
		if err == nil {
			// From the background (a Ctrl-Z and bg just after the look)
			// the change of the terminal's modes stops the launcher
			// rather than being made.
			if derr := asDefault(unix.SIGTTOU, func() { err = s.relay.start() }); derr != nil {
				err = derr
			}
		}
		if err != nil {
			return err
		}
		// A SIGTSTP that reaches the launcher stopped it alone, and the
		// agent, in a session of its own, ran on unwatched while the
		// person's shell said the job was stopped (re-tests): the
		// terminal's Ctrl-Z when keys are not copied (stdin is not the
		// terminal, which keeps its own modes) or while a hold has
		// given the terminal its modes back, and kill -TSTP of the
		// launcher. It is passed to the agent instead, whose stop then
		// stops the launcher's job (stopped); one that comes before the
		// agent runs waits for it.
		s.suspends = make(chan os.Signal, 1)
		signal.Notify(s.suspends, syscall.SIGTSTP)
	}
	if _, err := s.control.Write([]byte{goByte}); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	if err := s.expect("ok"); err != nil {
		return err
	}
	s.stops = make(chan syscall.Signal, 1)
	go func() {
		defer close(s.stops)
		for {
			line, err := s.report.ReadString('\n')
			if err != nil {
				return
			}
			if n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "stop "))); err == nil && strings.HasPrefix(line, "stop ") {
				s.stops <- syscall.Signal(n)
			}
		}
	}()
	return nil
}

// stopped follows the agent's stop as a shell's job would (sudo does the
// same): on a terminal, the launcher stops copying keys to the agent,
// gives the person's terminal its own modes back and stops itself with
// the agent's signal, so the person's shell gets control (Ctrl-Z); once
// the shell continues the launcher in the foreground (fg, not bg), it
// copies keys again and continues the agent. Without a terminal the
// launcher waits, as before: there is no shell to give control to.
//
// The agent has no descriptor of the person's terminal (relay_linux.go),
// so a tree that runs again by itself (a timer armed with SIGCONT) reads
// nothing the person types. It is still held stopped, as a stopped job
// is: where the agent's group freezes killably (cgroup v2, as root), it
// is frozen until the shell continues the launcher; elsewhere stage 2
// watches the stopped tree and kills it if any of it runs (SD-23).
func (s *session) stopped(sig syscall.Signal) {
	if s.relay == nil {
		return
	}
	// A second Ctrl-Z of the same stop (typed twice, or the terminal's
	// and the relay's) waited in suspends and stopped the job again
	// straight after fg (a re-test).
	defer func() {
		for {
			select {
			case <-s.suspends:
			default:
				return
			}
		}
	}()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	thaw := func() {}
	if s.cg.FreezesKillably() {
		ctx, cancel := context.WithTimeout(context.Background(), freezeWait)
		t, err := s.cg.Freeze(ctx)
		cancel()
		if err != nil {
			fmt.Fprintf(s.stderr, "launcher: error: the stopped agent could not be frozen (%v): it is killed rather than left able to run while the terminal is the shell's\n", err)
			s.control.Write([]byte{byte(syscall.SIGKILL)})
			return
		}
		thaw = t
	}
	release := s.heldOver
	if release != nil {
		s.holdOver(nil)
	} else {
		release = s.relay.hold()
	}
	s.control.Write([]byte{watchByte})
	if sig != syscall.SIGTSTP && sig != syscall.SIGTTIN && sig != syscall.SIGTTOU {
		sig = syscall.SIGTSTP // a SIGSTOP cannot be caught by the shell's rules either way
	}
	if orphaned() {
		// No shell to give control to: the launcher leads its session
		// (exec launcher, script -c, a tmux window) or its shell is gone.
		// The kernel drops a stop signal to an orphaned group, so the
		// launcher waited for a SIGCONT no shell would send, the terminal
		// hung (a re-test, 3 in 3). As the kernel does for such a job of
		// its own, the stop is undone: the agent continues, and has the
		// terminal again (or is killed below, if its shell is gone).
		fmt.Fprintln(s.stderr, "launcher: no shell to return to (this job's process group is orphaned): the agent continues")
	} else {
		stopSelf(sig)
		<-cont
	}
	// Continued in the background (bg): the agent stays stopped, and
	// frozen or watched, until fg: copying keys from the background would
	// stop the launcher anyway (SIGTTIN).
	ended, err := s.toForeground(cont)
	if err != nil {
		fmt.Fprintf(s.stderr, "launcher: error: %v: the stopped agent is killed\n", err)
		thaw()
		s.control.Write([]byte{byte(syscall.SIGKILL)})
		return
	}
	if ended != 0 {
		// kill %1 of the stopped job: the shell sends the signal and then
		// SIGCONT, as it does to any stopped job so that it acts on the
		// signal. The agent waited for fg to get it (a hunt). Stage 2
		// relays it and continues the stopped tree, which is thawed; the
		// launcher stays in the background, with the terminal the
		// shell's, until the agent is gone or fg (wait).
		s.control.Write([]byte{byte(ended)})
		thaw()
		s.holdOver(release)
		return
	}
	s.relay.resize() // it may have changed meanwhile
	asDefault(unix.SIGTTOU, release)
	// Stage 2 stops watching first: a thaw may run a frozen task for a
	// moment, which its watch would take for the tree running by itself.
	s.control.Write([]byte{byte(syscall.SIGCONT)})
	thaw()
}

// pauseForQuestion holds everything that could write to the person's
// terminal while a question is asked (SR-43), and returns what lets it
// go on: the agent's tree is frozen, the relay copies neither keys nor
// output, and the rest of the launcher's job (a pipeline's other
// processes, not the launcher's descendants: the components, the
// agent's tree) is stopped, and the terminal's output queue drained,
// before the question is drawn. Otherwise what the agent had written to a pipe (launcher … |
// cat, | tee log) was written by the pipeline's next process after the
// question, and an agent redrew the question's lines so (a re-test: the
// person approved a write to .git/hooks, shown as one to README.md, with
// the real code, 5 in 5).
func (s *session) pauseForQuestion(ctx context.Context) (func(), error) {
	thaw, err := s.cg.Freeze(ctx)
	if err != nil {
		return thaw, err
	}
	release := func() {}
	if s.relay != nil {
		release = s.relay.hold()
	}
	self := unix.Getpid()
	var held []int
	if members, ok := groupMembers(); ok {
		for _, m := range members {
			if !descendsFrom(m, self) && unix.Kill(m.pid, unix.SIGSTOP) == nil {
				held = append(held, m.pid)
			}
		}
	}
	resume := func() {
		for _, pid := range held {
			unix.Kill(pid, unix.SIGCONT)
		}
		release()
		thaw()
	}
	if s.tty >= 0 && !outputDrained(s.tty, time.Second) {
		resume()
		return nil, errors.New("the terminal did not show what was written to it before the question within 1 s (its output stopped?)")
	}
	return resume, nil
}

// descendsFrom reports whether process m is pid or one of its
// descendants (the components, stage 2, and the agent's tree, which
// shares the launcher's group when no standard stream is a terminal),
// walking up its parents; one whose parent cannot be read counts as a
// descendant, so that it is left running.
func descendsFrom(m procIDs, pid int) bool {
	for range 64 {
		if m.pid == pid || m.ppid == pid {
			return true
		}
		if m.ppid <= 1 {
			return false
		}
		var ok bool
		if m, ok = procIDsOf(m.ppid); !ok {
			return true
		}
	}
	return true
}

// outputDrained waits (bounded by d) until tty's output queue is empty.
func outputDrained(tty int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(2 * time.Millisecond) {
		if n, err := unix.IoctlGetInt(tty, unix.TIOCOUTQ); err != nil || n == 0 {
			return err == nil
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// wait relays signals to the agent until stage 2 exits, and returns the
// agent's exit status. sigs was subscribed before stage 2 started, so a
// signal that arrived during the launch is relayed now rather than
// killing the launcher before it could clean up.
func (s *session) wait(ctx context.Context, sigs <-chan os.Signal) (int, error) {
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	for {
		for len(s.deferred) > 0 {
			s.relaySignal(s.deferred[0])
			s.deferred = s.deferred[1:]
		}
		select {
		case sig := <-sigs:
			s.relaySignal(sig)
		case <-s.conts:
			if isForegroundFD(s.tty) { // fg, after a signal ended a stop in the background
				release := s.heldOver
				s.holdOver(nil)
				s.relay.resize()
				asDefault(unix.SIGTTOU, release)
			}
		case <-s.suspends:
			s.control.Write([]byte{byte(syscall.SIGTSTP)})
		case sig, ok := <-s.stops:
			if !ok {
				s.stops = nil // the pipe ended: stage 2 is exiting
				continue
			}
			s.stopped(sig)
		case <-ctx.Done():
			s.control.Close()
			<-done
			s.finishRelay()
			s.restoreModes()
			return 0, context.Cause(ctx)
		case err := <-done:
			s.finishRelay()
			s.restoreModes()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				return 0, err
			}
			return s.cmd.ProcessState.ExitCode(), nil
		}
	}
}

// relaySignal passes sig, one of relayedSignals, to the agent.
func (s *session) relaySignal(sig os.Signal) {
	if sig == unix.SIGWINCH && s.relay != nil {
		s.relay.resize() // the kernel tells the agent's foreground
	} else if n, ok := sig.(syscall.Signal); ok {
		s.control.Write([]byte{byte(n)})
	}
}

// holdOver keeps release, the relay's hold of a stop, until wait sees
// the launcher in the foreground (on SIGCONT); nil ends that.
func (s *session) holdOver(release func()) {
	s.heldOver = release
	switch {
	case release != nil && s.conts == nil:
		s.conts = make(chan os.Signal, 1)
		signal.Notify(s.conts, syscall.SIGCONT)
	case release == nil && s.conts != nil:
		signal.Stop(s.conts)
		s.conts = nil
	}
}

// endedBy waits up to endWait for a signal among sigs that ends a job
// (as stage 2 counts them: SIGINT, SIGTERM, SIGHUP, SIGQUIT) and returns
// it, or 0. The launcher is in the background, just continued: a
// shell's kill of a stopped job sends the signal and then SIGCONT, and
// the Go runtime may hand over the SIGCONT first. Other signals read
// meanwhile are added to kept, in their order, for wait to relay.
func endedBy(sigs <-chan os.Signal, kept *[]os.Signal) syscall.Signal {
	timer := time.NewTimer(endWait)
	defer timer.Stop()
	for {
		select {
		case sig := <-sigs:
			if n, ok := sig.(syscall.Signal); ok && (n == unix.SIGINT || n == unix.SIGTERM || n == unix.SIGHUP || n == unix.SIGQUIT) {
				return n
			}
			*kept = append(*kept, sig)
		case <-timer.C:
			return 0
		}
	}
}

// endWait bounds endedBy.
const endWait = 20 * time.Millisecond

// endedError is a signal that ended the launch before the agent started:
// it was sent while the launcher waited in the background for fg.
type endedError syscall.Signal

func (e endedError) Error() string {
	return fmt.Sprintf("the launch was ended by signal %d (%v) before the agent started", int(e), syscall.Signal(e))
}

// cleanup kills whatever is left of the agent's tree and removes the
// cgroup, and takes the terminal back if a failed launch left it with
// stage 2. It is safe to call more than once.
func (s *session) cleanup() {
	if s.suspends != nil {
		signal.Stop(s.suspends)
		s.suspends = nil
	}
	s.holdOver(nil)
	if s.relay != nil {
		// A launch that failed before the agent ran: stage 2's last words
		// are relayed once it is gone.
		if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
		s.finishRelay()
		s.restoreModes()
	}
	if s.ttyOut != nil {
		s.ttyOut.Close()
		s.ttyOut = nil
	}
	if s.pass != nil {
		s.pass.Close()
	}
	if s.planW != nil {
		s.planW.Close()
	}
	if s.reportR != nil {
		s.reportR.Close()
	}
	if s.control != nil {
		s.control.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	if s.cg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.cg.Kill(ctx); err != nil {
			fmt.Fprintf(s.stderr, "launcher: warning: %v\n", err)
		}
		if err := s.cg.Remove(); err != nil {
			fmt.Fprintf(s.stderr, "launcher: warning: %v\n", err)
		}
		s.cg = nil
	}
}

// toForeground returns once the launcher's process group is the
// foreground of the person's terminal (untilForeground): a Ctrl-Z and bg
// while the launch was being prepared left the launcher in the
// background (a re-test), and keys are copied only in the foreground.
//
// A signal that ends a job (endedBy), sent while the launcher is in the
// background, ends the wait: toForeground returns it.
func (s *session) toForeground(cont <-chan os.Signal) (syscall.Signal, error) {
	var ended syscall.Signal
	if !untilForeground(s.tty, s.stderr, cont, func() bool { ended = endedBy(s.sigs, &s.deferred); return ended != 0 }) {
		if ended != 0 {
			return ended, nil
		}
		return 0, &RefusedError{Boundary: "terminal", Detail: "the person's shell is gone (this job's process group is orphaned)", Hint: "run it in the foreground of a shell, or give it other standard streams: </dev/null >out.log 2>&1"}
	}
	return 0, nil
}

// asDefault runs f with sig at its default action and unblocked on the
// calling thread (locked to it meanwhile), then sets both back. The Go
// runtime keeps what the launcher's parent left for the signals it does
// not handle: an inherited SIG_IGN (signal.Reset restores it), or the
// signal blocked on every thread. An ignored or blocked SIGTTOU let the
// launcher give the terminal's foreground away from the background; an
// ignored or blocked SIGTSTP kept it from stopping, and the terminal hung
// (stopSelf; a re-test, 5 in 5).
func asDefault(sig syscall.Signal, f func()) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var dfl, old [8]uintptr // handler 0 (SIG_DFL), no flags, an empty mask: room for any layout
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return fmt.Errorf("set %v to its default action: %w", sig, e)
	}
	defer unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	var set, mask unix.Sigset_t
	set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	if err := unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, &mask); err != nil {
		return fmt.Errorf("unblock %v: %w", sig, err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &mask, nil)
	f()
	return nil
}

// stopSelf stops the launcher's job with sig, as the terminal would (it
// returns once continued): the agent's keys come raw, so the kernel
// sends the job nothing, and a launcher that stopped alone left the rest
// of its pipeline running (launcher … | cat), so the shell did not count
// the job stopped and gave no prompt (a re-test). So sig goes to each
// other process of the launcher's process group, one by one (a signal to
// the group would reach the launcher too, and one it holds pending stops
// it again once continued), and then to this thread, whatever the
// launcher's parent left of it: unblocked there, at its default action,
// so the launcher stops on return.
func stopSelf(sig syscall.Signal) {
	self := unix.Getpid()
	if members, ok := groupMembers(); ok {
		for _, m := range members {
			if m.pid != self {
				unix.Kill(m.pid, sig)
			}
		}
	}
	asDefault(sig, func() { unix.Tgkill(self, unix.Gettid(), sig) })
}

// finishRelay ends the relay, once stage 2 is gone: the agent's last
// output is copied.
func (s *session) finishRelay() {
	if s.relay != nil {
		s.relay.finish()
	}
}

// restoreModes sets the terminal's modes back to what they were before
// the launch, once the agent is gone and the launcher has the foreground:
// an agent that turned echo off or stopped its output would otherwise
// leave the person's terminal so (a hunt). Not on Ctrl-Z: the stopped
// agent's modes are its own until it ends, and the shell keeps its own.
func (s *session) restoreModes() {
	if s.tty < 0 || s.ttyModes == nil || !isForegroundFD(s.tty) {
		return
	}
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	unix.IoctlSetTermios(s.tty, unix.TCSETS, s.ttyModes) // not TCSETSW: output the person stopped (^S) would never drain
}

// waitForeground returns once the launcher's process group is the
// foreground of tty (untilForeground), or the refusal when no shell can
// make it so.
//
// A signal that ends a job (endedBy) sent meanwhile ends the launch
// (endedError); other signals read from sigs are added to kept.
func waitForeground(tty int, stderr io.Writer, sigs <-chan os.Signal, kept *[]os.Signal) error {
	if isForegroundFD(tty) {
		return nil
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	var ended syscall.Signal
	if !untilForeground(tty, stderr, cont, func() bool { ended = endedBy(sigs, kept); return ended != 0 }) {
		if ended != 0 {
			return endedError(ended)
		}
		return &RefusedError{Boundary: "terminal", Detail: "started in the background of the terminal the agent would share, and no shell can bring it to the foreground (its process group is orphaned)",
			Hint: "run it in the foreground, or give it other standard streams: </dev/null >out.log 2>&1"}
	}
	return nil
}

// terminalsWriteOnly is stdout and stderr for the agent: when stdin is
// not a terminal, each that is one is opened again, write-only. A shell
// without job control (set +m, bash -c) runs `launcher … &` in its own
// foreground group with stdin from /dev/null, and the agent read what the
// person typed next through stdout, which the shell had opened for
// reading too (a re-test). With stdin the terminal, the agent reads it
// anyway, as the foreground job, and a pager reads keys from stderr.
func terminalsWriteOnly(stdin, stdout *os.File, stderr io.Writer) (io.Writer, io.Writer, error) {
	isTerm := func(f *os.File) bool {
		if f == nil {
			return false
		}
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err == nil
	}
	if isTerm(stdin) {
		return stdout, stderr, nil
	}
	again := func(w io.Writer) (io.Writer, error) {
		f, ok := w.(*os.File)
		if !ok || !isTerm(f) {
			return w, nil
		}
		g, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_WRONLY|unix.O_NOCTTY, 0)
		if err != nil {
			return nil, fmt.Errorf("open the terminal %s again, write-only, for the agent: %w", f.Name(), err)
		}
		return g, nil
	}
	out, err := again(stdout)
	if err != nil {
		return nil, nil, err
	}
	errw, err := again(stderr)
	if err != nil {
		if f, ok := out.(*os.File); ok && out != io.Writer(stdout) {
			f.Close()
		}
		return nil, nil, err
	}
	return out, errw, nil
}

// untilForeground returns once the launcher's process group is the
// foreground of tty, its controlling terminal: until then it stops the
// launcher with SIGTTIN, as a job that needs its terminal does, and waits
// on cont for the shell's SIGCONT (fg, or bg again). The agent's keys are
// copied from tty, which only its foreground job may read (SD-23). It
// returns false, at once, when no shell can
// continue the launcher: its process group is orphaned (the kernel drops
// SIGTTIN then), or when ended (if not nil), asked each time the
// launcher is found in the background, says so.
func untilForeground(tty int, stderr io.Writer, cont <-chan os.Signal, ended func() bool) bool {
	for said := false; !isForegroundFD(tty); {
		if orphaned() || ended != nil && ended() {
			return false
		}
		if !said {
			fmt.Fprintln(stderr, "launcher: the agent takes its keys from this terminal, so it runs only in the foreground: it waits until fg")
			said = true
		}
		if isForegroundFD(tty) { // fg came while that was written
			break
		}
		stopSelf(syscall.SIGTTIN)
		<-cont
	}
	return true
}

// orphaned reports whether the launcher's process group is orphaned, as
// the kernel counts it: no member has a parent in another group of the
// same session (the shell that would continue it is gone). It reads every
// process's stat; /proc that cannot be read counts as orphaned.
func orphaned() bool {
	members, ok := groupMembers()
	if !ok {
		return true
	}
	own := unix.Getpgrp()
	for _, m := range members {
		if p, ok := procIDsOf(m.ppid); ok && p.sid == m.sid && p.pgrp != own {
			return false
		}
	}
	return true
}

// procIDs is what /proc/PID/stat says of a process's place.
type procIDs struct{ pid, ppid, pgrp, sid int }

// procIDsOf reads process pid's stat; false when it cannot be read.
func procIDsOf(pid int) (procIDs, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if err != nil || i < 0 {
		return procIDs{}, false
	}
	// After "pid (comm) ": state ppid pgrp session.
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return procIDs{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	sid, _ := strconv.Atoi(f[3])
	return procIDs{pid, ppid, pgrp, sid}, true
}

// groupMembers is every process of the launcher's process group that
// /proc shows, the launcher with them; false when /proc cannot be read.
func groupMembers() ([]procIDs, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	own := unix.Getpgrp()
	var out []procIDs
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if m, ok := procIDsOf(pid); ok && m.pgrp == own {
			out = append(out, m)
		}
	}
	return out, true
}

// foreignSessionStdin refuses a terminal on stdin that is not the
// launcher's controlling terminal but is another session's (some process
// has it as its own): a shell there reads it too. A terminal no session
// has (a pty a supervisor hands over) is the agent's alone.
func foreignSessionStdin(stdin *os.File) error {
	return foreignSessionTerminal(stdin, "stdin", "the agent could read what is typed there",
		"run the launcher from that terminal's shell without setsid, or give it other input: </dev/null")
}

// foreignSessionOutput refuses the same of stdout and stderr. Opened
// again write-only (terminalsWriteOnly), such a terminal is not read, but
// its modes are the agent's to set through it, and no relay stands
// between: it turned off the person's Ctrl-C (stty -isig) for good,
// flushed what was typed and resized the terminal, which signals the
// other session's foreground job (a re-test, setsid launcher … </dev/null).
func foreignSessionOutput(stdout *os.File, stderr io.Writer) error {
	const why = "the agent could change its modes (turn off its Ctrl-C, say) and discard what is typed there"
	const hint = "run the launcher from that terminal's shell without setsid, or give it other output: >out.log 2>&1"
	if err := foreignSessionTerminal(stdout, "stdout", why, hint); err != nil {
		return err
	}
	f, _ := stderr.(*os.File)
	return foreignSessionTerminal(f, "stderr", why, hint)
}

// foreignSessionTerminal refuses term (the launcher's standard stream
// named which) when it is a terminal that is not the launcher's
// controlling terminal but another session's.
func foreignSessionTerminal(term *os.File, which, why, hint string) error {
	if term == nil {
		return nil
	}
	fd := int(term.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return nil // not a terminal
	}
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
		return nil // the launcher's own
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", which, err)
	}
	major, minor := unix.Major(st.Rdev), unix.Minor(st.Rdev)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if err != nil || i < 0 {
			continue
		}
		// After "pid (comm) ": state ppid pgrp session tty_nr.
		f := strings.Fields(s[i+1:])
		if len(f) < 5 {
			continue
		}
		nr, err := strconv.ParseUint(f[4], 10, 32)
		if err != nil || nr == 0 {
			continue
		}
		if uint32((nr>>8)&0xfff) == major && uint32((nr&0xff)|((nr>>12)&0xfff00)) == minor {
			return &RefusedError{Boundary: "terminal", Detail: fmt.Sprintf("%s is the terminal %s, which is not the launcher's own but another session's (process %s has it): its shell reads it too, and %s", which, term.Name(), e.Name(), why),
				Hint: hint}
		}
	}
	return nil
}

// ownTerminal is the first of the launcher's standard streams (stdin,
// stdout, stderr) that is its controlling terminal, and which of the
// three it is; -1 for none. Any of them lets the agent take the
// terminal's foreground and read it: a shell opens the terminal once, for
// reading and writing, for all three.
func ownTerminal(stdin, stdout *os.File, stderr io.Writer) (fd, index int) {
	errFile, _ := stderr.(*os.File)
	for i, f := range []*os.File{stdin, stdout, errFile} {
		if f == nil {
			continue
		}
		if _, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP); err == nil {
			return int(f.Fd()), i
		}
	}
	return -1, -1
}

// isForegroundFD reports whether fd is the launcher's controlling
// terminal with the launcher's process group in the foreground. Only then
// can stage 2 take the foreground: on any other terminal TIOCSPGRP fails
// (ENOTTY, and the launch with it), and from a background job it would
// stop stage 2 with SIGTTOU.
func isForegroundFD(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// summaryLine is the launch's one line: what was applied, then what is
// not covered, among it every Boundary the host weakens (degraded, from
// Assess; `launcher hello` and --verbose give the details).
func summaryLine(p *Plan, prog SeccompProgram, s *session, dropped int, degraded []Assessment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "launcher: confined: landlock ABI %d (%d path rules, %d port rules)", p.Landlock.ABI, len(p.Landlock.Paths), len(p.Landlock.Ports))
	if s.netns {
		b.WriteString(", empty netns")
	}
	fmt.Fprintf(&b, ", pid+mount+ipc+uts ns, seccomp %d rules", prog.Rules)
	if s.cg != nil {
		fmt.Fprintf(&b, ", cgroup %s (pids %d", s.cg.mode, s.cg.spec.Pids)
		if s.cg.spec.Memory > 0 {
			fmt.Fprintf(&b, ", memory %s", formatBytes(s.cg.spec.Memory))
		}
		b.WriteString(")")
	}
	if p.Identity.Setuid {
		fmt.Fprintf(&b, ", uid %d (throwaway)", p.Identity.UID)
	}
	fmt.Fprintf(&b, ", env %d set, %d dropped", len(p.Env), dropped)
	switch {
	case s.readOnly == 1:
		b.WriteString(", 1 protected path read-only")
	case s.readOnly > 1:
		fmt.Fprintf(&b, ", %d protected paths read-only", s.readOnly)
	}
	uncovered := slices.Clone(s.uncovered)
	switch {
	case s.netns:
	case p.Landlock.HandledNet != 0 && len(p.Landlock.Ports) == 0:
		b.WriteString(", no network namespace: Landlock denies TCP, seccomp every other socket family")
	default:
		uncovered = append(uncovered, "UDP and ICMP on the host network (SD-04)", "TCP ports are allowed on every host (SD-03)")
		if len(p.Landlock.Ports) > 0 && !s.listenCovered {
			uncovered = append(uncovered, "listen() without bind() opens an ephemeral port (Unix sockets are allowed, so listen is)")
		}
	}
	for _, r := range p.Rlimits {
		if r.Resource == unix.RLIMIT_AS {
			uncovered = append(uncovered, "resident memory: only address space is bounded (SD-05)")
		}
	}
	for _, a := range degraded {
		switch a.Boundary {
		case "network", "memory limit": // said above, in their own words
			continue
		}
		item := a.Boundary + " degraded"
		if a.Risk != "" {
			item += " (" + a.Risk + ")"
		}
		uncovered = append(uncovered, item)
	}
	if len(uncovered) > 0 {
		b.WriteString("; uncovered: " + strings.Join(uncovered, ", "))
	}
	return b.String()
}
