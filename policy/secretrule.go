package policy

import "math"

// SecretRuleFor is the index of the [[secrets]] rule whose host pattern
// matching host (a name in normal form) is the most specific, or -1: an
// exact name before any *.suffix, a longer suffix before a shorter. That
// rule's secret, and no other, is the one host gets (Secret.Hosts): net
// chooses by it, and kms releases by it too, so that neither relies on
// the other for the choice. The policy refuses one pattern in two rules
// of different secrets, so no two candidates of different secrets tie;
// if they did, the first would win.
func SecretRuleFor(rules []Secret, host string) int {
	best, bestRank := -1, -1
	for i, r := range rules {
		for _, d := range r.Hosts {
			if !d.Matches(host) {
				continue
			}
			rank := len(d) // a longer suffix is more specific
			if _, wild := d.Wildcard(); !wild {
				rank = math.MaxInt // a name is more specific than any pattern
			}
			if rank > bestRank {
				best, bestRank = i, rank
			}
		}
	}
	return best
}
