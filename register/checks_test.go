package register

import (
	"slices"
	"strings"
	"testing"
)

// Every check proves a register entry that exists and is a risk (SR).
func TestChecksNameRiskEntries(t *testing.T) {
	ids := CheckIDs()
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("check ids %v are not sorted and unique", ids)
	}
	for _, id := range ids {
		e, ok := Lookup(id)
		if !ok {
			t.Errorf("check %s: no register entry", id)
			continue
		}
		if !strings.HasPrefix(id, "SR-") {
			t.Errorf("check %s: only risks (SR) have checks; %s is %s", id, id, e.Status)
		}
	}
}

func TestForkedLine(t *testing.T) {
	for line, want := range map[string]int{"forked 18 of 100 EAGAIN": 18, "forked 0 of 100 EACCES": 0, "forked 100 of 100": 100, "ok": -1, "": -1} {
		if got := forked(line); got != want {
			t.Errorf("forked(%q) = %d, want %d", line, got, want)
		}
	}
}
