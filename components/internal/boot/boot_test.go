package boot

import (
	"bytes"
	"strings"
	"testing"
)

// A component's log stops at MaxLog, says so once, and never fails the
// writer's caller; writes that fit pass whole.
func TestCappedWriter(t *testing.T) {
	var b bytes.Buffer
	c := &cappedWriter{w: &b, left: 10}
	for _, s := range []string{"12345", "6789", "abc", "def"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %q: %d %v", s, n, err)
		}
	}
	if got := b.String(); !strings.HasPrefix(got, "123456789log: over ") || strings.Count(got, "dropped") != 1 || strings.Contains(got, "abc") {
		t.Errorf("log %q", got)
	}
}
