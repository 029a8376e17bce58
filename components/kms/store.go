package kms

import (
	"fmt"
	"slices"
	"sync"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

// Store holds one session's secrets unsealed, in locked memory that is
// never swapped, dumped or inherited by a child, and releases a value only
// to the net component, only for a [[secrets]] rule that names it and
// whose hosts match the host net is about to send it to.
type Store struct {
	mu    sync.RWMutex      // Release reads mem; Close unmaps it
	mem   []byte            // locked; every value, back to back
	spans map[string][2]int // name → [start, end) in mem
	rules []policy.Secret
}

// NewStore copies into locked memory the vault's secrets that the rules
// name, and no others. A rule naming a secret the vault does not hold is
// an error: the launch would otherwise inject nothing, silently.
func NewStore(secrets []Secret, rules []policy.Secret) (*Store, error) {
	s := &Store{spans: map[string][2]int{}, rules: rules}
	byName := map[string][]byte{}
	for _, sec := range secrets {
		byName[sec.Name] = sec.Value
	}
	size := 0
	for i, r := range rules {
		v, ok := byName[string(r.Name)]
		if !ok {
			return nil, fmt.Errorf("kms: secrets[%d] names %q, which the vault does not hold (`launcher secrets add %s`)", i, r.Name, r.Name)
		}
		if _, dup := s.spans[string(r.Name)]; !dup {
			s.spans[string(r.Name)] = [2]int{size, size + len(v)}
			size += len(v)
		}
	}
	mem, err := lockedAlloc(size)
	if err != nil {
		return nil, err
	}
	s.mem = mem
	for name, sp := range s.spans {
		copy(s.mem[sp[0]:sp[1]], byName[name])
	}
	return s, nil
}

// Release decides whether caller may have the secret name for a request
// to host (lower case, no trailing dot), and returns a copy of the value
// when it may. Only net may ask, and only for the secret of the rule
// that host gets (policy.SecretRuleFor: the most specific pattern), as
// net chooses it: a broader rule naming the secret does not release it
// for a host a more specific rule gives another secret.
func (s *Store) Release(caller pki.Role, name, host string) (rpc.Decision, []byte) {
	if caller != pki.Net {
		return rpc.Deny(rpc.ReasonCallerRole, "", "only net may ask kms for a secret"), nil
	}
	// A host not in normal form is refused outright: kms's check must not
	// depend on net having parsed the request well.
	if err := policy.CheckHost(host); err != nil {
		return rpc.Deny(rpc.ReasonBadRequest, "", err.Error()), nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mem == nil {
		return rpc.Deny(rpc.ReasonUnknown, "", "kms is closed"), nil
	}
	named := slices.IndexFunc(s.rules, func(r policy.Secret) bool { return string(r.Name) == name })
	if named < 0 {
		return rpc.Deny(rpc.ReasonNoRule, "", "no [[secrets]] rule names "+name), nil
	}
	i := policy.SecretRuleFor(s.rules, host)
	switch {
	case i < 0:
		return rpc.Deny(rpc.ReasonNoRule, fmt.Sprintf("secrets[%d].hosts", named), "no [[secrets]] rule for "+name+" lists host "+host), nil
	case string(s.rules[i].Name) != name:
		return rpc.Deny(rpc.ReasonNoRule, fmt.Sprintf("secrets[%d].hosts", i), fmt.Sprintf("host %s gets the secret of secrets[%d] (its most specific pattern), not %s", host, i, name)), nil
	}
	sp := s.spans[name]
	return rpc.Allow(fmt.Sprintf("secrets[%d]", i)), append([]byte(nil), s.mem[sp[0]:sp[1]]...)
}

// Close wipes the values and releases the memory.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mem == nil {
		return nil
	}
	clear(s.mem)
	err := lockedFree(s.mem)
	s.mem = nil
	return err
}
