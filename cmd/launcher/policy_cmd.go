package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pinfold/pinfold/policy"
)

const policyHelp = `Usage:
  launcher policy hash FILE
  launcher policy check [--json] FILE
  launcher policy init [--workspace DIR] [--template NAME] [--out FILE]

hash   prints the sha256 of FILE's exact bytes, as sha256sum does.
check  decodes and validates FILE, checks its paths on this machine, and
       prints every error, then advice (warnings that do not block a launch).
init   writes a starter policy and prints its hash and the launch line.

` + exitCodesHelp

func (e env) policy(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policyHelp)
		return silentExit(exitUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprint(e.stdout, policyHelp)
		return nil
	case "hash":
		return e.policyHash(args[1:])
	case "check":
		return e.policyCheck(args[1:])
	case "init":
		return e.policyInit(args[1:])
	}
	return fail(exitUsage, "run `launcher policy --help`", "unknown policy command %q", args[0])
}

// readPolicy reads a policy file with the size and file-type limits.
func readPolicy(path string) ([]byte, error) {
	data, err := policy.ReadFile(path)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) {
			hint = "check the path; `launcher policy init` writes a starter policy"
		}
		return nil, &cliError{code: exitUnreadable, err: err, hint: hint}
	}
	return data, nil
}

func (e env) policyHash(args []string) error {
	fset := flags("policy hash")
	rest, err := e.parse(fset, "Usage: launcher policy hash FILE\n\nPrints the sha256 of FILE's exact bytes in sha256sum's format.\n\n"+exitCodesHelp, args, 1)
	if err != nil {
		return err
	}
	data, err := readPolicy(rest[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, sumLine(policy.Hash(data).String(), rest[0]))
	return nil
}

// sumLine is sha256sum's line for name: a name holding a backslash, a
// newline or a CR is escaped as coreutils does (the line starts with a
// backslash), so that sha256sum -c reads it back; one holding another
// control character, which sha256sum prints raw, is quoted instead
// (printable): it would steer the terminal.
func sumLine(hash, name string) string {
	escaped := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(name)
	switch {
	case escaped == name:
		return hash + "  " + printable(name)
	case printable(escaped) != escaped: // another control character too
		return hash + "  " + printable(name)
	}
	return `\` + hash + "  " + escaped
}

type checkReport struct {
	File   string           `json:"file"`
	SHA256 string           `json:"sha256"`
	Valid  bool             `json:"valid"`
	Errors []policy.Problem `json:"errors"`
	Advice []policy.Problem `json:"advice"`
}

func (e env) policyCheck(args []string) error {
	fset := flags("policy check")
	asJSON := fset.Bool("json", false, "")
	rest, err := e.parse(fset, "Usage: launcher policy check [--json] FILE\n\nDecodes and validates FILE, checks its paths on this machine, and prints\nevery error, then advice (warnings that do not block a launch).\n\n"+exitCodesHelp, args, 1)
	if err != nil {
		return err
	}
	file := rest[0]
	data, err := readPolicy(file)
	if err != nil {
		return err
	}
	rep := checkReport{File: file, SHA256: policy.Hash(data).String(), Errors: []policy.Problem{}, Advice: []policy.Problem{}}
	p, err := policy.Parse(file, data)
	if err == nil {
		err = p.CheckLive()
		// Onto the empty list, never nil: "advice": [] as "errors" is,
		// not null, for a program that reads the report.
		rep.Advice = append(append(append(rep.Advice, p.Advice()...), p.HardLinked()...), p.GitUnreadable()...)
	}
	var pe *policy.Error
	if err != nil && !errors.As(err, &pe) {
		return err
	}
	if pe != nil {
		rep.Errors = pe.Problems
	}
	rep.Valid = len(rep.Errors) == 0
	if *asJSON {
		if err := e.writeJSON(rep); err != nil {
			return err
		}
	} else {
		for _, pr := range rep.Errors {
			e.problem("error", file, pr)
		}
		for _, pr := range rep.Advice {
			e.problem("advice", file, pr)
		}
		if rep.Valid {
			fmt.Fprintf(e.stdout, "%s: valid policy, sha256 %s, %d advice\n", printable(file), rep.SHA256, len(rep.Advice))
		}
	}
	if !rep.Valid {
		return silentExit(exitInvalid)
	}
	return nil
}

// problem prints one problem as one line, and its hint on the next.
func (e env) problem(kind, file string, pr policy.Problem) {
	fmt.Fprintf(e.stderr, "launcher: %s: %s\n", kind, oneLine(pr.In(file)))
	if pr.Hint != "" {
		fmt.Fprintf(e.stderr, "launcher: hint: %s\n", oneLine(pr.Hint))
	}
}

const initHelp = `Usage: launcher policy init [--workspace DIR] [--template NAME] [--out FILE]

Writes a starter policy to FILE (default ./policy.toml; never overwrites),
listing only system paths that exist on this machine, and prints its sha256
and the exact launch line, after what policy check would advise. The
workspace is writable whole, so init refuses one that is a home directory
(its shell start-up files run unconfined at the next login), holds one, or
is the root, a system tree (/etc, /usr, /proc…) or /tmp.

  --workspace DIR  the agent's working directory (default: the current one)
  --template NAME  offline (default: no network) or ports (TCP 443)
  --out FILE       where to write the policy

` + exitCodesHelp

func (e env) policyInit(args []string) error {
	fset := flags("policy init")
	ws := fset.String("workspace", "", "")
	tmpl := fset.String("template", "offline", "")
	out := fset.String("out", "policy.toml", "")
	if _, err := e.parse(fset, initHelp, args, 0); err != nil {
		return err
	}
	dir := *ws
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return fail(exitFailure, "", "policy init: current directory: %v", err)
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fail(exitUsage, "", "policy init: workspace %q: %v", *ws, err)
	}
	text, err := policy.StarterPolicy(*tmpl, dir)
	var unfit *policy.UnfitWorkspaceError
	if errors.As(err, &unfit) {
		return fail(exitUsage, "make a directory for the project (mkdir ~/project) and run policy init there, or give --workspace DIR; write a policy by hand for anything broader",
			"policy init: %v", err)
	}
	if err != nil {
		code := exitInvalid
		if strings.HasPrefix(err.Error(), "unknown template") {
			code = exitUsage
		}
		return &cliError{code: code, err: fmt.Errorf("policy init: %w", err)}
	}
	path, err := filepath.Abs(*out)
	if err != nil {
		return fail(exitUsage, "", "policy init: --out %q: %v", *out, err)
	}
	// A directory is not a file that exists: the hint below would tell
	// the person to remove it.
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fail(exitUsage, "give a file name, such as --out "+shellQuote(filepath.Join(path, "policy.toml")),
			"policy init: --out %s is a directory", printable(path))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fail(exitUsage, "make the directory first, or choose another --out",
			"policy init: --out %s: its directory %s does not exist or is not a directory", printable(path), printable(filepath.Dir(path)))
	}
	if err := writeNew(path, text); err != nil {
		hint := ""
		if errors.Is(err, fs.ErrExist) {
			hint = "remove it first or choose another --out: init never overwrites a policy"
		}
		return &cliError{code: exitFailure, err: fmt.Errorf("policy init: %w", err), hint: hint}
	}
	sum := policy.Hash(text)
	// What policy check would advise, said now: the person reads it
	// before pinning the hash.
	if p, err := policy.Parse(path, text); err == nil {
		for _, pr := range p.Advice() {
			e.problem("advice", path, pr)
		}
	}
	fmt.Fprintf(e.stdout, "wrote %s (template %s, workspace %s)\n", printable(path), printable(*tmpl), printable(dir))
	fmt.Fprintf(e.stdout, "sha256 %s\n", sum)
	fmt.Fprintf(e.stdout, "check the hash on your own (sha256sum %s), then launch with:\n", shellQuote(path))
	fmt.Fprintf(e.stdout, "  launcher --policy-sha256 %s --policy %s -- AGENT [ARGS...]\n", sum, shellQuote(path))
	return nil
}

// writeNew creates path exclusively and writes data durably; on any
// failure it removes what it created, so nothing is left half-written.
func writeNew(path string, data []byte) (err error) {
	// Written whole to a temporary file beside it, then linked to its
	// name (which refuses an existing one, as O_EXCL did): an interrupt
	// leaves no empty policy at the name to block the retry.
	if _, err := os.Lstat(path); err == nil {
		return &os.PathError{Op: "open", Path: path, Err: syscall.EEXIST}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		// Named by the directory, not the temporary name nobody gave
		// ("open /proc/.p.toml.new-123: no such file or directory").
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("--out %s: cannot create a file in %s: %v", printable(path), printable(filepath.Dir(path)), pe.Err)
		}
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) && errors.Is(le.Err, os.ErrExist) {
			return &os.PathError{Op: "open", Path: path, Err: syscall.EEXIST}
		}
		return err
	}
	// The name is durable once its directory is: the link, and the
	// temporary name's removal, are entries in it. The policy is at its
	// name by now, so a failure here is not the write's.
	os.Remove(tmp.Name())
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
