package probe

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func atoi(s, what string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, probeError{fmt.Sprintf("%s %q: want an integer in [%d, %d]", what, s, lo, hi)}
	}
	return n, nil
}

func killPid(pid, sig string) error {
	p, err := atoi(pid, "pid", 1, 1<<22)
	if err != nil {
		return err
	}
	s, err := atoi(sig, "signal", 0, 64)
	if err != nil {
		return err
	}
	return unix.Kill(p, unix.Signal(s))
}

// killGroup sends sig to this process's whole process group, kill(0,
// sig), ignoring sig itself: ok when the kernel delivered it to any
// member (this process among them), so what it reached shows only in
// the other members.
func killGroup(sig string) error {
	s, err := atoi(sig, "signal", 1, 64)
	if err != nil {
		return err
	}
	signal.Ignore(unix.Signal(s))
	return unix.Kill(0, unix.Signal(s))
}

// others reaches another process two ways: a signal to pid (0: is it
// there) and a trace of a child of its own, a process it can see. ok
// when either works, else the signal's error: the pid namespace hides
// pid and seccomp refuses ptrace, and dropping either shows (the
// register's SR-29).
func (p prober) others(a []string) error {
	first := killPid(a[0], "0")
	if first == nil {
		return nil
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	kid, err := syscall.ForkExec(exe, p.argv(exe, "sleep", "5"), &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 2, 2}})
	if err != nil {
		return setupErr("start a child", err)
	}
	defer func() {
		unix.Kill(kid, unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(kid, &ws, 0, nil)
	}()
	runtime.LockOSThread() // ptrace requests belong to the thread that attached
	if unix.PtraceSeize(kid) == nil {
		return nil
	}
	// The other ways at a process of one's own that the filter refuses
	// (without them SR-29's check passed with their rules off, a
	// mutation audit): its memory (this same executable, not
	// position-independent, has memProbe where this process does), its
	// descriptors, and a comparison of them with one's own.
	var b [8]byte
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&memProbe[0])), Len: len(b)}}
	if _, err := unix.ProcessVMReadv(kid, local, remote, 0); err == nil {
		return nil
	}
	if pidfd, err := unix.PidfdOpen(kid, 0); err == nil {
		fd, err := unix.PidfdGetfd(pidfd, 0, 0)
		unix.Close(pidfd)
		if err == nil {
			unix.Close(fd)
			return nil
		}
	}
	const kcmpFile = 0 // KCMP_FILE, <linux/kcmp.h>
	if _, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(kid), kcmpFile, 0, 0, 0); e == 0 {
		return nil
	}
	return first
}

// memProbe is what others reads in its child's memory.
var memProbe = [8]byte{'p', 'i', 'n', 'f', 'o', 'l', 'd'}

// ptracePid seizes pid without stopping it; the kernel detaches when the
// probe exits.
func ptracePid(pid string) error {
	p, err := atoi(pid, "pid", 1, 1<<22)
	if err != nil {
		return err
	}
	runtime.LockOSThread() // ptrace requests belong to the thread that attached
	return unix.PtraceSeize(p)
}

// steer sets, each to what it already is, the settings of process pid
// that the kernel lets any process of its uid change, dumpable or not:
// the open-file limit, the nice value, the scheduling policy, the CPU
// affinity and the I/O priority. Nothing changes, but each call needs the
// right to change it. The sandbox's init (pid 1) is of the agent's uid:
// with these a hunt denied it files and starved it, and its Ctrl-Z watch
// went blind. Every call is made, so that one refused does not hide
// another allowed.
func steer(pid string) error {
	p := os.Getpid()
	if pid != "self" {
		var err error
		if p, err = atoi(pid, "pid", 1, 1<<22); err != nil {
			return err
		}
	}
	calls := []struct {
		name string
		do   func() error
	}{
		{"prlimit", func() error {
			var l unix.Rlimit
			if err := unix.Prlimit(p, unix.RLIMIT_NOFILE, nil, &l); err != nil {
				return err
			}
			return unix.Prlimit(p, unix.RLIMIT_NOFILE, &l, nil)
		}},
		{"setpriority", func() error {
			// getpriority's raw value is 20 - nice (never negative).
			v, err := unix.Getpriority(unix.PRIO_PROCESS, p)
			if err != nil {
				return err
			}
			return unix.Setpriority(unix.PRIO_PROCESS, p, 20-v)
		}},
		{"sched_setscheduler", func() error {
			policy, _, errno := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(p), 0, 0)
			if errno != 0 {
				return errno
			}
			var prio int32
			if _, _, errno := unix.Syscall(unix.SYS_SCHED_GETPARAM, uintptr(p), uintptr(unsafe.Pointer(&prio)), 0); errno != 0 {
				return errno
			}
			if _, _, errno := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(p), policy, uintptr(unsafe.Pointer(&prio))); errno != 0 {
				return errno
			}
			return nil
		}},
		{"sched_setaffinity", func() error {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(p, &set); err != nil {
				return err
			}
			return unix.SchedSetaffinity(p, &set)
		}},
		{"ioprio_set", func() error {
			const whoProcess = 1 // IOPRIO_WHO_PROCESS
			prio, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, whoProcess, uintptr(p), 0)
			if errno != 0 {
				return errno
			}
			if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, uintptr(p), prio); errno != 0 {
				return errno
			}
			return nil
		}},
	}
	var errs []error
	var each []string
	for _, c := range calls {
		err := c.do()
		errs = append(errs, err)
		each = append(each, fmt.Sprintf("%s: %v", c.name, err))
	}
	if slices.ContainsFunc(errs, func(e error) bool { return e != errs[0] }) {
		// Some refused and some not, or refused for different reasons.
		return Broken("the calls differ: " + strings.Join(each, "; "))
	}
	return errs[0]
}

// executable is the probe's executable, for actions that run it again.
func executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", setupErr("own executable", err)
	}
	return p, nil
}

// setuidExec runs path with `euid` and prints the line it printed; with
// a second argument, it then makes that file and tries to give it the
// set-uid bit, and says how that went on the same line. An exec refusal
// is reported as denied.
func (p prober) setuidExec(a []string) {
	path := a[0]
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		broke(setupErr("pipe", err))
	}
	pid, err := syscall.ForkExec(path, p.argv(path, "euid"), &syscall.ProcAttr{
		Env: []string{}, Files: []uintptr{0, uintptr(pipe[1]), 2},
	})
	unix.Close(pipe[1])
	if err != nil {
		report(err)
	}
	out, _ := readAll(pipe[0], 256)
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	line := strings.TrimSpace(string(out))
	if !ws.Exited() || ws.ExitStatus() != 0 || !strings.HasPrefix(line, "euid ") || strings.Contains(line, "\n") {
		broke(fmt.Errorf("%s printed %q, status %#x", path, out, uint32(ws)))
	}
	if len(a) == 2 {
		file := a[1] + "." + strconv.Itoa(os.Getpid()) // the confined run and its control share the directory
		fd, err := unix.Open(file, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o755)
		if err != nil {
			broke(setupErr("make "+file, err))
		}
		unix.Close(fd)
		if err := unix.Chmod(file, 0o4755); err != nil {
			name := unix.ErrnoName(err.(syscall.Errno))
			line += " chmod denied " + name
		} else {
			line += " chmod ok"
		}
	}
	fmt.Println(line)
	os.Exit(0)
}

func readAll(fd, max int) ([]byte, error) {
	var out []byte
	buf := make([]byte, max)
	for len(out) < max {
		n, err := unix.Read(fd, buf[:max-len(out)])
		if n <= 0 || err != nil {
			return out, err
		}
		out = append(out, buf[:n]...)
	}
	return out, nil
}

func findSleep() string {
	for _, p := range []string{"/usr/bin/sleep", "/bin/sleep"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	broke(fmt.Errorf("no sleep binary in /usr/bin or /bin"))
	return ""
}

// forkBomb starts up to n `sleep 5` children, stopping at the first
// refusal, then kills and reaps every one it started.
func forkBomb(arg string) {
	n, err := atoi(arg, "count", 1, 1000)
	if err != nil {
		broke(err)
	}
	sleep := findSleep()
	var pids []int
	var stop error
	for range n {
		pid, err := syscall.ForkExec(sleep, []string{sleep, "5"}, &syscall.ProcAttr{Files: []uintptr{0, 2, 2}})
		if err != nil {
			stop = err
			break
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGKILL)
	}
	for _, pid := range pids {
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
	}
	line := fmt.Sprintf("forked %d of %d", len(pids), n)
	if errno, ok := stop.(syscall.Errno); ok {
		line += " " + unix.ErrnoName(errno)
	} else if stop != nil {
		line += " error " + stop.Error()
	}
	fmt.Println(line)
	os.Exit(0)
}

// parseSize reads BYTES with an optional KiB, MiB or GiB suffix.
func parseSize(s string) (int, error) {
	mult := 1
	for suf, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if t, ok := strings.CutSuffix(s, suf); ok {
			s, mult = t, m
		}
	}
	n, err := atoi(s, "size", 1, 1<<40)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

// alloc maps size bytes and touches every page, so that the memory is
// really charged: a memory cgroup kills the probe (no line), an address
// space limit refuses the mapping (ENOMEM).
func alloc(arg string) error {
	size, err := parseSize(arg)
	if err != nil {
		return err
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	// Huge pages where the kernel has them: touching 4 GiB a 4 KiB page
	// at a time costs seconds of page faults; the charge is the same.
	unix.Madvise(mem, unix.MADV_HUGEPAGE)
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	return unix.Munmap(mem)
}

// unshareUser forks a child that unshares a user namespace (the Go
// runtime is multithreaded, so the probe itself could not) and execs
// this probe's `noop`.
// kernelSurface tries, one after another, what SR-30 refuses and an
// unprivileged process may otherwise do: a user namespace (unshare, in
// a child), the session keyring (keyctl), an io_uring and a personality
// flag (ADDR_NO_RANDOMIZE, put back at once). ok when any works, else
// the first error. (The mount calls need CAP_SYS_ADMIN, which the agent
// lacks anyway: they would not show seccomp's rule gone.)
func (p prober) kernelSurface([]string) error {
	var first error
	for _, try := range []func() error{
		func() error { return p.unshareUser(nil) },
		func() error { _, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false); return err },
		func() error {
			var params [120]byte // struct io_uring_params
			fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
			if e != 0 {
				return e
			}
			return unix.Close(int(fd))
		},
		func() error {
			const addrNoRandomize = 0x0040000 // <linux/personality.h>
			old, _, e := unix.Syscall(unix.SYS_PERSONALITY, addrNoRandomize, 0, 0)
			if e != 0 {
				return e
			}
			unix.Syscall(unix.SYS_PERSONALITY, old, 0, 0)
			return nil
		},
		// Calls an unprivileged process may make where no filter refuses
		// them: a user-space counter on itself (perf_event_paranoid up to
		// 2), a userfaultfd for user-space faults alone (Linux 5.11+, even
		// with vm.unprivileged_userfaultfd = 0), its own LDT. Without them
		// the check passed with their rules off (a mutation audit).
		func() error {
			attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
				Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
			attr.Size = uint32(unsafe.Sizeof(attr))
			fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return err
			}
			return unix.Close(fd)
		},
		func() error {
			const uffdUserModeOnly = 1 // UFFD_USER_MODE_ONLY, <linux/userfaultfd.h>
			fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0)
			if e != 0 {
				return e
			}
			return unix.Close(int(fd))
		},
		readLDT,
	} {
		err := try()
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

func (p prober) unshareUser([]string) error {
	exe, err := executable()
	if err != nil {
		return err
	}
	return runChild(exe, p.argv(exe, "noop"), &syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWUSER})
}

func unshareMount() error {
	runtime.LockOSThread() // the new namespace belongs to this thread only
	return unix.Unshare(unix.CLONE_NEWNS)
}

// tiocsti pushes one byte into stdin's input queue.
func tiocsti() error {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return setupErr("stdin is not a terminal", err)
	}
	return unix.IoctlSetPointerInt(0, unix.TIOCSTI, 'x') // the ioctl reads one char at the pointer
}

// ttyIoctl makes one of the terminal ioctls SR-17 refuses on stdin,
// leaving the terminal as it was: TIOCSTI (also with bit 32 of the
// command set, which the kernel drops, as the filter must), TIOCLINUX
// (a console's: a pseudo-terminal answers ENOTTY), TIOCSETD to N_TTY,
// TCXONC with TCOON, and TIOCEXCL undone with TIOCNXCL.
func ttyIoctl(which string) error {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return setupErr("stdin is not a terminal", err)
	}
	ioctl := func(cmd uint64, arg uintptr) error {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(cmd), arg); e != 0 {
			return e
		}
		return nil
	}
	c, disc := byte('x'), int32(0) // N_TTY, <linux/tty.h>
	sub := byte(0)                 // TIOCLINUX's subcode; none is valid on a pseudo-terminal
	switch which {
	case "sti":
		return ioctl(unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	case "sti-high":
		return ioctl(1<<32|unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	case "linux":
		return ioctl(unix.TIOCLINUX, uintptr(unsafe.Pointer(&sub)))
	case "setd":
		return ioctl(unix.TIOCSETD, uintptr(unsafe.Pointer(&disc)))
	case "xonc":
		return ioctl(unix.TCXONC, unix.TCOON)
	case "excl":
		if err := ioctl(unix.TIOCEXCL, 0); err != nil {
			return err
		}
		return ioctl(unix.TIOCNXCL, 0)
	}
	return probeError{fmt.Sprintf("tty-ioctl %q: want sti, sti-high, linux, setd, xonc or excl", which)}
}

// noEcho turns stdin's echo off and leaves it so.
func noEcho() error {
	t, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		return setupErr("stdin is not a terminal", err)
	}
	t.Lflag &^= unix.ECHO
	return unix.IoctlSetTermios(0, unix.TCSETS, t)
}

// memfdExec creates a memfd (flags 0 as most programs do, or MFD_EXEC),
// copies this probe into it and runs it through /proc/self/fd, which is
// how libcs implement fexecve.
func (p prober) memfdExec(args []string) error {
	flags := 0
	switch {
	case len(args) == 1 && args[0] == "exec":
		flags = unix.MFD_EXEC
	case len(args) != 0:
		return probeError{fmt.Sprintf("memfd-exec %q: want no argument or `exec`", args)}
	}
	fd, err := unix.MemfdCreate("pinfold-probe", flags)
	if err != nil {
		return err
	}
	b, err := selfBytes()
	if err != nil {
		return err
	}
	if err := copyInto(fd, b); err != nil {
		return setupErr("write memfd", err)
	}
	path := "/proc/self/fd/" + strconv.Itoa(fd)
	return runChild(path, p.argv("memfd", "noop"), nil)
}

// spawnSleep leaves this probe's `sleep 60 MARKER` behind in its own session,
// detached from the probe's stdio, and exits.
func (p prober) spawnSleep(marker string) {
	exe, err := executable()
	if err != nil {
		broke(err)
	}
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	if err != nil {
		broke(setupErr("open /dev/null", err))
	}
	proc, err := os.StartProcess(exe, p.argv(exe, "sleep", "60", marker), &os.ProcAttr{
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		report(err)
	}
	fmt.Printf("spawned %d\n", proc.Pid)
	os.Exit(0)
}

func sleepFor(args []string) error {
	if len(args) == 0 {
		return probeError{"sleep: want SECS"}
	}
	n, err := atoi(args[0], "seconds", 0, 120)
	if err != nil {
		return err
	}
	time.Sleep(time.Duration(n) * time.Second)
	return nil
}

// ttySteal is an agent after the person's terminal: it starts
// `tty-steal-child SECS FILE` in a process group of its own (on the same
// terminal), with `sigcont-loop` beside it in that group; the child
// ignores SIGTTOU and SIGTTIN, waits SECS seconds, makes
// its group the terminal's foreground, and writes what it reads there to
// FILE for eight seconds. This process then sleeps a minute, as an agent
// in the foreground would until the person stops it (Ctrl-Z).
func (p prober) ttySteal(secs, file string) error {
	exe, err := executable()
	if err != nil {
		return setupErr("own executable", err)
	}
	proc, err := os.StartProcess(exe, p.argv(exe, "tty-steal-child", secs, file), &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return err
	}
	// And beside it, in its group, one that keeps continuing the group
	// (SIGCONT), so that a stop that reaches one process at a time is
	// undone behind it.
	helper, err := os.StartProcess(exe, p.argv(exe, "sigcont-loop", strconv.Itoa(proc.Pid), "15"), &os.ProcAttr{
		Files: []*os.File{nil, nil, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pgid: proc.Pid},
	})
	if err != nil {
		return err
	}
	helper.Release()
	proc.Release()
	time.Sleep(time.Minute)
	return nil
}

// sigcontLoop sends SIGCONT to process group pgid, without pause, for
// secs seconds (ignoring SIGTTOU and SIGTTIN).
func sigcontLoop(pgid, secs string) error {
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	g, err := atoi(pgid, "pgid", 1, 1<<22)
	if err != nil {
		return err
	}
	n, err := atoi(secs, "seconds", 0, 60)
	if err != nil {
		return err
	}
	for end := time.Now().Add(time.Duration(n) * time.Second); time.Now().Before(end); {
		syscall.Kill(-g, syscall.SIGCONT)
		time.Sleep(200 * time.Microsecond) // often, without taking a CPU from the rest
	}
	return nil
}

// ttyResume is an agent that will not stay stopped: a POSIX timer sends
// it SIGCONT every 20 ms, which continues a stopped process whoever
// stopped it. After secs seconds it takes the terminal's foreground again
// and again (SIGTTOU ignored) and writes what it reads there to file, for
// eight seconds: once the person's shell has the terminal after Ctrl-Z,
// what the person types.
func ttyResume(secs, file string) error {
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	// Handled, not left to its default (ignored): the kernel parks a
	// timer whose signal is ignored.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGCONT)
	n, err := atoi(secs, "seconds", 0, 60)
	if err != nil {
		return err
	}
	// struct sigevent: value, signo, notify (SIGEV_SIGNAL is 0), padding.
	var ev [64]byte
	binary.NativeEndian.PutUint32(ev[8:], uint32(syscall.SIGCONT))
	var timer int32
	if _, _, e := unix.Syscall(unix.SYS_TIMER_CREATE, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ev[0])), uintptr(unsafe.Pointer(&timer))); e != 0 {
		return fmt.Errorf("timer_create: %w", e)
	}
	every := unix.NsecToTimespec(int64(20 * time.Millisecond))
	spec := [2]unix.Timespec{every, every} // interval, first
	if _, _, e := unix.Syscall6(unix.SYS_TIMER_SETTIME, uintptr(timer), 0, uintptr(unsafe.Pointer(&spec[0])), 0, 0, 0); e != 0 {
		return fmt.Errorf("timer_settime: %w", e)
	}
	time.Sleep(time.Duration(n) * time.Second)
	return copyTerminal(file, true)
}

// copyTerminal writes what is read from the terminal (stdin) to file for
// eight seconds, or until the terminal ends. With retake, it makes its
// process group the terminal's foreground again before each read.
func copyTerminal(file string, retake bool) error {
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	buf := make([]byte, 256)
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
		wait := int(time.Until(end).Milliseconds()) + 1
		if retake {
			unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
			wait = 20
		}
		fds := []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, wait); err != nil && err != unix.EINTR || n == 0 {
			continue
		}
		k, err := syscall.Read(0, buf)
		if k > 0 {
			out.Write(buf[:k])
		}
		if !retake && (err != nil && err != syscall.EINTR || k == 0) {
			break
		}
	}
	return nil
}

// ttyStealChild is ttySteal's child (see there).
func ttyStealChild(secs, file string) error {
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	n, err := atoi(secs, "seconds", 0, 60)
	if err != nil {
		return err
	}
	time.Sleep(time.Duration(n) * time.Second)
	if err := unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
		return err
	}
	// Again before each read: the person's shell takes the foreground
	// back when its read fails, and a helper that took it once lost the
	// race now and then (the unconfined control failed, proving nothing).
	return copyTerminal(file, true)
}

// keyLists reports whether the kernel's key lists show this uid anything.
// The user keyring is made on first use: asking for its id makes it, so
// that the control has something to list.
func keyLists() error {
	unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, true)
	for _, path := range []string{"/proc/keys", "/proc/key-users"} {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) != "" {
			return nil
		}
	}
	return Denied{"empty"}
}
