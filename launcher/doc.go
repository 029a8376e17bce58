// Package launcher confines an agent: stage 1 (Launch) verifies nothing
// further than it is given — the policy arrives pinned and parsed — then
// plans, prepares the cgroup and clones stage 2 (stage2_linux.c), which
// applies the Boundaries to itself in the order of DESIGN.md §3 and starts
// the agent. It also holds host probing: what this machine can enforce (Probe)
// and which Boundaries a policy would get here (Assess).
//
// # The two stages
//
// Stage 1 does all the thinking: Landlock rules at the kernel's ABI (capped
// at the highest ABI this launcher grants deliberately, refused below the
// policy's floor), rlimits, the mount plan, the throwaway identity, and the
// seccomp program compiled with libseccomp. It clones /proc/self/exe into
// new mount, pid, ipc, uts (and network) namespaces — inside a user
// namespace when unprivileged, into the cgroup with CLONE_INTO_CGROUP where
// there is cgroup v2 — and sends the finished plan over an inherited pipe.
// The namespaces are not probed before a launch: the clone tests them.
// When it fails, they are probed as hello does, and a host that cannot
// make them is a refusal (exit 124) with hello's reason and hint.
//
// On cgroup v2 stage 2 is cloned into its group (CLONE_INTO_CGROUP). With
// v1 hierarchies, stage 1 passes the groups' tasks files and stage 2 joins
// them itself, before any other step, by writing "0": a thread moving
// itself skips the global lock that moving a process by pid takes, and
// with it an RCU grace period (5-15 ms on every launch); stage 2 is one
// thread, so it is the same move. Either way nothing stage 2 starts runs
// outside the group.
//
// Stage 2 is C that runs from a constructor before the Go runtime starts
// (stage2_cgo_linux.go says why): one thread, a straight line of system
// calls, each failing closed. It decides nothing; the plan it reads is
// final.
//
// Stage 2 differs from DESIGN.md's sketch in one point, on purpose: it does
// not execve the agent but starts it as its only child and stays as the pid
// namespace's init. The first process of a pid namespace ignores every
// signal it has no handler for and must reap orphans; an agent exec'd as
// pid 1 would ignore Ctrl-C and leak zombies. So stage 2 confines itself
// whole, reports "ready", waits for stage 1's go (so the launch summary is
// printed before the agent's first byte), starts the agent, relays
// forwarded signals and exits with the agent's status; when it exits the
// kernel kills whatever is left in the namespace. The resource limits
// alone are set in the agent's process before its execve, not on stage
// 2: an RLIMIT_CPU on the init would let the agent wear it down by waking
// it with signals. That process shares stage 2's memory until its execve
// (CLONE_VM|CLONE_VFORK, on a stack of its own, as posix_spawn does), as
// does the child that holds the idmap user namespace: a fork's copy of
// the page tables cost about a millisecond each.
//
// The agent's RLIMIT_CORE is 1, where DESIGN.md and issue 3 say 0: with
// a pipe in core_pattern (systemd-coredump, apport) the kernel ignores
// a limit of 0 and runs the host's handler, as root and outside every
// namespace, on the crashed agent's memory; a limit of exactly 1 is its
// guard against recursive dumps and stops the pipe, and no core file
// fits in one byte. Seccomp keeps it there: the agent's own change of
// it is answered as done and changes nothing (its aim, no core dump,
// holds; ssh-agent exits when it cannot lower it), a change naming a
// pid or asking the old limit back is refused. So stage 2 sets this
// limit on itself, before the filter, where the others are set in the
// agent's process after it.
//
// The seccomp filter is stricter than DESIGN.md §3 step 8 in one point:
// with Unix sockets off, socketpair(AF_UNIX) stays allowed for stream and
// seqpacket pairs only. A datagram socket, even one of a pair, can sendto
// a pathname address, which would reach a host server the way a socket
// of its own would (SR-08).
//
// As root the agent runs under a throwaway uid from a documented range
// (claimed with a lock file under /run/pinfold/ids), and the workspace and
// the write paths are idmapped onto it, so files it creates belong to their
// owner on disk and nothing is chowned.
//
// # Components mode
//
// In components mode the launcher confines the agent exactly as in
// wrapper mode, under a policy with less authority (agentPolicy): no
// files.write (the fs component holds it and serves the workspace), no
// network but its own empty namespace, no Unix sockets, plus read access
// to its credential directory. A policy that would hand the agent the
// network, Unix sockets or a write path fs does not serve is refused. The
// component session itself lives above this package (components/session,
// started by cmd/launcher), reached through Beside: stage 2 is cloned,
// Attach places fs's listener in the agent's namespace and starts fs, and
// only then is the plan sent, so the agent never runs before its
// components. A session whose component exits cancels the launch's
// context: stage 2 kills the agent, and Launch returns the cause. A
// component stopped (SIGSTOP) has not exited, and is not taken to have:
// the session goes on, the agent's calls to it wait, are served once it
// is continued (SIGCONT), and fail at rpc's call time-out (2 minutes) if
// it is not; nothing is served around it. Deliberately: each component
// runs under a uid of its own, in a session of its own (no terminal's
// Ctrl-Z reaches it), so only root can stop one, the person who started
// the launcher (components mode runs as root) or a debugger they attach;
// a stop fails closed; and ending the session on it would lose the
// agent's work for a pause the person undoes
// (TestIntegrationComponentsStopContinue). Nothing says on the terminal
// that a component is stopped.
//
// # Fuzzing the plan
//
// Stage 2's plan decoder (pf_decode_plan) is C that parses bytes before
// anything is confined, so it is fuzzed (plan_fuzz_linux_test.go):
//
//   - FuzzPlanDecoder feeds it arbitrary bytes: it refuses them, or
//     returns a plan the Go encoder writes back byte for byte (the format
//     has one encoding per plan).
//   - FuzzPlanRoundTrip builds plans (lists empty to 1000 items and at
//     the maxima: 16 cgroup files, 16 limits, 4096 seccomp instructions,
//     4 MiB; strings empty, NUL, long; numbers at their range edges):
//     what Go encodes, C decodes to the same plan, or refuses for one of
//     the reasons cRefuses lists (what the policy's validation refuses
//     and the encoder lets through).
//
// A plain `go test` runs their seeds and testdata/fuzz: that is the
// regression suite; CI runs nothing longer. To search (minutes each):
//
//	go test ./launcher -run '^$' -fuzz '^FuzzPlanDecoder$' -fuzztime 10m
//	go test ./launcher -run '^$' -fuzz '^FuzzPlanRoundTrip$' -fuzztime 10m
//
// Go's fuzzer measures coverage of Go code only, not of the C, and a read
// past the plan's buffer that does not crash passes unseen (a decoder
// made to read one byte too far passed every plan test; under -asan the
// seeds caught it). So run them with -asan too (`go test -asan ./launcher
// -run Plan`, or with -fuzz; the first build takes minutes), and
// testdata/plan_decoder_fuzz.c holds the decoder for libFuzzer, which
// sees the C's coverage, under ASan and UBSan:
//
//	clang -g -O1 -fsanitize=fuzzer,address,undefined -o /tmp/pf launcher/testdata/plan_decoder_fuzz.c
//	/tmp/pf -max_total_time=600 CORPUS_DIR
//
// (Debian: clang-14, libclang-rt-14-dev; CORPUS_DIR may start empty, raw
// plans from Plan.MarshalBinary start it faster). Built with gcc and -DPF_FILES
// instead, it decodes the raw plan files named on its command line.
//
// # Limitations
//
//   - Seccomp is a deny list over a default allow: a call the kernel has
//     and the list does not name is allowed. Calls numbered above the
//     last one reviewed (file_setattr, Linux 6.18) fail with ENOSYS, as
//     on a kernel without them, until a review lets them through: a
//     later kernel's new call is not allowed by default (DESIGN's list
//     alone would allow it). Classic
//     seccomp cannot read memory, so clone3 is denied whole (ENOSYS, libc
//     falls back to clone) and executable memfds are prevented by
//     vm.memfd_noexec=2 (root, Linux 6.3+) or by refusing every memfd not
//     sealed non-executable.
//   - Seccomp also covers what Landlock's TCP rules miss: TCP Fast Open
//     (sendto with MSG_FASTOPEN connects without the connect hook) is
//     refused always, and listen() (which binds an ephemeral port without
//     the bind hook) when the policy allows no bind; with Unix sockets
//     allowed it cannot be refused, and the summary says so. Only the Unix,
//     IP and netlink socket families exist for the agent (vsock, for one,
//     is not network-namespaced). Set-uid and set-gid mode bits are refused
//     in chmod, open and mknod (openat2 answers ENOSYS: its mode is in
//     memory). The file system's encryption keyring (fscrypt's add and
//     remove key ioctls) is refused as the keyctl family is: a removal
//     needs only a descriptor on the file system, and locks every
//     directory the key unlocks, the person's outside the lists among
//     them; a key's status can still be asked.
//   - The host's mounts are read-only and nosuid in the sandbox: Landlock
//     before ABI 8 does not mediate chmod, utimes or setxattr, so the mount
//     is what stops them outside write paths. Write paths are separate
//     writable clones that are noexec, nosuid and nodev. The host's
//     mounts are not noexec: Landlock refuses execve of a read path's
//     program, but an exec path's dynamic loader maps and runs it
//     (ld-linux-x86-64.so.2 PROGRAM), so what the agent may read it can
//     run, confined (SR-01); read paths under the private /tmp and
//     /dev/shm alone are noexec grafts.
//   - LaunchOptions.ReadOnly paths are mounted read-only over the write
//     paths, every directory between pinned by a writable mount on itself
//     (a mount point cannot be renamed). The command line fills it in
//     wrapper mode with the protected paths fs knows that exist there
//     (components/fs.ProtectedMounts: a repository's hooks and config,
//     what its git configs name inside the write paths — core.hooksPath,
//     an included file, a program such as core.fsmonitor's — and the rest
//     of SR-51), and says what it could not cover; bash's workers
//     get theirs from the session. A path made after the launch starts is
//     not covered (SD-27): nothing can be mounted over a name that does
//     not exist, and Landlock grants a write path whole; the command line
//     names what the agent made when it ends (fs.ProtectedMade), a path
//     a config names among them.
//   - LaunchOptions.Mask, the launcher's own files (components mode: the
//     policy, the vault, the key file, PINFOLD_SELF_FILES; for the agent
//     and each bash worker), is covered where a files list reaches it and
//     the sandbox shows it: a file by the host's /dev/null, read-only and
//     nodev (opening it fails with EACCES), a directory by an empty
//     read-only tmpfs. Masks are path-based: a hard link to the file
//     elsewhere, or another mount of its directory, is not covered; a file
//     that does not exist when the launch is planned is not covered if it
//     appears later; and a file the host replaces by rename (or removes)
//     while the agent runs loses its cover in the sandbox (the kernel
//     detaches a mount whose mount point is removed in another namespace),
//     so the file's new version is readable to an agent or command still
//     running — unless its directory holds nothing but the launcher's own
//     files and the temporaries privfile.Replace writes beside them
//     (CoverDir: the default vault's directory, a gateway's token store's),
//     and no files list names a path in it: then the directory is covered
//     instead, and a rename inside it does not show through. Each bash
//     command is planned afresh and is covered again. An own file the
//     launcher cannot look at is refused, unless an unprivileged launcher
//     is refused search of a directory on its way that another uid owns
//     (HOME=/root kept by nobody): the agent, of that uid or less, is
//     refused the same and the file needs no cover (internal/reach; the
//     git configs there are not reported for SR-51 either).
//   - The sandbox's mount namespace is a copy of the host's, remounted:
//     /proc/self/mountinfo (and listmount, statmount) show the agent every
//     host mount point's path, source and options, names outside the
//     lists included (SD-21). A pid's entries cannot be covered for
//     processes not yet started, so this stays.
//   - A 32-bit (i386) program cannot run: its first system call kills it.
//   - A crash still reaches the host's core dump handler where
//     core_pattern is a socket (Linux 6.16+; the kernel connects
//     whatever the limit), and where the launcher inherited a hard
//     RLIMIT_CORE of 0, which it keeps (raising it needs
//     CAP_SYS_RESOURCE): the summary says so (SD-28).
//   - In "ports" mode the agent shares the host's network: UDP and ICMP are
//     not covered (SD-04), and an allowed port is allowed on every host
//     (SD-03). The launch summary says so on every run without --quiet.
//   - A launcher killed with SIGKILL takes the agent's tree with it
//     (parent-death signal, pid namespace), but its empty cgroup stays until
//     a later launch sweeps it.
//   - As root, write paths outside the workspace must belong to the
//     workspace's owner (one idmapped mount maps one owner) or be writable
//     by all; anything else is refused.
//   - A feature Probe reports available was available when probed; the
//     launch itself re-checks and fails closed. Namespace probes show that a
//     namespace can be created, not that every operation inside it will
//     succeed; idmapped mounts are checked only at launch.
//   - Running as euid 0 inside a container's user namespace is reported as
//     root; root-only steps may then fail at launch, and fail closed.
//   - Components mode confines the agent under agentPolicy, which has no
//     write paths and network none; the whole policy's Landlock floors
//     are checked too before anything starts (write paths are fs's: ABI
//     3; proxy mode is net's, which confines itself with TCP rules: ABI
//     4), and each component refuses to confine itself below its own.
//     Before, a components policy with write paths ran on ABI 1 and 2,
//     where fs's rules left truncate(2) unchecked, and proxy mode on ABI
//     3 started the agent and stopped it when net could not confine
//     itself.
//   - A component (and a Code Mode worker) confines itself from ABI 1
//     when it has no write paths, so what its Landlock does not check
//     below some ABI its seccomp filter refuses at every ABI: signals to
//     any process but itself (the scope is ABI 6) and truncate(2) (ABI
//     3). Before, below those ABIs an unprivileged Code Mode worker,
//     which is the person's uid with no pid or mount namespace, could
//     signal any of the person's processes and empty any of their files.
//   - Lower ABIs are tested on this kernel through the probe's
//     landlock-abi wrapper (integration_abi_linux_test.go): a seccomp
//     listener answers the version query with N and refuses the rights,
//     scopes, rule types and flags ABI N lacks, as such a kernel would;
//     what it accepts runs on the real kernel. An unprivileged launch
//     runs beneath it through the probe's as-uid (the listener, which
//     reads stage 2's memory, stays root). It is a double of the
//     kernel's interface, not of an old kernel's behaviour (erratum
//     fixes, for one, are this kernel's).
//   - Stage 2 applies Landlock rights up to ABI 7. Probe knows features up
//     to ABI 9 and reports a newer kernel with its ABI, but ABI 8 (tsync:
//     stage 2 restricts while it is one thread, so nothing is lost), ABI 9
//     (connecting to pathname Unix sockets) and ABI 10 (UDP ports) are
//     not used: with unix_sockets allowed the launch says the Boundary is
//     degraded (SD-12), and UDP in ports mode stays uncovered (SD-04). They
//     need a kernel to test them on before they are trusted.
//   - On the person's terminal the agent has a pseudo-terminal of its own
//     (relay_linux.go, SD-23), as sudo's use_pty gives: stage 2 leads a
//     session with its slave as controlling terminal, and stage 1 copies
//     keys and output. Before, the agent shared the person's terminal and
//     ran only while its launch was the foreground job; a process of its
//     tree that ran otherwise could take the terminal's foreground and
//     read the person's next line, and each way in (&, bg, a timer armed
//     with SIGCONT, TOSTOP) took a check of its own, the last leaving a
//     5 ms window. The checks stay (a stopped tree is held stopped; keys
//     are copied only in the foreground), but none guards the person's
//     input now. What the agent writes still reaches the person's
//     terminal, escape sequences with it. Off a terminal (no standard
//     stream is one) stage 2 stays in the launcher's session and group,
//     for the terminal's Ctrl-C and Ctrl-Z, but gives up its controlling
//     terminal (TIOCNOTTY) before the agent starts: /dev/tty opened the
//     person's own where a policy listed it. A signal sent to that group
//     (Ctrl-C, timeout(1), a supervisor's kill of the job) reaches the
//     agent from the kernel, so stage 2 drops stage 1's relayed copy of
//     it; the agent, which had it twice, has it once. Stage 2 matches the
//     two copies by signal within about a second; an agent that left the
//     group is given the relayed copy.
//   - The host's /dev/pts is covered by an empty read-only tmpfs, as the
//     socket directories are (hideList), and the agent's terminal on
//     descriptors 0-2 is mounted back at its name (graft_terminals in
//     stage2_linux.c): Landlock refused opening the person's other
//     terminals, but an inotify watch, which needs only read permission,
//     reported every key typed on one (unprivileged, the agent is the
//     person's uid, their owner). A policy that lists /dev/pts, a path in
//     or above it, or /dev/ptmx keeps the host's: a new terminal from
//     /dev/ptmx is made in the devpts beside it, and fails (ENODEV) with
//     a tmpfs there. /dev/tty, one node for every user's programs, which
//     password prompts read through (sudo, ssh, gpg), is covered with the
//     host's /dev/null like the launcher's own files (a MaskPlan), unless
//     a files list reaches it: a watch on it saw each key read there by
//     any user, as root's throwaway uid too. A policy that lists it keeps
//     the host's node, and the watch. Virtual consoles (/dev/tty1 and on)
//     are not covered: /dev itself is the host's.
//   - The watch over a stopped tree (supervise in stage2_linux.c) tells a
//     thread that ran by how many times it was given a CPU, from its
//     /proc schedstat. Where that is missing (CONFIG_SCHED_INFO off) or
//     reads 0 (kernels without schedstats or delay accounting print
//     "0 0 0" for every thread), it takes the thread's State and context
//     switch counts from status, which every kernel keeps: a thread that
//     ran and left the CPU has switched out, and one still on it does not
//     read stopped. It costs more (a larger file per thread and tick). A
//     thread neither file tells about, or a /proc/self stage 2 cannot
//     read, has the stopped tree killed, not left unwatched.
//   - Erratum 2 (signals between threads of one process in different
//     Landlock domains denied) does not stop the scopes: stage 2 restricts
//     before the agent has threads, so all of them share one domain.
package launcher
