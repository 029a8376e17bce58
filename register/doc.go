// Package register is pinfold's risk register as data: every risk the
// launcher controls (SR-nn) and every limit it documents instead (SD-nn),
// each with its threat, its control, the kind of that control (Boundary,
// Setting or Expectation, DESIGN.md §1), its status, the first version
// that holds it, and the tests that show it holds today.
//
// All returns the entries sorted by id; Lookup finds one. There is no
// package state: every call builds a fresh slice, so a caller cannot
// change what the next caller sees.
//
// SECURITY.md at the repository's root is the prose over this list. A test
// here keeps the two in step: every id SECURITY.md cites exists, and every
// entry is cited there.
//
// # Versions
//
// No release exists yet. Since is "0.1.0" for every entry: the first
// version that will be tagged, which holds everything listed here.
//
// # Limitations
//
//   - Not every risk has an executable check yet (`launcher register
//     check`: a probe under a policy and the same probe as a control, a
//     refusal counting only when the control succeeded, SR-09); Check is
//     "" for those, and their evidence is the test suite alone, named in
//     Evidence as "dir.TestName" (dir relative to the module root).
//   - A check may have several cases (probeCase.also), run one after
//     the other in one scratch directory, each beside a control of its
//     own: the check passes only when every case does, and the reason
//     names the case that decided it. SR-51's are the workspace
//     repository's own .git/hooks and what its config names there
//     (core.hooksPath's .githooks, a core.fsmonitor program, an
//     include.path file), a shell start-up file and .git/config itself,
//     each refused beside the same write unconfined,
//     and a write beside them in the same kind of launch, which must go
//     ahead (a workspace read-only whole proves nothing).
//   - SR-01's check has a case for each half of its control: a written
//     file mapped executable (the write tree's noexec mount; Landlock
//     refuses execve of it by itself), and a policy listing an exec path
//     beneath the write path, refused by the policy check. Landlock's
//     write rules lacking execute are not seen apart: noexec stops the
//     same exec first.
//   - SR-03's check, as root, has a second case: the same launch on a
//     host that cannot make a network namespace (the probe's without-netns:
//     user.max_net_namespaces reads 0 in a mount namespace of the
//     check's, and seccomp refuses CLONE_NEWNET), where Landlock's TCP
//     rules and seccomp's AF_INET refusal must hold instead (found by a
//     mutation audit: a launcher that dropped both there passed), and a
//     third, a UDP datagram to an echo server on the host's loopback in
//     that launch: Landlock has no UDP rule, so a launcher that dropped
//     seccomp's refusal alone passed the TCP case on Landlock's EACCES
//     (a mutation audit). Dropping Landlock's TCP rules alone is not
//     seen: seccomp refuses the socket first, and nothing leaves; below
//     ABI 4, the launch refused. A lower Landlock ABI cannot be made from
//     a higher one, so where the kernel has ABI 4 or more the refusal
//     itself is shown by TestAssess alone. Unprivileged the case is not
//     run.
//   - SR-10's check, as root, also looks at stage 2 from outside while
//     the agent sleeps (every process beneath the launcher, by
//     /proc/N/fd): the agent's own probe cannot see stage 2's
//     descriptors, and stage 2's marking hid from it a stage 1 that no
//     longer marked what it inherited (a mutation audit). Unprivileged,
//     stage 2's descriptors are not readable (it is not dumpable), and
//     only the agent's are checked.
//   - SR-12's check has a case for each rule its title names: a path not
//     clean, one holding a control character, one not in NFC (the last
//     two name directories the check makes, so that a launcher taking
//     them would run the agent). A path not clean that the decoder took
//     is refused by the live check instead (it resolves elsewhere):
//     that refusal is a fail of the case, as is SR-02's link found by
//     stage 2 (exit 125) rather than the policy check; each was
//     inconclusive before a mutation audit.
//   - SR-04's check, as root, is refused by either of two layers (the
//     host assessment, then the session's own cgroup check): with one
//     switched off it still passes, as the launch is still refused.
//   - SR-18's check also reads the options of the mounts the set-uid
//     file and the workspace are on (nosuid): no_new_privs alone keeps
//     the set-uid run's euid, so that run cannot show nosuid. no_new_privs
//     itself cannot be switched off apart: Landlock needs it.
//   - SR-33's check has a case for each rule its title names: an
//     unknown key, and a policy without version.
//   - SR-38's check has a second case: the agent, with the session's
//     own certificate, asking fs for bash's call (a backup), refused by
//     the handler's role check. And a third, for the call table itself
//     (pki.MayCall), which the agent cannot show from inside: kms, the one
//     component it may not call, it cannot reach (a socketpair to net, a
//     socket root's alone), so a launcher whose table allowed every call
//     passed the first two (a mutation audit). While the agent sleeps,
//     the check, as root, presents the agent's own certificate and key at
//     kms's socket and at fs's with a TLS client of its own (the agent's
//     client refuses the call before sending anything): kms must end the
//     handshake with an alert where fs keeps the connection. That is
//     kms's side of one edge for the agent's certificate; the other
//     edges are components/pki.TestCallMatrix's alone.
//   - SR-43's check has a second case, with a terminal to ask on: the
//     question's word typed without its code (as a person answering a
//     prompt the agent printed might) is no approval, where the control,
//     typing both, writes the hook. Its first case has no terminal, and
//     fs then never asks: it passed with the answer compared to the
//     word alone (a mutation audit). A terminal-less question answered
//     yes passes both: without a terminal the launcher gives fs no asker
//     at all, so the question is never put. The agent frozen while the
//     question stands is not run: launcher's integration tests show it.
//   - SR-45's check has a case for each half of its title: a command
//     that needs the person, asked with no one to ask, never runs; and
//     a command the policy runs by itself is refused a file outside the
//     workspace by the worker's confinement.
//   - SR-27's check has a second case: the launcher killed (SIGKILL)
//     while the agent sleeps, what is left looked for once the kernel
//     has had two seconds to end it. Three layers end the tree there,
//     and the case sees only all of them gone (a mutation audit):
//     stage 2's parent-death signal (set at clone; as root, re-armed
//     after its change of uid), and its exit when the control pipe from
//     stage 1 reads end of file. With the re-arm and the end-of-file
//     exit both off it fails; with either alone off it passes. The
//     first case (the agent exits) is also ended by the pid namespace
//     and, as root, by the cgroup kill: with the cgroup kill off it
//     passes.
//   - SR-28's check has a second case: net killed while a proxy-mode
//     agent sleeps ends the launch, saying so, with nothing of the
//     agent's left (a mutation audit: with the launcher no longer
//     cancelling the launch on net's exit, the agent ran on and the
//     direct connection alone passed). net failing to start is not run:
//     launcher's integration tests show it.
//   - SR-34's check has a case for each way out its title names: a
//     read, a write, a hard link and a rename of a workspace file into a
//     directory the policy does not list. The read-only host mounts
//     (EROFS) and the workspace's own mount (EXDEV) refuse the last
//     three before Landlock does, as root and unprivileged alike: a
//     launcher whose Landlock ruleset handled the read rights alone
//     passed them (a mutation audit), and only launcher's integration
//     tests (TestIntegrationLinkRenameOut) show Landlock's part.
//   - SR-37's check has a case for each authority its title names: a
//     direct write to the workspace, a Unix socket and a TCP connection
//     to the check's loopback listener, the last two against an
//     unconfined control (a mutation audit: with the agent's own policy
//     allowing Unix sockets the write alone passed).
//   - SR-48's refusal is the deadline limit naming the policy's 2s (the
//     probe prints what the limit said): a default deadline holding
//     instead of the policy's is not it. The memory limit its title also
//     names is not run.
//   - SR-39's and SR-49's checks read through a link to the file
//     outside and through a link to its directory on the way: a final
//     link is refused by O_NOFOLLOW alone, so that case does not show
//     fs resolving beneath the workspace.
//   - SR-41's check has a case for each protection its title names: the
//     SSRF check (a loopback address refused) and the domain policy (the
//     same server by a name no allow rule names, under block_all, its
//     address allowed; the control allows the name).
//   - SR-44's control must leave, in the workspace's backup store, a
//     verified backup of the tree that holds its file as it was: the
//     store alone is made at every session's start (a mutation audit: a
//     launcher that deleted without a backup passed on it).
//   - SR-13 to SR-16's checks have a case for each rule of the
//     launcher's own that their control names, beside the TOML
//     decoder's (a key twice, an escaped lone surrogate): a key in
//     another case, a value listed twice, a path in read and write, a
//     variable passed and set (SR-13); a size (SR-14); a surrogate
//     encoded in a comment (SR-15); a bidi control escaped in a value
//     (SR-16). The contradictions of components mode (allow and deny,
//     automatic and approval) have no case yet: policy.TestValidate
//     alone shows them.
//   - SR-06's probe tries Fast Open by sendto and by sendmsg, each on a
//     socket of its own (a mutation audit: with sendmsg's rule off, the
//     sendto alone passed); sendmmsg's rule has no try of its own, and
//     launcher.TestSeccompKernel alone shows it.
//   - SR-19's check has a case for MFD_EXEC beside the plain memfd's.
//     As root vm.memfd_noexec = 2 refuses it too, so the seccomp rule
//     for it shows only in an unprivileged run of the check.
//   - SR-23's check swaps a read path as well as the workspace (each
//     while stage 2 is stopped before it reads its plan): a read path has
//     no mount of its own, so only stage 2's open of its Landlock rule
//     sees the link.
//   - SR-29's probe also tries, on a child of its own, what the filter
//     refuses beside ptrace (process_vm_readv, pidfd_getfd, kcmp): the
//     other process it signals is outside its pid namespace, so that
//     answer (ESRCH) alone showed none of them. process_vm_writev has no
//     try of its own (its rule is the same line's as process_vm_readv).
//   - SR-30's probe also tries what an unprivileged process may do
//     where no filter refuses it (a user-space perf counter on itself, a
//     user-mode-only userfaultfd, reading its own LDT); the mount family,
//     bpf, module and kexec calls need capabilities the agent lacks, so
//     the kernel's own EPERM hides their rules, which launcher.TestSeccompKernel shows.
//   - Some controls are layered so that a check cannot see one layer
//     gone (a mutation audit found these, and left them): SR-22's
//     PR_SET_DUMPABLE 0 as root, where stage 2's change of uid already
//     makes it undumpable (fs.suid_dumpable 0; unprivileged the check
//     sees it); SR-25's rules for a launcher path beneath a write path
//     (spelling, device and inode, place in the file system), each of
//     which refuses the check's first case alone; SR-36's memsw limit on
//     a host without swap.
//   - Evidence names tests; a name existing does not mean the test ran on
//     this machine. Many are root-only integration tests that skip, and
//     say why, where the kernel lacks a feature (PINFOLD_REQUIRE_ALL_FEATURES
//     turns those skips into failures in CI).
//   - Components mode (SR-37 to SR-50, SD-15 to SD-19): every risk has
//     an executable check, run in a real components session (the agent
//     probes fs, net, bash and Code Mode with the launcher's own probe
//     actions, components/agentprobe; SR-40 kills fs, bash and kms from
//     outside, one per session; SR-44's
//     control types "delete" on the launcher's terminal, as the person
//     would). SR-42's session has a vault and two upstreams on loopback,
//     one over TLS under a root of the check's own, given to the launcher
//     as SSL_CERT_FILE; SR-50's is a `launcher serve` the check starts, with
//     a token store of its own, and both its runs are callers of it: a
//     guest's command for the owner's file, and the owner's.
package register
