package site

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const h0 = "0000000000000000000000000000000000000000000000000000000000000000"

// manifestCases are manifests that Verify takes (want "") or refuses
// with a message holding want, before any file is read.
var manifestCases = []struct{ raw, want string }{
	{`{"version":1,"files":{}}`, ""},
	{"{\n  \"files\": {\"a.html\": \"" + h0 + "\"},\n  \"version\": 1\n}\n", ""},
	{`{"version":1,"files":{}}<script>alert(1)</script>`, "there is more after its JSON object"},
	{`{"version":1,"files":{}}{}`, "there is more after its JSON object"},
	{`{"version":1,"files":{}}}`, "there is more after its JSON object"},
	{`{"version":1,"files":{"a.html":"` + h0 + `","a.html":"` + h0 + `"}}`, `"a.html" is listed twice in "files"`},
	{`{"version":1,"files":{"a.html":"` + h0 + `","a\u002ehtml":"` + h0 + `"}}`, `"a.html" is listed twice in "files"`},
	{`{"version":1,"files":{},"files":{}}`, `the key "files" is given twice`},
	{`{"version":1,"version":1,"files":{}}`, `the key "version" is given twice`},
	{`{"version":1,"FILES":{}}`, `unknown key "FILES": the keys are "version" and "files"`},
	{`{"Version":1,"files":{}}`, `unknown key "Version"`},
	{`{"version":1,"files":{},"extra":0}`, `unknown key "extra"`},
	{`{"version":1,"files":null}`, `"files" is not a JSON object`},
	{`{"version":1,"files":[]}`, `"files" is not a JSON object`},
	{`{"version":1}`, `it needs both "version" and "files"`},
	{`{"files":{}}`, `it needs both "version" and "files"`},
	{`{"version":2,"files":{}}`, `"version" is "2", not 1`},
	{`{"version":1.0,"files":{}}`, `"version" is "1.0", not 1`},
	{`{"version":"1","files":{}}`, `"version" is "\"1\"", not 1`},
	{`{"version":1,"files":{"a.html":"` + strings.ToUpper(h0[:63]) + `A"}}`, `"files"["a.html"] is not a sha256`},
	{`{"version":1,"files":{"a.html":null}}`, `"files"["a.html"] is not a sha256`},
	{`{"version":1,"files":{"a.html":1}}`, `"files"["a.html"] is not a sha256`},
	{`[]`, "the manifest is not a JSON object"},
	{`null`, "the manifest is not a JSON object"},
	{``, "the manifest is not a JSON object"},
	{"\ufeff{\"version\":1,\"files\":{}}", "the manifest is not a JSON object"},
	{`{"version":1,"files":{}`, "the manifest is not well-formed JSON: unexpected EOF"},
	{`{"version":1,"files":{"a.html":`, `"files"["a.html"] is not well-formed JSON: unexpected EOF`},
	{`{"version":1,"files":{"a.html" "x"}}`, `"files"["a.html"] is not well-formed JSON: expected colon after object key`},
	{`{"version":1,"files":{"a.html":"` + h0 + `" "b.html":"` + h0 + `"}}`, `"files" is not well-formed JSON: invalid character`},
	{`{"version":}`, `"version" is not well-formed JSON: invalid character`},
}

// The manifest is read strictly: one object, exactly "version" and
// "files" spelled so, no key twice at either level, nothing after it,
// and a message that says which of these failed.
func TestManifestStrict(t *testing.T) {
	for _, c := range manifestCases {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, ManifestName), []byte(c.raw), 0o644); err != nil {
			t.Fatal(err)
		}
		problems, err := Verify(d, sha256.Sum256([]byte(c.raw)))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.raw, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: want an error holding %q, got %v (problems %q)", c.raw, c.want, err, problems)
		case err != nil && !strings.Contains(err.Error(), "not a version 1 manifest: "):
			t.Errorf("%s: %v", c.raw, err)
		}
	}
}

// Whatever parseManifest takes is a version 1 manifest whose hashes are
// sha256s, and encoding it again gives back the same manifest.
func FuzzParseManifest(f *testing.F) {
	for _, c := range manifestCases {
		f.Add([]byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseManifest(raw)
		if err != nil {
			return
		}
		if m.Version != 1 || m.Files == nil {
			t.Fatalf("%q: %+v", raw, m)
		}
		for name, sum := range m.Files {
			if !sha256Hex().MatchString(sum) {
				t.Fatalf("%q: %q has %q", raw, name, sum)
			}
		}
		again, _ := json.Marshal(m)
		m2, err := parseManifest(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("%q: encoded again as %s: %v", raw, again, err)
		}
	})
}

// What encoding/json would read otherwise than a careful reader is
// refused: a key twice (the last wins), a key in another case (matched
// regardless of case), data after the value; the controls pass.
func TestCheckJSONKeys(t *testing.T) {
	for text, want := range map[string]string{
		`{"results":[{"verdict":"pass"}],"machine":{"uid":0}}`: "",
		`{"a":{"b":[{"c":1},{"c":2}]},"d":"e"}`:                "",
		`{"a":["x","x"],"b":"a"}`:                              "", // values may repeat, and look like keys
		`{"results":[{"verdict":"pass","verdict":"fail"}]}`:    `key "verdict" appears twice`,
		`{"results":[],"results":[]}`:                          `key "results" appears twice`,
		`{"RESULTS":[]}`:                                       `key "RESULTS" is not in lower case`,
		`{"machine":{"Uid":0}}`:                                `key "Uid" is not in lower case`,
		`{"results":[]}{"results":[]}`:                         "data after the first JSON value",
		`{"results":[]} x`:                                     "data after the first JSON value",
	} {
		err := CheckJSONKeys([]byte(text))
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}
