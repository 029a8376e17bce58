//go:build linux && cgo && amd64

package launcher

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The child side of TestSeccompKernel: runSeccompProbe re-executes this
// test binary, and TestSeccompProbeChild performs one row of
// seccompCases there, confined or not.

// Placeholders in seccompCase.args that the probe child replaces.
const (
	scSelf    = 0x5ecc_0000_0000_0001 // the child's pid
	scBuf     = 0x5ecc_0000_0000_0002 // a zeroed 512-byte buffer
	scName    = 0x5ecc_0000_0000_0003 // "seccompprobe\x00"
	scXattr   = 0x5ecc_0000_0000_0005 // "user.seccompprobe\x00", an xattr name
	scBpfAttr = 0x5ecc_0000_0000_0004 // union bpf_attr for an array map of one int
	// Op "file": in a fresh directory D (the parent's t.TempDir()) that
	// holds one file, D/f, mode 0644.
	scFile    = 0x5ecc_0000_0000_0010 // "D/f"
	scNew     = 0x5ecc_0000_0000_0011 // "D/new", which does not exist
	scFileFd  = 0x5ecc_0000_0000_0012 // D/f opened O_RDONLY
	scDirFd   = 0x5ecc_0000_0000_0013 // D opened O_PATH
	scRelFile = 0x5ecc_0000_0000_0014 // "f"
	scRelNew  = 0x5ecc_0000_0000_0015 // "new"
)

const (
	seccompProbeEnv     = "PINFOLD_SECCOMP_PROBE"
	seccompProbeArgsEnv = "PINFOLD_SECCOMP_ARGS"
	seccompProbeLoadEnv = "PINFOLD_SECCOMP_LOAD"
	seccompProbePathEnv = "PINFOLD_SECCOMP_PATH"
	seccompProbePrefix  = "seccompprobe: "
	scHigh              = 1 << 32 // garbage the kernel ignores in a 32-bit argument
	scPerLinux32        = 0x0008  // <linux/personality.h>
	scAddrNoRandomize   = 0x0040000
)

// runSeccompProbe runs c in a child; prog nil is the control. The result is
// the child's "seccompprobe: …" line, or how the child ended without one.
func runSeccompProbe(t *testing.T, c seccompCase, prog []byte) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSeccompProbeChild$", "-test.count=1")
	args := []string{strconv.FormatUint(uint64(c.nr), 16)}
	for _, a := range c.args {
		args = append(args, strconv.FormatUint(a, 16))
	}
	cmd.Env = append(os.Environ(), seccompProbeEnv+"=op:"+c.op, seccompProbeArgsEnv+"="+strings.Join(args, " "),
		// Under -race a process sleeps 1 s at exit by default.
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	// A new session: no controlling terminal to hang up or inject into.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if prog != nil {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() { w.Write(prog); w.Close() }()
		cmd.ExtraFiles = []*os.File{r}
		cmd.Env = append(cmd.Env, seccompProbeLoadEnv+"=1")
	}
	if c.op == "file" {
		cmd.Env = append(cmd.Env, seccompProbePathEnv+"="+t.TempDir())
	}
	if c.op == "dgram" {
		path := filepath.Join(t.TempDir(), "s")
		l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		cmd.Env = append(cmd.Env, seccompProbePathEnv+"="+path)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	for line := range strings.Lines(out.String()) {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), seccompProbePrefix); ok {
			return r
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal=" + unix.SignalName(ws.Signal())
		}
	}
	return fmt.Sprintf("no result (%v): %q", err, seccompFirstLine(stderr.String()))
}

func seccompFirstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestSeccompProbeChild is not a test: it is the probe that
// runSeccompProbe re-executes, and returns at once in a normal run.
func TestSeccompProbeChild(t *testing.T) {
	op, ok := strings.CutPrefix(os.Getenv(seccompProbeEnv), "op:")
	if !ok {
		return
	}
	fmt.Printf("%s%s\n", seccompProbePrefix, seccompProbeOp(op))
	os.Exit(0)
}

// seccompProbeOp confines the calling thread (unless this is the control),
// performs one operation and returns its result: "ok", "errno=E…", or for
// the exec ops what the new program says. Ops: "" raw syscall with the
// placeholders resolved; "pty": args[0] is a pty's slave fd and args[2]
// a buffer ("pty-arg": args[2] as the row gives it); "ptrace":
// args[1] is a child's pid; "exec": fork+exec /bin/true with clone flags
// args[0]; "execveat": /bin/echo by O_PATH fd and "" or by path, flags
// args[4]; "dgram": socketpair(AF_UNIX, SOCK_DGRAM) then sendto a
// pathname socket; "int80": getpid through the i386 entry; "threads":
// python3 starts a thread; "file": the placeholders scFile…scRelNew are
// resolved; "tfo": nr is sendto, sendmsg or sendmmsg of one byte on a
// fresh TCP socket to a 127.0.0.1 listener the child opened, with the
// row's flags argument; "listen": args[0] is a fresh, unbound TCP socket.
func seccompProbeOp(op string) string {
	runtime.LockOSThread() // never unlocked: the thread dies with the probe
	f := strings.Fields(os.Getenv(seccompProbeArgsEnv))
	var a [7]uintptr
	for i := range a {
		v, _ := strconv.ParseUint(f[i], 16, 64)
		a[i] = uintptr(v)
	}
	nr, args := a[0], a[1:]
	// Everything the kernel reads through a pointer lives in one mmap'd
	// page: Go may move a goroutine stack, never a mapping.
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return "setup: " + err.Error()
	}
	addr := func(off int) uintptr { return uintptr(unsafe.Pointer(&mem[off])) }
	put := func(off int, s string) uintptr { copy(mem[off:], s); return addr(off) }
	// 0–511 stays zero (scBuf).
	put(512, "seccompprobe\x00")
	put(560, "user.seccompprobe\x00")
	for i, v := range []uint32{unix.BPF_MAP_TYPE_ARRAY, 4, 4, 1} { // map_type, key_size, value_size, max_entries
		binary.NativeEndian.PutUint32(mem[640+4*i:], v)
	}
	for i, v := range args {
		switch v {
		case scSelf:
			args[i] = uintptr(os.Getpid())
		case scBuf:
			args[i] = addr(0)
		case scName:
			args[i] = addr(512)
		case scXattr:
			args[i] = addr(560)
		case scBpfAttr:
			args[i] = addr(640)
		}
	}
	switch op {
	case "file":
		if err := seccompProbeFile(mem[2048:3072], args); err != nil {
			return "setup: " + err.Error()
		}
	case "tfo":
		if err := seccompProbeTFO(mem[3072:], nr, args); err != nil {
			return "setup: " + err.Error()
		}
	case "listen":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "setup: " + err.Error()
		}
		args[0] = uintptr(fd)
	case "pty", "pty-arg":
		fd, err := seccompProbePty()
		if err != nil {
			return "setup: " + err.Error()
		}
		args[0] = uintptr(fd)
		if op == "pty" {
			args[2] = addr(512)
		}
	case "ptrace":
		sleeper := exec.Command("/bin/sleep", "30")
		if err := sleeper.Start(); err != nil {
			return "setup: " + err.Error()
		}
		defer sleeper.Process.Kill()
		args[1] = uintptr(sleeper.Process.Pid)
	case "execveat":
		fd, err := unix.Open("/bin/echo", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return "setup: " + err.Error()
		}
		path := put(1024, "/bin/echo\x00")
		if args[4]&unix.AT_EMPTY_PATH != 0 {
			path = put(1024, "\x00")
		}
		binary.NativeEndian.PutUint64(mem[1536:], uint64(put(1100, "echo\x00")))
		binary.NativeEndian.PutUint64(mem[1544:], uint64(put(1200, seccompProbePrefix+"execd\x00")))
		// mem[1552:1560] is the NULL that ends argv; envp is empty.
		args[0], args[1], args[2], args[3] = uintptr(fd), path, addr(1536), addr(1552)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "setup: no_new_privs: " + err.Error()
	}
	if os.Getenv(seccompProbeLoadEnv) == "1" {
		b, err := io.ReadAll(os.NewFile(3, "plan"))
		if err != nil {
			return "setup: read program: " + err.Error()
		}
		p, err := UnmarshalSeccomp(b)
		if err == nil {
			err = LoadSeccomp(p)
		}
		if err != nil {
			return "setup: " + err.Error()
		}
	}
	switch op {
	case "exec", "threads":
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: args[0]}
		if op == "threads" {
			cmd = exec.Command("python3", "-c", "import threading as t; x = t.Thread(target=print); x.start(); x.join()")
		}
		return seccompProbeResult(cmd.Run())
	case "dgram":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return seccompProbeResult(err)
		}
		err = unix.Sendto(fds[0], []byte("x"), 0, &unix.SockaddrUnix{Name: os.Getenv(seccompProbePathEnv)})
		return seccompProbeResult(err)
	case "int80":
		pid, gate := seccompInt80(nr)
		if !gate {
			return "no-gate"
		}
		if pid != int32(os.Getpid()) {
			return fmt.Sprintf("int 0x80 returned %d", pid)
		}
		return "ok"
	}
	_, _, errno := unix.Syscall6(nr, args[0], args[1], args[2], args[3], args[4], args[5])
	if errno != 0 {
		return seccompProbeResult(errno)
	}
	return "ok"
}

// seccompProbeFile makes the directory and file of op "file" and resolves
// its placeholders in args; the strings go to buf, which the kernel reads.
func seccompProbeFile(buf []byte, args []uintptr) error {
	dir := os.Getenv(seccompProbePathEnv)
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		return err
	}
	dirFd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fileFd, err := unix.Open(filepath.Join(dir, "f"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	off := 0
	str := func(s string) uintptr {
		p := uintptr(unsafe.Pointer(&buf[off]))
		off += copy(buf[off:], s+"\x00")
		return p
	}
	vals := map[uintptr]uintptr{
		scFile: str(filepath.Join(dir, "f")), scNew: str(filepath.Join(dir, "new")),
		scRelFile: str("f"), scRelNew: str("new"),
		scFileFd: uintptr(fileFd), scDirFd: uintptr(dirFd),
	}
	for i, a := range args {
		if v, ok := vals[a]; ok {
			args[i] = v
		}
	}
	return nil
}

// seccompProbeTFO opens a listener on 127.0.0.1 and a TCP socket, and
// fills args for one byte sent with sendto(fd, buf, 1, flags, addr, len),
// sendmsg(fd, msg, flags) or sendmmsg(fd, msgvec, 1, flags) (nr), keeping
// the row's flags. buf holds what the kernel reads.
func seccompProbeTFO(buf []byte, nr uintptr, args []uintptr) error {
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.Bind(l, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return err
	}
	if err := unix.Listen(l, 4); err != nil {
		return err
	}
	sa, err := unix.Getsockname(l)
	if err != nil {
		return err
	}
	port := sa.(*unix.SockaddrInet4).Port
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// struct sockaddr_in at 0, struct iovec at 16, the byte at 32, struct
	// mmsghdr (a msghdr and its length) at 40.
	raw := (*unix.RawSockaddrInet4)(unsafe.Pointer(&buf[0]))
	raw.Family = unix.AF_INET
	binary.BigEndian.PutUint16(buf[2:4], uint16(port))
	raw.Addr = [4]byte{127, 0, 0, 1}
	buf[32] = 'x'
	iov := (*unix.Iovec)(unsafe.Pointer(&buf[16]))
	iov.Base = &buf[32]
	iov.SetLen(1)
	msg := (*unix.Msghdr)(unsafe.Pointer(&buf[40]))
	msg.Name, msg.Namelen = &buf[0], unix.SizeofSockaddrInet4
	msg.Iov = iov
	msg.SetIovlen(1)
	ptr := func(off int) uintptr { return uintptr(unsafe.Pointer(&buf[off])) }
	switch nr {
	case unix.SYS_SENDTO:
		args[0], args[1], args[2], args[4], args[5] = uintptr(fd), ptr(32), 1, ptr(0), unix.SizeofSockaddrInet4
	case unix.SYS_SENDMSG:
		args[0], args[1] = uintptr(fd), ptr(40)
	case unix.SYS_SENDMMSG:
		args[0], args[1], args[2] = uintptr(fd), ptr(40), 1
	default:
		return fmt.Errorf("op tfo: syscall %d is not a send", nr)
	}
	return nil
}

func seccompProbeResult(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return "errno=" + unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

// seccompProbePty opens a pty pair and returns the slave, which TIOCSTI
// can feed: root may inject into any tty.
func seccompProbePty() (int, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return -1, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		return -1, fmt.Errorf("ptsname: %w", err)
	}
	return unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

// seccompInt80 makes i386 syscall nr (no arguments) with `int $0x80` from
// this 64-bit thread, and says whether the gate exists: where it faults
// (IA32 emulation off, or a hypervisor that does not pass int $0x80 on)
// gate is false. Go has no inline assembly and cgo is not allowed in
// tests, so the stub is machine code in an executable page, called through
// a func value whose code pointer is the page: mov $nr, %eax; int $0x80;
// ret. Go's register ABI returns an int32 result in AX.
func seccompInt80(nr uintptr) (pid int32, gate bool) {
	code, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(err)
	}
	copy(code, []byte{0xb8, byte(nr), byte(nr >> 8), 0, 0, 0xcd, 0x80, 0xc3})
	if err := unix.Mprotect(code, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		panic(err)
	}
	fv := &struct{ pc uintptr }{uintptr(unsafe.Pointer(&code[0]))}
	stub := *(*func() int32)(unsafe.Pointer(&fv))
	defer func() {
		if recover() != nil {
			pid, gate = 0, false
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return stub(), true
}
