package launcher

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The agent's own terminal (SD-23). Sharing the person's terminal, an
// agent could take its foreground and read what the person typed to
// their shell, whenever any process of its tree ran while the launch was
// not the foreground job: started with &, continued with bg, or
// continued by the kernel while stopped (a timer armed with SIGCONT).
// Each of those took a check of its own, and the last one left a window
// (5 ms, unprivileged). Now the agent is given a pseudo-terminal of its
// own, as sudo's use_pty does: stage 2 leads a new session with the
// pty's slave as its controlling terminal, and stage 1 copies the
// person's keys to the master and the master's output to the person's
// terminal. The agent holds no descriptor of the person's terminal at
// all; what reaches it is what stage 1 copies, and stage 1 copies keys
// only while it is the foreground job and the agent runs.

// ptyRelay copies between the person's terminal and the agent's pty.
type ptyRelay struct {
	tty    int          // the person's terminal (the launcher's controlling terminal)
	master *os.File     // the agent's pty, master side (non-blocking, pollable)
	in     int          // the person's terminal opened again, non-blocking, for reading; -1 when stdin is not it
	out    io.Writer    // the person's terminal, for the agent's output
	modes  unix.Termios // the person's terminal's modes before the launch

	mu      sync.Mutex
	cond    *sync.Cond
	started bool // keys are copied (start), unless held
	holds   int  // hold calls not yet released
	closed  bool
	raw     bool // the person's terminal is in raw mode (set by the relay)
	wrote   bool // the agent's output has been copied, and no reset followed it yet
	inDone  chan struct{}
	outDone chan struct{}
}

// newPTY opens a pseudo-terminal for the agent with the modes and size
// of the person's terminal tty: its master (non-blocking) and its slave.
func newPTY(tty int) (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("a terminal of the agent's own: open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		unix.Close(m)
		return nil, nil, fmt.Errorf("a terminal of the agent's own: %s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlock", err)
	}
	// The slave by the master, not by a path in /dev/pts (TIOCGPTPEER).
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return fail("open its slave", errno)
	}
	if t, err := unix.IoctlGetTermios(tty, unix.TCGETS); err == nil {
		unix.IoctlSetTermios(int(s), unix.TCSETS, t)
	}
	if ws, err := unix.IoctlGetWinsize(tty, unix.TIOCGWINSZ); err == nil {
		unix.IoctlSetWinsize(m, unix.TIOCSWINSZ, ws)
	}
	return os.NewFile(uintptr(m), "agent pty master"), os.NewFile(s, "agent pty"), nil
}

// sameTerminal reports whether f is the terminal tty is (the same
// device), whatever descriptor it is.
func sameTerminal(f *os.File, tty int) bool {
	if f == nil {
		return false
	}
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Fstat(tty, &b) != nil {
		return false
	}
	return a.Mode&unix.S_IFMT == unix.S_IFCHR && a.Rdev == b.Rdev
}

// newRelay starts copying the agent's output (at once: stage 2's own
// errors are written there) from master to the person's terminal tty;
// keys are copied from start on. readKeys says whether the launcher's
// stdin is that terminal (else keys are never copied).
func newRelay(tty int, master *os.File, out io.Writer, readKeys bool) (*ptyRelay, error) {
	r := &ptyRelay{tty: tty, master: master, in: -1, out: out, inDone: make(chan struct{}), outDone: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	if t, err := unix.IoctlGetTermios(tty, unix.TCGETS); err == nil {
		r.modes = *t
	} else {
		return nil, fmt.Errorf("the terminal's modes: %w", err)
	}
	if readKeys {
		// A descriptor of the launcher's own, so that O_NONBLOCK does not
		// reach the shell's (a shared open file description).
		in, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", tty), unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return nil, fmt.Errorf("open the terminal again, for the agent's keys: %w", err)
		}
		r.in = in
		go r.keys()
	} else {
		close(r.inDone)
	}
	go r.output()
	return r, nil
}

// output copies the agent's output until every descriptor of the slave
// is closed (EIO).
func (r *ptyRelay) output() {
	defer close(r.outDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.master.Read(buf)
		if n > 0 {
			// Not while held: a question is drawn with nothing after it
			// (SR-43), and what the agent wrote just before it was
			// frozen, still in its terminal's buffer, came after the
			// question. Written under mu, so that once hold returns no
			// write of the agent's output is under way either.
			r.mu.Lock()
			for r.holds > 0 && !r.closed {
				r.cond.Wait()
			}
			r.out.Write(buf[:n])
			r.wrote = true
			r.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// keys copies what the person types to the agent, while copying is on.
// A read of the person's terminal is made only under mu with copying on,
// so that hold and pause, once they return, know no key is taken after.
// A read made in the background would stop the launcher (SIGTTIN): the
// relay is on only while the launcher is the foreground job.
func (r *ptyRelay) keys() {
	defer close(r.inDone)
	buf := make([]byte, 4096)
	fds := []unix.PollFd{{Fd: int32(r.in), Events: unix.POLLIN}}
	for {
		r.mu.Lock()
		for !r.closed && !(r.started && r.holds == 0) {
			r.cond.Wait()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		// Bounded, so that a hold or the end is seen without a key.
		if _, err := unix.Poll(fds, 100); err != nil && err != unix.EINTR {
			return
		}
		if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		r.mu.Lock()
		n := 0
		var err error
		if !r.closed && r.started && r.holds == 0 {
			n, err = unix.Read(r.in, buf)
		}
		r.mu.Unlock()
		if n > 0 {
			keys, suspend := r.untilSuspend(buf[:n])
			if werr := r.send(keys); werr != nil {
				return
			}
			if suspend {
				r.awaitStop()
			}
		} else if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			return
		}
	}
}

// untilSuspend is keys up to and with the first key that makes the
// agent's terminal send a signal (Ctrl-C, Ctrl-\, Ctrl-Z, by its modes),
// and whether that key was the suspend key. What follows such a key in
// the same read is dropped, as the kernel's terminal drops what is queued
// behind it (unless the agent set NOFLSH): on the person's own terminal,
// Ctrl-Z and then a line typed for the shell reached the shell, and what
// the relay has read cannot be given back to it.
func (r *ptyRelay) untilSuspend(keys []byte) ([]byte, bool) {
	t, err := unix.IoctlGetTermios(int(r.master.Fd()), unix.TCGETS)
	if err != nil || t.Lflag&unix.ISIG == 0 || t.Lflag&unix.NOFLSH != 0 {
		return keys, false
	}
	for i, k := range keys {
		for _, c := range []int{unix.VINTR, unix.VQUIT, unix.VSUSP} {
			if k != 0 && k == t.Cc[c] {
				return keys[:i+1], c == unix.VSUSP
			}
		}
	}
	return keys, false
}

// awaitStop reads no key for a moment after a suspend key: the agent's
// stop, once stage 2 reports it, holds the relay (stopped), and the keys
// typed next are the shell's. An agent that does not stop (it handles
// SIGTSTP) gets them after the moment.
func (r *ptyRelay) awaitStop() {
	deadline := time.Now().Add(suspendWait)
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.holds == 0 && !r.closed && time.Now().Before(deadline) {
		r.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		r.mu.Lock()
	}
}

// suspendWait bounds awaitStop.
const suspendWait = 500 * time.Millisecond

// send writes keys to the master, waiting (bounded by the end) while the
// agent's input is full.
func (r *ptyRelay) send(b []byte) error {
	fds := []unix.PollFd{{Fd: int32(r.master.Fd()), Events: unix.POLLOUT}}
	for len(b) > 0 {
		n, err := unix.Write(int(r.master.Fd()), b)
		if n > 0 {
			b = b[n:]
			continue
		}
		if err != unix.EAGAIN && err != unix.EINTR {
			return err
		}
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return nil
		}
		unix.Poll(fds, 100)
	}
	return nil
}

// start puts the person's terminal in raw mode (the agent's pty does the
// line editing, echo and signals, by the agent's own modes) and copies
// keys from now on. The launcher must be the foreground job.
func (r *ptyRelay) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.setRaw(); err != nil {
		return err
	}
	r.started = true
	r.cond.Broadcast()
	return nil
}

func (r *ptyRelay) setRaw() error {
	if r.in < 0 {
		return nil // keys are not copied: the person's terminal keeps its modes
	}
	raw := r.modes
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(r.tty, unix.TCSETS, &raw); err != nil {
		return fmt.Errorf("set the terminal's modes for the agent's keys: %w", err)
	}
	r.raw = true
	return nil
}

// cooked sets the person's terminal's modes back, if the relay changed
// them; the launcher must be the foreground job.
func (r *ptyRelay) cooked() {
	if r.raw {
		unix.IoctlSetTermios(r.tty, unix.TCSETS, &r.modes)
		r.raw = false
	}
}

// hold stops copying keys, and gives the person's terminal its own modes
// back, until release: while the agent is stopped (Ctrl-Z) or a question
// is asked. Holds nest.
func (r *ptyRelay) hold() (release func()) {
	r.mu.Lock()
	r.holds++
	if r.holds == 1 && isForegroundFD(r.tty) {
		r.cooked()
	}
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.holds--
			if r.holds == 0 && r.started && isForegroundFD(r.tty) {
				r.setRaw()
			}
			r.cond.Broadcast()
		})
	}
}

// resize gives the agent's terminal the person's terminal's size (the
// kernel then sends the agent's foreground SIGWINCH).
func (r *ptyRelay) resize() {
	if ws, err := unix.IoctlGetWinsize(r.tty, unix.TIOCGWINSZ); err == nil {
		unix.IoctlSetWinsize(int(r.master.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// finish stops copying keys, waits (bounded) for the agent's last output
// and closes the master. Stage 2 has exited: every process of the
// agent's pid namespace is gone, and the slave with them.
func (r *ptyRelay) finish() {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	drained := true
	select {
	case <-r.outDone:
	case <-time.After(2 * time.Second):
		drained = false // output may still come: a reset would not be last
	}
	<-r.inDone
	r.mu.Lock()
	if r.wrote && drained {
		r.out.Write([]byte(endReset))
		r.wrote = false
	}
	r.mu.Unlock()
	r.master.Close()
	if r.in >= 0 {
		unix.Close(r.in)
		r.in = -1
	}
}

// endReset follows the agent's last output: reporting modes it may have
// turned on and left (mouse in each encoding, focus, bracketed paste)
// would have the person's terminal send reports to the person's shell as
// typed input, and a hidden cursor or an open sequence would stay. It
// first ends a sequence or string left open (CAN, ST), then turns the
// reports off, shows the cursor and resets attributes and character
// set. A terminal ignores what it does not know. The screen is left as
// it is (leaving an alternate screen the agent did not enter would move
// the cursor), and so are the terminal's answers to reports the agent
// asked for, which may still come (SD-23).
const endReset = "\x18\x1b\\" +
	"\x1b[?1000l\x1b[?1001l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\x1b[?2004l" +
	"\x1b[?25h\x1b[0m\x1b(B\x0f"
