// Package launcher is the launcher's stage 1 and stage 2; today it holds
// host probing: what this machine can enforce (Probe) and which Boundaries
// a policy would get here (Assess).
//
// Probe reads the host once and never fails: a feature it cannot determine
// is reported unavailable, with the reason in Detail and what to change in
// Hint. Namespace features are tested empirically by starting /bin/true in
// a new namespace (inside a new user namespace when not root); the calling
// process itself never unshares, because it is a multi-threaded Go program.
//
// Landlock features are reported as the launcher can use them, which follows
// go-landlock: on a kernel with ABI 6 or later whose erratum 2 (signals
// between threads of one process) is not fixed, scoping is reported as not
// enforced, because go-landlock then treats the kernel as ABI 5.
//
// A Feature is reported as this process can use it: when not root, the
// network, pid and mount namespaces count as available only if they can be
// created inside a new user namespace. Assessment.Risk holds a register id
// only ("SR-03", "SD-04"), so that logs and the register can count it; the
// prose is in Detail.
//
// # Limitations
//
//   - A feature reported available was available when probed; the launch
//     itself re-checks and fails closed. Probe is advice, not a Boundary.
//   - Namespace probes show that a namespace can be created, not that every
//     operation inside it will succeed: mounting an idmapped workspace, for
//     example, depends on the file system and is checked only at launch.
//   - Running as euid 0 inside a container's user namespace is reported as
//     root; cgroup writability is still checked with access(2), but other
//     root-only steps may fail at launch.
//   - Landlock features newer than ABI 9 are not known to this package; a
//     newer kernel is reported with its ABI, and the extra features unused.
//   - Erratum numbers and their meaning come from the kernel's
//     security/landlock/errata headers as of Linux 6.18.
//   - Assess judges the host, not the policy: a policy the policy package
//     rejects is not assessed here, and file-system specific checks
//     (idmapped mounts) are left to the launch.
package launcher
