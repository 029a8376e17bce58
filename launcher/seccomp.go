//go:build linux && cgo

package launcher

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Stage 1 compiles the agent's seccomp filter here with libseccomp; stage 2
// only loads the finished program (LoadSeccomp, seccomp_linux.go).
//
// The filter allows by default and denies the listed calls with an errno,
// so that a denied program sees an ordinary error and can fall back. Calls
// from any other architecture's entry point (i386 `int $0x80`, x32 numbers
// with bit 0x40000000) kill the process: libseccomp checks the audit arch
// first and, for x86_64, sends x32 numbers to the bad-arch action.
//
// Arguments the kernel reads as 32-bit ints (socket domain and protocol,
// socket type, send flags, ioctl cmd, personality, memfd and execveat
// flags) and modes are compared masked to their low 32 bits (or to the
// bits that matter): the register is 64 bits wide, the kernel ignores the
// high half, and a plain 64-bit compare would let
// `ioctl(fd, 1<<32|TIOCSTI, …)` through.
//
// Limitations (for the package doc):
//   - Classic seccomp cannot read memory, so it cannot see paths, clone3's
//     flags, openat2's mode, or which file execve runs. clone3 and openat2
//     are denied whole (ENOSYS: glibc, musl and Go fall back to clone and
//     openat; glibc and Go do not call openat2 at all);
//     `execve("/proc/self/fd/N")` of an executable memfd is prevented only
//     by refusing executable memfds (memfd rules, or vm.memfd_noexec=2).
//   - Default allow: a call the kernel has and this list does not name is
//     allowed. A call numbered above seccompReviewed fails with ENOSYS
//     (seccompNewerCalls) until a review raises it.
//   - Landlock's network rules hook TCP bind and connect only. TCP Fast
//     Open (MSG_FASTOPEN on sendto, sendmsg, sendmmsg) connects without the
//     connect hook and is always denied here; TCP_FASTOPEN_CONNECT needs a
//     connect(), which Landlock checks. listen() on an unbound socket
//     binds an ephemeral port without the bind hook; that is denied only
//     under DenyListen, which also refuses listen() on a socket bound with
//     Landlock's permission.
//   - Only TCP's MPTCP and SMC variants are denied among the IP
//     protocols: SCTP, UDP, ICMP and raw IP sockets are not covered by
//     Landlock and not denied here, except by DenyInet. Whether
//     setsockopt(TCP_ULP, "smc") still exists was not checked (this kernel
//     has no CONFIG_SMC).
//   - The setuid/setgid rule sees the mode argument of chmod, fchmod,
//     fchmodat, fchmodat2, open, openat, creat, mkdir(at) and mknod(at).
//     io_uring's openat (IORING_OP_OPENAT) carries its mode in memory and
//     would pass, but io_uring_setup is denied, so no ring exists. The rule
//     stops the agent setting the bits, not using a file that has them.
//   - The family allow-list and the MPTCP, SMC, clone3 and openat2
//     denials answer "not supported", so they do not look like a policy
//     refusal in the agent's logs.
//   - A 32-bit (i386) program cannot run at all: its first system call
//     kills it.

// Values the kernel headers define that golang.org/x/sys/unix does not.
const (
	seccompUserfaultfdIocNew = 0xAA00 // USERFAULTFD_IOC_NEW = _IO(0xAA, 0x00), /dev/userfaultfd (Linux 6.1)
	seccompLow32             = 0xffffffff
	seccompSockTypeMask      = 0xf // SOCK_TYPE_MASK: type without SOCK_NONBLOCK/SOCK_CLOEXEC
	seccompSetid             = unix.S_ISUID | unix.S_ISGID
	seccompX32Bit            = 0x40000000 // __X32_SYSCALL_BIT: x86-64's x32 calls are numbered from here
)

// seccompUnifiedNumber numbers syscalls newer than the libseccomp we link
// (2.5.4 knows the kernel's table up to about Linux 5.17). Numbers from 424
// up are the same on every architecture.
func seccompUnifiedNumber(name string) (int, bool) {
	switch name {
	case "fchmodat2": // Linux 6.6
		return unix.SYS_FCHMODAT2, true
	case "open_tree_attr": // Linux 6.15
		return unix.SYS_OPEN_TREE_ATTR, true
	case "getxattrat": // Linux 6.13
		return unix.SYS_GETXATTRAT, true
	case "listxattrat": // Linux 6.13
		return unix.SYS_LISTXATTRAT, true
	}
	return 0, false
}

// seccompRule is one deny rule: calls to Syscall whose arguments satisfy
// every condition of any one of Alts fail with Errno. No Alts: every call.
// Alternatives exist because libseccomp 2.5 allows one comparison per
// argument in a rule, so "x != a && x != b" becomes a union of rules.
type seccompRule struct {
	Syscall string
	Errno   syscall.Errno
	Alts    [][]seccomp.ScmpCondition
}

type seccompConds = []seccomp.ScmpCondition

// seccompArg32 is "argument arg, read as the kernel's 32-bit int, equals v".
func seccompArg32(arg uint, v uint64) seccomp.ScmpCondition {
	return seccompMasked(arg, seccompLow32, v)
}

// seccompBits is "argument arg has every bit of mask set".
func seccompBits(arg uint, mask uint64) seccomp.ScmpCondition {
	return seccompMasked(arg, mask, mask)
}

// seccompMasked is "argument arg & mask == v".
func seccompMasked(arg uint, mask, v uint64) seccomp.ScmpCondition {
	return seccomp.ScmpCondition{Argument: arg, Op: seccomp.CompareMaskedEqual, Operand1: mask, Operand2: v}
}

// seccompPersonaAlts matches a persona whose low 32 bits (all the kernel
// reads) are neither 0 (PER_LINUX) nor 0xffffffff (the query): exactly
// the words with a 1 bit followed, cyclically, by a 0 bit.
func seccompPersonaAlts() [][]seccomp.ScmpCondition {
	alts := make([][]seccomp.ScmpCondition, 0, 32)
	for i := range 32 {
		one, zero := uint64(1)<<i, uint64(1)<<((i+1)%32)
		alts = append(alts, seccompConds{seccompMasked(0, one|zero, one)})
	}
	return alts
}

// seccompNotIn matches an argument whose low width bits (all the kernel
// reads) are none of allowed: a union of masked compares, one per aligned
// block of values that holds no allowed value.
func seccompNotIn(arg uint, width int, allowed ...uint64) [][]seccomp.ScmpCondition {
	full := uint64(1)<<width - 1
	var alts [][]seccomp.ScmpCondition
	var split func(base uint64, k int)
	split = func(base uint64, k int) { // the block [base, base+2^k)
		if !slices.ContainsFunc(allowed, func(v uint64) bool { return v>>k == base>>k }) {
			alts = append(alts, seccompConds{seccompMasked(arg, full&^(uint64(1)<<k-1), base)})
		} else if k > 0 {
			split(base, k-1)
			split(base|uint64(1)<<(k-1), k-1)
		}
	}
	split(0, width)
	return alts
}

// seccompWith adds c to every alternative of alts.
func seccompWith(alts [][]seccomp.ScmpCondition, c seccomp.ScmpCondition) [][]seccomp.ScmpCondition {
	out := make([][]seccomp.ScmpCondition, 0, len(alts))
	for _, a := range alts {
		out = append(out, append(slices.Clip(a), c))
	}
	return out
}

// seccompAnyBit matches an argument with at least one bit of mask set.
func seccompAnyBit(arg uint, mask uint64) [][]seccomp.ScmpCondition {
	var alts [][]seccomp.ScmpCondition
	for b := uint64(1); b != 0; b <<= 1 {
		if mask&b != 0 {
			alts = append(alts, seccompConds{seccompBits(arg, b)})
		}
	}
	return alts
}

// seccompRules is the deny list for spec, in the order it is compiled.
// Rules never overlap with different errnos except where noted, so the
// errno a call gets does not depend on libseccomp's rule ordering.
func seccompRules(spec SeccompSpec) []seccompRule {
	var rs []seccompRule
	deny := func(errno syscall.Errno, alts [][]seccomp.ScmpCondition, names ...string) {
		for _, n := range names {
			rs = append(rs, seccompRule{Syscall: n, Errno: errno, Alts: alts})
		}
	}
	one := func(c ...seccomp.ScmpCondition) [][]seccomp.ScmpCondition { return [][]seccomp.ScmpCondition{c} }
	eperm := syscall.EPERM

	// Reading or steering other processes: with these a confined process
	// can borrow the capabilities or fds of another one. kcmp only serves
	// checkpoint/restore and compares kernel object identities.
	deny(eperm, nil, "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp")
	// Stage 2, the pid namespace's init (pid 1 to the agent), runs as the
	// agent's uid and watches a stopped tree; the kernel lets a process
	// change the limits and scheduling of another of its uid, dumpable or
	// not. With prlimit(1, RLIMIT_NOFILE) a hunt made stage 2's reads of
	// /proc fail, with SCHED_IDLE and nice 19 it starved it; either way
	// its Ctrl-Z watch did not see a process run again. So no call here
	// may name pid 1, nor a process group or a user (stage 2 is in the
	// agent's first group, and of its uid): nice, renice of a pid,
	// ionice -p and taskset -p of the agent's own processes still work.
	if spec.DenyTruncate {
		deny(syscall.EACCES, nil, "truncate")
	}
	if spec.SignalSelf != 0 {
		self := seccompNotIn(0, 32, uint64(uint32(spec.SignalSelf)))
		deny(eperm, self, "kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
		deny(eperm, nil, "tkill", "pidfd_send_signal")
		deny(eperm, [][]seccomp.ScmpCondition{{seccompArg32(1, unix.F_SETOWN)}, {seccompArg32(1, unix.F_SETOWN_EX)}}, "fcntl")
		const fioSetOwn, siocSPgrp = 0x8901, 0x8902 // asm-generic/sockios.h
		deny(eperm, [][]seccomp.ScmpCondition{{seccompArg32(1, fioSetOwn)}, {seccompArg32(1, siocSPgrp)}}, "ioctl")
	} else if spec.DenyGroupKill {
		deny(eperm, one(seccompArg32(0, 0)), "kill")
	} else if spec.DenyGroupCont {
		deny(eperm, one(seccompArg32(0, 0), seccompArg32(1, uint64(unix.SIGCONT))), "kill")
	}
	init := seccompArg32(0, 1)
	deny(eperm, one(init), "prlimit64", "sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity")
	// RLIMIT_CORE stays 1 (buildRlimits says why 0 is worse). Lowering
	// one's own limit, the usual call (glibc's setrlimit: prlimit64(0,
	// CORE, new, NULL)), is answered as done and changes nothing: its
	// aim, no core dump, holds already, and ssh-agent exits when it
	// cannot. Naming a pid, or asking the old limit back (which the
	// answer would leave unwritten), is refused. The pid is compared
	// whole, so the two rules are disjoint from each other and from the
	// init rule above (same errno where they meet).
	core := seccompArg32(1, unix.RLIMIT_CORE)
	set := seccomp.ScmpCondition{Argument: 2, Op: seccomp.CompareNotEqual, Operand1: 0}
	self := seccomp.ScmpCondition{Argument: 0, Op: seccomp.CompareEqual, Operand1: 0}
	deny(0, one(self, core, set, seccomp.ScmpCondition{Argument: 3, Op: seccomp.CompareEqual, Operand1: 0}), "prlimit64")
	deny(eperm, [][]seccomp.ScmpCondition{
		{seccomp.ScmpCondition{Argument: 0, Op: seccomp.CompareNotEqual, Operand1: 0}, core, set},
		{self, core, set, seccomp.ScmpCondition{Argument: 3, Op: seccomp.CompareNotEqual, Operand1: 0}},
	}, "prlimit64")
	deny(0, one(seccompArg32(0, unix.RLIMIT_CORE)), "setrlimit")
	// "which" other than a process is compared whole (not as the kernel's
	// 32-bit int, as seccompNotIn would, in 32 rules that cost stage 1 a
	// millisecond to compile): a process named with garbage in the high
	// half is refused too.
	other := func(v uint64) seccomp.ScmpCondition {
		return seccomp.ScmpCondition{Argument: 0, Op: seccomp.CompareNotEqual, Operand1: v}
	}
	deny(eperm, [][]seccomp.ScmpCondition{{other(unix.PRIO_PROCESS)}, {seccompArg32(0, unix.PRIO_PROCESS), seccompArg32(1, 1)}}, "setpriority")
	const ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS, <linux/ioprio.h>
	deny(eperm, [][]seccomp.ScmpCondition{{other(ioprioWhoProcess)}, {seccompArg32(0, ioprioWhoProcess), seccompArg32(1, 1)}}, "ioprio_set")
	// Mount table and root: the old API, the new fd-based API, chroot.
	deny(eperm, nil, "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
		"open_tree_attr", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr")
	// Kernel attack surface that ordinary programs do not need.
	deny(eperm, nil, "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
		// io_uring also runs openat/socket/connect without passing this filter.
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		// fanotify: Landlock does not check its marks, which report the
		// host's file activity (by inode) where the lists give nothing.
		"fanotify_init", "fanotify_mark")
	// Namespaces: no joining, no unsharing (of anything), no clone3 (its
	// flags are in memory, which seccomp cannot read; ENOSYS makes glibc,
	// musl and Go fall back to clone, whose flags are checked here).
	deny(eperm, nil, "setns", "unshare")
	deny(syscall.ENOSYS, nil, "clone3")
	var ns [][]seccomp.ScmpCondition
	for _, f := range []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
		unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWTIME} {
		ns = append(ns, seccompConds{seccompBits(0, f)})
	}
	// A child whose exit signal (CSIGNAL, clone's low byte) is SIGCONT
	// continues its parent when it dies, and a stopped child dies of any
	// fatal signal: with O_ASYNC's SIGIO set off by the person's file
	// activity, that continued a tree the person's Ctrl-Z stopped, as
	// F_SETSIG's SIGCONT would (below).
	const cloneExitSignal = 0xff // CSIGNAL
	ns = append(ns, seccompConds{seccompMasked(0, cloneExitSignal, uint64(unix.SIGCONT))})
	if spec.DenyFork {
		// No new process at all: a clone must make a thread.
		ns = append(ns, seccompConds{seccompMasked(0, unix.CLONE_THREAD, 0)})
		deny(eperm, nil, "fork", "vfork")
	}
	deny(eperm, ns, "clone")
	// Administration of the machine.
	deny(eperm, nil, "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
		"acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie",
		"name_to_handle_at", "open_by_handle_at", "uselib", "vhangup")
	// x86 segment descriptors of one's own: Wine and 16-bit emulators use
	// them, ordinary programs never; the call has had kernel bugs of its
	// own (CVE-2015-5157, CVE-2017-17053), so it is surface without use.
	deny(eperm, nil, "modify_ldt")
	// personality: only PER_LINUX and the query. PER_LINUX32 and flags
	// such as ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC weaken exec'd programs.
	deny(eperm, seccompPersonaAlts(), "personality")

	// Socket families: an allow-list, whatever the network mode. AF_VSOCK
	// (not network-namespaced), AF_PACKET, AF_SMC, AF_TIPC, AF_BLUETOOTH,
	// AF_ALG and the rest get what a kernel without them answers. The
	// domain is compared as the kernel's 32-bit int, so every other
	// socket rule, which names an allowed family, is disjoint from it.
	// socketpair too: families other than AF_UNIX that implement it (TIPC)
	// make sockets that can send elsewhere.
	if spec.DenySockets {
		deny(eperm, nil, "socket", "socketpair")
	} else {
		families := []uint64{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}
		deny(syscall.EAFNOSUPPORT, seccompNotIn(0, 32, families...), "socket", "socketpair")
		// Netlink: the kernel's routing, socket-diagnostic and generic
		// families (getaddrinfo, ip, ss). NETLINK_USERSOCK and the other
		// families that carry messages between processes of one network
		// namespace reach the host's own processes wherever the agent has
		// the host's (ports mode, a hunt).
		deny(syscall.EPROTONOSUPPORT, seccompWith(seccompNotIn(2, 32, unix.NETLINK_ROUTE, unix.NETLINK_SOCK_DIAG, unix.NETLINK_GENERIC),
			seccompArg32(0, unix.AF_NETLINK)), "socket")
		inet := func(c seccomp.ScmpCondition) [][]seccomp.ScmpCondition {
			return [][]seccomp.ScmpCondition{{seccompArg32(0, unix.AF_INET), c}, {seccompArg32(0, unix.AF_INET6), c}}
		}
		if spec.DenyInet {
			deny(eperm, [][]seccomp.ScmpCondition{{seccompArg32(0, unix.AF_INET)}, {seccompArg32(0, unix.AF_INET6)}}, "socket")
		} else {
			// Landlock's TCP rules check IPPROTO_TCP sockets only: MPTCP and
			// SMC (TCP underneath) would connect anywhere. The errno is the
			// one a kernel without them returns, so programs (Go ≥ 1.24
			// listens with MPTCP by default) fall back to TCP at once. Scoped
			// to the inet families: 256 is also htons(ETH_P_802_3).
			deny(syscall.EPROTONOSUPPORT, append(inet(seccompArg32(2, unix.IPPROTO_MPTCP)),
				inet(seccompArg32(2, unix.IPPROTO_SMC))...), "socket")
		}
		if !spec.AllowUnixSockets {
			deny(eperm, one(seccompArg32(0, unix.AF_UNIX)), "socket")
			// Only stream and seqpacket pairs: the kernel turns SOCK_RAW into
			// SOCK_DGRAM, so this is an allow-list of types too.
			deny(eperm, seccompWith(seccompNotIn(1, 4, unix.SOCK_STREAM, unix.SOCK_SEQPACKET),
				seccompArg32(0, unix.AF_UNIX)), "socketpair")
		}
	}
	// TCP Fast Open connects from sendto/sendmsg/sendmmsg without
	// Landlock's connect hook. The flags are 32-bit; one bit is compared.
	deny(eperm, one(seccompBits(3, unix.MSG_FASTOPEN)), "sendto", "sendmmsg")
	deny(eperm, one(seccompBits(2, unix.MSG_FASTOPEN)), "sendmsg")
	// listen() on an unbound socket binds an ephemeral port without
	// Landlock's bind hook.
	if spec.DenyListen {
		deny(eperm, nil, "listen")
	}

	// Setuid and setgid files: the agent's files belong to their owner on
	// disk (idmapped mounts), so a setuid file it made would run as that
	// owner for anyone on the host. Every mode argument is refused with
	// S_ISUID or S_ISGID; the bits lie in the low 16 bits the kernel
	// reads (umode_t). open's mode counts only with O_CREAT or O_TMPFILE
	// and mkdir's set-id bits are dropped by the kernel (a directory
	// inherits S_ISGID from its parent), but refusing them costs nothing
	// and does not depend on the flags. openat2 carries its mode in
	// memory: ENOSYS sends callers back to openat.
	deny(eperm, seccompAnyBit(1, seccompSetid), "chmod", "fchmod", "creat", "mkdir", "mknod")
	deny(eperm, seccompAnyBit(2, seccompSetid), "fchmodat", "fchmodat2", "open", "mkdirat", "mknodat")
	deny(eperm, seccompAnyBit(3, seccompSetid), "openat")
	if !spec.AllowOpenat2 {
		deny(syscall.ENOSYS, nil, "openat2")
	}

	// Terminal input injection; what leaves the person's terminal dead
	// after the agent (hunts): its line discipline (N_NULL), its output
	// stopped (TCXONC, tcflow's call, and TCOOFF kept the person's next
	// program from writing), exclusive mode (TIOCEXCL: /dev/tty could
	// not be opened again); userfaultfd through its device; and the file
	// system's encryption keyring (fscrypt), a keyring outside keyctl's
	// reach: removing a key needs only a descriptor on that file system
	// (the workspace's) and locked every directory the key unlocks —
	// unprivileged, where the agent is the person's uid, the person's
	// encrypted home outside the lists (a hunt). Adding one goes with it,
	// as add_key does; asking a key's status stays.
	deny(eperm, [][]seccomp.ScmpCondition{
		{seccompArg32(1, unix.TIOCSTI)},
		{seccompArg32(1, unix.TIOCLINUX)},
		{seccompArg32(1, unix.TIOCSETD)},
		{seccompArg32(1, unix.TCXONC)},
		{seccompArg32(1, unix.TIOCEXCL)},
		{seccompArg32(1, seccompUserfaultfdIocNew)},
		{seccompArg32(1, unix.FS_IOC_ADD_ENCRYPTION_KEY)},
		{seccompArg32(1, unix.FS_IOC_REMOVE_ENCRYPTION_KEY)},
		{seccompArg32(1, unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS)},
	}, "ioctl")

	// Extended attributes by path: Landlock checks neither getxattr nor
	// listxattr, so a file outside every list gave its xattrs away (a
	// hunt: a download's origin URL, token and all). ENOTSUP reads as
	// "no xattrs here", which ls, cp -a and Python's shutil take in their
	// stride. The calls on a descriptor (fgetxattr, flistxattr) stay:
	// Landlock checked the open.
	deny(syscall.ENOTSUP, nil, "getxattr", "lgetxattr", "listxattr", "llistxattr")
	deny(syscall.ENOSYS, nil, "getxattrat", "listxattrat")

	// Leases: Landlock does not check them, and a read lease on a file
	// the agent may only read holds the person's writes to it for up to
	// lease-break-time (45 s), while telling the agent of them (SIGIO).
	// F_SETDELEG (kernels after 6.18; this one answers EINVAL) sets a
	// delegation, a lease by another name: listed before a kernel has it.
	deny(eperm, [][]seccomp.ScmpCondition{{seccompArg32(1, unix.F_SETLEASE)}, {seccompArg32(1, unix.F_SETDELEG)}}, "fcntl")
	// F_SETSIG picks the signal that signal-driven I/O (O_ASYNC) sends.
	// SIGCONT would continue a process the person's Ctrl-Z stopped the
	// moment the person typed at the shell, to read that line before
	// stage 2 saw it run (a hunt, twice in three). SIGIO, the default,
	// continues nothing.
	deny(eperm, one(seccompArg32(1, unix.F_SETSIG)), "fcntl")

	// Fileless execution: Landlock does not check anonymous files. EACCES
	// is what the kernel answers under vm.memfd_noexec=2. execveat's
	// errno is not ENOSYS, on which libcs fall back to /proc/self/fd.
	deny(syscall.EACCES, one(seccompBits(1, unix.MFD_EXEC)), "memfd_create")
	if !spec.MemfdNoexecSysctl {
		deny(syscall.EACCES, one(seccompMasked(1, unix.MFD_EXEC|unix.MFD_NOEXEC_SEAL, 0)), "memfd_create")
	}
	if spec.DenyExec {
		deny(eperm, nil, "execve", "execveat")
	} else {
		deny(eperm, one(seccompBits(4, unix.AT_EMPTY_PATH)), "execveat")
	}
	return rs
}

// BuildSeccomp compiles the filter for spec into classic BPF for the
// native architecture. Stage 1 calls it; stage 2 only loads the result.
func BuildSeccomp(spec SeccompSpec) (SeccompProgram, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return SeccompProgram{}, fmt.Errorf("seccomp: new filter: %w", err)
	}
	defer f.Release()
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return SeccompProgram{}, fmt.Errorf("seccomp: set bad-arch action: %w", err)
	}
	rules := seccompRules(spec)
	for _, r := range rules {
		if err := seccompAdd(f, r); err != nil {
			return SeccompProgram{}, err
		}
	}
	b, err := seccompExport(f)
	if err != nil {
		return SeccompProgram{}, err
	}
	p, err := UnmarshalSeccomp(b)
	if err != nil {
		return SeccompProgram{}, fmt.Errorf("seccomp: libseccomp exported an unusable program: %w", err)
	}
	p.Rules = len(rules)
	if newer := seccompNewerCalls(seccompReviewed); newer != nil {
		p.Filter = append(newer, p.Filter...)
		p.Rules++
	}
	return p, nil
}

// seccompReviewed is the highest system call number the rules above were
// reviewed against: file_setattr, the last call Linux 6.18 has (the audit
// of 2026-12-03 went through every call up to it). Numbers from 424 up
// are the same on every architecture. Raising it is part of reviewing a
// newer kernel: each call it lets through is listed above first, or known
// to need nothing.
const seccompReviewed = unix.SYS_FILE_SETATTR

// seccompNewerCalls is a prefix to libseccomp's program: on the native
// architecture, a call numbered above reviewed (seccompReviewed; a test
// passes a lower one, to see the prefix at work in this kernel) fails
// with ENOSYS, what a kernel without the call answers, so programs fall
// back as they do on older kernels. A deny list over a default allow otherwise let
// through whatever a later kernel adds (listns, after 6.18, lists the
// host's namespaces) until someone listed it (SD-10). x32's numbers (bit
// 30 set) are left to libseccomp's program, which kills them. nil where
// the native architecture's audit number is not known here: the rules
// alone then, as before.
func seccompNewerCalls(reviewed uint32) []unix.SockFilter {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jgt = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// Offsets in struct seccomp_data: nr at 0, arch at 4. Every jump
	// that does not answer lands on libseccomp's first instruction (6).
	return []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, K: arch, Jt: 0, Jf: 4},
		{Code: ld, K: 0},
		{Code: jge, K: seccompX32Bit, Jt: 2, Jf: 0},
		{Code: jgt, K: reviewed, Jt: 0, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(syscall.ENOSYS)},
	}
}

// seccompAdd adds r to f. Exact: libseccomp must not rewrite the rule.
func seccompAdd(f *seccomp.ScmpFilter, r seccompRule) error {
	nr, err := seccomp.GetSyscallFromName(r.Syscall)
	if err != nil {
		n, ok := seccompUnifiedNumber(r.Syscall)
		if !ok {
			return fmt.Errorf("seccomp: resolve syscall %q: %w", r.Syscall, err)
		}
		nr = seccomp.ScmpSyscall(n)
	}
	act := seccomp.ActErrno.SetReturnCode(int16(r.Errno))
	if len(r.Alts) == 0 {
		if err := f.AddRuleExact(nr, act); err != nil {
			return fmt.Errorf("seccomp: add rule for %s (%v): %w", r.Syscall, r.Errno, err)
		}
	}
	for _, conds := range r.Alts {
		if err := f.AddRuleConditionalExact(nr, act, conds); err != nil {
			return fmt.Errorf("seccomp: add rule for %s (%v) %v: %w", r.Syscall, r.Errno, conds, err)
		}
	}
	return nil
}

// seccompExport writes the compiled program through a pipe; libseccomp
// 2.5 can only export to a file descriptor.
func seccompExport(f *seccomp.ScmpFilter) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp: export pipe: %w", err)
	}
	defer r.Close()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	err = f.ExportBPF(w)
	w.Close()
	res := <-done
	if err != nil {
		return nil, fmt.Errorf("seccomp: export BPF: %w", err)
	}
	if res.err != nil {
		return nil, fmt.Errorf("seccomp: read exported BPF: %w", res.err)
	}
	return res.b, nil
}
