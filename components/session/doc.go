// Package session is the component-mode runtime the launcher will run a
// session with (DESIGN.md §5): a session directory (0711, root's) under
// the launcher's run directory, an in-memory PKI, and one process per
// component — the launcher binary again, `launcher __pinfold_component
// ROLE` — each under a throwaway uid of its own (claimed as the agent's
// is), with no supplementary groups, a new session (no terminal), the
// parent-death signal, its credential and configuration on an inherited
// pipe, its listening Unix socket in the directory (mode 0666: the
// component's own SO_PEERCRED allow-list turns other uids away before TLS,
// and mutual TLS decides who is served) and its log in the directory
// (0600). Each component runs in a cgroup of its own (64 tasks, 512 MiB;
// cloned into it on cgroup v2, joined before it gets its bootstrap on v1),
// which Stop kills whole, so nothing a component forks outlives the
// session. Exited reports the first component that ends, so the caller can
// stop the agent: a session never goes on without one of its components.
//
// # Limitations
//
//   - Only kms exists so far; fs, net and bash, the agent's listeners in
//     its network namespace, the agent's credential and the launch-side
//     wiring (and with it components mode itself, refused until then) are
//     later work.
package session
