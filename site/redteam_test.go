package site

import (
	"bytes"
	"testing"

	"github.com/pinfold/pinfold/bench/report"
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
