// Command launcher is pinfold's CLI: flag parsing, help text and exit codes.
// The work lives in the policy and launcher packages.
//
// Deviation from DESIGN.md §2 ("refuses to run unless the policy hashes to
// M"): `--full-access` runs an agent unconfined, with no policy, because a
// person sometimes needs the same agent outside the sandbox and should not
// reach for another tool to get it. It is never chosen automatically,
// asking for it beside a policy is a usage error, and every run says on
// stderr that it is unconfined (README, `launcher --help`).
//
// Deviation from DESIGN.md §2.1 ("the error names both the file and the
// expected hash"): a hash mismatch names the file only. No 64-digit hash
// appears on the screen at that moment, not even the pin the person typed,
// so that nothing there looks like a value to copy into the next pin
// (issue 3; launch_usage.txtar checks it).
//
// Names the agent chose (what it made in the write paths, what a launch
// could not cover there) reach the person's terminal in the launcher's own
// warnings; they are written with every control, format character and
// invalid byte escaped (shown), so that a name cannot erase or hide the
// line that names it. What the agent itself writes is SD-23's.
//
// The go:debug lines keep GOMAXPROCS from following the container's CPU
// quota, which the launcher does not need, and keep the Go runtime from
// watching the cgroup's cpu.cfs_quota_us and cpu.cfs_period_us: Go 1.26
// still reads them at start-up, but closes them before main, so the
// lowest free descriptors (3 and 4), which the hidden probe entry's `fd`
// action and the SR-10 checks read, are free. netdns=go: the launcher is
// linked statically (static_linux.go), and a static C library cannot load
// the NSS modules its resolver would want; Go's own resolver is used even
// in a build without -tags netgo.
//
//go:debug netdns=go
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main
