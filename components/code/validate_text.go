// The validator's reading of source text: escapes decoded, and the nesting pre-scan that runs before the parser (see validate.go).

package code

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
