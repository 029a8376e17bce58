// Package probe tries exactly one thing and says, in one line on stdout,
// what the kernel answered. The launcher's integration tests run it twice:
// confined by the launcher, and directly as a control (SR-09: a refusal
// only counts when the same probe succeeds unconfined). It is reachable
// two ways: as the small program launcher/internal/probe, and inside the
// launcher binary behind the hidden first argument [Entry], so that the
// risk register's checks run on a machine that has only the launcher.
//
//	probe ACTION [ARGS...]
//	launcher __pinfold_probe ACTION [ARGS...]
//
// Output and exit status:
//
//	ok                 exit 0: the attempt succeeded
//	denied ERRNO       exit 1: the kernel refused it (ERRNO as in errno.h, e.g. EACCES)
//	denied RULE        exit 1: something else refused it (a component: the
//	                   launcher's fs-read and fs-present, components/agentprobe)
//	error TEXT         exit 2: the probe itself broke; nothing was learned
//	no-gate TEXT       exit 3: the way in it was to try does not exist here
//	                   (i386-syscall where int $0x80 faults)
//
// A few actions report a value instead (documented per action in
// probe_linux.go): `absent`/`present`, `euid E uid U`,
// `forked K of N [ERRNO]`, `spawned PID`, `soft S hard H` (rlimit),
// `opts O,...` (mount-opts), `names N ...` (env-names), `node DEV INO`
// (node), `id HEX` (fscrypt-add).
//
// The probe uses golang.org/x/sys/unix directly, never a shell. Actions
// that run the probe again (exec, write-exec, setuid-exec, memfd-exec,
// unshare-user, spawn-sleep) put the caller's argv prefix (Main's self)
// between the executable and the action, so a copy of the launcher runs
// the probe and not the CLI.
//
// # Limitations
//
//   - Linux only: on other systems the package holds only [Entry].
//   - The `fd N` action reports what it finds at descriptor N; a program
//     embedding the probe must keep the Go runtime from opening files of
//     its own at start-up (`//go:debug containermaxprocs=0` and
//     `updatemaxprocs=0` in its package main, Go 1.25+), or `fd 3` finds
//     the runtime's cgroup file instead of an inherited one.
//   - `exec PATH` passes PATH the same prefix and `noop`: PATH must be a
//     copy of the same binary, or a program that ignores its arguments.
//   - Main exits the process: it is for a program's entry, not for a
//     library call.
//   - `landlock-abi N CMD` is a test double, not a boundary: it checks a
//     Landlock call's arguments and then lets the real kernel run it
//     (SECCOMP_USER_NOTIF_FLAG_CONTINUE), so a program that rewrote them
//     in between would pass unchecked. It stays CMD's parent (the
//     listener answers from it) and passes on SIGINT, SIGTERM and SIGHUP;
//     CMD gets SIGKILL if it dies. It reads a ruleset's attribute from
//     the caller's memory, which a caller that made itself not dumpable
//     (stage 2 does) keeps from any reader without CAP_SYS_PTRACE: run
//     unprivileged, such a ruleset is answered EFAULT (the launch fails
//     closed, "Bad address"). Use it as root.
package probe

// Entry is the hidden first argument that turns the launcher binary into
// the probe: `launcher __pinfold_probe ACTION [ARGS...]`.
const Entry = "__pinfold_probe"
