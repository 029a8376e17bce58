package rpc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
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

// appendResponse writes what encoding/json writes for the same answer,
// as encoding/json reads it back, for every kind of text a rule or a
// detail may hold: quotes, backslashes, control characters, invalid
// UTF-8, line and paragraph separators, HTML's special characters.
func TestAppendResponse(t *testing.T) {
	texts := []string{"", "a", `"quoted" \back\`, "tab\tnl\ncr\r\x00\x1f\x7f", "bad \xff\xfe utf-8 \xc3", "sep\u2028par\u2029",
		"<script>&amp;</script>", "émoji 🦀 漢字", "\ufffd", strings.Repeat("\\\"", 100)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	results := []json.RawMessage{nil, json.RawMessage(`{"eof":true}`), json.RawMessage(`[1,"x",null]`)}
	n := 0
	for i, rule := range texts {
		detail := texts[(i*7+3)%len(texts)]
		for _, d := range []Decision{Allow(rule), Deny(ReasonNoRule, rule, detail), Deny(ReasonBadRequest, "", detail)} {
			r := Response{Decision: d, Result: results[n%len(results)]}
			n++
			got := appendResponse(nil, r)
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %q", got)
			}
			var a, b Response
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("%q: %v", got, err)
			}
			if err := json.Unmarshal(want, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%+v: appendResponse reads back as %+v, encoding/json's as %+v\n%s\n%s", r, a, b, got, want)
			}
			if rule == "a" && !bytes.Equal(got, want) {
				t.Errorf("plain text: %s, encoding/json writes %s", got, want)
			}
		}
	}
}
