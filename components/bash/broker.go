package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/fs"
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
	maxQuestionCmd = 700             // bytes of command line a question shows, at most (approve.MaxQuestion bounds the whole)
	maxAttention   = 400             // bytes of the reasons a question shows, at most
	questionHeader = "run in the workspace (asked by the agent): "
)

// Job is one command for a confined worker: bash's request to the
// launcher, which alone can make one (namespaces, mounts, a throwaway
// uid).
type Job struct {
	// Kind is JobShell (bash -c Command in a worker) or JobCode (start a
	// Code Mode worker, whose channel comes back over the fd channel).
	Kind    string        `json:"kind,omitempty"`
	Command string        `json:"command"`
	Timeout time.Duration `json:"timeout"`
	Output  int           `json:"output"` // bytes of stdout plus stderr kept
}

// Job kinds.
const (
	JobShell = ""
	JobCode  = "code"
	JobNet   = "net" // a connection to net's proxy, over the passing channel
	// JobCancel, sent while a job runs, ends it: its caller left. The job
	// is answered as usual; a cancel that comes after its job's end is
	// ignored.
	JobCancel = "cancel"
)

// ErrCancelled is the cause a job's context ends with when its caller
// left (JobCancel).
var ErrCancelled = errors.New("the request ended (its caller left)")

// Outcome is how a worker ended. Error set: it did not run (or its
// confinement failed), and nothing is retried.
type Outcome struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    []byte `json:"stdout"`
	Stderr    []byte `json:"stderr"`
	Truncated bool   `json:"truncated,omitempty"` // output beyond Job.Output was dropped
	TimedOut  bool   `json:"timed_out,omitempty"` // killed at Job.Timeout
	// Created are protected paths that appeared or changed while the
	// command ran (they were writable to it): the launcher has moved
	// each aside, beside itself (fs would have refused to make them).
	Created []string `json:"created,omitempty"`
	Error   string   `json:"error,omitempty"`
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
	Created   []string `json:"created,omitempty"` // protected paths the command made or changed, moved aside after it (Outcome.Created)
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

	// Code Mode: the limits of a script, a function that has the
	// launcher start a worker and returns bash's end of its channel and
	// the pipe that says how the worker ended (nil: no word of it), and
	// fs for the scripts' file tools.
	CodeLimits code.Limits
	StartCode  func(ctx context.Context, j Job) (conn, end *os.File, err error)
	// Fetch is the scripts' HTTP client through net (nil: no net).
	Fetch *http.Client
	Files *fs.Client

	mu sync.Mutex // one job at a time, from its backup to its end
}

// Handle decides command and, when it may, runs it.
func (b *Broker) Handle(ctx context.Context, command string) (rpc.Decision, *RunResult) {
	rpc.Watch(ctx) // it may ask the person, and it runs a command
	return b.handle(ctx, command, false)
}

// RuleNeedsPerson refuses, inside a Code Mode script, a command that
// would need the person: a script does not put questions to them.
const RuleNeedsPerson = "code.needs-person"

// handle is Handle; fromScript: the command is a Code Mode script's,
// which runs only what needs no one's answer.
func (b *Broker) handle(ctx context.Context, command string, fromScript bool) (rpc.Decision, *RunResult) {
	deny := func(reason rpc.Reason, rule, detail string) (rpc.Decision, *RunResult) {
		b.Log.Info("run", "allowed", false, "rule", rule, "detail", detail)
		return rpc.Deny(reason, rule, detail), nil
	}
	a, err := Analyze(command)
	if err != nil {
		return deny(rpc.ReasonBadRequest, RuleParse, "the command line was not analysed: "+err.Error())
	}
	d := DecideWith(a, b.Commands, b.Options)
	// Escaped to ASCII, as fs's questions are: a zero-width or filler
	// character, a homoglyph or a combining mark shows as what it is.
	shown := strconv.QuoteToASCII(command)
	if d.Action != Auto && d.Action != Refuse && tooLong(shown) {
		return deny(rpc.ReasonNoRule, RuleTooLong, fmt.Sprintf("the command needs the person (%s) and is too long to show them in full (%d bytes quoted, at most %d)", d.Rule, len(shown), maxQuestionCmd))
	}
	if fromScript && (d.Action == Approve || d.Action == ConfirmDelete) {
		return deny(rpc.ReasonNoRule, RuleNeedsPerson, fmt.Sprintf("it needs the person (%s: %s), and a script's commands are not put to them: run it with launcher sh", d.Rule, d.Reason))
	}
	var keep []string
	switch d.Action {
	case Refuse:
		return deny(rpc.ReasonNoRule, d.Rule, d.Reason+" ("+d.Command+")")
	case Approve:
		if ans := b.askFor(ctx, questionHeader+shown, attention(a, b.Commands, b.Options), approve.Approve); !ans.Yes {
			return deny(rpc.ReasonNoRule, RuleDeclined, fmt.Sprintf("the person did not approve it (%s; it needs approval under %s)", ans.Reason, d.Rule))
		}
	case ConfirmDelete:
		keep = b.backupRoots(a)
		if ans := b.askFor(ctx, questionHeader+shown+" — it deletes recursively and may be irreversible",
			fmt.Sprintf("%s; backed up first: %s", attention(a, b.Commands, b.Options), quoteAll(keep)), approve.ConfirmDelete); !ans.Yes {
			return deny(rpc.ReasonNoRule, RuleDeclined, "cancelled: the person did not confirm the recursive deletion ("+ans.Reason+")")
		}
	}
	// One job at a time, from its backup to its end: another command of
	// the agent's cannot move a tree into a target once it is backed up.
	// An fs call meanwhile can (fs serves on while the command runs): a
	// tree the agent moves into a target then goes without a backup (a
	// hunt, 2026-12-01). That gives it nothing new: fs deletes an
	// unprotected file at its word, without one, and protected paths are
	// read-only to the command. The mirror case is fs's own (fs/recursive.go).
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return deny(rpc.ReasonNoRule, RuleDeclined, "the request ended before the command ran: "+err.Error())
	}
	backups, err := b.keep(ctx, keep, shown)
	if err != nil {
		return deny(rpc.ReasonNoRule, ruleOf(err), err.Error())
	}
	out := b.Run(ctx, b.job(command))
	if out.Error != "" {
		return deny(rpc.ReasonNoRule, RuleWorker, "the command's worker failed (it may have started): "+out.Error)
	}
	b.Log.Info("run", "allowed", true, "rule", d.Rule, "action", d.Action.String(), "exit", out.ExitCode, "timed_out", out.TimedOut, "backups", len(backups), "created_protected", len(out.Created))
	return rpc.Allow(d.Rule), &RunResult{ExitCode: out.ExitCode, StdoutLen: len(out.Stdout), Truncated: out.Truncated, TimedOut: out.TimedOut,
		Backups: backups, Created: out.Created, Stdout: out.Stdout, Stderr: out.Stderr}
}

// keep backs up each root before a confirmed deletion. A root that is
// not there widens the backup to the whole workspace (the line may make
// or move it); no room needs the person's "irreversible"; any other
// failure (a root that is a link among them) runs nothing.
func (b *Broker) keep(ctx context.Context, roots []string, shown string) ([]string, error) {
	var ids []string
	for i := 0; i < len(roots); i++ {
		p := roots[i]
		id, err := b.Backup(ctx, p)
		switch {
		case err == nil:
			ids = append(ids, id)
		case errors.Is(err, ErrAbsent) && p != ".":
			roots = []string{"."}
			ids, i = nil, -1 // start again, with the whole workspace
		case errors.Is(err, ErrNoRoom):
			if ans := b.askFor(ctx, questionHeader+shown+" WITHOUT a backup of "+strconv.QuoteToASCII(p), noRoomDetail(err), approve.Irreversible); !ans.Yes {
				return nil, &declined{fmt.Sprintf("cancelled: no backup of %s fits, and the person did not confirm an irreversible deletion (%s); nothing ran", p, ans.Reason)}
			}
		default:
			return nil, fmt.Errorf("the backup of %s failed, so nothing ran: %v", p, err)
		}
	}
	return ids, nil
}

// noRoomDetail says why no backup is kept: fs's words when it gave
// them (older backups in the way are evicted only by the person, with
// launcher backups remove: a deletion bash runs never evicts).
func noRoomDetail(err error) string {
	const base = "no backup of it fits the store"
	_, detail, ok := strings.Cut(err.Error(), ErrNoRoom.Error()+": ")
	if !ok {
		return base
	}
	if len(detail) > maxNoRoomDetail {
		detail = detail[:maxNoRoomDetail] + "…"
	}
	return base + " (" + asciiShown(detail) + "); to keep one, cancel, free room with launcher backups remove, and run it again"
}

// maxNoRoomDetail bounds fs's words in the question.
const maxNoRoomDetail = 300

// declined is a cancellation by the person (rule bash.declined); other
// errors of keep are backup failures (bash.backup).
type declined struct{ msg string }

func (d *declined) Error() string { return d.msg }

func ruleOf(err error) string {
	var d *declined
	if errors.As(err, &d) {
		return RuleDeclined
	}
	return RuleBackup
}

// tooLong reports whether a question showing shown would not fit the
// approval channel (its JSON escapes <, > and & in six bytes each).
func tooLong(shown string) bool {
	b, _ := json.Marshal(shown)
	return len(b) > maxQuestionCmd
}

// attention lists every simple command of a that needs the person, with
// its rule: the person sees all of them, not only the most restrictive.
func attention(a *Analysis, c policy.Commands, o Options) string {
	var parts []string
	for _, d := range decideAll(a, c, o) {
		if d.Action != Auto {
			parts = append(parts, fmt.Sprintf("%s (%s: %s)", strconv.QuoteToASCII(d.Command), d.Rule, d.Reason))
		}
	}
	// A reason names commands and words of the line: whatever of them
	// is not printable ASCII shows escaped. The command line itself is in
	// the question whole; its reasons are cut to keep the question on one
	// screen.
	shown := asciiShown(strings.Join(parts, "; "))
	if len(shown) > maxAttention {
		shown = shown[:maxAttention] + " … (more of the line needs attention: read it above)"
	}
	return shown
}

// asciiShown is s with every rune that is not printable ASCII escaped
// (\uXXXX), as strconv.QuoteToASCII would, but unquoted.
func asciiShown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x20 && r < 0x7f {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// quotedWord is a word of the command line as a reason shows it: quoted and
// escaped to ASCII, so that it reads as the agent's word and not as the
// analyser's prose (a word may hold ") for the notes file only; …").
func quotedWord(s string) string { return strconv.QuoteToASCII(s) }

// quoteAll is ps for a question: each quoted and escaped to ASCII.
func quoteAll(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = strconv.QuoteToASCII(p)
	}
	return strings.Join(q, ", ")
}

// backupRoots is what to keep before the line's recursive deletions:
// the targets of every one of them (BackupRoots), or the whole workspace
// when the line can change what a relative path names, when a
// deletion's targets are unknown, or when the line runs anything but
// its recursive deletions. The backups are made before the line runs,
// of the names as they are then; a command beside the deletions can
// change what those names are by the time they run (a hunt, 2026-12-01:
// `rm -rf build; mv precious build; rm -rf build` kept the decoy build,
// and a link made in the line, then deleted through, kept nothing of
// what it led to).
func (b *Broker) backupRoots(a *Analysis) []string {
	if changesDirectory(a) {
		return []string{"."}
	}
	var targets []string
	for _, d := range decideAll(a, b.Commands, b.Options) {
		if d.Action != ConfirmDelete {
			return []string{"."}
		}
		if len(d.Targets) == 0 {
			return []string{"."} // xargs rm -rf, and the like
		}
		targets = append(targets, d.Targets...)
	}
	roots := BackupRoots(targets, b.Options.Workspace)
	if len(roots) == 0 {
		return []string{"."}
	}
	return roots
}

// Backup's errors that are not failures.
var (
	ErrNoRoom = errors.New("no backup fits the store")
	ErrAbsent = errors.New("nothing there to back up")
)

// changesDirectory reports whether the line may run its commands
// somewhere other than the workspace, or run what the analyzer cannot
// see: cd, pushd, popd; eval, source and .; env -C and git -C (and
// --git-dir, --work-tree, and a GIT_* variable set for a command); a
// command word known only at run time; a script the analyzer does not
// read; a command xargs adds words to. After any of those a relative
// target is not the workspace's.
func changesDirectory(a *Analysis) bool {
	for _, c := range a.Commands {
		switch c.Name {
		case "cd", "pushd", "popd", "eval", "source", ".":
			return true
		}
		if c.Dynamic != nil || c.Script != nil || len(c.Words) > 0 && !c.Words[0].Literal {
			return true
		}
		if c.Appended {
			// xargs adds the words it reads: a deletion's targets are
			// not all named (a seventeenth hunt: xargs rm -rf src <<<
			// lib deleted lib, and the backup held src alone).
			return true
		}
		for _, l := range c.Wrappers {
			ws := l.Words
			if l.off > 0 && l.off <= len(ws) {
				ws = ws[:l.off] // the wrapper's own words
			}
			// pkexec runs its command in the user's home unless told to
			// keep the folder (a seventeenth hunt).
			pkexecHome := l.Name == "pkexec" && !slices.ContainsFunc(ws, func(w Word) bool { return w.Text == "--keep-cwd" })
			if l.Name == "eval" || movesDir(ws) || l.Name == "env" && envChdir(ws) || l.Name == "cmake -E chdir" || l.Name == "yarn workspace" ||
				pkexecHome || runsElsewhere(l.Name, ws) {
				return true
			}
		}
		// git's global options other than these may change which files
		// a pathspec names (--icase-pathspecs: a hunt's git clean -fdx
		// SRC deleted src) or where git works (-C, -c core.worktree=…).
		for _, g := range c.GitOptions {
			if !gitOptionsKept()[g.Text] {
				return true
			}
		}
		// GIT_WORK_TREE, GIT_DIR and the other GIT_* variables move
		// where git works (a hunt: GIT_WORK_TREE=other git clean -fdx src
		// deleted other/src and kept src); any of them counts.
		for _, as := range c.Assigns {
			if strings.HasPrefix(as.Name, "GIT_") {
				return true
			}
		}
	}
	return false
}

// gitOptionsKept are git's global options after which a deletion's
// targets are still the workspace's.
var gitOptionsKept = sync.OnceValue(func() map[string]bool {
	return set("-P", "--no-pager", "-p", "--paginate", "--no-optional-locks", "--no-advice", "--literal-pathspecs",
		"--no-replace-objects")
})

// envChdir reports env's -C in a group of short options (-iCsub, -vC
// sub: a hunt) before a letter that takes a value.
func envChdir(ws []Word) bool {
	for _, w := range ws[1:] {
		if shortLetter(w.Text, 'C', "aSu") {
			return true
		}
	}
	return false
}

// dirOpts are the wrappers' options, other than movesDir's, that run
// the command in another folder (a sixteenth hunt: npm exec -w a -- rm
// -rf src deleted a/src and kept src; sudo -D, systemd-run
// --working-directory, uv's and poetry's --directory likewise; a
// seventeenth, sudo -i and --login, which run it in the user's home,
// and firejail --private-cwd): long names, any prefix of four letters
// or more, and short letters.
var dirOpts = sync.OnceValue(func() map[string]struct{ long, short string } {
	npm := struct{ long, short string }{"--workspaces --prefix", "w"}
	dir := struct{ long, short string }{"--directory", ""}
	return map[string]struct{ long, short string }{
		"npm exec": npm, "npm x": npm, "npm exe": npm, "npx": npm,
		"uv run": dir, "uvx": dir, "poetry run": dir,
		"sudo": {"--login", "Di"}, "systemd-run": {"--working-directory --root-directory", ""}, "firejail": {"--private-cwd", ""},
	}
})

// runsElsewhere reports one of dirOpts in a wrapper's own words ws, its
// short letters read in a group as the wrapper's table reads them.
func runsElsewhere(layer string, ws []Word) bool {
	d, ok := dirOpts()[layer]
	if !ok {
		return false
	}
	valued := "" // the short options that take a value: the rest of a group is theirs
	if sp, ok := wrappers()[layer]; ok {
		for i := 1; i < len(sp.short); i++ {
			if sp.short[i] == ':' && sp.short[i-1] != ':' {
				valued += sp.short[i-1 : i]
			}
		}
	}
	for _, w := range ws[1:] {
		n, _, _ := strings.Cut(w.Text, "=")
		for _, o := range strings.Fields(d.long) {
			if longOpt(n, o, 3) {
				return true
			}
		}
		for _, c := range []byte(d.short) {
			if shortLetter(w.Text, c, strings.ReplaceAll(valued, string(c), "")) {
				return true
			}
		}
	}
	return false
}

// movesDir reports a -C DIR, --chdir, --git-dir or --work-tree option.
func movesDir(ws []Word) bool {
	for _, w := range ws {
		t := w.Text
		if strings.HasPrefix(t, "-C") || strings.HasPrefix(t, "--chdir") ||
			strings.HasPrefix(t, "--git-dir") || strings.HasPrefix(t, "--work-tree") {
			return true
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

// askFor is ask for a call whose caller may leave (ctx ends): a yes
// given after that is taken as no, so nothing runs for a call nobody
// waits for.
func (b *Broker) askFor(ctx context.Context, action, detail string, kind approve.Kind) approve.Answer {
	a := b.ask(action, detail, kind)
	if a.Yes && ctx.Err() != nil {
		return approve.Answer{Reason: "the caller left before the answer"}
	}
	return a
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
// it. A ".." after a name keeps all of it: the kernel takes ".." where
// a link leads, not where its text does (sub/link/../x). A path outside
// the workspace keeps all of it, /tmp and /dev/shm included: a name
// there may be a link back into the workspace, through which rsync
// --delete deletes (a hunt: rsync -a --delete empty/ /tmp/x, with /tmp/x
// a link to keep/, emptied keep/), as may /proc/self/cwd/x; nested roots
// are kept once, by the outermost.
func BackupRoots(targets []string, ws string) []string {
	var roots []string
	for _, t := range targets {
		var lit []string
		named := false // a name came before: a ".." now may follow a link
		for i, c := range strings.Split(t, "/") {
			if strings.ContainsAny(c, "$`*?[]{}~'\"\\!():|@+") {
				break
			}
			if i == 0 && c == "" {
				lit = append(lit, "/")
				continue
			}
			if c == ".." && named {
				lit = []string{"/"} // outside: keeps the whole workspace
				break
			}
			named = named || c != "" && c != "." && c != ".."
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
			// Elsewhere the worker writes nothing, unless the path leads
			// back in (/tmp/link, /proc/self/cwd/…, /dev/fd/…): keep
			// everything.
			rel = "."
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
