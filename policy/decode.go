package policy

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// SupportedVersion is the only policy version this launcher reads.
const SupportedVersion = 1

// Parse decodes and validates policy text. name is used in messages only.
// It never touches the file system; see CheckLive for the checks that do.
// On failure the error is an *Error listing every problem in file order.
func Parse(name string, data []byte) (*Policy, error) {
	fail := func(ps ...Problem) (*Policy, error) {
		sortProblems(ps)
		return nil, &Error{File: name, Problems: ps}
	}
	if len(data) > MaxFileSize {
		return fail(problem("", "file-size", fmt.Sprintf("the file is %d bytes, over the %d-byte limit: is this the policy?", len(data), MaxFileSize)))
	}
	if err := checkText(data); err != nil {
		te := err.(*textError)
		p := problem("", "text", te.msg)
		p.Line, p.Col = te.line, te.col
		return fail(p)
	}
	text := string(data)
	var tree map[string]any
	if _, err := toml.Decode(text, &tree); err != nil {
		return fail(syntaxProblem(err))
	}
	loc := locator{text: text, tree: tree, decoded: new(int)}
	if ps := walkTable(tree, reflect.TypeFor[Policy](), nil); len(ps) > 0 {
		return fail(loc.place(ps)...)
	}
	if v, ok := tree["version"]; !ok {
		return fail(Problem{Line: 1, Check: "version", Msg: "`version` is missing: write `version = 1` at the top", elem: -1})
	} else if v != int64(SupportedVersion) {
		return fail(loc.place([]Problem{problem("version", "version", fmt.Sprintf("policy version %v is not supported: this launcher reads version %d", v, SupportedVersion))})...)
	}
	p := Default()
	if _, err := toml.Decode(text, &p); err != nil {
		return fail(syntaxProblem(fmt.Errorf("%w: typed decode failed after the schema walk passed: %w", errBug, err)))
	}
	if ps := Validate(&p); len(ps) > 0 {
		return fail(loc.place(ps)...)
	}
	p.src = &source{name: name, loc: loc}
	return &p, nil
}

func syntaxProblem(err error) Problem {
	p := problem("", "syntax", err.Error())
	var pe toml.ParseError
	if errors.As(err, &pe) {
		p.Line, p.Col, p.Key = pe.Position.Line, pe.Position.Col, pe.LastKey
		p.Msg = strings.TrimSuffix(pe.Message, ".")
		if pe.Usage != "" {
			p.Hint = strings.TrimSpace(pe.Usage)
		}
	}
	return p
}

var unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()

// walkTable checks a decoded TOML table against a struct type of the schema:
// every key must be a field's exact tag (no case folding, which would let
// "Files" and "files" both bind one field), and every value must have the
// field's type. It collects every problem rather than stopping at the first.
func walkTable(table map[string]any, t reflect.Type, path []string) []Problem {
	var ps []Problem
	for _, k := range sortedKeys(table) {
		kp := append(path[:len(path):len(path)], k)
		f, ok := fieldByTag(t, k)
		if !ok {
			p := problem(strings.Join(kp, "."), "unknown-key", fmt.Sprintf("unknown key %q", k))
			if s := suggest(t, k); s != "" {
				p.Hint = fmt.Sprintf("did you mean %q?", s)
			} else {
				p.Hint = "known keys here: " + strings.Join(tags(t), ", ")
			}
			ps = append(ps, p)
			continue
		}
		ps = append(ps, walkValue(table[k], f.Type, kp, -1)...)
	}
	return ps
}

// keyChecker is implemented by map types whose keys have rules of their own.
type keyChecker interface{ CheckKey(string) error }

func valueProblem(path []string, elem int, err error) Problem {
	p := problem(strings.Join(path, "."), "value", err.Error())
	p.elem = elem
	return p
}

func walkValue(v any, t reflect.Type, path []string, elem int) []Problem {
	bad := func(err error) []Problem { return []Problem{valueProblem(path, elem, err)} }
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := reflect.New(t).Interface().(toml.Unmarshaler).UnmarshalTOML(v); err != nil {
			return bad(err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad(typeError("true or false", v))
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad(typeError("a table", v))
		}
		ps := walkTable(m, t, path)
		for i := range ps {
			if ps[i].elem < 0 {
				ps[i].elem = elem
			}
		}
		return ps
	case reflect.Slice:
		items, ok := toSlice(v)
		if !ok {
			return bad(typeError("an array", v))
		}
		var ps []Problem
		for i, it := range items {
			e, p := elem, path
			// An array of tables numbers its elements (elem); an array
			// of values names the one at fault in its key, so that two
			// bad values are two problems, told apart.
			if t.Elem().Kind() == reflect.Struct && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) {
				e = i
			} else if n := len(path); n > 0 {
				p = append(path[:n-1:n-1], fmt.Sprintf("%s[%d]", path[n-1], i))
			}
			ps = append(ps, walkValue(it, t.Elem(), p, e)...)
		}
		return ps
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad(typeError("a table", v))
		}
		var ps []Problem
		for _, k := range sortedKeys(m) {
			kp := append(path[:len(path):len(path)], k)
			if kc, ok := reflect.Zero(t).Interface().(keyChecker); ok {
				if err := kc.CheckKey(k); err != nil {
					ps = append(ps, valueProblem(kp, elem, err))
				}
			}
			ps = append(ps, walkValue(m[k], t.Elem(), kp, elem)...)
		}
		return ps
	default:
		return bad(fmt.Errorf("%w: schema field of kind %s", errBug, t.Kind()))
	}
	return nil
}

func toSlice(v any) ([]any, bool) {
	switch s := v.(type) {
	case []any:
		return s, true
	case []map[string]any:
		out := make([]any, len(s))
		for i := range s {
			out[i] = s[i]
		}
		return out, true
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// schemaFields returns the fields of t that are keys of the schema: the
// exported ones. (Policy.src has no tag; without this, the key "" would
// reach it.)
func schemaFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && f.Tag.Get("toml") != "" {
			out = append(out, f)
		}
	}
	return out
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for _, f := range schemaFields(t) {
		if f.Tag.Get("toml") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tags(t reflect.Type) []string {
	var out []string
	for _, f := range schemaFields(t) {
		out = append(out, f.Tag.Get("toml"))
	}
	return out
}

// suggest returns the known key closest to k, if it is close.
func suggest(t reflect.Type, k string) string {
	best, bestD := "", 3
	for _, tag := range tags(t) {
		if strings.EqualFold(tag, k) {
			return tag
		}
		if d := editDistance(strings.ToLower(k), tag); d < bestD {
			best, bestD = tag, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}
