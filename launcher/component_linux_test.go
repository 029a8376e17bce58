package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const componentProbeEnv = "PINFOLD_COMPONENT_PROBE"

// TestComponentProbeChild is not a test: it is the child that
// TestConfineComponent re-executes. It tries four things, confines itself
// as kms does (unless told "control"), tries them again and prints both
// rounds.
func TestComponentProbeChild(t *testing.T) {
	mode := os.Getenv(componentProbeEnv)
	if mode == "" {
		return
	}
	// The tries run on a thread that existed before the confinement (a
	// goroutine locked to it), so every thread must have been confined,
	// not only the one that called ConfineComponent.
	ask, answer := make(chan struct{}), make(chan string)
	go func() {
		runtime.LockOSThread()
		<-ask
		answer <- componentTries()
	}()
	if mode == "write" {
		// fs's confinement, under the landlock-abi wrapper.
		if err := ConfineComponent(ComponentConfinement{Write: []string{os.TempDir()}}); err != nil {
			fmt.Printf("confine: %v\n", err)
			os.Exit(1)
		}
		fmt.Println("confined")
		os.Exit(0)
	}
	if mode == "signal" {
		// A Code Mode worker's confinement, as an unprivileged code run
		// has it: the person's uid (here nobody), no pid namespace.
		if err := syscall.Setgid(nobody); err != nil {
			fmt.Printf("setgid: %v\n", err)
			os.Exit(1)
		}
		if err := syscall.Setuid(nobody); err != nil {
			fmt.Printf("setuid: %v\n", err)
			os.Exit(1)
		}
		if err := ConfineComponent(ComponentConfinement{}); err != nil {
			fmt.Printf("confine: %v\n", err)
			os.Exit(1)
		}
		if f := os.Getenv(componentProbeEnv + "_FILE"); f != "" {
			var errno unix.Errno
			res := "ok"
			if err := unix.Truncate(f, 0); errors.As(err, &errno) {
				res = unix.ErrnoName(errno)
			}
			fmt.Printf("truncate=%s ", res)
		}
		fmt.Println(signalTries(os.Getenv(componentProbeEnv + "_PID")))
		os.Exit(0)
	}
	if mode == "confined" {
		if err := ConfineComponent(ComponentConfinement{}); err != nil {
			fmt.Printf("confine: %v\n", err)
			os.Exit(1)
		}
	}
	ask <- struct{}{}
	fmt.Println(<-answer)
	os.Exit(0)
}

// tried is what a try printed: the errno's name, "error", or "ok".
func tried(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	if err != nil {
		return "error"
	}
	return "ok"
}

// componentTries reads a file, makes an IP socket and a Unix socket,
// execs a program (in a child, which reports only whether execve worked),
// forks (a child that exits at once) and starts new threads.
func componentTries() string {
	_, err := os.ReadFile("/etc/passwd")
	out := []string{"read=" + tried(err)}
	for name, family := range map[string]int{"inet": unix.AF_INET, "unix": unix.AF_UNIX} {
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		out = append(out, name+"="+tried(err))
	}
	// syscall.ForkExec, not os/exec, which would open /dev/null first.
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err == nil {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	}
	out = append(out, "exec="+tried(err))
	out = append(out, "fork="+tried(rawFork()), "threads="+tried(newThreads(32)))
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	out = append(out, fmt.Sprintf("dumpable=%d", d))
	return strings.Join(out, " ")
}

// A component confined with nothing granted (kms) can read no file, make
// no socket and run no program; the same child unconfined does all four.
func TestConfineComponent(t *testing.T) {
	requireFeature(t, "Landlock", probeLandlock().ABI >= 1, probeLandlock().Detail)
	run := func(mode string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestComponentProbeChild$")
		cmd.Env = append(os.Environ(), componentProbeEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", mode, err, out)
		}
		line, _, _ := strings.Cut(string(out), "\n")
		return line
	}
	control := run("control")
	for _, want := range []string{"read=ok", "inet=ok", "unix=ok", "exec=ok", "fork=ok", "threads=ok", "dumpable=1"} {
		if !strings.Contains(control, want) {
			t.Fatalf("control: %q lacks %q", control, want)
		}
	}
	got := run("confined")
	for _, want := range []string{"read=EACCES", "inet=EPERM", "unix=EPERM", "exec=EPERM", "fork=EPERM", "threads=ok", "dumpable=0"} {
		if !strings.Contains(got, want) {
			t.Errorf("confined: %q lacks %q", got, want)
		}
	}
}

// rawFork makes a child process the way fork does (clone with SIGCHLD
// alone: no exec to fail after it) and reaps it; the child exits at once,
// before it runs any Go code that could need the runtime.
//
//go:nosplit
func rawFork() error {
	pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, err := unix.Wait4(int(pid), &ws, 0, nil)
	return err
}

// newThreads has n goroutines each hold a thread of its own (locked) at
// the same time and checks that they are n threads: with n above what
// the runtime had (a test binary runs a handful), it has to start new
// ones, and a thread the kernel refused would crash the runtime ("failed
// to create new OS thread"), failing the child.
func newThreads(n int) error {
	tids := make(chan int, n)
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	for range n {
		go func() {
			runtime.LockOSThread()
			tids <- unix.Gettid()
			ready.Done()
			release.Wait()
		}()
	}
	ready.Wait()
	release.Done()
	close(tids)
	seen := map[int]bool{}
	for tid := range tids {
		seen[tid] = true
	}
	if len(seen) != n {
		return fmt.Errorf("%d goroutines locked to threads ran on %d", n, len(seen))
	}
	return nil
}

// A component with write paths (fs) refuses to confine itself below the
// ABI whose truncate right its write rules need, as a launch with write
// paths does (SR-24), and never runs with truncate(2) unchecked.
func TestIntegrationComponentWriteFloor(t *testing.T) {
	requireIntegration(t)
	for _, c := range []struct {
		abi  int
		want string
	}{
		{2, "confine: landlock: a component confines itself with Landlock ABI 3 or more (write rules need the truncate right); this kernel has 2"},
		{3, "confined"},
	} {
		cmd := exec.Command(itEnv.launcher, "__pinfold_probe", "landlock-abi", fmt.Sprint(c.abi), os.Args[0], "-test.run=^TestComponentProbeChild$")
		cmd.Env = append(os.Environ(), componentProbeEnv+"=write")
		out, _ := cmd.CombinedOutput()
		if line, _, _ := strings.Cut(string(out), "\n"); line != c.want {
			t.Errorf("ABI %d: want %q, got %q", c.abi, c.want, out)
		}
	}
}

// signalTries signals another process of its uid (pid), and itself, every
// way it can: kill, tgkill, rt_sigqueueinfo, a pidfd, and SIGIO by
// F_SETOWN on a pipe it writes. Signal 0 checks permission alone, and
// SIGCONT to a running process changes nothing.
func signalTries(pid string) string {
	var target int
	fmt.Sscan(pid, &target)
	out := []string{"kill=" + tried(unix.Kill(target, 0)), "killall=" + tried(unix.Kill(-1, 0))}
	out = append(out, "tgkill="+tried(unix.Tgkill(target, target, 0)))
	var info unix.Siginfo
	_, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(target), uintptr(unix.SIGCONT), uintptr(unsafe.Pointer(&info)))
	out = append(out, "sigqueue="+tried(errnoErr(e)))
	fd, err := unix.PidfdOpen(target, 0)
	if err == nil {
		err = unix.PidfdSendSignal(fd, 0, nil, 0)
		unix.Close(fd)
	}
	out = append(out, "pidfd="+tried(err))
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err == nil {
		_, err = unix.FcntlInt(uintptr(p[0]), unix.F_SETOWN, target)
		out = append(out, "setown="+tried(err))
	}
	out = append(out, "self="+tried(unix.Kill(os.Getpid(), 0)), "selftgkill="+tried(unix.Tgkill(os.Getpid(), unix.Gettid(), 0)))
	return strings.Join(out, " ")
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// A Code Mode worker run unprivileged has the person's uid and no pid or
// mount namespace: without Landlock's signal scope (ABI < 6) nothing but
// its own confinement keeps it from signalling every process of that
// uid, and without Landlock's truncate right (ABI < 3) from emptying
// every file of it by truncate(2). It signals only itself and truncates
// nothing, at every ABI.
func TestIntegrationComponentLowerABI(t *testing.T) {
	requireIntegration(t)
	sleeper := exec.Command("/bin/sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	dir, err := os.MkdirTemp("", "pinfold-signal-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("data"), 0o644)
	os.Chown(victim, nobody, nobody)
	for abi := 1; abi <= 7; abi++ {
		cmd := exec.Command(itEnv.launcher, "__pinfold_probe", "landlock-abi", fmt.Sprint(abi), os.Args[0], "-test.run=^TestComponentProbeChild$")
		cmd.Env = append(os.Environ(), componentProbeEnv+"=signal", fmt.Sprintf("%s_PID=%d", componentProbeEnv, sleeper.Process.Pid), componentProbeEnv+"_FILE="+victim)
		out, _ := cmd.CombinedOutput()
		line, _, _ := strings.Cut(string(out), "\n")
		// kill(-1) reaches only the caller's own processes, which it
		// leaves out, and rt_sigqueueinfo with a positive si_code only
		// itself: EPERM from seccomp or the kernel, never sent.
		for _, want := range []string{"truncate=EACCES", "kill=EPERM", "killall=EPERM", "tgkill=EPERM", "sigqueue=EPERM", "pidfd=EPERM", "setown=EPERM", "self=ok", "selftgkill=ok"} {
			if !strings.Contains(" "+line+" ", " "+want+" ") {
				t.Errorf("ABI %d: %q lacks %q", abi, line, want)
			}
		}
	}
}
