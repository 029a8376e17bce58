package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/internal/privfile"
	"github.com/pinfold/pinfold/register"
)

const registerHelp = `Usage:
  launcher register list [--json]
  launcher register show ID [--json]
  launcher register check [--json] [--only ID,...] [--out FILE]

list   every risk (SR) and documented limit (SD), one line each.
show   one entry whole: threat, control, kind, status, evidence.
check  runs the executable checks on this machine: each probe under a
       policy and the same probe without it (the control). pass: refused
       and the control succeeded; fail: not refused; inconclusive: the
       control failed or a run broke; skipped: this machine lacks what the
       check needs. --out writes the dated evidence as JSON.

Interrupted (Ctrl-C), check writes nothing and exits 130.

` + exitCodesHelp

func (e env) register(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, registerHelp)
		return silentExit(exitUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprint(e.stdout, registerHelp)
		return nil
	case "list":
		fset := flags("register list")
		asJSON := fset.Bool("json", false, "")
		if _, err := e.parse(fset, registerHelp, args[1:], 0); err != nil {
			return err
		}
		if *asJSON {
			return e.writeJSON(register.All())
		}
		for _, en := range register.All() {
			fmt.Fprintf(e.stdout, "%s  %-16s %s\n", en.ID, en.Status, en.Title)
		}
		return nil
	case "show":
		fset := flags("register show")
		asJSON := fset.Bool("json", false, "")
		rest, err := e.parse(fset, registerHelp, args[1:], 1)
		if err != nil {
			return err
		}
		en, ok := register.Lookup(rest[0])
		if !ok {
			return fail(exitUsage, "`launcher register list` lists them", "no register entry %q", rest[0])
		}
		if *asJSON {
			return e.writeJSON(en)
		}
		fmt.Fprintf(e.stdout, "%s  %s\nkind: %s  status: %s  since: %s\nthreat: %s\ncontrol: %s\n", en.ID, en.Title, en.Kind, en.Status, en.Since, en.Threat, en.Control)
		check := en.Check
		if check == "" {
			check = "none (a documented limit is stated, not refused)"
		}
		fmt.Fprintf(e.stdout, "check: %s\n", check)
		for _, ev := range en.Evidence {
			fmt.Fprintf(e.stdout, "evidence: %s\n", ev)
		}
		return nil
	case "check":
		return e.registerCheck(args[1:])
	}
	return fail(exitUsage, "run `launcher register --help`", "unknown register command %q", args[0])
}

func (e env) registerCheck(args []string) error {
	fset := flags("register check")
	asJSON := fset.Bool("json", false, "")
	only := fset.String("only", "", "")
	out := fset.String("out", "", "")
	if _, err := e.parse(fset, registerHelp, args, 0); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fail(exitFailure, "", "register check: own executable: %v", err)
	}
	var ids []string
	if *only != "" {
		ids = strings.Split(*only, ",")
	}
	// The evidence file's place is tried before any check runs: a full
	// run takes minutes, and finding then that --out cannot be written
	// lost its results.
	var tmp *os.File
	if *out != "" {
		if tmp, err = evidenceTemp(*out); err != nil {
			return fail(exitFailure, "name a file in a directory you can write", "register check --out %s: %v: no check was run", printable(*out), err)
		}
		defer func() {
			tmp.Close()
			os.Remove(tmp.Name()) // gone once renamed; else what is left of it
		}()
	}
	progress := func(id string) {}
	if isTerminal(os.Stderr) && !*asJSON {
		progress = func(id string) { fmt.Fprintf(e.stderr, "\rchecking %s…", id) }
	}
	// Interrupted, the checks end and their scratch directories
	// (/var/tmp/pinfold-check-*) and launches are cleaned up before the
	// launcher exits 130, rather than left where the signal found them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ev, err := register.Runner{Launcher: exe, Timeout: 30 * time.Second}.Run(ctx, ids, progress)
	if ctx.Err() != nil {
		return &cliError{code: 130, err: errors.New("register check: interrupted: nothing was written, and the checks' scratch directories were removed")}
	}
	var unknown *register.UnknownIDError
	if errors.As(err, &unknown) {
		return fail(exitUsage, "", "register check --only: %v", err)
	}
	var place *register.PlaceError
	if errors.As(err, &place) {
		return fail(exitFailure, place.Hint(), "register check: %v", err)
	}
	if err != nil {
		return err
	}
	if isTerminal(os.Stderr) && !*asJSON {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	if *out != "" {
		if err := writeEvidence(tmp, *out, ev); err != nil {
			return fail(exitFailure, "", "register check --out %s: %v", printable(*out), err)
		}
	}
	counts := map[register.Verdict]int{}
	for _, r := range ev.Results {
		counts[r.Verdict]++
	}
	if *asJSON {
		if err := e.writeJSON(ev); err != nil {
			return err
		}
	} else {
		m := ev.Machine
		fmt.Fprintf(e.stdout, "%s, kernel %s, Landlock ABI %d, cgroup %s, uid %d, launcher %s\n", m.Date, m.Kernel, m.LandlockABI, m.CgroupMode, m.UID, m.Version)
		for _, r := range ev.Results {
			fmt.Fprintf(e.stdout, "%-6s %-13s %s — %s\n", r.ID, r.Verdict, r.Title, r.Reason)
		}
		fmt.Fprintf(e.stdout, "%d pass, %d fail, %d inconclusive, %d skipped\n", counts[register.Pass], counts[register.Fail], counts[register.Inconclusive], counts[register.Skipped])
	}
	if counts[register.Fail] > 0 {
		return silentExit(1)
	}
	return nil
}

// evidenceTemp makes the file the evidence is written to before it is
// renamed to path: beside it, under a name of its own (a fixed one, left
// behind by a killed run, blocked every later --out).
func evidenceTemp(path string) (*os.File, error) {
	if err := privfile.Replaceable(path); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("cannot create a file in %s: %v", printable(dir), pe.Err)
		}
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// writeEvidence writes the evidence into tmp and renames it to path:
// the file is there whole or not at all.
func writeEvidence(tmp *os.File, path string, ev register.Evidence) error {
	if err := privfile.Replaceable(path); err != nil {
		return err
	}
	err := (env{stdout: tmp}).writeJSON(ev)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
