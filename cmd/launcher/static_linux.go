//go:build linux && cgo

package main

// The launcher is linked statically: the C library and libseccomp are
// inside the binary, and the kernel starts it without the dynamic loader.
//
//   - Nothing outside the binary is the launcher's code. A dynamic launcher
//     runs /lib64/ld-linux-x86-64.so.2, libc.so.6 and libseccomp.so.2 as
//     root, each a file an agent with the wrong write path could replace
//     for the next launch (SR-25 checks them, but they are not there to
//     check), and the loader reads LD_PRELOAD, LD_LIBRARY_PATH and
//     LD_AUDIT from whatever environment the person ran it in.
//   - Each launch starts the binary twice (stage 1, then stage 2 from
//     /proc/self/exe); without the loader's work (mapping three
//     libraries, relocating, resolving symbols) a launch of /bin/true
//     takes about 10% less time on our machines (bench/launch, 2026-12-01).
//
// Debian's libc6-dev and libseccomp-dev ship the archives (libc.a,
// libseccomp.a). What a static glibc cannot do is load NSS modules, so
// the launcher uses none: host names are resolved by Go's own resolver
// (netdns=go in doc.go), and the user database is read from /etc/passwd
// and /etc/group (gateway). scripts/lib.sh builds with -tags netgo, which
// also leaves the C resolver out of the binary (without it the linker
// warns that getaddrinfo is linked; nothing calls it).

// #cgo LDFLAGS: -static
import "C"
