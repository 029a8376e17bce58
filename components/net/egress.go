package proxy

import (
	"fmt"
	"net/netip"

	"github.com/pinfold/pinfold/policy"
)

// Rules that name no policy entry. Everything else is "network.allow[i]",
// "network.deny[i]", "network.unsafe_allow_private[i]" or "ssrf.<class>".
const (
	egRuleBlockAll = "network.block_all"
	egRulePort     = "request.port" // port 0
	egRuleHost     = "request.host" // a Host that NormalizeHost would not have made
	egRuleSelf     = "ssrf.self"    // one of the launcher's or components' own listeners
	egRulePublic   = "ssrf.public"  // a public address: the SSRF check passed
	egRuleNoAddr   = "resolve.none" // Explain: a name with no address to dial
	egRuleSSRF     = "ssrf."        // followed by the address's Class
	egExactName    = 1 << 20        // egSpecificity of an exact name: above any suffix length
)

// Egress is the net component's egress policy: the domain rules of a
// policy's [network] section, the SSRF check on every address, and the
// listeners the proxy must never connect back to. It does no network I/O
// and is safe for concurrent use. It implements Decider.
type Egress struct {
	allow    []policy.Domain
	deny     []policy.Domain
	blockAll bool
	unsafe   []netip.Prefix
	self     []netip.AddrPort
	host     map[netip.Addr]bool // the addresses of the machine net runs on
}

// SetHostAddrs gives the addresses of the machine net dials from (its
// interfaces'): a public one of them is still the host itself, whose
// services bound to every address (a database, sshd, a published
// container port) the SSRF check must not hand the agent. DecideAddr
// refuses them as loopback, unless unsafe_allow_private holds them. Call
// it before the Egress is used.
func (e *Egress) SetHostAddrs(addrs []netip.Addr) {
	e.host = map[netip.Addr]bool{}
	for _, a := range addrs {
		e.host[a.Unmap().WithZone("")] = true
	}
}

var _ Decider = (*Egress)(nil)

// NewEgress builds the egress policy from a policy's [network] section and
// the addresses the launcher and the components listen on (selfListeners),
// which DecideAddr refuses whatever the policy says. It re-checks what the
// policy decoder already checked (names in normal form, canonical ranges)
// so that a Network built in code cannot widen anything by accident.
func NewEgress(n policy.Network, selfListeners []netip.AddrPort) (*Egress, error) {
	e := &Egress{
		allow:    append([]policy.Domain(nil), n.Allow...),
		deny:     append([]policy.Domain(nil), n.Deny...),
		blockAll: n.BlockAll,
	}
	for _, l := range []struct {
		key  string
		list []policy.Domain
	}{{"network.allow", e.allow}, {"network.deny", e.deny}} {
		for i, d := range l.list {
			name := string(d)
			if suffix, ok := d.Wildcard(); ok {
				name = suffix
			}
			if err := policy.CheckHost(name); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", l.key, i, err)
			}
		}
	}
	for i, c := range n.UnsafeAllowPrivate {
		p := netip.Prefix(c)
		if !p.IsValid() || p.Addr().Zone() != "" || p.Addr().Is4In6() {
			return nil, fmt.Errorf("network.unsafe_allow_private[%d]: %q is not a canonical address range", i, p)
		}
		e.unsafe = append(e.unsafe, p.Masked())
	}
	for i, l := range selfListeners {
		if !l.Addr().IsValid() || l.Port() == 0 || l.Addr().Zone() != "" {
			return nil, fmt.Errorf("self listener %d (%s) is not an address and a non-zero port", i, l)
		}
		e.self = append(e.self, netip.AddrPortFrom(l.Addr().Unmap(), l.Port()))
	}
	return e, nil
}

func egAllow(rule, format string, args ...any) Verdict {
	return Verdict{Allowed: true, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

func egDeny(rule, format string, args ...any) Verdict {
	return Verdict{Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// DecideHost decides a target before any lookup. Port 0 and a Host that
// NormalizeHost would not have produced are refused.
//
// An IP literal is decided by its address alone (DecideAddr), except that
// with block_all it is refused under "network.block_all": allow rules take
// names, so nothing can allow a literal then.
//
// A name is decided by the most specific allow or deny rule that matches
// it: an exact name beats any "*.suffix", a longer suffix beats a shorter
// one, and deny wins at equal egSpecificity (the same pattern in both
// lists); among equal rules of one list the first is named. Without a
// match it is refused under "network.block_all" when block_all is true,
// and allowed under the same rule when it is false. An allowed name is not
// yet a connection: every address it resolves to still goes through
// DecideAddr.
func (e *Egress) DecideHost(h Host, port uint16) Verdict {
	if port == 0 {
		return egDeny(egRulePort, "port 0 is not a destination")
	}
	if v, ok := egCheckHost(h); !ok {
		return v
	}
	if h.IsIP() {
		if e.blockAll {
			return egDeny(egRuleBlockAll, "%s is an IP address and block_all is true: allow rules take names, so no address literal is allowed", h)
		}
		return e.DecideAddr(h, h.Addr, port)
	}
	key, idx, d, found := e.match(h.Name)
	switch {
	case found && key == "network.deny":
		return egDeny(fmt.Sprintf("%s[%d]", key, idx), "%s matches the deny rule %q", h.Name, d)
	case found:
		return egAllow(fmt.Sprintf("%s[%d]", key, idx), "%s matches the allow rule %q", h.Name, d)
	case e.blockAll:
		return egDeny(egRuleBlockAll, "%s matches no allow rule and block_all is true", h.Name)
	}
	return egAllow(egRuleBlockAll, "%s matches no rule and block_all is false: public targets are allowed (every address is still checked)", h.Name)
}

// egCheckHost refuses a Host that NormalizeHost would not have produced.
func egCheckHost(h Host) (Verdict, bool) {
	if h.IsIP() {
		a := h.Addr
		if h.Name != "" || a.Zone() != "" || !(a.Is4() || a.Is6()) {
			return egDeny(egRuleHost, "the target %q is not a normalised host", h), false
		}
		return Verdict{}, true
	}
	if n, err := NormalizeHost(h.Name); err != nil || n != h {
		return egDeny(egRuleHost, "the target %q is not a normalised host name", h.Name), false
	}
	return Verdict{}, true
}

// match finds the most specific rule matching name: its list's key, its
// index, the rule, and whether there was one.
func (e *Egress) match(name string) (key string, idx int, d policy.Domain, found bool) {
	best := -1
	for i, r := range e.allow {
		if s := egSpecificity(r, name); s > best {
			best, key, idx, d = s, "network.allow", i, r
		}
	}
	for i, r := range e.deny {
		if s := egSpecificity(r, name); s > best || s == best && s >= 0 && key == "network.allow" {
			best, key, idx, d = s, "network.deny", i, r
		}
	}
	return key, idx, d, best >= 0
}

// egSpecificity is -1 when d does not match name, the suffix's length for a
// matching "*.suffix", and more than any suffix's length for an exact name.
func egSpecificity(d policy.Domain, name string) int {
	if !d.Matches(name) {
		return -1
	}
	if suffix, ok := d.Wildcard(); ok {
		return len(suffix)
	}
	return egExactName
}

// DecideAddr decides one address the proxy would dial for h (the resolved
// address of a name, or the literal itself). In order:
//
//   - port 0, the zero address and an address with a zone are refused;
//   - an address of one of the self listeners on the same port is refused
//     under "ssrf.self", whatever unsafe_allow_private says; a loopback or
//     unspecified listener also claims every loopback and unspecified
//     address on its port, and an unspecified (wildcard) listener every
//     address that is not public on its port (its public interface
//     addresses are not knowable here: pass them as listeners);
//   - a public address is allowed ("ssrf.public");
//   - anything else is refused under "ssrf.<class>" (Classify) unless a
//     range of unsafe_allow_private holds it, which allows it under
//     "network.unsafe_allow_private[i]" (the first such range).
//
// Three kinds of address are stricter about unsafe_allow_private:
//
//   - a metadata address is allowed only by a range that is exactly that
//     one address (/32 or /128): a broad range such as 169.254.0.0/16 or
//     fd00::/8 written for a local service does not open the cloud's
//     credential endpoint;
//   - IPv4-mapped and IPv4-compatible addresses are refused whatever the
//     ranges say: the proxy unmaps resolver answers, so such an address is
//     an attack or a bug, and the IPv4 range is the one to allow;
//   - a NAT64 (well-known prefix) or 6to4 address needs a range holding it
//     and, when the IPv4 address it carries is not public, another range
//     allowing that IPv4 address by these same rules: a translator must
//     not become a way around them.
func (e *Egress) DecideAddr(h Host, a netip.Addr, port uint16) Verdict {
	if port == 0 {
		return egDeny(egRulePort, "port 0 is not a destination")
	}
	if !a.IsValid() || a.Zone() != "" {
		return egDeny(egRuleSSRF+string(ClassInvalid), "%q is not an address the proxy dials (zero, or with a zone)", a)
	}
	if e.isSelf(a, port) {
		return egDeny(egRuleSelf, "%s port %d is one of the launcher's or components' own listeners", a, port)
	}
	c := Classify(a)
	if c == ClassPublic && e.host[a.Unmap()] {
		c = ClassLoopback // this machine, reached by one of its public addresses
	}
	if c == ClassPublic {
		return egAllow(egRulePublic, "%s is a public address", a)
	}
	if i, ok := e.unsafeAllows(a, c); ok {
		return egAllow(fmt.Sprintf("network.unsafe_allow_private[%d]", i), "%s (%s) lies in unsafe_allow_private range %s", a, c, e.unsafe[i])
	}
	detail := fmt.Sprintf("%s is a %s address; the SSRF check refuses it", a, c)
	if h.Name != "" {
		detail = fmt.Sprintf("%s resolved to %s, a %s address; the SSRF check refuses it", h.Name, a, c)
	}
	switch {
	case c.base() == ClassIPv4Mapped || c.base() == ClassIPv4Compatible:
		detail += " (IPv4-in-IPv6 forms are refused outright)"
	case c == ClassMetadata || c.embedded() == ClassMetadata:
		detail += " (metadata addresses are allowed only by a range of exactly that address)"
	}
	return Verdict{Rule: egRuleSSRF + string(c), Detail: detail}
}

var _ ConnDecider = (*Egress)(nil)

// DecideConn looks at a connection the proxy made to an address
// DecideAddr allowed. One whose source address is its destination goes
// to this machine itself (Linux makes a local destination its own
// source), whichever of its addresses it is: one SetHostAddrs gave, or
// one made since net read them (an IPv6 temporary address, which an
// agent learns as the source of its own requests outside). It is decided
// as DecideAddr decides the machine's known addresses: a public one as
// loopback, and refused unless unsafe_allow_private holds it. Ends that
// are not addresses (not TCP) are refused.
func (e *Egress) DecideConn(h Host, local, remote netip.AddrPort) Verdict {
	if !local.IsValid() || !remote.IsValid() {
		return egDeny(egRuleSSRF+string(ClassInvalid), "the connection's ends are not addresses")
	}
	a := remote.Addr().Unmap().WithZone("")
	if local.Addr().Unmap().WithZone("") != a {
		return egAllow(egRulePublic, "%s is not this machine's own address", a)
	}
	c := Classify(a)
	if c == ClassPublic {
		c = ClassLoopback // this machine, reached by one of its public addresses
	}
	if i, ok := e.unsafeAllows(a, c); ok {
		return egAllow(fmt.Sprintf("network.unsafe_allow_private[%d]", i), "%s (%s, this machine's own) lies in unsafe_allow_private range %s", a, c, e.unsafe[i])
	}
	return egDeny(egRuleSSRF+string(c), "%s is this machine's own address (the connection's source is its destination); the SSRF check refuses it", a)
}

// unsafeAllows returns the index of the unsafe_allow_private range that
// lets a (of class c) through, following DecideAddr's rules.
func (e *Egress) unsafeAllows(a netip.Addr, c Class) (int, bool) {
	switch c.base() {
	case ClassIPv4Mapped, ClassIPv4Compatible:
		return 0, false
	case ClassMetadata:
		for i, p := range e.unsafe {
			if p.IsSingleIP() && p.Addr() == a {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := e.containing(a)
	if !ok {
		return 0, false
	}
	if v4, _, embeds := embeddedIPv4(a); embeds {
		if inner := classify4(v4); inner != ClassPublic {
			if _, ok := e.unsafeAllows(v4, inner); !ok {
				return 0, false
			}
		}
	}
	return i, true
}

// containing returns the first unsafe_allow_private range holding a.
func (e *Egress) containing(a netip.Addr) (int, bool) {
	for i, p := range e.unsafe {
		if p.Contains(a) {
			return i, true
		}
	}
	return 0, false
}

// isSelf reports whether dialling a:port could reach one of the self
// listeners (see DecideAddr).
func (e *Egress) isSelf(a netip.Addr, port uint16) bool {
	u := a.Unmap() // the dialer reaches an IPv4 listener through a mapped address
	local := u.IsLoopback() || u.IsUnspecified()
	for _, l := range e.self {
		if l.Port() != port {
			continue
		}
		la := l.Addr()
		switch {
		case u == la:
			return true
		case local && (la.IsLoopback() || la.IsUnspecified()):
			return true
		case la.IsUnspecified() && Classify(u) != ClassPublic:
			return true
		}
	}
	return false
}

// AddrVerdict is DecideAddr's answer for one address, with its class.
type AddrVerdict struct {
	Addr  netip.Addr
	Class Class
	Verdict
}

// Explain gives the decision the proxy would make for h:port if the
// lookup of a name returned addrs, without sending anything, for
// `launcher check url`: the overall verdict and one AddrVerdict per
// address. An IP literal is its own only address (addrs is ignored: the
// proxy never resolves a literal). A name's addresses are unmapped
// first, as the proxy unmaps its resolver's answers (Go's resolver gives
// A records as ::ffff:a.b.c.d): an IPv4 answer is decided as the IPv4
// address the proxy dials. The overall verdict is DecideHost's if
// that refuses; otherwise it is refused under "resolve.none" when there
// is no address, refused with the first address's verdict when every
// address is refused, and otherwise DecideHost's (the proxy dials only an
// allowed address). Address verdicts are given even when the host is
// refused, for information.
func (e *Egress) Explain(h Host, port uint16, addrs []netip.Addr) (Verdict, []AddrVerdict) {
	hv := e.DecideHost(h, port)
	if h.IsIP() {
		addrs = []netip.Addr{h.Addr}
	} else {
		unmapped := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			unmapped[i] = a.Unmap()
		}
		addrs = unmapped
	}
	per := make([]AddrVerdict, 0, len(addrs))
	anyAllowed := false
	for _, a := range addrs {
		v := e.DecideAddr(h, a, port)
		anyAllowed = anyAllowed || v.Allowed
		per = append(per, AddrVerdict{Addr: a, Class: Classify(a), Verdict: v})
	}
	switch {
	case !hv.Allowed || anyAllowed:
		return hv, per
	case len(per) == 0:
		return egDeny(egRuleNoAddr, "%s has no address to check: the proxy dials only an address it has checked", h), per
	}
	return per[0].Verdict, per
}
