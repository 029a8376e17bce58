package launcher

import (
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// stopSignals are the signals a terminal's job control stops a process
// with.
var stopSignals = []unix.Signal{unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU}

// PreparePidfd makes the Go runtime's one-time check that pidfds work
// with the job-control stop signals blocked, once per process; call it
// before starting a process. The check (made by the first
// os.StartProcess or os.FindProcess) is a child that exits at once, in
// the launcher's process group, with the calling thread's signal mask,
// while that thread waits for it (vfork). A Ctrl-Z in that moment stopped
// the child; the launcher could not stop while it waited, so the person's
// shell never learnt the job had stopped and the terminal hung (CI,
// 2026-12-02: one launch in about fourteen with a Ctrl-Z typed as the
// launch began). Blocked on the thread that makes the check, a stop
// signal waits in the child until it exits; the launcher's other threads
// take it, and the launcher stops once the check is done.
//
// (The processes the launcher starts itself are safe: each leaves the
// launcher's process group, setsid or setpgid, before the Go runtime
// unblocks signals in it.)
var PreparePidfd = sync.OnceFunc(func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked if the mask cannot be set back: the thread ends with the goroutine
		if withBlocked(stopSignals, func() {
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Release()
			}
		}) {
			runtime.UnlockOSThread()
		}
	}()
	<-done
})

// withBlocked runs f with sigs blocked on the calling thread, which must
// be locked to its goroutine, and reports whether the thread's mask was
// set back afterwards. f is run either way: when the signals cannot be
// blocked, nothing is lost but the protection.
func withBlocked(sigs []unix.Signal, f func()) bool {
	var set, old unix.Sigset_t
	for _, s := range sigs {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		f()
		return true
	}
	f()
	return unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil) == nil
}
