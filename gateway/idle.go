package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/mountinfo"
)

// idleTransport starts a guest's child at SCHED_IDLE: the CPU its tree
// gets is what nothing else on the host wants. Memory and processes
// have bounds of their own (guestPolicy); CPU had none, and a caller
// with no token could keep every CPU busy with up to 512 processes per
// session. The policy is inherited by everything the child starts, and
// the sandbox cannot leave it: leaving SCHED_IDLE takes CAP_SYS_NICE or
// an RLIMIT_NICE that allows the task's nice value, and the agent and
// its commands have neither (RLIMIT_NICE 0, no capabilities).
//
// SCHED_IDLE weighs a task only against the others of its group, though.
// With autogroups (kernel.sched_autogroup_enabled, the default on
// Debian's kernels), every session of its own (setsid) outside any cpu
// cgroup is such a group, and competes with the rest of the host as an
// ordinary process would: the child is one (childCommand), and any
// process in the sandbox can make more (4 idle loops, each after setsid,
// took 80% of a CPU from an ordinary one). So the child is also started
// in the idle cpu group where the host has one: a v1 cpu cgroup beneath
// the gateway's own, idle to its siblings (cpu.idle; cpu.shares 2 on
// kernels before 5.15), in which autogroups do not apply (they do only in
// the root group), and which the sandbox cannot leave (the groups are
// root's; it has no capabilities). Beneath the gateway's own, so that a
// CPU bound the operator gave the gateway (a service's CPUQuota) bounds
// its guests too; a gateway in the root group puts it at the root.
// A host with cgroup v2 alone has no such group here: there a session's
// autogroups still compete as ordinary processes (doc.go). Where the
// group cannot be joined, noGroup hears why (the gateway logs it once:
// noIdleGroup).
type idleTransport struct {
	*mcp.CommandTransport
	noGroup func(error)
}

func (t idleTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return startIdle(func() (mcp.Connection, error) { return t.CommandTransport.Connect(ctx) }, t.noGroup)
}

// noIdleGroup logs, once per gateway, that a guest's child could not join
// the idle cpu group, and why: the operator would otherwise take guests
// to be idle to the host when they are idle only within their own
// session's autogroup. Once, at the first guest's start: the cause (no v1
// cpu hierarchy, a group that cannot be made) is the host's, the same
// for every guest, and a line per session would be one any caller with
// no token could cause.
func (g *Gateway) noIdleGroup(err error) {
	g.idleGroupWarn.Do(func() {
		g.log.Warn("guests run at SCHED_IDLE only, not in an idle cpu cgroup: each guest session's autogroup competes for the CPU with the host's processes as an ordinary process would",
			"err", err.Error())
	})
}

// idleGroupName is the idle cpu group's directory beneath the gateway's
// own group in the v1 cpu hierarchy: shared by every guest session of
// every gateway in that group (it holds no limit of one session's), and
// removed, empty, at Shutdown.
const idleGroupName = "pinfold-guests"

// startIdle runs start, which starts a process, on a thread of its own
// whose scheduling policy is SCHED_IDLE and which is in the idle cpu group
// where the host has one: a new process takes the policy and the cgroups
// of the thread that forks it. The thread then gets its policy and group
// back (the gateway, as root, may) and goes back to the runtime; where it
// cannot, it stays locked, so the runtime ends it with the goroutine
// (or, the main thread, parks it for good) rather than run other work at
// idle priority. Where the thread cannot join the group, start runs
// anyway (at SCHED_IDLE alone), and noGroup, unless nil, is told why, on
// the caller's goroutine.
func startIdle[T any](start func() (T, error), noGroup func(error)) (T, error) {
	type result struct {
		v       T
		err     error
		noGroup error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		old, err := unix.SchedGetAttr(0, 0)
		if err == nil {
			err = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0)
		}
		if err != nil {
			var zero T
			done <- result{zero, fmt.Errorf("idle scheduling for a guest's session: %w", err), nil}
			return
		}
		// Without a group the child is idle among its own session's
		// tasks alone (idleTransport); that is still something, and a
		// host without a v1 cpu hierarchy has no other way.
		back, groupErr := enterIdleCPUGroup()
		v, err := start()
		restored := unix.SchedSetAttr(0, old, 0) == nil
		if back != "" && os.WriteFile(filepath.Join(back, "tasks"), []byte("0"), 0) != nil {
			restored = false
		}
		if restored {
			runtime.UnlockOSThread()
		}
		done <- result{v, err, groupErr}
	}()
	r := <-done
	if r.noGroup != nil && noGroup != nil {
		noGroup(r.noGroup)
	}
	return r.v, r.err
}

// enterIdleCPUGroup moves the calling thread (only it: "0" to a v1
// tasks file) into the idle cpu group and returns the directory of the group
// it was in, for the way back; "" and an error where there is no such
// group or the thread could not join it.
func enterIdleCPUGroup() (back string, err error) {
	point, ok := idleCPUMount()
	if !ok {
		return "", errors.New("no cgroup v1 cpu hierarchy is mounted at its root")
	}
	own, err := threadCPUGroup()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(point, own, idleGroupName)
	// Twice: another gateway's Shutdown may remove the group, empty,
	// between this one's mkdir and its join.
	for range 2 {
		if err = joinIdleCPUGroup(dir); !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(point, own), nil
}

// joinIdleCPUGroup makes the group dir idle, if it is not yet, and moves
// the calling thread into it.
func joinIdleCPUGroup(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	// cpu.idle (Linux 5.15): the group is to its siblings what a
	// SCHED_IDLE task is to its own. Before it, the smallest weight.
	if err := os.WriteFile(filepath.Join(dir, "cpu.idle"), []byte("1"), 0); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte("2"), 0); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "tasks"), []byte("0"), 0)
}

// removeIdleCPUGroup removes the idle cpu group's directory when no task is
// in it (at Shutdown, its sessions ended): an empty group is left on the
// host otherwise. Busy, it stays: another gateway's guests are in it, or
// a task of this one's ended a moment ago (a dead task leaves its group
// a little after it is reaped), so it is tried for a second at most.
func removeIdleCPUGroup() {
	point, ok := idleCPUMount()
	if !ok {
		return
	}
	own, err := threadCPUGroup()
	if err != nil || filepath.Base(own) == idleGroupName {
		return
	}
	dir := filepath.Join(point, own, idleGroupName)
	for end := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(end) {
			return
		}
	}
}

// idleCPUMount is where the idle cpu group is looked for: cpuV1Mount; a
// variable so that a test can name a hierarchy that is not there.
var idleCPUMount = cpuV1Mount

// cpuV1Mount is the mount point of the v1 hierarchy that has the cpu
// controller, where its root is mounted (else a group made there would
// not be at the root).
func cpuV1Mount() (string, bool) {
	for _, m := range mountinfo.Read() {
		if m.Type == "cgroup" && m.Root == "/" && slices.Contains(strings.Split(m.Super, ","), "cpu") {
			return m.Point, true
		}
	}
	return "", false
}

// threadCPUGroup is the calling thread's group in the v1 cpu hierarchy.
func threadCPUGroup() (string, error) { return cpuGroupIn("/proc/thread-self/cgroup") }

// cpuGroupIn is the v1 cpu group a /proc cgroup file names
// ("id:controllers:path" lines).
func cpuGroupIn(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") && filepath.IsAbs(parts[2]) {
			return parts[2], nil
		}
	}
	return "", errors.New("no cgroup of a v1 cpu hierarchy in " + file)
}
