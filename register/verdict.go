package register

import (
	"fmt"
	"strings"
)

// Verdict is the outcome of one check on this machine.
type Verdict string

// Verdicts. A refusal counts only when the control succeeded (SR-09).
const (
	Pass         Verdict = "pass"         // the confined run was refused and the control succeeded
	Fail         Verdict = "fail"         // the confined run succeeded: the control does not hold
	Inconclusive Verdict = "inconclusive" // the control failed, or a run crashed or timed out: nothing was learned
	Skipped      Verdict = "skipped"      // this machine lacks what the check needs
)

// Run is one execution of a probe: its one output line and exit status.
// Code is -1 when the process could not be run or timed out.
type Run struct {
	Line string `json:"line"`
	Code int    `json:"code"`
	Err  string `json:"error,omitempty"`
	// Stderr is the last line the run printed on stderr (the launcher's
	// own error, when it refused or failed), what refusals are matched
	// on. ErrorLine is the launcher's last error line when a hint
	// followed it: a reason of the hint alone ("list the directory
	// beneath it that the agent needs") did not say what was wrong.
	Stderr    string `json:"stderr,omitempty"`
	ErrorLine string `json:"error_line,omitempty"`
}

// said is what the run printed last on stderr: its error line and the
// hint after it.
func (r Run) said() string {
	if r.ErrorLine != "" {
		return r.ErrorLine + " " + r.Stderr
	}
	return r.Stderr
}

// errorLine is the launcher's error line: the one before the hint when
// a hint ended stderr, else the last line.
func (r Run) errorLine() string {
	if r.ErrorLine != "" {
		return r.ErrorLine
	}
	return r.Stderr
}

// judge turns the confined run and the control into a verdict. refused
// says whether the confined line is a refusal; ok whether the control's
// line is a success. Anything the probe could not tell ("error …", a
// crash, a timeout) is inconclusive, never a pass.
func judge(confined, control Run, refused, ok func(Run) bool) (Verdict, string) {
	switch {
	case control.Err != "" || control.Code < 0:
		return Inconclusive, "control did not run: " + orLine(control)
	case !ok(control):
		return Inconclusive, "control failed, so a refusal would prove nothing (SR-09): " + orLine(control)
	case confined.Err != "" || confined.Code < 0:
		return Inconclusive, "confined run did not finish: " + orLine(confined)
	case refused(confined) && confined.Line != "":
		return Pass, "refused: " + confined.Line
	case refused(confined):
		return Pass, fmt.Sprintf("refused (exit %d): %s", confined.Code, confined.said())
	case strings.HasPrefix(confined.Line, "error"):
		return Inconclusive, "the probe broke under the policy: " + confined.Line
	case confined.Code >= 120 && confined.Code <= 125:
		return Inconclusive, fmt.Sprintf("the launcher itself failed (exit %d): %s", confined.Code, confined.said())
	case confined.Code == 126 || confined.Code == 127:
		// The launcher's own statuses for an agent it did not start (as
		// env(1)'s): nothing ran under the policy, so nothing was learned,
		// and "the probe crashed" would send the reader to the wrong place.
		return Inconclusive, fmt.Sprintf("the agent was not started: %s (exit %d): %s", notStarted[confined.Code], confined.Code, confined.said())
	case confined.Line == "" || confined.Code >= 128:
		return Inconclusive, "the probe crashed under the policy: " + orLine(confined)
	}
	return Fail, "not refused: " + orLine(confined)
}

// notStarted is what the launcher's exit statuses 126 and 127 say.
var notStarted = map[int]string{
	126: "its program was found but could not be run",
	127: "its program was not found",
}

func orLine(r Run) string {
	if r.Err != "" {
		return r.Err
	}
	if r.Line == "" {
		return fmt.Sprintf("no output, exit %d %s", r.Code, r.said())
	}
	return fmt.Sprintf("%q, exit %d", r.Line, r.Code)
}

// deniedLine is the usual refusal: the probe's "denied ERRNO".
func deniedLine(r Run) bool { return strings.HasPrefix(r.Line, "denied ") && r.Code == 1 }

// okLine is the usual success.
func okLine(r Run) bool { return r.Line == "ok" && r.Code == 0 }
