package register

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	ok := Run{Line: "ok", Code: 0}
	denied := Run{Line: "denied EACCES", Code: 1}
	tests := []struct {
		name              string
		confined, control Run
		want              Verdict
	}{
		{"refused with a working control", denied, ok, Pass},
		{"not refused", ok, ok, Fail},
		{"control also refused: proves nothing", denied, denied, Inconclusive},
		{"control crashed", denied, Run{Code: -1, Err: "signal: killed"}, Inconclusive},
		{"control printed nothing", denied, Run{Code: 2}, Inconclusive},
		{"probe broke under the policy", Run{Line: "error open: no such file", Code: 2}, ok, Inconclusive},
		{"confined run timed out", Run{Code: -1, Err: "timed out after 20s"}, ok, Inconclusive},
		{"launcher refused to start (exit 124)", Run{Line: "", Code: 124}, ok, Inconclusive},
		{"crashed under the policy: nothing learned", Run{Line: "", Code: 137}, ok, Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := judge(tt.confined, tt.control, deniedLine, okLine)
			if got != tt.want {
				t.Errorf("judge = %s (%s), want %s", got, reason, tt.want)
			}
			if reason == "" {
				t.Error("every verdict carries a reason")
			}
		})
	}
}

// The launcher's 126 and 127 say the agent was never started (as
// env(1)'s): inconclusive, and the reason says so, not that the probe
// crashed.
func TestJudgeNamesAnAgentNotStarted(t *testing.T) {
	ok := Run{Line: "ok", Code: 0}
	for code, want := range map[int]string{126: "found but could not be run", 127: "was not found"} {
		said := "launcher: error: agent: /x/probe: permission denied"
		v, why := judge(Run{Code: code, Stderr: said}, ok, deniedLine, okLine)
		if v != Inconclusive {
			t.Errorf("exit %d: verdict %s (%s), want inconclusive", code, v, why)
		}
		if !strings.Contains(why, "the agent was not started") || !strings.Contains(why, want) || !strings.Contains(why, said) {
			t.Errorf("exit %d: reason %q does not say the agent was not started (%s) and what the launcher said", code, why, want)
		}
		if strings.Contains(why, "crashed") {
			t.Errorf("exit %d: reason %q says the probe crashed", code, why)
		}
	}
}

// A launcher that failed with an error and a hint is reported with both:
// the hint alone ("list the directory beneath it that the agent needs")
// did not say what was wrong. Refusals are still matched on the last
// line only.
func TestJudgeSaysTheErrorBeforeItsHint(t *testing.T) {
	stderr := "launcher: confined: …\nlauncher: error: p.toml: files.exec: \"/tmp\" is the sandbox's own private directory\nlauncher: hint: list the directory beneath it that the agent needs\n"
	r := Run{Code: 122, Stderr: lastLine(stderr), ErrorLine: errorLineBeforeHint(stderr)}
	if r.ErrorLine != "launcher: error: p.toml: files.exec: \"/tmp\" is the sandbox's own private directory" {
		t.Fatalf("error line %q", r.ErrorLine)
	}
	_, why := judge(r, Run{Line: "ok"}, deniedLine, okLine)
	if !strings.Contains(why, "private directory") || !strings.Contains(why, "list the directory beneath") {
		t.Errorf("reason %q lacks the error or its hint", why)
	}
	_, why = judge(Run{Code: 1, Line: "denied EPERM"}, Run{Code: 122, Stderr: r.Stderr, ErrorLine: r.ErrorLine}, deniedLine, okLine)
	if !strings.Contains(why, "private directory") {
		t.Errorf("control's reason %q lacks the error", why)
	}
	// The error line may be the first line, and a refusal's reason says
	// it as well.
	first := "launcher: error: the first line\nlauncher: hint: do this\n"
	if got := errorLineBeforeHint(first); got != "launcher: error: the first line" {
		t.Errorf("errorLineBeforeHint(%q) = %q", first, got)
	}
	refusedHere := func(Run) bool { return true }
	if _, why := judge(r, Run{Line: "ok"}, refusedHere, okLine); !strings.Contains(why, "private directory") || !strings.Contains(why, "list the directory beneath") {
		t.Errorf("a refusal's reason %q lacks the error or its hint", why)
	}
	for _, s := range []string{
		"launcher: error: no hint after it\n",
		"launcher: error: a\nlauncher: note: b\n",
		"launcher: hint: a hint with no error\n",
		"",
	} {
		if got := errorLineBeforeHint(s); got != "" {
			t.Errorf("errorLineBeforeHint(%q) = %q, want nothing", s, got)
		}
	}
}
