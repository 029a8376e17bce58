package policy

import (
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// The TOML library records where each key was defined but does not export
// it; it does attach that position to errors returned by a value's
// UnmarshalTOML. The locator asks for a key's line by decoding the file into
// a type built for that one key path whose leaf always fails.

type locator struct {
	text    string
	tree    map[string]any
	decoded *int // bytes decoded by lookups so far (maxLocateBytes)
}

var errLocate = errors.New("locate")

type locLeaf struct{}

func (locLeaf) UnmarshalTOML(any) error { return errLocate }

var locLeafType = reflect.TypeFor[locLeaf]()

// maxLocate bounds how many distinct keys place looks up. Each lookup
// decodes the whole file again, so without a bound a hostile file with
// thousands of bad keys would take hours to refuse; past it, problems are
// reported without a line.
const maxLocate = 32

// maxLocateBytes bounds the text all lookups decode together: a large
// hostile file decodes slowly, and 32 lookups of 350 KiB took 27 s (a
// re-test, 2026-12-01). Past it, problems are reported without a line.
const maxLocateBytes = 2 << 20

// place fills in Line (and Col when the problem has none) for each problem
// from its key, then sorts them into file order. Problems sharing a key
// share one lookup.
func (l locator) place(ps []Problem) []Problem {
	keyLines := map[string]int{}
	headers := map[string][]int{}
	for i := range ps {
		p := &ps[i]
		if p.Line != 0 || p.Key == "" {
			continue
		}
		// "files.read[2]" is on files.read's line: one lookup for all
		// of an array's values.
		key := p.Key
		dot := strings.LastIndexByte(key, '.')
		key = key[:dot+1] + trimIndex(key[dot+1:])
		n, ok := keyLines[key]
		if !ok {
			if len(keyLines) == maxLocate {
				continue
			}
			// A key the file does not hold (a missing allow list, say)
			// is placed at its nearest enclosing table that it does.
			path := strings.Split(key, ".")
			for n = l.keyLine(path); n == 0 && len(path) > 1; n = l.keyLine(path) {
				path = path[:len(path)-1]
			}
			keyLines[key] = n
		}
		if p.elem >= 0 {
			head, _, _ := strings.Cut(p.Key, ".")
			if _, ok := headers[head]; !ok {
				headers[head] = l.headerLines(head)
			}
			n = inElement(n, headers[head], p.elem)
		}
		p.Line = n
	}
	sortProblems(ps)
	return ps
}

// trimIndex is k without a trailing "[N]", the index of a value in an
// array that a problem names.
func trimIndex(k string) string {
	i := strings.LastIndexByte(k, '[')
	if i < 0 || !strings.HasSuffix(k, "]") || i+2 > len(k)-1 {
		return k
	}
	for _, c := range k[i+1 : len(k)-1] {
		if c < '0' || c > '9' {
			return k
		}
	}
	return k[:i]
}

// inElement returns line n when it lies inside the elem-th [[table]] of an
// array, whose headers are on the given lines, and the element's header line
// otherwise: for a key defined in several elements the library only
// remembers the last definition.
func inElement(n int, headers []int, elem int) int {
	if elem >= len(headers) {
		return n
	}
	start, end := headers[elem], int(^uint(0)>>1)
	if elem+1 < len(headers) {
		end = headers[elem+1]
	}
	if n >= start && n < end {
		return n
	}
	return start
}

func (l locator) keyLine(path []string) int {
	t := locLeafType
	node := any(l.tree)
	types := make([]bool, len(path)) // true: the prefix names an array of tables
	for i, k := range path {
		m, ok := node.(map[string]any)
		if !ok {
			return 0
		}
		node = m[k]
		if _, isArr := toSlice(node); isArr && i < len(path)-1 {
			types[i] = true
			items, _ := toSlice(node)
			if len(items) == 0 {
				return 0
			}
			node = items[0]
			// Any element holding the next key will do: the position is
			// the library's, not this walk's.
			for _, it := range items {
				if mm, ok := it.(map[string]any); ok {
					if _, has := mm[path[i+1]]; has {
						node = it
						break
					}
				}
			}
		}
	}
	for i := len(path) - 1; i >= 0; i-- {
		if strings.ContainsAny(path[i], `,"`) {
			return 0 // not expressible as a struct tag the library reads
		}
		t = reflect.StructOf([]reflect.StructField{{
			Name: "F",
			Type: t,
			Tag:  reflect.StructTag(`toml:` + strconv.Quote(path[i])),
		}})
		if i > 0 && types[i-1] {
			t = reflect.SliceOf(t)
		}
	}
	if l.decoded != nil {
		if *l.decoded+len(l.text) > maxLocateBytes {
			return 0
		}
		*l.decoded += len(l.text)
	}
	v := reflect.New(t)
	_, err := toml.Decode(l.text, v.Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Message == errLocate.Error() {
		return pe.Position.Line
	}
	return 0
}

// headerLines returns the lines of the [[name]] headers, in order.
func (l locator) headerLines(name string) []int {
	re := regexp.MustCompile(`^[ \t]*\[\[[ \t]*` + regexp.QuoteMeta(name) + `[ \t]*\]\]`)
	var out []int
	for i, ln := range strings.Split(l.text, "\n") {
		if re.MatchString(ln) {
			out = append(out, i+1)
		}
	}
	return out
}
