// Command launcher is pinfold's CLI: flag parsing, help text and exit codes.
// The work lives in the policy and launcher packages.
//
// # Limitations
//
//   - Launching an agent (wrapper mode) is not in this version yet: the
//     launch line is refused with exit code 120 and nothing is started.
//
// The go:debug lines keep the Go runtime (1.25+) from opening the
// cgroup's cpu.cfs_quota_us and cpu.cfs_period_us at start-up and
// holding them on the lowest free descriptors (3 and 4): the hidden probe
// entry's `fd` action and the SR-10 checks read exactly those
// descriptors. They also keep GOMAXPROCS from following the container's
// CPU quota, which the launcher does not need.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main
