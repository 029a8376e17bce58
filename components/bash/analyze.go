package bash

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on what Analyze accepts. Input beyond them is an error, never a
// partial analysis.
const (
	// MaxSize is the largest command line Analyze accepts, in bytes.
	MaxSize = 64 << 10
	// MaxDepth bounds nesting: compound commands, substitutions,
	// parameter expansions within one another and strings run by bash -c
	// or eval each add a level. It also bounds the wrappers one command
	// runs under (sudo env nice ... xargs ...).
	MaxDepth = 64
	// MaxCommands bounds the simple commands one command line may hold.
	MaxCommands = 10000
	// MaxWords bounds the words the simple commands hold in all, each
	// counted with those of the wrappers and strings it runs under, which
	// every command carries (eval's words, once for each command eval
	// runs): the work of deciding grows with them.
	MaxWords = 1 << 18
	// maxParsed bounds the code parsed for one line in all: the line and
	// each string it runs as code (eval eval … reads the rest of the line
	// again at each level; sh -c's string is read as dash and as bash).
	maxParsed = 8 * MaxSize
	// maxBrackets bounds the bracket depth the pre-scan sees before the
	// parser runs (an over-estimate of nesting: quoted brackets count).
	maxBrackets = 4 * MaxDepth
)

// Errors Analyze returns (wrapped, with detail); test with errors.Is.
var (
	ErrTooLarge = errors.New("command too large")
	ErrNUL      = errors.New("command holds a NUL byte")
	ErrTooDeep  = errors.New("command nests too deeply")
	ErrTooMany  = errors.New("command holds too many simple commands")
	ErrSyntax   = errors.New("command does not parse")
)

// Analysis is what Analyze found in one command line.
type Analysis struct {
	// Source is the command line as given.
	Source string
	// Commands are its simple commands, in the order the shell would
	// start them (a substitution before the command whose word holds it).
	Commands []SimpleCommand

	// outside are the nodes of the line outside the automatic subset
	// (strict.go), at most one a statement, each as a command with no
	// words whose finding (outside) needs approval; DecideEach decides
	// them after Commands.
	outside []SimpleCommand
}

// SimpleCommand is one command the line may run, after the wrappers that
// only change how it runs (sudo, env, nice, timeout, xargs, ...) are
// peeled off.
type SimpleCommand struct {
	// Words are the command's words after unwrapping: Words[0] is the
	// command. Empty for a statement of assignments or redirections only.
	Words []Word
	// Name is the name the built-in rules know the command by: Words[0]
	// when it is a literal, with a system directory (/usr/bin/ and the
	// like) taken off, and a program's other installed name made its own
	// (cmake3 is cmake: programAlias); "" when Words is empty or Words[0]
	// is not literal.
	Name string
	// Wrappers are the layers the command runs under, outermost first:
	// "sudo", "env", "xargs", "find -exec", "bash -c", "eval" and so on,
	// each with the words of the command that ran it.
	Wrappers []Layer
	// Assigns are the variables set for or by the command: NAME=value
	// before it, given to env or sudo, or set by export/declare/local.
	Assigns []Assign
	// Redirects are the statement's redirections.
	Redirects []Redirect
	// GitOptions are git's global options (-C DIR, -c KEY=VALUE,
	// --git-dir=...) taken out from before the subcommand, so that Words
	// is "git SUBCOMMAND ...".
	GitOptions []Word
	// Appended is set when arguments are filled in at run time: xargs
	// adds them, find -exec puts file names inside a word ("x{}").
	Appended bool
	// Dynamic, when set, names a word that is only known at run time and
	// decides what runs: a command word that is not a literal, the string
	// of a bash -c or eval that is not one.
	Dynamic *Opaque
	// Script, when set, names what the command runs without the analyzer
	// seeing it: a shell script file, a script on standard input, a path
	// to a program in the workspace.
	Script *Opaque
	// Text is the command's source text (for a command found inside a
	// string, the text within that string).
	Text string
	// Pos is where the command is in the analysed source; a command
	// found inside a string (bash -c '...', eval) has the position of
	// the command that runs the string.
	Pos Pos

	code [2]int // Words[code[0]:code[1]] were analysed as commands of their own
	line lineFacts
	// repeats: the command is in a loop's or a function's body, so it
	// may run more than once on the line (an ln's link then in the way
	// of its next run).
	repeats bool
	// outside: a node of the line outside the automatic subset
	// (strict.go), recorded as a command of its own, with no words.
	outside *finding
}

// Word is one shell word.
type Word struct {
	// Text is the word's value when it is a literal (quotes removed,
	// escapes resolved); otherwise a best-effort rendering in which
	// expansions appear as their source text.
	Text string
	// Literal is set when the word's value is fixed by the source: no
	// parameter, command or arithmetic expansion, no glob or brace
	// expansion, no tilde, no $'...' escape.
	Literal bool

	single bool   // expands to exactly one field (literal, or expansions all double-quoted)
	number bool   // its value is digits, or empty: literal digits, $?, $#, $$, $! (numberParam)
	lead   string // the literal text before the first expansion
	prompt bool   // holds a ${…@P} prompt expansion
	// late: quoting kept a $( ` $[ or ${ in it from expanding now, which
	// bash expands when a builtin takes the word as a variable name with
	// a subscript, a compound value or arithmetic (declare, printf -v,
	// test -v, let, [[ -eq ]]).
	late bool
	// assigns names the variables a ${NAME:=…} or ${NAME=…} in it sets.
	assigns []string
	// pattern, for a word that is not a literal, is Text with each $'…'
	// decoded and each quoted or escaped glob or brace character made
	// inert (.gi["!"t] is a bracket of ! and t, not a negation): the path
	// bash may expand it to, globs and braces kept (pattern.go).
	pattern string
	// sub: its quoted text, pieces joined, holds a command substitution
	// in an array subscript or a compound value (a[$(cmd)], ($(cmd))),
	// which bash runs when the text is evaluated as arithmetic (an
	// integer variable such as OPTIND, let) or assigned to an array.
	sub bool
}

// Layer is one wrapper a command runs under.
type Layer struct {
	// Name names the layer: the wrapper ("sudo", "env", "xargs") or how
	// the command was reached ("find -exec", "bash -c", "eval", "trap").
	Name string
	// Words are the words of the command that is the layer, from the
	// wrapper's name on.
	Words []Word

	// off is the index in Words at which the wrapped command's words
	// start when they end the layer's words (sudo rm -rf x), or -1 when
	// the command came from inside a string or a delimited list.
	off int
}

// Assign is a variable assignment.
type Assign struct {
	Name  string
	Value Word
}

// Redirect is one redirection.
type Redirect struct {
	// Op is the operator: ">", ">>", "<", "<>", ">&", "<&", ">|", "<<",
	// "<<-", "<<<", "&>", "&>>".
	Op string
	// FD is the file descriptor or {var} written before the operator, if any.
	FD string
	// Target is the file (or descriptor, or here-document delimiter).
	Target Word

	body Word // a here-document's text
}

// Opaque marks part of a command that the analyzer cannot see.
type Opaque struct {
	// At is the index in Words of the word concerned (len(Words) when it
	// is not a word: standard input).
	At int
	// Why says what is unknown, for the person.
	Why string
}

// Pos is a position in the analysed source: byte offset, 1-based line
// and column.
type Pos struct {
	Offset, Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Analyze parses src as bash and finds every simple command in it. It
// runs nothing and reads nothing. It fails on input larger than MaxSize,
// holding a NUL byte, nesting deeper than MaxDepth, holding more than
// MaxCommands simple commands, or not parsing.
func Analyze(src string) (*Analysis, error) {
	if len(src) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(src), MaxSize)
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return nil, fmt.Errorf("%w at byte %d", ErrNUL, i)
	}
	w := &walker{}
	if err := w.source(scope{src: src}, src, 0); err != nil {
		return nil, err
	}
	facts := lineFactsOf(src, w.out)
	facts.funcs = w.funcs
	for i := range w.out {
		w.out[i].line = facts
	}
	return &Analysis{Source: src, Commands: w.out, outside: w.outside}, nil
}

// lineFacts are what other commands of the line do that changes what a
// command means: the analyzer reads no file, so what the line makes
// is all it knows of what a name will be when the command runs.
type lineFacts struct {
	// repos: the line makes a repository (git init, git clone), whose
	// configuration it may write before a git -C there reads it.
	repos bool
	// links: the line may make a link (ln, cp -a, tar -x, git apply:
	// makesLinks), through which an mv may leave the workspace (ln -s
	// /tmp/x up; mv src up/: an eighth hunt).
	links bool
	// leaves: the line changes directory to where a relative path may
	// be out of the workspace (cd .., cd /tmp, cd -, cd "$d", cd alone).
	leaves bool
	// dotglob: the line may make a glob match a leading dot (shopt -s
	// dotglob, bash -O dotglob, GLOBIGNORE set in any way: either name
	// anywhere in it), so that * and ? may match .git (pattern.go).
	dotglob bool
	// cacheDirs: the names of cleanDirVars the line names anywhere (as
	// dotglob's are looked for), each of which may point a cleaner
	// that removes its directory whole at the workspace.
	cacheDirs map[string]bool
	// funcs: the names of the functions the line defines, anywhere in
	// it; a command of that name may run one (writtenWords).
	funcs map[string]bool
	// linkers: how many of the line's commands may make a link.
	linkers int
	// input: the line may give a command standard input other than the
	// session's /dev/null (a pipe, a < of any kind, a coproc: |, < or
	// coproc anywhere in its text, code strings included).
	input bool
}

// cleanDirVars name the directories that go clean -modcache, -cache or
// -fuzzcache and cargo clean remove whole (a nineteenth hunt:
// GOMODCACHE=$PWD/src go clean -modcache and CARGO_TARGET_DIR=src
// cargo clean each removed src); GOENV and CARGO_HOME name a file of
// settings that may set them.
var cleanDirVars = []string{"GOMODCACHE", "GOPATH", "GOCACHE", "GOENV", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_HOME"}

func lineFactsOf(src string, cs []SimpleCommand) lineFacts {
	var f lineFacts
	// GLOBIGNORE can be set in more ways than an assignment (a for or
	// select loop's variable: a tenth hunt; read, printf -v, getopts,
	// ${GLOBIGNORE:=x}, arithmetic), and dotglob named in more places
	// than a word: either name anywhere in the text, a backslash and
	// newline taken out as bash takes them out, counts. The words are
	// looked at too, for quotes may split a name there (read GLOB""IGNORE).
	joined := strings.ReplaceAll(src, "\\\n", "")
	f.dotglob = strings.Contains(joined, "GLOBIGNORE") || strings.Contains(joined, "dotglob")
	f.input = strings.ContainsAny(joined, "|<") || strings.Contains(joined, "coproc")
	f.cacheDirs = map[string]bool{}
	for _, n := range cleanDirVars {
		if strings.Contains(joined, n) {
			f.cacheDirs[n] = true
		}
	}
	for _, c := range cs {
		f.dotglob = f.dotglob || slices.ContainsFunc(c.Assigns, func(a Assign) bool { return a.Name == "GLOBIGNORE" })
		for _, l := range append([]Layer{{Words: c.Words}}, c.Wrappers...) {
			f.dotglob = f.dotglob || slices.ContainsFunc(l.Words, func(w Word) bool {
				return strings.Contains(w.Text, "dotglob") || strings.Contains(w.Text, "GLOBIGNORE")
			})
			for _, w := range l.Words {
				for _, n := range cleanDirVars {
					if strings.Contains(w.Text, n) {
						f.cacheDirs[n] = true
					}
				}
			}
		}
		if makesLinks(&c) {
			f.links = true
			f.linkers++
		}
		switch name := baseName(&c); name {
		case "git":
			f.repos = f.repos || len(c.Words) > 1 && (c.Words[1].Text == "init" || c.Words[1].Text == "clone")
		case "cd", "pushd", "popd":
			var dirs []Word
			for _, w := range c.Words[1:] {
				if !w.isOpt() || w.Text == "-" {
					dirs = append(dirs, w)
				}
			}
			// pushd and popd go where the stack says.
			f.leaves = f.leaves || name != "cd" || len(dirs) == 0 || slices.ContainsFunc(dirs, func(w Word) bool { return !w.Literal || outsidePath(w) || w.Text == "-" })
		}
	}
	return f
}

// walker collects simple commands.
type walker struct {
	out     []SimpleCommand
	outside []SimpleCommand
	funcs   map[string]bool // the functions defined (lineFacts.funcs)
	words   int             // the words emitted so far (MaxWords)
	parsed  int             // the bytes of code parsed so far (maxParsed)
}

// scope is the text being walked and how it is reached.
type scope struct {
	src    string  // the text the nodes' offsets refer to
	at     *Pos    // the position of src in the top-level source; nil at top level
	layers []Layer // wrappers the text runs under
	posix  bool    // the text is read as POSIX sh (dash) reads it, not as bash
	// repeats: the text is a loop's or a function's body, which may run
	// more than once (SimpleCommand.repeats).
	repeats bool
}

func (s scope) pos(p syntax.Pos) Pos {
	if s.at != nil {
		return *s.at
	}
	return Pos{Offset: int(p.Offset()), Line: int(p.Line()), Col: int(p.Col())}
}

func (s scope) text(from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if a < 0 || b > len(s.src) || a > b {
		return ""
	}
	return s.src[a:b]
}

func tooDeep() error {
	return fmt.Errorf("%w: more than %d levels", ErrTooDeep, MaxDepth)
}

// parses counts n bytes of code to parse against maxParsed.
func (w *walker) parses(n int) error {
	if w.parsed += n; w.parsed > maxParsed {
		return fmt.Errorf("%w: more than %d bytes of code to read in all, the strings it runs as code (eval, bash -c) counted again", ErrTooLarge, maxParsed)
	}
	return nil
}

// source parses text and walks it.
func (w *walker) source(s scope, text string, depth int) error {
	if depth > MaxDepth {
		return tooDeep()
	}
	if n := bracketDepth(text); n > maxBrackets {
		return fmt.Errorf("%w: %d brackets deep, at most %d", ErrTooDeep, n, maxBrackets)
	}
	if err := w.parses(len(text)); err != nil {
		return err
	}
	lang := syntax.LangBash
	if s.posix {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true)).Parse(strings.NewReader(text), "")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if err := misreadComment(f, text); err != nil {
		return err
	}
	s.src = text
	// Each statement, then the nodes of it outside the automatic subset.
	for _, st := range f.Stmts {
		if err := w.stmt(s, st, depth); err != nil {
			return err
		}
		if err := w.strict(s, st); err != nil {
			return err
		}
	}
	return nil
}

// misreadComment refuses a comment bash does not read as the parser
// does. One whose line ends in a backslash (or a backslash and a
// carriage return): bash ends a comment at the end of its line whatever
// precedes it, where the parser takes the backslash and newline as a
// line joined to the next and reads that line as part of the comment
// (an eighth hunt: echo a # x \<newline>rm -rf src ran rm, which the
// parser had not seen; in $( ), a function, an if, after a pipe, in bash
// -c's string too). And one whose # does not start a word for bash
// (commentStart).
func misreadComment(f *syntax.File, text string) error {
	var err error
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.Comment)
		if !ok || err != nil {
			return err == nil
		}
		at := min(int(c.Pos().Offset()), len(text))
		line := text[at:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		switch {
		case strings.HasSuffix(strings.TrimRight(line, "\r"), `\`):
			err = fmt.Errorf("%w: the comment %s ends in a backslash, where bash ends it and runs the next line as a command", ErrSyntax, quotedWord(line))
		case !commentStart(text, at):
			err = fmt.Errorf("%w: the # of %s follows a character where bash reads it as part of a word, not a comment, and runs the rest of the line", ErrSyntax, quotedWord(line))
		}
		return true
	})
	return err
}

// commentStart reports whether bash starts a comment at the # at text[at]:
// bash does so only where a word starts, after a blank (space or tab), a
// newline, or ; & | ( ` (each tried in bash 5.2), a backslash and
// newline being no character at all. Not after the ) of an array
// assignment: bash reads x=(a)#x as one word (a ninth hunt: the parser
// ended the array there and took the rest as a comment, x=(a)#x rm -rf
// src, x=()#x; rm -rf src, declare x=()#x; … ran rm). Nor after any
// other ), which is refused rather than told from the array's; nor
// after a carriage return, which is not a blank to bash (ls\r#x; rm -rf
// src ran rm).
func commentStart(text string, at int) bool {
	i := at
	for i >= 2 && text[i-1] == '\n' && text[i-2] == '\\' {
		i -= 2
	}
	return i == 0 || strings.IndexByte(" \t\n;&|(`", text[i-1]) >= 0
}

// bracketDepth is the deepest nesting of ( and { in text, counted
// without regard to quoting: an over-estimate of the parser's recursion
// that is cheap to take before the parser runs.
func bracketDepth(text string) int {
	d, most := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '{':
			d++
			most = max(most, d)
		case ')', '}':
			d = max(d-1, 0)
		}
	}
	return most
}

func (w *walker) stmts(s scope, list []*syntax.Stmt, depth int) error {
	if depth > MaxDepth {
		return tooDeep()
	}
	for _, st := range list {
		if err := w.stmt(s, st, depth); err != nil {
			return err
		}
	}
	return nil
}

// stmt walks one statement. Chains of && || | are walked iteratively,
// so that a long list is not deep.
func (w *walker) stmt(s scope, root *syntax.Stmt, depth int) error {
	stack := []*syntax.Stmt{root}
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if st == nil {
			continue
		}
		redirs, err := w.redirects(s, st.Redirs, depth)
		if err != nil {
			return err
		}
		if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok {
			if len(redirs) > 0 {
				if err := w.emit(s, SimpleCommand{Redirects: redirs, Text: s.text(st.Pos(), st.End()), Pos: s.pos(st.Pos())}); err != nil {
					return err
				}
			}
			stack = append(stack, bc.Y, bc.X)
			continue
		}
		if err := w.command(s, st, redirs, depth); err != nil {
			return err
		}
	}
	return nil
}

// redirects walks the substitutions in a statement's redirections and
// converts them.
func (w *walker) redirects(s scope, rs []*syntax.Redirect, depth int) ([]Redirect, error) {
	var out []Redirect
	for _, r := range rs {
		if r.Word != nil {
			if err := w.word(s, r.Word, depth); err != nil {
				return nil, err
			}
		}
		if r.Hdoc != nil {
			if err := w.word(s, r.Hdoc, depth); err != nil {
				return nil, err
			}
			if d, ok := s.conv(r.Word), true; ok && !hdocQuoted(r.Word) && hdocEndsEarly(s.text(r.Hdoc.Pos(), r.Hdoc.End()), d.Text, r.Op == syntax.DashHdoc, true, false) {
				return nil, fmt.Errorf("%w: a here-document ends before it seems to: a line of it ends in a backslash, and bash joins it to the next before it looks for the delimiter %s", ErrSyntax, quotedWord(d.Text))
			}
		}
		rd := Redirect{Op: r.Op.String()}
		if r.Hdoc != nil {
			rd.body = s.conv(r.Hdoc)
		}
		if r.N != nil {
			rd.FD = r.N.Value
		}
		if r.Word != nil {
			rd.Target = s.conv(r.Word)
		}
		out = append(out, rd)
	}
	return out, nil
}

// command walks the command of a statement.
func (w *walker) command(s scope, st *syntax.Stmt, redirs []Redirect, depth int) error {
	d := depth + 1
	if d > MaxDepth {
		return tooDeep()
	}
	// A compound command's own redirections apply to all of it: they are
	// recorded as a command of their own.
	compound := func() error {
		if len(redirs) == 0 {
			return nil
		}
		return w.emit(s, SimpleCommand{Redirects: redirs, Text: s.text(st.Pos(), st.End()), Pos: s.pos(st.Pos())})
	}
	switch c := st.Cmd.(type) {
	case nil:
		return compound()
	case *syntax.CallExpr:
		return w.call(s, st, c, redirs, depth)
	case *syntax.Subshell:
		if err := compound(); err != nil {
			return err
		}
		return w.stmts(s, c.Stmts, d)
	case *syntax.Block:
		if err := compound(); err != nil {
			return err
		}
		return w.stmts(s, c.Stmts, d)
	case *syntax.IfClause:
		if err := compound(); err != nil {
			return err
		}
		for ic := c; ic != nil; ic = ic.Else {
			if err := w.stmts(s, ic.Cond, d); err != nil {
				return err
			}
			if err := w.stmts(s, ic.Then, d); err != nil {
				return err
			}
		}
		return nil
	case *syntax.WhileClause:
		if err := compound(); err != nil {
			return err
		}
		s.repeats = true
		if err := w.stmts(s, c.Cond, d); err != nil {
			return err
		}
		return w.stmts(s, c.Do, d)
	case *syntax.ForClause:
		if err := compound(); err != nil {
			return err
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, x := range l.Items {
				if err := w.word(s, x, d); err != nil {
					return err
				}
				if err := w.subIn(s, x, "for"); err != nil {
					return err
				}
			}
			// The loop sets its variable: for PS4 in '$(…)' is PS4='$(…)'.
			if l.Name != nil && (isExecEnv(l.Name.Value) || slices.Contains(evalVars, l.Name.Value)) {
				if err := w.emit(s, SimpleCommand{Text: "for " + l.Name.Value + " in …", Pos: s.pos(c.Pos()),
					Assigns: []Assign{{Name: l.Name.Value, Value: Word{Text: "(each word of the loop)", single: true}}}}); err != nil {
					return err
				}
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if err := w.arithm(s, x, d); err != nil {
					return err
				}
			}
		}
		s.repeats = true
		return w.stmts(s, c.Do, d)
	case *syntax.CaseClause:
		if err := compound(); err != nil {
			return err
		}
		if err := w.word(s, c.Word, d); err != nil {
			return err
		}
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				if err := w.word(s, p, d); err != nil {
					return err
				}
			}
			if err := w.stmts(s, it.Stmts, d); err != nil {
				return err
			}
		}
		return nil
	case *syntax.FuncDecl:
		if w.funcs == nil {
			w.funcs = map[string]bool{}
		}
		w.funcs[c.Name.Value] = true
		// A function's body counts whether or not it is called.
		if err := compound(); err != nil {
			return err
		}
		s.repeats = true
		return w.stmt(s, c.Body, d)
	case *syntax.ArithmCmd:
		if err := compound(); err != nil {
			return err
		}
		return w.arithm(s, c.X, d)
	case *syntax.TestClause:
		if err := compound(); err != nil {
			return err
		}
		return w.test(s, c.X, d)
	case *syntax.DeclClause:
		return w.decl(s, st, c, redirs, depth)
	case *syntax.LetClause:
		if err := compound(); err != nil {
			return err
		}
		for _, x := range c.Exprs {
			if err := w.arithm(s, x, d); err != nil {
				return err
			}
		}
		return nil
	case *syntax.TimeClause:
		if err := compound(); err != nil {
			return err
		}
		return w.stmt(s, c.Stmt, d)
	case *syntax.CoprocClause:
		if err := compound(); err != nil {
			return err
		}
		if c.Name != nil {
			if err := w.word(s, c.Name, d); err != nil {
				return err
			}
		}
		return w.stmt(s, c.Stmt, d)
	case *syntax.TestDecl:
		if err := compound(); err != nil {
			return err
		}
		if c.Description != nil {
			if err := w.word(s, c.Description, d); err != nil {
				return err
			}
		}
		return w.stmt(s, c.Body, d)
	default:
		// A construct this walker does not know: refuse rather than
		// miss what it holds.
		return fmt.Errorf("%w: unsupported construct %T", ErrSyntax, c)
	}
}

// call handles a simple command: its words, assignments and
// redirections.
func (w *walker) call(s scope, st *syntax.Stmt, ce *syntax.CallExpr, redirs []Redirect, depth int) error {
	c := SimpleCommand{Redirects: redirs, Pos: s.pos(ce.Pos())}
	for _, a := range ce.Assigns {
		as, err := w.assign(s, a, depth)
		if err != nil {
			return err
		}
		c.Assigns = append(c.Assigns, as...)
	}
	for _, x := range ce.Args {
		if err := w.word(s, x, depth); err != nil {
			return err
		}
		c.Words = append(c.Words, s.conv(x))
	}
	c.Text = stmtText(s, st, ce)
	return w.simple(s, c, stdinOf(s, st), depth)
}

// stmtText is the text of a simple command with its redirections, without
// the statement's terminator.
func stmtText(s scope, st *syntax.Stmt, cmd syntax.Node) string {
	from, to := cmd.Pos(), cmd.End()
	for _, r := range st.Redirs {
		if r.Pos().Offset() < from.Offset() {
			from = r.Pos()
		}
		if r.End().Offset() > to.Offset() {
			to = r.End()
		}
	}
	return s.text(from, to)
}

// assign walks an assignment's substitutions and converts it.
func (w *walker) assign(s scope, a *syntax.Assign, depth int) ([]Assign, error) {
	if a.Index != nil {
		if err := w.arithm(s, a.Index, depth+1); err != nil {
			return nil, err
		}
	}
	var out []Assign
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	if a.Value != nil {
		if err := w.word(s, a.Value, depth); err != nil {
			return nil, err
		}
		if !a.Naked {
			out = append(out, Assign{Name: name, Value: s.conv(a.Value)})
		}
	} else if a.Array == nil && !a.Naked {
		out = append(out, Assign{Name: name, Value: Word{Literal: true, single: true}})
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				if err := w.arithm(s, e.Index, depth+1); err != nil {
					return nil, err
				}
			}
			if e.Value != nil {
				if err := w.word(s, e.Value, depth); err != nil {
					return nil, err
				}
				out = append(out, Assign{Name: name, Value: s.conv(e.Value)})
			}
		}
	}
	return out, nil
}

// decl handles declare, export, local, readonly, typeset and nameref.
func (w *walker) decl(s scope, st *syntax.Stmt, dc *syntax.DeclClause, redirs []Redirect, depth int) error {
	c := SimpleCommand{Redirects: redirs, Pos: s.pos(dc.Pos()), Text: stmtText(s, st, dc)}
	c.Words = []Word{{Text: dc.Variant.Value, Literal: true, single: true, lead: dc.Variant.Value}}
	for _, a := range dc.Args {
		as, err := w.assign(s, a, depth)
		if err != nil {
			return err
		}
		c.Assigns = append(c.Assigns, as...)
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			// An option (-n, -x) or an argument known only at run time:
			// kept as a word for the rules that read names (varWriter).
			v := s.conv(a.Value)
			if !v.Literal && c.Dynamic == nil {
				c.Dynamic = &Opaque{At: len(c.Words), Why: dc.Variant.Value + " is given an argument that is not a literal: it may set any variable"}
			}
			c.Words = append(c.Words, v)
		case a.Naked && a.Name != nil:
			// export NAME, declare -x NAME: a name without a value.
			c.Words = append(c.Words, Word{Text: a.Name.Value, Literal: true, single: true, lead: a.Name.Value})
		}
	}
	c.Name = dc.Variant.Value
	return w.emit(s, c)
}

// word walks the substitutions inside a word.
func (w *walker) word(s scope, x *syntax.Word, depth int) error {
	if x == nil {
		return nil
	}
	return w.parts(s, x.Parts, depth)
}

func (w *walker) parts(s scope, ps []syntax.WordPart, depth int) error {
	d := depth + 1
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			if err := w.parts(s, p.Parts, depth); err != nil {
				return err
			}
		case *syntax.CmdSubst:
			if d > MaxDepth {
				return tooDeep()
			}
			if err := w.stmts(s, p.Stmts, d); err != nil {
				return err
			}
		case *syntax.ProcSubst:
			if d > MaxDepth {
				return tooDeep()
			}
			if err := w.stmts(s, p.Stmts, d); err != nil {
				return err
			}
		case *syntax.ArithmExp:
			if err := w.arithm(s, p.X, d); err != nil {
				return err
			}
		case *syntax.ParamExp:
			if d > MaxDepth {
				return tooDeep()
			}
			if p.Index != nil {
				if err := w.arithm(s, p.Index, d); err != nil {
					return err
				}
			}
			if p.Slice != nil {
				if err := w.arithm(s, p.Slice.Offset, d); err != nil {
					return err
				}
				if err := w.arithm(s, p.Slice.Length, d); err != nil {
					return err
				}
			}
			if p.Repl != nil {
				if err := w.word(s, p.Repl.Orig, d); err != nil {
					return err
				}
				if err := w.word(s, p.Repl.With, d); err != nil {
					return err
				}
			}
			if p.Exp != nil {
				if err := w.word(s, p.Exp.Word, d); err != nil {
					return err
				}
			}
			if p.NestedParam != nil {
				if err := w.parts(s, []syntax.WordPart{p.NestedParam}, d); err != nil {
					return err
				}
			}
		case *syntax.BraceExp:
			for _, e := range p.Elems {
				if err := w.word(s, e, d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// arithm walks the words of an arithmetic expression, iteratively.
func (w *walker) arithm(s scope, x syntax.ArithmExpr, depth int) error {
	if depth > MaxDepth {
		return tooDeep()
	}
	var err error
	arithLeaves(x, func(e syntax.ArithmExpr) bool {
		if e, ok := e.(*syntax.Word); ok {
			if err = w.word(s, e, depth); err == nil {
				err = w.lateIn(s, e, "arithmetic")
			}
		}
		return err == nil
	})
	return err
}

// arithLeaves calls leaf, iteratively, with each node of an arithmetic
// expression that is not an operator (words), and with zsh's flags
// before the expression they hold, until leaf returns false.
func arithLeaves(x syntax.ArithmExpr, leaf func(syntax.ArithmExpr) bool) {
	stack := []syntax.ArithmExpr{x}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *syntax.BinaryArithm:
			stack = append(stack, e.Y, e.X)
		case *syntax.UnaryArithm:
			stack = append(stack, e.X)
		case *syntax.ParenArithm:
			stack = append(stack, e.X)
		case *syntax.FlagsArithm:
			if !leaf(e) {
				return
			}
			stack = append(stack, e.X)
		case nil:
		default:
			if !leaf(e) {
				return
			}
		}
	}
}

// lateIn records, as a command known only at run time, a word of a
// [[ ]] test or of arithmetic that bash evaluates as a name or
// arithmetic with what quoting kept in it ($( ` $[ ${): a subscript in
// it runs a command substitution (bash before 5.2 more often than
// after).
func (w *walker) lateIn(s scope, x *syntax.Word, what string) error {
	return w.opaqueWord(s, x, what, s.conv(x).late, "quoted text that bash evaluates after all as a name or arithmetic: a command substitution in a subscript runs")
}

// subIn records, as a command known only at run time, a word that is
// not a command's (a for loop's list) with a command substitution in a
// subscript in its quoted text (Word.sub): for OPTIND in 'a[$(cmd)]'
// runs cmd (a re-test).
func (w *walker) subIn(s scope, x *syntax.Word, what string) error {
	return w.opaqueWord(s, x, what, s.conv(x).sub, "quoted text with a command substitution in a subscript, which bash runs if the loop's variable is an integer or an array")
}

// opaqueWord emits, when found, a command named what whose word x is
// known only at run time, for why.
func (w *walker) opaqueWord(s scope, x *syntax.Word, what string, found bool, why string) error {
	if !found {
		return nil
	}
	text := s.text(x.Pos(), x.End())
	return w.emit(s, SimpleCommand{Words: []Word{lit(what)}, Pos: s.pos(x.Pos()), Text: text,
		Dynamic: &Opaque{At: 0, Why: what + " is given " + quotedWord(text) + ", " + why}})
}

// test walks the words of a [[ ]] expression, iteratively.
func (w *walker) test(s scope, x syntax.TestExpr, depth int) error {
	if depth > MaxDepth {
		return tooDeep()
	}
	stack := []syntax.TestExpr{x}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *syntax.BinaryTest:
			switch e.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, x := range []syntax.TestExpr{e.X, e.Y} {
					if x, ok := x.(*syntax.Word); ok {
						if err := w.lateIn(s, x, "[["); err != nil {
							return err
						}
					}
				}
			}
			stack = append(stack, e.Y, e.X)
		case *syntax.UnaryTest:
			if x, ok := e.X.(*syntax.Word); ok && (e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar) {
				if err := w.lateIn(s, x, "[["); err != nil {
					return err
				}
			}
			stack = append(stack, e.X)
		case *syntax.ParenTest:
			stack = append(stack, e.X)
		case *syntax.Word:
			if err := w.word(s, e, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit records a command (one outside the automatic subset among
// outside).
func (w *walker) emit(s scope, c SimpleCommand) error {
	if len(w.out)+len(w.outside) >= MaxCommands {
		return fmt.Errorf("%w: more than %d", ErrTooMany, MaxCommands)
	}
	if len(s.layers) > 0 || len(c.Wrappers) > 0 {
		c.Wrappers = append(slices.Clip(s.layers), c.Wrappers...)
	}
	w.words += len(c.Words) + len(c.Assigns) + len(c.Redirects)
	for _, l := range c.Wrappers {
		w.words += len(l.Words)
	}
	if w.words > MaxWords {
		return fmt.Errorf("%w: more than %d words in all, each command's counted with those of the wrappers and strings it runs under", ErrTooMany, MaxWords)
	}
	if len(c.Words) > 0 && c.Words[0].Literal {
		c.Name = commandName(c.Words[0].Text)
	}
	c.repeats = c.repeats || s.repeats
	if c.outside != nil {
		w.outside = append(w.outside, c)
		return nil
	}
	w.out = append(w.out, c)
	return nil
}

// nested walks a string that command c runs as shell code (bash -c,
// eval, trap, su -c, ...); the string is c.Words[at] or made from the
// words from there on. Its commands run under the layers so far plus the
// one running it. A string that does not parse sets c.Dynamic instead:
// bash may read what the parser does not.
func (w *walker) nested(s scope, c *SimpleCommand, name string, at int, text string, depth int) error {
	pos := c.Pos
	inner := scope{at: &pos}
	for _, l := range append(slices.Clip(s.layers), c.Wrappers...) {
		l.off = -1
		inner.layers = append(inner.layers, l)
	}
	inner.layers = append(inner.layers, Layer{Name: name, Words: c.Words, off: -1})
	n, m := len(w.out), len(w.outside)
	// Code that sh runs is read as dash reads it, and as bash does
	// when the two differ (/bin/sh is either): $'…' is not a quote to
	// dash (a hunt: sh <<'EOF' ran a line that bash reads as quoted
	// text); bash runs bash -c's, and eval's and trap's are read as the
	// code around them is.
	both := false
	inner.posix = s.posix
	switch runner, _, _ := strings.Cut(name, " "); runner {
	case "bash", "rbash":
		inner.posix = false
	case "eval", "trap":
	default:
		inner.posix, both = true, true
	}
	err := w.source(inner, text, depth+1)
	if err == nil && both {
		err = w.parses(2 * len(text)) // sameParse's
	}
	if err == nil && both && !sameParse(text) {
		inner.posix = false
		err = w.source(inner, text, depth+1)
	}
	switch {
	case err == nil:
		c.code = [2]int{at, at + 1}
		return nil
	case errors.Is(err, ErrSyntax):
		w.out, w.outside = w.out[:n], w.outside[:m] // nothing of the failed string is kept
		if c.Dynamic == nil {
			c.Dynamic = &Opaque{At: at, Why: "the code " + name + " runs does not parse (" + err.Error() + ")"}
		}
		return nil
	default:
		return err
	}
}

// sameParse reports whether bash and POSIX sh read text alike (the
// same program, printed); a text one of them cannot parse is not read
// alike.
func sameParse(text string) bool {
	var out [2]strings.Builder
	for i, l := range []syntax.LangVariant{syntax.LangPOSIX, syntax.LangBash} {
		f, err := syntax.NewParser(syntax.Variant(l)).Parse(strings.NewReader(text), "")
		if err != nil || syntax.NewPrinter().Print(&out[i], f) != nil {
			return false
		}
	}
	return out[0].String() == out[1].String()
}
