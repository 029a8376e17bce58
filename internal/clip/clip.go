// Package clip cuts text that others chose (an exception's message, a
// path in a log line) to a bound, saying how much was cut.
package clip

import (
	"fmt"
	"unicode/utf8"
)

// Bytes is s cut to at most n bytes, at a character's start, followed by
// " … (N more bytes)" when anything was cut.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more bytes)", len(s)-cut)
}
