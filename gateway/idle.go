package gateway

import (
	"context"
	"fmt"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// idleTransport starts a guest's child at SCHED_IDLE: the CPU its tree
// gets is what nothing else on the host wants. Memory and processes
// have bounds of their own (guestPolicy); CPU had none, and a caller
// with no token could keep every CPU busy with up to 512 processes per
// session. The policy is inherited by everything the child starts, and
// the sandbox cannot leave it: leaving SCHED_IDLE takes CAP_SYS_NICE or
// an RLIMIT_NICE that allows the task's nice value, and the agent and
// its commands have neither (RLIMIT_NICE 0, no capabilities). A weight
// per task, not per session: under contention a guest's 512 processes
// weigh about what one and a half ordinary ones do.
type idleTransport struct{ *mcp.CommandTransport }

func (t idleTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return startIdle(func() (mcp.Connection, error) { return t.CommandTransport.Connect(ctx) })
}

// startIdle runs start, which starts a process, on a thread of its own
// whose scheduling policy is SCHED_IDLE: a new process takes the policy
// of the thread that forks it. The thread then gets its policy back
// (the gateway, as root, may) and goes back to the runtime; where it
// cannot, it stays locked, so the runtime ends it with the goroutine
// (or, the main thread, parks it for good) rather than run other work at
// idle priority.
func startIdle[T any](start func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
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
			done <- result{zero, fmt.Errorf("idle scheduling for a guest's session: %w", err)}
			return
		}
		v, err := start()
		if unix.SchedSetAttr(0, old, 0) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{v, err}
	}()
	r := <-done
	return r.v, r.err
}
