package policy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrHashMismatch is returned when a policy's bytes do not hash to the
// pinned value.
var ErrHashMismatch = errors.New("policy does not match the pinned sha256")

// Problem is one thing wrong with a policy, or one piece of advice.
type Problem struct {
	Line  int    `json:"line,omitempty"` // 1-based line in the file; 0 when not known
	Col   int    `json:"col,omitempty"`  // 1-based column; 0 when not known
	Key   string `json:"key,omitempty"`  // dotted key, e.g. "files.write" or "secrets[1].hosts"
	Check string `json:"check"`          // name of the check that found it, e.g. "write-exec-overlap"
	Risk  string `json:"risk,omitempty"` // register id, e.g. "SR-01"
	Msg   string `json:"message"`        // what is wrong and why
	Hint  string `json:"hint,omitempty"` // how to fix it

	elem int // index in an array of tables, or -1
}

// String formats the problem as "LINE:COL: KEY: MSG (RISK)".
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		if p.Col > 0 {
			b.WriteString(":" + strconv.Itoa(p.Col))
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	if p.Risk != "" && !strings.Contains(p.Msg, "("+p.Risk+")") {
		b.WriteString(" (" + p.Risk + ")")
	}
	return b.String()
}

// In formats the problem as "FILE:LINE:COL: KEY: MSG (RISK)".
func (p Problem) In(file string) string {
	if p.Line > 0 {
		return file + ":" + p.String()
	}
	return file + ": " + p.String()
}

// Error reports every problem found in one policy file, in file order.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return bug("policy.Error with no problems")
	}
	s := e.Problems[0].In(e.File)
	if n := len(e.Problems) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// Lines formats each problem as "FILE:LINE: KEY: MSG".
func (e *Error) Lines() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.In(e.File)
	}
	return out
}

// sortProblems puts problems in file order, those without a line last, and
// writes an array-of-tables index into the key ("secrets[1].hosts").
func sortProblems(ps []Problem) {
	for i := range ps {
		if p := &ps[i]; p.elem >= 0 {
			head, rest, _ := strings.Cut(p.Key, ".")
			p.Key = fmt.Sprintf("%s[%d]", head, p.elem)
			if rest != "" {
				p.Key += "." + rest
			}
			p.elem = -1
		}
	}
	line := func(p Problem) int {
		if p.Line == 0 {
			return math.MaxInt
		}
		return p.Line
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(line(a), line(b)), cmp.Compare(a.Col, b.Col))
	})
}

func problem(key, check, msg string) Problem {
	return Problem{Key: key, Check: check, Msg: msg, elem: -1}
}
