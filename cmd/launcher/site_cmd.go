package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pinfold/pinfold"
	"github.com/pinfold/pinfold/bench/report"
	"github.com/pinfold/pinfold/register"
	"github.com/pinfold/pinfold/site"
)

const siteHelp = `Usage:
  launcher site build --out DIR [--evidence FILE]... [--bench FILE]...
  launcher site verify --manifest-sha256 HASH DIR

build writes a self-contained static site to DIR: what pinfold is, the
threat model (SECURITY.md), every register entry with the latest dated
result of its check on each machine in the evidence files (written by
launcher register check --out FILE), the policy reference (every key,
type, default, meaning), the bench figures as SVG charts (files written
by bench/run), and the hash playground, where the browser computes a
policy file's sha256 locally and flags what the launcher would refuse in
its text. manifest.json lists every file's sha256. The same inputs give
the same bytes. DIR is replaced whole, and only when it is empty or a
site built before and left as it was: a version 1 manifest.json and
exactly the files it lists, with the bytes it names, no directory.
build prints manifest.json's sha256: publish it apart
from the site and give it to whoever verifies the site.

verify first checks that DIR's manifest.json hashes to HASH (64 hex
digits, from the site's publisher, who had it from build), then checks
every file against that manifest and names every file that changed, was
added or is missing. A manifest read from DIR alone proves nothing:
whoever can change a page there can rewrite its line too. Exit 1 if the
manifest does not match HASH or any file differs.

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
func (f *files) repeatable()        {}

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
			return fail(exitUsage, "give files written by `launcher register check --out FILE`", "site build: --evidence %q: %v", path, err)
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
	sum, err := site.Write(*out, built)
	if err != nil {
		return fail(exitFailure, "", "site build: %v", err)
	}
	fmt.Fprintf(e.stdout, "wrote %q; %s sha256 %x: give it to whoever verifies the site\n", *out, site.ManifestName, sum)
	return nil
}

// readEvidence reads one `register check --out` file strictly: known
// fields only, each once and in lower case, nothing after the object, a
// dated machine, known verdicts.
func readEvidence(path string) (*register.Evidence, error) {
	b, err := site.ReadBounded(path, maxEvidence)
	if err != nil {
		return nil, err
	}
	if err := site.CheckJSONKeys(b); err != nil {
		return nil, fmt.Errorf("not an evidence file as the launcher writes it: %v", err)
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
	// As register check writes them: one result for each check at most,
	// and none for an entry without a check (a documented limit), which
	// the site would show passing beside "Check: none".
	checked := map[string]bool{}
	for _, id := range register.CheckIDs() {
		checked[id] = true
	}
	seen := map[string]bool{}
	for i, r := range ev.Results {
		switch r.Verdict {
		case register.Pass, register.Fail, register.Inconclusive, register.Skipped:
		default:
			return nil, fmt.Errorf("results[%d] (%q): unknown verdict %q", i, r.ID, r.Verdict)
		}
		if _, ok := register.Lookup(r.ID); !ok {
			return nil, fmt.Errorf("results[%d]: %q is not an entry of this launcher's register", i, r.ID)
		}
		if !checked[r.ID] {
			return nil, fmt.Errorf("results[%d]: %q has no executable check in this launcher's register, so no result", i, r.ID)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("results[%d]: a second result for %q", i, r.ID)
		}
		seen[r.ID] = true
	}
	return &ev, nil
}

// manifestPinHint says where --manifest-sha256 comes from.
const manifestPinHint = "the hash comes from the site's publisher: `launcher site build` prints it; never take it from the site itself"

func (e env) siteVerify(args []string) error {
	fset := flags("site verify")
	pin := fset.String("manifest-sha256", "", "")
	rest, err := e.parse(fset, siteHelp, args, 1)
	if err != nil {
		return err
	}
	if *pin == "" {
		return fail(exitUsage, manifestPinHint, "site verify: --manifest-sha256 HASH is required: a manifest read from DIR alone proves nothing")
	}
	want, err := parseManifestPin(*pin)
	if err != nil {
		return fail(exitUsage, manifestPinHint, "site verify: --manifest-sha256 %q: %v", *pin, err)
	}
	problems, err := site.Verify(rest[0], want)
	if errors.Is(err, site.ErrManifestMismatch) {
		return fail(1, manifestPinHint, "site verify: %v", err)
	}
	if err != nil {
		return fail(exitFailure, "is it a directory written by `launcher site build`?", "site verify: %v", err)
	}
	// Names are quoted (p.String too): they are anyone's bytes, and a raw
	// escape sequence or carriage return could erase the lines above.
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "launcher: error: site verify: %q: %s\n", rest[0], p)
	}
	if len(problems) > 0 {
		return silentExit(1)
	}
	fmt.Fprintf(e.stdout, "%q: %s has the sha256 given and every file matches it\n", rest[0], site.ManifestName)
	return nil
}

// parseManifestPin reads --manifest-sha256: exactly 64 hex digits, in
// either case.
func parseManifestPin(s string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if len(s) != hex.EncodedLen(sha256.Size) {
		return sum, fmt.Errorf("not a sha256: want %d hex digits, got %d characters", hex.EncodedLen(sha256.Size), len(s))
	}
	if _, err := hex.Decode(sum[:], []byte(s)); err != nil {
		return sum, fmt.Errorf("not a sha256: %v", err)
	}
	return sum, nil
}
