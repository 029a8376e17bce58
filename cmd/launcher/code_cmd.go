package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

const codeHelp = `Usage:
  launcher code run [--json] SCRIPT|-                    (the agent, in a components session)
  launcher code run --tools FILE [--policy FILE] [--json] SCRIPT|-
  launcher check script [--json] SCRIPT|-

Code Mode runs a JavaScript script — the body of an async function that
calls tools with await pinfold.call(name, args) and logs with
pinfold.log(...) — in two layers: a static check first (check script:
eval, Function, require, import, process, Deno, globalThis, Reflect and
the properties constructor, __proto__ and prototype are refused in every
spelling, each finding with its line, column and rule), then a fresh
QuickJS VM in a worker process of its own, which confines itself (no
files, no sockets, an empty network namespace, seccomp, rlimits) before
it reads the script and is killed from outside at its deadline.

In a components session, code run sends the script to the bash
component, which serves its tools through the components: read_file
{path} and list_dir {path} and write_file {path, content} through fs (its
protected paths and questions), run_command {command} for what the
command policy runs without asking (others are refused: run them with
launcher sh), and in proxy mode fetch {url, method, headers, body} through
net, under the agent's own network rules; the limits are the session policy's [code_mode].

With --tools FILE, code run serves the tools from the file, a JSON object of
canned answers:
  {"read_file": {"result": {"text": "hello"}}, "fetch": {"error": "offline"}}
A tool the table does not name fails with "no such tool". The limits
(memory, stack, deadline, tool calls, output, script size) are the
policy's [code_mode] (--policy), else the defaults. The script's return
value is printed as JSON on stdout, its log lines on stderr; --json prints
{"value", "logs", "tool_calls"} instead.

Exit status:
  0    the script returned
  117  it ran and failed (an exception, or a limit: the message names which)
  119  the static check refused it (check script: it would)
  120  usage: a bad flag or argument, or a script larger than [code_mode]
       script_size (said by bash in a session, by code run with --tools)
  124  code run --tools as root: this host's cgroups cannot bound the
       worker (SR-04)
  125  bash refused it for any other reason (no worker could start, a
       malformed request, another role's credential: the message names
       bash's reason and rule), no usable answer from bash (not listening,
       gone, a broken answer), or code run itself failed
` + exitCodesHelp

// exitScriptFailed is a script that ran and failed.
const exitScriptFailed = 117

func (e env) codeVerb(args []string) error {
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(e.stdout, codeHelp)
			return nil
		}
		return fail(exitUsage, "run `launcher code --help`", "code: want `code run ...`")
	}
	fset := flags("code run")
	tools := fset.String("tools", "", "")
	file := fset.String("policy", "", "")
	asJSON := fset.Bool("json", false, "")
	rest, err := e.parse(fset, codeHelp, args[1:], 1)
	if err != nil {
		return err
	}
	if *tools == "" {
		if *file != "" {
			return fail(exitUsage, "", "code run: --policy goes with --tools: in a session the limits are the session's")
		}
		return e.codeInSession(rest[0], *asJSON)
	}
	lim := limitsOf(policy.Default().CodeMode)
	if *file != "" {
		p, err := e.checkedPolicy("code run", *file)
		if err != nil {
			return err
		}
		lim = limitsOf(p.CodeMode)
	}
	table, err := readToolTable(*tools)
	if err != nil {
		return err
	}
	script, err := readScript(rest[0], lim.ScriptSize)
	if err != nil {
		return err
	}
	if fs := code.Validate(script); fs != nil {
		return e.findings(rest[0], fs, false)
	}
	// As root the worker runs under a throwaway uid, which must be able
	// to run the binary and not be able to change it.
	exe, err := sharedExecutable()
	if err != nil {
		return err
	}
	res, err := code.Spawn(context.Background(), []string{exe, code.WorkerEntry}, script, lim, table.serve)
	if err != nil {
		// What a failed run logged comes before its error, as in a session.
		if res != nil && !*asJSON {
			for _, l := range res.Logs {
				fmt.Fprintln(e.stderr, l)
			}
		}
		return codeRunError(err)
	}
	if *asJSON {
		return e.writeJSON(res)
	}
	for _, l := range res.Logs {
		fmt.Fprintln(e.stderr, l)
	}
	// The value is JSON whose strings the script chose: a C1 control or a
	// bidirectional override in one would reach the terminal raw (its
	// logs are escaped in the isolate).
	_, err = fmt.Fprintf(e.stdout, "%s\n", escapeUnprintable(res.Value))
	return err
}

// codeInSession sends the script to the session's bash component, which
// checks it, has the launcher start a worker and serves its tools
// through the components (files through fs, commands under the command
// policy).
func (e env) codeInSession(name string, asJSON bool) error {
	script, err := readScript(name, code.MaxScriptSize)
	if err != nil {
		return err
	}
	rc, err := session.AgentClient(pki.Bash)
	if errors.Is(err, session.ErrNoSession) {
		return fail(exitUsage, "outside a session, give --tools FILE (a file holding a JSON object of canned answers)", "code run: %v", err)
	}
	if err != nil {
		return sessionFail("code run", err) // in a session whose credential the agent cannot read: not a usage error
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour) // the person may be asked
	defer cancel()
	r, d, err := bash.NewClient(rc).Code(ctx, script)
	if err != nil {
		return noAnswer("code run", pki.Bash, err)
	}
	if !d.Allowed {
		return codeRefused(d)
	}
	if asJSON {
		if err := e.writeJSON(r); err != nil {
			return err
		}
	} else {
		for _, l := range r.Logs {
			fmt.Fprintln(e.stderr, l)
		}
		if r.Error == "" {
			fmt.Fprintf(e.stdout, "%s\n", escapeUnprintable(r.Value))
		}
	}
	if r.Error != "" {
		return &cliError{code: exitScriptFailed, err: fmt.Errorf("code run: %s", r.Error)}
	}
	return nil
}

// codeRefused is code run's error for bash's refusal d, its exit status
// by the refusal's rule and reason: 119 is the static check's alone (what
// check script would say), so that a caller can tell a script to rewrite
// from one too large or a session that cannot run scripts.
func codeRefused(d rpc.Decision) error {
	switch {
	case d.Rule == bash.RuleStatic:
		return refused("code run", d)
	case d.Rule == bash.RuleScriptSize:
		return fail(exitUsage, "raise [code_mode] script_size in the session's policy, or shorten the script", "code run: %s", d.Detail)
	case d.Rule == bash.RuleWorker:
		return fail(exitFailure, "", "code run: %s", d.Detail)
	}
	err := refused("code run", d).(*cliError)
	err.code = exitFailure
	return err
}

// checkScript is `launcher check script`.
func (e env) checkScript(args []string) error {
	fset := flags("check script")
	asJSON := fset.Bool("json", false, "")
	rest, err := e.parse(fset, codeHelp, args, 1)
	if err != nil {
		return err
	}
	script, err := readScript(rest[0], code.MaxScriptSize)
	if err != nil {
		return err
	}
	fs := code.Validate(script)
	if *asJSON {
		if fs == nil {
			fs = []code.Finding{}
		}
		if err := e.writeJSON(fs); err != nil {
			return err
		}
		if len(fs) > 0 {
			return silentExit(exitDenied)
		}
		return nil
	}
	if fs == nil {
		fmt.Fprintf(e.stdout, "%s: accepted\n", printable(rest[0]))
		return nil
	}
	return e.findings(rest[0], fs, true)
}

// findings prints the static check's findings (to stdout for check
// script, stderr for code run) and exits 119.
func (e env) findings(name string, fs []code.Finding, toStdout bool) error {
	w := e.stderr
	if toStdout {
		w = e.stdout
	}
	for _, f := range fs {
		fmt.Fprintf(w, "%s:%s\n", printable(name), f)
	}
	if toStdout {
		return silentExit(exitDenied)
	}
	return &cliError{code: exitDenied, err: fmt.Errorf("code run: the static check refused %s (%d finding(s))", name, len(fs))}
}

// readScript reads the script from a file or stdin ("-"), at most max
// bytes: a larger one is refused before it is parsed.
func readScript(name string, max int) (string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", fail(exitUsage, "", "%v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return "", fail(exitUsage, "", "%s: %v", name, err)
	}
	if len(b) > max {
		return "", fail(exitUsage, "raise [code_mode] script_size, or shorten the script", "%s: larger than %d bytes", name, max)
	}
	return string(b), nil
}

// limitsOf is the policy's [code_mode] as the worker's limits.
func limitsOf(c policy.CodeMode) code.Limits {
	return code.Limits{Memory: int64(c.Memory), Stack: int64(c.Stack), Deadline: time.Duration(c.Deadline),
		ToolCalls: int(c.ToolCalls), Output: int(c.Output), ScriptSize: int(c.ScriptSize)}
}

// toolTable is code run's canned answers.
type toolTable map[string]struct {
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// maxToolTable bounds the table file.
const maxToolTable = 16 << 20

func readToolTable(path string) (toolTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(exitUsage, "", "--tools: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxToolTable+1))
	if err != nil || len(b) > maxToolTable {
		return nil, fail(exitUsage, "", "--tools %s: unreadable or larger than %d bytes", path, maxToolTable)
	}
	var t toolTable
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fail(exitUsage, `want {"NAME": {"result": JSON} or {"error": "MESSAGE"}, ...}`, "--tools %s: %v", path, err)
	}
	for name, a := range t {
		if (a.Result == nil) == (a.Error == "") {
			return nil, fail(exitUsage, "", "--tools %s: %q needs exactly one of result and error", path, name)
		}
	}
	return t, nil
}

func (t toolTable) serve(_ context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
	a, ok := t[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("no such tool: %q", name)
	case a.Error != "":
		return nil, errors.New(a.Error)
	}
	return a.Result, nil
}

// codeRunError is how a worker that code run --tools started, or could
// not start, failed: the script's own failure (a limit, an error it
// threw), a refusal (as root on a host whose cgroups cannot bound the
// worker: the launch's own hint), or another failure.
func codeRunError(err error) error {
	var le *code.LimitError
	var se *code.ScriptError
	var refused *launcher.RefusedError
	switch {
	case errors.As(err, &le) || errors.As(err, &se):
		return &cliError{code: exitScriptFailed, err: fmt.Errorf("code run: %w", err)}
	case errors.As(err, &refused):
		return fail(exitRefused, refused.Hint, "code run: refused: %s: the worker was not started", refused.Error())
	}
	return fail(exitFailure, "", "code run: %v", err)
}
