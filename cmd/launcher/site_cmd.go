package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pinfold/pinfold"
	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/register"
	"github.com/pinfold/pinfold/site"
)

const siteHelp = `Usage:
  launcher site build --out DIR [--evidence FILE]... [--bench FILE]...
  launcher site verify DIR

build writes a self-contained static site to DIR: what pinfold is, the
threat model (SECURITY.md), every register entry with the latest dated
result of its check on each machine in the evidence files (written by
launcher register check --out FILE), the policy reference (every key,
type, default, meaning), the bench figures as SVG charts (files written
by bench/run), and the hash playground, where the browser computes a
policy file's sha256 locally and flags what the launcher would refuse in
its text. manifest.json lists every file's sha256. The same inputs give
the same bytes. DIR is replaced whole, and only when it is empty or a
site built before.

verify checks DIR against its manifest and names every file that
changed, was added or is missing (exit 1 if any).
` + exitCodesHelp

// maxEvidence bounds one evidence file.
const maxEvidence = 16 << 20

func (e env) siteVerb(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, siteHelp)
		return silentExit(exitUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprint(e.stdout, siteHelp)
		return nil
	case "build":
		return e.siteBuild(args[1:])
	case "verify":
		return e.siteVerify(args[1:])
	}
	return fail(exitUsage, "run `launcher site --help`", "unknown site command %q", args[0])
}

// files is a repeatable flag.
type files []string

func (f *files) String() string     { return fmt.Sprint(*f) }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

func (e env) siteBuild(args []string) error {
	fset := flags("site build")
	out := fset.String("out", "", "")
	var evidence, benches files
	fset.Var(&evidence, "evidence", "")
	fset.Var(&benches, "bench", "")
	if _, err := e.parse(fset, siteHelp, args, 0); err != nil {
		return err
	}
	if *out == "" {
		return fail(exitUsage, "run `launcher site --help`", "site build: --out DIR is required")
	}
	in := site.Input{Version: register.Version, Security: pinfold.SecurityMD, Entries: register.All()}
	for _, path := range evidence {
		ev, err := readEvidence(path)
		if err != nil {
			return fail(exitUsage, "give files written by `launcher register check --out FILE`", "site build: --evidence %s: %v", path, err)
		}
		in.Evidence = append(in.Evidence, site.Evidence{Name: path, Evidence: *ev})
	}
	for _, path := range benches {
		r, err := report.Read(path)
		if err != nil {
			return fail(exitUsage, "give files written by bench/run (bin/bench/*.json)", "site build: --bench: %v", err)
		}
		in.Bench = append(in.Bench, r)
	}
	built, err := site.Build(in)
	if err != nil {
		return fail(exitFailure, "", "site build: %v", err)
	}
	if err := site.Write(*out, built); err != nil {
		return fail(exitFailure, "", "site build: %v", err)
	}
	fmt.Fprintf(e.stdout, "%s: %d files and %s\n", *out, len(built), site.ManifestName)
	return nil
}

// readEvidence reads one `register check --out` file strictly: known
// fields only, a dated machine, known verdicts.
func readEvidence(path string) (*register.Evidence, error) {
	b, err := site.ReadBounded(path, maxEvidence)
	if err != nil {
		return nil, err
	}
	var ev register.Evidence
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("not an evidence file: %v", err)
	}
	if _, err := time.Parse(time.RFC3339, ev.Machine.Date); err != nil {
		return nil, fmt.Errorf("machine.date %q is not an RFC 3339 time", ev.Machine.Date)
	}
	if ev.Machine.Kernel == "" {
		return nil, fmt.Errorf("machine.kernel is empty")
	}
	for i, r := range ev.Results {
		switch r.Verdict {
		case register.Pass, register.Fail, register.Inconclusive, register.Skipped:
		default:
			return nil, fmt.Errorf("results[%d] (%s): unknown verdict %q", i, r.ID, r.Verdict)
		}
		if _, ok := register.Lookup(r.ID); !ok {
			return nil, fmt.Errorf("results[%d]: %q is not an entry of this launcher's register", i, r.ID)
		}
	}
	return &ev, nil
}

func (e env) siteVerify(args []string) error {
	rest, err := e.parse(flags("site verify"), siteHelp, args, 1)
	if err != nil {
		return err
	}
	problems, err := site.Verify(rest[0])
	if err != nil {
		return fail(exitFailure, "is it a directory written by `launcher site build`?", "site verify: %v", err)
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "launcher: error: site verify: %s: %s\n", rest[0], p)
	}
	if len(problems) > 0 {
		return silentExit(1)
	}
	fmt.Fprintf(e.stdout, "%s: every file matches %s\n", rest[0], site.ManifestName)
	return nil
}
