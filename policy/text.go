package policy

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxFileSize is the largest policy file read. Real policies are a few KiB;
// the cap keeps a hostile or mistaken path (a log, /dev/zero) from being read
// into memory or parsed.
const MaxFileSize = 1 << 20

// checkPrintable refuses a decoded string holding anything that does not
// read as it binds: C0 and C1 controls, DEL, bidi controls, zero-width and
// other format characters, line and paragraph separators, non-ASCII spaces,
// surrogates, private-use and unassigned code points, U+FFFD, and invalid
// UTF-8 (SR-12, SR-15, SR-16).
func checkPrintable(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				return fmt.Errorf("string %q holds invalid UTF-8 at byte %d", s, i)
			}
			return fmt.Errorf("string %q holds U+FFFD, the replacement character: the text was damaged before it reached the policy", s)
		}
		if !unicode.IsPrint(r) {
			return fmt.Errorf("string %q holds %s at byte %d: %s", s, runeName(r), i, whyInvisible(r))
		}
	}
	return nil
}

// textError is a problem found in the raw file before TOML parsing.
type textError struct {
	line, col int
	msg       string
}

func (e *textError) Error() string { return e.msg }

// checkText refuses a file that is not printable UTF-8 text, wherever the
// bad character sits — comments included, since a bidi control in a comment
// can reorder how the surrounding rules display (Trojan Source). Tabs, LF
// and CR before LF are the only controls allowed.
func checkText(data []byte) error {
	if len(data) == 0 {
		return &textError{msg: "the file is empty: a policy needs at least `version = 1`"}
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, w := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return &textError{line, col, fmt.Sprintf("invalid UTF-8 (byte 0x%02x): a policy is UTF-8 text; is this a binary file?", data[i])}
		case r == '\n':
			line, col = line+1, 0
		case r == '\t':
		case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
		case r == 0xFEFF && i == 0:
			return &textError{line, col, "the file starts with a byte-order mark (U+FEFF): save it as UTF-8 without BOM so every tool hashes and shows the same text"}
		case r == 0:
			return &textError{line, col, "a NUL byte: a policy is text; is this a binary file?"}
		case !unicode.IsPrint(r):
			return &textError{line, col, fmt.Sprintf("%s: %s", runeName(r), whyInvisible(r))}
		}
		i += w
		col++
	}
	return checkNesting(data)
}

// Bounds on a policy's structure, far above any real one (whose deepest
// value is an inline table in an array of tables: three levels, two dots
// in a key). The TOML decoder's memory grows with nesting far faster than
// with size: 16 KiB of nested inline tables took it to 864 MB, 400 KiB
// to 24 GB (a hunt, 2026-12-01), which the size cap does not prevent.
const (
	maxNesting = 16 // brackets and braces open at once
	maxDots    = 16 // dots outside strings on one line (dotted keys)
	// maxKey bounds a key's characters, bare or quoted (and a bare word
	// anywhere): the decoder keeps each key by its whole dotted name, so
	// a table named with 200,000 characters and 20,000 keys in it, 369
	// KiB, took it past 4 GB (a re-test, 2026-12-01).
	maxKey = 256
	// maxKeyTotal bounds a key's whole name as the decoder keeps it: its
	// dotted parts and those of the tables it is in (the table header
	// above it, and each inline table or array it is nested in, by the key
	// that holds it). 17 parts of 256 characters over 174,000 keys took
	// the decoder to 2 GB, and 15 nested inline tables each named by 511
	// characters past 4 GB (re-tests, 2026-12-01).
	maxKeyTotal = 512
)

// checkNesting refuses text whose brackets and braces nest deeper than
// maxNesting, or with more than maxDots dots outside strings and
// comments on one line, before the decoder sees it. It follows TOML's
// strings (basic, literal, and both multi-line kinds) and comments only
// as far as needed to tell structure from text.
func checkNesting(data []byte) error {
	const (
		code = iota
		comment
		basic
		literal
		mlBasic
		mlLiteral
	)
	state, depth, dots, line := code, 0, 0, 1
	bare, start := 0, 0 // the bare word being read; where the one-line string began
	// keyTotal is the key being read, its parts and dots together (a
	// table header's whole name); header, whether the line's first '['
	// opened a table header, whose ']' a key may stand before.
	keyTotal, header, blank := 0, false, true
	// prefix is the name the key being read is under: the table's (from
	// its header, kept in table), then one more part for each inline
	// table or array open around it, named by the key before its '='
	// (lastKey); outer holds the prefixes to return to at '}' and ']'.
	prefix, table, lastKey, headerName := 0, 0, 0, 0
	var outer []int
	addKey := func(n int) error {
		if keyTotal += n; prefix+keyTotal > maxKeyTotal {
			return &textError{line: line, msg: fmt.Sprintf("a key of more than %d characters with its dotted parts and the names of the tables it is in: no policy key is that long (the decoder copies a table's name into each of its keys)", maxKeyTotal)}
		}
		return nil
	}
	open := func() {
		outer = append(outer, prefix)
		prefix += lastKey + 1
		lastKey = 0
	}
	closeOne := func() {
		if n := len(outer); n > 0 {
			prefix, outer = outer[n-1], outer[:n-1]
		}
	}
	at := func(i int, s string) bool { return i+len(s) <= len(data) && string(data[i:i+len(s)]) == s }
	tooLong := func(n int) error {
		return &textError{line: line, msg: fmt.Sprintf("a key of %d characters, more than %d: no policy key is that long (the decoder copies a table's name into each of its keys)", n, maxKey)}
	}
	// A one-line string ending at i is a key when '=', '.' or ']' follows.
	isKey := func(i int) bool {
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case ' ', '\t':
				continue
			case '=', '.':
				return true
			case ']':
				return header
			}
			return false
		}
		return false
	}
	// closeKey bounds a one-line string ending at i, when it is a key.
	closeKey := func(i int) error {
		if !isKey(i) {
			return nil
		}
		if i-start > maxKey {
			return tooLong(i - start - 1)
		}
		return addKey(i - start - 1)
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if state == code && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			if bare++; bare > maxKey {
				return tooLong(bare)
			}
			if err := addKey(1); err != nil {
				return err
			}
			blank = false
			continue
		}
		bare = 0
		if c == '\n' {
			line++
			dots = 0
			if header {
				table = headerName + 1
			}
			if depth == 0 {
				prefix, outer = table, outer[:0]
			}
			keyTotal, header, blank, lastKey = 0, false, true, 0
			if state == comment || state == basic || state == literal {
				state = code // an unterminated one-line string is the decoder's error
			}
			continue
		}
		switch state {
		case comment:
		case basic:
			switch c {
			case '\\':
				i++
			case '"':
				state = code
				if err := closeKey(i); err != nil {
					return err
				}
			}
		case literal:
			if c == '\'' {
				state = code
				if err := closeKey(i); err != nil {
					return err
				}
			}
		case mlBasic:
			switch {
			case c == '\\':
				if i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
			case c == '"':
				i = closeRun(data, i, '"', &state)
			}
		case mlLiteral:
			if c == '\'' {
				i = closeRun(data, i, '\'', &state)
			}
		default:
			first := blank && c != ' ' && c != '\t' && c != '\r'
			if first {
				blank = false
			}
			switch c {
			case '=':
				lastKey, keyTotal = keyTotal, 0
			case ',':
				lastKey, keyTotal = 0, 0
			case '{':
				keyTotal = 0
				open()
			case '[':
				switch {
				case first && depth == 0:
					header = true // [table] or [[array of tables]]
					prefix, headerName, outer = 0, 0, outer[:0]
				case !header:
					open() // an array: its tables are under its key
				}
				keyTotal = 0
			case ']':
				if header {
					headerName = max(headerName, keyTotal)
				} else {
					closeOne()
				}
				keyTotal = 0
			case '}':
				closeOne()
				keyTotal = 0
			}
			switch c {
			case '#':
				state = comment
			case '"':
				if at(i, `"""`) {
					state, i = mlBasic, i+2
				} else {
					state, start = basic, i
				}
			case '\'':
				if at(i, "'''") {
					state, i = mlLiteral, i+2
				} else {
					state, start = literal, i
				}
			case '[', '{':
				if depth++; depth > maxNesting {
					return &textError{line: line, msg: fmt.Sprintf("brackets and braces nested more than %d deep: no policy needs that (its deepest value is three levels down)", maxNesting)}
				}
			case ']', '}':
				depth = max(depth-1, 0)
			case '.':
				if err := addKey(1); err != nil {
					return err
				}
				if dots++; dots > maxDots {
					return &textError{line: line, msg: fmt.Sprintf("more than %d dots outside strings: no policy key has that many parts (dotted keys nest tables)", maxDots)}
				}
			}
		}
	}
	return nil
}

// closeRun reads the run of quote characters q at data[i] inside a
// multi-line string: three or more end it, at the run's end (TOML lets
// up to two quotes of the text stand just before the closing three:
// """a"""" is the text a"); fewer are text. It returns the index of the
// run's last quote.
func closeRun(data []byte, i int, q byte, state *int) int {
	n := 0
	for i+n < len(data) && data[i+n] == q {
		n++
	}
	if n >= 3 {
		*state = 0 // code
	}
	return i + n - 1
}

func runeName(r rune) string {
	return fmt.Sprintf("character U+%04X", r)
}

func whyInvisible(r rune) string {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)"
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF:
		return "a zero-width character is invisible, so the policy would not read as it binds (SR-16)"
	case r < 0x20, r >= 0x7F && r <= 0x9F:
		return "control characters are not allowed in policy text (SR-12)"
	case r >= 0xD800 && r <= 0xDFFF:
		return "lone surrogates are not characters (SR-15)"
	case unicode.Is(unicode.Zs, r), r == 0x2028, r == 0x2029:
		return "only the ASCII space and tab may separate text; other spaces and separators look alike or break lines invisibly (SR-16)"
	}
	return "only printable characters are allowed in policy text (SR-16)"
}

var errBug = errors.New("pinfold bug")

// bug reports an impossible state. It panics: reaching it means the code is
// wrong, and continuing could weaken a Boundary.
func bug(what string) string {
	panic(fmt.Errorf("%w: %s", errBug, what))
}
