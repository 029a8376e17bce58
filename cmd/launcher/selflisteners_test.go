package main

import "testing"

// PINFOLD_SELF_LISTENERS: addresses parse; anything malformed is an
// error, never a silently dropped refusal.
func TestSelfListeners(t *testing.T) {
	got, err := selfListeners("127.0.0.1:7480,[::1]:7480")
	if err != nil || len(got) != 2 || got[0].String() != "127.0.0.1:7480" || got[1].String() != "[::1]:7480" {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := selfListeners(""); err != nil || got != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"127.0.0.1", "localhost:7480", "127.0.0.1:7480,", " 127.0.0.1:7480", "127.0.0.1:99999"} {
		if _, err := selfListeners(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
