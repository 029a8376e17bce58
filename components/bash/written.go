package bash

import (
	"slices"
	"strings"
	"sync"
)

// Which of a program's words it writes, read as the program reads them,
// so that a write to a path its worker has read-only is refused at once
// (workerReadOnly, futile) rather than put to the person, whose yes
// could not make it. Only what is certain counts: where the reading is
// not (an option the table does not hold, a word known only at run
// time where an option may stand, an option after an operand, which
// POSIXLY_CORRECT would make an operand), no word is taken to be
// written, and the command is asked about as before.

// writtenSpec is how a GNU program reads its words: getopt_long with
// the options anywhere before "--", short options grouped, a long
// option by any prefix that names one alone.
type writtenSpec struct {
	// short are the short options: a letter followed by ':' takes a
	// value (the rest of its word, or the next word), by "::" an
	// optional one (the rest of its word only).
	short string
	// long are the long options, space-separated: "name" takes no
	// value, "name:" one (after '=', or the next word), "name?" an
	// optional one (after '=' only); "/x" after it names the short
	// option it is.
	long string
	// form says which operands are written.
	form writtenForm
	// unsure are the options (a short letter, or "--name" for a long
	// option with none) that make the write uncertain: a program run
	// (install --strip-program), links followed out of the tree
	// (chown -L).
	unsure string
}

type writtenForm int

const (
	// intoLast: -t's own word (--target-directory), or else the last of
	// two or more operands (cp, mv, ln, install).
	intoLast writtenForm = iota
	// allOperands: touch, mkdir, truncate, tee.
	allOperands
	// afterMode: every operand after the first (chmod's MODE, chown's
	// OWNER), every one with --reference or, for chmod, a mode given as
	// an option (chmod -x FILE).
	afterMode
	// inPlace: with -i (--in-place), sed's input files: the operands
	// after the script, which is the first unless -e or -f gives one.
	inPlace
)

var writtenSpecs = sync.OnceValue(func() map[string]writtenSpec {
	owner := "changes/c dereference no-dereference/h no-preserve-root preserve-root quiet/f silent/f recursive/R reference: verbose/v"
	return map[string]writtenSpec{
		"cp": {short: "abdfHilLnprst:uvxPRS:TZ", form: intoLast,
			long: "archive/a attributes-only backup? copy-contents dereference/L force/f interactive/i link/l no-clobber/n " +
				"no-dereference/P no-preserve: no-target-directory/T one-file-system/x parents path preserve? recursive/R reflink? " +
				"remove-destination sparse: strip-trailing-slashes suffix:/S symbolic-link/s target-directory:/t update/u verbose/v context?"},
		"mv": {short: "bfint:uvS:TZ", form: intoLast,
			long: "backup? context/Z force/f interactive/i no-clobber/n no-target-directory/T strip-trailing-slashes suffix:/S " +
				"target-directory:/t update/u verbose/v"},
		"ln": {short: "bdfinrst:vFLPS:T", form: intoLast,
			long: "backup? directory/d force/f interactive/i logical/L no-dereference/n no-target-directory/T physical/P " +
				"relative/r suffix:/S symbolic/s target-directory:/t verbose/v"},
		"install": {short: "bcCsDdg:m:o:pt:TvS:Z", form: intoLast, unsure: "--strip-program",
			long: "backup? compare/C context? directory/d group:/g mode:/m no-target-directory/T owner:/o preserve-timestamps/p " +
				"preserve-context strip/s strip-program: suffix:/S target-directory:/t verbose/v"},
		"touch":    {short: "acd:fhmr:t:", form: allOperands, long: "time: no-create/c date:/d reference:/r no-dereference/h"},
		"mkdir":    {short: "pm:vZ", form: allOperands, long: "context? mode:/m parents/p verbose/v"},
		"truncate": {short: "cor:s:", form: allOperands, long: "no-create/c io-blocks/o reference:/r size:/s"},
		"tee":      {short: "aip", form: allOperands, long: "append/a ignore-interrupts/i output-error?"},
		"chmod": {short: "Rcfv", form: afterMode,
			long: "changes/c recursive/R no-preserve-root preserve-root quiet/f silent/f reference: verbose/v"},
		"chown": {short: "HLPRcfhv", form: afterMode, unsure: "H L --dereference", long: owner + " from:"},
		"chgrp": {short: "HLPRcfhv", form: afterMode, unsure: "H L --dereference", long: owner},
		"sed": {short: "bsnrzuEe:f:l:i::", form: inPlace,
			long: "binary/b regexp-extended/r debug expression:/e file:/f in-place?/i line-length:/l null-data/z " +
				"zero-terminated/z quiet/n posix silent/n sandbox separate/s unbuffered/u follow-symlinks"},
	}
})

// chmodModes are the letters chmod takes as a mode where an option
// stands (chmod -x FILE, -w,u+r): its getopt gives each an optional
// value, so the whole word is the mode.
const chmodModes = "rwxXstugoa,+=01234567"

// optSeen is an option a program was given, the last time: at is the
// index of its value's word, or -1 (no value, or one in the option's
// own word); val is the value.
type optSeen struct {
	at  int
	val string
}

// gnuRead reads ws as getopt_long does with sp: the indexes of the
// operands, the options given (by short letter, or "--name"), and to,
// the index of the first word from which the reading is not certain
// (len(ws) when none is): a word that is not a literal where an option
// may stand, or a value that may split into several, an option sp does
// not hold, a long option's prefix that names several, a value that is
// missing or not allowed, an option after an operand. Reading stops
// there. mode: chmod took a mode from an option word.
func gnuRead(ws []Word, sp writtenSpec, chmod bool) (operands []int, opts map[string]optSeen, to int, mode bool) {
	opts = map[string]optSeen{}
	value := func(j int) bool { return j < len(ws) && ws[j].single }
	i := 1
	for ; i < len(ws); i++ {
		w := ws[i]
		t := w.Text
		switch {
		case !w.Literal && w.mayBeOption():
			return operands, opts, i, mode
		case !w.Literal || t == "-" || !strings.HasPrefix(t, "-"):
			operands = append(operands, i)
			continue
		case len(operands) > 0:
			return operands, opts, i, mode
		case t == "--":
			for i++; i < len(ws); i++ {
				operands = append(operands, i)
			}
			return operands, opts, i, mode
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			key, arg, ok := longOption(sp.long, name)
			switch {
			case !ok || arg == 0 && eq:
				return operands, opts, i, mode
			case eq:
				opts[key] = optSeen{-1, val}
			case arg == ':':
				if !value(i + 1) {
					return operands, opts, i, mode
				}
				i++
				opts[key] = optSeen{i, ws[i].Text}
			default:
				opts[key] = optSeen{-1, ""}
			}
		default:
		letters:
			for k := 1; k < len(t); k++ {
				c := t[k]
				at := strings.IndexByte(sp.short, c)
				if c == ':' || at < 0 {
					if chmod && k == 1 && strings.IndexByte(chmodModes, c) >= 0 {
						mode = true // the whole word is the mode
						break letters
					}
					return operands, opts, i, mode
				}
				rest := sp.short[at+1:]
				switch colons := len(rest) - len(strings.TrimLeft(rest, ":")); {
				case colons == 0:
					opts[string(c)] = optSeen{-1, ""}
					continue letters
				case k+1 < len(t):
					opts[string(c)] = optSeen{-1, t[k+1:]}
				case colons == 2:
					opts[string(c)] = optSeen{-1, ""}
				case !value(i + 1):
					return operands, opts, i, mode
				default:
					i++
					opts[string(c)] = optSeen{i, ws[i].Text}
				}
				break letters // the value ends the word
			}
		}
	}
	return operands, opts, i, mode
}

// longOption finds name, or the one long option of list it is a prefix
// of (several that are one short option count as one): its key (the
// short letter, or "--name"), and ':' or '?' when it takes a value.
func longOption(list, name string) (key string, arg byte, ok bool) {
	if name == "" {
		return "", 0, false
	}
	for _, exact := range []bool{true, false} {
		found := 0
		for e := range strings.FieldsSeq(list) {
			n, short, _ := strings.Cut(e, "/")
			a := byte(0)
			if l := n[len(n)-1]; l == ':' || l == '?' {
				n, a = n[:len(n)-1], l
			}
			if exact && n != name || !exact && !strings.HasPrefix(n, name) {
				continue
			}
			k := short
			if k == "" {
				k = "--" + n
			}
			if found > 0 && (k != key || a != arg) {
				return "", 0, false // ambiguous: getopt_long refuses it
			}
			key, arg, found = k, a, found+1
		}
		if found > 0 {
			return key, arg, true
		}
	}
	return "", 0, false
}

// writtenWords are the words sc certainly writes and only writes, by
// index: the whole word (a path an option's word holds after the
// option, -t.vscode, is not one), or for dd its last of= operand's
// value. None when the program is not one the analyzer reads so, runs
// under busybox or toybox (their applets' options are not GNU's) or a
// package runner, or is a function the line defines,
// or where which word is written is not certain (gnuRead).
func writtenWords(sc *SimpleCommand) map[int]Word {
	name := baseName(sc)
	if sc.line.funcs[name] {
		return nil
	}
	for _, l := range sc.Wrappers {
		// A package runner runs the project's program of the name
		// first (npx touch ran node_modules/.bin/touch: isReadOnly).
		if n, _, _ := strings.Cut(l.Name, " "); n == "busybox" || n == "toybox" || projectRunners()[n] {
			return nil
		}
	}
	// A word holding what xargs -I or find -exec fills in is known only
	// at run time (.vscode/{} may be .vscode/../x, and {} an option:
	// find -files0-from reads names that may start with '-').
	ws := slices.Clone(sc.Words)
	fills := placeholders(scope{}, *sc)
	for i, w := range ws {
		if f, ok := holdsFill(w.Text, fills); ok {
			ws[i].Literal = false
			ws[i].lead = w.Text[:strings.Index(w.Text, f.s)]
		}
	}
	if name == "dd" {
		return ddWritten(ws)
	}
	sp, ok := writtenSpecs()[name]
	if !ok {
		return nil
	}
	operands, opts, to, mode := gnuRead(ws, sp, name == "chmod")
	for k := range opts {
		if lists(sp.unsure, k) {
			return nil
		}
	}
	// xargs adds words after the last: no reading is complete.
	complete := to == len(ws) && !sc.Appended
	out := map[int]Word{}
	all := func(from int) map[int]Word {
		if !complete {
			return nil
		}
		for _, i := range operands[min(from, len(operands)):] {
			out[i] = ws[i]
		}
		return out
	}
	switch sp.form {
	case intoLast:
		t, target := opts["t"]
		_, noTarget := opts["T"]
		_, dirs := opts["d"]
		switch {
		case name == "install" && dirs:
			if target {
				return nil
			}
			return all(0)
		case target:
			// What follows -t's word cannot move the write: another -t
			// or a -T is refused by the program.
			if t.at < 0 || t.at >= to || noTarget {
				return nil
			}
			out[t.at] = ws[t.at]
		case complete && len(operands) >= 2 && (!noTarget || len(operands) == 2):
			last := operands[len(operands)-1]
			out[last] = ws[last]
		}
		return out
	case allOperands:
		return all(0)
	case afterMode:
		if _, ref := opts["--reference"]; ref || mode {
			return all(0)
		}
		return all(1)
	case inPlace:
		i, in := opts["i"]
		if !in || strings.Contains(i.val, "/") { // a suffix with '/' puts the backup elsewhere
			return nil
		}
		_, e := opts["e"]
		_, f := opts["f"]
		if e || f {
			return all(0)
		}
		return all(1)
	}
	return nil
}

// ddWritten is what dd writes: the value of its last of= operand (an
// earlier one is not opened). dd takes no option but "--" first; any
// other, or an operand that is not a literal (which may be an of=), is
// not certain.
func ddWritten(ws []Word) map[int]Word {
	last := -1
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		key, _, eq := strings.Cut(w.Text, "=")
		switch {
		case i == 1 && w.Literal && w.Text == "--":
		case !w.Literal || !eq || strings.HasPrefix(w.Text, "-"):
			return nil
		case key == "of":
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	v := ws[last]
	v.Text = strings.TrimPrefix(v.Text, "of=")
	v.lead = v.Text
	return map[int]Word{last: v}
}
