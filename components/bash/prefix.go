package bash

import (
	"path"
	"slices"
	"strings"
)

// An approval prefix is a promise that what it names never runs without
// the person's yes, so it is matched erring towards a match: a command
// asked about that is not the prefix costs a question, one run unasked
// that is costs the promise. Auto prefixes, which grant, stay literal
// (startsWith).

// mayStartWith reports whether the words ws may start with the prefix pw
// when they run (a review: make "$x" ran make deploy, approval-listed,
// with x=deploy). The command word must be pw's first word (one that is
// not a literal is builtin.dynamic on its own). After it the prefix's
// options and its other words (operands) are matched apart:
//
//   - an operand in order, as in startsWith, but where an option or a
//     NAME=value stands in place of the prefix's word, or the prefix's
//     word is one, the rest may come later among any words: getopt
//     permutes, an option may take the next word as its value (or hold
//     it: -uroot), and make takes its variables anywhere (make -C dir
//     deploy, make X=1 deploy). For a program whose operands are each a
//     target it runs (targetRunners: make all deploy runs deploy), each
//     operand may be any of the words, in any order;
//   - each option anywhere (optionLiteral), in any spelling the program
//     may read as it (git push -f, --forc or --force-with-lease for
//     "git push --force"; rm -r -f, -fr or --recursive --force for
//     "rm -rf");
//   - a word known only at run time (not a literal, or holding what
//     xargs -I or find fills in) may be an operand if its literal start
//     allows, or any option if it may start one; one that may split into
//     several words (unquoted) may be all the rest of the prefix;
//   - words xargs adds after the last (more) may complete it.
//
// Any other literal word that differs where an operand is due, before an
// option or NAME=value, ends the match, as in startsWith.
func mayStartWith(ws []Word, pw []string, fills []fill, more bool) bool {
	if len(ws) == 0 || !startsWith(ws[:1], pw[:1]) {
		return false
	}
	as := prefixArgs(ws[1:], fills)
	opts, operands := splitPrefix(pw[1:])
	// The prefix's words the literal words do not make, each needing a
	// word known only at run time of its own (its index in as).
	tool, sub := path.Base(pw[0]), ""
	if len(operands) > 0 {
		sub = operands[0]
	}
	// The options as are also by the program's own tables (tar -x is
	// --extract), beside them for the prefix's options alone: they are
	// no words for its operands.
	optAs := append(slices.Clip(as), synonymArgs(as, tool, sub)...)
	var need [][]int
	for _, o := range opts {
		if !optionLiteral(optAs, o) {
			need = append(need, unknowns(as, arg.mayBeOption))
		}
	}
	if targetRunners[tool] {
		if slices.ContainsFunc(as, func(a arg) bool { return !a.known && a.many }) {
			return true // it may be all the prefix
		}
		for _, x := range operands {
			may := func(a arg) bool { return a.mayBeTarget(tool, x) }
			if !slices.ContainsFunc(as, func(a arg) bool { return a.known && may(a) }) {
				need = append(need, unknowns(as, may))
			}
		}
		return more || matchAll(need)
	}
	for _, ops := range spellings(tool, operands) {
		for _, f := range argForms(tool, as) {
			spent, ok, all := inOrder(f, ops, more, tool)
			if all || ok && more || ok && len(need) <= len(unknowns(f, arg.mayBeOption))-spent {
				return true
			}
		}
	}
	return false
}

// inOrder matches the prefix's operands in order against as, as
// mayStartWith says: ok when they may all be there, with spent the
// fewest words known only at run time that may be options taken for
// them; all when a word that may split into several may be all the rest
// of the prefix; with more (xargs adds words) ok when they may be
// there or come after the last. Each word may be the next operand or,
// once an option or NAME=value has been passed (loose), a word in
// between; a word known only at run time that may be an option is one.
//
// For a program that abbreviates (npm), the first operand, the
// subcommand, is also any start of it or its camel-case spelling (npm
// pub, npm runScript) that is no other subcommand's spelling (npm r is
// uninstall, not run).
func inOrder(as []arg, operands []string, more bool, tool string) (spent int, ok, all bool) {
	// cost[2*k+l]: the fewest spent with k operands matched, l 1 when
	// loose; -1 where no match gets there.
	n := 2 * (len(operands) + 1)
	cost, next := make([]int, n), make([]int, n)
	for i := range cost {
		cost[i] = -1
	}
	cost[0] = 0
	keep := func(i, c int) {
		if next[i] < 0 || c < next[i] {
			next[i] = c
		}
	}
	for _, a := range as {
		for i := range next {
			next[i] = -1
		}
		for i, c := range cost {
			k, l := i/2, i%2
			if c < 0 {
				continue
			}
			if k == len(operands) {
				keep(i, c)
				continue
			}
			x := operands[k]
			switch {
			case a.known && (a.text == x || holdsValue(a.text, x) || k == 0 && abbreviates(tool, a.text, x)):
				keep(i+2, c)
			case !a.known && strings.HasPrefix(x, a.text):
				if a.many {
					return 0, true, true
				}
				if a.mayBeOption() {
					keep(i+2, c+1)
				} else {
					keep(i+2, c)
				}
			}
			if l == 0 && !movable(a.text) && !movable(x) && !a.mayBeOption() {
				continue
			}
			if a.many && !a.known {
				return 0, true, true // its later words may be the rest
			}
			keep(2*k+1, c)
		}
		cost, next = next, cost
	}
	spent = -1
	for i, c := range cost {
		if c >= 0 && (i/2 == len(operands) || more) && (spent < 0 || c < spent) {
			spent = c
		}
	}
	return spent, spent >= 0, false
}

// unknowns are the indexes of the words of as known only at run time,
// each one word, that may be what may takes.
func unknowns(as []arg, may func(arg) bool) []int {
	var out []int
	for i, a := range as {
		if !a.known && !a.many && may(a) {
			out = append(out, i)
		}
	}
	return out
}

// matchAll reports whether each of need may have a word of its own
// among its candidates (augmenting paths: need is a prefix's words,
// few).
func matchAll(need [][]int) bool {
	owner := map[int]int{}
	var take func(d int, seen map[int]bool) bool
	take = func(d int, seen map[int]bool) bool {
		for _, c := range need[d] {
			if seen[c] {
				continue
			}
			seen[c] = true
			if o, ok := owner[c]; !ok || take(o, seen) {
				owner[c] = d
				return true
			}
		}
		return false
	}
	for d := range need {
		if !take(d, map[int]bool{}) {
			return false
		}
	}
	return true
}

// arg is a word after the command word as mayStartWith reads it: text
// is the literal text, or the literal start of a word known only at run
// time (known false); many: it may split into several words; syn: an
// option another word is by the program's own tables (synonymArgs); a
// long one stands for itself alone (no start of it, no short option of
// its initial: tar -z's --ungzip is no -U).
type arg struct {
	text             string
	known, many, syn bool
}

// prefixArgs are ws as mayStartWith reads them, --name=value (and
// -name=value) as two words (--name value), which programs read alike.
func prefixArgs(ws []Word, fills []fill) []arg {
	var out []arg
	for _, w := range ws {
		a := arg{text: w.Text, known: w.Literal, many: !w.single}
		if !a.known {
			a.text = w.lead
		}
		if f, ok := holdsFill(w.Text, fills); ok {
			a.text, a.known = a.text[:min(len(a.text), strings.Index(w.Text, f.s))], false
		}
		if name, val, ok := strings.Cut(a.text, "="); ok && len(name) > 1 && name[0] == '-' {
			out = append(out, arg{text: name, known: true}, arg{text: val, known: a.known, many: a.many})
			continue
		}
		out = append(out, a)
	}
	return out
}

// splitPrefix splits a prefix's words after the first into its options
// and its operands (in order), --name=value (and -name=value) into the
// option --name and the operand value.
func splitPrefix(pw []string) (opts, operands []string) {
	for _, x := range pw {
		name, val, ok := strings.Cut(x, "=")
		switch {
		case len(name) < 2 || name[0] != '-' || name == "--":
			operands = append(operands, x)
		case ok:
			opts, operands = append(opts, name), append(operands, val)
		default:
			opts = append(opts, x)
		}
	}
	return opts, operands
}

// movable reports a word that programs commonly take anywhere among
// their operands: one that starts like an option ("-x", "--name", "--")
// or sets a variable (make's NAME=value).
func movable(s string) bool { return len(s) > 1 && s[0] == '-' || strings.Contains(s, "=") }

// holdsValue reports a group of short options that may end in x as the
// value of its last option (sudo -uroot for "sudo -u root").
func holdsValue(s, x string) bool {
	return len(s) > len(x)+1 && s[0] == '-' && s[1] != '-' && strings.HasSuffix(s, x)
}

// targetRunners are the programs whose operands are each a target, task
// or goal they run, in any order: make all deploy runs deploy as make
// deploy does, mvn clean deploy deploys, gradle build publish publishes.
// Their approval prefixes' words after the command may each be any of
// the command's words. Other programs read their first operand as a
// subcommand and the rest as its arguments (kubectl get pod delete gets
// the pod named delete; npm run build deploy runs build with the
// argument deploy), so their prefixes are matched in order.
var targetRunners = map[string]bool{
	"make": true, "gmake": true, "bmake": true, "remake": true, "ninja": true,
	"mvn": true, "mvnw": true, "gradle": true, "gradlew": true, "ant": true,
	"rake": true, "just": true, "task": true, "mage": true, "invoke": true,
	"inv": true, "fab": true, "doit": true, "grunt": true, "gulp": true,
	"sbt": true, "scons": true, "npm-run-all": true, "run-s": true,
	"run-p": true, "turbo": true,
}

// mayBeTarget reports whether a may name the target x of tool: as
// written, or as tool reads a target's name (make ./deploy and make
// .DEFAULT_GOAL=deploy are make deploy; rake deploy[prod] runs deploy; gradle runs :app:deploy,
// dep and dP as deploy and deployProd when no other task's name fits).
func (a arg) mayBeTarget(tool, x string) bool {
	t := a.text
	switch tool {
	case "make", "gmake", "bmake", "remake":
		// make .DEFAULT_GOAL=deploy (also +=, ?=) runs deploy when no
		// goal is given (a nineteenth hunt).
		if n, v, ok := strings.Cut(t, "="); ok && strings.TrimRight(n, ":!+?") == ".DEFAULT_GOAL" {
			t = v
		}
		for strings.HasPrefix(t, "./") {
			t = t[2:]
		}
	case "rake":
		t, _, _ = strings.Cut(t, "[")
	case "gradle", "gradlew":
		return gradleAbbrev(t[strings.LastIndexByte(t, ':')+1:], x) || a.known && holdsValue(a.text, x)
	}
	if !a.known {
		return strings.HasPrefix(x, t)
	}
	return t == x || holdsValue(a.text, x)
}

// gradleAbbrev reports whether gradle may read s as the task x: its
// name, or each of its camel-case pieces a start of x's in turn (p, pub,
// pTML for publishToMavenLocal), in any case; also the start of a word
// known only at run time. An empty s may be anything.
func gradleAbbrev(s, x string) bool {
	xs := camelPieces(x)
	for i, p := range camelPieces(s) {
		if i >= len(xs) || !strings.HasPrefix(strings.ToLower(xs[i]), strings.ToLower(p)) {
			return false
		}
	}
	return true
}

// camelPieces splits a name before each upper-case letter and at each
// '-' (publishToMavenLocal: publish To Maven Local).
func camelPieces(s string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || s[i] >= 'A' && s[i] <= 'Z' || s[i] == '-' {
			if p := strings.TrimPrefix(s[start:i], "-"); p != "" {
				out = append(out, p)
			}
			start = i
		}
	}
	return out
}

// mayBeOption reports a word known only at run time that may start
// with an option: its literal start is empty or starts with '-'.
func (a arg) mayBeOption() bool {
	return !a.known && (a.text == "" || a.text[0] == '-')
}

// optionLiteral reports whether the literal words of as hold the
// prefix's option o, in any order, in a spelling the program may read
// as it. The program's own table of options is not known, so:
//
//   - a long option --NAME is also any start of its name (GNU getopt,
//     git and Python's argparse take a unique prefix: --forc), a longer
//     option that starts NAME- (--force-with-lease, --force-if-includes
//     for --force; --delete-after for --delete) and a short option whose
//     letter starts NAME in either case (-f for --force, -R for
//     --recursive), alone or in a group (-vf);
//   - a group of short options (-rf) is each of its letters, anywhere,
//     alone or in any group (-r -f, -fr, -Rfv), or as a long option whose
//     name starts with the letter (--recursive --force);
//   - -NAME is also --NAME (Go's flag package and others read both:
//     terraform -auto-approve);
//   - -XVALUE is also -X VALUE, the short option X given the value
//     apart (mvn -P release for -Prelease; -D skip=true for -Dskip).
func optionLiteral(as []arg, o string) bool {
	if name, ok := strings.CutPrefix(o, "--"); ok {
		return longSeen(as, name, true)
	}
	if longSeen(as, o[1:], false) {
		return true // -NAME as --NAME
	}
	if len(o) > 2 && letterSeen(as, o[1]) && slices.ContainsFunc(as, func(a arg) bool {
		return a.known && (a.text == o[2:] || strings.HasPrefix(a.text, o[2:]+"="))
	}) {
		return true // -XVALUE as -X VALUE (mvn -P release for -Prelease)
	}
	for i := 1; i < len(o); i++ {
		if !isAlnum(o[i]) || !letterSeen(as, o[i]) {
			return false
		}
	}
	return true
}

// longSeen reports a word of as that may be the long option name (see
// optionLiteral): --NAME, a start of it, a longer NAME-…, or -NAME; with
// short, also a short option whose letter starts name.
func longSeen(as []arg, name string, short bool) bool {
	for _, a := range as {
		if !a.known || len(a.text) < 2 || a.text[0] != '-' || a.text == "--" {
			continue
		}
		long, ok := strings.CutPrefix(a.text, "--")
		switch {
		case a.syn && ok:
			if long == name {
				return true
			}
		case ok && (strings.HasPrefix(name, long) || strings.HasPrefix(long, name+"-")):
			return true
		case !ok && a.text[1:] == name:
			return true
		case !ok && short && strings.IndexFunc(a.text[1:], func(r rune) bool { return r < 128 && sameLetter(byte(r), name[0]) }) >= 0:
			return true
		}
	}
	return false
}

// letterSeen reports a word of as that may be the short option letter:
// alone, in a group, or a long option whose name starts with it.
func letterSeen(as []arg, letter byte) bool {
	for _, a := range as {
		if !a.known || len(a.text) < 2 || a.text[0] != '-' || a.text == "--" {
			continue
		}
		if a.syn && a.text[1] == '-' {
			continue
		}
		if long, ok := strings.CutPrefix(a.text, "--"); ok {
			if sameLetter(long[0], letter) {
				return true
			}
			continue
		}
		if strings.IndexFunc(a.text[1:], func(r rune) bool { return r < 128 && sameLetter(byte(r), letter) }) >= 0 {
			return true
		}
	}
	return false
}

func sameLetter(a, b byte) bool { return a == b || isAlnum(a) && isAlnum(b) && a|0x20 == b|0x20 }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
