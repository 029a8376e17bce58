package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/session"
)

const shHelp = `Usage (inside a components-mode session, as the agent):
  launcher sh 'COMMAND LINE'

Asks the session's bash component to run the command line with bash -c
in the workspace. bash decides first, under the policy's [commands]:
automatic commands run at once; others need the person's approval on the
launcher's terminal; a recursive deletion needs its own confirmation
and a verified backup of what it deletes (launcher backups); some are
refused whatever anyone answers (` + "`launcher check command`" + ` says which, and why).
What runs, runs in a confined worker that may write the workspace but
not its protected paths (git hooks and config, shell start-up files,
.ssh, the policy's own), with no network, a timeout and an output cap:
a command that needs approval only to write one of those by redirection
or mv is refused without asking (use launcher fs write, which asks the person).

The command's stdout and stderr are printed as they were captured, and
its exit status is sh's. Otherwise:
  118  the command was killed at the policy's commands.timeout
  119  bash decided against it: a rule refuses it, the person declined, or
       its backup could not be made ("denied", with bash's reason and rule)
  120  a bad command line: one bash cannot read (as check command says), or
       outside a session
  125  no decision: the worker could not be made, no usable answer from bash
       (not listening, gone, a broken answer), or the command ended without
       a status
A command's own status may be any of these too: the message on stderr
tells them apart.
` + exitCodesHelp

// exitTimedOut is a command killed at its timeout.
const exitTimedOut = 118

func (e env) shVerb(args []string) error {
	rest, err := e.parse(flags("sh"), shHelp, args, 1)
	if err != nil {
		return err
	}
	rc, err := session.AgentClient(pki.Bash)
	if err != nil {
		return sessionFail("sh", err)
	}
	defer rc.Close()
	// The person may take a while; the command has its own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	r, d, err := bash.NewClient(rc).Run(ctx, rest[0])
	if err != nil {
		return noAnswer("sh", pki.Bash, err)
	}
	switch {
	case !d.Allowed && d.Rule == bash.RuleWorker:
		return fail(exitFailure, "", "sh: %s", d.Detail) // not a decision: the launcher failed
	case !d.Allowed && d.Rule == bash.RuleParse:
		// The command line itself is wrong, as check command says.
		return fail(exitUsage, "run `launcher check command` on it to see how bash reads it", "sh: bash could not read the command line: %s", d.Detail)
	}
	if err := refused("sh", d); err != nil {
		return err
	}
	e.stdout.Write(r.Stdout)
	e.stderr.Write(r.Stderr)
	if len(r.Backups) > 0 {
		fmt.Fprintf(e.stderr, "launcher: sh: backed up first: %v (launcher backups)\n", r.Backups)
	}
	for _, p := range r.Created {
		fmt.Fprintf(e.stderr, "launcher: warning: sh: the protected path %s appeared or changed while the command ran: moved aside (%s…), since protected paths change only through fs, with the person's approval\n", p, filepath.Base(p)+".pinfold-held-")
	}
	if r.Truncated {
		fmt.Fprintln(e.stderr, "launcher: warning: sh: the output was cut at the policy's commands.output")
	}
	if r.TimedOut {
		fmt.Fprintln(e.stderr, "launcher: error: sh: the command was killed at the policy's commands.timeout")
		return silentExit(exitTimedOut)
	}
	if r.ExitCode < 0 || r.ExitCode > 255 {
		return fail(exitFailure, "", "sh: the command ended without an exit status (%d)", r.ExitCode)
	}
	if r.ExitCode != 0 {
		return silentExit(r.ExitCode)
	}
	return nil
}
