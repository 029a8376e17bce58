package probe

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// withoutNetNS execs argv as it would run on a host with
// user.max_net_namespaces = 0: in a private mount namespace the sysctl
// reads 0 (a file of its own bound over it: what a launch reads), and a
// seccomp filter answers EPERM to clone and unshare with CLONE_NEWNET, as
// such a host does (what `launcher hello` tries). clone3 carries its
// flags in memory, where a filter cannot look: a launcher that made a
// namespace there all the same is seen by the empty namespace's own
// answers (ECONNREFUSED). It needs root, and never returns.
func withoutNetNS(argv []string) {
	if len(argv) == 0 {
		broke(errors.New("without-netns needs a command"))
	}
	runtime.LockOSThread() // the namespace is this thread's, and exec keeps it
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		broke(fmt.Errorf("without-netns: unshare a mount namespace: %w", err))
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		broke(fmt.Errorf("without-netns: make mounts private: %w", err))
	}
	zero, err := os.CreateTemp("", "pinfold-max-net-namespaces-")
	if err != nil {
		broke(fmt.Errorf("without-netns: %w", err))
	}
	_, err = zero.WriteString("0\n")
	if err == nil {
		// World-readable, as the sysctl is: an unprivileged launch beneath
		// (as-uid) read nothing from CreateTemp's 0600 file and took
		// network namespaces for available.
		err = zero.Chmod(0o444)
	}
	zero.Close()
	if err == nil {
		err = unix.Mount(zero.Name(), "/proc/sys/user/max_net_namespaces", "", unix.MS_BIND, "")
	}
	os.Remove(zero.Name()) // the mount keeps the file
	if err != nil {
		broke(fmt.Errorf("without-netns: bind over user.max_net_namespaces: %w", err))
	}
	arch := auditArch("without-netns")
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	filter := []unix.SockFilter{
		{Code: ld, K: 4},            // 0: seccomp_data.arch
		{Code: jeq, Jf: 6, K: arch}, // 1: another ABI: not ours to answer
		{Code: ld, K: 0},            // 2: seccomp_data.nr
		{Code: jeq, Jt: 1, K: unix.SYS_CLONE},
		{Code: jeq, Jf: 3, K: unix.SYS_UNSHARE},
		{Code: ld, K: 16}, // 5: args[0]'s low half (little-endian), where the flags are
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jf: 1, K: unix.CLONE_NEWNET},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW}, // 8
	}
	execFiltered(filter, argv)
}
