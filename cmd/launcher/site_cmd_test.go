package main

import (
	"strings"
	"testing"
)

// --manifest-sha256 is exactly 64 hex digits in either case; nothing
// else (a prefix, a space, one digit more or less) is taken.
func TestParseManifestPin(t *testing.T) {
	const lower = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, s := range []string{lower, strings.ToUpper(lower), "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"} {
		sum, err := parseManifestPin(s)
		if err != nil || sum[0] != 0x01 || sum[31] != 0xef {
			t.Errorf("%s: %x %v", s, sum, err)
		}
	}
	for _, s := range []string{"", lower[:63], lower + "0", "sha256:" + lower, " " + lower[1:], lower[:63] + "g", lower[:62] + "\n0"} {
		if _, err := parseManifestPin(s); err == nil || !strings.Contains(err.Error(), "not a sha256") {
			t.Errorf("%q: %v", s, err)
		}
	}
}
