// Package code is Code Mode (DESIGN.md §6, issue 8): a model writes one
// small JavaScript program that calls many tools, and it runs with two
// independent layers around it.
//
//   - Validate (validate.go) is the static pass: the script is parsed as
//     the body of an async function and refused, with line, column and
//     rule, when it names eval, Function, require, import, process, Deno,
//     globalThis or Reflect, or reaches constructor, __proto__ or
//     prototype in any spelling the parser can see. Defence in depth: a
//     fully dynamic key (x[k]) is left to the isolate.
//   - Run (isolate.go) makes the static pass itself (a script it rejects
//     is a *RejectedError, never started: no caller can skip it), then
//     runs the script in a fresh QuickJS VM with no std
//     or os module, eval and Function gone and the function constructors
//     neutralised, a frozen bridge (pinfold.call, pinfold.log) and every
//     limit of [code_mode]: memory, stack, a deadline the script cannot
//     catch, a tool-call budget, output, script size.
//   - The worker (worker.go) is the OS layer: StartWorker runs the launcher
//     binary again (WorkerEntry) in a new, empty network namespace, as
//     root under a throwaway uid and in a cgroup of its own (memory for the
//     VM's heap and 256 MiB, 64 processes; no cgroup, no worker: refused
//     as a root launch is, launcher.CgroupRefusal, with its hint),
//     otherwise in a user namespace of its own with its rlimits alone;
//     WorkerMain sets its rlimits (RLIMIT_NICE and RLIMIT_RTPRIO 0, not
//     the gateway's or the launcher's: no raised priority, no real-time
//     scheduling, so a guest's SCHED_IDLE holds) and confines itself (Landlock with no
//     file rule, seccomp refusing exec, sockets and namespaces) before it
//     reads the script, and speaks only over its stdin and stdout. It
//     lives for one script, so its Go collector runs only when the heap
//     nears 64 MiB (a fifth of the CPU a script cost went to collecting
//     what the process's exit frees anyway). Serve is
//     the parent's side of that channel: it serves the tool calls, counts
//     the budget itself and bounds every line; Spawn puts the two
//     together and kills the worker WorkerGrace after the deadline.
//   - The run ends when Serve learns how it ended (the worker's last
//     line, its channel closing, a limit Serve enforces, the deadline):
//     no tool call begins after that (one the worker sent that waits its
//     turn never runs), the calls still running have their context
//     ended, and the answer, a value's too, counts the calls that began
//     (their effects stand). The worker sends no call once its run has
//     ended, and at most four calls with arguments past 64 KiB
//     unanswered, as many as Serve holds before it stops reading: its
//     last line never waits behind a write of its own (it did, and a
//     script that returned while such calls waited was answered as past
//     its deadline, with calls served after its end; a worker killed for
//     memory meanwhile was the deadline too).
//
// Where the two run differs from DESIGN.md's sketch, on purpose. In a
// components session the bash component serves the worker (its tools go
// through fs and through bash's own command policy) but does not start
// it: bash holds no privilege (no exec, no sockets), so the launcher
// starts the worker on bash's request and hands bash the worker's end of
// a socketpair (components/session). The launcher, not bash, decides how
// the worker is confined, writes its limits into the channel before bash
// gets it, and kills it at its deadline, so a bash taken over by a
// hostile script cannot loosen any of it. A script's commands run only
// when they need no one (the command policy's automatic ones): the
// command policy puts no question to the person for a script
// (code.needs-person). Its file tools are fs's calls, as the agent's own
// are: a write to a protected path is asked about as when the agent asks
// for it ("asked by the agent": the agent wrote the script). The worker
// is not in a pid namespace of its own (go-landlock's all-threads
// restriction hangs in one that sees the host's /proc); it cannot start
// a process at all (seccomp: clone must make a thread, no fork), so
// killing it leaves nothing behind. As root its cgroup is killed whole
// once it has ended (cgroup.kill, or the kill loop on v1; bounded at
// 5 s, a failure a warning) and only then removed: the wait reaches the
// worker alone, and a worker that did start a process (a test's sh -c
// does) would otherwise leave it in the group, dying or escaped to a
// session of its own, and the group behind. Kill signals the worker's
// process group only until the worker has ended (its end is awaited
// without reaping it, and the kill checks for it under a lock): once
// reaped, its pid is any process's, and a kill of the group after a run
// that ended by itself reached, as root, the group of whatever process
// got the pid next.
//
// Limits: any allocation the heap limit refuses ends the run as the
// memory limit, whatever the script does with the error (isoheap.go puts
// a guard under the engine's allocator; DESIGN §6 asked only that the
// limit hold). A script that catches a stack overflow and goes on is not
// stopped by that limit: QuickJS throws it as an ordinary error and its
// stack check cannot be watched. The stack stays bounded and the deadline
// still holds (SD-19).
//
// # Limitations
//
//   - The calls a script leaves un-awaited when it returns are ended with
//     it (as in-process Run ends them): a call that had begun may have had
//     part of its effect; one still waiting its turn has none. The answer
//     counts the first kind, not which calls they were.
//   - Only the worker's starter sees its cgroup. code run (Spawn) answers
//     a worker the kernel killed for memory as the memory limit. In a
//     session bash serves the worker and the launcher starts it: bash
//     sees its channel close, and the launcher says how the worker ended
//     on a pipe beside the channel (WriteEnd, WorkerEnd), so the answer
//     is the memory limit there too, with the calls that began. A worker
//     that ended otherwise without a word (the Go runtime out of its
//     RLIMIT_DATA, a crash) is still a failed worker ("the worker failed:
//     EOF"); code run adds the start of its stderr, a session does not.
//   - Each call waiting in the worker holds its argument there (up to
//     about 6 MiB): many un-awaited large calls end the run at the
//     worker's cgroup memory limit, not at a budget of their own.
package code
