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

// A host two rules match gets the secret of the most specific pattern,
// whatever the rules' order: an exact name before *.suffix, a longer
// suffix before a shorter.
func TestInjectRuleMostSpecific(t *testing.T) {
	rule := func(name string, hosts ...policy.Domain) policy.Secret {
		return policy.Secret{Name: policy.SecretName(name), Hosts: hosts, Header: "X-Api-Key", Template: "{secret}"}
	}
	wide := rule("wide", "*.example.com")
	deep := rule("deep", "*.eu.example.com")
	exact := rule("exact", "api.eu.example.com")
	for _, order := range [][]policy.Secret{{wide, deep, exact}, {exact, deep, wide}, {deep, wide, exact}} {
		in := &Injector{Rules: order}
		for host, want := range map[string]string{
			"api.eu.example.com": "exact",
			"db.eu.example.com":  "deep",
			"eu.example.com":     "wide",
			"www.example.com":    "wide",
			"example.com":        "",
		} {
			got := ""
			if i := in.Rule(host); i >= 0 {
				got = string(order[i].Name)
			}
			if got != want {
				t.Errorf("rules %v: Rule(%q) is %q's, want %q's", names(order), host, got, want)
			}
		}
	}
}

func names(rules []policy.Secret) []string {
	var out []string
	for _, r := range rules {
		out = append(out, string(r.Name))
	}
	return out
}
