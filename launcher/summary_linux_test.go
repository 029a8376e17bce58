package launcher

import (
	"strings"
	"testing"

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
