package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// roundTrip encodes p, parses the text back and checks that it is p and
// that encoding it again gives the same bytes. It returns the text.
func roundTrip(t *testing.T, name string, p *Policy) []byte {
	t.Helper()
	text := Encode(p)
	if err := checkText(text); err != nil {
		t.Fatalf("%s: Encode wrote text the text checks refuse: %v\n%s", name, err, text)
	}
	back, err := Parse(name, text)
	if err != nil {
		t.Fatalf("%s: Parse(Encode(p)): %v\n%s", name, err, text)
	}
	samePolicy(t, name, back, p)
	if again := Encode(back); string(again) != string(text) {
		t.Errorf("%s: Encode(Parse(Encode(p))) differs from Encode(p):\n%s\nvs\n%s", name, again, text)
	}
	return text
}

// samePolicy compares two policies field by field, ignoring where they
// came from, and names the first field that differs.
func samePolicy(t *testing.T, name string, got, want *Policy) {
	t.Helper()
	a, b := *got, *want
	a.src, b.src = nil, nil
	if reflect.DeepEqual(a, b) {
		return
	}
	for _, f := range schemaFields(reflect.TypeFor[Policy]()) {
		ga, wb := reflect.ValueOf(a).FieldByIndex(f.Index).Interface(), reflect.ValueOf(b).FieldByIndex(f.Index).Interface()
		if !reflect.DeepEqual(ga, wb) {
			t.Errorf("%s: %s = %#v, want %#v", name, f.Tag.Get("toml"), ga, wb)
		}
	}
	t.FailNow()
}

// firstProblem parses text Parse must refuse and returns its first
// problem.
func firstProblem(t *testing.T, name string, text []byte) Problem {
	t.Helper()
	return parseErr(t, name, text).Problems[0]
}

func TestEncodeCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/valid/*.toml (%v)", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".toml"), func(t *testing.T) {
			roundTrip(t, name, parseValid(t, name))
		})
	}
}

// TestEncodeText pins the layout: version and mode, then the tables in
// the schema's order, every key that is not an array written.
func TestEncodeText(t *testing.T) {
	got := string(Encode(parseValid(t, "offline.toml")))
	want := `version = 1
mode = "wrapper"

[workspace]
path = "/home/ana/src/app"

[files]
read = ["/usr/share", "/etc/ssl", "/etc/passwd"]
write = ["/home/ana/src/app", "/dev/null"]
exec = ["/usr/bin", "/usr/lib"]

[network]
mode = "none"
block_all = true
allow_ech = false
unix_sockets = false

[limits]
memory = "4GiB"
processes = 512
open_files = 4096
file_size = "2GiB"
cpu_time = "0"
tmp_size = "1GiB"

[env]
pass = ["PATH", "LANG", "TERM"]
set = { CI = "1", GOFLAGS = "-mod=readonly" }

[commands]
timeout = "10m"
output = "1MiB"

[backups]
quota = "3GiB"

[code_mode]
memory = "64MiB"
stack = "1MiB"
deadline = "10s"
tool_calls = 200
output = "1MiB"
script_size = "256KiB"
`
	if got != want {
		t.Errorf("Encode(offline.toml):\n%s\nwant\n%s", got, want)
	}
}

// everyField returns two valid policies that between them set every key of
// the schema to a value other than its default: ports mode excludes the
// proxy keys, so connect_tcp and bind_tcp are set in the second.
func everyField() []Policy {
	a := Policy{
		Version:   1,
		Mode:      ModeComponents,
		Workspace: Workspace{Path: "/home/ana/src/app"},
		Files: Files{
			Read:      []Path{"/usr/share", "/etc/ssl"},
			Write:     []Path{"/home/ana/src/app", "/home/ana/src/app/out"},
			Exec:      []Path{"/usr/bin", "/usr/lib"},
			Protected: []Path{"/home/ana/src/app/.env", "/home/ana/src/app/.git"},
		},
		Network: Network{
			Mode:               NetProxy,
			Allow:              []Domain{"example.com", "*.example.org"},
			Deny:               []Domain{"evil.example.org"},
			BlockAll:           false,
			UnsafeAllowPrivate: []CIDR{CIDR(netip.MustParsePrefix("10.1.0.0/16")), CIDR(netip.MustParsePrefix("fd00::/8"))},
			AllowECH:           true,
		},
		Limits: Limits{Memory: 8 * GiB, Processes: 1024, OpenFiles: 65536, FileSize: 1536 * B, CPUTime: Duration(2 * time.Hour), TmpSize: 256 * MiB},
		Env:    Env{Pass: []EnvName{"PATH", "TERM"}, Set: EnvSet{"LANG": "C.UTF-8", "CI": "1"}},
		Secrets: []Secret{
			{Name: "github", Hosts: []Domain{"api.github.com", "uploads.github.com"}, Header: "Authorization", Template: "Bearer {secret}"},
			{Name: "npm-token", Hosts: []Domain{"registry.npmjs.org"}, Header: "X-Npm-Token", Template: "{secret}"},
		},
		Commands: Commands{Auto: []Command{"go test", "make"}, Approval: []Command{"git push"}, Timeout: Duration(90 * time.Second), Output: 4 * MiB},
		Backups:  Backups{Quota: 10 * GiB},
		CodeMode: CodeMode{Memory: 128 * MiB, Stack: 2 * MiB, Deadline: Duration(1500 * time.Millisecond), ToolCalls: 50, Output: 64 * KiB, ScriptSize: MiB},
	}
	b := base()
	b.Network = Network{Mode: NetPorts, ConnectTCP: []Port{443, 22}, BindTCP: []Port{8080}, BlockAll: true, UnixSockets: true}
	return []Policy{a, b}
}

// setKeys adds to out the dotted keys (arrays of tables as "secrets.name")
// whose value in v differs from def: a non-empty array or table, or a leaf
// not equal to its default.
func setKeys(v, def reflect.Value, prefix string, out map[string]bool) {
	for _, f := range schemaFields(v.Type()) {
		key := prefix + f.Tag.Get("toml")
		fv, fd := v.FieldByIndex(f.Index), def.FieldByIndex(f.Index)
		switch {
		case isTable(f.Type):
			setKeys(fv, fd, key+".", out)
		case f.Type.Kind() == reflect.Slice && isTable(f.Type.Elem()):
			for i := range fv.Len() {
				setKeys(fv.Index(i), reflect.Zero(f.Type.Elem()), key+".", out)
			}
		case f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map:
			out[key] = out[key] || fv.Len() > 0
		default:
			out[key] = out[key] || !reflect.DeepEqual(fv.Interface(), fd.Interface())
		}
	}
}

// TestEncodeEveryField round-trips a value other than the default for
// every key of the schema. A key added to the schema fails here until
// everyField sets it, and then until Encode writes it so that it reads back.
func TestEncodeEveryField(t *testing.T) {
	set := map[string]bool{}
	def := reflect.ValueOf(Default())
	for i, p := range everyField() {
		if ps := validated(&p); len(ps) > 0 {
			t.Fatalf("everyField()[%d] is not valid: %v", i, ps)
		}
		setKeys(reflect.ValueOf(p), def, "", set)
		roundTrip(t, fmt.Sprintf("every-field-%d.toml", i), &p)
	}
	for _, k := range schemaKeys(reflect.TypeFor[Policy](), "") {
		if !set[k] {
			t.Errorf("everyField does not set %s to a value other than its default", k)
		}
	}
}

// A key set to its zero value where the default is not zero must be
// written, or Parse would give the default back.
func TestEncodeZeroOverDefault(t *testing.T) {
	p := base()
	proxy(&p)
	p.Network.BlockAll = false
	p.Limits.Memory, p.Limits.FileSize = 0, 0
	p.CodeMode.ToolCalls = 0
	text := string(roundTrip(t, "zero.toml", &p))
	for _, line := range []string{"block_all = false\n", "memory = \"0\"\n", "file_size = \"0\"\n", "tool_calls = 0\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("Encode did not write %q:\n%s", line, text)
		}
	}
}

// Parse gives nil for an absent array or table and an empty one for `[]`
// and `{}`; Encode keeps the difference.
func TestEncodeNilAndEmpty(t *testing.T) {
	p := base()
	p.Files = Files{}
	p.Workspace.Path = "/w"
	text := string(roundTrip(t, "nil.toml", &p))
	if strings.Contains(text, "[files]") || strings.Contains(text, "[]") || strings.Contains(text, "{}") {
		t.Errorf("nil arrays and an all-nil table were written:\n%s", text)
	}

	p.Files = Files{Read: []Path{}, Write: []Path{}, Exec: []Path{}, Protected: []Path{}}
	p.Network.ConnectTCP, p.Network.BindTCP, p.Network.Allow, p.Network.Deny = []Port{}, []Port{}, []Domain{}, []Domain{}
	p.Network.UnsafeAllowPrivate = []CIDR{}
	p.Env = Env{Pass: []EnvName{}, Set: EnvSet{}}
	p.Secrets = []Secret{}
	p.Commands.Auto, p.Commands.Approval = []Command{}, []Command{}
	text = string(roundTrip(t, "empty.toml", &p))
	for _, line := range []string{"secrets = []\n", "read = []\n", "protected = []\n", "unsafe_allow_private = []\n", "set = {}\n", "approval = []\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("Encode did not write %q:\n%s", line, text)
		}
	}
	if i := strings.Index(text, "secrets = []"); i > strings.Index(text, "[workspace]") {
		t.Errorf("secrets = [] is written after a table header, where it would bind a key of that table:\n%s", text)
	}
}

// An element of an array of tables starts from the zero value, so its zero
// keys are left out: written, name = "" would be refused where an absent
// name reads as "". (FuzzEncode found that Parse accepts a [[secrets]]
// element without keys.) The text decodes to the policy; Parse accepts it,
// or refuses it by a named check only, never for its text or a value.
func TestEncodeZeroElement(t *testing.T) {
	p := base()
	components(&p)
	proxy(&p)
	p.Secrets = []Secret{{}, {Name: "a", Hosts: []Domain{}}, {Header: "X-A"}}
	text := Encode(&p)
	if want := "\n[[secrets]]\n\n[[secrets]]\nname = \"a\"\nhosts = []\n\n[[secrets]]\nheader = \"X-A\"\n\n[commands]\n"; !strings.Contains(string(text), want) {
		t.Errorf("Encode did not write %q:\n%s", want, text)
	}
	var tree map[string]any
	if _, err := toml.Decode(string(text), &tree); err != nil {
		t.Fatal(err)
	}
	if ps := walkTable(tree, reflect.TypeFor[Policy](), nil); len(ps) > 0 {
		t.Fatalf("schema walk refused the text: %v", ps)
	}
	back := Default()
	if _, err := toml.Decode(string(text), &back); err != nil {
		t.Fatal(err)
	}
	samePolicy(t, "zero-element.toml", &back, &p)
	parsed, err := Parse("zero-element.toml", text)
	if err != nil {
		if pr := firstProblem(t, "zero-element.toml", text); slices.Contains([]string{"text", "syntax", "unknown-key", "value", "version"}, pr.Check) {
			t.Errorf("Parse refused the text for its %s: %s", pr.Check, pr)
		}
		return
	}
	samePolicy(t, "zero-element.toml", parsed, &p)
}

// Strings that need escaping or that look like TOML syntax read back as
// they were.
func TestEncodeTrickyStrings(t *testing.T) {
	ws := Path(`/srv/my "app" \ café`)
	p := base()
	components(&p)
	proxy(&p)
	p.Workspace.Path = ws
	p.Files.Write = []Path{ws, ws + `/out\dir`}
	p.Files.Read = []Path{"/srv/hash # not a comment", "/srv/[brackets]", "/srv/a = b", "/srv/'single' '''triple'''", `/srv/"""`, "/srv/日本語/✓", "/srv/{inline}, [array]"}
	p.Files.Protected = []Path{ws + "/.env"}
	p.Env.Set = EnvSet{
		"EQUALS":  "a=b c=d",
		"SPACES":  "  leading and trailing  ",
		"QUOTES":  `say "hi" and 'bye'`,
		"BACK":    `C:\Users\ana \" \\ \u0041 \n`,
		"UNICODE": "café, zoë, 日本語, ✓, 𝄞",
		"SYNTAX":  `{ a = 1 } [b] # c`,
		"EMPTY":   "",
	}
	p.Secrets = []Secret{{Name: "tok", Hosts: []Domain{"api.example.com"}, Header: "X-Odd!#$%&'*+.^_`|~", Template: `Bearer "{secret}" \ é`}}
	p.Commands.Auto = []Command{"env FOO=bar make", "make café"}
	text := string(roundTrip(t, "tricky.toml", &p))
	for _, want := range []string{
		`path = "/srv/my \"app\" \\ café"`,
		`BACK = "C:\\Users\\ana \\\" \\\\ \\u0041 \\n"`,
		`UNICODE = "café, zoë, 日本語, ✓, 𝄞"`,
		`template = "Bearer \"{secret}\" \\ é"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Encode did not write %s:\n%s", want, text)
		}
	}
}

// A long array is written an element per line, and reads back the same.
func TestEncodeLongArray(t *testing.T) {
	p := base()
	for i := range 20 {
		p.Files.Read = append(p.Files.Read, Path(fmt.Sprintf("/srv/data/%02d", i)))
	}
	text := string(roundTrip(t, "long.toml", &p))
	if !strings.Contains(text, "read = [\n  \"/srv/data/00\",\n  \"/srv/data/01\",\n") || !strings.Contains(text, "  \"/srv/data/19\",\n]\n") {
		t.Errorf("long array not written an element per line:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if len(line) > maxLine {
			t.Errorf("line of %d bytes: %s", len(line), line)
		}
	}
}

// Whatever a string holds, the text passes the text checks, and Parse
// refuses the value with its key instead.
func TestEncodeUnprintable(t *testing.T) {
	tests := []struct{ value, escaped string }{
		{"a\x00b", `a\u0000b`},
		{"tab\there", `tab\u0009here`},
		{"two\nlines", `two\u000Alines`},
		{"cr\r\n", `cr\u000D\u000A`},
		{"del\x7f", `del\u007F`},
		{"c1\u0085", `c1\u0085`},
		{"bidi\u202eevil", `bidi\u202Eevil`},
		{"zero\u200bwidth", `zero\u200Bwidth`},
		{"bom\ufeff", `bom\uFEFF`},
		{"nbsp\u00a0", `nbsp\u00A0`},
		{"ls\u2028", `ls\u2028`},
		{"private\U000F0000", `private\U000F0000`},
		{"bad\xffutf8", `bad\uFFFDutf8`},
		{"cut\xe2\x82", `cut\uFFFD\uFFFD`},
		{"fffd\ufffd", "fffd\ufffd"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.value), func(t *testing.T) {
			p := base()
			p.Env.Set = EnvSet{"X": Text(tt.value)}
			text := Encode(&p)
			if err := checkText(text); err != nil {
				t.Fatalf("Encode wrote text the text checks refuse: %v\n%s", err, text)
			}
			if want := `set = { X = "` + tt.escaped + `" }`; !strings.Contains(string(text), want) {
				t.Errorf("Encode did not write %s:\n%s", want, text)
			}
			pr := firstProblem(t, "unprintable.toml", text)
			if pr.Check != "value" || pr.Key != "env.set.X" {
				t.Errorf("Parse refused with %s at %s: %s; want a value problem at env.set.X", pr.Check, pr.Key, pr)
			}
		})
	}
}

// Keys that are not bare are quoted, so that "A.B" stays one key.
func TestEncodeQuotedKeys(t *testing.T) {
	for _, key := range []string{"A.B", "A B", "", "é", `"`, "A=B"} {
		p := base()
		p.Env.Set = EnvSet{key: "v"}
		text := Encode(&p)
		if err := checkText(text); err != nil {
			t.Fatalf("key %q: text refused: %v", key, err)
		}
		pr := firstProblem(t, "key.toml", text)
		if pr.Check != "value" || pr.Key != "env.set."+key || !strings.Contains(pr.Msg, "environment variable name") {
			t.Errorf("key %q: Parse refused with %s at %q: %s; want the name refused at env.set.%s", key, pr.Check, pr.Key, pr, key)
		}
	}
}

// A value no text spells is written as it is, and Parse refuses it rather
// than read back something else.
func TestEncodeNoSpelling(t *testing.T) {
	tests := []struct {
		key string
		set func(p *Policy)
	}{
		{"code_mode.deadline", func(p *Policy) { p.CodeMode.Deadline = 1 }},
		{"limits.memory", func(p *Policy) { p.Limits.Memory = -1 }},
		{"code_mode.tool_calls", func(p *Policy) { p.CodeMode.ToolCalls = MaxInt + 1 }},
		{"network.unsafe_allow_private[0]", func(p *Policy) {
			proxy(p)
			p.Network.UnsafeAllowPrivate = []CIDR{CIDR(netip.MustParsePrefix("10.1.2.3/8"))}
		}},
		{"network.unsafe_allow_private[0]", func(p *Policy) {
			proxy(p)
			p.Network.UnsafeAllowPrivate = []CIDR{{}}
		}},
		{"mode", func(p *Policy) { p.Mode = "" }},
	}
	for _, tt := range tests {
		p := base()
		tt.set(&p)
		if pr := firstProblem(t, "nospelling.toml", Encode(&p)); pr.Check != "value" || pr.Key != tt.key {
			t.Errorf("Parse refused with %s at %s: %s; want a value problem at %s", pr.Check, pr.Key, pr, tt.key)
		}
	}
}

// The sizes and durations the tests write read back through ParseSize and
// ParseDuration, and those without an exact spelling are refused.
func TestEncodeSizeDuration(t *testing.T) {
	for _, s := range []Size{0, 1, 1023, KiB, 1536, 256 * KiB, MiB, 4 * GiB, 8191 * TiB, MaxInt} {
		if got, err := ParseSize(s.String()); err != nil || got != s {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s.String(), got, err, s)
		}
	}
	for _, d := range []time.Duration{0, time.Millisecond, 1500 * time.Millisecond, 90 * time.Second, time.Minute, 10 * time.Minute, 2 * time.Hour, 2501 * time.Hour} {
		if got, err := ParseDuration(Duration(d).String()); err != nil || got != Duration(d) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", Duration(d).String(), got, err, d)
		}
	}
	for _, d := range []Duration{1, Duration(time.Microsecond), Duration(MaxInt + 1)} {
		if _, err := ParseDuration(d.String()); err == nil {
			t.Errorf("ParseDuration(%q) accepted a duration without an exact spelling", d.String())
		}
	}
}

// Equal policies give equal bytes, whatever order the map was built in and
// however Go iterates it.
func TestEncodeDeterministic(t *testing.T) {
	var names []string
	for c := 'A'; c <= 'Z'; c++ {
		names = append(names, string(c)+"_VAR")
	}
	build := func(order []string) *Policy {
		p := base()
		p.Env.Set = EnvSet{}
		for _, n := range order {
			p.Env.Set[n] = Text("value of " + n)
		}
		return &p
	}
	first := string(Encode(build(names)))
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	for i := range 50 {
		order := names
		if i%2 == 1 {
			order = reversed
		}
		if got := string(Encode(build(order))); got != first {
			t.Fatalf("encode %d differs:\n%s\nvs\n%s", i, got, first)
		}
	}
	line := first[strings.Index(first, "set = {"):]
	line = line[:strings.Index(line, "\n")]
	var last int
	for _, n := range names {
		i := strings.Index(line, n+" = ")
		if i < last {
			t.Fatalf("env.set keys not sorted: %s", line)
		}
		last = i
	}
	roundTrip(t, "deterministic.toml", build(names))
}

// A type Encode has no TOML form for is a bug, reported loudly.
func TestEncodeUnknownTypePanics(t *testing.T) {
	for _, v := range []any{1.5, int64(3), "plain string", struct{ A int }{1}, map[int]Text{1: "x"}} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, errBug) {
					t.Errorf("encodeValue(%T) recovered %v, want an errBug panic", v, err)
				}
			}()
			encodeValue(reflect.ValueOf(v))
		}()
	}
}

// FuzzEncode checks the round trip on any text Parse accepts.
func FuzzEncode(f *testing.F) {
	files, err := filepath.Glob("testdata/valid/*.toml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/valid (%v)", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		// Escapes can make the text longer than the input: past
		// MaxFileSize, Parse refuses it for its size, as Encode says.
		if text := Encode(p); len(text) > MaxFileSize {
			if pr := firstProblem(t, "fuzz.toml", text); pr.Check != "file-size" {
				t.Errorf("%d bytes refused with %s, want file-size", len(text), pr)
			}
			return
		}
		roundTrip(t, "fuzz.toml", p)
	})
}
