package site

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/internal/jsonkeys"
	"github.com/pinfold/pinfold/register"
)

// The same inputs give the same bytes in any order: bench/run's proxy
// writes proxy.json and proxy-rate.json, one bench, one date, and the
// order of their --bench flags chose which was chart-proxy.svg and which
// came first on the page.
func TestReproducibleShuffled(t *testing.T) {
	in := testInput(t)
	base := *in.Bench[0]
	a, b := base, base
	a.Title, a.Rows = "Latency", []report.Row{{Name: "direct", Median: 1, Runs: 3}}
	b.Title, b.Unit, b.Better, b.Rows = "Rate", "MB/s", report.Higher, []report.Row{{Name: "direct", Median: 900, Runs: 3}}
	in.Bench = []*report.Report{&a, &b}
	one, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Bench = []*report.Report{&b, &a}
	ev := in.Evidence
	in.Evidence = []Evidence{ev[2], ev[0], ev[1]}
	two, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != len(two) {
		t.Errorf("%d files, then %d", len(one), len(two))
	}
	for name, x := range one {
		if !bytes.Equal(x, two[name]) {
			t.Errorf("%s differs when the inputs are given in another order", name)
		}
	}
}

// Two files from one machine at one instant: which result the page shows
// follows their content, not the paths they were given by, so that a
// rebuild from the site's own data files (named by hash) gives the same
// page.
func TestRisksTieByContent(t *testing.T) {
	in := testInput(t)
	pass, fail := in.Evidence[0], in.Evidence[0]
	pass.Results = []register.Result{{ID: "SR-01", Verdict: register.Pass, Reason: "tie"}}
	fail.Results = []register.Result{{ID: "SR-01", Verdict: register.Fail, Reason: "tie"}}
	var pages []string
	for _, names := range [][2]string{{"a.json", "b.json"}, {"b.json", "a.json"}} {
		pass.Name, fail.Name = names[0], names[1]
		in.Evidence = []Evidence{pass, fail}
		files, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, string(files["risks.html"]))
	}
	if pages[0] != pages[1] {
		t.Error("risks.html depends on the evidence files' paths, not only their content")
	}
}

// Text from evidence and bench files reaches the pages as the reader can
// see it: a bidi override in a kernel string reversed the rest of its
// line, so "0 pass, 2 fail" read backwards and a forged "2 pass, 0 fail"
// ended the line; zero-width characters make two machines look one.
// Every code point the launcher's own text check refuses
// (!unicode.IsPrint), and every byte that is not UTF-8, is shown as
// what it is; nothing else is.
func TestPagesShowHiddenText(t *testing.T) {
	in := testInput(t)
	const hidden = "\u202e\u200b\u2066\u00a0\x1b\xff"
	fake := "6.18\u202e" + "deppiks 0 ,evisulcnocni 0 ,liaf 0 ,ssap 2 ;"
	m := in.Evidence[0].Machine
	m.Kernel, m.CgroupMode = fake, "v2"+hidden
	in.Evidence = append(in.Evidence, Evidence{"x.json", register.Evidence{Machine: m,
		Results: []register.Result{{ID: "SR-02", Verdict: register.Fail, Reason: "r" + hidden}}}})
	r := *in.Bench[0]
	r.Bench, r.Title, r.Unit, r.Machine.Kernel, r.Machine.GoVersion, r.Notes = "h", "t"+hidden, "u"+hidden, "k"+hidden, "g"+hidden, []string{"n" + hidden}
	r.Rows = []report.Row{{Name: "row" + hidden, Median: 1, Runs: 1}}
	in.Bench = append(in.Bench, &r)
	files, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !strings.HasSuffix(name, ".html") && !strings.HasSuffix(name, ".svg") {
			continue
		}
		if !utf8.Valid(b) {
			t.Errorf("%s is not UTF-8", name)
		}
		for _, c := range string(b) {
			if !unicode.IsPrint(c) && c != '\n' && c != '\t' && c != utf8.RuneError {
				t.Errorf("%s holds %U as it is", name, c)
				break
			}
		}
	}
	for _, want := range []string{"6.18⟨U+202E⟩deppiks", "v2⟨U+202E⟩⟨U+200B⟩⟨U+2066⟩⟨U+00A0⟩", "r⟨U+202E⟩"} {
		if !strings.Contains(string(files["risks.html"]), want) {
			t.Errorf("risks.html does not show %q", want)
		}
	}
	if !strings.Contains(string(files["chart-h.svg"]), "row⟨U+202E⟩") {
		t.Error("chart-h.svg does not show the row name's U+202E")
	}
	if !strings.Contains(string(files["bench.html"]), "n⟨U+202E⟩") {
		t.Error("bench.html does not show the note's U+202E")
	}
}

// An evidence file nested millions deep (16 MiB of {"a":[ ) took 900 MB
// to check its keys, a map for each level, and passed; the launcher
// writes them four deep. Refused, by what is wrong, without that memory.
func TestCheckJSONKeysDepth(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, (16<<20)/6)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := CheckJSONKeys([]byte(deep))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nested deeper than") {
		t.Errorf("16 MiB nested: %v, want it refused as nested too deep", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("checking 16 MiB of nesting allocated %d MiB", n>>20)
	}
	ok := `{"results":[{"confined":{"line":"x"}}],"machine":{"uid":0}}`
	if err := CheckJSONKeys([]byte(ok)); err != nil {
		t.Errorf("an evidence file's own depth: %v", err)
	}
	at := strings.Repeat("[", jsonkeys.MaxDepth) + strings.Repeat("]", jsonkeys.MaxDepth)
	if err := CheckJSONKeys([]byte(at)); err != nil {
		t.Errorf("%d deep: %v", jsonkeys.MaxDepth, err)
	}
	if err := CheckJSONKeys([]byte("[" + at + "]")); err == nil {
		t.Errorf("%d deep: accepted", jsonkeys.MaxDepth+1)
	}
}

// --out naming a symbolic link, even to a site Write built, is refused
// as one and nothing is replaced; a link inside a site makes it someone's
// directory.
func TestWriteRefusesLinks(t *testing.T) {
	files, err := Build(testInput(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	if _, err := Write(real, files); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	_, err = Write(link, files)
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("Write to a link to a site: %v, want it refused as a symbolic link", err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(real, "notes.json")); err != nil {
		t.Fatal(err)
	}
	_, err = Write(real, files)
	if err == nil || !strings.Contains(err.Error(), `"notes.json": added`) {
		t.Errorf("Write to a site holding a link: %v", err)
	}
}

// Two different inputs that share a data file's name (64 bits of sha256,
// within reach of a birthday search) are refused: the second was taken
// for a repeat of the first and its results shown beside data the site
// did not serve.
func TestDataNameCollisionRefused(t *testing.T) {
	in := testInput(t)
	real := dataName
	t.Cleanup(func() { dataName = real })
	dataName = func(prefix string, b []byte) string { return prefix + "-0000000000000000.json" }
	_, err := Build(in)
	if err == nil || !strings.Contains(err.Error(), "evidence-0000000000000000.json") {
		t.Errorf("Build with colliding data names: %v, want it refused naming the file", err)
	}
	in.Evidence = []Evidence{in.Evidence[0], in.Evidence[0]} // the same file twice is no collision
	if _, err := Build(in); err != nil {
		t.Errorf("the same evidence twice: %v", err)
	}
}

// Every site Build makes can be verified: a 6 MB reason of control
// characters, each shown as ⟨U+0001⟩, made a risks.html over the 64 MiB
// Verify reads, so the site never verified and Write would not replace
// it. Build refuses it instead, naming the page.
func TestBuildWithinVerify(t *testing.T) {
	in := testInput(t)
	in.Evidence[0].Results[0].Reason = strings.Repeat("\x01", 6<<20)
	files, err := Build(in)
	if err != nil {
		if !strings.Contains(err.Error(), "risks.html") || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("Build: %v, want the page named as too large", err)
		}
		return
	}
	dir := filepath.Join(t.TempDir(), "s")
	sum, err := Write(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := Verify(dir, sum); err != nil || len(problems) > 0 {
		t.Errorf("a site Build made does not verify: %v %v", err, problems)
	}
}

// Nor may the manifest outgrow what Verify reads: thousands of --bench
// files made one Verify refused.
func TestWriteManifestWithinVerify(t *testing.T) {
	files := map[string][]byte{}
	for i := range 12000 {
		files[fmt.Sprintf("chart-x-%d.svg", i)] = nil
	}
	dir := filepath.Join(t.TempDir(), "s")
	sum, err := Write(dir, files)
	if err != nil {
		if !strings.Contains(err.Error(), "manifest.json would be larger than") {
			t.Errorf("Write: %v, want the manifest named as too large", err)
		}
		return
	}
	if problems, err := Verify(dir, sum); err != nil || len(problems) > 0 {
		t.Errorf("a site Write made does not verify: %v %v", err, problems)
	}
}

// A bench file given twice is shown once, as an evidence file is: the
// same reports build the same site however often they are named.
func TestBenchGivenTwiceOnce(t *testing.T) {
	in := testInput(t)
	once, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	copied := *in.Bench[0]
	in.Bench = append(in.Bench, in.Bench[0], &copied)
	in.Evidence = append(in.Evidence, in.Evidence[0])
	twice, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(once) != len(twice) {
		t.Errorf("%d files, then %d with inputs given twice", len(once), len(twice))
	}
	for name, b := range once {
		if !bytes.Equal(b, twice[name]) {
			t.Errorf("%s differs when an input is given twice", name)
		}
	}
}
