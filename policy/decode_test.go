package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// parseErr parses data and returns its *Error, failing the test if Parse
// accepts it or returns another error type.
func parseErr(t *testing.T, name string, data []byte) *Error {
	t.Helper()
	p, err := Parse(name, data)
	if err == nil {
		t.Fatalf("Parse accepted %s: %+v", name, *p)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("Parse(%s) error is %T, want *Error: %v", name, err, err)
	}
	if pe.File != name || len(pe.Problems) == 0 {
		t.Fatalf("Parse(%s): File %q with %d problems", name, pe.File, len(pe.Problems))
	}
	return pe
}

func TestEmptyFile(t *testing.T) {
	for _, data := range [][]byte{nil, {}} {
		pe := parseErr(t, "empty.toml", data)
		p := pe.Problems[0]
		got := fmt.Sprintf("%d problem, %d:%d %s: %s", len(pe.Problems), p.Line, p.Col, p.Check, p)
		eq(t, "problem", got, "1 problem, 0:0 text: the file is empty: a policy needs at least `version = 1`")
		if got, want := pe.Error(), "empty.toml: the file is empty: a policy needs at least `version = 1`"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
}

func TestFileSizeLimit(t *testing.T) {
	data := []byte("version = 1\n[workspace]\npath = \"/w\"\n")
	data = append(data, strings.Repeat("#", MaxFileSize-len(data))...)
	if _, err := Parse("max.toml", data); err != nil {
		t.Fatalf("Parse of exactly MaxFileSize bytes: %v", err)
	}
	pe := parseErr(t, "big.toml", append(data, '\n'))
	want := "the file is 1048577 bytes, over the 1048576-byte limit: is this the policy?"
	if p := pe.Problems[0]; p.Check != "file-size" || p.String() != want {
		t.Errorf("got %s: %s, want file-size: %s", p.Check, p, want)
	}
}

func parseValid(t *testing.T, file string) *Policy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/valid", file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(file, data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", file, err)
	}
	return p
}

func TestValidFiles(t *testing.T) {
	tests := map[string]func(t *testing.T, p *Policy){
		"offline.toml": func(t *testing.T, p *Policy) {
			eq(t, "Mode", p.Mode, ModeWrapper)
			eq(t, "Workspace.Path", p.Workspace.Path, Path("/home/ana/src/app"))
			eq(t, "Files.Read", p.Files.Read, []Path{"/usr/share", "/etc/ssl", "/etc/passwd"})
			eq(t, "Files.Write", p.Files.Write, []Path{"/home/ana/src/app", "/dev/null"})
			eq(t, "Files.Exec", p.Files.Exec, []Path{"/usr/bin", "/usr/lib"})
			eq(t, "Network.Mode", p.Network.Mode, NetNone)
			eq(t, "Limits.Memory", p.Limits.Memory, 4*GiB)
			eq(t, "Limits.FileSize", p.Limits.FileSize, 2*GiB)
			eq(t, "Limits.Processes", p.Limits.Processes, Int(512))
			eq(t, "Env.Pass", p.Env.Pass, []EnvName{"PATH", "LANG", "TERM"})
			eq(t, "Env.Set", p.Env.Set, EnvSet{"CI": "1", "GOFLAGS": "-mod=readonly"})
			eq(t, "CodeMode.Deadline (default)", p.CodeMode.Deadline, Duration(10e9))
		},
		"ports.toml": func(t *testing.T, p *Policy) {
			eq(t, "Network.Mode", p.Network.Mode, NetPorts)
			eq(t, "Network.ConnectTCP", p.Network.ConnectTCP, []Port{443})
			eq(t, "Network.BindTCP", p.Network.BindTCP, []Port{8080, 3000})
			eq(t, "Network.Allow", p.Network.Allow, []Domain(nil))
		},
		"proxy-secrets.toml": func(t *testing.T, p *Policy) {
			eq(t, "Mode", p.Mode, ModeComponents)
			eq(t, "Network.Mode", p.Network.Mode, NetProxy)
			eq(t, "Network.Allow", p.Network.Allow, []Domain{"github.com", "*.github.com", "registry.npmjs.org", "xn--bcher-kva.example"})
			eq(t, "Network.Deny", p.Network.Deny, []Domain{"gist.github.com"})
			eq(t, "Network.BlockAll", p.Network.BlockAll, true)
			eq(t, "Network.UnsafeAllowPrivate", fmt.Sprint(p.Network.UnsafeAllowPrivate), "[10.1.0.0/16 fd00::/8]")
			eq(t, "Files.Protected", p.Files.Protected, []Path{"/home/ana/src/app/.env", "/home/ana/src/app/.git/hooks"})
			eq(t, "Secrets", p.Secrets, []Secret{
				{Name: "github", Hosts: []Domain{"api.github.com", "uploads.github.com"}, Header: "Authorization", Template: "Bearer {secret}"},
				{Name: "npm-token", Hosts: []Domain{"registry.npmjs.org"}, Header: "X-Npm-Token", Template: "{secret}"},
			})
			eq(t, "Commands.Auto", p.Commands.Auto, []Command{"go test", "npm test"})
			eq(t, "Commands.Approval[1].Words", p.Commands.Approval[1].Words(), []string{"git", "push"})
			eq(t, "Commands.Timeout", p.Commands.Timeout, Duration(15*60e9))
		},
		"minimal.toml": func(t *testing.T, p *Policy) {
			want := Default()
			want.Version = 1
			want.Workspace.Path = "/w"
			got := *p
			got.src = nil
			eq(t, "policy", got, want)
		},
		"every-key.toml": func(t *testing.T, p *Policy) {
			eq(t, "Network.BlockAll", p.Network.BlockAll, false)
			eq(t, "Network.UnixSockets", p.Network.UnixSockets, false)
			eq(t, "Network.AllowECH", p.Network.AllowECH, true)
			eq(t, "Limits", p.Limits, Limits{Memory: 8 * GiB, Processes: 1024, OpenFiles: 65536, FileSize: 512 * MiB, CPUTime: Duration(2 * 3600e9), TmpSize: 256 * MiB})
			eq(t, "Env.Set", p.Env.Set, EnvSet{"LANG": "C.UTF-8"})
			eq(t, "Commands", p.Commands, Commands{Auto: []Command{"make test"}, Approval: []Command{"make deploy"}, Timeout: Duration(30e9), Output: 4 * MiB})
			eq(t, "Backups.Quota", p.Backups.Quota, 10*GiB)
			eq(t, "CodeMode", p.CodeMode, CodeMode{Memory: 128 * MiB, Stack: 2 * MiB, Deadline: Duration(500e6), ToolCalls: 50, Output: 64 * KiB, ScriptSize: 1 * MiB})
		},
		"unix-sockets.toml": func(t *testing.T, p *Policy) {
			eq(t, "Network.UnixSockets", p.Network.UnixSockets, true)
		},
		"edges.toml": func(t *testing.T, p *Policy) {
			eq(t, "Limits.Memory", p.Limits.Memory, Size(0))
			eq(t, "Limits.Processes", p.Limits.Processes, Int(4194304))
			eq(t, "Limits.OpenFiles", p.Limits.OpenFiles, Int(16))
			eq(t, "Limits.TmpSize", p.Limits.TmpSize, MiB)
			eq(t, "CodeMode.ToolCalls", p.CodeMode.ToolCalls, Int(MaxInt))
			eq(t, "CodeMode.Deadline", p.CodeMode.Deadline, Duration(2501*3600e9))
			eq(t, "CodeMode.ScriptSize", p.CodeMode.ScriptSize, Size(MaxInt))
			eq(t, "CodeMode.Memory", p.CodeMode.Memory, 8191*TiB)
		},
		"unicode.toml": func(t *testing.T, p *Policy) {
			eq(t, "Workspace.Path", p.Workspace.Path, Path("/home/zoë/src/app"))
			eq(t, "Files.Read", p.Files.Read, []Path{"/srv/données/日本語"})
			eq(t, "Env.Set", p.Env.Set, EnvSet{"GREETING": "héllo wörld ✓"})
		},
		"inline.toml": func(t *testing.T, p *Policy) {
			eq(t, "Workspace.Path", p.Workspace.Path, Path("/w"))
			eq(t, "Files.Exec", p.Files.Exec, []Path{"/opt/tools/bin"})
			eq(t, "Network.Allow", p.Network.Allow, []Domain{"example.com"})
			eq(t, "Secrets[1]", p.Secrets[1], Secret{Name: "b_2", Hosts: []Domain{"*.example.com"}, Header: "X-B", Template: "{secret}"})
		},
		"crlf.toml": func(t *testing.T, p *Policy) {
			eq(t, "Workspace.Path", p.Workspace.Path, Path("/home/ana/src/app"))
			eq(t, "Files.Read", p.Files.Read, []Path{"/usr/share", "/etc/ssl"})
			eq(t, "Limits.Memory", p.Limits.Memory, 2*GiB)
			eq(t, "Env.Set", p.Env.Set, EnvSet{"MOTD": "line one"})
		},
	}
	files, _ := filepath.Glob("testdata/valid/*.toml")
	for _, f := range files {
		if tests[filepath.Base(f)] == nil {
			t.Errorf("%s has no assertions in TestValidFiles", f)
		}
	}
	for file, check := range tests {
		t.Run(file, func(t *testing.T) {
			p := parseValid(t, file)
			eq(t, "Version", p.Version, Int(1))
			check(t, p)
			if ps := Validate(p); len(ps) > 0 {
				t.Errorf("Validate after Parse: %v", ps)
			}
		})
	}
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// schemaKeys lists the dotted keys of the schema, arrays of tables as
// "secrets.name".
func schemaKeys(t reflect.Type, prefix string) []string {
	var out []string
	for _, f := range schemaFields(t) {
		key := prefix + f.Tag.Get("toml")
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !reflect.PointerTo(ft.Elem()).Implements(unmarshalerType) {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(unmarshalerType) {
			out = append(out, schemaKeys(ft, key+".")...)
		} else {
			out = append(out, key)
		}
	}
	return out
}

// fileKeys lists the schema keys a file sets.
func fileKeys(t *testing.T, file string) map[string]bool {
	t.Helper()
	var tree map[string]any
	if _, err := toml.DecodeFile(file, &tree); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if prefix == "env.set." {
				keys["env.set"] = true
				continue
			}
			switch v := v.(type) {
			case map[string]any:
				walk(v, prefix+k+".")
			case []map[string]any:
				for _, e := range v {
					walk(e, prefix+k+".")
				}
			default:
				keys[prefix+k] = true
			}
		}
	}
	walk(tree, "")
	return keys
}

// TestEveryKeyCovered keeps every-key.toml honest and makes sure each key of
// the schema is accepted by at least one valid file.
func TestEveryKeyCovered(t *testing.T) {
	onlyInPorts := []string{"network.bind_tcp", "network.connect_tcp"}
	all := schemaKeys(reflect.TypeFor[Policy](), "")
	if len(all) < 30 {
		t.Fatalf("schemaKeys found %d keys: %v", len(all), all)
	}
	every := fileKeys(t, "testdata/valid/every-key.toml")
	union := map[string]bool{}
	files, _ := filepath.Glob("testdata/valid/*.toml")
	for _, f := range files {
		for k := range fileKeys(t, f) {
			union[k] = true
		}
	}
	for _, k := range all {
		if !every[k] && !slices.Contains(onlyInPorts, k) {
			t.Errorf("every-key.toml does not set %s", k)
		}
		if !union[k] {
			t.Errorf("no file in testdata/valid sets %s", k)
		}
	}
}

// The schema walk collects problems in key order and the checks in check
// order; either way they come out in file order.
func TestProblemOrder(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{{
		name: "schema walk",
		// Walked in key order: files (line 9), limits (6), network (3).
		text: `version = 1
[network]
mode = "open"
[limits]
processes = 1
memory = "4GB"
[files]
write = ["/w"]
read = ["usr"]
[workspace]
path = "/w"
`,
		want: []string{
			`3: network.mode: "open" is not one of ["none" "ports" "proxy"]`,
			`6: limits.memory: size "4GB" is not digits followed by B, KiB, MiB, GiB or TiB (e.g. "512MiB"), or "0"`,
			`9: files.read[0]: path "usr" is not absolute: a relative path binds to whatever directory the launcher starts in`,
		},
	}, {
		name: "named checks",
		text: `version = 1
[limits]
processes = 0
[workspace]
path = "/w"
[env]
pass = ["CI", "CI"]
[files]
exec = ["/w"]
write = ["/w"]
`,
		want: []string{
			`3: limits.processes: 0 is below the minimum 1: a zero or negative process limit is not "unlimited"; fork bombs must stay bounded (SR-04)`,
			`7: env.pass: "CI" is listed more than once: each value is listed once (SR-13)`,
			`10: files.write: write path "/w" is also an exec path: a file the agent writes could then be executed (SR-01)`,
		},
	}, {
		name: "a missing key is placed at its table",
		text: `version = 1
[workspace]
path = "/w"
[network]
mode = "proxy"
[limits]
processes = 0
`,
		want: []string{
			`4: network.allow: "proxy" mode with block_all = true and no allow rules would refuse every host`,
			`7: limits.processes: 0 is below the minimum 1: a zero or negative process limit is not "unlimited"; fork bombs must stay bounded (SR-04)`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe := parseErr(t, "order.toml", []byte(tt.text))
			var got []string
			for _, p := range pe.Problems {
				got = append(got, p.String())
			}
			eq(t, "problems", got, tt.want)
			if n := len(tt.want) - 1; n > 0 {
				want := fmt.Sprintf("order.toml:%s (and %d more)", tt.want[0], n)
				eq(t, "Error()", pe.Error(), want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	// Many problems of equal and different lines, from both stages' sources.
	text := []byte(`version = 1
[files]
read = ["a", "b", "/c/", "/d//e"]
exec = ["x", "y"]
[network]
mode = "ports"
connect_tcp = [0, 65536, -1]
allow = ["A.com", "b..c"]
[env]
set = { "1A" = "x", "2B" = "y", "C-D" = 1 }
[limits]
memory = "1GB"
file_size = "2GB"
`)
	first := parseErr(t, "det.toml", text)
	if len(first.Problems) < 10 {
		t.Fatalf("want at least 10 problems, got %d: %v", len(first.Problems), first.Lines())
	}
	for i := range 20 {
		again := parseErr(t, "det.toml", text)
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, strings.Join(first.Lines(), "\n"), strings.Join(again.Lines(), "\n"))
		}
	}
}

func TestSecretsElement(t *testing.T) {
	const head = `version = 1
mode = "components"
[workspace]
path = "/w"
[network]
mode = "proxy"
allow = ["example.com"]
`
	const elem = `[[secrets]]
name = "%s"
hosts = ["example.com"]
header = "A"
template = "{secret}"
%s`
	tests := []struct {
		name, text string
		want       []string
	}{{
		name: "bogus in the second element",
		text: head + fmt.Sprintf(elem, "a", "") + fmt.Sprintf(elem, "b", "bogus = 1\n"),
		want: []string{`18: secrets[1].bogus: unknown key "bogus"`},
	}, {
		// The library keeps the last definition of a key only; the first
		// element's problem points at its header instead.
		name: "bogus in both elements",
		text: head + fmt.Sprintf(elem, "a", "bogus = 1\n") + fmt.Sprintf(elem, "b", "bogus = 2\n"),
		want: []string{`8: secrets[0].bogus: unknown key "bogus"`, `19: secrets[1].bogus: unknown key "bogus"`},
	}, {
		name: "bad value in the second element",
		text: head + fmt.Sprintf(elem, "a", "") + fmt.Sprintf(elem, "B", ""),
		want: []string{`14: secrets[1].name: secret name "B" has upper-case letters: names are lower case`},
	}, {
		name: "inline array of tables",
		text: `version = 1
secrets = [{ name = "a", hosts = ["example.com"], header = "A", template = "{secret}" }, { name = "b", bogus = 1 }]
`,
		want: []string{`2: secrets[1].bogus: unknown key "bogus"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe := parseErr(t, "s.toml", []byte(tt.text))
			var got []string
			for _, p := range pe.Problems {
				got = append(got, p.String())
			}
			eq(t, "problems", got, tt.want)
		})
	}
}

// TestIntBoundsParse runs the ±(2^53-1) bounds through the whole decoder:
// the value check refuses ±2^53, while -(2^53-1) reaches the named checks.
func TestIntBoundsParse(t *testing.T) {
	tests := []struct {
		value, check, want string
	}{
		{"9007199254740991", "", ""},
		{"9007199254740992", "value", "4: code_mode.tool_calls: integer 9007199254740992 is outside ±(2^53-1): JavaScript and JSON readers would not keep it exact (SR-14)"},
		{"-9007199254740991", "limit-range", `4: code_mode.tool_calls: -9007199254740991 is below the minimum 0: a budget cannot be negative`},
		{"-9007199254740992", "value", "4: code_mode.tool_calls: integer -9007199254740992 is outside ±(2^53-1): JavaScript and JSON readers would not keep it exact (SR-14)"},
		{"9223372036854775808", "syntax", "4:14: code_mode.tool_calls: 9223372036854775808 is out of range for int64"},
	}
	for _, tt := range tests {
		text := "version = 1\nworkspace.path = \"/w\"\n[code_mode]\ntool_calls = " + tt.value + "\n"
		p, err := Parse("int.toml", []byte(text))
		if tt.check == "" {
			if err != nil {
				t.Errorf("processes = %s: %v", tt.value, err)
			} else if p.CodeMode.ToolCalls != MaxInt {
				t.Errorf("tool_calls = %s: got %d", tt.value, p.CodeMode.ToolCalls)
			}
			continue
		}
		first := parseErr(t, "int.toml", []byte(text)).Problems[0]
		if first.Check != tt.check || first.String() != tt.want {
			t.Errorf("processes = %s:\n got  %s: %s\n want %s: %s", tt.value, first.Check, first, tt.check, tt.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "p.toml", Problems: []Problem{
		{Line: 3, Col: 7, Key: "files.write", Msg: "bad", Risk: "SR-01"},
		{Key: "workspace", Msg: "missing"},
		{Line: 4, Msg: "already names it (SR-02)", Risk: "SR-02"},
	}}
	eq(t, "Lines", e.Lines(), []string{
		"p.toml:3:7: files.write: bad (SR-01)",
		"p.toml: workspace: missing",
		"p.toml:4: already names it (SR-02)",
	})
	eq(t, "Error", e.Error(), "p.toml:3:7: files.write: bad (SR-01) (and 2 more)")
}

// TestManyProblems: locating a key decodes the file again, so problems that
// share a key share the lookup, and at most maxLocate keys are looked up.
func TestManyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString("version = 1\n[workspace]\npath = \"/w\"\n[files]\nread = [\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "  \"rel%d\",\n", i)
	}
	b.WriteString("]\n")
	start := time.Now()
	pe := parseErr(t, "many.toml", []byte(b.String()))
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("20000 problems under one key took %v", d) // was minutes
	}
	if len(pe.Problems) != 20000 || pe.Problems[19999].String() != `5: files.read[19999]: path "rel19999" is not absolute: a relative path binds to whatever directory the launcher starts in` {
		t.Errorf("%d problems, last %s", len(pe.Problems), pe.Problems[len(pe.Problems)-1])
	}

	b.Reset()
	b.WriteString("version = 1\n[workspace]\npath = \"/w\"\n[env.set]\n")
	for i := range maxLocate + 10 {
		fmt.Fprintf(&b, "%dX = \"x\"\n", i)
	}
	pe = parseErr(t, "keys.toml", []byte(b.String()))
	lineless := 0
	for _, p := range pe.Problems {
		if p.Line == 0 {
			lineless++
		}
	}
	if len(pe.Problems) != maxLocate+10 || lineless != 10 {
		t.Errorf("%d problems, %d without a line; want %d and 10", len(pe.Problems), lineless, maxLocate+10)
	}
	if got, want := pe.Problems[0].String(), `5: env.set.0X: environment variable name "0X" has character '0' at offset 0`; got != want {
		t.Errorf("first problem %s, want %s", got, want)
	}
}

// Deep nesting is refused before the decoder sees it (whose memory grows
// far faster with nesting than with size): inline tables, arrays and
// dotted keys, with the line it is on. Brackets, braces and dots inside
// strings of every kind and in comments are text, not structure.
func TestNestingBounded(t *testing.T) {
	deep := func(n int, open, close string) string {
		return "version = 1\nx = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
	}
	for name, c := range map[string]struct{ text, want string }{
		"inline tables": {deep(40, "{a=", "}"), "brackets and braces nested more than 16 deep"},
		"arrays":        {deep(17, "[", "]"), "brackets and braces nested more than 16 deep"},
		"dotted keys":   {"version = 1\n" + "x" + strings.Repeat(".a", 17) + " = 1\n", "more than 16 dots outside strings"},
		"table header":  {"version = 1\n[x" + strings.Repeat(".a", 17) + "]\n", "more than 16 dots outside strings"},
		// Long keys: the decoder keeps a copy of a table's name in each of
		// its keys, so length times count is its memory.
		"a long table name":        {"version = 1\n[" + strings.Repeat("A", 300) + "]\nb = 1\n", "a key of 257 characters, more than 256"},
		"a long bare key":          {"version = 1\n" + strings.Repeat("k", 300) + " = 1\n", "a key of 257 characters, more than 256"},
		"a long quoted key":        {"version = 1\nx = {\"" + strings.Repeat("q", 300) + "\" = 1}\n", "a key of 300 characters, more than 256"},
		"a long literal key":       {"version = 1\n['" + strings.Repeat("q", 300) + "']\n", "a key of 300 characters, more than 256"},
		"a long dotted key part":   {"version = 1\na.\"" + strings.Repeat("q", 300) + "\" .b = 1\n", "a key of 300 characters, more than 256"},
		"a long dotted table name": {"version = 1\n[" + strings.TrimSuffix(strings.Repeat(strings.Repeat("k", 250)+".", 3), ".") + "]\nb = 1\n", "a key of more than 512 characters with its dotted parts"},
		"a long dotted key":        {"version = 1\n" + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("k", 200)+`".`, 3), ".") + " = 1\n", "a key of more than 512 characters with its dotted parts"},
		// A key's name includes the inline tables and arrays it is in (a
		// re-test: 15 inline tables each named by 511 characters, within
		// every other bound, took the decoder past 4 GB).
		"nested inline tables":    {"version = 1\nx = { " + strings.Repeat(strings.Repeat("k", 200)+" = { ", 3) + "a = 1" + strings.Repeat(" }", 4) + "\n", "a key of more than 512 characters with its dotted parts and the names of the tables it is in"},
		"tables in nested arrays": {"version = 1\n" + strings.Repeat("k", 250) + " = [ { " + strings.Repeat("j", 250) + " = [ { " + strings.Repeat("i", 20) + " = 1 } ] } ]\n", "a key of more than 512 characters with its dotted parts and the names of the tables it is in"},
		// Up to two quotes of the text may stand before a multi-line
		// string's closing three: the string ends after all of them.
		"after a multi-line basic string ending in quotes":   {"version = 1\nx = [ \"\"\"a\"\"\"\", " + strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40) + " ]\n", "brackets and braces nested more than 16 deep"},
		"after a multi-line literal string ending in quotes": {"version = 1\nx = [ '''a'''', " + strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40) + " ]\n", "brackets and braces nested more than 16 deep"},
	} {
		pe := parseErr(t, name, []byte(c.text))
		if p := pe.Problems[0]; p.Check != "text" || p.Line != 2 || !strings.HasPrefix(p.Msg, c.want) {
			t.Errorf("%s: %s: %q, want %q…", name, p.Check, p.Msg, c.want)
		}
	}
	// Keys under a long table name count its name too; the next header
	// starts again, and a line that starts with '[' inside an array is
	// not a header.
	header := "version = 1\n[" + strings.Repeat("h", 250) + "." + strings.Repeat("h", 250) + "]\n"
	pe := parseErr(t, "under a long table name", []byte(header+strings.Repeat("k", 20)+" = 1\n"))
	if p := pe.Problems[0]; p.Check != "text" || p.Line != 3 || !strings.Contains(p.Msg, "the names of the tables it is in") {
		t.Errorf("under a long table name: %s: line %d: %q", p.Check, p.Line, p.Msg)
	}
	for name, text := range map[string]string{
		"a short key under a long table name": header + "k = 1\n",
		"a new table":                         header + "[x]\n" + strings.Repeat("k", 250) + " = 1\n",
		"arrays over lines":                   strings.Repeat("k", 250) + " = [\n [1, 2],\n [3],\n]\n" + strings.Repeat("j", 250) + " = { " + strings.Repeat("i", 250) + " = 1 }\n",
	} {
		pe := parseErr(t, name, []byte("version = 1\n"+strings.TrimPrefix(text, "version = 1\n")))
		if p := pe.Problems[0]; p.Check == "text" {
			t.Errorf("%s: refused as structure: %s", name, p.Msg)
		}
	}
	// The same characters as text: past the structure check, to the
	// schema (which knows no key "x").
	many := strings.Repeat("[{.", 40)
	for name, text := range map[string]string{
		"basic":                         "x = \"" + many + "\\\"" + many + "\"\n",
		"literal":                       "x = '" + many + "'\n",
		"multi-line basic":              "x = \"\"\"\n" + many + "\n" + many + "\"\"\"\n",
		"multi-line literal":            "x = '''\n" + many + "\n'''\n",
		"comment":                       "# " + many + "\nx = 1\n",
		"a long value":                  "x = \"/" + strings.Repeat("v", 1000) + "\"\n",
		"a long value last in an array": "x = [\"/" + strings.Repeat("v", 1000) + "\"]\ny = ['/" + strings.Repeat("v", 1000) + "' ]\n",
		"ending in quotes":              "x = [ \"\"\"say \"hi\"\"\"\"\", '''it''''', \"" + many + "\" ]\n",
	} {
		pe := parseErr(t, name, []byte("version = 1\n"+text))
		if p := pe.Problems[0]; p.Check == "text" {
			t.Errorf("%s: refused as structure: %s", name, p.Msg)
		}
	}
}

// Placing problems on their lines decodes the file again for each key,
// so the lookups share a budget of decoded text: a large file with many
// bad keys is refused with every problem, only the first few on their
// lines (a re-test: 32 lookups of 350 KiB took 27 s).
func TestLocateBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("version = 1\n")
	for i := range 40 {
		fmt.Fprintf(&b, "[unknown%d]\n# %s\n", i, strings.Repeat("p", 7000))
	}
	text := b.String() // about 280 KiB
	pe := parseErr(t, "big.toml", []byte(text))
	placed := 0
	for _, p := range pe.Problems {
		if p.Line > 0 {
			placed++
		}
	}
	if len(pe.Problems) != 40 || placed == 0 || placed > maxLocateBytes/len(text) {
		t.Errorf("%d problems, %d placed on a line; want 40, at most %d placed", len(pe.Problems), placed, maxLocateBytes/len(text))
	}
}
