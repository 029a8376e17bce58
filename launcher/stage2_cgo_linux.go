package launcher

// Stage 2 is C (stage2_linux.c), run from a constructor before the Go
// runtime starts, as runc's nsexec is. Why not Go, as it first was:
//
//   - A Go stage 2 is a second Go runtime start (~4 ms) and a process of
//     eight threads. Credentials, capabilities, no_new_privs and Landlock
//     are per thread, so each had to be broadcast to every thread (psx and
//     AllThreadsSyscall: milliseconds each), and before Landlock ABI 8 the
//     threads ended in sibling domains, so signals had to be sent from one
//     locked thread. In C, stage 2 is one thread: each step is one system
//     call on the only thread there is, and nothing else runs beside it.
//   - Stage 2 decides nothing. Stage 1 (Go) checks the policy, builds the
//     plan and compiles seccomp; stage 2 only applies the plan, so the C
//     is a straight line of system calls, each failing closed.
//
// The plan travels in a small binary format (Plan.MarshalBinary) that the
// C reads field by field with bounds checks; a Go test decodes plans with
// the C decoder and compares them field by field, and feeds it every
// truncation.

/*
#cgo CFLAGS: -O2 -Wall -Wextra -Wno-unused-parameter -fstack-protector-strong -D_FORTIFY_SOURCE=2
#include <stdlib.h>
#include "stage2_linux.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"syscall"
	"unsafe"
)

// Stage2Entry is the hidden first argument that turns the launcher binary
// into stage 2. It is not a command: stage 2 refuses to run unless its
// pipes are open.
const Stage2Entry = C.PF_STAGE2_ENTRY

// The pipes between the stages (stage2_linux.h says what travels on each).
const (
	fdPlan    = C.PF_FD_PLAN
	fdReport  = C.PF_FD_REPORT
	fdControl = C.PF_FD_CONTROL
	fdJoin    = C.PF_FD_JOIN
	goByte    = C.PF_GO_BYTE
	watchByte = C.PF_WATCH_BYTE
)

// decodePlanC decodes b with stage 2's own decoder and converts the result
// back to a Plan (for tests: the two sides must agree on every field).
func decodePlanC(b []byte) (*Plan, error) {
	cb := C.CBytes(b)
	defer C.free(cb)
	var cp C.struct_plan
	defer C.pf_free_plan(&cp)
	if msg := C.pf_decode_plan((*C.uchar)(cb), C.size_t(len(b)), &cp); msg != nil {
		return nil, errors.New(C.GoString(msg))
	}
	strs := func(v **C.char) []string {
		var out []string
		for _, s := range unsafe.Slice(v, 1<<20) {
			if s == nil {
				return out
			}
			out = append(out, C.GoString(s))
		}
		return out
	}
	p := &Plan{
		Argv: strs(cp.argv), Path: C.GoString(cp.path), Env: strs(cp.env), Dir: C.GoString(cp.dir), Join: int(cp.njoin),
		NewNet:    cp.new_net != 0,
		ProxyPort: uint16(cp.proxy_port),
	}
	p.Mounts = MountPlan{Hide: strs(cp.hide), TmpSize: int64(cp.tmp_size), Home: C.GoString(cp.home), Memfd: cp.memfd != 0}
	for _, t := range unsafe.Slice(cp.trees, cp.ntrees) {
		p.Mounts.Trees = append(p.Mounts.Trees, TreePlan{Path: C.GoString(t.path), Write: t.write != 0, Exec: t.exec != 0, Idmap: t.idmap != 0, Owner: int(t.owner)})
	}
	for _, m := range unsafe.Slice(cp.masks, cp.nmasks) {
		p.Mounts.Masks = append(p.Mounts.Masks, MaskPlan{Path: C.GoString(m.path), Dir: m.dir != 0})
	}
	for _, r := range unsafe.Slice(cp.rlimits, cp.nrlimits) {
		p.Rlimits = append(p.Rlimits, RlimitPlan{Resource: int(r.resource), Name: C.GoString(r.name), Value: uint64(r.value), AtMost: r.at_most != 0})
	}
	p.Identity = IdentityPlan{Setuid: cp.setuid != 0, UID: int(cp.uid), GID: int(cp.gid), Owner: int(cp.owner), OwnerGID: int(cp.owner_gid)}
	p.Landlock = LandlockPlan{ABI: int(cp.abi), HandledFS: uint64(cp.handled_fs), HandledNet: uint64(cp.handled_net), Scoped: uint64(cp.scoped)}
	for _, r := range unsafe.Slice(cp.paths, cp.npaths) {
		p.Landlock.Paths = append(p.Landlock.Paths, PathRule{Path: C.GoString(r.path), Access: uint64(r.access)})
	}
	for _, r := range unsafe.Slice(cp.ports, cp.nports) {
		p.Landlock.Ports = append(p.Landlock.Ports, PortRule{Port: uint16(r.port), Access: uint64(r.access)})
	}
	for _, in := range unsafe.Slice(cp.filter, cp.nfilter) {
		p.Seccomp = binary.NativeEndian.AppendUint16(p.Seccomp, uint16(in.code))
		p.Seccomp = append(p.Seccomp, byte(in.jt), byte(in.jf))
		p.Seccomp = binary.NativeEndian.AppendUint32(p.Seccomp, uint32(in.k))
	}
	return p, nil
}

// openNoFollowC is stage 2's no-follow open (for tests).
func openNoFollowC(path string) (int, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	fd := int(C.pf_open_nofollow(cs))
	if fd < 0 {
		return -1, syscall.Errno(-fd)
	}
	return fd, nil
}

// mountPointC is stage 2's mount-point walk for tree n of trees (for
// tests): dirs says which trees are directories; cover is the tmpfs that
// covers tree n, or "".
func mountPointC(trees []string, dirs []bool, n int, cover string) (fd int, where string, err error) {
	ct := (*C.struct_tree)(C.calloc(C.size_t(len(trees)), C.size_t(unsafe.Sizeof(C.struct_tree{}))))
	defer C.free(unsafe.Pointer(ct))
	list := unsafe.Slice(ct, len(trees))
	for i, path := range trees {
		list[i].path = C.CString(path)
		defer C.free(unsafe.Pointer(list[i].path))
		if dirs[i] {
			list[i].dir = 1
		}
	}
	cp := C.struct_plan{trees: ct, ntrees: C.uint32_t(len(trees))}
	var ccover *C.char
	if cover != "" {
		ccover = C.CString(cover)
		defer C.free(unsafe.Pointer(ccover))
	}
	var cwhere *C.char
	var made C.int
	r := int(C.pf_mount_point(&cp, C.uint32_t(n), ccover, &cwhere, &made))
	if cwhere != nil {
		where = C.GoString(cwhere)
		C.free(unsafe.Pointer(cwhere))
	}
	if r < 0 {
		return -1, where, syscall.Errno(-r)
	}
	return r, where, nil
}

// threadsStopped is stage 2's check, on Ctrl-Z, that every thread of
// process pid is stopped or gone (for its test).
func threadsStopped(pid int) bool { return C.pf_threads_stopped(C.long(pid)) != 0 }

// processMark is the mark stage 2's watch over a stopped tree compares,
// for process pid's threads alone (for its test); false when it cannot
// be told.
func processMark(pid int) (uint64, bool) {
	var m C.uint64_t
	ok := C.pf_process_mark(C.long(pid), &m) != 0
	return uint64(m), ok
}

// reapBatch is how many children init reaps before it looks at its pipes
// again.
const reapBatch = C.PF_REAP_BATCH

// reapC is init's reaping step (for its test): it reaps at most max
// children and returns agent with its status when the agent was among
// them, 0 when no child waits, -1 when max were reaped.
func reapC(agent, max int) (int, syscall.WaitStatus) {
	var st C.int
	r := int(C.pf_reap(C.pid_t(agent), C.int(max), &st))
	return r, syscall.WaitStatus(st)
}

// stopTreeC is stage 2's stop of the agent's tree, reading self to tell
// the pid namespace's /proc (for its test, run as pid 1 of a pid
// namespace of its own: it sends kill(-1)).
func stopTreeC(self string) int {
	cs := C.CString(self)
	defer C.free(unsafe.Pointer(cs))
	return int(C.pf_stop_tree(cs))
}

// threadRunsC is what the mark holds for one thread, read from the
// schedstat and status files at the paths given (for its test): r is 1,
// 0 when it cannot be told, -1 when the thread is gone.
func threadRunsC(schedstat, status string) (v uint64, r int) {
	cs, ct := C.CString(schedstat), C.CString(status)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(ct))
	var cv C.uint64_t
	r = int(C.pf_thread_runs(cs, ct, &cv))
	return uint64(cv), r
}
