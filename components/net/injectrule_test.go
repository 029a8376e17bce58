package proxy

import (
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// Rule picks which CONNECTs are intercepted for injection: only a host a
// rule names (exactly, or under its wildcard) is, and every other host is
// tunnelled untouched (no interception, no request for a secret). main.go
// intercepts exactly when Rule is not -1.
func TestInjectRuleOnlyItsHosts(t *testing.T) {
	rules := append([]policy.Secret{{Name: "other", Hosts: []policy.Domain{"api.example.com"}, Header: "X-Api-Key", Template: "{secret}"}}, injectRules...)
	in := &Injector{Rules: rules}
	for host, want := range map[string]int{
		"api.example.com":             0,
		"api.github.com":              1,
		"raw.githubusercontent.com":   1,
		"example.com":                 -1,
		"x.api.example.com":           -1,
		"githubusercontent.com":       -1,
		"api.github.com.evil.example": -1,
		"evil-api.github.com":         -1,
		"attacker.example":            -1,
	} {
		if got := in.Rule(host); got != want {
			t.Errorf("Rule(%q) = %d, want %d", host, got, want)
		}
	}
}
