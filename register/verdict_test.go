package register

import "testing"

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
