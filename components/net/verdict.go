package proxy

import "net/netip"

// Verdict is what the egress policy says about one target: allowed or
// not, the policy key that decided (such as "network.allow[2]",
// "network.block_all", "ssrf.loopback", "network.unsafe_allow_private[0]"),
// and a sentence for people. Denials answer 403 with the rule in a header
// and are logged; the reason is never prose a program must parse.
type Verdict struct {
	Allowed bool
	Rule    string
	Detail  string
}

// Host is a request's target host once normalised (NormalizeHost): a
// name in normal form (lower case, no trailing dot, IDNA as xn-- labels)
// or an IP literal in canonical spelling. Exactly one of Name and Addr is
// set.
type Host struct {
	Name string
	Addr netip.Addr // valid only for an IP literal
}

// IsIP reports whether the host was an IP literal.
func (h Host) IsIP() bool { return h.Addr.IsValid() }

func (h Host) String() string {
	if h.IsIP() {
		return h.Addr.String()
	}
	return h.Name
}

// Decider is the egress policy as the proxy asks it: first the name (or
// literal) and port the client asked for, then every address the
// resolver gave for it. The proxy dials only an address DecideAddr
// allowed, and never resolves twice.
type Decider interface {
	DecideHost(h Host, port uint16) Verdict
	DecideAddr(h Host, a netip.Addr, port uint16) Verdict
}
