package bash

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// The automatic subset. A line is Auto only if every node of it stays
// inside a conservative subset of bash; what is outside needs approval,
// wherever it stands (a command's words, [[ ]], case, a for list,
// arithmetic, a nested expansion, a here-document's body). The hunts
// found, one context at a time, that a check made for command words was
// missing elsewhere (${x@P} in [[ ]], (( PATH=5 )), ${!x:=…}); the
// subset is checked on every node instead.
const (
	rExpansion   = "builtin.expansion"
	rArithmetic  = "builtin.arithmetic"
	rBuiltinArgs = "builtin.builtin-args"
	rHistory     = "builtin.history"
	rSpecialVar  = "builtin.special-var"
	rKeyword     = "builtin.keyword"
)

// strict walks every node of a parsed statement: the first one outside
// the subset is recorded as a command of its own that needs approval.
// A here-document inside $( ), ` ` or <( ) that bash would end early
// is an error (ErrSyntax).
func (w *walker) strict(s scope, root syntax.Node) error {
	var (
		found  *finding
		at     syntax.Node
		err    error
		stack  []syntax.Node
		substs int // command and process substitutions around the node
	)
	note := func(n syntax.Node, rule, why string) {
		if found == nil && why != "" {
			found, at = &finding{rule, why, 0}, n
		}
	}
	syntax.Walk(root, func(n syntax.Node) bool {
		if n == nil {
			if top := stack[len(stack)-1]; isSubst(top) {
				substs--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		if err != nil {
			return false
		}
		stack = append(stack, n)
		if isSubst(n) {
			substs++
		}
		switch n := n.(type) {
		case *syntax.Redirect:
			// {NAME}>file sets NAME to the descriptor's number: a
			// subscript in NAME is evaluated as arithmetic (a re-test:
			// exec {a[k]}>/dev/null, k='a[$(cmd)]', ran cmd).
			if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
				name := strings.TrimSuffix(strings.TrimPrefix(n.N.Value, "{"), "}")
				note(n, rArithmetic, varOperand("{NAME}>", Word{Text: name, Literal: true}))
			}
			if substs > 0 && n.Hdoc != nil {
				d := s.conv(n.Word).Text
				if hdocEndsEarly(s.text(n.Hdoc.Pos(), n.Hdoc.End()), d, n.Op == syntax.DashHdoc, !hdocQuoted(n.Word), true) {
					err = fmt.Errorf("%w: a here-document inside a command substitution has a line that starts with its delimiter %s, where bash ends it and runs the rest as commands", ErrSyntax, quotedWord(d))
				}
			}
		case *syntax.ExtGlob:
			// The parser keeps a pattern's text (@(…), !(…), +(…) in
			// [[ ]], case, or after shopt -s extglob) as it is, and bash
			// expands what is in it (a hunt: [[ x == @($(cmd)) ]] ran
			// cmd, which the analyzer did not see).
			if n.Pattern != nil && rawExpands(n.Pattern.Value) {
				note(n, rExpansion, "the pattern "+quotedWord(s.text(n.Pos(), n.End()))+" holds an expansion the parser keeps as text, which bash expands (and a command substitution in it runs)")
			}
		case *syntax.Lit:
			if !inQuotes(stack) && rawExpands(n.Value) {
				note(n, rExpansion, "the text "+quotedWord(n.Value)+" holds an expansion the parser keeps as text, which bash may expand (and a command substitution in it run)")
			}
		case *syntax.ParamExp:
			note(n, rExpansion, paramOutside(n))
		case *syntax.ArithmCmd:
			note(n, rArithmetic, arithOutside("(( ))", n.X))
		case *syntax.ArithmExp:
			note(n, rArithmetic, arithOutside("$(( ))", n.X))
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				note(n, rArithmetic, arithOutside("let", x))
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				if x != nil {
					note(n, rArithmetic, arithOutside("for (( ))", x))
				}
			}
		case *syntax.Assign:
			if n.Index != nil && !indexOK(n.Index) {
				note(n, rArithmetic, "the subscript of "+nameOf(n.Name)+"[…] is evaluated as arithmetic: only digits, @ or * are taken without approval, as a name in it runs what its value holds")
			}
		case *syntax.ArrayElem:
			if n.Index != nil && !indexOK(n.Index) {
				note(n, rArithmetic, "the subscript of [… ]= in an array value is evaluated as arithmetic: only digits, @ or * are taken without approval")
			}
		case *syntax.WordIter:
			if n.Name != nil && integerVars()[n.Name.Value] {
				for _, x := range n.Items {
					if !numberWord(x) {
						note(n, rSpecialVar, "the loop sets "+n.Name.Value+", which evaluates what it is given as arithmetic")
					}
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				if x, ok := n.X.(*syntax.Word); ok {
					note(n, rArithmetic, varOperand("[[ "+n.Op.String()+" ]]", s.conv(x)))
				}
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, x := range []syntax.TestExpr{n.X, n.Y} {
					if x, ok := x.(*syntax.Word); !ok || !numberWord(x) {
						note(n, rArithmetic, "[[ "+n.Op.String()+" ]] evaluates its operands as arithmetic: only numbers are taken without approval, as a name or an expansion in them runs what a value holds")
					}
				}
			}
		}
		return true
	})
	if err != nil || found == nil {
		return err
	}
	return w.emit(s, SimpleCommand{Text: s.text(at.Pos(), at.End()), Pos: s.pos(at.Pos()), outside: found})
}

// rawExpands reports text the parser kept as a literal that holds $(,
// ${ or a backquote not escaped by a backslash.
func rawExpands(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '`':
			return true
		case '$':
			if i+1 < len(raw) && (raw[i+1] == '(' || raw[i+1] == '{') {
				return true
			}
		}
	}
	return false
}

// inQuotes reports a node inside double quotes or a here-document's
// body (the top of stack is the node itself): text there is not a
// pattern.
func inQuotes(stack []syntax.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *syntax.DblQuoted:
			return true
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // quoting starts afresh inside
		case *syntax.Redirect:
			return n.Hdoc != nil && (len(stack) <= i+1 || stack[i+1] == n.Hdoc)
		}
	}
	return false
}

func isSubst(n syntax.Node) bool {
	switch n.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst:
		return true
	}
	return false
}

func nameOf(l *syntax.Lit) string {
	if l == nil {
		return ""
	}
	return l.Value
}

// paramOutside says why a parameter expansion is outside the subset, or
// "": $NAME, ${NAME}, positional and special parameters, ${#NAME},
// defaults and alternatives (:- - :+ +), trims (# ## % %%), case
// operators (^ ^^ , ,,) and ${x/p/r} are inside (their words are nodes
// of their own, checked as well); a subscript only of digits, @ or *,
// and a substring only with digits.
func paramOutside(pe *syntax.ParamExp) string {
	switch {
	case pe.Excl || pe.Names != 0:
		return "${!…} expands a variable named at run time (and ${!x:=…} sets one)"
	case pe.Flags != nil || pe.Width || pe.IsSet || pe.NestedParam != nil || len(pe.Modifiers) > 0 ||
		pe.Split != syntax.OptUnset || pe.GlobSubst != syntax.OptUnset || pe.RcExpand != syntax.OptUnset:
		return "an expansion of another shell's (zsh, mksh)"
	case pe.Index != nil && !indexOK(pe.Index):
		return "${NAME[…]} with a subscript other than digits, @ or *: bash evaluates it as arithmetic, and a name in it runs what its value holds (k='a[$(cmd)]'; ${a[k]})"
	case pe.Slice != nil && (!digitsArith(pe.Slice.Offset) || pe.Slice.Length != nil && !digitsArith(pe.Slice.Length)):
		return "${NAME:offset:length} with an offset or length other than digits: bash evaluates them as arithmetic"
	}
	if pe.Exp == nil {
		return ""
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull,
		syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix,
		syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		return ""
	case syntax.AssignUnset, syntax.AssignUnsetOrNull:
		return "${NAME:=…} sets NAME, which the analyzer does not see as an assignment"
	case syntax.OtherParamOps:
		return "${NAME@…} transforms the value (@P expands it as a prompt, running command substitutions in it)"
	}
	return "${NAME" + pe.Exp.Op.String() + "…} is not among the expansions taken without approval"
}

// numberRE is a number as bash's arithmetic reads one: a token that
// starts with a digit (42, 0x1f, 8#17, 64#_@) is never a name.
var numberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9][0-9A-Za-z_@#]*$`) })

// numberWord reports a word that is a number, or $#, $?, $$ or $!
// (always numbers, or empty).
func numberWord(x *syntax.Word) bool {
	if x == nil || len(x.Parts) != 1 {
		return false
	}
	switch p := x.Parts[0].(type) {
	case *syntax.Lit:
		return numberRE().MatchString(p.Value)
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil {
			return false
		}
		switch p.Param.Value {
		case "#", "?", "$", "!":
			return true
		}
	}
	return false
}

// digitsArith reports an arithmetic expression that is digits only.
func digitsArith(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && l.Value != "" && strings.Trim(l.Value, "0123456789") == ""
}

// indexOK reports a subscript taken without approval: digits, @ or *.
// A literal key is not: for an indexed array bash evaluates it as
// arithmetic, and a name in it runs command substitutions its value
// holds (k='a[$(cmd)]'; echo ${a[k]} runs cmd, a re-test).
func indexOK(x syntax.ArithmExpr) bool {
	if w, ok := x.(*syntax.Word); ok && len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && (l.Value == "@" || l.Value == "*") {
			return true
		}
	}
	return digitsArith(x)
}

// arithOutside says why an arithmetic expression is outside the subset:
// only numbers and operators are inside. A name is a variable whose
// value bash evaluates as an expression in turn (x='a[$(cmd)]'; $((x))
// runs cmd), an assignment sets a variable unseen ((( PATH=5 ))), and an
// expansion may supply either.
func arithOutside(what string, x syntax.ArithmExpr) string {
	why := ""
	arithLeaves(x, func(e syntax.ArithmExpr) bool {
		if w, ok := e.(*syntax.Word); !ok || !numberWord(w) {
			why = what + " is given more than numbers and operators: a name, an assignment or an expansion in arithmetic may set a variable unseen (PATH=5) or run what a value holds (a[$(cmd)])"
		}
		return why == ""
	})
	return why
}

// integerVars are bash's variables that evaluate what they are given as
// arithmetic (bash 5.2: OPTIND='a[$(cmd)]' runs cmd; each tested).
var integerVars = sync.OnceValue(func() map[string]bool {
	return set("OPTIND", "RANDOM", "SRANDOM", "HISTCMD", "BASHPID")
})

// evalBuiltins are builtins that assign, evaluate or run code: a word of
// theirs that is not a literal may be an option (declare -${u:-n},
// printf "${u:--v}"), a name with a subscript, or code.
var evalBuiltins = sync.OnceValue(func() map[string]bool {
	return set("declare", "typeset", "local", "export", "readonly", "nameref", "printf", "read", "mapfile",
		"readarray", "compgen", "complete", "getopts", "wait", "hash", "enable", "set", "shopt", "trap", "bind", "fc",
		"history", "source", ".", "eval", "unset", "let", "test", "[")
})

var declBuiltins = sync.OnceValue(func() map[string]bool {
	return set("declare", "typeset", "local", "export", "readonly", "nameref")
})

// strictCommand applies the subset to a command's words: the builtins
// that assign, evaluate or run code, and assignments to bash's integer
// variables.
func strictCommand(sc *SimpleCommand) *finding {
	for _, a := range sc.Assigns {
		if f := integerAssign(a.Name, a.Value); f != nil {
			return f
		}
	}
	name := baseName(sc)
	if shells()[name] {
		return shellKeyword(sc)
	}
	if !evalBuiltins()[name] {
		return nil
	}
	ws := sc.Words
	if f := nonLiteralArg(sc, name); f != nil {
		return f
	}
	switch {
	case name == "fc" && !fcLists(ws):
		return &finding{rHistory, "fc runs commands from the shell's history, which the analyzer does not see (only fc -l, which lists them, is taken without approval)", 0}
	case name == "set":
		for i, w := range ws[1:] {
			t := w.Text
			if t == "--" {
				break
			}
			if t == "histexpand" || len(t) > 1 && (t[0] == '-' || t[0] == '+') && t[1] != '-' && strings.ContainsRune(t, 'H') {
				return &finding{rHistory, "set " + t + " turns on history expansion (!!), which runs commands from the history", i + 1}
			}
			if f := keywordOption(name, t, i+1); f != nil {
				return f
			}
		}
	case name == "shopt":
		// globstar makes ** match every directory beneath: rm -d src/**
		// src deleted a tree (a hunt).
		for i, w := range ws[1:] {
			if w.Text == "globstar" {
				return &finding{rExpansion, "shopt globstar makes ** match whole trees, which the analyzer does not expand", i + 1}
			}
			// shopt -o sets set's options (an H6 hunt: shopt -so
			// keyword; ls PATH=. ran ./ls).
			if w.Text == "histexpand" {
				return &finding{rHistory, "shopt -o histexpand turns on history expansion (!!), which runs commands from the history", i + 1}
			}
			if w.Text == "keyword" {
				return keywordOption(name, w.Text, i+1)
			}
		}
	case name == "let":
		for i, w := range ws[1:] {
			if strings.ContainsFunc(w.Text, func(r rune) bool { return !strings.ContainsRune("0123456789+-*/%<>=!&|^~?:() \t", r) }) {
				return &finding{rArithmetic, "let is given " + quotedWord(w.Text) + ": only numbers and operators are taken without approval", i + 1}
			}
		}
	case declBuiltins()[name]:
		for i, w := range ws[1:] {
			t := w.Text
			if len(t) > 1 && (t[0] == '-' || t[0] == '+') && strings.ContainsRune(t, 'i') {
				return &finding{rArithmetic, name + " " + t + " gives a variable the integer attribute: every assignment to it is evaluated as arithmetic", i + 1}
			}
			n, v, eq := strings.Cut(t, "=")
			if f := subscriptName(name, n, i+1); f != nil {
				return f
			}
			if eq {
				if f := integerAssign(strings.TrimSuffix(n, "+"), Word{Text: v, Literal: w.Literal}); f != nil {
					return f
				}
			}
		}
	}
	for _, t := range targets(name, ws) {
		if t.at < 0 {
			continue
		}
		if f := subscriptName(name, t.name, t.at); f != nil {
			return f
		}
		if upperName(t.name) && !(name == "unset" || name == "test" || name == "[") {
			return &finding{rSpecialVar, name + " sets " + t.name + ": an upper-case name may be one of bash's special variables, some of which evaluate what they are given as arithmetic (OPTIND, RANDOM)", t.at}
		}
	}
	return nil
}

// keywordOption finds set -k or -o keyword (given to set, or to a shell
// it starts) in word t: every NAME=value argument of a later command then
// sets NAME in its environment, unseen (a re-test: set -k; bash -c :
// BASH_ENV=./x ran ./x).
func keywordOption(name, t string, at int) *finding {
	if t == "keyword" || len(t) > 1 && (t[0] == '-' || t[0] == '+') && t[1] != '-' && strings.ContainsRune(t, 'k') {
		return &finding{rKeyword, name + " " + t + " makes NAME=value arguments of later commands assignments to their environment, which the analyzer does not see", at}
	}
	return nil
}

// shellKeyword finds -k (or -o keyword) among the options of a shell the
// line starts, before its command string or script.
func shellKeyword(sc *SimpleCommand) *finding {
	ws := sc.Words
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" || t == "-" || !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") && ws[i-1].Text != "-o" && ws[i-1].Text != "+o" {
			return nil
		}
		if f := keywordOption(baseName(sc), t, i); f != nil {
			return f
		}
	}
	return nil
}

// integerAssign finds an assignment to one of integerVars of anything
// but a number.
func integerAssign(name string, v Word) *finding {
	name, _, _ = strings.Cut(name, "[")
	if !integerVars()[name] || v.Literal && (v.Text == "" || numberRE().MatchString(v.Text)) {
		return nil
	}
	return &finding{rSpecialVar, name + " is given " + quotedWord(v.Text) + ", which bash evaluates as arithmetic: only a number is taken without approval", 0}
}

// nonLiteralArg finds a word of an evalBuiltin that is not a literal,
// or a value of a declaration that is not one (declare a="$x" runs
// the command substitutions of a compound value when a is an array).
// printf's words after its format are text, and test's and ['s operands
// of a fixed form with quoted expansions are not read as names.
func nonLiteralArg(sc *SimpleCommand, name string) *finding {
	ws := sc.Words
	first := len(ws) // the first word of printf's that is never an option or a name
	if name == "printf" {
		first = printfArgs(ws)
	}
	if (name == "test" || name == "[") && plainTest(ws[1:], name == "[") {
		first = 1
	}
	for i := 1; i < len(ws) && i < first; i++ {
		if !ws[i].Literal && !ws[i].number {
			return &finding{rBuiltinArgs, name + " is given " + quotedWord(ws[i].Text) + ", which is not a literal: " + name + " may take it as an option, a variable name with a subscript, or code", i}
		}
	}
	if declBuiltins()[name] {
		for _, a := range sc.Assigns {
			if !a.Value.Literal {
				return &finding{rBuiltinArgs, name + " gives " + a.Name + " " + quotedWord(a.Value.Text) + ", which is not a literal: declare evaluates a compound value again when the variable is an array", 0}
			}
		}
	}
	return nil
}

// printfArgs is the index of printf's first word that cannot be an
// option or its value: its format when that cannot start with "-"
// (a literal, or an expansion after literal text), or the word after
// one that may (printf "${u:--v}" PATH 5 sets PATH).
func printfArgs(ws []Word) int {
	i := 1
	for i < len(ws) {
		w := ws[i]
		switch {
		case w.Literal && w.Text == "--":
			return i + 1 // the format follows, which cannot be an option
		case w.Literal && w.Text == "-v":
			i += 2
		case w.Literal && strings.HasPrefix(w.Text, "-") && len(w.Text) > 1:
			i++
		case !w.Literal && w.mayBeOption():
			return i + 1 // reported: it may be -v
		default:
			return i // the format, which cannot be an option
		}
	}
	return i
}

var testUnary = sync.OnceValue(func() map[string]bool {
	return set("-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x",
		"-G", "-L", "-N", "-O", "-S", "-n", "-z", "-o")
})

var testBinary = sync.OnceValue(func() map[string]bool {
	return set("=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef")
})

// plainTest reports test's (or ['s, without its "]") operands in a form
// whose expansions cannot become operators or names: each one quoted
// (one field), and [ X ], [ OP X ], [ X OP Y ], [ ! OP X ] with OP a
// literal operator other than -v and -R. test decides by the number
// of its words which is an operator (POSIX), so a value cannot move it.
func plainTest(ws []Word, bracket bool) bool {
	if bracket {
		if len(ws) == 0 || !ws[len(ws)-1].Literal || ws[len(ws)-1].Text != "]" {
			return false
		}
		ws = ws[:len(ws)-1]
	}
	for _, w := range ws {
		if !w.single {
			return false
		}
	}
	is := func(i int, ops map[string]bool) bool { return ws[i].Literal && ops[ws[i].Text] }
	switch len(ws) {
	case 1:
		return true
	case 2:
		return is(0, testUnary()) || ws[0].Literal && ws[0].Text == "!"
	case 3:
		return is(1, testBinary()) || ws[0].Literal && ws[0].Text == "!" && is(1, testUnary())
	}
	return false
}

// fcLists reports an fc that only lists the history: -l, with -n and -r,
// and literal ranges.
func fcLists(ws []Word) bool {
	list := false
	for _, w := range ws[1:] {
		t := w.Text
		switch {
		case !w.Literal:
			return false
		case len(t) > 1 && t[0] == '-' && strings.Trim(t[1:], "0123456789") == "":
		case len(t) > 1 && t[0] == '-' && strings.Trim(t[1:], "lnr") == "":
			list = list || strings.ContainsRune(t, 'l')
		case strings.HasPrefix(t, "-"):
			return false
		}
	}
	return list
}

// target is a variable a builtin sets or reads by name, and the index
// of its word (-1 when it is the builtin's default).
type target struct {
	name string
	at   int
}

// targets are the variables named by printf -v, read, mapfile and
// readarray, getopts, wait -p, unset and test -v / -R.
func targets(name string, ws []Word) []target {
	var out []target
	// opts walks option clusters: a letter of valued takes the rest of
	// its word, or the next word, as its value, a target when it is in
	// named; the words after the options are returned.
	opts := func(valued, named string) int {
		i := 1
		for ; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				return i + 1
			}
			if len(t) < 2 || t[0] != '-' {
				return i
			}
			for k := 1; k < len(t); k++ {
				if !strings.ContainsRune(valued, rune(t[k])) {
					continue
				}
				v, at := t[k+1:], i
				if v == "" && i+1 < len(ws) {
					i++
					v, at = ws[i].Text, i
				}
				if strings.ContainsRune(named, rune(t[k])) {
					out = append(out, target{v, at})
				}
				break
			}
		}
		return i
	}
	rest := func(i int) { // each word from i on
		for ; i < len(ws); i++ {
			out = append(out, target{ws[i].Text, i})
		}
	}
	switch name {
	case "printf":
		opts("v", "v")
	case "read":
		rest(opts("adinNptu", "a"))
	case "mapfile", "readarray":
		if i := opts("dnOsuCc", ""); i < len(ws) {
			out = append(out, target{ws[i].Text, i})
		}
	case "getopts":
		if i := opts("", "") + 1; i < len(ws) {
			out = append(out, target{ws[i].Text, i})
		}
	case "wait":
		opts("p", "p")
	case "unset":
		rest(opts("", ""))
	case "test", "[":
		for i := 1; i+1 < len(ws); i++ {
			if t := ws[i].Text; ws[i].Literal && (t == "-v" || t == "-R") {
				out = append(out, target{ws[i+1].Text, i + 1})
			}
		}
	}
	return out
}

// subscriptName finds a variable name with a subscript other than
// digits, @ or *: bash evaluates it as arithmetic (test -v 'a[k]',
// unset 'a[$(cmd)]').
func subscriptName(builtin, name string, at int) *finding {
	if why := varOperand(builtin, Word{Text: name, Literal: true}); why != "" {
		return &finding{rArithmetic, why, at}
	}
	return nil
}

// varOperand says why a word a builtin takes as a variable name is
// outside the subset: it is not a literal, or its subscript is not
// digits, @ or *.
func varOperand(builtin string, w Word) string {
	if !w.Literal {
		return builtin + " is given " + quotedWord(w.Text) + " as a variable name, which is not a literal: a subscript in it is evaluated as arithmetic"
	}
	i := strings.IndexByte(w.Text, '[')
	if i < 0 {
		return ""
	}
	sub := strings.TrimSuffix(w.Text[i+1:], "]")
	if sub == "@" || sub == "*" || sub != "" && strings.Trim(sub, "0123456789") == "" && strings.HasSuffix(w.Text, "]") {
		return ""
	}
	return builtin + " is given " + quotedWord(w.Text) + ", whose subscript bash evaluates as arithmetic: only digits, @ or * are taken without approval"
}

// upperName reports a name (its subscript aside) with no lower-case
// letter and at least one upper-case one: bash's own variables are so.
func upperName(n string) bool {
	n, _, _ = strings.Cut(n, "[")
	return strings.IndexFunc(n, func(r rune) bool { return r >= 'a' && r <= 'z' }) < 0 &&
		strings.IndexFunc(n, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0
}
