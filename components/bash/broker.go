package bash

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

// Rules of the bash component's own refusals (the decision engine's rules
// name the rest: "structural.…", "builtin.…", "commands.approval[N]").
const (
	RuleParse      = "bash.parse"    // the command line does not parse, or is too large
	RuleDeclined   = "bash.declined" // the person said no (or nobody could be asked)
	RuleBackup     = "bash.backup"   // the backup before a deletion failed: nothing ran
	RuleWorker     = "bash.worker"   // the confined worker could not be started
	RuleTooLong    = "bash.too-long" // too long to put to the person in full
	maxQuestionCmd = 4 << 10         // bytes of command line a question shows, at most
	questionHeader = "run in the workspace (asked by the agent): "
)

// Job is one command for a confined worker: bash's request to the
// launcher, which alone can make one (namespaces, mounts, a throwaway
// uid).
type Job struct {
	Command string        `json:"command"`
	Timeout time.Duration `json:"timeout"`
	Output  int           `json:"output"` // bytes of stdout plus stderr kept
}

// Outcome is how a worker ended. Error set: it did not run (or its
// confinement failed), and nothing is retried.
type Outcome struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    []byte `json:"stdout"`
	Stderr    []byte `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"` // output beyond Job.Output was dropped
	TimedOut  bool   `json:"timed_out,omitempty"` // killed at Job.Timeout
	Error     string `json:"error,omitempty"`
}

// RunArgs is the agent's request: one command line, run by bash -c in the
// workspace.
type RunArgs struct {
	Command string `json:"command"`
}

// RunResult is what the agent gets back for a command that ran. Stdout
// and Stderr travel as the answer's data, in that order.
type RunResult struct {
	ExitCode  int      `json:"exit_code"`
	StdoutLen int      `json:"stdout_len"`
	Truncated bool     `json:"truncated,omitempty"`
	TimedOut  bool     `json:"timed_out,omitempty"`
	Backups   []string `json:"backups,omitempty"` // made before a confirmed deletion
	Stdout    []byte   `json:"-"`
	Stderr    []byte   `json:"-"`
}

// Broker decides and runs the agent's commands: the decision engine
// under the policy, the person asked through Ask, a backup through
// Backup before a confirmed deletion, and the command through Run.
// Each is a function so that the process wiring (Main) and the tests
// give their own.
type Broker struct {
	Commands policy.Commands
	Options  Options
	// Ask puts a question to the person; nil: nobody can be asked, and
	// every question is no.
	Ask func(action, detail string, kind approve.Kind) approve.Answer
	// Backup has fs keep path (relative to the workspace, "." for all of
	// it): ErrNoRoom when no backup fits the store, ErrAbsent when there
	// is nothing there to keep.
	Backup func(ctx context.Context, path string) (id string, err error)
	// Run hands the job to a confined worker.
	Run func(ctx context.Context, j Job) Outcome
	Log *slog.Logger
}

// Handle decides command and, when it may run, runs it.
func (b *Broker) Handle(ctx context.Context, command string) (rpc.Decision, *RunResult) {
	deny := func(reason rpc.Reason, rule, detail string) (rpc.Decision, *RunResult) {
		b.Log.Info("run", "allowed", false, "rule", rule, "detail", detail)
		return rpc.Deny(reason, rule, detail), nil
	}
	a, err := Analyze(command)
	if err != nil {
		return deny(rpc.ReasonBadRequest, RuleParse, "the command line was not analysed: "+err.Error())
	}
	d := DecideWith(a, b.Commands, b.Options)
	shown := strconv.Quote(command)
	var backups []string
	switch d.Action {
	case Refuse:
		return deny(rpc.ReasonNoRule, d.Rule, d.Reason+" ("+d.Command+")")
	case Approve:
		if len(shown) > maxQuestionCmd {
			return deny(rpc.ReasonNoRule, RuleTooLong, fmt.Sprintf("the command needs the person's approval (%s) and is too long (%d bytes quoted, at most %d) to show them in full", d.Rule, len(shown), maxQuestionCmd))
		}
		if ans := b.ask(questionHeader+shown, d.Rule+": "+d.Reason, approve.Approve); !ans.Yes {
			return deny(rpc.ReasonNoRule, RuleDeclined, fmt.Sprintf("the person did not approve it (%s; it needs approval under %s)", ans.Reason, d.Rule))
		}
	case ConfirmDelete:
		if len(shown) > maxQuestionCmd {
			return deny(rpc.ReasonNoRule, RuleTooLong, fmt.Sprintf("the command deletes recursively and is too long (%d bytes quoted, at most %d) to show the person in full", len(shown), maxQuestionCmd))
		}
		keep := BackupRoots(d.Targets, b.Options.Workspace)
		if changesDirectory(a) {
			// Relative targets are relative to a directory the analyzer
			// cannot follow: keep the whole workspace.
			keep = []string{"."}
		}
		what := "nothing in the workspace"
		if len(keep) > 0 {
			what = strings.Join(keep, ", ")
		}
		if ans := b.ask(questionHeader+shown+" — it deletes recursively and may be irreversible",
			fmt.Sprintf("%s: %s; backed up first: %s", d.Rule, d.Reason, what), approve.ConfirmDelete); !ans.Yes {
			return deny(rpc.ReasonNoRule, RuleDeclined, "cancelled: the person did not confirm the recursive deletion ("+ans.Reason+")")
		}
		for _, p := range keep {
			id, err := b.Backup(ctx, p)
			switch {
			case errors.Is(err, ErrAbsent):
				// Nothing to keep (the line makes it, or it is not there).
			case errors.Is(err, ErrNoRoom):
				if ans := b.ask(questionHeader+shown+" WITHOUT a backup of "+p, "no backup of it fits the store", approve.Irreversible); !ans.Yes {
					return deny(rpc.ReasonNoRule, RuleDeclined, fmt.Sprintf("cancelled: no backup of %s fits, and the person did not confirm an irreversible deletion (%s); nothing ran", p, ans.Reason))
				}
			case err != nil:
				return deny(rpc.ReasonNoRule, RuleBackup, fmt.Sprintf("the backup of %s failed, so nothing ran: %v", p, err))
			default:
				backups = append(backups, id)
			}
		}
	}
	out := b.Run(ctx, b.job(command))
	if out.Error != "" {
		return deny(rpc.ReasonNoRule, RuleWorker, "the command did not run: "+out.Error)
	}
	b.Log.Info("run", "allowed", true, "rule", d.Rule, "action", d.Action.String(), "exit", out.ExitCode, "timed_out", out.TimedOut, "backups", len(backups))
	return rpc.Allow(d.Rule), &RunResult{ExitCode: out.ExitCode, StdoutLen: len(out.Stdout), Truncated: out.Truncated, TimedOut: out.TimedOut,
		Backups: backups, Stdout: out.Stdout, Stderr: out.Stderr}
}

// Backup's errors that are not failures.
var (
	ErrNoRoom = errors.New("no backup fits the store")
	ErrAbsent = errors.New("nothing there to back up")
)

// changesDirectory reports whether a command on the line changes the
// working directory (cd, pushd, popd), after which relative paths are no
// longer the workspace's.
func changesDirectory(a *Analysis) bool {
	for _, c := range a.Commands {
		switch c.Name {
		case "cd", "pushd", "popd":
			return true
		}
		if len(c.Words) > 0 && !c.Words[0].Literal {
			return true // a command word known only at run time could be cd
		}
	}
	return false
}

// job is command with the policy's limits: its timeout (the default's
// when unset) and its output cap, at most what one answer carries.
func (b *Broker) job(command string) Job {
	j := Job{Command: command, Timeout: time.Duration(b.Commands.Timeout), Output: min(int(b.Commands.Output), rpc.MaxData)}
	if j.Timeout <= 0 {
		j.Timeout = time.Duration(policy.Default().Commands.Timeout)
	}
	return j
}

func (b *Broker) ask(action, detail string, kind approve.Kind) approve.Answer {
	if b.Ask == nil {
		return approve.Answer{Reason: "no one can be asked in this session"}
	}
	return b.Ask(action, detail, kind)
}

// BackupRoots is what to keep before a recursive deletion of targets (as
// the decision gives them, relative to the workspace ws or absolute):
// for each, its longest leading run of literal components — a glob, a
// variable or a quote ends it, so "build/*.o" keeps build and "$D/x"
// keeps the whole workspace — as a path relative to ws, "." for all of
// it. Targets outside the workspace are left out (the worker cannot
// write there but for its private /tmp); nested roots are kept once, by
// the outermost.
func BackupRoots(targets []string, ws string) []string {
	var roots []string
	for _, t := range targets {
		var lit []string
		for i, c := range strings.Split(t, "/") {
			if strings.ContainsAny(c, "$`*?[]{}~'\"\\!") {
				break
			}
			if i == 0 && c == "" {
				lit = append(lit, "/")
				continue
			}
			lit = append(lit, c)
		}
		p := path.Join(lit...)
		if !path.IsAbs(p) {
			p = path.Join(ws, p)
		}
		var rel string
		switch {
		case p == ws:
			rel = "."
		case strings.HasPrefix(p, ws+"/"):
			rel = p[len(ws)+1:]
		case strings.HasPrefix(ws, p+"/") || p == "/":
			rel = "." // a directory that holds the workspace
		default:
			continue
		}
		roots = append(roots, rel)
	}
	var out []string
	for _, r := range roots {
		covered := func(o string) bool { return o == "." || o == r || strings.HasPrefix(r, o+"/") }
		if !anyOf(out, covered) {
			out = append(removeCovered(out, r), r)
		}
	}
	return out
}

func anyOf(xs []string, f func(string) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// removeCovered drops from xs what lies beneath r.
func removeCovered(xs []string, r string) []string {
	var out []string
	for _, x := range xs {
		if r != "." && !strings.HasPrefix(x, r+"/") {
			out = append(out, x)
		}
	}
	return out
}
