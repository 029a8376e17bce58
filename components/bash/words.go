package bash

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// conv converts a parsed word: its literal value when it has one,
// otherwise a rendering with expansions as their source text.
func (s scope) conv(x *syntax.Word) Word {
	out := Word{Literal: true, single: true}
	var b strings.Builder
	var quoted strings.Builder // the literal text of every piece, expansions left out (subText)
	var pat strings.Builder    // b with $'…' decoded and quoted or escaped glob and brace characters made inert (Word.pattern)
	var shape strings.Builder  // b byte for byte, only the unquoted, unescaped characters left as they are (expandsAt)
	leadDone := false
	dyn := func() {
		if !leadDone {
			out.lead, leadDone = b.String(), true
		}
		out.Literal = false
	}
	// source writes an expansion's source text, none of which is a
	// brace or a bracket of the word's.
	source := func(t string) {
		b.WriteString(t)
		pat.WriteString(t)
		shape.WriteString(strings.Repeat("%", len(t)))
	}
	for i, p := range x.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, plain, exp := unquoted(p.Value, i == 0)
			out.late = out.late || lateCode(v)
			quoted.WriteString(v)
			if exp >= 0 {
				b.WriteString(v[:exp])
				dyn()
				out.single = false
				b.WriteString(v[exp:])
			} else {
				b.WriteString(v)
			}
			pat.WriteString(plain)
			shape.WriteString(plain)
		case *syntax.SglQuoted:
			out.late = out.late || lateCode(p.Value) || p.Dollar && strings.ContainsRune(p.Value, '\\') // $'\x24(' is $(
			quoted.WriteString(ansiC(p))
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				dyn()
				t := s.text(p.Pos(), p.End())
				b.WriteString(t)
				shape.WriteString(strings.Repeat("%", len(t)))
				pat.WriteString(inert(ansiC(p)))
				continue
			}
			b.WriteString(p.Value)
			pat.WriteString(inert(p.Value))
			shape.WriteString(inert(p.Value))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					v := dquoted(l.Value)
					out.late = out.late || lateCode(v)
					quoted.WriteString(v)
					b.WriteString(v)
					pat.WriteString(inert(v))
					shape.WriteString(inert(v))
					continue
				}
				out.sub = out.sub || s.subInParam(q)
				dyn()
				if pe, ok := q.(*syntax.ParamExp); ok && manyFields(pe) {
					out.single = false
				}
				out.prompt = out.prompt || promptExp(q)
				out.assigns = append(out.assigns, assignedIn(q)...)
				source(s.text(q.Pos(), q.End()))
			}
		default:
			dyn()
			// $?, $# and $$ are one field however they are quoted ($!
			// may be none).
			if pe, ok := p.(*syntax.ParamExp); !ok || !numberParam(pe) || pe.Param.Value == "!" {
				out.single = false
			}
			out.sub = out.sub || s.subInParam(p)
			out.prompt = out.prompt || promptExp(p)
			out.assigns = append(out.assigns, assignedIn(p)...)
			source(s.text(p.Pos(), p.End()))
		}
	}
	out.Text = b.String()
	// A brace or a bracket expands across the word's quoted pieces
	// ({"rm",-rf,src} runs rm, .gi["t"] is a glob: a tenth hunt), so
	// it is looked for in the whole word.
	if at := expandsAt(shape.String()); at >= 0 {
		if out.Literal || at < len(out.lead) {
			out.lead = out.Text[:at]
		}
		out.Literal, out.single = false, false
	}
	if out.Literal {
		out.lead = out.Text
	} else {
		out.pattern = pat.String()
	}
	out.sub = out.sub || subText(quoted.String())
	out.number = len(x.Parts) > 0
	for _, p := range x.Parts {
		out.number = out.number && numberPart(p)
	}
	return out
}

// numberPart reports a piece of a word whose value is digits: literal
// digits (quoted or not), or one of numberParam, quoted or not.
func numberPart(p syntax.WordPart) bool {
	digits := func(v string) bool { return v != "" && strings.Trim(v, "0123456789") == "" }
	switch p := p.(type) {
	case *syntax.Lit:
		return digits(p.Value)
	case *syntax.SglQuoted:
		return !p.Dollar && digits(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if !numberPart(q) {
				return false
			}
		}
		return len(p.Parts) > 0 && !p.Dollar
	case *syntax.ParamExp:
		return numberParam(p)
	}
	return false
}

// numberParam reports $?, $#, $$ or $! (or ${?} …) with no operator:
// the shell sets them, always to a number ($! to none before a job).
func numberParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil {
		return false
	}
	switch p.Param.Value {
	case "?", "#", "$", "!":
		return true
	}
	return false
}

// subText reports text with a command substitution in an array
// subscript (a[$(cmd)], a[`cmd`]) or in a compound value (($(cmd)),
// a=($(cmd))): bash runs it when it evaluates the text as arithmetic or
// assigns it to an array. The text is a word's quoted pieces joined,
// expansions left out, as an expansion may be empty ('a[$'"$e"'(cmd)]').
func subText(v string) bool {
	code := func(t string) bool { return strings.Contains(t, "$(") || strings.Contains(t, "`") }
	if i := strings.IndexByte(v, '['); i >= 0 && code(v[i:]) {
		return true
	}
	t := strings.TrimLeft(v, " \t\n")
	return (strings.HasPrefix(t, "(") || strings.Contains(v, "=(")) && code(v)
}

// subInParam looks inside a parameter expansion's words (${x:='…'},
// ${x:-'…'}) for subText.
func (s scope) subInParam(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Exp == nil || pe.Exp.Word == nil {
		return false
	}
	return s.conv(pe.Exp.Word).sub
}

// ansiC is a single-quoted piece's text, $'…' escapes decoded as bash
// decodes them (\n, \e, \NNN octal, \xHH, \uHHHH, \UHHHHHHHH, \cX):
// $'\x24(' is $(. Not expand.Literal: the expand package brings os/user,
// whose C lookups a static launcher must not link.
func ansiC(p *syntax.SglQuoted) string {
	if !p.Dollar {
		return p.Value
	}
	v := p.Value
	var b strings.Builder
	digits := func(i, max int, base int) (int, int) { // value, digits read
		n, k := 0, 0
		for ; k < max && i+k < len(v); k++ {
			d := strings.IndexByte("0123456789abcdef"[:base], v[i+k]|0x20)
			if base == 8 {
				d = strings.IndexByte("01234567", v[i+k])
			}
			if d < 0 {
				break
			}
			n = n*base + d
		}
		return n, k
	}
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch c := v[i]; c {
		case 'a', 'b', 'e', 'E', 'f', 'n', 'r', 't', 'v':
			b.WriteByte(map[byte]byte{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}[c])
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, k := digits(i+1, max, 16)
			if k == 0 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i += k
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			}
		default:
			if n, k := digits(i, 3, 8); k > 0 {
				b.WriteByte(byte(n))
				i += k - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lateCode reports a $ or ` that quotes or escapes kept from expanding:
// bash expands it after all when a builtin evaluates the word (a
// subscript, a compound value, arithmetic). Any one counts, not only $(:
// the word's pieces are joined before bash reads it again ('$'"(cmd)"; a
// re-test), and a $'…' with escapes may make one (see conv).
func lateCode(v string) bool {
	return strings.ContainsAny(v, "$`")
}

// assignedIn names the variables that ${NAME:=…} and ${NAME=…} in p set,
// nested ones too (not those in a command substitution, whose commands
// are walked on their own and set nothing here).
func assignedIn(p syntax.WordPart) []string {
	var names []string
	syntax.Walk(p, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) && n.Param != nil {
				names = append(names, n.Param.Value)
			}
		}
		return true
	})
	return names
}

// promptExp reports a ${…@P} expansion: its value is expanded as a
// prompt string, which runs command substitutions.
func promptExp(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && strings.Contains(pe.Exp.Word.Lit(), "P")
}

// manyFields reports whether a double-quoted parameter expansion may
// still expand to several fields or none ("$@", "${a[@]}", "${!p@}").
func manyFields(pe *syntax.ParamExp) bool {
	if pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") {
		return true
	}
	return pe.Index != nil || pe.Names != 0 || pe.Excl
}

// unquoted resolves the escapes of an unquoted literal. plain is the
// result with each escaped character made inert. exp is the offset in
// the result of the first character that expands here (a glob's * or ?,
// a leading tilde), or -1; braces and brackets are the whole word's
// (expandsAt).
func unquoted(raw string, first bool) (v, plain string, exp int) {
	exp = -1
	var b, p strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' {
			if i+1 < len(raw) {
				if raw[i+1] != '\n' {
					b.WriteByte(raw[i+1])
					p.WriteString(inert(raw[i+1 : i+2]))
				}
				i++
			}
			continue
		}
		if exp < 0 && (c == '*' || c == '?' || c == '~' && first && i == 0) {
			exp = b.Len()
		}
		b.WriteByte(c)
		p.WriteByte(c)
	}
	return b.String(), p.String(), exp
}

// expandsAt is the offset of the first brace expansion or bracket
// expression in shape, a word's text with its quoted and escaped
// characters made inert and its expansions masked, or -1: a [ with a ]
// after it, or a { that braces finds one at.
func expandsAt(shape string) int {
	for i := 0; i < len(shape); i++ {
		if shape[i] == '[' && strings.IndexByte(shape[i+1:], ']') >= 0 || shape[i] == '{' && braces(shape[i:]) {
			return i
		}
	}
	return -1
}

// inert is s with each character that bash may read as a glob, an
// extended glob or a brace expansion replaced by one it does not: what
// quotes or a backslash make plain text. It is byte for byte, so that
// it lines up with s.
func inert(s string) string {
	b := []byte(s)
	for i, c := range b {
		if strings.IndexByte("{},[]*?(!^", c) >= 0 {
			b[i] = '%'
		}
	}
	return string(b)
}

// braces reports whether s, starting at '{', holds a brace expansion:
// a closing brace with a comma or ".." before it.
func braces(s string) bool {
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return false
	}
	in := s[1:end]
	return strings.Contains(in, ",") || strings.Contains(in, "..")
}

// dquoted resolves the escapes of a literal inside double quotes.
func dquoted(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '\n':
				i++
				continue
			case '$', '`', '"', '\\':
				b.WriteByte(raw[i+1])
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hdocText is the text of a here-document body and whether it is a
// literal: a quoted delimiter leaves the body as written; otherwise it
// must hold no expansion, and its escapes are resolved.
func hdocText(delim, body *syntax.Word) (string, bool) {
	quoted := hdocQuoted(delim)
	if body == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range body.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(l.Value)
		} else {
			b.WriteString(hdocUnescape(l.Value))
		}
	}
	return b.String(), true
}

// hdocQuoted reports a here-document delimiter with any quoting, which
// leaves the body as written: no expansions, no joined lines.
func hdocQuoted(delim *syntax.Word) bool {
	for _, p := range delim.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// hdocEndsEarly reports whether bash would end a here-document within
// body (the text the parser took as its body). With join (an unquoted
// delimiter), bash joins a line that ends in an unescaped backslash to
// the next before it compares the line with the delimiter (after taking
// leading tabs off, for <<-), so "EO\" then "F" ends it, and what
// follows runs as commands the parser took for text (a hunt,
// 2026-12-01). With prefix (inside $( ), ` ` or <( )), bash 5.2 also
// ends it at a line that starts with the delimiter ("E)": a hunt).
func hdocEndsEarly(body, delim string, dash, join, prefix bool) bool {
	// The parser's span of the body ends with the delimiter's own line.
	last := body[strings.LastIndexByte(body, '\n')+1:]
	if last == delim || dash && strings.TrimLeft(last, "\t") == delim {
		body = body[:len(body)-len(last)]
	}
	logical := ""
	for _, line := range strings.SplitAfter(body, "\n") {
		line = strings.TrimSuffix(line, "\n")
		n := len(line) - len(strings.TrimRight(line, `\`))
		if join && n%2 == 1 {
			logical += line[:len(line)-1]
			continue
		}
		logical += line
		if dash {
			logical = strings.TrimLeft(logical, "\t")
		}
		if logical == delim || prefix && delim != "" && strings.HasPrefix(logical, delim) {
			return true
		}
		logical = ""
	}
	return false
}

func hdocUnescape(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '\n':
				i++
				continue
			case '$', '`', '\\':
				b.WriteByte(raw[i+1])
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// stdin is what a statement gives a command on standard input, as far as
// its redirections say.
type stdin struct {
	kind int    // stdinNone, stdinText, stdinOpaque, stdinFile
	text string // stdinText: the literal text
	what string // stdinOpaque, stdinFile: description
}

const (
	stdinNone   = iota // inherited (a pipe, the terminal)
	stdinText          // a literal here-document or here-string
	stdinOpaque        // a here-document or here-string that is not a literal
	stdinFile          // a file
)

func stdinOf(s scope, st *syntax.Stmt) stdin {
	in := stdin{}
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if t, ok := hdocText(r.Word, r.Hdoc); ok {
				in = stdin{kind: stdinText, text: t}
			} else {
				in = stdin{kind: stdinOpaque, what: "a here-document with expansions"}
			}
		case syntax.WordHdoc:
			if w := s.conv(r.Word); w.Literal {
				in = stdin{kind: stdinText, text: w.Text + "\n"}
			} else {
				in = stdin{kind: stdinOpaque, what: "a here-string that is not a literal"}
			}
		case syntax.RdrIn, syntax.RdrInOut:
			in = stdin{kind: stdinFile, what: "the file " + s.conv(r.Word).Text}
		case syntax.DplIn:
			in = stdin{kind: stdinOpaque, what: "another file descriptor"}
		}
	}
	return in
}

// systemDirs are directories whose programs are the ones PATH finds:
// /usr/bin/git is git. A command word naming a program elsewhere is a
// program the analyzer does not know (see commandName).
var systemDirs = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
		"/usr/local/bin": true, "/usr/local/sbin": true,
	}
})

// commandName is the name the rules know a literal command word by:
// the word, or its base name when it names a system directory's program;
// a name some systems install a program under is the program's
// (programAliases).
func commandName(word string) string {
	if !strings.Contains(word, "/") {
		return programAlias(word)
	}
	dir, base := path.Split(path.Clean(word))
	if systemDirs()[path.Clean(dir)] && base != "" {
		return programAlias(base)
	}
	return word
}

// programAlias is the program a name stands for: CMake 3 is installed
// as cmake3 and ctest3 beside an older cmake on some systems (a
// fifteenth hunt: cmake3 -E rm -rf src deleted src unseen), yarn as
// yarnpkg by Debian.
func programAlias(name string) string {
	switch name {
	case "cmake3":
		return "cmake"
	case "ctest3":
		return "ctest"
	case "yarnpkg":
		return "yarn" // Debian's name for it (a sixteenth hunt)
	}
	return name
}

// isPath reports whether a command name is a path to a program outside
// the system directories (./build.sh, bin/tool, /opt/x/run).
func isPath(name string) bool { return strings.Contains(name, "/") }

// mayBeOption reports whether a word may be, or expand to, an option:
// a literal starting with '-', or a word whose expansion comes before
// any literal text other than a '-'.
func (w Word) mayBeOption() bool {
	if w.Literal {
		return strings.HasPrefix(w.Text, "-") && w.Text != "-"
	}
	return w.lead == "" || strings.HasPrefix(w.lead, "-")
}

// isOpt reports whether a word is a literal option ("-x", "--long"; not
// "-" or "--").
func (w Word) isOpt() bool {
	return w.Literal && len(w.Text) > 1 && w.Text[0] == '-' && w.Text != "--"
}

func texts(ws []Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}

func joinWords(ws []Word) string { return strings.Join(texts(ws), " ") }

func lit(t string) Word { return Word{Text: t, Literal: true, single: true, lead: t} }
