package rpc

import "fmt"

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
