package pki

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseRole(t *testing.T) {
	for _, r := range Roles() {
		got, err := ParseRole(string(r))
		if err != nil || got != r {
			t.Errorf("ParseRole(%q) = %q, %v; want %q, nil", r, got, err, r)
		}
	}
	for _, s := range []string{"", "FS", "Agent", " fs", "fs ", "fs\x00", "agentx", "kms/", "root", "bash2", "ne"} {
		got, err := ParseRole(s)
		if err == nil {
			t.Errorf("ParseRole(%q) = %q, want an error", s, got)
			continue
		}
		if want := fmt.Sprintf("unknown role %q", s); !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRole(%q) error %q does not say %q", s, err, want)
		}
	}
}

// TestMayCall pins the whole 5×5 table, written out independently of Edges
// (rows are callers, columns callees, in Roles order).
func TestMayCall(t *testing.T) {
	want := map[Role]string{
		//       agent fs  net bash kms
		Agent: ". X X X .",
		FS:    ". . . . .",
		Net:   ". . . . X",
		Bash:  ". X X . .",
		KMS:   ". . . . .",
	}
	roles := Roles()
	for _, caller := range roles {
		cols := strings.Fields(want[caller])
		for j, callee := range roles {
			if got, w := MayCall(caller, callee), cols[j] == "X"; got != w {
				t.Errorf("MayCall(%s, %s) = %v, want %v", caller, callee, got, w)
			}
		}
	}
	// The properties DESIGN.md states in prose.
	for _, r := range roles {
		if MayCall(r, r) {
			t.Errorf("%s may call itself", r)
		}
		if MayCall(r, Agent) {
			t.Errorf("%s may call the agent", r)
		}
		if r != Net && MayCall(r, KMS) {
			t.Errorf("%s may call kms; only net may", r)
		}
	}
	// Roles outside the five can do nothing.
	for _, r := range []Role{"", "root", "FS"} {
		for _, o := range roles {
			if MayCall(r, o) || MayCall(o, r) {
				t.Errorf("unknown role %q takes part in a call with %s", r, o)
			}
		}
	}
}

func TestEdgesIsACopy(t *testing.T) {
	e := Edges()
	e[0] = Edge{KMS, Agent}
	if MayCall(KMS, Agent) {
		t.Fatal("changing the slice Edges returned changed the table")
	}
	if !MayCall(Agent, FS) {
		t.Fatal("control: agent → fs should still be allowed")
	}
}

// ExampleEdges prints the call table, as documentation can.
func ExampleEdges() {
	for _, e := range Edges() {
		fmt.Println(e)
	}
	// Output:
	// agent → fs
	// agent → net
	// agent → bash
	// bash → fs
	// bash → net
	// net → kms
}
