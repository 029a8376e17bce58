package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// site verify prints a file's name quoted: a name made of escape
// sequences and a carriage return that would erase the real error lines
// and print "every file matches" reaches stderr as inert text. Control:
// the same run reports the page that did change.
func TestSiteVerifyQuotesNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	var out, errs bytes.Buffer
	if code := run([]string{"site", "build", "--out", dir}, &out, &errs); code != 0 {
		t.Fatalf("build: %d %s", code, errs.String())
	}
	sum := regexp.MustCompile(`sha256 ([0-9a-f]{64}):`).FindStringSubmatch(out.String())
	if sum == nil {
		t.Fatalf("build printed no sha256: %q", out.String())
	}
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("changed"), 0o644)
	const name = "\xc3\xbf\r\x1b[5A\x1b[Jsite: every file matches manifest.json\x1b[8m"
	os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	out.Reset()
	errs.Reset()
	if code := run([]string{"site", "verify", "--manifest-sha256", sum[1], dir}, &out, &errs); code != 1 {
		t.Fatalf("verify exited %d: %s", code, errs.String())
	}
	got := errs.String()
	if strings.ContainsAny(got, "\x1b\r") || out.Len() != 0 {
		t.Errorf("raw control characters reached the terminal: %q (stdout %q)", got, out.String())
	}
	for _, want := range []string{
		fmt.Sprintf("launcher: error: site verify: %q: %q: added", dir, name),
		fmt.Sprintf("launcher: error: site verify: %q: \"index.html\": changed", dir),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

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
