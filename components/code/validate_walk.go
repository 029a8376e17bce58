// The validator's walk of the syntax tree and of the parser's tokens (see validate.go).

package code

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// walk visits the tree with an explicit stack: the tree can be far deeper than the bracket nesting
// (long operator and member chains), so recursion is not an option.
func (s *valState) walk(root js.INode) {
	s.regexps, s.tagged = map[int]int{}, map[int]bool{}
	stack := []valItem{{root, 0, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := valPtr(it.n)
		if n == nil {
			continue
		}
		key := it.ctx & valKey
		pend := it.pend
		push := func(c js.INode, ctx uint8) {
			if c != nil {
				stack = append(stack, valItem{c, ctx, pend})
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
			s.declare(len(n.Scope.Declared))
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
			if len(n.List) > MaxParams {
				off := 0
				if v, ok := n.List[0].Binding.(*js.Var); ok {
					off = max(s.offsetOf(v.Data), 0)
				}
				s.add(off, valRuleTooLarge, "", fmt.Sprintf("a function with %d parameters: at most %d (a call's frame holds them outside the VM's heap limit)", len(n.List), MaxParams))
			}
			for i := range n.List {
				push(&n.List[i], key)
			}
			push(n.Rest, key)
		case *js.FuncDecl:
			pend = 0 // a frame of its own
			push(n.Name, key)
			push(&n.Params, key)
			push(&n.Body, key)
		case *js.ArrowFunc:
			pend = 0
			push(&n.Params, key)
			push(&n.Body, key)
		case *js.ClassDecl:
			hidden := classVars
			for _, el := range n.List {
				if el.StaticBlock == nil && el.Method == nil && el.Field.Name.Computed != nil {
					hidden++ // the computed key, kept for the initializer
				}
			}
			s.declare(hidden)
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
			pend = 0
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
			s.hold(&pend, min(len(n.List), 32)+2, n)
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
			if n.Tag != nil {
				s.hold(&pend, len(n.List)+3, n)
			} else {
				s.hold(&pend, 2*len(n.List)+2, n)
			}
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
			if n.Args != nil {
				s.hold(&pend, len(n.Args.List)+2, n)
			}
			push(n.X, key)
			push(n.Args, key)
		case *js.CallExpr:
			s.hold(&pend, len(n.Args.List)+2, n)
			push(n.X, key)
			push(&n.Args, key)
		case *js.Args:
			if len(n.List) > MaxArgs {
				s.add(s.firstOff(n.List[0].Value), valRuleTooLarge, "", fmt.Sprintf("a call with %d arguments: at most %d (spread an array instead: f(...xs))", len(n.List), MaxArgs))
			}
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

// classVars bounds the variables QuickJS adds to a function's frame for a class it makes, besides
// one per computed field name: the class's own name, its brand and its fields' initializers.
const classVars = 4

// declare counts n more variables in some frame of the script and reports (once) a total past
// MaxDeclared.
func (s *valState) declare(n int) {
	if before := s.declared; before <= MaxDeclared {
		if s.declared += n; s.declared > MaxDeclared {
			s.add(0, valRuleTooLarge, "", fmt.Sprintf("the script declares more than %d variables (a call's frame holds its function's variables outside the VM's heap limit)", MaxDeclared))
		}
	}
}

// hold adds the n values e holds while its parts are made to pend, what the expressions around
// it hold, and reports (once) a sum past MaxPending: a frame holds them outside the VM's heap
// limit, and deep recursion multiplies the frame.
func (s *valState) hold(pend *int, n int, e js.IExpr) {
	if *pend += n; *pend > MaxPending && !s.heldMany {
		s.heldMany = true
		s.add(s.calleeOff(e), valRuleTooLarge, "", fmt.Sprintf("calls, templates or arrays nested here hold %d values at once: at most %d (a call's frame holds them outside the VM's heap limit)", *pend, MaxPending))
	}
}

// calleeOff returns the offset of the name a call (or new, or tagged template) calls, else of
// e's first literal.
func (s *valState) calleeOff(e js.IExpr) int {
	for i := 0; i < 10000 && e != nil; i++ {
		switch n := valPtr(e).(type) {
		case *js.Var:
			return max(s.offsetOf(n.Data), 0)
		case *js.CallExpr:
			e = n.X
		case *js.NewExpr:
			e = n.X
		case *js.DotExpr:
			e = n.X
		case *js.IndexExpr:
			e = n.X
		case *js.TemplateExpr:
			if n.Tag == nil {
				return s.firstOff(n)
			}
			e = n.Tag
		default:
			return s.firstOff(e)
		}
	}
	return 0
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
	prevWord, prevEnd := false, -1 // whether the last token was a name or a number, and where it ended
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
		// A name never directly follows a name or a number: the engine would read one token.
		// The lexer starts a new name at a few characters QuickJS continues one with (U+2118,
		// U+212E, U+309B, U+309C), so "let℘x" was the declaration "let ℘x" here, and
		// the engine's division on the next line a regular expression to this pass.
		// (A number may touch the keyword before it: return.5.)
		word := js.IsIdentifierName(tt) || js.IsNumeric(tt)
		if js.IsIdentifierName(tt) && prevWord && off == prevEnd {
			s.add(off, valRuleSyntax, "", fmt.Sprintf("%q continues the name or number before it for the engine, but starts a new one for this validator; separate them or drop the character", []rune(string(data))[0]))
		}
		prevWord, prevEnd = word, off+len(data)
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
