// Package bench holds pinfold's measurements. Speed is measured here, side
// by side with peers in one run and reported as ratios, never in timed unit
// tests.
//
//   - launch/: the cost of starting a confined /bin/true with every
//     Boundary on, next to bare /bin/true, bubblewrap, go-landlock's
//     landlock-restrict and firejail where installed. Run with bench/run.
//
// # Limitations
//
//   - Wall-clock medians on a shared 2-core machine move by several percent
//     between runs; the runs are interleaved so that drift hits every tool
//     alike, and the ratios are what to compare.
//   - The peers are configured to be roughly comparable, not identical: the
//     launcher also creates a cgroup (as root) and a throwaway identity,
//     which bubblewrap does not.
package bench
