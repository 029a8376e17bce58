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
//     read them as keywords would parse differently from the validator), and a parser panic.
//   - encoding: NUL bytes (the parser treats NUL as end of input), invalid UTF-8, and escapes of lone
//     surrogates (`"\uD800"`), so every decoded name and literal is valid Unicode.
//   - too-large: more than MaxScriptSize bytes. too-deep: nesting beyond MaxNesting, or the parser's
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
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode"
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
	src     string
	buf     []byte          // src with room for the parser's NUL; all parser slices point into it
	hits    []valHit        // findings so far
	props   []int           // offsets of identifier tokens in property-name position
	regexps map[int]int     // offset -> length of every regular expression literal in the tree
	tagged  map[int]bool    // offsets of template chunks of tagged templates (invalid escapes allowed)
	spans   [][2]int        // (offset, length) of every literal the tree holds, for the tripwire
	expect  map[string]bool // banned names the tree holds as variables, with, import
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
	n   js.INode
	ctx uint8
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

// walk visits the tree with an explicit stack: the tree can be far deeper than the bracket nesting
// (long operator and member chains), so recursion is not an option.
func (s *valState) walk(root js.INode) {
	s.regexps, s.tagged = map[int]int{}, map[int]bool{}
	stack := []valItem{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := valPtr(it.n)
		if n == nil {
			continue
		}
		key := it.ctx & valKey
		push := func(c js.INode, ctx uint8) {
			if c != nil {
				stack = append(stack, valItem{c, ctx})
			}
		}
		transp := uint8(0)
		if key != 0 {
			transp = valTransp
			if it.ctx&valTransp == 0 {
				if e, ok := n.(js.IExpr); ok {
					s.checkKeyExpr(e)
				}
			}
		}
		switch n := n.(type) {
		case *js.AST:
			push(&n.BlockStmt, key)
		case *js.BlockStmt:
			for _, c := range n.List {
				push(c, key)
			}
		case *js.Comment, *js.EmptyStmt, *js.DebuggerStmt, *js.NewTargetExpr, *js.DirectivePrologueStmt, *js.BranchStmt:
		case *js.ExprStmt:
			push(n.Value, key)
		case *js.IfStmt:
			push(n.Cond, key)
			push(n.Body, key)
			push(n.Else, key)
		case *js.DoWhileStmt:
			push(n.Cond, key)
			push(n.Body, key)
		case *js.WhileStmt:
			push(n.Cond, key)
			push(n.Body, key)
		case *js.ForStmt:
			push(n.Init, key)
			push(n.Cond, key)
			push(n.Post, key)
			push(n.Body, key)
		case *js.ForInStmt:
			push(n.Init, key)
			push(n.Value, key)
			push(n.Body, key)
		case *js.ForOfStmt:
			push(n.Init, key)
			push(n.Value, key)
			push(n.Body, key)
		case *js.SwitchStmt:
			push(n.Init, key)
			for i := range n.List {
				push(&n.List[i], key)
			}
		case *js.CaseClause:
			push(n.Cond, key)
			for _, c := range n.List {
				push(c, key)
			}
		case *js.ReturnStmt:
			push(n.Value, key)
		case *js.ThrowStmt:
			push(n.Value, key)
		case *js.WithStmt:
			s.expect["with"] = true
			push(n.Cond, key)
			push(n.Body, key)
		case *js.LabelledStmt:
			push(n.Value, key)
		case *js.TryStmt:
			push(n.Body, key)
			push(n.Binding, key)
			push(n.Catch, key)
			push(n.Finally, key)
		case *js.VarDecl:
			for i := range n.List {
				push(&n.List[i], key)
			}
		case *js.BindingElement:
			push(n.Binding, key)
			push(n.Default, key)
		case *js.BindingArray:
			for i := range n.List {
				push(&n.List[i], key)
			}
			push(n.Rest, key)
		case *js.BindingObject:
			for i := range n.List {
				push(&n.List[i], key)
			}
			push(n.Rest, key)
		case *js.BindingObjectItem:
			push(n.Key, key)
			push(&n.Value, key)
		case *js.Params:
			for i := range n.List {
				push(&n.List[i], key)
			}
			push(n.Rest, key)
		case *js.FuncDecl:
			push(n.Name, key)
			push(&n.Params, key)
			push(&n.Body, key)
		case *js.ArrowFunc:
			push(&n.Params, key)
			push(&n.Body, key)
		case *js.ClassDecl:
			push(n.Name, key)
			push(n.Extends, key)
			for _, el := range n.List {
				switch {
				case el.StaticBlock != nil:
					push(el.StaticBlock, key)
				case el.Method != nil:
					m := el.Method
					ctx := key
					if !m.Static && !m.Get && !m.Set && !m.Async && !m.Generator {
						ctx |= valCtorOK
					}
					push(m, ctx)
				default:
					f := el.Field
					push(&f, key)
				}
			}
		case *js.MethodDecl:
			if n.Name.Private == nil {
				push(&n.Name.PropertyName, key|it.ctx&valCtorOK)
			}
			push(&n.Params, key)
			push(&n.Body, key)
		case *js.Field:
			if n.Name.Private == nil {
				push(&n.Name.PropertyName, key)
			}
			push(n.Init, key)
		case *js.PropertyName:
			s.propName(n, it.ctx&valCtorOK != 0)
			if n.Computed != nil {
				push(n.Computed, valKey)
			}
		case *js.Property:
			push(n.Name, key)
			push(n.Value, key)
			push(n.Init, key)
		case *js.ObjectExpr:
			for i := range n.List {
				push(&n.List[i], key)
			}
		case *js.ArrayExpr:
			for i := range n.List {
				ctx := key
				if len(n.List) == 1 && !n.List[0].Spread {
					ctx |= transp
				}
				push(n.List[i].Value, ctx)
			}
		case *js.Element:
			push(n.Value, key)
		case *js.LiteralExpr:
			s.literal(n, key != 0)
		case *js.TemplateExpr:
			s.template(n, key != 0)
			push(n.Tag, key)
			for _, p := range n.List {
				ctx := key
				if n.Tag == nil {
					ctx |= transp
				}
				push(p.Expr, ctx)
			}
		case *js.GroupExpr:
			push(n.X, key|transp)
		case *js.IndexExpr:
			push(n.X, key)
			push(n.Y, valKey)
		case *js.DotExpr:
			push(n.X, key)
			if lit, ok := valPtr(n.Y).(*js.LiteralExpr); ok {
				s.propLiteral(lit, false, false)
			} else if _, ok := n.Y.(*js.Var); !ok {
				push(n.Y, key)
			}
		case *js.ImportMetaExpr:
			s.expect["import"] = true
		case *js.NewExpr:
			push(n.X, key)
			push(n.Args, key)
		case *js.CallExpr:
			push(n.X, key)
			push(&n.Args, key)
		case *js.Args:
			for _, a := range n.List {
				push(a.Value, key)
			}
		case *js.Arg:
			push(n.Value, key)
		case *js.UnaryExpr:
			push(n.X, key)
		case *js.BinaryExpr:
			ctx := key
			if n.Op == js.AddToken {
				ctx |= transp
			}
			push(n.X, ctx)
			push(n.Y, ctx)
		case *js.CondExpr:
			push(n.Cond, key)
			push(n.X, key)
			push(n.Y, key)
		case *js.YieldExpr:
			push(n.X, key)
		case *js.CommaExpr:
			for i, c := range n.List {
				ctx := key
				if i == len(n.List)-1 {
					ctx |= transp
				}
				push(c, ctx)
			}
		case *js.Var:
			if name, _, _ := valDecodeIdent(n.Data); valRuleFor(name) != "" {
				s.expect[name] = true
			}
		default:
			s.add(0, valRuleInternal, "", fmt.Sprintf("the validator does not know the syntax node %T; rejecting", n))
		}
	}
}

// literal records a literal's span and checks it when it sits in a computed key.
func (s *valState) literal(n *js.LiteralExpr, inKey bool) {
	off := s.offsetOf(n.Data)
	switch n.TokenType {
	case js.ImportToken:
		s.expect["import"] = true
	case js.RegExpToken:
		if off >= 0 {
			s.regexps[off] = len(n.Data)
		} else {
			s.add(0, valRuleInternal, "", "the validator cannot locate a regular expression literal; rejecting")
		}
	case js.StringToken:
		if inKey && len(n.Data) >= 2 {
			if v, bad := valDecodeString(n.Data[1:len(n.Data)-1], false); bad == "" && valBannedProp(v) {
				s.add(max(off, 0), valRuleProperty, v, fmt.Sprintf("computed key contains the string %q", v))
			}
		}
	}
	if off >= 0 {
		s.spans = append(s.spans, [2]int{off, len(n.Data)})
	}
}

// valChunk returns the text of a template token between its delimiters (` or } and ` or ${).
func valChunk(b []byte) []byte {
	if len(b) < 2 {
		return nil
	}
	b = b[1:]
	if len(b) >= 2 && b[len(b)-2] == '$' && b[len(b)-1] == '{' {
		return b[:len(b)-2]
	}
	return b[:len(b)-1]
}

// template records a template's chunks and, in a computed key, checks each chunk cooked and raw.
func (s *valState) template(n *js.TemplateExpr, inKey bool) {
	chunks := make([][]byte, 0, len(n.List)+1)
	for _, p := range n.List {
		chunks = append(chunks, p.Value)
	}
	chunks = append(chunks, n.Tail)
	for _, c := range chunks {
		off := s.offsetOf(c)
		if off >= 0 {
			s.spans = append(s.spans, [2]int{off, len(c)})
			if n.Tag != nil {
				s.tagged[off] = true
			}
		}
		if !inKey {
			continue
		}
		raw := valChunk(c)
		cooked, _ := valDecodeString(raw, true)
		for _, v := range []string{cooked, string(raw)} {
			if valBannedProp(v) {
				s.add(max(off, 0), valRuleProperty, v, fmt.Sprintf("computed key contains the template text %q", v))
				break
			}
		}
	}
}

// propName checks a non-computed property name (object literal, class member, destructuring key).
func (s *valState) propName(n *js.PropertyName, ctorOK bool) {
	if n.Computed != nil {
		return
	}
	lit := n.Literal
	switch lit.TokenType {
	case js.StringToken:
		off := s.offsetOf(lit.Data)
		if off >= 0 {
			s.spans = append(s.spans, [2]int{off, len(lit.Data)})
		}
		if len(lit.Data) < 2 {
			return
		}
		if v, bad := valDecodeString(lit.Data[1:len(lit.Data)-1], false); bad == "" && valBannedProp(v) {
			s.add(max(off, 0), valRuleProperty, v, fmt.Sprintf("property key %q is banned", v))
		}
	case js.IdentifierToken:
		s.propLiteral(&lit, true, ctorOK)
	}
}

// propLiteral handles an identifier-like property name: after a dot, or a key. A quoted key that
// the parser unquoted ("constructor": 1) points inside its string token.
func (s *valState) propLiteral(lit *js.LiteralExpr, isKey, ctorOK bool) {
	off := s.offsetOf(lit.Data)
	quoted := false
	if off > 0 && off+len(lit.Data) < len(s.src) {
		q := s.src[off-1]
		quoted = (q == '"' || q == '\'') && s.src[off+len(lit.Data)] == q
	}
	var name string
	if quoted {
		name = string(lit.Data) // the parser unquotes only plain identifier characters
		s.spans = append(s.spans, [2]int{off - 1, len(lit.Data) + 2})
	} else {
		name, _, _ = valDecodeIdent(lit.Data)
		if off >= 0 {
			s.props = append(s.props, off)
			s.spans = append(s.spans, [2]int{off, len(lit.Data)})
		}
	}
	if !valBannedProp(name) {
		return
	}
	if ctorOK && !quoted && string(lit.Data) == "constructor" {
		return // the class constructor method; it defines the class and reads nothing
	}
	if off < 0 {
		// A shorthand key is a copy; the token pass reports it as the reference it also is.
		s.expect[name] = true
		return
	}
	where := "property"
	if isKey {
		where = "property key"
	}
	if quoted {
		off--
	}
	s.add(off, valRuleProperty, name, fmt.Sprintf("%s %q is banned", where, name))
}

// checkKeyExpr constant-folds a maximal sub-expression of a computed key.
func (s *valState) checkKeyExpr(e js.IExpr) {
	v, ok, deep := s.fold(e, 0)
	if deep {
		s.add(s.firstOff(e), valRuleTooDeep, "", "computed key is too deeply nested to analyse")
		return
	}
	if ok && valBannedProp(v) {
		s.add(s.firstOff(e), valRuleProperty, v, fmt.Sprintf("computed key evaluates to %q", v))
	}
}

// fold returns the constant string value of e when it has one.
func (s *valState) fold(e js.IExpr, depth int) (v string, ok, deep bool) {
	if depth > valFoldDepth {
		return "", false, true
	}
	switch n := valPtr(e).(type) {
	case *js.LiteralExpr:
		if n.TokenType == js.StringToken && len(n.Data) >= 2 {
			v, bad := valDecodeString(n.Data[1:len(n.Data)-1], false)
			return v, bad == "", false
		}
	case *js.TemplateExpr:
		if n.Tag != nil {
			return "", false, false
		}
		var b strings.Builder
		for _, p := range n.List {
			c, bad := valDecodeString(valChunk(p.Value), true)
			if bad != "" {
				return "", false, false
			}
			b.WriteString(c)
			x, ok, deep := s.fold(p.Expr, depth+1)
			if !ok || deep {
				return "", false, deep
			}
			b.WriteString(x)
		}
		c, bad := valDecodeString(valChunk(n.Tail), true)
		b.WriteString(c)
		return b.String(), bad == "", false
	case *js.GroupExpr:
		return s.fold(n.X, depth+1)
	case *js.CommaExpr:
		if len(n.List) > 0 {
			return s.fold(n.List[len(n.List)-1], depth+1)
		}
	case *js.ArrayExpr:
		if len(n.List) == 1 && !n.List[0].Spread && n.List[0].Value != nil {
			return s.fold(n.List[0].Value, depth+1)
		}
	case *js.BinaryExpr:
		if n.Op != js.AddToken {
			return "", false, false
		}
		// Walk the left spine iteratively: a+b+c+… nests to the left without bound.
		var rights []js.IExpr
		var cur js.IExpr = n
		for {
			b, isAdd := valPtr(cur).(*js.BinaryExpr)
			if !isAdd || b.Op != js.AddToken {
				break
			}
			rights = append(rights, b.Y)
			cur = b.X
		}
		out, ok, deep := s.fold(cur, depth+1)
		for i := len(rights) - 1; ok && !deep && i >= 0; i-- {
			var x string
			x, ok, deep = s.fold(rights[i], depth+1)
			out += x
			if len(out) > 64 {
				return "", false, deep // longer than any banned name
			}
		}
		return out, ok && !deep, deep
	}
	return "", false, false
}

// firstOff returns the offset of the first literal of e, or 0.
func (s *valState) firstOff(e js.IExpr) int {
	for i := 0; i < 10000 && e != nil; i++ {
		switch n := valPtr(e).(type) {
		case *js.LiteralExpr:
			return max(s.offsetOf(n.Data), 0)
		case *js.TemplateExpr:
			if n.Tag != nil {
				e = n.Tag
			} else if len(n.List) > 0 {
				return max(s.offsetOf(n.List[0].Value), 0)
			} else {
				return max(s.offsetOf(n.Tail), 0)
			}
		case *js.GroupExpr:
			e = n.X
		case *js.BinaryExpr:
			e = n.X
		case *js.CommaExpr:
			if len(n.List) == 0 {
				return 0
			}
			e = n.List[0]
		case *js.ArrayExpr:
			if len(n.List) == 0 {
				return 0
			}
			e = n.List[0].Value
		case *js.CallExpr:
			e = n.X
		case *js.DotExpr:
			e = n.X
		case *js.IndexExpr:
			e = n.X
		case *js.CondExpr:
			e = n.Cond
		default:
			return 0
		}
	}
	return 0
}

// tokens re-lexes the source with the parser's lexer, told where the regular expressions are, and
// checks every identifier that is not a property name, plus strings, templates and comments.
func (s *valState) tokens() {
	l := js.NewLexer(parse.NewInputBytes(s.buf))
	var starts, lens []int
	props := append([]int(nil), s.props...)
	sort.Ints(props)
	usedRegexps := 0
	for {
		tt, data := l.Next()
		if tt == js.ErrorToken {
			if err := l.Err(); err != nil && err != io.EOF {
				s.add(0, valRuleInternal, "", "the validator's lexer failed where the parser did not; rejecting")
			}
			break
		}
		off := s.offsetOf(data)
		if off < 0 {
			continue
		}
		if tt == js.DivToken || tt == js.DivEqToken {
			if want, ok := s.regexps[off]; ok {
				tt, data = l.RegExp()
				if tt != js.RegExpToken || len(data) != want {
					s.add(off, valRuleInternal, "", "the validator's lexer and the parser disagree about a regular expression; rejecting")
					break
				}
				usedRegexps++
			}
		}
		starts, lens = append(starts, off), append(lens, len(data))
		switch {
		case tt == js.CommentToken || tt == js.CommentLineTerminatorToken:
			if len(data) >= 3 && (string(data[:3]) == "-->" || len(data) >= 4 && string(data[:4]) == "<!--") {
				s.add(off, valRuleBanned, "", "HTML-like comments (<!-- and -->) are not allowed: engines disagree about them")
			}
		case tt == js.StringToken:
			if len(data) >= 2 {
				if _, bad := valDecodeString(data[1:len(data)-1], false); bad != "" {
					s.add(off, valBadRule(bad), "", "string literal: "+bad)
				}
			}
		case tt == js.TemplateToken || tt == js.TemplateStartToken || tt == js.TemplateMiddleToken || tt == js.TemplateEndToken:
			if _, bad := valDecodeString(valChunk(data), true); bad != "" && (!s.tagged[off] || valBadRule(bad) == valRuleEncoding) {
				s.add(off, valBadRule(bad), "", "template literal: "+bad)
			}
		case js.IsIdentifierName(tt):
			s.identifier(tt, data, off, props)
		}
	}
	if usedRegexps != len(s.regexps) {
		s.add(0, valRuleInternal, "", "the validator's lexer missed a regular expression the parser saw; rejecting")
	}
	for _, sp := range s.spans {
		i := sort.SearchInts(starts, sp[0])
		if i == len(starts) || starts[i] != sp[0] || lens[i] != sp[1] {
			s.add(sp[0], valRuleInternal, "", "the validator's token stream disagrees with the parser here; rejecting")
			return
		}
	}
}

// identifier checks one identifier or keyword token.
func (s *valState) identifier(tt js.TokenType, data []byte, off int, props []int) {
	name, escaped, bad := valDecodeIdent(data)
	if bad != "" {
		s.add(off, valBadRule(bad), "", "identifier: "+bad)
		return
	}
	if i := sort.SearchInts(props, off); i < len(props) && props[i] == off {
		return // a property name; the tree walk checked it
	}
	if _, kw := js.Keywords[name]; kw && escaped {
		s.add(off, valRuleSyntax, "", fmt.Sprintf("keyword %q written with escapes", name))
		return
	}
	switch rule := valRuleFor(name); {
	case tt == js.WithToken:
		s.add(off, valRuleBanned, "with", "with statements are not allowed: they turn names into property reads")
	case rule == valRuleName:
		s.add(off, rule, name, fmt.Sprintf("%q may not be referenced or bound", name))
	case rule == valRuleProperty:
		s.add(off, rule, name, fmt.Sprintf("%q may not be used as a name", name))
	}
}

// checkExpected fails closed when the tree holds a banned name the token pass did not report.
func (s *valState) checkExpected() {
	seen := map[string]bool{}
	for _, h := range s.hits {
		seen[h.F.Name] = true
	}
	names := make([]string, 0, len(s.expect))
	for name := range s.expect {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !seen[name] {
			s.add(0, valRuleFor(name), name, fmt.Sprintf("%q appears in the script but the validator could not locate it", name))
		}
	}
}

// valBadRule maps a decoding problem to its rule.
func valBadRule(bad string) string {
	if strings.Contains(bad, "surrogate") {
		return valRuleEncoding
	}
	return valRuleSyntax
}

func valHex(b []byte) (rune, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
		if r > unicode.MaxRune {
			return 0, false
		}
	}
	return r, true
}

// valUnicodeEscape decodes \uXXXX or \u{X…} at b (which starts after "\u"), returning the code
// point and the number of bytes consumed after "\u".
func valUnicodeEscape(b []byte) (rune, int, bool) {
	if len(b) > 0 && b[0] == '{' {
		end := strings.IndexByte(string(b), '}')
		if end < 0 {
			return 0, 0, false
		}
		r, ok := valHex(b[1:end])
		return r, end + 1, ok
	}
	if len(b) < 4 {
		return 0, 0, false
	}
	r, ok := valHex(b[:4])
	return r, 4, ok
}

func valIsSurrogate(r rune) bool { return 0xD800 <= r && r <= 0xDFFF }

// valDecodeIdent decodes the escapes in an identifier. bad is "" or what is wrong.
func valDecodeIdent(b []byte) (name string, escaped bool, bad string) {
	if !strings.Contains(string(b), `\`) {
		return string(b), false, ""
	}
	var out strings.Builder
	for i := 0; i < len(b); {
		if b[i] != '\\' {
			out.WriteByte(b[i])
			i++
			continue
		}
		if i+1 >= len(b) || b[i+1] != 'u' {
			return out.String(), true, "malformed escape"
		}
		r, n, ok := valUnicodeEscape(b[i+2:])
		if !ok {
			return out.String(), true, "malformed \\u escape"
		}
		if valIsSurrogate(r) {
			return out.String(), true, fmt.Sprintf("escape of the lone surrogate U+%04X", r)
		}
		out.WriteRune(r)
		i += 2 + n
	}
	return out.String(), true, ""
}

// valDecodeString decodes the text between the delimiters of a string literal or a template chunk
// (template=true: no legacy octal escapes). bad is "" or what is wrong; lone surrogates are bad.
func valDecodeString(b []byte, template bool) (string, string) {
	if !strings.Contains(string(b), `\`) {
		return string(b), ""
	}
	var out strings.Builder
	pendingHigh := rune(-1)
	for i := 0; i < len(b); {
		c := b[i]
		var r rune
		if c != '\\' {
			if pendingHigh >= 0 {
				return out.String(), fmt.Sprintf("escape of the lone surrogate U+%04X", pendingHigh)
			}
			out.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(b) {
			return out.String(), "backslash at end of literal"
		}
		c = b[i]
		switch c {
		case '\n', '\r':
			i++
			if c == '\r' && i < len(b) && b[i] == '\n' {
				i++
			}
			continue
		case 'b':
			r, i = '\b', i+1
		case 'f':
			r, i = '\f', i+1
		case 'n':
			r, i = '\n', i+1
		case 'r':
			r, i = '\r', i+1
		case 't':
			r, i = '\t', i+1
		case 'v':
			r, i = '\v', i+1
		case 'x':
			if i+3 > len(b) {
				return out.String(), "malformed \\x escape"
			}
			var ok bool
			if r, ok = valHex(b[i+1 : i+3]); !ok {
				return out.String(), "malformed \\x escape"
			}
			i += 3
		case 'u':
			cp, n, ok := valUnicodeEscape(b[i+1:])
			if !ok {
				return out.String(), "malformed \\u escape"
			}
			r, i = cp, i+1+n
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			next := i+1 < len(b) && '0' <= b[i+1] && b[i+1] <= '9'
			if c == '0' && !next {
				r, i = 0, i+1
				break
			}
			if template {
				return out.String(), "octal escape in a template literal"
			}
			if c >= '8' {
				r, i = rune(c), i+1
				break
			}
			// Legacy octal: up to three digits, at most \377.
			r, i = rune(c-'0'), i+1
			limit := 2
			if c >= '4' {
				limit = 1
			}
			for k := 0; k < limit && i < len(b) && '0' <= b[i] && b[i] <= '7'; k++ {
				r, i = r*8+rune(b[i]-'0'), i+1
			}
		default:
			cp, n := utf8.DecodeRune(b[i:])
			if cp == 0x2028 || cp == 0x2029 {
				i += n
				continue // line continuation
			}
			r, i = cp, i+n
		}
		switch {
		case pendingHigh >= 0 && 0xDC00 <= r && r <= 0xDFFF:
			out.WriteRune(0x10000 + (pendingHigh-0xD800)<<10 + (r - 0xDC00))
			pendingHigh = -1
		case pendingHigh >= 0:
			return out.String(), fmt.Sprintf("escape of the lone surrogate U+%04X", pendingHigh)
		case 0xD800 <= r && r <= 0xDBFF:
			pendingHigh = r
		case valIsSurrogate(r):
			return out.String(), fmt.Sprintf("escape of the lone surrogate U+%04X", r)
		default:
			out.WriteRune(r)
		}
	}
	if pendingHigh >= 0 {
		return out.String(), fmt.Sprintf("escape of the lone surrogate U+%04X", pendingHigh)
	}
	return out.String(), ""
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

// valPrescan counts nesting of ( [ { and ${ without recursion, skipping comments, strings,
// templates and (guessed) regular expressions. It returns the offset of the first opening bracket
// beyond MaxNesting and false, or true.
func valPrescan(src string) (int, bool) {
	var stack []valOpen
	regexOK := true // an expression may start here, so "/" begins a regular expression
	lineStart := true
	prev := "" // previous significant token: a keyword or identifier, or punctuation
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n' || c == '\r':
			i, lineStart = i+1, true
			continue
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			i++
			continue
		case c >= 0x80:
			r, sz := utf8.DecodeRuneInString(src[i:])
			if r == 0x2028 || r == 0x2029 {
				i, lineStart = i+sz, true
				continue
			}
			if r == 0xA0 || r == 0xFEFF || unicode.Is(unicode.Zs, r) {
				i += sz
				continue
			}
		case c == '/' && i+1 < n && src[i+1] == '/',
			c == '<' && strings.HasPrefix(src[i:], "<!--"),
			c == '-' && lineStart && strings.HasPrefix(src[i:], "-->"):
			i = valSkipLine(src, i)
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return 0, true // unterminated; the parser reports it
			}
			if strings.ContainsAny(src[i:i+2+end], "\r\n\u2028\u2029") {
				lineStart = true
			}
			i += 2 + end + 2
			continue
		}
		lineStart = false
		wasRegexOK, word := regexOK, ""
		regexOK = true
		switch {
		case c == '"' || c == '\'':
			i, regexOK = valSkipString(src, i), false
		case c == '`':
			i = valSkipTemplate(src, i+1, &stack)
			regexOK = false
		case c == '(' || c == '[' || c == '{':
			o := valOpen{kind: c}
			switch c {
			case '(':
				o.regexAfter = prev == "if" || prev == "while" || prev == "for" || prev == "with"
			case '{':
				switch prev {
				case "", ";", "{", "}", ")", "else", "do", "try", "finally", "=>":
					o.regexAfter = true
				}
			}
			stack = append(stack, o)
			if len(stack) > MaxNesting {
				return i, false
			}
			i++
		case c == ')' || c == ']' || c == '}':
			var top valOpen
			if len(stack) > 0 {
				top = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
			if c == '}' && top.kind == 't' {
				i = valSkipTemplate(src, i+1, &stack)
				regexOK = false
				break
			}
			i, regexOK = i+1, top.regexAfter
		case c == '/':
			if wasRegexOK {
				if j, ok := valSkipRegex(src, i); ok {
					i, regexOK = j, false
					break
				}
			}
			i++
		case c == '+' || c == '-':
			if i+1 < n && src[i+1] == c {
				i, regexOK = i+2, false // postfix ++/-- is the common case
			} else {
				i++
			}
		case '0' <= c && c <= '9' || c == '.' && i+1 < n && '0' <= src[i+1] && src[i+1] <= '9':
			for i < n && (valIdentByte(src[i]) || src[i] == '.') {
				i++
			}
			regexOK = false
		case valIdentByte(c) || c == '\\' || c >= 0x80:
			j := i
			for j < n {
				if valIdentByte(src[j]) || src[j] == '\\' {
					j++
					continue
				}
				if src[j] >= 0x80 {
					r, sz := utf8.DecodeRuneInString(src[j:])
					if r != 0x2028 && r != 0x2029 && r != 0xA0 && r != 0xFEFF && !unicode.Is(unicode.Zs, r) {
						j += sz
						continue
					}
				}
				break
			}
			if j == i {
				j = i + 1
			}
			word = src[i:j]
			i = j
			regexOK = false
			if prev != "." && prev != "?." {
				switch word {
				case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
					"case", "do", "else", "yield", "await", "extends":
					regexOK = true
				}
			}
		default:
			switch {
			case strings.HasPrefix(src[i:], "=>"):
				word, i = "=>", i+2
			case strings.HasPrefix(src[i:], "?."):
				word, i = "?.", i+2
			default:
				word, i = string(c), i+1
			}
		}
		if word == "" {
			word = string(c)
		}
		prev = word
	}
	return 0, true
}

func valIdentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '$' || c == '_'
}

// valSkipLine returns the offset of the line terminator ending the line at i (or the end).
func valSkipLine(src string, i int) int {
	for i < len(src) {
		c := src[i]
		if c == '\n' || c == '\r' || c == 0xE2 && strings.HasPrefix(src[i:], "\u2028") || c == 0xE2 && strings.HasPrefix(src[i:], "\u2029") {
			return i
		}
		i++
	}
	return i
}

// valSkipString skips the string literal starting at src[i] the way the parser's lexer does.
func valSkipString(src string, i int) int {
	delim := src[i]
	for i++; i < len(src); {
		c := src[i]
		switch {
		case c == delim:
			return i + 1
		case c == '\\':
			i++
			switch {
			case strings.HasPrefix(src[i:], "\r\n"):
				i += 2
			case i < len(src) && (src[i] == '\n' || src[i] == '\r' || src[i] == delim || src[i] == '\\'):
				i++
			case strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029"):
				i += 3
			}
		case c == '\n' || c == '\r':
			return i // unterminated; the parser reports it
		default:
			i++
		}
	}
	return i
}

// valSkipTemplate skips template text from i to just after the closing backquote, or to just after
// "${", pushing a template frame.
func valSkipTemplate(src string, i int, stack *[]valOpen) int {
	for i < len(src) {
		switch src[i] {
		case '`':
			return i + 1
		case '\\':
			i += 2
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				*stack = append(*stack, valOpen{kind: 't'})
				return i + 2
			}
			i++
		default:
			i++
		}
	}
	return len(src)
}

// valSkipRegex skips a regular expression literal starting at src[i] the way the parser's lexer
// does; false when none closes on this line.
func valSkipRegex(src string, i int) (int, bool) {
	inClass := false
	for i++; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '/' && !inClass:
			i++
			for i < len(src) && (valIdentByte(src[i]) || src[i] >= 0x80 && !strings.HasPrefix(src[i:], "\u2028") && !strings.HasPrefix(src[i:], "\u2029")) {
				i++
			}
			return i, true
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '\\':
			i++
			if i >= len(src) || src[i] == '\n' || src[i] == '\r' || strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029") {
				return 0, false
			}
		case c == '\n' || c == '\r' || strings.HasPrefix(src[i:], "\u2028") || strings.HasPrefix(src[i:], "\u2029"):
			return 0, false
		}
	}
	return 0, false
}
