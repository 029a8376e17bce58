// Static validator for Code Mode scripts (DESIGN.md §6): defence in depth, not the boundary.
//
// Validate parses an LLM-written script as the BODY of an async function (top-level await and
// return are legal) with github.com/tdewolff/parse/v2/js in its Inline mode, which is exactly that
// grammar; nothing is wrapped around the source, so every position is the user's own. It rejects:
//
//   - banned-name: eval, Function, require, import, process, Deno, globalThis, Reflect wherever they
//     are referenced or bound: calls, `new Function`, `(0, eval)(…)`, declarations, parameters,
//     class and function names, shorthand properties `{eval}` (a reference), destructuring bindings
//     `const {eval} = o`, labels (a label is never needed under those names, so the rule stays "every
//     identifier that is not a property name"), `import(…)` and `import.meta`. As property NAMES
//     they are data and accepted: `o.eval`, `{eval: 1}`, `{eval() {}}`, `const {process: p} = o`.
//     Names outside the list (window, self, this) are not banned; see Limitations.
//   - banned-property: constructor, __proto__, prototype as a property name in any position: `x.p`,
//     `x?.p`, `x["p"]`, x[`p`], object-literal keys, methods, getters and setters `{__proto__: …}`,
//     `{get prototype() {}}`, destructuring keys `({constructor: c} = x)`, class fields and static or
//     accessor or computed members, and as a bare identifier (a bare `constructor` reads the global
//     object's inherited property). One exception: the plain class constructor method
//     `class A { constructor() {} }`, spelled literally, not static, not an accessor, generator or
//     async, defines the class and reads nothing, so it is accepted.
//     Computed keys (`x[…]`, `{[…]: …}`, class `[…]`): the key is constant-folded (string and
//     template literals, `+`, parentheses, comma, one-element arrays such as `x[["constructor"]]`),
//     and every string literal, template chunk (cooked and raw, so String.raw`constructor` too) and
//     maximal foldable sub-expression inside the key is checked on its own, so
//     x[f("constructor")] and x[c ? "constructor" : k] are rejected. Fully dynamic keys (`x[k]`) and
//     strings used as data (`log("eval")`, `"constructor" in x`) are accepted and left to the isolate.
//   - banned-syntax: `with` statements (they turn bare identifiers into property reads of any object,
//     so `with (f) constructor` would be `f.constructor`) and HTML-like comments `<!--` / `-->` (engines
//     disagree about them; a difference in what is a comment is a way to hide code).
//   - syntax: parse errors, malformed escapes, keywords spelled with escapes (`\u0069f`; engines that
//     read them as keywords would parse differently from the validator), a name or number touching
//     the name after it (the parser's lexer starts a new name at U+2118, U+212E, U+309B and U+309C,
//     which continue one in QuickJS: "let\u2118x" was a declaration here and an expression there,
//     and the engine's division on the next line a regular expression that hid code from this
//     pass), and a parser panic.
//   - encoding: NUL bytes (the parser treats NUL as end of input), invalid UTF-8, and escapes of lone
//     surrogates (`"\uD800"`), so every decoded name and literal is valid Unicode.
//   - too-large: more than MaxScriptSize bytes; a function with more than MaxParams parameters, a
//     call with more than MaxArgs arguments written out, more than MaxDeclared variables declared,
//     calls, templates and arrays nested so that a function holds more than MaxPending values at
//     once. too-deep: nesting beyond MaxNesting, or the parser's
//     own 1000-level limit on expressions and statements (e.g. `a=>a=>…`, `!!!…`, if-chains).
//   - internal: the validator's token stream and the parser's tree disagree; it fails closed.
//
// Names are compared after decoding: identifier escapes (\u0065val, \u{65}val) and string and template
// escapes (\x63, \u0063, \u{63}, legacy octal \143, line continuations) are decoded first.
// Property names that merely contain a banned word (constructorName, obj.prototypes, x.evaluate) and
// regular expression literals are data and accepted.
//
// Positions: Line and Col are 1-based. Lines are separated by JavaScript's line terminators (LF, CR,
// CRLF, U+2028, U+2029). Col counts Unicode code points (runes) from the start of the line, so a tab
// or a multibyte character is one column. A finding in a computed key points at the key's first
// literal.
//
// How it works: (1) size and encoding checks; (2) a linear, non-recursive pre-scan that counts
// bracket and template nesting ((, [, {, ${) with a tokenizer that skips strings, comments, templates
// and regular expressions, rejecting beyond MaxNesting before the recursive parser runs; (3) parse,
// with panics recovered; (4) an iterative (explicit stack, no recursion) walk of the tree that checks
// property names and computed keys and records where the tree has property names and regular
// expressions; (5) the parser's own lexer is run again over the source, told where the regular
// expressions are, so it yields exactly the parser's tokens: every identifier token that the tree did
// not place in a property-name position is checked as a reference or binding. Every literal the tree
// holds must coincide with a token of that stream, and every banned variable the tree holds must have
// been reported, or the result is an "internal" finding.
//
// # Limitations
//
//   - The static pass cannot see values. Strings used as data reach banned properties through
//     reflection (Object.getOwnPropertyDescriptor(x, "constructor"), Object.entries of descriptors,
//     Object.getPrototypeOf chains, x[k] with a computed k, keys built by calls such as
//     "constructo".concat("r"), [...].join(""), String.fromCharCode), and in sloppy mode `this` is the global
//     object, so `this.eval` is accepted. The isolate must make eval and the Function, AsyncFunction,
//     GeneratorFunction constructors unusable whatever the script reaches.
//   - The pre-scan guesses whether `/` starts a regular expression from the previous token, as
//     tokenizers without a parser must. A script crafted to mislead that guess can hide brackets from
//     the count; the parser bounds its own expression and statement recursion at 1000 levels, but not
//     destructuring patterns: measured at MaxScriptSize (500,000 nested `[` in a pattern) that costs
//     about 256 MB of goroutine stack and one second, below Go's 1 GB stack limit, so it is slow but
//     not fatal. Policies should keep their script limit well below MaxScriptSize.
//   - The parser does not enforce strict-mode or every early error; where it accepts a script the
//     engine rejects, the engine's error wins, which is safe.
package code

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// Finding is one reason a script is rejected.
type Finding struct {
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Rule    string `json:"rule"`           // stable identifier, e.g. "syntax", "banned-name", "banned-property", "too-large", "too-deep"
	Name    string `json:"name,omitempty"` // the banned name or property, decoded (e.g. "eval")
	Message string `json:"message"`        // one sentence for people
}

// String formats the finding as "LINE:COL: RULE: MESSAGE".
func (f Finding) String() string {
	return fmt.Sprintf("%d:%d: %s: %s", f.Line, f.Col, f.Rule, f.Message)
}

// MaxScriptSize is the largest script Validate accepts (bytes); policy limits can be lower.
const MaxScriptSize = 1 << 20

// MaxNesting bounds syntactic nesting depth checked BEFORE parsing (the parser recurses).
//
// 256 is far above what people or models write (real code rarely nests 30 deep), below the parser's
// own limit of 1000 nested expressions (each bracket level costs the parser at least one), so deep
// inputs get this clear finding instead of a parser message, and small enough that the parser's one
// uncounted recursion, destructuring patterns (about 500 bytes of stack per level, measured), stays
// far below a megabyte.
const MaxNesting = 256

// Bounds on what makes a call's frame large. QuickJS keeps a frame's
// arguments, locals and operand stack in C stack memory that its heap
// limit does not count (a hunt's 30,000-parameter function recursed to
// 250 MB under a 64 MiB limit): with these a frame holds at most some
// 100 KiB.
const (
	MaxParams   = 256  // parameters of one function
	MaxArgs     = 1024 // arguments written in one call (a spread is one)
	MaxDeclared = 4096 // variables the script declares, in all its scopes
	// MaxPending bounds what a function holds on its operand stack at
	// once, counted over the calls, templates and arrays that enclose a
	// point: a call holds its arguments while one nested in them is made,
	// a template its parts (it is "".concat(part, …)), an array literal
	// its first 32 elements. Each call within MaxArgs, nested they reached
	// QuickJS's own bound of 65,535 values, a 1 MiB frame.
	MaxPending = 2048
)

// Rules, as they appear in Finding.Rule.
const (
	valRuleTooLarge = "too-large"
	valRuleEncoding = "encoding"
	valRuleTooDeep  = "too-deep"
	valRuleSyntax   = "syntax"
	valRuleName     = "banned-name"
	valRuleProperty = "banned-property"
	valRuleBanned   = "banned-syntax"
	valRuleInternal = "internal"
)

// valFoldDepth bounds the recursion of constant folding; a deeper key fails closed (too-deep).
const valFoldDepth = 200

// valBannedName reports whether name is a global that scripts may not reference or bind.
func valBannedName(name string) bool {
	switch name {
	case "eval", "Function", "require", "import", "process", "Deno", "globalThis", "Reflect":
		return true
	}
	return false
}

// valBannedProp reports whether name is a property that scripts may not name.
func valBannedProp(name string) bool {
	switch name {
	case "constructor", "__proto__", "prototype":
		return true
	}
	return false
}

// valRuleFor returns the rule for a banned identifier or property name, or "".
func valRuleFor(name string) string {
	switch {
	case valBannedName(name):
		return valRuleName
	case valBannedProp(name):
		return valRuleProperty
	case name == "with":
		return valRuleBanned
	}
	return ""
}

// valHit is a finding before its position is known: Off is a byte offset into the source, or -1
// when Finding already carries Line and Col.
type valHit struct {
	Off int
	F   Finding
}

// Validate returns every finding (sorted by position), or nil when the script is accepted.
func Validate(src string) []Finding {
	if len(src) > MaxScriptSize {
		return []Finding{{Line: 1, Col: 1, Rule: valRuleTooLarge,
			Message: fmt.Sprintf("script is %d bytes, more than the %d-byte limit", len(src), MaxScriptSize)}}
	}
	if hits := valEncoding(src); len(hits) > 0 {
		return valFinish(src, hits)
	}
	if off, ok := valPrescan(src); !ok {
		return valFinish(src, []valHit{{Off: off, F: Finding{Rule: valRuleTooDeep,
			Message: fmt.Sprintf("brackets or template substitutions nest more than %d deep", MaxNesting)}}})
	}
	s := &valState{src: src, expect: map[string]bool{}}
	// The parser and the lexer append a NUL sentinel; room for it keeps their slices in s.buf.
	s.buf = make([]byte, len(src), len(src)+1)
	copy(s.buf, src)
	ast, hit := s.parse()
	if hit != nil {
		return valFinish(src, []valHit{*hit})
	}
	s.walk(ast)
	s.tokens()
	s.checkExpected()
	return valFinish(src, s.hits)
}

// valEncoding reports NUL bytes and invalid UTF-8, one finding each for the first occurrence.
func valEncoding(src string) []valHit {
	var hits []valHit
	if i := strings.IndexByte(src, 0); i >= 0 {
		hits = append(hits, valHit{Off: i, F: Finding{Rule: valRuleEncoding, Message: fmt.Sprintf(
			"script contains %d NUL byte(s), the first here; the parser would stop reading at it", strings.Count(src, "\x00"))}})
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			// Position it at the last valid character so line and column stay meaningful.
			hits = append(hits, valHit{Off: i, F: Finding{Rule: valRuleEncoding,
				Message: fmt.Sprintf("invalid UTF-8 byte 0x%02x; scripts must be UTF-8 text", src[i])}})
			break
		}
		i += n
	}
	return hits
}

// valState is the state of one Validate call after the pre-checks.
type valState struct {
	src      string
	buf      []byte          // src with room for the parser's NUL; all parser slices point into it
	hits     []valHit        // findings so far
	props    []int           // offsets of identifier tokens in property-name position
	regexps  map[int]int     // offset -> length of every regular expression literal in the tree
	tagged   map[int]bool    // offsets of template chunks of tagged templates (invalid escapes allowed)
	spans    [][2]int        // (offset, length) of every literal the tree holds, for the tripwire
	expect   map[string]bool // banned names the tree holds as variables, with, import
	declared int             // variables declared so far, in all scopes
	heldMany bool            // the MaxPending finding is made
}

func (s *valState) add(off int, rule, name, msg string) {
	s.hits = append(s.hits, valHit{Off: off, F: Finding{Rule: rule, Name: name, Message: msg}})
}

// offsetOf returns the offset in s.buf where b starts, or -1 when b is not a slice of s.buf (the
// parser copied it or made it up). The parser hands out full slices (b[i:j:j]), so the offset comes
// from the element addresses (reflect, not unsafe; the heap does not move), and the pointer
// comparison confirms it.
func (s *valState) offsetOf(b []byte) int {
	if len(b) == 0 || len(s.buf) == 0 {
		return -1
	}
	base, p := reflect.ValueOf(s.buf).Pointer(), reflect.ValueOf(b).Pointer()
	if p < base || p-base >= uintptr(len(s.buf)) {
		return -1
	}
	off := int(p - base)
	if off+len(b) > len(s.buf) || &s.buf[off] != &b[0] {
		return -1
	}
	return off
}

// parse runs the parser, turning errors and panics into a finding.
func (s *valState) parse() (ast *js.AST, hit *valHit) {
	defer func() {
		if r := recover(); r != nil {
			ast = nil
			hit = &valHit{Off: 0, F: Finding{Rule: valRuleSyntax, Message: fmt.Sprintf("the parser failed on this script: %v", r)}}
		}
	}()
	ast, err := js.Parse(parse.NewInputBytes(s.buf), js.Options{Inline: true})
	if err == nil {
		return ast, nil
	}
	f := Finding{Line: 1, Col: 1, Rule: valRuleSyntax, Message: "syntax error: " + err.Error()}
	var perr *parse.Error
	if errors.As(err, &perr) {
		f.Line, f.Col = max(perr.Line, 1), max(perr.Column, 1)
		f.Message = "syntax error: " + perr.Message
		if strings.Contains(perr.Message, "too many nested") {
			f.Rule = valRuleTooDeep
			f.Message = "nesting too deep for the parser: " + perr.Message
		}
	}
	return nil, &valHit{Off: -1, F: f}
}

// Walker context bits.
const (
	valKey    = 1 << iota // inside a computed property key
	valTransp             // parent folds this node into its own constant value
	valCtorOK             // a class method that may be the constructor
)

type valItem struct {
	n    js.INode
	ctx  uint8
	pend int // values the enclosing expressions of the same function hold (valState.hold)
}

// valPtr turns the value forms of nodes (the parser stores both T and *T) into pointers, and nil
// pointers into nil, so the walk needs one case per node type.
func valPtr(n js.INode) js.INode {
	if n == nil {
		return nil
	}
	v := reflect.ValueOf(n)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		return n
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	if pn, ok := p.Interface().(js.INode); ok {
		return pn
	}
	return n
}

// valFinish positions, sorts and de-duplicates the findings; nil when there are none.
func valFinish(src string, hits []valHit) []Finding {
	if len(hits) == 0 {
		return nil
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Off < hits[j].Off })
	// One sweep over the source assigns line and column to every offset.
	line, col, pos := 1, 1, 0
	for k := range hits {
		h := &hits[k]
		if h.Off < 0 {
			continue
		}
		target := min(h.Off, len(src))
		for pos < target {
			r, n := utf8.DecodeRuneInString(src[pos:])
			switch {
			case r == '\r' && pos+1 < len(src) && src[pos+1] == '\n':
				line, col, n = line+1, 1, 2
			case r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029:
				line, col = line+1, 1
			default:
				col++
			}
			pos += n
		}
		h.F.Line, h.F.Col = line, col
	}
	out := make([]Finding, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.F)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Message < b.Message
	})
	uniq := out[:1]
	for _, f := range out[1:] {
		if last := uniq[len(uniq)-1]; f.Line != last.Line || f.Col != last.Col || f.Rule != last.Rule || f.Name != last.Name {
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// valOpen is an open bracket in the pre-scan: its kind ( [ { or t for a template substitution, and
// whether a regular expression may follow its closing bracket.
type valOpen struct {
	kind       byte
	regexAfter bool
}
