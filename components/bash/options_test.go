package bash

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestOptionTables: each wrapper's table is well formed: no letter or name
// twice, and every option it stops at or captures is one of its options,
// a captured one taking a value.
func TestOptionTables(t *testing.T) {
	specs := map[string]optSpec{"watch": watchSpec}
	for n, sp := range wrappers() {
		specs[n] = sp
	}
	for k, sp := range runners() {
		specs[k[0]+" "+k[1]] = sp
	}
	for name, sp := range specs {
		for i := 0; i < len(sp.short); i++ {
			c := sp.short[i]
			if c == ':' {
				continue
			}
			if c == '-' || c == '+' || strings.Count(sp.short, string(c)) > 1 {
				t.Errorf("%s: short option %q is bad or listed twice", name, c)
			}
		}
		var seen []string
		for f := range strings.FieldsSeq(sp.long) {
			n := strings.TrimSuffix(strings.TrimSuffix(f, "[=]"), "=")
			if n == "" || strings.HasPrefix(n, "-") || strings.ContainsAny(n, "=[]") || slices.Contains(seen, n) {
				t.Errorf("%s: long option %q is bad or listed twice", name, f)
			}
			seen = append(seen, n)
		}
		for _, list := range []string{sp.stop, sp.capture} {
			for o := range strings.FieldsSeq(list) {
				arg, ok := argOf(sp, o)
				if !ok {
					t.Errorf("%s: %s is not one of its options", name, o)
				}
				if list == sp.capture && arg == argNone {
					t.Errorf("%s: %s is captured but takes no value", name, o)
				}
			}
		}
	}
}

func argOf(sp optSpec, o string) (int, bool) {
	if n, ok := strings.CutPrefix(o, "--"); ok {
		return sp.longArg(n)
	}
	if len(o) == 2 && o[0] == '-' {
		return sp.shortArg(o[1])
	}
	return argNone, false
}

// TestParseOpts: how options are read, and what is not read.
func TestParseOpts(t *testing.T) {
	words := func(s string) []Word {
		var ws []Word
		for _, f := range strings.Fields(s) {
			ws = append(ws, lit(f))
		}
		return ws
	}
	show := func(r optResult) string {
		var caps []string
		for _, c := range r.caps {
			caps = append(caps, c.name+"="+c.val.Text)
		}
		return fmt.Sprintf("cmd %d unknown %d stop %v caps %v", r.cmd, r.unknown, r.stop, caps)
	}
	sp := optSpec{
		short: "ab:c::", long: "all bee= see[=] stop", stop: "--stop", capture: "-b --bee -c --see", positional: 1,
	}
	for _, tc := range []struct {
		spec optSpec
		src  string
		want string
	}{
		{sp, "w -a -b x 5 cmd", "cmd 5 unknown 0 stop false caps [-b=x]"},
		{sp, "w -abx 5 cmd", "cmd 3 unknown 0 stop false caps [-b=x]"},
		{sp, "w --bee x 5 cmd", "cmd 4 unknown 0 stop false caps [--bee=x]"},
		{sp, "w --bee=x 5 cmd", "cmd 3 unknown 0 stop false caps [--bee=x]"},
		{sp, "w -c x cmd", "cmd 3 unknown 0 stop false caps [-c=]"},
		{sp, "w -cx 5 cmd", "cmd 3 unknown 0 stop false caps [-c=x]"},
		{sp, "w --see x cmd", "cmd 3 unknown 0 stop false caps [--see=]"},
		{sp, "w --see=x 5 cmd", "cmd 3 unknown 0 stop false caps [--see=x]"},
		{sp, "w --stop 5 cmd", "cmd 3 unknown 0 stop true caps []"},
		{sp, "w -- -a cmd", "cmd 3 unknown 0 stop false caps []"},
		// An abbreviation, an unknown long or short option, one in a cluster.
		{sp, "w --be x 5 cmd", "cmd 1 unknown 1 stop false caps []"},
		{sp, "w --al 5 cmd", "cmd 1 unknown 1 stop false caps []"},
		{sp, "w --bogus=1 5 cmd", "cmd 1 unknown 1 stop false caps []"},
		{sp, "w -a -x 5 cmd", "cmd 2 unknown 2 stop false caps []"},
		{sp, "w -ax 5 cmd", "cmd 1 unknown 1 stop false caps []"},
		// With getopt's permutation, it reads on.
		{optSpec{short: "c:", capture: "-c", permute: true}, "w x --bogus y -c z", "cmd 6 unknown 2 stop false caps [-c=z]"},
		// One-word long options: those it does not list cannot move the command.
		{optSpec{short: "q", oneWord: true}, "w --x=1 --y cmd", "cmd 3 unknown 0 stop false caps []"},
		{optSpec{short: "q", oneWord: true}, "w -z cmd", "cmd 1 unknown 1 stop false caps []"},
		// chrt's priority is there only when it is a number.
		{optSpec{short: "o", positional: 1, number: true}, "w -o 0 cmd", "cmd 3 unknown 0 stop false caps []"},
		{optSpec{short: "o", positional: 1, number: true}, "w -o cmd", "cmd 2 unknown 0 stop false caps []"},
		// npm's parser takes true or false after a flag.
		{optSpec{long: "yes", nopt: true}, "w --yes false cmd", "cmd 3 unknown 0 stop false caps []"},
		{optSpec{long: "yes"}, "w --yes false cmd", "cmd 2 unknown 0 stop false caps []"},
		// nice's -N, --N and -+N.
		{wrappers()["nice"], "nice --10 -+5 -3 cmd", "cmd 4 unknown 0 stop false caps []"},
	} {
		if got := show(parseOpts(words(tc.src), tc.spec)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.src, got, tc.want)
		}
	}
}
