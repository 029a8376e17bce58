// Package session is the component-mode runtime a components-mode launch
// runs beside the agent (DESIGN.md §5): a session directory (0711, root's) under
// the launcher's run directory, an in-memory PKI, and one process per
// component — the launcher binary again, `launcher __pinfold_component
// ROLE` — each under a throwaway uid of its own (claimed as the agent's
// is), with no supplementary groups, a new session (no terminal), the
// parent-death signal, its credential and configuration on an inherited
// pipe, its listening Unix socket in the directory (mode 0666: the
// component's own SO_PEERCRED allow-list turns other uids away before TLS,
// and mutual TLS decides who is served) and its log in the directory
// (0600). Each component runs in a cgroup of its own (64 tasks, 512 MiB,
// net's 1 GiB; cloned into it on cgroup v2, joined before it gets its bootstrap on v1),
// which Stop kills whole, so nothing a component forks outlives the
// session. Exited reports the first component that ends, so the caller can
// stop the agent: a session never goes on without one of its components.
//
// Attach (called by the launch once the agent's network namespace exists
// and before the agent starts) writes the agent's credential — the CA and
// its certificate readable by all, its key (0400) its own uid's alone — in
// the agent directory, which the launch grants the agent read-only, and
// starts fs: its listener for the agent is made inside the agent's
// namespace on a fixed address (AgentFSAddr; nothing else listens there)
// and handed to fs with, as its root, a detached clone of the workspace
// idmapped so the workspace's owner is fs's uid (fs writes the owner's
// files, and what it creates belongs to the owner on disk). fs also gets
// an approval channel (questions, when there is a terminal to ask on,
// and the reading of the git configs again) and a copy of configWatch's
// inotify descriptor: the launcher watches the git config files it read
// or looked for, and fs, reading the events before each change it
// serves, has the configs read again when one concerns a config (the
// person's own git config during the session). The agent's
// environment names the address and the credential (AgentEnv), and
// AgentClient reads them back inside the sandbox.
//
// Attach then starts bash (AgentBashAddr), with a socketpair to fs of
// its own (for backups before a confirmed deletion), an approval channel
// and the runner channel. bash decides; the launcher runs: each job bash
// sends on the runner channel is run here, by runWorker, as
// `bash --noprofile --norc -c COMMAND` under launcher.WorkerPolicy — a
// whole launch (stage 1, stage 2, a throwaway uid, the workspace
// idmapped, no network) with the workspace's protected paths
// (fs.ProtectedIn: found anew for every command, with what the git
// configs name read anew too: refreshNamed) mounted read-only over
// it, the launcher's own files its paths reach covered (Config.Authority,
// the session and backup directories, the launcher), stdin empty, output
// capped, killed at its timeout. DESIGN.md §5 has
// bash run its workers; here bash holds no privilege at all (it is
// confined to no files, no sockets and no exec before it serves), and the
// workers are made by the one process that can make namespaces and
// idmapped mounts, so a bash taken over by a hostile command line can ask
// for a worker but cannot shape its confinement. Stop cancels running
// workers and waits for them before it stops the components.
//
// Stop kills every component and empties the directory but for the
// components' logs, which the person may read after the session; Summary
// counts their requests, denials and refused connections. A session whose
// launcher was SIGKILLed leaves no process (parent-death signals, pid
// namespace, cgroups) and no uid claimed, but leaves its directory and
// its components' empty cgroups: the next session tidies the
// directories whose lock no one holds (the agent's key, the sockets and
// the lock go; the logs stay, pruned as every finished session's are:
// pruneLogs), and the next launch removes the empty cgroups (SD-02).
//
// # Limitations
//
//   - Command workers run one at a time, with no network (SD-16): net's
//     proxy listens in the agent's namespace only. A Code Mode worker's
//     start and a script's connection to net go on a channel of their
//     own, so a long command (a dev server) does not hold them.
//   - A protected path that appears or changes while a command runs (one
//     that did not exist, so was not mounted read-only, or one the person
//     replaced meanwhile) is moved aside when the command ends, whatever
//     its type, and the agent and the person are told; it exists while
//     the command runs (SD-17). What changed is known by device and
//     inode, each held open during the command, not by path (the agent
//     may move a repository through fs meanwhile), and questions wait
//     while a command runs. A workspace the walk cannot look through
//     after a command turns commands off for the session.
//   - fs serves the workspace only: one tree, one idmapped mount (one
//     owner). A workspace on a file system without idmapped mounts is
//     refused at Attach.
//   - The agent's listeners are on fixed addresses in its own namespace;
//     mutual TLS, not SO_PEERCRED, decides who is served there.
package session
