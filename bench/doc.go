// Package bench holds pinfold's measurements. Speed is measured here, side
// by side with peers in one run and reported as ratios, never in timed unit
// tests.
//
//   - launch/: the cost of starting a confined /bin/true with every
//     Boundary on, next to bare /bin/true, bubblewrap, go-landlock's
//     landlock-restrict and firejail where installed. Run with bench/run.
//   - roundtrip/: one request and its answer from the agent's network
//     namespace through the bridge and mutual TLS to a component (an echo),
//     next to a plain Unix-socket echo of the same payload (as root).
//   - proxy/: the net component's forward proxy (real Egress policy) next
//     to direct loopback TCP: bulk MB/s through CONNECT and absolute-form
//     GET, new connections a second, 1,000 tunnels held at once (no root).
//   - codemode/: Code Mode's latency (validate, a confined worker, a
//     script making 10 tool calls) next to the same script in-process,
//     and the scripts a second one runner per CPU sustains.
//   - gateway/: `launcher serve` (as root): an MCP session's set-up,
//     initialize to the first tool answer, for an owner and a guest, next
//     to the same session over stdio without the gateway; and how many
//     sessions one gateway holds at once, each answering every round.
//   - report/: the JSON file format the programs write with -json and
//     the site reads (report.Read, strict).
//
// # Machine-readable output
//
// Each program takes -json FILE and then, besides its table, writes a
// report.Report: the rows it prints (medians, and p90s where it has them),
// one unit per report, the ratios it prints as notes. bench/run writes them
// to bin/bench/ and lists them at the end:
//
//   - launch.json: one row per tool, ms (median, p90), and a reference
//     row, `launcher --help`: the launcher's process starting with no
//     policy, sandbox or agent, the floor under its launch; the "× bare"
//     ratios, launcher / bubblewrap and that floor / bubblewrap in the
//     notes.
//   - roundtrip.json (as root): plain echo, fs read over the socket, the
//     agent's path; µs (median, p90); the ratio to the echo in the notes.
//   - proxy.json: bulk throughput per path, MB/s (median); proxy-rate.json:
//     new connections a second, direct and through CONNECT;
//     proxy-hold.json: ms to establish all the held connections, and for
//     each to echo, direct and through CONNECT (not written when the
//     descriptor limit is too low to measure).
//   - codemode.json: latency in this process and in a confined worker, ms
//     (median, p90); codemode-rate.json: scripts a second, sustained.
//   - gateway.json (as root): session set-up over stdio, through the
//     gateway as owner and as guest, ms (median, p90), the ratios in the
//     notes; gateway-held.json: sessions held at once.
//
// A further report's file is the main one's with a suffix before ".json"
// (report.WithSuffix). The site draws them with
//
//	launcher site build --out DIR --bench FILE...
//
// # Limitations
//
//   - roundtrip's component is fs's own server reading a 1 KiB file from
//     a nodev detached clone of the workspace's mount, as the launcher
//     gives fs; its log is discarded (a real fs writes one line a
//     request). On 2026-12-01, this VM: plain echo 14.4 µs, mutual TLS
//     echo 17 µs, the agent's path 39.5 µs (2.7×, against a target of 2;
//     45.5 µs before Read stopped looking first on a nodev root). The
//     floor under the target is high: the TLS echo, the agent's TCP
//     listener (about 3.5 µs over the socket) and the four system calls
//     a read needs (openat2, fstat, pread, close; about 2 µs each in this
//     VM) already make about 2×.
//
//   - Wall-clock medians on a shared 2-core machine move by several percent
//     between runs; the runs are interleaved so that drift hits every tool
//     alike, and the ratios are what to compare.
//
//   - The peers are configured to be roughly comparable, not identical: the
//     launcher also creates a cgroup (as root), a throwaway identity, a
//     Landlock ruleset and a seccomp filter, which bubblewrap does not.
//
//   - Where the launcher's time goes (2026-11-30, 2-vCPU VM, root, hybrid
//     cgroups; launcher 17.3 ms median, bubblewrap 8.2 ms): starting the
//     Go runtime of stage 1 (~3.5 ms, against ~1 ms for a C program),
//     compiling the seccomp filter with libseccomp (~2 ms of CPU, beside
//     the clone), making and removing the pids, memory and v2 groups
//     (~1.5 ms), reading and hashing the policy, probing the host and
//     claiming the throwaway uid (~1.7 ms); namespaces, mounts and
//     teardown cost about what bubblewrap's do. Stage 2 is C and joins
//     its v1 groups without an RCU grace period, so neither a second Go
//     runtime nor cgroup v1's migration lock is in the figure any more.
//
//   - On 2026-12-01 the VM was of another kind (a PVM guest: page faults
//     and process start cost about three times as much): bare 2.5 ms,
//     launcher 42 ms, bubblewrap 13.3 ms (3.2×), and the previous day's
//     launcher binary measures the same there. The largest single part is
//     starting this binary at all: `launcher --version` takes about 17 ms
//     of CPU and 500 page faults, against 4 ms and 150 for an empty Go
//     program and 6 ms and 240 for one that only links libseccomp; a
//     program importing only package launcher takes 10 ms. The rest is the
//     package initialisation and runtime start of the dependencies every
//     component needs (modernc's libc and QuickJS, the MCP SDK, net/http
//     and crypto/tls) in the one executable that is re-executed for each
//     role. A Code Mode worker is that same start: 31-39 ms a script and
//     about 36 scripts a second on that VM, with either day's binary.
//
//   - Most of a start's cost on that VM is page faults: a fault there is
//     a dear trap, and the Go runtime and package initialisation touch
//     the code all over. Since the launcher maps its read-only segments
//     at once when it starts (launcher/image_linux.c), `launcher --help`
//     takes about 18 ms of CPU and 485 faults instead of 24 ms and 650,
//     and a launch about 39 ms instead of 41.5 (perf stat, 30 runs each,
//     interleaved, binaries read back from disk). How a binary sits in
//     the page cache matters here: one just written by the linker is
//     mapped in larger pieces and starts faster than the same bytes read
//     from disk, so compare binaries in the same state.
package bench
