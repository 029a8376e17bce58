package probe

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// action is one probe. It returns nil for ok, an errno for a refusal, and
// any other error when the probe could not tell.
type action struct {
	args int // number of arguments, -1: any
	run  func(p prober, args []string) error
	help string
}

// prober is one run of the probe. self is the argv prefix, after the
// executable, that makes this executable the probe again: empty for the
// probe program, [Entry] for the launcher.
type prober struct {
	self []string
}

// argv is the argv that runs ACTION ARGS... in a copy of this executable
// started as argv0.
func (p prober) argv(argv0 string, action ...string) []string {
	return append(append([]string{argv0}, p.self...), action...)
}

// actions is the table of probes: these and the ones Register added.
// It is made on first use (sync.OnceValue): every launcher process links
// this package, and only a probe reads the table.
var actions = sync.OnceValue(func() map[string]action {
	m := map[string]action{
		"noop":             {0, func(prober, []string) error { return nil }, "do nothing"},
		"read":             {1, arg1(readFile), "PATH: open read-only and read one byte"},
		"write":            {1, arg1(writeFile), "PATH: create/truncate and write"},
		"symlink-write":    {1, arg1(symlinkWrite), "LINK: LINK must be a symlink; write through it"},
		"exec":             {1, prober.execFile, "PATH: fork and execve PATH (with this probe's `noop` argv), wait for exit 0"},
		"write-exec":       {1, prober.writeExec, "PATH: copy this probe to PATH (0755), then exec it (`noop`)"},
		"write-map-exec":   {1, arg1(writeMapExec), "PATH: write a page to PATH, then mmap it PROT_READ|PROT_EXEC (what a loader does)"},
		"fill":             {3, func(_ prober, a []string) error { return fill(a[0], a[1], a[2]) }, "DIR N PATH: make N (≤ 300000) names in DIR, hard links to a few files, then write PATH"},
		"link":             {2, func(_ prober, a []string) error { return unix.Link(a[0], a[1]) }, "SRC DST: hard link"},
		"chmod":            {1, func(_ prober, a []string) error { return unix.Chmod(a[0], 0o777) }, "PATH: chmod PATH 0777"},
		"rename":           {2, func(_ prober, a []string) error { return unix.Rename(a[0], a[1]) }, "SRC DST: rename"},
		"tcp-connect":      {1, arg1(tcpConnect), "ADDR: TCP connect to IP:PORT or [IPv6]:PORT"},
		"tcp-bind":         {1, arg1(tcpBind), "ADDR: bind a TCP socket"},
		"tcp-listen":       {1, arg1(tcpListen), "tcp4|tcp6: listen() on an unbound TCP socket (the kernel picks a port)"},
		"udp-send":         {1, arg1(udpSend), "ADDR: send a datagram and wait 2s for the echo"},
		"mptcp-socket":     {0, arg0(mptcpSocket), "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)"},
		"tcp-variants":     {0, arg0(tcpVariants), "socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_MPTCP or IPPROTO_SMC): ok when any opens, else the first error"},
		"unix-socket":      {0, arg0(unixSocket), "socket(AF_UNIX, SOCK_STREAM, 0)"},
		"unix-any":         {0, arg0(unixAny), "socket(AF_UNIX), then socketpair(AF_UNIX, SOCK_DGRAM): ok when either works, else the first error"},
		"unix-connect":     {1, arg1(unixConnect), "PATH: connect to a pathname Unix socket"},
		"abstract-connect": {1, func(_ prober, a []string) error { return unixConnect("@" + a[0]) }, "NAME: connect to an abstract Unix socket"},
		"socketpair":       {1, arg1(socketpair), "stream|dgram: socketpair(AF_UNIX)"},
		"tfo-connect":      {1, arg1(tfoConnect), "ADDR: TCP Fast Open: sendto(MSG_FASTOPEN), then sendmsg(MSG_FASTOPEN) on another socket, to IP:PORT, which connects: ok when either works, else the first error"},
		"i386-syscall":     {0, arg0(i386Syscall), "getpid through int $0x80 (x86-64 only); `no-gate` (exit 3) when the gate itself faults"},
		"x32-syscall":      {0, arg0(x32Syscall), "getpid with the x32 bit through the native gate (x86-64 only)"},
		"vsock-socket":     {0, func(prober, []string) error { return socketOnly(unix.AF_VSOCK, unix.SOCK_STREAM) }, "socket(AF_VSOCK, SOCK_STREAM)"},
		"vsock-socketpair": {0, arg0(vsockSocketpair), "socketpair(AF_VSOCK, SOCK_STREAM): the kernel's own answer is EOPNOTSUPP (vsock has no pairs)"},
		"kill":             {2, func(_ prober, a []string) error { return killPid(a[0], a[1]) }, "PID SIG: kill(2), SIG a number"},
		"kill-group":       {1, arg1(killGroup), "SIG: kill(0, SIG) to this process's group, ignoring SIG itself (ok: delivered to some member)"},
		"others":           {1, prober.others, "PID: kill(PID, 0), then, on a child it starts, PTRACE_SEIZE, process_vm_readv, pidfd_getfd and kcmp: ok when any works, else the first error"},
		"ptrace":           {1, arg1(ptracePid), "PID: PTRACE_SEIZE (released when the probe exits)"},
		"steer":            {1, arg1(steer), "PID|self: set PID's open-file limit, nice value, scheduling policy, CPU affinity and I/O priority to what each is: ok when every call works, `denied ERRNO` when every one fails so, else an error naming each"},
		"read-environ":     {1, func(_ prober, a []string) error { return readFile("/proc/" + a[0] + "/environ") }, "PID: read /proc/PID/environ"},
		"fd":               {1, arg1(fdOpen), "N[,N...]: fcntl(N, F_GETFD) on each: ok when any is open, else the first error"},
		"fchmod-fd":        {1, arg1(fchmodFd), "N: fchmod(N) to the mode it has (refused on a read-only mount, or when not the owner)"},
		"inotify-watch":    {1, arg1(inotifyWatch), "PATH: inotify_add_watch(PATH, IN_ACCESS|IN_MODIFY), which needs only read permission (Landlock does not check it)"},
		"node":             {1, nil, "PATH: prints `node DEV INO`, the file PATH names (lstat), or `denied ERRNO`"},
		"tty-name":         {1, arg1(ttyName), "N: look descriptor N's terminal up by the name /proc/self/fd/N gives, as ttyname does: ok when that name is the very node"},
		"env":              {1, nil, "NAME: prints `absent` (exit 0) or `present` (exit 1)"},
		"env-names":        {0, nil, "prints `names N N ...`, the names in its environment, sorted"},
		"euid":             {0, nil, "prints `euid E uid U`"},
		"caps":             {0, arg0(caps), "ok when this process holds any capability in any set (inheritable, permitted, effective, bounding, ambient), `denied none` when it holds none"},
		"mount-opts":       {1, nil, "PATH: prints `opts O,O,...`, the per-mount options (sorted) of the mount PATH is on"},
		"core-dump":        {2, nil, "MARKER HOW: name itself MARKER (the comm a core_pattern's %e shows), lower its RLIMIT_CORE to 0 as HOW says (keep: not at all; setrlimit: as libcs do, prlimit64(0, …); setrlimit-call: the setrlimit system call; prlimit-pid: prlimit64 naming its own pid; prlimit-old: prlimit64 also asking the old limit), print `[lowered ok|ERRNO, ]core soft S hard H`, and die of SIGSEGV's default action (a core dump where the limits let one be made)"},
		"core-limit":       {1, nil, "HOW: core-dump without the name and the crash: lower RLIMIT_CORE as HOW says, print its line, exit 0"},
		"rlimit":           {1, nil, "RES: prints `soft S hard H` for RLIMIT_RES (NOFILE, FSIZE, CORE, CPU, NPROC, AS, RTPRIO, RTTIME, NICE, MEMLOCK, MSGQUEUE), `inf` for no limit"},
		"setuid-exec":      {-1, nil, "PATH [FILE]: run PATH (a setuid copy of this probe) with `euid`; prints its line, then with FILE ` chmod ok` or ` chmod denied ERRNO` for making FILE.PID (new) mode 04755"},
		"fork-bomb":        {1, nil, "N: fork up to N (≤ 1000) `sleep 5` children; prints `forked K of N [ERRNO]`, kills and reaps them"},
		"alloc":            {1, arg1(alloc), "BYTES: mmap and touch (suffixes KiB, MiB, GiB)"},
		"kernel-surface":   {0, prober.kernelSurface, "try a user namespace (as unshare-user), keyctl, io_uring_setup, personality(ADDR_NO_RANDOMIZE), a user-space perf counter on itself, a user-mode-only userfaultfd and reading its LDT (modify_ldt): ok when any works, else the first error"},
		"unshare-user":     {0, prober.unshareUser, "fork a child that unshares a user namespace and execs `noop`"},
		"unshare-mount":    {0, arg0(unshareMount), "unshare(CLONE_NEWNS) on this thread"},
		"tiocsti":          {0, arg0(tiocsti), "ioctl(0, TIOCSTI) on stdin, which must be a terminal"},
		"tty-ioctl":        {1, arg1(ttyIoctl), "sti|sti-high|linux|setd|xonc|excl: that ioctl on stdin, which must be a terminal (sti-high: TIOCSTI with bit 32 set, which the kernel ignores; setd sets N_TTY, xonc TCOON, excl is undone with TIOCNXCL: the terminal is left as it was)"},
		"noecho":           {0, arg0(noEcho), "turn echo off on stdin, which must be a terminal, and exit (as a crashed program would)"},
		"memfd-exec":       {-1, prober.memfdExec, "[exec]: memfd_create (flags 0, or MFD_EXEC), copy this probe in, exec it via /proc/self/fd"},
		"write-proc-sys":   {1, arg1(writeProcSys), "NAME: write /proc/sys/NAME's current value back to it"},
		"fscrypt-add":      {1, nil, "DIR: add a fixed test key to DIR's file system's encryption keyring (fscrypt) as this uid, encrypt the empty DIR with it; prints `id HEX`, the key's identifier"},
		"fscrypt-remove":   {2, func(_ prober, a []string) error { return fscryptRemove(a[0], a[1]) }, "PATH ID: remove this uid's claim to fscrypt key ID (hex) with a descriptor of PATH, any file on that file system"},
		"key-lists":        {0, arg0(keyLists), "make sure this uid's user keyring exists (keyctl, which the sandbox refuses), then read /proc/keys and /proc/key-users: ok when either lists anything, `denied empty` when neither does"},
		"mount-tmpfs":      {1, arg1(mountTmpfs), "DIR: mount a tmpfs on DIR and unmount it again"},
		"spawn-sleep":      {1, nil, "MARKER: start `probe sleep 60 MARKER` in a new session, print `spawned PID`, exit"},
		"tty-steal":        {2, func(p prober, a []string) error { return p.ttySteal(a[0], a[1]) }, "SECS FILE: start tty-steal-child in a process group of its own, then sleep a minute"},
		"tty-resume":       {2, func(_ prober, a []string) error { return ttyResume(a[0], a[1]) }, "SECS FILE: continue itself by a timer's SIGCONT every 20 ms; ignoring SIGTTOU/SIGTTIN, after SECS keep taking the terminal's foreground and copy what is read there to FILE for 8 s"},
		"tty-steal-child":  {2, func(_ prober, a []string) error { return ttyStealChild(a[0], a[1]) }, "SECS FILE: ignoring SIGTTOU/SIGTTIN, after SECS take the terminal's foreground (TIOCSPGRP) and copy what is read there to FILE for 8 s"},
		"sigcont-loop":     {2, func(_ prober, a []string) error { return sigcontLoop(a[0], a[1]) }, "PGID SECS: send SIGCONT to the group PGID without pause for SECS seconds"},
		"sleep":            {-1, func(_ prober, a []string) error { return sleepFor(a) }, "SECS [MARKER...]: sleep (at most 120 s)"},
		"exit":             {1, nil, "N: exit with status N, printing nothing"},
		"kill-self":        {1, nil, "SIG: send SIG to itself"},
		"http-get":         {1, nil, "URL: GET through the environment's proxy; prints `status N RULE FIRSTLINE`"},
		"find-bytes":       {-1, nil, "HEX ROOT...: look for the bytes in every readable file beneath the roots; prints `found PATH` (exit 1) or `absent N`"},
		"secret-hunt":      {-1, nil, "HEX URL ROOT...: GET URL through the proxy, then look for the bytes in its answer and as find-bytes does; prints `found WHERE` (exit 1) or `absent N; status N RULE FIRSTLINE`; $NAME in a root is expanded"},
		"without-landlock": {-1, nil, "CMD [ARGS...]: exec CMD as on a kernel without Landlock (seccomp answers ENOSYS to its system calls)"},
		"landlock-abi":     {-1, nil, "N CMD [ARGS...]: run CMD as on a kernel with Landlock ABI N (1 to 7): seccomp hands its tree's Landlock calls to this process, which answers the version query with N and refuses rights, rules and flags ABI N lacks"},
		"as-uid":           {-1, nil, "UID CMD [ARGS...]: exec CMD as UID (and gid UID, no supplementary groups): inside landlock-abi, whose listener must stay root to read the tree's memory, for an unprivileged launch"},
		"without-cgroups":  {-1, nil, "CMD [ARGS...]: exec CMD as on a host with no cgroup file system (root: a mount namespace with every cgroup mount detached)"},
		"without-netns":    {-1, nil, "CMD [ARGS...]: exec CMD as on a host with user.max_net_namespaces = 0 (root: a mount namespace where the sysctl reads 0, and seccomp answers EPERM to clone and unshare with CLONE_NEWNET)"},
	}
	for _, r := range registered {
		if _, ok := m[r.name]; ok {
			panic("probe: action " + r.name + " registered twice")
		}
		m[r.name] = action{r.args, func(_ prober, a []string) error { return r.run(a) }, r.help}
	}
	tableMade = true
	return m
})

// registered are the actions Register was given, which actions adds as
// it is made; tableMade reports that it was.
var (
	registered []registration
	tableMade  bool
)

type registration struct {
	name string
	args int
	run  func(args []string) error
	help string
}

// Main runs one probe and exits with its status; it never returns. args
// is ACTION [ARGS...]. self is the argv prefix, after the executable,
// that runs the probe again from this executable: nil for the probe
// program (argv = exe ACTION...), []string{Entry} for the launcher
// (argv = exe __pinfold_probe ACTION...). Actions that re-execute the
// probe use it, so they work in both binaries.
func Main(self []string, args []string) {
	p := prober{self: self}
	if len(args) < 1 {
		p.usage()
	}
	name, args := args[0], args[1:]
	a, ok := actions()[name]
	if !ok || (a.args >= 0 && len(args) != a.args) {
		p.usage()
	}
	switch name { // the actions whose answer is not ok/denied
	case "env":
		if _, set := os.LookupEnv(args[0]); set {
			fmt.Println("present")
			os.Exit(1)
		}
		fmt.Println("absent")
		os.Exit(0)
	case "euid":
		fmt.Printf("euid %d uid %d\n", unix.Geteuid(), unix.Getuid())
		os.Exit(0)
	case "rlimit":
		rlimit(args[0])
	case "core-dump":
		coreDump(args[0], args[1])
	case "core-limit":
		coreDump("", args[0])
	case "env-names":
		names := make([]string, 0, len(os.Environ()))
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		slices.Sort(names)
		fmt.Println("names " + strings.Join(names, " "))
		os.Exit(0)
	case "node":
		var st unix.Stat_t
		err := unix.Lstat(args[0], &st)
		if err == nil {
			fmt.Printf("node %d %d\n", st.Dev, st.Ino)
			os.Exit(0)
		}
		report(err)
	case "mount-opts":
		mountOpts(args[0])
	case "fscrypt-add":
		fscryptAdd(args[0])
	case "setuid-exec":
		if len(args) < 1 || len(args) > 2 {
			p.usage()
		}
		p.setuidExec(args)
	case "fork-bomb":
		forkBomb(args[0])
	case "spawn-sleep":
		p.spawnSleep(args[0])
	case "exit":
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n > 255 {
			broke(fmt.Errorf("exit status %q", args[0]))
		}
		os.Exit(n)
	case "without-landlock":
		withoutLandlock(args)
	case "without-cgroups":
		withoutCgroups(args)
	case "landlock-abi":
		withLandlockABI(args)
	case "as-uid":
		asUID(args)
	case "without-netns":
		withoutNetNS(args)
	case "http-get":
		httpGet(args[0])
	case "find-bytes":
		if len(args) < 2 {
			p.usage()
		}
		findBytes(args)
	case "secret-hunt":
		if len(args) < 3 {
			p.usage()
		}
		secretHunt(args)
	case "kill-self":
		sig, err := strconv.Atoi(args[0])
		if err != nil {
			broke(err)
		}
		unix.Kill(unix.Getpid(), unix.Signal(sig))
		// The Go runtime's handler takes a fatal signal on whichever
		// thread the kernel picked and dies of it from there: this one
		// may run on meanwhile (CI under load, 2026-12-03: "still alive"
		// after SIGTERM). It waits, bounded.
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		broke(fmt.Errorf("still alive 10 s after signal %d", sig))
	}
	report(a.run(p, args))
}

func arg1(f func(string) error) func(prober, []string) error {
	return func(_ prober, a []string) error { return f(a[0]) }
}

func arg0(f func() error) func(prober, []string) error {
	return func(prober, []string) error { return f() }
}

func (p prober) usage() {
	fmt.Fprintf(os.Stderr, "usage: %s ACTION [ARGS...]; actions:\n", strings.Join(p.argv(filepath.Base(os.Args[0])), " "))
	for _, name := range slices.Sorted(maps.Keys(actions())) {
		fmt.Fprintf(os.Stderr, "  %s %s\n", name, actions()[name].help)
	}
	fmt.Println("error usage")
	os.Exit(2)
}

// report prints the one line for err and exits.
func report(err error) {
	var errno syscall.Errno
	var denial Denied
	switch {
	case err == nil:
		fmt.Println("ok")
		os.Exit(0)
	case errors.Is(err, errNoGate):
		fmt.Println("no-gate " + err.Error())
		os.Exit(3)
	case errors.As(err, &denial):
		fmt.Println("denied " + denial.Rule)
		os.Exit(1)
	case errors.As(err, &errno):
		name := unix.ErrnoName(errno)
		if name == "" {
			name = "errno" + strconv.Itoa(int(errno))
		}
		fmt.Println("denied " + name)
		os.Exit(1)
	}
	broke(err)
}

func broke(err error) {
	// One line, whatever the error says.
	fmt.Println("error " + strings.ReplaceAll(err.Error(), "\n", " "))
	os.Exit(2)
}

// Denied is a refusal by something other than the kernel (a component),
// printed `denied RULE` (exit 1) like a kernel's.
type Denied struct{ Rule string }

func (d Denied) Error() string { return d.Rule }

// Broken is a failure of a probe's own set-up: `error TEXT` (exit 2),
// never taken for a refusal.
func Broken(msg string) error { return probeError{msg} }

// Fail reports err as the probe's own failure and exits.
func Fail(err error) { broke(err) }

// Register adds an action that only some binaries have (the launcher's
// components-mode probes, which the standalone probe program, built
// without cgo, cannot link). nargs is its number of arguments (-1: any).
// It is for init functions; a name taken twice panics.
// A name that is one of the built-in actions panics as the table is
// made, on its first use.
func Register(name string, nargs int, run func(args []string) error, help string) {
	if tableMade {
		panic("probe: action " + name + " registered after the table was made")
	}
	for _, r := range registered {
		if r.name == name {
			panic("probe: action " + name + " registered twice")
		}
	}
	registered = append(registered, registration{name, nargs, run, help})
}

// errNoGate: the system call gate the probe was to try does not exist
// here (int $0x80 faults), so nothing can be allowed or refused through it.
var errNoGate = errors.New("int $0x80 faults: this machine has no i386 system call gate")

// probeError marks a failure of the probe's own set-up: it is never
// reported as a refusal, even when it wraps an errno.
type probeError struct{ msg string }

func (e probeError) Error() string { return e.msg }

func setupErr(what string, err error) error {
	return probeError{what + ": " + err.Error()}
}

func readFile(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var b [1]byte
	_, err = unix.Read(fd, b[:])
	return err
}

func writeFile(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("written by probe\n"))
	return err
}

// fill makes a tree large to walk, cheaply (few inodes), then writes
// path: an agent hiding what it made from a bounded walk.
func fill(dir, count, path string) error {
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > 300_000 {
		return setupErr("count "+count, unix.EINVAL)
	}
	// A new file every 50000 names: ext4 gives an inode at most 65000.
	var first string
	for i := 0; i < n; i++ {
		name := filepath.Join(dir, "fill-"+strconv.Itoa(i))
		if i%50_000 == 0 {
			first = name
			err = writeFile(name)
		} else {
			err = unix.Link(first, name)
		}
		if err != nil {
			return err
		}
	}
	return writeFile(path)
}

func symlinkWrite(link string) error {
	var st unix.Stat_t
	if err := unix.Lstat(link, &st); err != nil {
		return setupErr("lstat "+link, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return probeError{link + " is not a symlink"}
	}
	return writeFile(link) // open follows the link
}

// execFile forks and execs path as this probe's `noop` (its stdout goes
// to the probe's stderr, so the probe's own line stays the only one on
// stdout) and waits.
func (p prober) execFile(a []string) error {
	path := a[0]
	return runChild(path, p.argv(path, "noop"), nil)
}

func runChild(path string, argv []string, sys *syscall.SysProcAttr) error {
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 2, 2}, Sys: sys,
	})
	if err != nil {
		return err
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		return setupErr("wait", err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return probeError{fmt.Sprintf("child %s ended with status %#x", path, uint32(ws))}
	}
	return nil
}

// selfBytes is this probe's executable, to copy where a test wants a
// program that was just written.
func selfBytes() ([]byte, error) {
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return nil, setupErr("read /proc/self/exe", err)
	}
	return b, nil
}

func (p prober) writeExec(a []string) error {
	path := a[0]
	b, err := selfBytes()
	if err != nil {
		return err
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o755)
	if err != nil {
		return setupErr("write "+path, err)
	}
	_, err = unix.Write(fd, b)
	unix.Close(fd)
	if err != nil {
		return setupErr("write "+path, err)
	}
	if err := unix.Chmod(path, 0o755); err != nil {
		return setupErr("chmod "+path, err)
	}
	return p.execFile(a)
}

// writeMapExec writes a file and maps it executable, as ld.so or an
// interpreter's loader would: only the mount's noexec refuses that
// (Landlock's execute right covers execve alone).
func writeMapExec(path string) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o755)
	if err != nil {
		return setupErr("write "+path, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, make([]byte, unix.Getpagesize())); err != nil {
		return setupErr("write "+path, err)
	}
	m, err := unix.Mmap(fd, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	return unix.Munmap(m)
}

func fchmodFd(arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return probeError{fmt.Sprintf("fd %q", arg)}
	}
	var st unix.Stat_t
	if err := unix.Fstat(n, &st); err != nil {
		return err
	}
	return unix.Fchmod(n, st.Mode&0o7777)
}

func inotifyWatch(path string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.InotifyAddWatch(fd, path, unix.IN_ACCESS|unix.IN_MODIFY)
	return err
}

func ttyName(arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return probeError{fmt.Sprintf("fd %q", arg)}
	}
	var st, at unix.Stat_t
	if err := unix.Fstat(n, &st); err != nil {
		return err
	}
	if _, err := unix.IoctlGetTermios(n, unix.TCGETS); err != nil {
		return err // not a terminal
	}
	name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", n))
	if err != nil {
		return err
	}
	if err := unix.Stat(name, &at); err != nil {
		return err
	}
	if at.Dev != st.Dev || at.Ino != st.Ino || at.Rdev != st.Rdev {
		return probeError{fmt.Sprintf("%s is another node than descriptor %d", name, n)}
	}
	return nil
}

// fdOpen looks at each descriptor of arg (N or N,N,...): ok when any is
// open, else the first one's error.
func fdOpen(arg string) error {
	var first error
	for _, f := range strings.Split(arg, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return probeError{fmt.Sprintf("fd %q", f)}
		}
		if _, err = unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); err == nil {
			return nil
		} else if first == nil {
			first = err
		}
	}
	return first
}

func writeProcSys(name string) error {
	path := "/proc/sys/" + name
	cur, err := os.ReadFile(path)
	if err != nil {
		return setupErr("read "+path, err)
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, cur)
	return err
}

func mountTmpfs(dir string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=1m"); err != nil {
		return err
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return setupErr("unmount "+dir+" (still mounted!)", err)
	}
	return nil
}

// copyInto writes all of b to fd.
func copyInto(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
