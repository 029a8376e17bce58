package site

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/policy"
	"github.com/pinfold/pinfold/register"
)

//go:embed assets/style.css assets/playground.js assets/*.html
var assets embed.FS

// Input is everything a site is built from. The same Input builds the
// same bytes: nothing is read from the clock or the machine.
type Input struct {
	Version  string // the launcher's version, shown in the footer
	Security []byte // SECURITY.md
	Entries  []register.Entry
	Evidence []Evidence
	Bench    []*report.Report
}

// Evidence is one `launcher register check --out` file and its name
// (its path, for messages; no page depends on it).
type Evidence struct {
	Name string
	register.Evidence
}

// page is one HTML page of the site.
type page struct {
	File, Title, Nav string
}

var pages = []page{
	{"index.html", "pinfold", "Home"},
	{"threat-model.html", "Threat model", "Threat model"},
	{"risks.html", "Known risks and their evidence", "Known risks"},
	{"policy.html", "Policy reference", "Policy reference"},
	{"bench.html", "Measurements", "Measurements"},
	{"playground.html", "Hash your policy", "Hash playground"},
}

// Build renders the site: every file by its name in the output
// directory. manifest.json is added by Write.
func Build(in Input) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{"style.css", "playground.js"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	files["nonprint.js"] = nonprintJS()
	if err := distinctData(in); err != nil {
		return nil, err
	}
	data := map[string]any{
		"Security": template.HTML(markdown(string(in.Security))),
		"Risks":    risks(in.Entries, in.Evidence),
		"Machines": machines(in.Evidence),
		"Files":    evidenceFiles(in.Evidence, files),
		"Keys":     policy.Reference(),
		"Bench":    benches(in.Bench, files),
	}
	tmpl, err := template.New("layout.html").Funcs(template.FuncMap{"verdict": verdictText, "when": when, "md": func(s string) template.HTML { return template.HTML(inline(s)) }}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("site: templates: %w", err)
	}
	for _, p := range pages {
		var body bytes.Buffer
		if err := tmpl.ExecuteTemplate(&body, p.File, data); err != nil {
			return nil, fmt.Errorf("site: %s: %w", p.File, err)
		}
		var out bytes.Buffer
		err := tmpl.ExecuteTemplate(&out, "layout.html", map[string]any{
			"Page": p, "Pages": pages, "Body": template.HTML(body.String()), "Version": in.Version,
		})
		if err != nil {
			return nil, fmt.Errorf("site: %s: %w", p.File, err)
		}
		files[p.File] = visible(out.Bytes())
	}
	// A site that Verify cannot read would never verify, and Write would
	// not replace it: long input text is refused here instead.
	for name, b := range files {
		if len(b) > maxFile {
			return nil, fmt.Errorf("site: %s would be %d bytes, larger than the %d that verify reads: an input's text is too long", name, len(b), maxFile)
		}
	}
	return files, nil
}

// visible is a page or picture with every code point the launcher's own
// text check refuses (not unicode.IsPrint: bidi overrides and isolates,
// zero-width and other format characters, controls, spaces other than
// U+0020) written as ⟨U+XXXX⟩, and every byte that is not UTF-8 as
// ⟨0xXX⟩; newlines and tabs stay. Evidence and bench files come from
// other machines: a U+202E in a kernel string reversed the rest of its
// line, so that a file's "0 pass, 2 fail" read backwards and a forged
// "2 pass, 0 fail" ended it. The site's own text has none of them, so
// only input is rewritten; the data files keep the input as it was.
func visible(b []byte) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&out, "⟨0x%02X⟩", b[0])
		case unicode.IsPrint(r) || r == '\n' || r == '\t':
			out.Write(b[:n])
		default:
			fmt.Fprintf(&out, "⟨%U⟩", r)
		}
		b = b[n:]
	}
	return out.Bytes()
}

// risk is one register entry with its latest result on each machine.
type risk struct {
	register.Entry
	Results []machineResult // one per machine, in Machines' order; Verdict "" when that machine has none
}

type machineResult struct {
	Machine string
	Date    string
	Verdict register.Verdict
	Reason  string
}

// machineKey names a machine by what the evidence records of it.
func machineKey(m register.Machine) string {
	return fmt.Sprintf("Linux %s, Landlock ABI %d, cgroup %s, uid %d", m.Kernel, m.LandlockABI, m.CgroupMode, m.UID)
}

// machines are the machines in the evidence, sorted.
func machines(ev []Evidence) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range ev {
		if k := machineKey(e.Machine); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func risks(entries []register.Entry, ev []Evidence) []risk {
	ms := machines(ev)
	// latest[machine][id] is the newest result. A tie goes to the file
	// whose data file name (its content's hash) sorts last, not to its
	// path: a rebuild from the site's own data files must give the same
	// page.
	latest := map[string]map[string]machineResult{}
	type named struct {
		Evidence
		data string
	}
	scratch := map[string][]byte{}
	sorted := make([]named, len(ev))
	for i, e := range ev {
		sorted[i].Evidence = e
		sorted[i].data, _ = dataFile("evidence", e.Evidence, scratch)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if c := compareDates(sorted[i].Machine.Date, sorted[j].Machine.Date); c != 0 {
			return c < 0
		}
		return sorted[i].data < sorted[j].data
	})
	for _, e := range sorted {
		k := machineKey(e.Machine)
		if latest[k] == nil {
			latest[k] = map[string]machineResult{}
		}
		for _, r := range e.Results {
			latest[k][r.ID] = machineResult{Machine: k, Date: e.Machine.Date, Verdict: r.Verdict, Reason: r.Reason}
		}
	}
	out := make([]risk, len(entries))
	for i, en := range entries {
		out[i].Entry = en
		for _, m := range ms {
			r, ok := latest[m][en.ID]
			if !ok {
				r = machineResult{Machine: m}
			}
			out[i].Results = append(out[i].Results, r)
		}
	}
	return out
}

// verdictText is a verdict in words with a mark, so that it does not
// rest on colour.
func verdictText(v register.Verdict) string {
	switch v {
	case register.Pass:
		return "✓ pass"
	case register.Fail:
		return "✗ FAIL"
	case register.Inconclusive:
		return "? inconclusive"
	case register.Skipped:
		return "– skipped"
	case "":
		return "not run"
	}
	return string(v)
}

// evidenceFile is one evidence file as the site serves it.
type evidenceFile struct {
	File, Date, Machine, Summary string
}

// evidenceFiles puts each evidence file in the site, as the data the
// pages were built from, under a name taken from its content (so the
// order of --evidence flags does not change the bytes, and a file given
// twice is served once), and lists them oldest first.
func evidenceFiles(ev []Evidence, files map[string][]byte) []evidenceFile {
	var out []evidenceFile
	for _, e := range ev {
		name, fresh := dataFile("evidence", e.Evidence, files)
		if !fresh {
			continue
		}
		n := map[register.Verdict]int{}
		for _, r := range e.Results {
			n[r.Verdict]++
		}
		sum := fmt.Sprintf("%d pass, %d fail, %d inconclusive, %d skipped",
			n[register.Pass], n[register.Fail], n[register.Inconclusive], n[register.Skipped])
		out = append(out, evidenceFile{File: name, Date: e.Machine.Date, Machine: machineKey(e.Machine), Summary: sum})
	}
	sort.Slice(out, func(i, j int) bool {
		if c := compareDates(out[i].Date, out[j].Date); c != 0 {
			return c < 0
		}
		return out[i].File < out[j].File
	})
	return out
}

// compareDates orders two RFC 3339 dates by the instant they name: they
// may carry any offset, so their strings do not sort (10:00+12:00 is
// before 09:00Z). The same instant written two ways is ordered by its
// text, so the order never depends on the inputs' order. A date that
// does not parse (the CLI refuses them) sorts as the zero time.
func compareDates(a, b string) int {
	ta, _ := time.Parse(time.RFC3339, a)
	tb, _ := time.Parse(time.RFC3339, b)
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// dataFile adds v as indented JSON named PREFIX-HASH.json, HASH the
// start of its sha256; fresh is false when that file was already there.
func dataFile(prefix string, v any, files map[string][]byte) (name string, fresh bool) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		// Evidence and reports are plain data; they always encode.
		panic(err)
	}
	b = append(b, '\n')
	name = dataName(prefix, b)
	if _, ok := files[name]; ok {
		return name, false
	}
	files[name] = b
	return name, true
}

// dataName is the name of a data file: its prefix and the start of its
// sha256 (a variable so that a test can make two names collide).
var dataName = func(prefix string, b []byte) string {
	sum := sha256.Sum256(b)
	return prefix + "-" + hex.EncodeToString(sum[:8]) + ".json"
}

// distinctData refuses inputs two of which would be served under one
// name with different bytes: dataFile keeps the first and takes the
// second for a repeat, so a pair made to share 64 bits of sha256 (a
// birthday search, hours of computing) put on the page results whose
// data the site did not serve, and which one was served followed the
// order of the flags.
func distinctData(in Input) error {
	seen := map[string][]byte{}
	check := func(prefix string, v any) error {
		name, fresh := dataFile(prefix, v, seen)
		if fresh {
			return nil
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		if !bytes.Equal(append(b, '\n'), seen[name]) {
			return fmt.Errorf("site: two different inputs would both be served as %s (their sha256s share 64 bits: made to collide?)", name)
		}
		return nil
	}
	for _, e := range in.Evidence {
		if err := check("evidence", e.Evidence); err != nil {
			return err
		}
	}
	for _, r := range in.Bench {
		if err := check("bench", r); err != nil {
			return err
		}
	}
	return nil
}

// when is an RFC 3339 date as a <time> element that reads "2026-11-30
// 10:00 UTC" and wraps at spaces; anything else is shown as it is.
func when(date string) template.HTML {
	t, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(date))
	}
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(date) + `">` + t.UTC().Format("2006-01-02 15:04 UTC") + `</time>`)
}

// bench is one report on the measurements page, its chart a file and
// its data a JSON file.
type bench struct {
	*report.Report
	Chart, Alt, Data string
}

func benches(rs []*report.Report, files map[string][]byte) []bench {
	// Ordered by bench, instant, then content (the data file's name), so
	// that the order of --bench flags changes nothing: one program's
	// reports (proxy.json, proxy-rate.json) share a bench and a date.
	// Reports that tie on all three are the same report.
	type dated struct {
		r    *report.Report
		data string
	}
	sorted := make([]dated, len(rs))
	for i, r := range rs {
		sorted[i].r = r
		sorted[i].data, _ = dataFile("bench", r, files)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.r.Bench != b.r.Bench {
			return a.r.Bench < b.r.Bench
		}
		if c := compareDates(a.r.Date, b.r.Date); c != 0 {
			return c < 0
		}
		return a.data < b.data
	})
	// A report given twice is shown once, as an evidence file is; the
	// copies tie on everything, so they are neighbours.
	unique := sorted[:0]
	for _, d := range sorted {
		if len(unique) == 0 || d.data != unique[len(unique)-1].data {
			unique = append(unique, d)
		}
	}
	sorted = unique
	// A bench's first report is chart-NAME; a later one of the same bench
	// takes the first chart-NAME-N that no report has, so that it cannot
	// take the name of a bench called NAME-N.
	names := make([]string, len(sorted))
	taken := map[string]bool{}
	for i, d := range sorted {
		if name := "chart-" + d.r.Bench; !taken[name] {
			names[i], taken[name] = name, true
		}
	}
	for i, d := range sorted {
		for n := 2; names[i] == ""; n++ {
			if name := fmt.Sprintf("chart-%s-%d", d.r.Bench, n); !taken[name] {
				names[i], taken[name] = name, true
			}
		}
	}
	var out []bench
	for i, d := range sorted {
		name := names[i] + ".svg"
		files[name] = visible(chart(d.r))
		out = append(out, bench{Report: d.r, Chart: name, Alt: chartAlt(d.r), Data: d.data})
	}
	return out
}

// nonprintJS is the set of code points the launcher refuses in a
// policy's text (not unicode.IsPrint, SR-12/SR-15/SR-16) as ranges for
// the playground, computed from the same tables the launcher uses, so
// the page flags exactly what the launcher would refuse.
func nonprintJS() []byte {
	var ranges [][2]int
	for r := 0; r <= unicode.MaxRune; r++ {
		if unicode.IsPrint(rune(r)) {
			continue
		}
		if n := len(ranges); n > 0 && ranges[n-1][1] == r-1 {
			ranges[n-1][1] = r
		} else {
			ranges = append(ranges, [2]int{r, r})
		}
	}
	b, _ := json.Marshal(ranges)
	var out strings.Builder
	out.WriteString("// Generated by launcher site build from Go's unicode.IsPrint (Unicode " + unicode.Version + "):\n")
	out.WriteString("// the code points a policy's text may not hold, as [first, last] ranges.\n")
	out.WriteString("\"use strict\";\nconst PINFOLD_NONPRINT = " + string(b) + ";\n")
	return []byte(out.String())
}
