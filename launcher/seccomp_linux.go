package launcher

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file is the part of the seccomp filter that stage 2 needs: the
// program as it travels in the plan, and loading it. No cgo: stage 2 only
// loads what stage 1 compiled (seccomp.go).

// SeccompSpec is what the policy and the host decide about the filter.
type SeccompSpec struct {
	// AllowUnixSockets is the policy's network.unix_sockets. When false,
	// socket(AF_UNIX, …) fails with EPERM, and so does every
	// socketpair(AF_UNIX, …) but SOCK_STREAM and SOCK_SEQPACKET ones (they
	// are connected for life): a datagram socket, even one of a pair, can
	// sendto() or connect() to any pathname socket, and the kernel makes
	// SOCK_RAW pairs datagram ones.
	AllowUnixSockets bool
	// DenyInet is set when network "none" must be enforced without a
	// network namespace: socket(AF_INET or AF_INET6, …) then fails with
	// EPERM. Whatever it says, the other families except AF_UNIX (governed
	// above) and AF_NETLINK fail with EAFNOSUPPORT: AF_VSOCK, AF_SMC,
	// AF_TIPC, AF_BLUETOOTH, AF_PACKET and others leave the host or the
	// network namespace, or are not checked by Landlock.
	DenyInet bool
	// DenyListen makes listen() fail with EPERM. Landlock has no listen
	// hook, and listen() on an unbound socket binds an ephemeral port.
	// For "ports" mode when bind_tcp is empty and Unix sockets are not
	// allowed (listen() serves every family, so it cannot be narrower).
	DenyListen bool
	// MemfdNoexecSysctl is set when stage 2 has set vm.memfd_noexec=2 in
	// the agent's pid namespace (Linux ≥ 6.3), so that the kernel itself
	// seals every memfd created without MFD_EXEC non-executable. When
	// false, memfd_create without MFD_NOEXEC_SEAL fails with EACCES too:
	// with vm.memfd_noexec=0 such a memfd is executable, and Landlock does
	// not check anonymous files.
	// AllowOpenat2 keeps openat2, which otherwise answers ENOSYS (its mode
	// travels in memory, where no filter can see a set-uid bit). Only for
	// a component whose own code picks every mode it passes (fs resolves
	// every path with RESOLVE_BENEATH and needs it), never for an agent.
	AllowOpenat2      bool
	MemfdNoexecSysctl bool
	// DenyExec makes execve and execveat fail with EPERM: for components
	// that never start a program (kms, fs, net).
	DenyExec bool
	// DenyFork makes every way of starting a process fail with EPERM:
	// fork, vfork, and clone without CLONE_THREAD (clone3 is ENOSYS
	// already). Threads still start: CLONE_THREAD implies CLONE_VM and
	// CLONE_SIGHAND, so what it makes is a thread of the same process,
	// which dies with it. For components and Code Mode workers, which
	// never start a process: without this a process that took one over
	// could fork a child that calls setsid and outlives its group's kill.
	DenyFork bool
	// DenySockets makes socket and socketpair fail with EPERM whatever
	// their family: for components that serve only the listener they were
	// handed (kms). It replaces the family rules above.
	DenySockets bool
	// DenyGroupKill makes kill(0, …) fail with EPERM: for an agent that
	// shares the launcher's process group (off a terminal of its own) as
	// the person's uid, where no Landlock signal scoping (ABI 6) keeps its
	// signals in its domain. The pid namespace hides every other process
	// and group by number, but kill(0) names the caller's own group,
	// which holds the launcher and the rest of the person's pipeline
	// (launcher … | tee log): the agent could kill them all.
	DenyGroupKill bool
	// DenyGroupCont makes kill(0, SIGCONT) fail with EPERM: for an agent
	// that shares the launcher's process group and session (off a
	// terminal of its own) as root's throwaway uid, where no Landlock
	// signal scoping keeps its signals in its domain. That uid may signal
	// no member of the group, but the kernel lets any process send
	// SIGCONT within its session: the agent could continue the launcher
	// and the person's pipeline beside it, stopped or not.
	DenyGroupCont bool
	// SignalSelf, when not 0, is the caller's pid: kill, tgkill,
	// rt_sigqueueinfo and rt_tgsigqueueinfo may name only it, and tkill,
	// pidfd_send_signal and every way of choosing whom SIGIO goes to
	// (F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP) fail with EPERM. For
	// components and Code Mode workers, which signal no other process:
	// below Landlock ABI 6 no signal scope keeps them in their domain, and
	// an unprivileged Code Mode worker is the person's uid without a pid
	// namespace, so any process of that uid was in reach.
	SignalSelf int
	// DenyTruncate makes truncate(2), by path, fail with EACCES, as
	// Landlock answers it from ABI 3: for components with no write paths,
	// whose Landlock below ABI 3 does not check it, so that any file their
	// uid may write could be emptied (an unprivileged Code Mode worker is
	// the person's uid, outside any mount namespace).
	DenyTruncate bool
}

// SeccompProgram is a compiled filter, ready to load.
type SeccompProgram struct {
	Filter []unix.SockFilter
	// Rules is the number of deny rules, for the launch summary. It does
	// not travel: UnmarshalSeccomp leaves it 0.
	Rules int
}

// seccompInsnSize is sizeof(struct sock_filter).
const seccompInsnSize = 8

// Marshal encodes the program as the kernel's struct sock_filter array:
// 8 bytes per instruction, native byte order.
func (p SeccompProgram) Marshal() []byte {
	b := make([]byte, 0, len(p.Filter)*seccompInsnSize)
	for _, in := range p.Filter {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	return b
}

// UnmarshalSeccomp decodes what Marshal (or libseccomp's export) wrote.
// It checks the length only; the kernel verifies the program when it is
// loaded.
func UnmarshalSeccomp(b []byte) (SeccompProgram, error) {
	if len(b)%seccompInsnSize != 0 {
		return SeccompProgram{}, fmt.Errorf("seccomp: program of %d bytes is not a whole number of %d-byte instructions", len(b), seccompInsnSize)
	}
	n := len(b) / seccompInsnSize
	if err := seccompCheckLen(n); err != nil {
		return SeccompProgram{}, err
	}
	p := SeccompProgram{Filter: make([]unix.SockFilter, n)}
	for i := range p.Filter {
		r := b[i*seccompInsnSize:]
		p.Filter[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(r[0:2]),
			Jt:   r[2],
			Jf:   r[3],
			K:    binary.NativeEndian.Uint32(r[4:8]),
		}
	}
	return p, nil
}

func seccompCheckLen(n int) error {
	if n == 0 {
		return errors.New("seccomp: empty program")
	}
	if n > unix.BPF_MAXINSNS {
		return fmt.Errorf("seccomp: program of %d instructions is longer than the kernel's limit of %d", n, unix.BPF_MAXINSNS)
	}
	return nil
}

// LoadSeccomp installs p on the calling OS thread. The caller must have
// locked its goroutine to the thread (runtime.LockOSThread) and set
// no_new_privs on it; LoadSeccomp checks the latter and refuses otherwise.
//
// Only this thread is filtered (no SECCOMP_FILTER_FLAG_TSYNC): the other
// threads of a Go process cannot be stopped from making system calls of
// their own, and nothing they run is the agent. What the agent inherits is
// this thread's filter: execve keeps only the calling thread, and a
// process forked from this thread (os.StartProcess on it) starts with the
// filter of the thread that created it. Filters cannot be removed.
func LoadSeccomp(p SeccompProgram) error {
	if err := seccompCheckLen(len(p.Filter)); err != nil {
		return err
	}
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("seccomp: read no_new_privs: %w", err)
	}
	if nnp != 1 {
		return errors.New("seccomp: no_new_privs is not set on this thread; set it before loading the filter")
	}
	prog := unix.SockFprog{Len: uint16(len(p.Filter)), Filter: &p.Filter[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p.Filter)
	if errno != 0 {
		return fmt.Errorf("seccomp: load filter of %d instructions: %w", len(p.Filter), errno)
	}
	return nil
}

// loadSeccompAllThreads installs p on every thread of the process at once
// (SECCOMP_FILTER_FLAG_TSYNC); no_new_privs must be set on all of them.
func loadSeccompAllThreads(p SeccompProgram) error {
	if err := seccompCheckLen(len(p.Filter)); err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(p.Filter)), Filter: &p.Filter[0]}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p.Filter)
	switch {
	case errno != 0:
		return fmt.Errorf("component: seccomp: %w", errno)
	case r != 0:
		return fmt.Errorf("component: seccomp: thread %d could not take the filter", r)
	}
	return nil
}
