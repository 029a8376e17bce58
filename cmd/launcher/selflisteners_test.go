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

// PINFOLD_SELF_FILES: a JSON list of absolute, clean paths (any
// character may be in one); anything else is an error, never a silently
// dropped refusal.
func TestSelfFiles(t *testing.T) {
	got, err := selfFiles(`["/etc/ssl/private/gw.key","/var/lib/pinfold/serve/logs","/a,b"]`)
	if err != nil || len(got) != 3 || got[0] != "/etc/ssl/private/gw.key" || got[2] != "/a,b" {
		t.Errorf("got %q, %v", got, err)
	}
	if got, err := selfFiles(""); err != nil || got != nil {
		t.Errorf("empty: %q, %v", got, err)
	}
	for _, bad := range []string{"/etc/ssl/private/gw.key", `["relative/key"]`, `["/a/../b"]`, `["/a/"]`, `[""]`, `{"a":1}`, `["/a"] x`} {
		if _, err := selfFiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
