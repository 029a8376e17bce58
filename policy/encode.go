package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Encode writes p as policy text. It exists so that a program holding a
// pinned policy can derive another from it (a per-session policy with a
// fresh workspace, say) and hand the launcher a file it will read back.
//
// The guarantees:
//
//   - Exact: for any p that Parse could have returned, Parse(Encode(p))
//     returns a Policy equal to p (only where p came from, kept for
//     messages, is not text and is lost). Every key of a table that is
//     not an array is written, default or not, so the text means the same
//     to a launcher whose defaults differ; arrays and inline tables are
//     written whenever they are non-nil, so an empty list comes back empty
//     and a nil one nil. In an element of an array of tables ([[secrets]]),
//     which Parse starts from the zero value, a zero key is left out.
//   - Deterministic: equal policies give equal bytes. Keys follow the
//     struct order of the schema, env.set's keys are sorted, and nothing
//     else varies; so a derived policy's sha256 can be computed and pinned.
//   - Readable as it binds: the text passes Parse's text checks whatever p
//     holds. A string character that is not printable (a control, bidi or
//     zero-width character, a non-ASCII space) is written as a \uXXXX
//     escape, invalid UTF-8 as \uFFFD; Parse then refuses the value with
//     its key, instead of the text.
//
// Encode does not validate. A policy that Validate refuses, or that holds
// a value no text spells (an Int beyond ±MaxInt, a Duration of 1ns, a CIDR
// not in canonical form), is written as it is, and Parse refuses the
// result rather than read back something else; so does a text longer than
// MaxFileSize, which escapes can make of a policy read from a shorter one.
// The caller must Parse what Encode returns before using or pinning it.
//
// Encode panics (an errBug) on a schema field whose type it has no TOML
// form for, so that a field added to the schema without teaching Encode
// fails the round-trip tests rather than go missing from the text.
func Encode(p *Policy) []byte {
	var b strings.Builder
	writeTable(&b, "", nil, reflect.ValueOf(p).Elem(), reflect.ValueOf(Default()), false)
	return []byte(b.String())
}

// maxLine is the width up to which an array is written on its key's line;
// a longer one is written an element per line.
const maxLine = 100

// writeTable writes the table v under header ("" for the top level, or
// "[name]" or "[[name]]", which is written even for an empty body). def is
// the value Parse starts from for this table: Default's, or the zero value
// for an element of an array of tables, whose zero keys omitZero leaves out.
func writeTable(b *strings.Builder, header string, path []string, v, def reflect.Value, omitZero bool) {
	var body strings.Builder
	var tables []func()
	for _, f := range schemaFields(v.Type()) {
		key := f.Tag.Get("toml")
		fv, fd := v.FieldByIndex(f.Index), def.FieldByIndex(f.Index)
		kp := append(path[:len(path):len(path)], bareKey(key))
		full := strings.Join(kp, ".")
		switch {
		case isTable(f.Type):
			tables = append(tables, func() { writeTable(b, "["+full+"]", kp, fv, fd, omitZero) })
		case fv.Kind() == reflect.Slice && isTable(f.Type.Elem()) && fv.Len() > 0:
			zero := reflect.Zero(f.Type.Elem())
			tables = append(tables, func() {
				for i := range fv.Len() {
					writeTable(b, "[["+full+"]]", kp, fv.Index(i), zero, true)
				}
			})
		case (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil():
			// Absent, Parse keeps the default, so nil is exact only where
			// the default is nil too.
			if !fd.IsNil() {
				bug(fmt.Sprintf("encode: %s is nil but defaults to a non-nil value: no text gives nil back", full))
			}
		case omitZero && fv.IsZero():
			// Absent, it is zero. (Written, a zero name or header
			// would be refused: Parse reads "" only from absence.)
		default:
			writeKeyValue(&body, kp[len(kp)-1], fv)
		}
	}
	if header != "" && (body.Len() > 0 || strings.HasPrefix(header, "[[")) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(header + "\n")
	}
	b.WriteString(body.String())
	for _, t := range tables {
		t()
	}
}

// isTable reports whether t is written as a table: a struct of the schema,
// not a struct that is one value (CIDR).
func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType)
}

// writeKeyValue writes `key = value`, an array of more than maxLine
// columns an element per line.
func writeKeyValue(b *strings.Builder, key string, v reflect.Value) {
	line := key + " = " + encodeValue(v)
	if len(line) <= maxLine || v.Kind() != reflect.Slice {
		b.WriteString(line + "\n")
		return
	}
	b.WriteString(key + " = [\n")
	for i := range v.Len() {
		b.WriteString("  " + encodeValue(v.Index(i)) + ",\n")
	}
	b.WriteString("]\n")
}

// encodeValue writes one value of the schema as TOML: the value types by
// name, then arrays and inline tables of them. Any other type is a bug.
func encodeValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Int:
		return strconv.FormatInt(int64(x), 10)
	case Port:
		return strconv.FormatUint(uint64(x), 10)
	case bool:
		return strconv.FormatBool(x)
	case Size, Duration, CIDR:
		return quote(x.(fmt.Stringer).String())
	case Mode, NetMode, Path, Text, Domain, EnvName, SecretName, HeaderName, Template, Command:
		return quote(v.String())
	}
	switch {
	case v.Kind() == reflect.Slice:
		elems := make([]string, v.Len())
		for i := range elems {
			elems[i] = encodeValue(v.Index(i))
		}
		return "[" + strings.Join(elems, ", ") + "]"
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if v.Len() == 0 {
			return "{}"
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = tomlKey(k) + " = " + encodeValue(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())))
		}
		return "{ " + strings.Join(pairs, ", ") + " }"
	}
	return bug(fmt.Sprintf("encode: schema type %s has no TOML form", v.Type()))
}

// isBare reports whether k can be written as a TOML bare key.
func isBare(k string) bool {
	return k != "" && strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// tomlKey writes a map key: bare when it can be, else quoted.
func tomlKey(k string) string {
	if isBare(k) {
		return k
	}
	return quote(k)
}

// bareKey returns a schema tag, which is always a bare key.
func bareKey(k string) string {
	if !isBare(k) {
		bug(fmt.Sprintf("encode: schema key %q is not a bare key", k))
	}
	return k
}

// quote writes s as a TOML basic string. Printable characters are written
// as they are, except '"' and '\', which are escaped; every other character
// is a \u or \U escape, and a byte of invalid UTF-8 is \uFFFD. The text is
// therefore printable whatever s holds.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			b.WriteString(`\uFFFD`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
		i += w
	}
	b.WriteByte('"')
	return b.String()
}
