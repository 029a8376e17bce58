package kms

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

func rules() []policy.Secret {
	return []policy.Secret{
		{Name: "github", Hosts: []policy.Domain{"api.github.com"}, Header: "Authorization", Template: "Bearer {secret}"},
		{Name: "npm", Hosts: []policy.Domain{"*.npmjs.org"}, Header: "Authorization", Template: "Bearer {secret}"},
	}
}

func vaultSecrets() []Secret {
	return []Secret{
		{Name: "github", Value: []byte("ghp_value")},
		{Name: "npm", Value: []byte("npm_value")},
		{Name: "unused", Value: []byte("never-handed-over")},
	}
}

// Only net, only for a rule naming the secret, only for a host the rule
// lists: the value is released; everything else is a denial with its
// reason, and no value.
func TestStoreRelease(t *testing.T) {
	s, err := NewStore(vaultSecrets(), rules())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		caller     pki.Role
		name, host string
		reason     rpc.Reason
		value      string
	}{
		{pki.Net, "github", "api.github.com", rpc.ReasonAllowed, "ghp_value"}, // the control
		{pki.Net, "npm", "registry.npmjs.org", rpc.ReasonAllowed, "npm_value"},
		{pki.Agent, "github", "api.github.com", rpc.ReasonCallerRole, ""},
		{pki.Bash, "github", "api.github.com", rpc.ReasonCallerRole, ""},
		{pki.FS, "github", "api.github.com", rpc.ReasonCallerRole, ""},
		{pki.KMS, "github", "api.github.com", rpc.ReasonCallerRole, ""},
		{pki.Net, "github", "evil.com", rpc.ReasonNoRule, ""},
		{pki.Net, "github", "api.github.com.evil.com", rpc.ReasonNoRule, ""},
		{pki.Net, "npm", "npmjs.org", rpc.ReasonNoRule, ""},
		{pki.Net, "unused", "api.github.com", rpc.ReasonNoRule, ""},
		{pki.Net, "nope", "api.github.com", rpc.ReasonNoRule, ""},
		{pki.Net, "npm", "evil.com/.npmjs.org", rpc.ReasonBadRequest, ""},
		{pki.Net, "npm", "evil.com\x00.npmjs.org", rpc.ReasonBadRequest, ""},
		{pki.Net, "npm", "evil.com:443.npmjs.org", rpc.ReasonBadRequest, ""},
		{pki.Net, "npm", "..npmjs.org", rpc.ReasonBadRequest, ""},
		{pki.Net, "github", "API.github.com", rpc.ReasonBadRequest, ""},
		{pki.Net, "github", "api.github.com.", rpc.ReasonBadRequest, ""},
	} {
		d, v := s.Release(c.caller, c.name, c.host)
		if d.Reason != c.reason || d.Allowed != (c.reason == rpc.ReasonAllowed) || string(v) != c.value {
			t.Errorf("%s asks %s for %s: %+v %q, want %v %q", c.caller, c.name, c.host, d, v, c.reason, c.value)
		}
	}
	d, _ := s.Release(pki.Net, "npm", "registry.npmjs.org")
	if d.Rule != "secrets[1]" {
		t.Errorf("rule %q, want secrets[1]", d.Rule)
	}
	// A denial names the rule that did not match, as a key; the prose is
	// in Detail.
	if d, _ := s.Release(pki.Net, "github", "evil.com"); d.Rule != "secrets[0].hosts" || !strings.Contains(d.Detail, "evil.com") {
		t.Errorf("other host: rule %q, detail %q", d.Rule, d.Detail)
	}
	// A secret no rule names is not even in the store's memory.
	if bytes.Contains(s.mem, []byte("never-handed-over")) {
		t.Error("a secret no rule names was copied in")
	}
	// The released value is a copy: changing it changes nothing held.
	_, v := s.Release(pki.Net, "github", "api.github.com")
	v[0] = 'X'
	if _, again := s.Release(pki.Net, "github", "api.github.com"); string(again) != "ghp_value" {
		t.Errorf("the store's value changed through a released copy: %q", again)
	}
}

// The values live in locked memory while the store is open; Close gives
// it back, and nothing is released after.
func TestStoreLocked(t *testing.T) {
	before := lockedKiB(t)
	s, err := NewStore(vaultSecrets(), rules())
	if err != nil {
		t.Fatal(err)
	}
	if after := lockedKiB(t); after <= before {
		t.Errorf("VmLck %d kB before and %d kB after: nothing was locked", before, after)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if lockedKiB(t) != before {
		t.Errorf("VmLck not back to %d kB after Close", before)
	}
	if d, v := s.Release(pki.Net, "github", "api.github.com"); d.Allowed || v != nil {
		t.Errorf("released after Close: %+v", d)
	}
}

func TestStoreMissingSecret(t *testing.T) {
	_, err := NewStore(vaultSecrets()[1:], rules())
	if err == nil || !strings.Contains(err.Error(), `secrets[0] names "github", which the vault does not hold`) {
		t.Errorf("missing secret: %v", err)
	}
}

func lockedKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmLck:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmLck in /proc/self/status")
	return 0
}

// Close while releases run: no race, no read of unmapped memory; every
// answer is a value or a denial.
func TestStoreCloseDuringRelease(t *testing.T) {
	s, err := NewStore(vaultSecrets(), rules())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if d, v := s.Release(pki.Net, "github", "api.github.com"); d.Allowed && string(v) != "ghp_value" {
					t.Errorf("released %q", v)
					return
				}
			}
		}()
	}
	s.Close()
	wg.Wait()
}

// A host two rules match gets the secret of the most specific pattern
// alone (policy.Secret's hosts): kms, not only net, keeps to it, so a
// net that asks for the broader rule's secret for that host is refused
// (kms's check must not depend on net choosing the rule well).
func TestStoreReleaseMostSpecificRule(t *testing.T) {
	rs := []policy.Secret{
		{Name: "wide", Hosts: []policy.Domain{"*.example.com"}, Header: "Authorization", Template: "Bearer {secret}"},
		{Name: "api", Hosts: []policy.Domain{"api.example.com"}, Header: "Authorization", Template: "Bearer {secret}"},
		{Name: "deep", Hosts: []policy.Domain{"*.eu.example.com"}, Header: "Authorization", Template: "Bearer {secret}"},
	}
	s, err := NewStore([]Secret{{Name: "wide", Value: []byte("wide_value")}, {Name: "api", Value: []byte("api_value")}, {Name: "deep", Value: []byte("deep_value")}}, rs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		name, host string
		value      string // "" for a denial
	}{
		{"wide", "www.example.com", "wide_value"}, // the controls
		{"api", "api.example.com", "api_value"},
		{"deep", "x.eu.example.com", "deep_value"},
		{"wide", "api.example.com", ""},  // an exact name before *.suffix
		{"wide", "x.eu.example.com", ""}, // a longer suffix before a shorter
		{"api", "www.example.com", ""},
	} {
		d, v := s.Release(pki.Net, c.name, c.host)
		if d.Allowed != (c.value != "") || string(v) != c.value {
			t.Errorf("net asks %s for %s: %+v %q, want %q", c.name, c.host, d, v, c.value)
		}
		if !d.Allowed && (d.Reason != rpc.ReasonNoRule || !strings.Contains(d.Detail, c.host)) {
			t.Errorf("net asks %s for %s: %+v, want a no-rule denial naming the host", c.name, c.host, d)
		}
	}
}
