package rpc

import (
	"fmt"
	"unicode/utf8"
)

// Decision is every component's answer to every request: whether it was
// allowed, why (a Reason programs can count without parsing prose), the
// policy rule that decided when one did (a policy key such as
// "secrets[1]", never prose), and a sentence for people.
type Decision struct {
	Allowed bool   `json:"allowed"`
	Reason  Reason `json:"reason"`
	Rule    string `json:"rule,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Reason is why a decision went the way it did.
type Reason int

// Reasons. New ones go at the end: the numbers are not on the wire (the
// names are), but the register and logs count them.
const (
	ReasonAllowed    Reason = iota + 1 // a rule allows it
	ReasonCallerRole                   // the caller's role may not ask this of this component
	ReasonNoRule                       // no policy rule allows it (deny by default)
	ReasonUnknown                      // the object asked for does not exist
	ReasonBadRequest                   // the request is malformed or too large
)

var reasonNames = map[Reason]string{
	ReasonAllowed:    "allowed",
	ReasonCallerRole: "caller-role",
	ReasonNoRule:     "no-rule",
	ReasonUnknown:    "unknown",
	ReasonBadRequest: "bad-request",
}

func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// MarshalText writes the reason's name.
func (r Reason) MarshalText() ([]byte, error) {
	if _, ok := reasonNames[r]; !ok {
		return nil, fmt.Errorf("rpc: no reason %d", int(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a reason's name; any other is an error.
func (r *Reason) UnmarshalText(b []byte) error {
	for k, v := range reasonNames {
		if v == string(b) {
			*r = k
			return nil
		}
	}
	return fmt.Errorf("rpc: unknown reason %q", b)
}

// Allow and Deny build decisions.
func Allow(rule string) Decision { return Decision{Allowed: true, Reason: ReasonAllowed, Rule: rule} }

// Deny is a refusal for reason, under rule when one decided ("" when
// none did), explained by detail.
func Deny(reason Reason, rule, detail string) Decision {
	return Decision{Allowed: false, Reason: reason, Rule: rule, Detail: detail}
}

// appendResponse appends r as JSON, as encoding/json writes it (field
// names and omissions from the struct tags) but without reflection, once
// per answer; r.Result is already JSON (the handler's result, marshalled)
// and goes in as it is. r.Decision.Reason must be a known reason (answer
// checks it). TestAppendResponse holds it to encoding/json's decoding.
func appendResponse(b []byte, r Response) []byte {
	d := r.Decision
	if d.Allowed {
		b = append(b, `{"decision":{"allowed":true,"reason":`...)
	} else {
		b = append(b, `{"decision":{"allowed":false,"reason":`...)
	}
	b = appendJSONString(b, d.Reason.String())
	if d.Rule != "" {
		b = append(b, `,"rule":`...)
		b = appendJSONString(b, d.Rule)
	}
	if d.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, d.Detail)
	}
	b = append(b, '}')
	if len(r.Result) > 0 {
		b = append(b, `,"result":`...)
		b = append(b, r.Result...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD, and U+2028 and
// U+2029 escaped (as encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
