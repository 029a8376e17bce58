package launcher

import (
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The launch's one line names every Boundary the host weakens, beside
// what was applied: a degraded one is never left to `launcher hello`.
// The network and memory ones are said in their own words already.
func TestSummaryLineSaysDegraded(t *testing.T) {
	p := &Plan{Rlimits: []RlimitPlan{{unix.RLIMIT_AS, "RLIMIT_AS", 1 << 30, false}}}
	p.Landlock.ABI = 7
	degraded := []Assessment{
		{Boundary: "unix sockets", Verdict: Degraded, Risk: "SR-08"},
		{Boundary: "process limit", Verdict: Degraded},
		{Boundary: "memory limit", Verdict: Degraded, Risk: "SD-05"},
		{Boundary: "network", Verdict: Degraded, Risk: "SR-03"},
	}
	got := summaryLine(p, SeccompProgram{}, &session{netns: true}, 0, degraded)
	for _, want := range []string{
		"; uncovered: ",
		"resident memory: only address space is bounded (SD-05)",
		"unix sockets degraded (SR-08)",
		"process limit degraded",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"memory limit degraded", "network degraded"} {
		if strings.Contains(got, not) {
			t.Errorf("summary says %q twice over:\n%s", not, got)
		}
	}
	if clean := summaryLine(&Plan{}, SeccompProgram{}, &session{netns: true}, 0, nil); strings.Contains(clean, "uncovered") {
		t.Errorf("nothing degraded, yet: %s", clean)
	}
}

// The read-only paths inside the write paths are counted, and what the
// caller could not cover is said with the rest of what is uncovered.
func TestSummaryLineReadOnly(t *testing.T) {
	one := summaryLine(&Plan{}, SeccompProgram{}, &session{netns: true, readOnly: 1, uncovered: []string{"/ws/.git/hooks (a link)"}}, 0, nil)
	if !strings.Contains(one, ", 1 protected path read-only; uncovered: /ws/.git/hooks (a link)") {
		t.Errorf("one read-only path and one uncovered: %s", one)
	}
	if many := summaryLine(&Plan{}, SeccompProgram{}, &session{netns: true, readOnly: 3}, 0, nil); !strings.Contains(many, ", 3 protected paths read-only") || strings.Contains(many, "uncovered") {
		t.Errorf("three read-only paths: %s", many)
	}
}

// On the host's network ("ports" mode) the line says what Landlock's port
// rules leave open: UDP and ICMP, every host on an allowed port, and
// listen() when Unix sockets keep it allowed without a bind port. Each
// is said only where it holds.
func TestSummaryLineSaysPortsUncovered(t *testing.T) {
	p := &Plan{}
	p.Landlock.ABI = 7
	p.Landlock.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	p.Landlock.Ports = []PortRule{{Port: 443, Access: ll.AccessNetConnectTCP}}
	hostNet := []string{"UDP and ICMP on the host network (SD-04)", "TCP ports are allowed on every host (SD-03)"}
	listen := "listen() without bind() opens an ephemeral port"
	got := summaryLine(p, SeccompProgram{}, &session{}, 0, nil)
	for _, want := range append(hostNet, listen) {
		if !strings.Contains(got, want) {
			t.Errorf("ports mode, listen not covered: summary lacks %q:\n%s", want, got)
		}
	}
	if got := summaryLine(p, SeccompProgram{}, &session{listenCovered: true}, 0, nil); strings.Contains(got, listen) {
		t.Errorf("listen() covered, yet: %s", got)
	}
	// Network "none" without a namespace: Landlock handles TCP with no
	// port allowed, so nothing of the host network is left to say.
	p.Landlock.Ports = nil
	if got := summaryLine(p, SeccompProgram{}, &session{}, 0, nil); strings.Contains(got, "uncovered") || !strings.Contains(got, "Landlock denies TCP") {
		t.Errorf("network none without a namespace: %s", got)
	}
}
