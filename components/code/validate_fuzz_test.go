package code

import (
	"reflect"
	"strings"
	"testing"
)

var valKnownRules = map[string]bool{
	"too-large": true, "encoding": true, "too-deep": true, "syntax": true,
	"banned-name": true, "banned-property": true, "banned-syntax": true, "internal": true,
}

// FuzzValidate checks the invariants of Validate on arbitrary input: no panic, findings sorted by
// position, positions 1-based and within the script, known rules, messages present, determinism.
func FuzzValidate(f *testing.F) {
	for _, tc := range valRejects {
		f.Add(tc.src)
	}
	for _, tc := range valAccepts {
		f.Add(tc.src)
	}
	for _, s := range []string{
		"", "\x00", "\xff", `"\uD800"`, "`${`${a}`}`", "a <!-- b", "x\n--> y", "((((", "[[[[", "{{{{",
		"let [[[a]]] = x", "if (a) /[/]\"/.test(b)", "x = {} / 1 / 2", "a\u2028eval", "x[`${'con'}structor`]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fs := Validate(src)
		if fs != nil && len(fs) == 0 {
			t.Fatalf("empty non-nil result")
		}
		lines := 1 + strings.Count(src, "\n") + strings.Count(src, "\r") + strings.Count(src, "\u2028") + strings.Count(src, "\u2029")
		for i, f := range fs {
			if f.Line < 1 || f.Col < 1 {
				t.Fatalf("finding %d has position %d:%d: %v", i, f.Line, f.Col, f)
			}
			if f.Line > lines || f.Col > len(src)+1 {
				t.Fatalf("finding %d is outside the script (%d lines, %d bytes): %v", i, lines, len(src), f)
			}
			if !valKnownRules[f.Rule] {
				t.Fatalf("finding %d has unknown rule %q", i, f.Rule)
			}
			if f.Message == "" {
				t.Fatalf("finding %d has no message", i)
			}
			if i > 0 {
				p := fs[i-1]
				if p.Line > f.Line || p.Line == f.Line && p.Col > f.Col {
					t.Fatalf("findings not sorted: %v before %v", p, f)
				}
			}
		}
		if again := Validate(src); !reflect.DeepEqual(fs, again) {
			t.Fatalf("not deterministic:\n%v\n%v", fs, again)
		}
	})
}
