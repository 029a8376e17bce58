package clip

import (
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc … (3 more bytes)"},
		{"aé", 2, "a … (2 more bytes)"}, // é is two bytes: not split
		{"x", 0, " … (1 more bytes)"},
	} {
		if got := Bytes(c.in, c.n); got != c.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := Bytes(strings.Repeat("x", 1<<20), 512); len(got) > 512+40 {
		t.Errorf("1 MiB cut to %d bytes", len(got))
	}
}
