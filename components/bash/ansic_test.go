package bash

import (
	"os/exec"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// ansiC decodes $'…' as bash does: compared with bash itself on every
// kind of escape.
func TestAnsiC(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("no bash: %v", err)
	}
	for _, src := range []string{`$'\x24('`, `$'\044('`, `$'\u0024\u0028'`, `$'\U00000024('`, `$'a\nb\tc\e\E\a\b\f\r\v'`, `$'\\\'\"\?'`,
		`$'\x5b\x24\x28x\x29\x5d'`, `$'\1\12\123\1234'`, `$'\xg\x'`, `$'\cA\c['`, `$'\q\8'`, `$'\xff\u00e9'`, `$'plain'`} {
		f, err := syntax.NewParser().Parse(strings.NewReader("x="+src), "")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		syntax.Walk(f, func(n syntax.Node) bool {
			if q, ok := n.(*syntax.SglQuoted); ok {
				got = ansiC(q)
			}
			return true
		})
		out, err := exec.Command(bash, "-c", "x="+src+`; printf %s "$x"`).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got != string(out) {
			t.Errorf("%s: got %q, bash says %q", src, got, out)
		}
	}
}
