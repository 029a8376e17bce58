package pki

import (
	"strings"
	"testing"
)

var sessionIDTests = []struct {
	id string
	ok bool
}{
	{"a", true},
	{"0123456789abcdef0123456789abcdef", true},
	{"run-2026-01-01", true},
	{"-", true},
	{strings.Repeat("f", 64), true},
	{"", false},
	{strings.Repeat("f", 65), false},
	{"ABC", false},
	{"abcdeF", false},
	{"a_b", false},
	{"a/b", false},
	{"a.b", false},
	{"a b", false},
	{"é", false},
	{"abc\n", false},
}

func TestCheckSessionID(t *testing.T) {
	for _, tt := range sessionIDTests {
		err := CheckSessionID(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("CheckSessionID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
		}
	}
}

var identityTests = []struct {
	in     string
	want   Identity
	reason Reason // ReasonNone when it parses
}{
	{"pinfold://session/abc/fs", Identity{"abc", FS}, ReasonNone},
	{"pinfold://session/0-9/agent", Identity{"0-9", Agent}, ReasonNone},
	{"pinfold://session/" + strings.Repeat("a", 64) + "/kms", Identity{strings.Repeat("a", 64), KMS}, ReasonNone},
	{"pinfold://session/" + strings.Repeat("a", 65) + "/kms", Identity{}, ReasonBadIdentity},
	{"pinfold://session/abc/root", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc/FS", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc/fs/", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc/fs?x=1", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc/fs#x", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc/", Identity{}, ReasonUnknownRole},
	{"pinfold://session/abc", Identity{}, ReasonBadIdentity},
	{"pinfold://session//fs", Identity{}, ReasonBadIdentity},
	{"pinfold://session/ABC/fs", Identity{}, ReasonBadIdentity},
	{"pinfold://sessions/abc/fs", Identity{}, ReasonBadIdentity},
	{"pinfold://user@session/abc/fs", Identity{}, ReasonBadIdentity},
	{"pinfold://session:1/abc/fs", Identity{}, ReasonBadIdentity},
	{"spiffe://session/abc/fs", Identity{}, ReasonBadIdentity},
	{"PINFOLD://session/abc/fs", Identity{}, ReasonBadIdentity},
	{"", Identity{}, ReasonBadIdentity},
}

func TestParseIdentity(t *testing.T) {
	for _, tt := range identityTests {
		got, reason, err := parseIdentity(tt.in)
		if tt.reason == ReasonNone {
			if err != nil || got != tt.want {
				t.Errorf("parseIdentity(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if s := got.String(); s != tt.in {
				t.Errorf("Identity %+v prints as %q, parsed from %q", got, s, tt.in)
			}
			continue
		}
		if err == nil || reason != tt.reason {
			t.Errorf("parseIdentity(%q) = %+v, %s, %v; want reason %s", tt.in, got, reason, err, tt.reason)
		}
		if _, err := ParseIdentity(tt.in); err == nil || !strings.HasPrefix(err.Error(), "pki: ") {
			t.Errorf("ParseIdentity(%q) error = %v, want one starting with \"pki: \"", tt.in, err)
		}
	}
}

// FuzzParseIdentity checks that anything that parses prints back to exactly
// the input and names a valid session and role: there is one spelling of
// each identity.
func FuzzParseIdentity(f *testing.F) {
	for _, tt := range identityTests {
		f.Add(tt.in)
	}
	for _, tt := range sessionIDTests {
		f.Add("pinfold://session/" + tt.id + "/net")
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseIdentity(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("%q parses to %+v, which prints as %q", s, id, id.String())
		}
		if err := CheckSessionID(id.Session); err != nil {
			t.Fatalf("%q parses to an invalid session id: %v", s, err)
		}
		if _, err := ParseRole(string(id.Role)); err != nil {
			t.Fatalf("%q parses to an invalid role: %v", s, err)
		}
	})
}
