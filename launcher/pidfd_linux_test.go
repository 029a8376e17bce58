package launcher

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// threadBlocked is the calling thread's blocked-signal mask, as the
// kernel reports it.
func threadBlocked(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/status")
	must(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SigBlk:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			must(t, err)
			return m
		}
	}
	t.Fatal("no SigBlk in /proc/thread-self/status")
	return 0
}

// The Go runtime's pidfd check is a child made with the calling thread's
// mask (PreparePidfd): withBlocked must hold the stop signals on that
// thread while f runs, and give the thread its mask back afterwards.
func TestWithBlockedHoldsStops(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stops uint64
	for _, s := range stopSignals {
		stops |= 1 << (uint(s) - 1)
	}
	before := threadBlocked(t)
	if before&stops != 0 {
		t.Fatalf("the test thread blocks stop signals already (%#x): the check below proves nothing", before)
	}
	var inside uint64
	if !withBlocked(stopSignals, func() { inside = threadBlocked(t) }) {
		t.Fatal("the thread's mask was not set back")
	}
	if inside&stops != stops {
		t.Errorf("inside, blocked %#x: want SIGTSTP, SIGTTIN and SIGTTOU (%#x) among them", inside, stops)
	}
	if after := threadBlocked(t); after != before {
		t.Errorf("after, blocked %#x; before, %#x", after, before)
	}
}
