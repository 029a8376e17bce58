package pki

import "fmt"

// Role is what a session participant is: the agent or one of the four
// components. It is the authorisation unit of the session: the call table
// speaks in roles, and a certificate carries exactly one.
type Role string

// The five roles of a session (DESIGN.md §1, §3).
const (
	Agent Role = "agent"
	FS    Role = "fs"
	Net   Role = "net"
	Bash  Role = "bash"
	KMS   Role = "kms"
)

// Roles returns every role, in a fixed order (the order of DESIGN.md §3's
// process list, agent first). The slice is new on every call.
func Roles() []Role {
	return []Role{Agent, FS, Net, Bash, KMS}
}

// ParseRole returns the role named by s. Only the exact lower-case names are
// roles: "FS", " fs" and "" are refused, so a certificate cannot name a role
// by a spelling that some other reader would fold differently.
func ParseRole(s string) (Role, error) {
	r, err := parseRole(s)
	if err != nil {
		return "", fmt.Errorf("pki: %w", err)
	}
	return r, nil
}

func parseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case Agent, FS, Net, Bash, KMS:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want one of agent, fs, net, bash, kms)", s)
}

func (r Role) String() string { return string(r) }

// Edge is one allowed call: Caller may open a connection to Callee.
type Edge struct {
	Caller, Callee Role
}

func (e Edge) String() string { return string(e.Caller) + " → " + string(e.Callee) }

// Edges returns the call table of DESIGN.md §5 — every allowed call, and
// nothing else. The slice is new on every call, so a caller that modifies it
// changes nothing here.
//
//	agent → fs, net, bash   the agent's only ways out
//	bash  → fs, net         Code Mode tool calls
//	net   → kms             secret release for an injection rule
//
// What is absent is the point: nobody calls the agent, nobody but net calls
// kms, kms and fs call nobody, and no role calls itself.
func Edges() []Edge {
	return []Edge{
		{Agent, FS},
		{Agent, Net},
		{Agent, Bash},
		{Bash, FS},
		{Bash, Net},
		{Net, KMS},
	}
}

// MayCall reports whether the table allows caller to open a connection to
// callee. Unknown roles may call nothing and be called by nothing.
func MayCall(caller, callee Role) bool {
	for _, e := range Edges() {
		if e.Caller == caller && e.Callee == callee {
			return true
		}
	}
	return false
}

// callersOf returns the roles that may call callee, in table order.
func callersOf(callee Role) []Role {
	var out []Role
	for _, e := range Edges() {
		if e.Callee == callee {
			out = append(out, e.Caller)
		}
	}
	return out
}
