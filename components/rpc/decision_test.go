package rpc

import (
	"encoding/json"
	"testing"
)

// Every reason has a name, travels by name, and an unknown name or number
// is an error rather than a silent zero.
func TestReasonText(t *testing.T) {
	for r, name := range reasonNames {
		b, err := json.Marshal(Deny(r, "x", "why"))
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		var d Decision
		if err := json.Unmarshal(b, &d); err != nil || d.Reason != r || d.Allowed {
			t.Errorf("%s: round trip %s gave %+v, %v", name, b, d, err)
		}
	}
	if b, err := json.Marshal(Allow("secrets[0]")); err != nil || string(b) != `{"allowed":true,"reason":"allowed","rule":"secrets[0]"}` {
		t.Errorf("Allow: %s, %v", b, err)
	}
	var d Decision
	if err := json.Unmarshal([]byte(`{"allowed":false,"reason":"nope"}`), &d); err == nil {
		t.Error("unknown reason name accepted")
	}
	if _, err := json.Marshal(Decision{Reason: 0}); err == nil {
		t.Error("reason 0 marshalled")
	}
}
