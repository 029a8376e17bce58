package bash

import (
	"fmt"
	"path"
	"strings"

	"github.com/pinfold/pinfold/policy"
)

// Action is what a decision asks for. Actions are ordered: a later one
// is more restrictive.
type Action int

const (
	// Auto: the command runs without asking.
	Auto Action = iota
	// Approve: the person must approve the command first.
	Approve
	// ConfirmDelete: a recursive deletion. The person must confirm it
	// separately (Cancel by default) and a verified backup of the targets
	// must be made before it runs.
	ConfirmDelete
	// Refuse: the command does not run, whatever anyone answers.
	Refuse
)

var actionNames = [...]string{Auto: "auto", Approve: "approve", ConfirmDelete: "confirm-delete", Refuse: "refuse"}

func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// MarshalText implements encoding.TextMarshaler.
func (a Action) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(actionNames) {
		return nil, fmt.Errorf("bash: no action %d", int(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if string(b) == n {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("bash: no action %q", b)
}

// Decision is the decision for a command line, or for one of its simple
// commands.
type Decision struct {
	Action Action `json:"action"`
	// Rule names what decided: "commands.auto[2]",
	// "commands.approval[0]", "builtin.git-push", "structural.git-hooks",
	// "default" and so on (see the package documentation).
	Rule string `json:"rule"`
	// Reason says why, for the person.
	Reason string `json:"reason"`
	// Command is the text of the simple command that decided.
	Command string `json:"command"`
	// Targets are what a ConfirmDelete would delete, as written (a word
	// that is not a literal appears as its source text and must be
	// expanded, or the delete refused, by whoever runs it).
	Targets []string `json:"targets,omitempty"`

	// readOnly: the command needs the person only for a redirection (or
	// a word its program only writes: writtenWords) to this
	// workspace-relative path, which its worker has read-only
	// (workerReadOnly); relative: named relative to the command's folder.
	readOnly string
	relative bool
}

// Options are the launcher's own paths, for the structural protections.
type Options struct {
	// Workspace is the agent's working directory (absolute); relative
	// paths in commands are taken to be relative to it.
	Workspace string
	// Protected are paths, relative to the workspace, whose mutation
	// needs the person's approval, in addition to the built-in list
	// (the policy's files.protected).
	Protected []string
	// Authority are absolute paths the launcher keeps for itself (the
	// vault, the session directory, the backup store, the policy file,
	// its own binary): a command that names one, or a path beneath one,
	// is refused.
	Authority []string
}

// Decide decides a command line under the command policy c: as its most
// restrictive simple command (the first of them on a tie). A nil
// analysis is refused.
func Decide(a *Analysis, c policy.Commands) Decision {
	return DecideWith(a, c, Options{})
}

// DecideWith is Decide with the launcher's paths for the structural
// protections. A line that would need the person only for redirections
// (or words their programs only write) to paths its worker has
// read-only is refused instead (futile).
func DecideWith(a *Analysis, c policy.Commands, o Options) Decision {
	if a == nil {
		return Decision{Action: Refuse, Rule: "input.invalid", Reason: "the command could not be analysed"}
	}
	each := decideAll(a, c, o)
	if len(each) == 0 {
		return Decision{Action: Auto, Rule: "default", Reason: "the command line runs nothing", Command: strings.TrimSpace(a.Source)}
	}
	best, others := 0, 0
	for i, d := range each {
		if d.Action > each[best].Action {
			best = i
		}
	}
	for i, d := range each {
		if i != best && d.Action != Auto {
			others++
		}
	}
	d := each[best]
	if d.Action == Approve && futile(a, each) {
		d = refuseReadOnly(d)
		if others > 0 {
			d.Reason += fmt.Sprintf("; %d more command(s) on the line write such paths too", others)
		}
		return d
	}
	if others > 0 {
		d.Reason += fmt.Sprintf("; %d more command(s) on the line also need attention", others)
	}
	return d
}

// futile reports whether all the line needs the person for is writes a
// worker cannot make (Decision.readOnly): a yes would change nothing.
// A relative path counts only on a line that stays in one folder.
func futile(a *Analysis, each []Decision) bool {
	found := false
	for _, d := range each {
		switch {
		case d.Action == Auto:
		case d.readOnly == "" || d.relative && (changesDirectory(a) || inFoundFolders(a)):
			return false
		default:
			found = true
		}
	}
	return found
}

// inFoundFolders reports a command find -execdir or -okdir runs: in the
// folder of each file found, which may be out of the workspace.
func inFoundFolders(a *Analysis) bool {
	for _, c := range a.Commands {
		for _, l := range c.Wrappers {
			if l.Name == "find -execdir" || l.Name == "find -okdir" {
				return true
			}
		}
	}
	return false
}

// refuseReadOnly is d, a write to a path commands have read-only, as a
// refusal: asking the person would be asking something their yes could
// not make happen. It says how the change can be made.
func refuseReadOnly(d Decision) Decision {
	d.Action = Refuse
	d.Reason += fmt.Sprintf(", which a command cannot change: a command's worker has the protected paths read-only"+
		" (and moves aside one a command makes), so the person is not asked; to change %s, write it through fs"+
		" (launcher fs write %s, which asks the person) or have the person change it outside the session",
		quotedWord(d.readOnly), quotedWord(d.readOnly))
	return d
}

// DecideEach decides each simple command of a on its own, in order. A
// caller that asks the person must show every decision that is not
// Auto, not only the most restrictive one (decideAll adds the line's
// nodes outside the automatic subset, which are not commands).
func DecideEach(a *Analysis, c policy.Commands, o Options) []Decision {
	if a == nil {
		return nil
	}
	out := make([]Decision, len(a.Commands))
	for i := range a.Commands {
		out[i] = decideOne(&a.Commands[i], c, o)
	}
	return out
}

// decideAll is DecideEach, then a decision (Approve) for each node of
// the line outside the automatic subset (strict.go).
func decideAll(a *Analysis, c policy.Commands, o Options) []Decision {
	out := DecideEach(a, c, o)
	if a == nil {
		return out
	}
	for i := range a.outside {
		out = append(out, decideOne(&a.outside[i], c, o))
	}
	return out
}

// decideOne decides one simple command:
//
//  1. structural protections (Refuse, or Approve), which no policy changes;
//  2. recognised recursive deletion → ConfirmDelete, which no policy
//     changes either (a Refuse from step 1 still wins; an Approve from
//     step 1 is subsumed, the confirmation being the stronger question);
//  3. an approval prefix one of the command's wrapper layers may match
//     (approval "sudo" for sudo git status) → Approve;
//  4. the policy's prefixes on the command itself (an approval prefix
//     where the command may be it at run time: mayStartWith; an auto
//     prefix on literal words only): the most specific match wins,
//     approval on a tie, a longer auto prefix only where it is a case of
//     the approval prefix (unrefined); an auto prefix wins over a built-in
//     finding (step 5) only if it covers the word that finding is about
//     (auto "git" does not make git push automatic; auto "git push" does);
//  5. built-in high-risk actions, programs and scripts the analyzer cannot
//     see, and words known only at run time → Approve;
//  6. otherwise Auto.
//
// A structural approval for a redirection (or a word its program only
// writes: writtenWords) to a path the worker has read-only
// (verdict.readOnly) is marked so (Decision.readOnly) when it
// is all the command needs the person for: decided again without it,
// the command runs automatically.
func decideOne(sc *SimpleCommand, c policy.Commands, o Options) Decision {
	st := structural(sc, o, false)
	d := decideFrom(sc, c, o, st)
	if st != nil && st.readOnly != "" && d.Action == Approve && d.Rule == st.rule {
		if decideFrom(sc, c, o, structural(sc, o, true)).Action == Auto {
			d.readOnly, d.relative = st.readOnly, st.relative
		}
	}
	return d
}

// decideFrom is decideOne given the structural verdict st.
func decideFrom(sc *SimpleCommand, c policy.Commands, o Options, st *verdict) Decision {
	ctx := contextOf(sc)
	mk := func(a Action, rule, reason string) Decision {
		return Decision{Action: a, Rule: rule, Reason: reason + ctx, Command: sc.Text}
	}
	if st != nil && st.action == Refuse {
		return mk(Refuse, st.rule, st.reason)
	}
	if rd := recursiveDelete(sc); rd != nil {
		reason := rd.reason
		if st != nil {
			reason += "; " + st.reason
		}
		d := mk(ConfirmDelete, "builtin.recursive-delete", reason)
		d.Targets = rd.targets
		return d
	}
	if st != nil {
		return mk(st.action, st.rule, st.reason)
	}
	approval := func(i int, ws []Word) Decision {
		reason := fmt.Sprintf("%q needs approval by policy", string(c.Approval[i]))
		if !startsWith(ws, c.Approval[i].Words()) {
			reason += "; the command may be that when it runs (a word known only then, or the prefix's words elsewhere among its words or spelled another way)"
		}
		return mk(Approve, fmt.Sprintf("commands.approval[%d]", i), reason)
	}
	fills := placeholders(scope{}, *sc)
	for _, l := range sc.Wrappers {
		if i, _ := approvalPrefix(l.Words, c.Approval, fills, false); i >= 0 {
			return approval(i, l.Words)
		}
	}
	pi, plen := approvalPrefix(sc.Words, c.Approval, fills, underXargs(sc))
	ai, alen := bestPrefix(sc.Words, c.Auto)
	var aw []string // the words of the auto prefix on the command's
	if ai >= 0 {
		aw = c.Auto[ai].Words()
	}
	for _, l := range sc.Wrappers {
		if l.off < 0 {
			continue
		}
		if i, n := bestPrefix(l.Words, c.Auto); i >= 0 && n-l.off > alen {
			ai, alen, aw = i, n-l.off, c.Auto[i].Words()[l.off:]
		}
	}
	if pi >= 0 && plen >= alen {
		return approval(pi, sc.Words)
	}
	if i := unrefined(sc.Words, c.Approval, fills, underXargs(sc), aw); i >= 0 {
		return approval(i, sc.Words)
	}
	fs := findings(sc)
	if ai >= 0 {
		covered := true
		for _, f := range fs {
			if alen <= f.at {
				covered = false
			}
		}
		if covered {
			return mk(Auto, fmt.Sprintf("commands.auto[%d]", ai), fmt.Sprintf("%q runs automatically by policy", string(c.Auto[ai])))
		}
	}
	if len(fs) > 0 {
		return mk(Approve, fs[0].rule, fs[0].reason)
	}
	return mk(Auto, "default", "no rule asks for more")
}

// contextOf names the layers a command runs under, for the reason.
func contextOf(sc *SimpleCommand) string {
	if len(sc.Wrappers) == 0 {
		return ""
	}
	names := make([]string, len(sc.Wrappers))
	for i, l := range sc.Wrappers {
		names[i] = l.Name
	}
	return " (run by " + strings.Join(names, ", ") + ")"
}

// bestPrefix finds the longest prefix in list that matches ws word for
// word (the first of the longest on a tie): its index and length, or -1.
// A word matches only when it is a literal equal to the prefix's word;
// the command word also matches by its name (/usr/bin/git is git). Auto
// prefixes are matched so: a word known only at run time makes nothing
// automatic.
func bestPrefix(ws []Word, list []policy.Command) (int, int) {
	return longestPrefix(list, func(pw []string) bool { return startsWith(ws, pw) })
}

// approvalPrefix is bestPrefix for the approval list: the longest prefix
// the command may start with when it runs (mayStartWith). fills are the
// strings xargs and find fill in (placeholders); more is set when xargs
// may add words after the last.
func approvalPrefix(ws []Word, list []policy.Command, fills []fill, more bool) (int, int) {
	return longestPrefix(list, func(pw []string) bool { return mayStartWith(ws, pw, fills, more) })
}

// unrefined is the longest approval prefix the words ws may start with
// (mayStartWith) of which the auto prefix's words aw are not a case, or
// -1. A longer auto prefix wins over an approval prefix only where it
// says which case of it runs automatically (auto "make test" under
// approval "make"); one that does not (auto "make test unit" under
// approval "make deploy", which make test unit deploy may also match;
// auto "git push origin docs" under approval "git push --force")
// leaves the command to the approval prefix.
func unrefined(ws []Word, list []policy.Command, fills []fill, more bool, aw []string) int {
	if len(aw) == 0 {
		return -1
	}
	auto := make([]Word, len(aw))
	for i, w := range aw {
		auto[i] = lit(w)
	}
	i, _ := longestPrefix(list, func(pw []string) bool {
		return mayStartWith(ws, pw, fills, more) && !mayStartWith(auto, pw, nil, false)
	})
	return i
}

// longestPrefix is the index and length of the longest entry of list
// that match takes (the first of the longest on a tie), or -1.
func longestPrefix(list []policy.Command, match func([]string) bool) (int, int) {
	best, n := -1, 0
	for i, p := range list {
		if pw := p.Words(); len(pw) > n && match(pw) {
			best, n = i, len(pw)
		}
	}
	return best, n
}

// startsWith reports whether ws starts with the literal words pw.
func startsWith(ws []Word, pw []string) bool {
	if len(pw) > len(ws) {
		return false
	}
	for k, x := range pw {
		w := ws[k]
		if !w.Literal || (w.Text != x && !(k == 0 && commandName(w.Text) == x)) {
			return false
		}
	}
	return true
}

// finding is one reason the built-in rules have to ask: at is the index
// in Words of the word it is about (an auto prefix must cover it).
type finding struct {
	rule, reason string
	at           int
}

// baseName is the name the built-in rules look a command up by: its
// name, or the base name of a path (./gradlew is gradlew).
func baseName(sc *SimpleCommand) string {
	if sc.Name == "" {
		return ""
	}
	return path.Base(sc.Name)
}

// findings are the built-in reasons to ask about sc, most important
// first.
func findings(sc *SimpleCommand) []finding {
	var fs []finding
	if f := highRisk(sc); f != nil {
		fs = append(fs, *f)
	}
	if sc.Script != nil {
		fs = append(fs, finding{"builtin.script", sc.Script.Why, sc.Script.At})
	}
	if f := typedInto(sc); f != nil {
		fs = append(fs, *f)
	}
	if sc.Dynamic != nil {
		fs = append(fs, finding{"builtin.dynamic", sc.Dynamic.Why, sc.Dynamic.At})
	}
	if sc.Appended && (sensitive(baseName(sc)) || execOptionProgram(baseName(sc)) && underXargs(sc)) {
		fs = append(fs, finding{"builtin.dynamic", baseName(sc) + " is given arguments that are filled in at run time (xargs, find -exec), and its arguments decide what it does", len(sc.Words)})
	}
	if f := execOption(sc); f != nil {
		fs = append(fs, *f)
	}
	if f := dynamicArgs(sc); f != nil {
		fs = append(fs, *f)
	}
	if f := shellEval(sc); f != nil {
		fs = append(fs, *f)
	}
	if sc.outside != nil {
		fs = append(fs, *sc.outside)
	}
	if f := strictCommand(sc); f != nil {
		fs = append(fs, *f)
	}
	return fs
}

// underXargs reports a command that xargs runs. The words it adds may be
// options (a seventeenth hunt: xargs tar < args ran the
// --checkpoint-action args held); find's are paths that start with its
// starting points, which cannot be options.
func underXargs(sc *SimpleCommand) bool {
	for _, l := range sc.Wrappers {
		if l.Name == "xargs" {
			return true
		}
	}
	return false
}

// typedInto finds a command that script -c or unbuffer gives a terminal
// on a line that may feed that terminal what it types (the session's
// standard input is /dev/null): an interactive program there runs its
// keystrokes, as a shell runs its standard input (an H12 hunt: printf
// '!./x\n' | script -qc 'less f' /dev/null ran x through less's !,
// and git log, man or any program paging on a terminal does alike).
func typedInto(sc *SimpleCommand) *finding {
	if !sc.line.input {
		return nil
	}
	for _, l := range sc.Wrappers {
		if l.Name == "script -c" || l.Name == "script --command" || l.Name == "unbuffer" {
			return &finding{"builtin.script", l.Name + " gives " + quotedWord(sc.Name) + " a terminal, and the line may type into it (a pipe or a redirection of input): a pager or other interactive program runs what it is typed", len(sc.Words)} // what it is typed is no word an auto prefix covers
		}
	}
	return nil
}
