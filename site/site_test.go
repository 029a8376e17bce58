package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/register"
)

func testInput(t *testing.T) Input {
	t.Helper()
	sec, err := os.ReadFile("../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Bench: "launch", Title: "Launch of /usr/bin/true", Unit: "ms", Better: "lower", Date: "2026-11-30T10:00:00Z",
		Machine: report.Machine{Kernel: "6.18.0", CPUs: 2, GoVersion: "go1.26.8"},
		Rows:    []report.Row{{Name: "bare", Median: 1.1, P90: 1.3, Runs: 50}, {Name: "launcher", Median: 9.5, P90: 11, Runs: 50}, {Name: "bubblewrap", Median: 4.6, Runs: 50}},
		Notes:   []string{"launcher / bubblewrap: 2.06"}}
	machine := register.Machine{Kernel: "6.18.0", LandlockABI: 7, CgroupMode: "hybrid", UID: 0, Version: "0.1.0-dev"}
	older, newer := machine, machine
	older.Date, newer.Date = "2026-11-01T00:00:00Z", "2026-11-30T00:00:00Z"
	other := machine
	other.Kernel, other.LandlockABI, other.CgroupMode, other.Date = "6.1.0", 3, "v2", "2026-11-15T00:00:00Z"
	return Input{
		Version:  "test",
		Security: sec,
		Entries:  register.All(),
		Evidence: []Evidence{
			// Given newest first: the order of the files does not matter.
			{"b.json", register.Evidence{Machine: newer, Results: []register.Result{{ID: "SR-01", Verdict: register.Pass, Reason: "refused; control succeeded"}}}},
			{"a.json", register.Evidence{Machine: older, Results: []register.Result{{ID: "SR-01", Verdict: register.Fail, Reason: "old failure"}, {ID: "SR-03", Verdict: register.Inconclusive, Reason: "control failed"}}}},
			{"c.json", register.Evidence{Machine: other, Results: []register.Result{{ID: "SR-01", Verdict: register.Skipped, Reason: "no Landlock ABI 4"}}}},
		},
		Bench: []*report.Report{r},
	}
}

// The same input builds the same bytes, written or not; the manifest
// lists every file.
func TestReproducible(t *testing.T) {
	in := testInput(t)
	a, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two builds", name)
		}
	}
	d1, d2 := filepath.Join(t.TempDir(), "s1"), filepath.Join(t.TempDir(), "s2")
	for _, d := range []string{d1, d2} {
		files, _ := Build(in)
		if _, err := Write(d, files); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range append(names(a), ManifestName) {
		x, err1 := os.ReadFile(filepath.Join(d1, name))
		y, err2 := os.ReadFile(filepath.Join(d2, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: the two written sites differ (%v %v)", name, err1, err2)
		}
	}
	var m Manifest
	raw, _ := os.ReadFile(filepath.Join(d1, ManifestName))
	if err := json.Unmarshal(raw, &m); err != nil || len(m.Files) != len(a) {
		t.Fatalf("manifest: %v, %d files for %d", err, len(m.Files), len(a))
	}
	for _, want := range []string{"index.html", "threat-model.html", "risks.html", "policy.html", "bench.html", "playground.html", "playground.js", "nonprint.js", "style.css", "chart-launch.svg"} {
		if _, ok := m.Files[want]; !ok {
			t.Errorf("the site has no %s", want)
		}
	}
}

func names(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// verify names each file that changed (one byte), was added or is
// missing, or is not a regular file; a manifest entry that points
// outside the site is a problem, not a file read.
func TestVerifyTampering(t *testing.T) {
	in := testInput(t)
	write := func(t *testing.T) (string, [sha256.Size]byte) {
		d := filepath.Join(t.TempDir(), "site")
		files, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Write(d, files)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := Verify(d, sum); err != nil || len(p) != 0 {
			t.Fatalf("a fresh site: %v %v", p, err)
		}
		return d, sum
	}
	for _, c := range []struct {
		name   string
		tamper func(d string) error
		want   string
	}{
		{"one byte changed", func(d string) error {
			p := filepath.Join(d, "playground.js")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			return os.WriteFile(p, b, 0o644)
		}, `"playground.js": changed`},
		{"a file added", func(d string) error { return os.WriteFile(filepath.Join(d, "evil.js"), []byte("x"), 0o644) }, `"evil.js": added`},
		{"a directory added", func(d string) error { return os.Mkdir(filepath.Join(d, "sub"), 0o755) }, `"sub": added`},
		{"a file missing", func(d string) error { return os.Remove(filepath.Join(d, "risks.html")) }, `"risks.html": missing`},
		{"a file swapped for a link", func(d string) error {
			p := filepath.Join(d, "style.css")
			b, _ := os.ReadFile(p)
			alt := filepath.Join(filepath.Dir(d), "same.css")
			os.WriteFile(alt, b, 0o644)
			os.Remove(p)
			return os.Symlink(alt, p)
		}, `"style.css": not a regular file`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, sum := write(t)
			if err := c.tamper(d); err != nil {
				t.Fatal(err)
			}
			p, err := Verify(d, sum)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range p {
				got = append(got, x.String())
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("want %q, got %q", c.want, got)
			}
		})
	}

	// A manifest pinned as it is (a publisher's bad build) that names a
	// path outside the site: a problem, nothing opened.
	d, _ := write(t)
	b, _ := os.ReadFile(filepath.Join(d, ManifestName))
	b = bytes.Replace(b, []byte(`"bench.html"`), []byte(`"../../etc/passwd"`), 1)
	os.WriteFile(filepath.Join(d, ManifestName), b, 0o644)
	p, err := Verify(d, sha256.Sum256(b))
	if err != nil || len(p) != 2 || p[0].String() != `"../../etc/passwd": the manifest names a file a site cannot hold` {
		t.Errorf("a manifest naming ../../etc/passwd: %q %v", p, err)
	}

	d, _ = write(t)
	os.WriteFile(filepath.Join(d, ManifestName), []byte("{"), 0o644)
	if _, err := Verify(d, sha256.Sum256([]byte("{"))); err == nil || errors.Is(err, ErrManifestMismatch) {
		t.Errorf("a broken manifest: %v", err)
	}
}

// A page changed and its line in the manifest rewritten to match, or the
// manifest replaced by an empty one: the manifest is not the one pinned,
// and that is all Verify says.
func TestVerifyAnchored(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(t.TempDir(), "site")
	sum, err := Write(d, files)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(d, ManifestName))
	if sum != sha256.Sum256(raw) {
		t.Fatal("Write's sum is not the written manifest's sha256")
	}
	page := append(files["index.html"], "<script>alert(1)</script>"...)
	os.WriteFile(filepath.Join(d, "index.html"), page, 0o644)
	var m Manifest
	json.Unmarshal(raw, &m)
	h := sha256.Sum256(page)
	m.Files["index.html"] = hex.EncodeToString(h[:])
	rewritten, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(d, ManifestName), rewritten, 0o644)
	if p, err := Verify(d, sum); !errors.Is(err, ErrManifestMismatch) || p != nil {
		t.Errorf("a rewritten manifest: %v %v", p, err)
	} else if !strings.Contains(err.Error(), `site/manifest.json": its sha256 does not match`) || strings.Contains(err.Error(), hex.EncodeToString(h[:])) {
		t.Errorf("the mismatch's message: %v", err)
	}
	// Control: pinned to what is there now, the same directory verifies.
	if p, err := Verify(d, sha256.Sum256(rewritten)); err != nil || len(p) != 0 {
		t.Errorf("control, pinned to the rewritten manifest: %v %v", p, err)
	}

	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, ManifestName), []byte(`{"version":1,"files":{}}`), 0o644)
	if _, err := Verify(empty, sum); !errors.Is(err, ErrManifestMismatch) {
		t.Errorf("a directory holding only an empty manifest: %v", err)
	}
}

// A name from the directory or from the manifest is printed quoted: no
// control character of it reaches the auditor's terminal, and the quoted
// form gives back the name.
func TestProblemQuotesNames(t *testing.T) {
	const added = "\xc3\xbf\r\x1b[5A\x1b[Jsite: every file matches manifest.json\x1b[8m"
	const listed = "a\x1b[31mred\nline\u202e"
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, added), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	man, _ := json.Marshal(Manifest{Version: 1, Files: map[string]string{listed: strings.Repeat("0", 64)}})
	os.WriteFile(filepath.Join(d, ManifestName), man, 0o644)
	p, err := Verify(d, sha256.Sum256(man))
	if err != nil || len(p) != 2 {
		t.Fatalf("%q %v", p, err)
	}
	for _, x := range p {
		s := x.String()
		if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
			t.Errorf("%q holds %U", s, []rune(s[i:])[0])
		}
		quoted, _ := strconv.QuotedPrefix(s)
		if name, err := strconv.Unquote(quoted); err != nil || name != x.File || (name != added && name != listed) {
			t.Errorf("%q: the quoted name gives back %q (%v)", s, name, err)
		}
	}
}

// Write replaces a site or fills an empty directory, and refuses any
// other directory without touching it.
func TestWriteReplacesOnlySites(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	site := func(d string) error { _, err := Write(d, files); return err }
	for _, c := range []struct {
		name    string
		prepare func(d string) error
		want    string // "" when d is replaced
	}{
		{"someone's notes", func(d string) error { return os.WriteFile(filepath.Join(d, "notes.txt"), []byte("mine"), 0o644) },
			"it is not empty and holds no manifest.json"},
		{"a browser extension", func(d string) error {
			os.WriteFile(filepath.Join(d, "background.js"), []byte("chrome.runtime"), 0o644)
			return os.WriteFile(filepath.Join(d, ManifestName), []byte(`{"manifest_version": 3, "name": "mine", "version": "1.0"}`), 0o644)
		}, `its manifest.json is not a version 1 manifest: unknown key "manifest_version"`},
		{"a site with a file added", func(d string) error {
			site(d)
			return os.WriteFile(filepath.Join(d, "notes.txt"), []byte("mine"), 0o644)
		}, `it differs from its manifest.json: "notes.txt": added: not in the manifest`},
		{"a site with a directory added", func(d string) error {
			site(d)
			os.Mkdir(filepath.Join(d, "src"), 0o755)
			return os.WriteFile(filepath.Join(d, "src", "main.go"), []byte("package main"), 0o644)
		}, `it differs from its manifest.json: "src": added: not in the manifest`},
		{"a site with a listed name made a directory", func(d string) error {
			site(d)
			os.Remove(filepath.Join(d, "style.css"))
			return os.Mkdir(filepath.Join(d, "style.css"), 0o755)
		}, `it differs from its manifest.json: "style.css": not a regular file`},
		{"a site with a file missing", func(d string) error { site(d); return os.Remove(filepath.Join(d, "bench.html")) },
			`it differs from its manifest.json: "bench.html": missing`},
		{"a manifest that is a FIFO", func(d string) error { return unix.Mkfifo(filepath.Join(d, ManifestName), 0o644) },
			"its manifest.json: not a regular file"},
		// A page edited since, or a listed name's bytes that are not the
		// manifest's (a directory of notes with a manifest naming them):
		// someone's work.
		{"a site with a page edited", func(d string) error {
			site(d)
			return os.WriteFile(filepath.Join(d, "index.html"), []byte("edited"), 0o644)
		}, `it differs from its manifest.json: "index.html": changed: its sha256 is not the manifest's`},
		{"notes whose manifest names them", func(d string) error {
			os.WriteFile(filepath.Join(d, "thesis.txt"), []byte("my thesis"), 0o644)
			return os.WriteFile(filepath.Join(d, ManifestName), []byte(`{"version":1,"files":{"thesis.txt":"`+strings.Repeat("0", 64)+`"}}`), 0o644)
		}, `it differs from its manifest.json: "thesis.txt": changed`},
		{"an empty directory", func(d string) error { return nil }, ""},
		{"a site", site, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "out")
			os.Mkdir(d, 0o755)
			if err := c.prepare(d); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, d)
			sum, err := Write(d, files)
			if c.want != "" {
				want := strconv.Quote(d) + " is not a site this command built: " + c.want
				if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; nothing was replaced") {
					t.Fatalf("want %q…; nothing was replaced, got %v", want, err)
				}
				if after := snapshot(t, d); !reflect.DeepEqual(before, after) {
					t.Errorf("the refused directory changed:\n%v\n%v", before, after)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if p, err := Verify(d, sum); err != nil || len(p) != 0 {
				t.Errorf("the written site: %v %v", p, err)
			}
			if ents, _ := os.ReadDir(filepath.Dir(d)); len(ents) != 1 {
				t.Errorf("debris beside it: %v", ents)
			}
		})
	}
}

// snapshot is every path under d with its type and, for a file, its bytes.
func snapshot(t *testing.T, d string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out[p] = e.Type().String()
		if e.Type().IsRegular() {
			b, err := os.ReadFile(p)
			out[p] += " " + string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every page: one h1, lang, a viewport, a skip link; every image has
// alt text; every link and source is a file of the site (or a fragment of
// one), nothing external; ids unique; the input has a label.
func TestPagesAccessibleAndSelfContained(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	files[ManifestName] = nil
	for _, p := range pages {
		doc, err := html.Parse(bytes.NewReader(files[p.File]))
		if err != nil {
			t.Fatal(err)
		}
		var h1, viewport int
		ids := map[string]int{}
		labels := map[string]bool{}
		var inputs []string
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				a := map[string]string{}
				for _, at := range n.Attr {
					a[at.Key] = at.Val
				}
				if id, ok := a["id"]; ok {
					ids[id]++
				}
				switch n.Data {
				case "html":
					if a["lang"] != "en" {
						t.Errorf("%s: html lang %q", p.File, a["lang"])
					}
				case "h1":
					h1++
				case "meta":
					if a["name"] == "viewport" && strings.Contains(a["content"], "width=device-width") {
						viewport++
					}
				case "img":
					if len(a["alt"]) < 10 {
						t.Errorf("%s: image %s has alt %q", p.File, a["src"], a["alt"])
					}
				case "label":
					labels[a["for"]] = true
				case "input":
					inputs = append(inputs, a["id"])
				}
				for _, k := range []string{"href", "src"} {
					v, ok := a[k]
					if !ok {
						continue
					}
					file, _, _ := strings.Cut(v, "#")
					if file == "" {
						continue
					}
					if _, ok := files[file]; !ok {
						t.Errorf("%s: %s=%q is not a file of the site", p.File, k, v)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if h1 != 1 || viewport != 1 {
			t.Errorf("%s: %d h1, %d viewport", p.File, h1, viewport)
		}
		for id, n := range ids {
			if n > 1 {
				t.Errorf("%s: id %q %d times", p.File, id, n)
			}
		}
		for _, in := range inputs {
			if !labels[in] {
				t.Errorf("%s: input %q has no label", p.File, in)
			}
		}
		if !bytes.Contains(files[p.File], []byte(`class="skip" href="#main"`)) {
			t.Errorf("%s: no skip link", p.File)
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(files[p.File]) {
			t.Errorf("%s: refers to another site", p.File)
		}
	}
}

// The risks page shows each entry's latest result per machine: the newer
// file wins on one machine, another machine has its own row, and an
// entry no machine ran reads "not run".
func TestRisksLatestPerMachine(t *testing.T) {
	rs := risks(register.All(), testInput(t).Evidence)
	byID := map[string]risk{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	sr1 := byID["SR-01"].Results
	if len(sr1) != 2 {
		t.Fatalf("SR-01: %d machines", len(sr1))
	}
	got := map[string]register.Verdict{}
	for _, r := range sr1 {
		got[r.Machine[:12]] = r.Verdict
	}
	if got["Linux 6.18.0"] != register.Pass || got["Linux 6.1.0,"] != register.Skipped {
		t.Errorf("SR-01: %v", sr1)
	}
	if r := byID["SR-03"].Results; r[0].Verdict != "" && r[1].Verdict != register.Inconclusive {
		t.Errorf("SR-03: %v", r)
	}
	files, _ := Build(testInput(t))
	page := string(files["risks.html"])
	for _, want := range []string{"✓ pass", "– skipped", "? inconclusive", "not run", "2026-11-30T00:00:00Z", `id="SD-01"`} {
		if !strings.Contains(page, want) {
			t.Errorf("risks.html lacks %q", want)
		}
	}
	if !strings.Contains(page, "<code>launcher hello</code>") || strings.Contains(page, "`launcher hello`") {
		t.Error("risks.html does not set the register's code spans as code")
	}
	if strings.Contains(page, "old failure") {
		t.Error("risks.html shows a result older than the machine's latest")
	}
}

// Two reports of bench x and one of bench x-2: three charts, each its own
// file holding its own rows, and three sections with their own ids.
func TestBenchChartNamesUnique(t *testing.T) {
	in := testInput(t)
	mk := func(bench, date, row string) *report.Report {
		r := *in.Bench[0]
		r.Bench, r.Date, r.Title = bench, date, "Title of "+row
		r.Rows = []report.Row{{Name: row, Median: 1, Runs: 1}}
		return &r
	}
	in.Bench = []*report.Report{
		mk("x-2", "2026-11-01T00:00:00Z", "row-of-x-2"),
		mk("x", "2026-11-02T00:00:00Z", "row-of-x-later"),
		mk("x", "2026-11-01T00:00:00Z", "row-of-x-earlier"),
	}
	files, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	page := string(files["bench.html"])
	srcs := regexp.MustCompile(`<img src="(chart-[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) != 3 {
		t.Fatalf("bench.html shows %d charts: %q", len(srcs), srcs)
	}
	charts := map[string]string{}
	for _, row := range []string{"row-of-x-2", "row-of-x-later", "row-of-x-earlier"} {
		for _, s := range srcs {
			if strings.Contains(string(files[s[1]]), ">"+row+"<") {
				charts[row] = s[1]
			}
		}
	}
	if len(charts) != 3 || charts["row-of-x-2"] != "chart-x-2.svg" || charts["row-of-x-earlier"] != "chart-x.svg" {
		t.Errorf("each report's chart file: %v", charts)
	}
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]]++; ids[m[1]] > 1 {
			t.Errorf("bench.html: id %q twice", m[1])
		}
	}
}

// The latest result is the one at the latest instant, whatever the
// offsets: 10:00+12:00 is 22:00 UTC the day before, so 09:00Z is newer.
// Control: 10:00-02:00 (12:00 UTC) is newer than 09:00Z.
func TestRisksLatestByInstant(t *testing.T) {
	m := register.Machine{Kernel: "6.18.0", LandlockABI: 7, CgroupMode: "v2", UID: 0}
	for _, c := range []struct {
		other string
		want  register.Verdict
	}{
		{"2026-01-01T10:00:00+12:00", register.Pass},
		{"2026-01-01T10:00:00-02:00", register.Fail},
	} {
		utc, other := m, m
		utc.Date, other.Date = "2026-01-01T09:00:00Z", c.other
		ev := []Evidence{
			{"a.json", register.Evidence{Machine: other, Results: []register.Result{{ID: "SR-01", Verdict: register.Fail}}}},
			{"b.json", register.Evidence{Machine: utc, Results: []register.Result{{ID: "SR-01", Verdict: register.Pass}}}},
		}
		for _, r := range risks(register.All(), ev) {
			if r.ID == "SR-01" && r.Results[0].Verdict != c.want {
				t.Errorf("09:00Z against %s: latest is %+v, want %s", c.other, r.Results[0], c.want)
			}
		}
		files := evidenceFiles(ev, map[string][]byte{})
		if first := files[0].Date; (c.want == register.Pass) != (first == c.other) {
			t.Errorf("09:00Z against %s: the evidence list starts with %s", c.other, first)
		}
	}
}

// SECURITY.md's text reaches the page escaped, with its structure.
func TestMarkdown(t *testing.T) {
	out := markdown("# Title\n\nText with `<b>code</b>` and **strong** <script>alert(1)</script> SR-09.\n\n## Part\n\n- one\n  continued\n- two\n\n1. first\n\n| a | b |\n|---|---|\n| `x` | y |\n")
	for _, want := range []string{
		"<p>Text with <code>&lt;b&gt;code&lt;/b&gt;</code> and <strong>strong</strong> &lt;script&gt;alert(1)&lt;/script&gt; <a href=\"risks.html#SR-09\">SR-09</a>.</p>",
		`<h3 id="part">Part</h3>`, "<li>one continued</li>", "<ol>\n<li>first</li>", `<th scope="col">a</th>`, "<td><code>x</code></td>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Title") || strings.Contains(out, "<script") {
		t.Errorf("the first heading or raw markup got through:\n%s", out)
	}
}

// The playground's table of refused code points is exactly the set
// unicode.IsPrint rejects.
func TestNonprintTable(t *testing.T) {
	js := string(nonprintJS())
	_, list, _ := strings.Cut(js, "PINFOLD_NONPRINT = ")
	list = strings.TrimSuffix(strings.TrimSpace(list), ";")
	var ranges [][2]int
	if err := json.Unmarshal([]byte(list), &ranges); err != nil {
		t.Fatal(err)
	}
	in := func(r int) bool {
		for _, x := range ranges {
			if r >= x[0] && r <= x[1] {
				return true
			}
		}
		return false
	}
	for r := 0; r <= unicode.MaxRune; r += 7 {
		if in(r) == unicode.IsPrint(rune(r)) {
			t.Fatalf("U+%04X: table %v, IsPrint %v", r, in(r), unicode.IsPrint(rune(r)))
		}
	}
	for _, r := range []int{0, 9, 0x7f, 0x202e, 0x200b, 0xfeff, 0x3000, 0xd800, 0x10ffff} {
		if !in(r) {
			t.Errorf("U+%04X not in the table", r)
		}
	}
}

// The stylesheet's text colours read on white: at least 4.5:1 (WCAG AA).
func TestContrast(t *testing.T) {
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`--(text|muted|link|pass|fail|warn|focus): #([0-9a-f]{6})`).FindAllStringSubmatch(string(css), -1)
	if len(vars) != 7 {
		t.Fatalf("found %d colours", len(vars))
	}
	lum := func(hex string) float64 {
		var l [3]float64
		for i := range 3 {
			v, _ := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
			c := float64(v) / 255
			if c <= 0.03928 {
				l[i] = c / 12.92
			} else {
				l[i] = math.Pow((c+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	for _, v := range vars {
		ratio := 1.05 / (lum(v[2]) + 0.05)
		// The code background is #f2f2f2: text on it must read too.
		onCode := (lum("f2f2f2") + 0.05) / (lum(v[2]) + 0.05)
		if ratio < 4.5 || onCode < 4.5 {
			t.Errorf("--%s #%s: %.2f:1 on white, %.2f:1 on code", v[1], v[2], ratio, onCode)
		}
	}
}

// Every evidence file and bench report is served as JSON that decodes
// back to what was given, linked from its page; the order of the inputs
// and a file given twice change nothing.
func TestDataFilesLinked(t *testing.T) {
	in := testInput(t)
	files, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`href="((evidence|bench)-[0-9a-f]{16}\.json)"`)
	linked := map[string]string{}
	for _, page := range []string{"risks.html", "bench.html"} {
		for _, m := range links.FindAllStringSubmatch(string(files[page]), -1) {
			linked[m[1]] = page
		}
	}
	seen := map[string]bool{}
	for name, page := range linked {
		b, ok := files[name]
		if !ok {
			t.Fatalf("%s links %s, which is not in the site", page, name)
		}
		if strings.HasPrefix(name, "bench-") {
			var r report.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			seen["bench "+r.Bench+" "+r.Date] = true
			continue
		}
		var ev register.Evidence
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		for _, e := range in.Evidence {
			if reflect.DeepEqual(e.Evidence, ev) {
				seen[e.Name] = true
			}
		}
	}
	for _, e := range in.Evidence {
		if !seen[e.Name] {
			t.Errorf("evidence %s is not served and linked as it was given", e.Name)
		}
	}
	if !seen["bench launch 2026-11-30T10:00:00Z"] || len(linked) != len(in.Evidence)+len(in.Bench) {
		t.Errorf("linked data files: %v", linked)
	}
	for name := range files {
		if strings.HasSuffix(name, ".json") && linked[name] == "" {
			t.Errorf("%s is in the site but no page links it", name)
		}
	}

	shuffled := in
	shuffled.Evidence = append([]Evidence{in.Evidence[2], in.Evidence[0]}, in.Evidence[1], in.Evidence[0])
	again, err := Build(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, again) {
		t.Error("reordered evidence, one file given twice, builds different bytes")
	}
}

// Replacing a site leaves no moment without one at its name: the new
// site is swapped in with the old in one step. Two renames left a gap,
// and a hunt's interrupt in it lost --out. A reader polls the manifest
// while the site is replaced again and again.
func TestWriteReplacesWithoutAGap(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(t.TempDir(), "site")
	if _, err := Write(d, files); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	missing := make(chan int, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				missing <- n
				return
			default:
			}
			if _, err := os.Lstat(filepath.Join(d, ManifestName)); err != nil {
				n++
			}
		}
	}()
	for range 40 {
		if _, err := Write(d, files); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if n := <-missing; n > 0 {
		t.Errorf("the site was missing at %d looks while it was replaced", n)
	}
	if ents, _ := os.ReadDir(filepath.Dir(d)); len(ents) != 1 {
		t.Errorf("left beside the site: %v", ents)
	}
}
