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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is tested twice over one table of calls (seccompCases):
//
//   - TestSeccompVerdicts runs the compiled program in a small classic-BPF
//     interpreter (seccompEmulate) and checks the verdict of every row,
//     including rows this kernel cannot run (SMC, clone with CLONE_NEWTIME).
//   - TestSeccompKernel runs each row in a re-executed copy of this test
//     binary (TestSeccompProbeChild) twice: unconfined (the control) and
//     with the filter loaded by LoadSeccomp. A denial counts only when the
//     control got something else; rows whose control must succeed say so.

// Placeholders in seccompCase.args that the probe child replaces.
const (
	scSelf    = 0x5ecc_0000_0000_0001 // the child's pid
	scBuf     = 0x5ecc_0000_0000_0002 // a zeroed 512-byte buffer
	scName    = 0x5ecc_0000_0000_0003 // "seccompprobe\x00"
	scBpfAttr = 0x5ecc_0000_0000_0004 // union bpf_attr for an array map of one int
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

// seccompCase is one call. want is "allow", "errno=E…" or "signal=SIGSYS";
// ctl, when set, is what the control must print (else the row is skipped
// as a missing feature, or fails when feature is empty). Ops other than ""
// (a raw syscall nr(args)) are described at seccompProbeOp.
type seccompCase struct {
	name    string
	spec    SeccompSpec
	op      string
	nr      uintptr
	args    [6]uint64
	want    string
	ctl     string
	feature string
}

func seccompCases() []seccompCase {
	def, inet, unixOK := SeccompSpec{}, SeccompSpec{DenyInet: true}, SeccompSpec{AllowUnixSockets: true}
	sys := func(name string, nr uintptr, want, ctl string, a ...uint64) seccompCase {
		c := seccompCase{name: name, nr: nr, want: want, ctl: ctl}
		copy(c.args[:], a)
		return c
	}
	with := func(c seccompCase, s SeccompSpec, op string) seccompCase { c.spec, c.op = s, op; return c }
	feat := func(c seccompCase, f string) seccompCase { c.feature = f; return c }
	const perm, sigsys, m1 = "errno=EPERM", "signal=SIGSYS", ^uint64(0)
	return []seccompCase{
		// Other processes.
		with(sys("ptrace seize own child", unix.SYS_PTRACE, perm, "ok", unix.PTRACE_SEIZE), def, "ptrace"),
		sys("ptrace peek pid 1", unix.SYS_PTRACE, perm, "", unix.PTRACE_PEEKDATA, 1),
		sys("process_vm_readv self", unix.SYS_PROCESS_VM_READV, perm, "ok", scSelf),
		sys("process_vm_writev self", unix.SYS_PROCESS_VM_WRITEV, perm, "ok", scSelf),
		sys("kcmp self", unix.SYS_KCMP, perm, "ok", scSelf, scSelf, 0, 1, 1),
		sys("pidfd_getfd", unix.SYS_PIDFD_GETFD, perm, "", m1),
		// Mounts.
		sys("mount", unix.SYS_MOUNT, perm, "", 1, 1, 1),
		sys("umount2", unix.SYS_UMOUNT2, perm, "", 1),
		sys("pivot_root", unix.SYS_PIVOT_ROOT, perm, "", 1, 1),
		sys("chroot", unix.SYS_CHROOT, perm, "", 1),
		sys("move_mount", unix.SYS_MOVE_MOUNT, perm, "", m1, 1, m1, 1),
		sys("open_tree", unix.SYS_OPEN_TREE, perm, "", m1, 1),
		sys("open_tree_attr", unix.SYS_OPEN_TREE_ATTR, perm, "", m1, 1),
		sys("fsopen", unix.SYS_FSOPEN, perm, "", 1),
		sys("fsconfig", unix.SYS_FSCONFIG, perm, "", m1),
		sys("fsmount", unix.SYS_FSMOUNT, perm, "", m1),
		sys("fspick", unix.SYS_FSPICK, perm, "", m1, 1),
		sys("mount_setattr", unix.SYS_MOUNT_SETATTR, perm, "", m1),
		// Kernel surface.
		sys("bpf map create", unix.SYS_BPF, perm, "ok", unix.BPF_MAP_CREATE, scBpfAttr, 64),
		sys("perf_event_open", unix.SYS_PERF_EVENT_OPEN, perm, "", 1, 0, m1, m1),
		sys("keyctl get session keyring", unix.SYS_KEYCTL, perm, "ok", unix.KEYCTL_GET_KEYRING_ID, ^uint64(2), 1),
		sys("add_key", unix.SYS_ADD_KEY, perm, "", 1),
		sys("request_key", unix.SYS_REQUEST_KEY, perm, "", 1),
		sys("userfaultfd", unix.SYS_USERFAULTFD, perm, "ok", unix.O_CLOEXEC),
		sys("io_uring_setup", unix.SYS_IO_URING_SETUP, perm, "ok", 1, scBuf),
		sys("io_uring_enter", unix.SYS_IO_URING_ENTER, perm, "", m1),
		sys("io_uring_register", unix.SYS_IO_URING_REGISTER, perm, "", m1),
		// Namespaces.
		sys("setns", unix.SYS_SETNS, perm, "", m1),
		sys("unshare nothing", unix.SYS_UNSHARE, perm, "ok", 0),
		sys("unshare uts", unix.SYS_UNSHARE, perm, "ok", unix.CLONE_NEWUTS),
		sys("unshare user", unix.SYS_UNSHARE, perm, "errno=EINVAL", unix.CLONE_NEWUSER), // a Go process has threads
		sys("clone3", unix.SYS_CLONE3, "errno=ENOSYS", "errno=EINVAL", 0, 0),
		with(sys("fork+exec", unix.SYS_CLONE, "allow", "ok", 0), def, "exec"),
		with(sys("fork+exec garbage high bits", unix.SYS_CLONE, "allow", "ok", 1<<40), def, "exec"),
		with(sys("clone newuser", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWUSER), def, "exec"),
		with(sys("clone newns|newpid", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWNS|unix.CLONE_NEWPID), def, "exec"),
		with(sys("clone newnet", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWNET), def, "exec"),
		with(sys("clone newipc", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWIPC), def, "exec"),
		with(sys("clone newuts", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWUTS), def, "exec"),
		with(sys("clone newcgroup", unix.SYS_CLONE, perm, "ok", unix.CLONE_NEWCGROUP), def, "exec"),
		with(sys("clone newnet high bits", unix.SYS_CLONE, perm, "ok", 1<<40|unix.CLONE_NEWNET), def, "exec"),
		with(sys("clone newtime", unix.SYS_CLONE, perm, "", unix.CLONE_NEWTIME|uint64(unix.SIGCHLD)), def, "emu"),
		feat(with(sys("glibc threads fall back from clone3", unix.SYS_CLONE3, "allow", "ok"), def, "threads"), "python3 on PATH"),
		// Administration.
		sys("kexec_load", unix.SYS_KEXEC_LOAD, perm, "", 0, 0, 0, 0xffffffff),
		sys("kexec_file_load", unix.SYS_KEXEC_FILE_LOAD, perm, "", m1, m1),
		sys("init_module", unix.SYS_INIT_MODULE, perm, "", 1, 1, 1),
		sys("finit_module", unix.SYS_FINIT_MODULE, perm, "", m1),
		sys("delete_module", unix.SYS_DELETE_MODULE, perm, "", 1),
		sys("acct", unix.SYS_ACCT, perm, "", 1),
		sys("swapon", unix.SYS_SWAPON, perm, "", 1),
		sys("swapoff", unix.SYS_SWAPOFF, perm, "", 1),
		sys("reboot bad magic", unix.SYS_REBOOT, perm, "", 0),
		sys("syslog size", unix.SYS_SYSLOG, perm, "ok", 10),
		sys("quotactl", unix.SYS_QUOTACTL, perm, "", 0, 1),
		sys("quotactl_fd", unix.SYS_QUOTACTL_FD, perm, "", m1),
		sys("lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE, perm, ""),
		sys("name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT, perm, "", m1, 1, 1, 1),
		sys("open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT, perm, "", m1, 1),
		sys("uselib", unix.SYS_USELIB, perm, "", 1),
		sys("vhangup without a tty", unix.SYS_VHANGUP, perm, "ok"),
		// personality: only PER_LINUX and the query, as the kernel reads them.
		sys("personality PER_LINUX32", unix.SYS_PERSONALITY, perm, "ok", scPerLinux32),
		sys("personality ADDR_NO_RANDOMIZE", unix.SYS_PERSONALITY, perm, "ok", scAddrNoRandomize),
		sys("personality PER_LINUX32 high bits", unix.SYS_PERSONALITY, perm, "ok", scHigh|scPerLinux32),
		sys("personality bit 31", unix.SYS_PERSONALITY, perm, "ok", 0x80000000),
		sys("personality 0xfffffffe", unix.SYS_PERSONALITY, perm, "ok", 0xfffffffe),
		sys("personality PER_LINUX", unix.SYS_PERSONALITY, "allow", "ok", 0),
		sys("personality query", unix.SYS_PERSONALITY, "allow", "ok", 0xffffffff),
		sys("personality query as -1", unix.SYS_PERSONALITY, "allow", "ok", m1),
		sys("personality PER_LINUX high bits", unix.SYS_PERSONALITY, "allow", "ok", scHigh),
		// Other architectures' entry points.
		feat(with(sys("i386 int 0x80 getpid", 20, sigsys, "ok"), def, "int80"), "IA32 emulation (CONFIG_IA32_EMULATION)"),
		sys("x32 getpid", unix.SYS_GETPID|0x40000000, sigsys, ""),
		// Sockets.
		feat(sys("mptcp inet", unix.SYS_SOCKET, "errno=EPROTONOSUPPORT", "ok", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), "MPTCP"),
		feat(sys("mptcp inet6", unix.SYS_SOCKET, "errno=EPROTONOSUPPORT", "ok", unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), "MPTCP over IPv6"),
		feat(sys("mptcp high bits", unix.SYS_SOCKET, "errno=EPROTONOSUPPORT", "ok", unix.AF_INET, unix.SOCK_STREAM, scHigh|unix.IPPROTO_MPTCP), "MPTCP"),
		sys("tcp", unix.SYS_SOCKET, "allow", "ok", unix.AF_INET, unix.SOCK_STREAM, 0),
		with(sys("smc", unix.SYS_SOCKET, "errno=EAFNOSUPPORT", "", unix.AF_SMC, unix.SOCK_STREAM), def, "emu"),
		with(sys("inet IPPROTO_SMC", unix.SYS_SOCKET, "errno=EPROTONOSUPPORT", "", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SMC), def, "emu"),
		with(sys("inet6 IPPROTO_SMC", unix.SYS_SOCKET, "errno=EPROTONOSUPPORT", "", unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_SMC), def, "emu"),
		sys("packet proto 256 is not SMC", unix.SYS_SOCKET, "allow", "ok", unix.AF_PACKET, unix.SOCK_RAW, 256),
		sys("unix", unix.SYS_SOCKET, perm, "ok", unix.AF_UNIX, unix.SOCK_STREAM),
		sys("unix high bits", unix.SYS_SOCKET, perm, "ok", scHigh|unix.AF_UNIX, unix.SOCK_STREAM),
		with(sys("unix allowed", unix.SYS_SOCKET, "allow", "ok", unix.AF_UNIX, unix.SOCK_STREAM), unixOK, ""),
		sys("socketpair stream", unix.SYS_SOCKETPAIR, "allow", "ok", unix.AF_UNIX, unix.SOCK_STREAM, 0, scBuf),
		sys("socketpair seqpacket", unix.SYS_SOCKETPAIR, "allow", "ok", unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, scBuf),
		sys("socketpair dgram", unix.SYS_SOCKETPAIR, perm, "ok", unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0, scBuf),
		with(sys("socketpair dgram allowed", unix.SYS_SOCKETPAIR, "allow", "ok", unix.AF_UNIX, unix.SOCK_DGRAM, 0, scBuf), unixOK, ""),
		with(sys("dgram pair sends to a pathname socket", unix.SYS_SOCKETPAIR, perm, "ok", unix.AF_UNIX, unix.SOCK_DGRAM), def, "dgram"),
		with(sys("deny-inet inet", unix.SYS_SOCKET, perm, "ok", unix.AF_INET, unix.SOCK_STREAM), inet, ""),
		with(sys("deny-inet inet6 udp", unix.SYS_SOCKET, perm, "ok", unix.AF_INET6, unix.SOCK_DGRAM), inet, ""),
		with(sys("deny-inet mptcp", unix.SYS_SOCKET, perm, "ok", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), inet, ""),
		with(sys("deny-inet vsock", unix.SYS_SOCKET, perm, "", unix.AF_VSOCK, unix.SOCK_STREAM), inet, ""),
		with(sys("deny-inet packet", unix.SYS_SOCKET, perm, "ok", unix.AF_PACKET, unix.SOCK_RAW), inet, ""),
		with(sys("deny-inet unspec", unix.SYS_SOCKET, perm, "", 0, unix.SOCK_STREAM), inet, ""),
		with(sys("deny-inet family 17", unix.SYS_SOCKET, perm, "", 17, unix.SOCK_STREAM), inet, ""),
		with(sys("deny-inet netlink", unix.SYS_SOCKET, "allow", "ok", unix.AF_NETLINK, unix.SOCK_RAW), inet, ""),
		with(sys("deny-inet netlink high bits", unix.SYS_SOCKET, perm, "ok", scHigh|unix.AF_NETLINK, unix.SOCK_RAW), inet, ""),
		with(sys("deny-inet unix", unix.SYS_SOCKET, perm, "ok", unix.AF_UNIX, unix.SOCK_STREAM), inet, ""),
		with(sys("deny-inet unix allowed", unix.SYS_SOCKET, "allow", "ok", unix.AF_UNIX, unix.SOCK_STREAM), SeccompSpec{DenyInet: true, AllowUnixSockets: true}, ""),
		// ioctl on a pty the child opened; the cmd is compared as 32 bits.
		with(sys("TIOCSTI", unix.SYS_IOCTL, perm, "ok", 0, unix.TIOCSTI), def, "pty"),
		with(sys("TIOCSTI high bits", unix.SYS_IOCTL, perm, "ok", 0, scHigh|unix.TIOCSTI), def, "pty"),
		with(sys("TIOCSTI all high bits", unix.SYS_IOCTL, perm, "ok", 0, 0xffffffff<<32|unix.TIOCSTI), def, "pty"),
		with(sys("TIOCLINUX", unix.SYS_IOCTL, perm, "", 0, unix.TIOCLINUX), def, "pty"),
		with(sys("USERFAULTFD_IOC_NEW", unix.SYS_IOCTL, perm, "", 0, seccompUserfaultfdIocNew), def, "pty"),
		with(sys("TIOCSTI with bit 31 is another cmd", unix.SYS_IOCTL, "allow", "", 0, 0x80000000|unix.TIOCSTI), def, "pty"),
		with(sys("TIOCGWINSZ", unix.SYS_IOCTL, "allow", "ok", 0, unix.TIOCGWINSZ, scBuf), def, "pty"),
		// Fileless execution.
		sys("memfd MFD_EXEC", unix.SYS_MEMFD_CREATE, "errno=EACCES", "ok", scName, unix.MFD_EXEC),
		sys("memfd MFD_EXEC high bits", unix.SYS_MEMFD_CREATE, "errno=EACCES", "ok", scName, scHigh|unix.MFD_EXEC),
		sys("memfd legacy (executable)", unix.SYS_MEMFD_CREATE, "errno=EACCES", "ok", scName, unix.MFD_CLOEXEC),
		sys("memfd MFD_NOEXEC_SEAL", unix.SYS_MEMFD_CREATE, "allow", "ok", scName, unix.MFD_NOEXEC_SEAL|unix.MFD_CLOEXEC),
		with(sys("memfd legacy under sysctl", unix.SYS_MEMFD_CREATE, "allow", "ok", scName, unix.MFD_CLOEXEC), SeccompSpec{MemfdNoexecSysctl: true}, ""),
		with(sys("memfd MFD_EXEC under sysctl", unix.SYS_MEMFD_CREATE, "errno=EACCES", "ok", scName, unix.MFD_EXEC), SeccompSpec{MemfdNoexecSysctl: true}, ""),
		with(sys("execveat AT_EMPTY_PATH", unix.SYS_EXECVEAT, perm, "execd", 0, 0, 0, 0, unix.AT_EMPTY_PATH), def, "execveat"),
		with(sys("execveat AT_EMPTY_PATH high bits", unix.SYS_EXECVEAT, perm, "execd", 0, 0, 0, 0, scHigh|unix.AT_EMPTY_PATH), def, "execveat"),
		with(sys("execveat by path", unix.SYS_EXECVEAT, "allow", "execd", 0, 0, 0, 0, 0), def, "execveat"),
	}
}

func TestSeccompVerdicts(t *testing.T) {
	progs := map[SeccompSpec]SeccompProgram{}
	for _, c := range seccompCases() {
		p, ok := progs[c.spec]
		if !ok {
			p = mustBuildSeccomp(t, c.spec)
			progs[c.spec] = p
		}
		if c.op == "threads" {
			continue // glibc's own calls; the clone3 row covers the verdict
		}
		arch := uint32(unix.AUDIT_ARCH_X86_64)
		if c.op == "int80" {
			arch = unix.AUDIT_ARCH_I386
		}
		if got := seccompEmulate(t, p, arch, c.nr, c.args); got != c.want {
			t.Errorf("%s: %+v: verdict %s, want %s", c.name, c.spec, got, c.want)
		}
	}
}

func TestSeccompKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the controls (unshare, bpf, TIOCSTI, …) succeed only as root")
	}
	progs := map[SeccompSpec][]byte{}
	for _, c := range seccompCases() {
		if _, ok := progs[c.spec]; !ok {
			progs[c.spec] = mustBuildSeccomp(t, c.spec).Marshal()
		}
	}
	for _, c := range seccompCases() {
		if c.op == "emu" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctl := runSeccompProbe(t, c, nil)
			got := runSeccompProbe(t, c, progs[c.spec])
			t.Logf("control: %s; filtered: %s", ctl, got)
			if c.ctl != "" && ctl != c.ctl {
				if c.feature == "" {
					t.Fatalf("control: %s, want %s", ctl, c.ctl)
				}
				requireFeature(t, c.feature, false, "control: "+ctl)
			}
			switch {
			case c.want == "allow" && got != ctl:
				t.Errorf("filtered: %s, control: %s; want the filter to allow the call", got, ctl)
			case c.want != "allow" && got != c.want:
				t.Errorf("filtered: %s, want %s (control: %s)", got, c.want, ctl)
			case c.want != "allow" && got == ctl:
				t.Errorf("inconclusive: the control also got %s", ctl)
			}
		})
	}
}

// TestSeccompArchitectures: calls from any other architecture are killed
// before the syscall number is looked at, and unknown native numbers pass.
func TestSeccompArchitectures(t *testing.T) {
	p := mustBuildSeccomp(t, SeccompSpec{})
	if p.Filter[0] != (unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}) {
		t.Errorf("first instruction %+v, want a load of seccomp_data.arch", p.Filter[0])
	}
	for _, c := range []struct {
		arch uint32
		nr   uintptr
		want string
	}{
		{unix.AUDIT_ARCH_I386, unix.SYS_GETPID, "signal=SIGSYS"},
		{unix.AUDIT_ARCH_I386, 102, "signal=SIGSYS"}, // socketcall
		{unix.AUDIT_ARCH_AARCH64, unix.SYS_GETPID, "signal=SIGSYS"},
		{unix.AUDIT_ARCH_X86_64, 0x40000000 | unix.SYS_SOCKET, "signal=SIGSYS"},
		{unix.AUDIT_ARCH_X86_64, 0x40000000 | 545, "signal=SIGSYS"}, // x32 execve
		{unix.AUDIT_ARCH_X86_64, unix.SYS_GETPID, "allow"},
		{unix.AUDIT_ARCH_X86_64, 1000, "allow"},
	} {
		if got := seccompEmulate(t, p, c.arch, c.nr, [6]uint64{}); got != c.want {
			t.Errorf("arch %#x nr %#x: %s, want %s", c.arch, c.nr, got, c.want)
		}
	}
}

// TestSeccompSweeps checks the rules built from unions of masked compares
// (libseccomp 2.5 allows one compare per argument in a rule) against their
// definition on every one- and two-bit value and the boundaries.
func TestSeccompSweeps(t *testing.T) {
	vals := []uint64{0, 0xffffffff, 0xfffffffe, 0x7fffffff, scHigh, ^uint64(0), 0xffffffff_00000000}
	for i := range 64 {
		vals = append(vals, uint64(i), scHigh|uint64(i))
		for j := i; j < 64; j++ {
			vals = append(vals, 1<<i|1<<j)
		}
	}
	p := mustBuildSeccomp(t, SeccompSpec{})
	inet := mustBuildSeccomp(t, SeccompSpec{DenyInet: true, AllowUnixSockets: true})
	for _, v := range vals {
		// personality: the kernel reads 32 bits; PER_LINUX and the query pass.
		want := "errno=EPERM"
		if low := uint32(v); low == 0 || low == 0xffffffff {
			want = "allow"
		}
		if got := seccompEmulate(t, p, unix.AUDIT_ARCH_X86_64, unix.SYS_PERSONALITY, [6]uint64{v}); got != want {
			t.Errorf("personality(%#x): %s, want %s", v, got, want)
		}
		// DenyInet: exactly AF_UNIX and AF_NETLINK pass, compared as 64 bits.
		want = "errno=EPERM"
		if v == unix.AF_UNIX || v == unix.AF_NETLINK {
			want = "allow"
		}
		if got := seccompEmulate(t, inet, unix.AUDIT_ARCH_X86_64, unix.SYS_SOCKET, [6]uint64{v, unix.SOCK_STREAM}); got != want {
			t.Errorf("DenyInet socket(%#x, …): %s, want %s", v, got, want)
		}
	}
}

func TestSeccompMarshal(t *testing.T) {
	p := mustBuildSeccomp(t, SeccompSpec{})
	if want := len(seccompRules(SeccompSpec{})); p.Rules != want {
		t.Errorf("Rules = %d, want %d", p.Rules, want)
	}
	b := p.Marshal()
	if len(b) != 8*len(p.Filter) {
		t.Fatalf("%d bytes for %d instructions", len(b), len(p.Filter))
	}
	if k := binary.NativeEndian.Uint32(b[12:16]); k != p.Filter[1].K {
		t.Errorf("second instruction's k is %#x in the bytes, %#x in the program", k, p.Filter[1].K)
	}
	q, err := UnmarshalSeccomp(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(q.Filter) != fmt.Sprint(p.Filter) || q.Rules != 0 {
		t.Errorf("round trip changed the program")
	}
	for _, bad := range []struct {
		n    int
		want string
	}{{0, "empty"}, {7, "whole number"}, {8*4096 + 4, "whole number"}, {8 * 4097, "limit of 4096"}} {
		if _, err := UnmarshalSeccomp(make([]byte, bad.n)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%d bytes: error %v, want one containing %q", bad.n, err, bad.want)
		}
	}
	if _, err := UnmarshalSeccomp(make([]byte, 8*4096)); err != nil {
		t.Errorf("4096 instructions: %v", err)
	}
	if err := LoadSeccomp(SeccompProgram{}); err == nil {
		t.Errorf("LoadSeccomp of an empty program succeeded")
	}
	if nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); nnp == 0 {
		// Without no_new_privs LoadSeccomp returns before its syscall, so
		// this cannot confine the test process.
		if err := LoadSeccomp(p); err == nil || !strings.Contains(err.Error(), "no_new_privs") {
			t.Errorf("LoadSeccomp without no_new_privs: %v", err)
		}
	}
}

func mustBuildSeccomp(t *testing.T, s SeccompSpec) SeccompProgram {
	t.Helper()
	p, err := BuildSeccomp(s)
	if err != nil {
		t.Fatalf("BuildSeccomp(%+v): %v", s, err)
	}
	return p
}

// seccompEmulate runs p on one call the way the kernel does and returns
// "allow", "errno=E…" or "signal=SIGSYS". It knows the instructions libseccomp emits.
func seccompEmulate(t *testing.T, p SeccompProgram, arch uint32, nr uintptr, args [6]uint64) string {
	t.Helper()
	var data [64]byte // struct seccomp_data
	binary.NativeEndian.PutUint32(data[0:], uint32(nr))
	binary.NativeEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(p.Filter); pc++ {
		in := p.Filter[pc]
		jump := func(cond bool) {
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		}
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.NativeEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			jump(acc == in.K)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			jump(acc > in.K)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			jump(acc >= in.K)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			jump(acc&in.K != 0)
		case unix.BPF_RET | unix.BPF_K:
			switch act := in.K & unix.SECCOMP_RET_ACTION_FULL; act {
			case unix.SECCOMP_RET_ALLOW:
				return "allow"
			case unix.SECCOMP_RET_KILL_PROCESS:
				return "signal=SIGSYS"
			case unix.SECCOMP_RET_ERRNO:
				return "errno=" + unix.ErrnoName(syscall.Errno(in.K&unix.SECCOMP_RET_DATA))
			default:
				t.Fatalf("instruction %d returns action %#x", pc, act)
			}
		default:
			t.Fatalf("instruction %d: opcode %#x is unknown to the emulator", pc, in.Code)
		}
	}
	t.Fatalf("program ran off its end")
	return ""
}

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
// placeholders resolved; "pty": args[0] is a pty's slave fd; "ptrace":
// args[1] is a child's pid; "exec": fork+exec /bin/true with clone flags
// args[0]; "execveat": /bin/echo by O_PATH fd and "" or by path, flags
// args[4]; "dgram": socketpair(AF_UNIX, SOCK_DGRAM) then sendto a
// pathname socket; "int80": getpid through the i386 entry; "threads":
// python3 starts a thread.
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
		case scBpfAttr:
			args[i] = addr(640)
		}
	}
	switch op {
	case "pty":
		fd, err := seccompProbePty()
		if err != nil {
			return "setup: " + err.Error()
		}
		args[0], args[2] = uintptr(fd), addr(512)
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
		if pid := seccompInt80(nr); pid != int32(os.Getpid()) {
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
// this 64-bit thread. Go has no inline assembly and cgo is not allowed in
// tests, so the stub is machine code in an executable page, called through
// a func value whose code pointer is the page: mov $nr, %eax; int $0x80;
// ret. Go's register ABI returns an int32 result in AX.
func seccompInt80(nr uintptr) int32 {
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
	return stub()
}
