package proxy

import (
	"net/netip"
	"strings"
)

// Class names the kind of address Classify found: ClassPublic, the name of
// a special-purpose range, or for an IPv6 form that embeds an IPv4 address
// the form's name followed by "/" and the embedded address's class
// ("ipv4-mapped/loopback", "nat64/metadata"). An embedded public address
// gives the form's name alone ("ipv4-mapped"). Only ClassPublic is a
// destination the SSRF check lets through without unsafe_allow_private.
type Class string

// The classes Classify returns (with the "form/embedded" combinations
// described at Class).
const (
	ClassPublic         Class = "public"          // globally reachable unicast
	ClassMetadata       Class = "metadata"        // a cloud instance-metadata or platform endpoint
	ClassLoopback       Class = "loopback"        // 127.0.0.0/8, ::1
	ClassPrivate        Class = "private"         // 10/8, 172.16/12, 192.168/16
	ClassLinkLocal      Class = "link-local"      // 169.254/16, fe80::/10
	ClassCGNAT          Class = "cgnat"           // 100.64/10 (shared address space)
	ClassUnspecified    Class = "unspecified"     // 0.0.0.0/8 ("this network"), ::
	ClassMulticast      Class = "multicast"       // 224/4, ff00::/8
	ClassBroadcast      Class = "broadcast"       // 255.255.255.255
	ClassDocumentation  Class = "documentation"   // TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20
	ClassBenchmarking   Class = "benchmarking"    // 198.18/15, 2001:2::/48
	ClassReserved       Class = "reserved"        // 240/4, 192.0.0/24, 100::/64, 2001::/23, IPv6 outside 2000::/3
	ClassULA            Class = "ula"             // fc00::/7
	ClassSiteLocal      Class = "site-local"      // fec0::/10 (deprecated)
	ClassIPv4Mapped     Class = "ipv4-mapped"     // ::ffff:0:0/96
	ClassIPv4Compatible Class = "ipv4-compatible" // ::/96 other than :: and ::1 (deprecated)
	ClassNAT64          Class = "nat64"           // 64:ff9b::/96, 64:ff9b:1::/48
	Class6to4           Class = "6to4"            // 2002::/16, and its IPv4 relay anycast 192.88.99/24
	ClassTeredo         Class = "teredo"          // 2001::/32
	ClassInvalid        Class = "invalid"         // the zero netip.Addr
)

// base returns the form's name of a "form/embedded" class, or c itself.
func (c Class) base() Class {
	b, _, _ := strings.Cut(string(c), "/")
	return Class(b)
}

// embedded returns the embedded address's class of a "form/embedded"
// class, or "".
func (c Class) embedded() Class {
	_, e, _ := strings.Cut(string(c), "/")
	return Class(e)
}

// metadataAddrs are cloud instance-metadata and platform endpoints. They
// are checked before the ranges that contain them (most are link-local,
// some CGNAT, ULA or even public), so that the class says "metadata", and
// the egress policy treats them more strictly than their ranges.
var metadataAddrs = map[netip.Addr]bool{
	clAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle (OCI), Hetzner …
	clAddr("169.254.170.2"):   true, // AWS ECS task metadata and credentials
	clAddr("169.254.170.23"):  true, // AWS EKS Pod Identity Agent
	clAddr("169.254.0.23"):    true, // Tencent Cloud
	clAddr("169.254.42.42"):   true, // Scaleway
	clAddr("100.100.100.200"): true, // Alibaba Cloud (inside CGNAT space)
	clAddr("192.0.0.192"):     true, // Oracle Cloud Classic (inside 192.0.0.0/24)
	clAddr("168.63.129.16"):   true, // Azure WireServer and platform DNS (a public address)
	clAddr("fd00:ec2::254"):   true, // AWS IMDS over IPv6
	clAddr("fd00:ec2::23"):    true, // AWS EKS Pod Identity Agent over IPv6
	clAddr("fd20:ce::254"):    true, // GCP metadata over IPv6
	clAddr("fd00:42::42"):     true, // Scaleway over IPv6
}

type rangeClass struct {
	p netip.Prefix
	c Class
}

// ranges4 is searched in order; the first prefix that contains the
// address names its class. Addresses in none of them are public.
var ranges4 = []rangeClass{
	{clPrefix("255.255.255.255/32"), ClassBroadcast},
	{clPrefix("0.0.0.0/8"), ClassUnspecified},
	{clPrefix("10.0.0.0/8"), ClassPrivate},
	{clPrefix("100.64.0.0/10"), ClassCGNAT},
	{clPrefix("127.0.0.0/8"), ClassLoopback},
	{clPrefix("169.254.0.0/16"), ClassLinkLocal},
	{clPrefix("172.16.0.0/12"), ClassPrivate},
	{clPrefix("192.0.0.0/24"), ClassReserved},
	{clPrefix("192.0.2.0/24"), ClassDocumentation},
	{clPrefix("192.88.99.0/24"), Class6to4},
	{clPrefix("192.168.0.0/16"), ClassPrivate},
	{clPrefix("198.18.0.0/15"), ClassBenchmarking},
	{clPrefix("198.51.100.0/24"), ClassDocumentation},
	{clPrefix("203.0.113.0/24"), ClassDocumentation},
	{clPrefix("224.0.0.0/4"), ClassMulticast},
	{clPrefix("240.0.0.0/4"), ClassReserved},
}

// ranges6 is searched in order after the forms that embed IPv4 addresses;
// the first prefix that contains the address names its class. Within
// 2000::/3 (global unicast) an address in none of the earlier prefixes is
// public; outside it, and in none of the later ones, it is reserved.
var ranges6 = []rangeClass{
	{clPrefix("100::/64"), ClassReserved},
	{clPrefix("2001::/32"), ClassTeredo},
	{clPrefix("2001:2::/48"), ClassBenchmarking},
	{clPrefix("2001::/23"), ClassReserved},
	{clPrefix("2001:db8::/32"), ClassDocumentation},
	{clPrefix("3fff::/20"), ClassDocumentation},
	{clPrefix("2000::/3"), ClassPublic},
	{clPrefix("fc00::/7"), ClassULA},
	{clPrefix("fe80::/10"), ClassLinkLocal},
	{clPrefix("fec0::/10"), ClassSiteLocal},
	{clPrefix("ff00::/8"), ClassMulticast},
}

var (
	compat6      = clPrefix("::/96")
	nat64WKP     = clPrefix("64:ff9b::/96")
	nat64Local   = clPrefix("64:ff9b:1::/48")
	sixToFour    = clPrefix("2002::/16")
	unspecified6 = netip.IPv6Unspecified()
	loopback6    = netip.IPv6Loopback()
)

// Classify names the kind of address a is, for the SSRF check: ClassPublic
// or the special-purpose range it lies in. A zone is ignored. Well-known
// cloud metadata addresses are ClassMetadata, whatever range holds them.
//
// IPv6 forms that carry an IPv4 address, IPv4-mapped (::ffff:a.b.c.d),
// IPv4-compatible (::a.b.c.d), NAT64 with the well-known prefix
// (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::/48), are named by the form
// and the embedded address's class, "ipv4-mapped/loopback", and never
// ClassPublic, even when the embedded address is public: what such an
// address reaches depends on a translator or on the dialer treating it as
// IPv4. The local-use NAT64 prefix 64:ff9b:1::/48 is "nat64" alone, since
// where its operator put the IPv4 address is not knowable here. Teredo
// (2001::/32) is "teredo".
//
// Resolvers may hand back IPv4 answers in mapped form (net.Resolver's
// LookupNetIP does): callers unmap them (netip.Addr.Unmap) before asking,
// and a forgotten Unmap fails closed.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return ClassInvalid
	}
	a = a.WithZone("")
	if a.Is4() {
		return classify4(a)
	}
	if metadataAddrs[a] {
		return ClassMetadata
	}
	if v4, form, ok := embeddedIPv4(a); ok {
		if c := classify4(v4); c != ClassPublic {
			return form + "/" + c
		}
		return form
	}
	switch {
	case a == unspecified6:
		return ClassUnspecified
	case a == loopback6:
		return ClassLoopback
	case nat64Local.Contains(a):
		return ClassNAT64
	}
	for _, r := range ranges6 {
		if r.p.Contains(a) {
			return r.c
		}
	}
	return ClassReserved
}

// classify4 classifies an IPv4 address.
func classify4(a netip.Addr) Class {
	if metadataAddrs[a] {
		return ClassMetadata
	}
	for _, r := range ranges4 {
		if r.p.Contains(a) {
			return r.c
		}
	}
	return ClassPublic
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, and the
// form's class: IPv4-mapped, IPv4-compatible (not :: or ::1), NAT64 with
// the well-known prefix (RFC 6052, /96) and 6to4 (RFC 3056).
func embeddedIPv4(a netip.Addr) (netip.Addr, Class, bool) {
	b := a.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case a.Is4In6():
		return last, ClassIPv4Mapped, true
	case compat6.Contains(a) && a != unspecified6 && a != loopback6:
		return last, ClassIPv4Compatible, true
	case nat64WKP.Contains(a):
		return last, ClassNAT64, true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), Class6to4, true
	}
	return netip.Addr{}, "", false
}

func clAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func clPrefix(s string) netip.Prefix {
	p := netip.MustParsePrefix(s)
	if p != p.Masked() {
		panic("prefix " + s + " is not masked")
	}
	return p
}
