package proxy

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// ruleShape is every rule an Egress may name.
var ruleShape = regexp.MustCompile(`^(network\.(allow|deny|unsafe_allow_private)\[\d+\]|network\.block_all|ssrf\.[a-z0-9-]+(/[a-z0-9-]+)?|request\.(port|host)|resolve\.none)$`)

func checkVerdict(t *testing.T, what string, v Verdict, allowed bool, rule string) {
	t.Helper()
	if v.Allowed != allowed || v.Rule != rule {
		t.Errorf("%s = %+v; want allowed=%v rule %q", what, v, allowed, rule)
	}
	if !ruleShape.MatchString(v.Rule) {
		t.Errorf("%s: rule %q has an unexpected shape", what, v.Rule)
	}
	if v.Detail == "" {
		t.Errorf("%s: empty detail", what)
	}
}

func domains(ds ...string) []policy.Domain {
	out := make([]policy.Domain, len(ds))
	for i, d := range ds {
		out[i] = policy.Domain(d)
	}
	return out
}

func cidrs(ps ...string) []policy.CIDR {
	out := make([]policy.CIDR, len(ps))
	for i, p := range ps {
		out[i] = policy.CIDR(netip.MustParsePrefix(p))
	}
	return out
}

func mustEgress(t *testing.T, n policy.Network, self ...string) *Egress {
	t.Helper()
	var aps []netip.AddrPort
	for _, s := range self {
		aps = append(aps, netip.MustParseAddrPort(s))
	}
	e, err := NewEgress(n, aps)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func name(n string) Host { return Host{Name: n} }
func lit(s string) Host  { return Host{Addr: netip.MustParseAddr(s)} }

func TestNewEgressRefuses(t *testing.T) {
	for _, tc := range []struct {
		what string
		n    policy.Network
		self []netip.AddrPort
		want string
	}{
		{"upper-case allow", policy.Network{Allow: domains("Example.com")}, nil, "network.allow[0]"},
		{"trailing dot deny", policy.Network{Deny: domains("ok.example", "example.com.")}, nil, "network.deny[1]"},
		{"double wildcard", policy.Network{Allow: domains("*.*.example.com")}, nil, "network.allow[0]"},
		{"inner wildcard", policy.Network{Allow: domains("a.*.example.com")}, nil, "network.allow[0]"},
		{"bare wildcard", policy.Network{Allow: domains("*")}, nil, "network.allow[0]"},
		{"address as name", policy.Network{Allow: domains("10.0.0.1")}, nil, "network.allow[0]"},
		{"empty", policy.Network{Deny: domains("")}, nil, "network.deny[0]"},
		{"zero range", policy.Network{UnsafeAllowPrivate: []policy.CIDR{{}}}, nil, "unsafe_allow_private[0]"},
		{"mapped range", policy.Network{UnsafeAllowPrivate: []policy.CIDR{policy.CIDR(netip.PrefixFrom(netip.MustParseAddr("::ffff:10.0.0.0"), 104))}}, nil, "unsafe_allow_private[0]"},
		{"listener port 0", policy.Network{}, []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, "self listener 0"},
		{"listener zero", policy.Network{}, []netip.AddrPort{{}}, "self listener 0"},
		{"listener zone", policy.Network{}, []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("[fe80::1%eth0]:1")}, "self listener 1"},
	} {
		_, err := NewEgress(tc.n, tc.self)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewEgress error %v; want one naming %q", tc.what, err, tc.want)
		}
	}
}

func TestDecideHostSpecificity(t *testing.T) {
	n := policy.Network{
		Allow: domains(
			"*.example.com",        // 0
			"www.evil.example.com", // 1
			"*.deep.example.com",   // 2
			"github.com",           // 3
			"*.github.com",         // 4
			"dup.example.org",      // 5
			"*.example.org",        // 6
			"twice.example.net",    // 7
			"twice.example.net",    // 8
		),
		Deny: domains(
			"*.evil.example.com", // 0
			"gist.github.com",    // 1
			"dup.example.org",    // 2
			"*.deep.example.com", // 3
			"*.com",              // 4
			"*.com",              // 5
		),
	}
	rows := []struct {
		host    string
		allowed bool
		rule    string
	}{
		{"a.example.com", true, "network.allow[0]"},            // *.example.com beats *.com
		{"a.b.c.example.com", true, "network.allow[0]"},        // any depth
		{"x.evil.example.com", false, "network.deny[0]"},       // longer suffix wins
		{"a.x.evil.example.com", false, "network.deny[0]"},     // still the longer suffix
		{"www.evil.example.com", true, "network.allow[1]"},     // exact beats any wildcard
		{"evil.example.com", true, "network.allow[0]"},         // *.evil… does not match evil… itself
		{"a.deep.example.com", false, "network.deny[3]"},       // same pattern in both: deny
		{"github.com", true, "network.allow[3]"},               // exact beats *.com
		{"gist.github.com", false, "network.deny[1]"},          // exact deny beats *.github.com
		{"api.github.com", true, "network.allow[4]"},           // *.github.com beats *.com
		{"dup.example.org", false, "network.deny[2]"},          // same exact name in both: deny
		{"a.example.org", true, "network.allow[6]"},            //
		{"example.org", false, "network.block_all"},            // the suffix itself is not beneath it
		{"example.com", false, "network.deny[4]"},              // only *.com matches; first of equal rules
		{"notexample.com", false, "network.deny[4]"},           // suffixes match on label boundaries
		{"github.com.evil.net", false, "network.block_all"},    // prefixes are not suffixes
		{"twice.example.net", true, "network.allow[7]"},        // first of equal rules
		{"other.net", false, "network.block_all"},              // no rule
		{"xn--bcher-kva.example", false, "network.block_all"},  // no rule
		{"a.example.com.evil.net", false, "network.block_all"}, // no rule
	}
	blocked := mustEgress(t, policy.Network{Allow: n.Allow, Deny: n.Deny, BlockAll: true})
	open := mustEgress(t, policy.Network{Allow: n.Allow, Deny: n.Deny, BlockAll: false})
	for _, tc := range rows {
		checkVerdict(t, "block_all DecideHost("+tc.host+")", blocked.DecideHost(name(tc.host), 443), tc.allowed, tc.rule)
		allowed := tc.allowed || tc.rule == "network.block_all"
		checkVerdict(t, "open DecideHost("+tc.host+")", open.DecideHost(name(tc.host), 443), allowed, tc.rule)
	}
}

func TestDecideHostFromClientInput(t *testing.T) {
	e := mustEgress(t, policy.Network{Allow: domains("*.example.com"), Deny: domains("secret.example.com"), BlockAll: true})
	for _, tc := range []struct {
		authority string
		allowed   bool
		rule      string
	}{
		{"SECRET.example.com.:443", false, "network.deny[0]"}, // case and dot cannot dodge a deny
		{"Secret.Example.Com:443", false, "network.deny[0]"},
		{"WWW.example.com.:443", true, "network.allow[0]"},
	} {
		h, p, err := SplitHostPort(tc.authority, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkVerdict(t, "DecideHost("+tc.authority+")", e.DecideHost(h, p), tc.allowed, tc.rule)
	}
}

func TestDecideHostLiteralsAndMalformed(t *testing.T) {
	blocked := mustEgress(t, policy.Network{Allow: domains("example.com"), BlockAll: true, UnsafeAllowPrivate: cidrs("10.0.0.0/8")})
	open := mustEgress(t, policy.Network{Deny: domains("example.com"), BlockAll: false, UnsafeAllowPrivate: cidrs("10.0.0.0/8")})
	for _, tc := range []struct {
		e       *Egress
		what    string
		h       Host
		port    uint16
		allowed bool
		rule    string
	}{
		{blocked, "literal under block_all", lit("93.184.216.34"), 443, false, "network.block_all"},
		{blocked, "allowed-range literal under block_all", lit("10.0.0.1"), 443, false, "network.block_all"},
		{blocked, "v6 literal under block_all", lit("2606:4700::1"), 443, false, "network.block_all"},
		{open, "public literal", lit("93.184.216.34"), 443, true, "ssrf.public"},
		{open, "public v6 literal", lit("2606:4700::1"), 443, true, "ssrf.public"},
		{open, "loopback literal", lit("127.0.0.1"), 80, false, "ssrf.loopback"},
		{open, "metadata literal", lit("169.254.169.254"), 80, false, "ssrf.metadata"},
		{open, "mapped public literal", lit("::ffff:93.184.216.34"), 443, false, "ssrf.ipv4-mapped"},
		{open, "mapped loopback literal", lit("::ffff:127.0.0.1"), 443, false, "ssrf.ipv4-mapped/loopback"},
		{open, "allowed private literal", lit("10.1.2.3"), 443, true, "network.unsafe_allow_private[0]"},
		{open, "denied name", name("example.com"), 443, false, "network.deny[0]"},
		{open, "port 0", name("ok.example"), 0, false, "request.port"},
		{open, "port 0 literal", lit("93.184.216.34"), 0, false, "request.port"},
		{open, "zero host", Host{}, 443, false, "request.host"},
		{open, "both set", Host{Name: "ok.example", Addr: netip.MustParseAddr("1.2.3.4")}, 443, false, "request.host"},
		{open, "upper case", name("Example.com"), 443, false, "request.host"},
		{open, "trailing dot", name("example.com."), 443, false, "request.host"},
		{open, "name that is a literal", name("127.0.0.1"), 443, false, "request.host"},
		{open, "name that is a hex literal", name("0x7f.0x1"), 443, false, "request.host"},
		{open, "pattern", name("*.example.com"), 443, false, "request.host"},
		{open, "zoned literal", Host{Addr: netip.MustParseAddr("fe80::1%eth0")}, 443, false, "request.host"},
	} {
		checkVerdict(t, tc.what, tc.e.DecideHost(tc.h, tc.port), tc.allowed, tc.rule)
	}
}

func TestDecideAddr(t *testing.T) {
	e := mustEgress(t, policy.Network{BlockAll: false, UnsafeAllowPrivate: cidrs(
		"10.0.0.0/8",         // 0
		"169.254.0.0/16",     // 1
		"fd00::/8",           // 2
		"169.254.170.2/32",   // 3: exactly one metadata address
		"64:ff9b::/96",       // 4
		"127.0.0.0/8",        // 5
		"fd00:ec2::254/128",  // 6: exactly one IPv6 metadata address
		"100.100.100.0/24",   // 7: holds Alibaba's metadata, too broad for it
		"2001::/32",          // 8: Teredo
		"192.168.1.0/24",     // 9
		"2002:c0a8:100::/40", // 10: 6to4 of 192.168.0.0/16
	)})
	h := name("svc.example")
	for _, tc := range []struct {
		addr    string
		allowed bool
		rule    string
	}{
		{"93.184.216.34", true, "ssrf.public"},
		{"2606:4700::1", true, "ssrf.public"},
		{"10.1.2.3", true, "network.unsafe_allow_private[0]"},
		{"11.0.0.1", true, "ssrf.public"},
		{"172.16.0.1", false, "ssrf.private"},
		{"192.168.1.7", true, "network.unsafe_allow_private[9]"},
		{"192.168.2.7", false, "ssrf.private"},
		{"169.254.1.1", true, "network.unsafe_allow_private[1]"},
		{"169.254.169.254", false, "ssrf.metadata"},                // a /16 does not open metadata
		{"169.254.170.2", true, "network.unsafe_allow_private[3]"}, // the exact /32 does
		{"100.100.100.200", false, "ssrf.metadata"},                // nor does a /24
		{"100.100.100.1", true, "network.unsafe_allow_private[7]"},
		{"fd00::1", true, "network.unsafe_allow_private[2]"},
		{"fd00:ec2::254", true, "network.unsafe_allow_private[6]"},
		{"fd00:ec2::23", false, "ssrf.metadata"}, // fd00::/8 does not open it
		{"fd20:ce::254", false, "ssrf.metadata"},
		{"fc00::1", false, "ssrf.ula"},
		{"127.0.0.1", true, "network.unsafe_allow_private[5]"},
		{"::1", false, "ssrf.loopback"},
		{"0.0.0.0", false, "ssrf.unspecified"},
		{"::", false, "ssrf.unspecified"},
		{"224.0.0.1", false, "ssrf.multicast"},
		{"255.255.255.255", false, "ssrf.broadcast"},
		{"100.64.0.1", false, "ssrf.cgnat"},
		{"192.0.2.1", false, "ssrf.documentation"},
		{"198.18.0.1", false, "ssrf.benchmarking"},
		{"240.0.0.1", false, "ssrf.reserved"},
		{"fe80::1", false, "ssrf.link-local"},
		{"fec0::1", false, "ssrf.site-local"},
		// Mapped and compatible forms: never, whatever the ranges.
		{"::ffff:10.1.2.3", false, "ssrf.ipv4-mapped/private"},
		{"::ffff:93.184.216.34", false, "ssrf.ipv4-mapped"},
		{"::ffff:169.254.170.2", false, "ssrf.ipv4-mapped/metadata"},
		{"::10.1.2.3", false, "ssrf.ipv4-compatible/private"},
		// NAT64: the range and the embedded address must both pass.
		{"64:ff9b::5db8:d822", true, "network.unsafe_allow_private[4]"}, // 93.184.216.34
		{"64:ff9b::a01:203", true, "network.unsafe_allow_private[4]"},   // 10.1.2.3
		{"64:ff9b::ac10:1", false, "ssrf.nat64/private"},                // 172.16.0.1
		{"64:ff9b::a9fe:a9fe", false, "ssrf.nat64/metadata"},            // 169.254.169.254
		{"64:ff9b::a9fe:aa02", true, "network.unsafe_allow_private[4]"}, // 169.254.170.2, exactly allowed
		{"64:ff9b:1::1", false, "ssrf.nat64"},
		// 6to4 and Teredo.
		{"2002:c0a8:101::1", true, "network.unsafe_allow_private[10]"}, // 192.168.1.1, allowed by [9]
		{"2002:c0a8:201::1", false, "ssrf.6to4/private"},               // 192.168.2.1 is not allowed
		{"2002:5db8:d822::1", false, "ssrf.6to4"},                      // no range holds it
		{"2001::1", true, "network.unsafe_allow_private[8]"},
	} {
		checkVerdict(t, "DecideAddr("+tc.addr+")", e.DecideAddr(h, netip.MustParseAddr(tc.addr), 443), tc.allowed, tc.rule)
	}
	checkVerdict(t, "DecideAddr(zero)", e.DecideAddr(h, netip.Addr{}, 443), false, "ssrf.invalid")
	checkVerdict(t, "DecideAddr(zone)", e.DecideAddr(h, netip.MustParseAddr("fd00::1%eth0"), 443), false, "ssrf.invalid")
	checkVerdict(t, "DecideAddr(port 0)", e.DecideAddr(h, netip.MustParseAddr("93.184.216.34"), 0), false, "request.port")
	if v := e.DecideAddr(h, netip.MustParseAddr("172.16.0.1"), 443); !strings.Contains(v.Detail, "svc.example") {
		t.Errorf("detail %q does not name the host", v.Detail)
	}
}

func TestDecideAddrSelf(t *testing.T) {
	e := mustEgress(t,
		policy.Network{UnsafeAllowPrivate: cidrs("127.0.0.0/8", "10.0.0.0/8", "::1/128")},
		"127.0.0.1:9000", "10.0.0.5:7000", "0.0.0.0:7100", "[::1]:9100", "93.184.216.34:7200", "[::ffff:127.0.0.9]:7300",
	)
	h := name("svc.example")
	for _, tc := range []struct {
		addr    string
		port    uint16
		allowed bool
		rule    string
	}{
		{"127.0.0.1", 9000, false, "ssrf.self"}, // despite 127.0.0.0/8 being allowed
		{"127.0.0.1", 9001, true, "network.unsafe_allow_private[0]"},
		{"127.0.0.2", 9000, false, "ssrf.self"}, // any loopback address
		{"0.0.0.0", 9000, false, "ssrf.self"},   // unspecified dials loopback
		{"::1", 9000, false, "ssrf.self"},       // both families
		{"::", 9000, false, "ssrf.self"},
		{"::ffff:127.0.0.1", 9000, false, "ssrf.self"},
		{"10.0.0.5", 7000, false, "ssrf.self"},
		{"10.0.0.6", 7000, true, "network.unsafe_allow_private[1]"},
		{"10.0.0.5", 7001, true, "network.unsafe_allow_private[1]"},
		{"10.9.9.9", 7100, false, "ssrf.self"}, // a wildcard listener claims non-public addresses
		{"127.0.0.1", 7100, false, "ssrf.self"},
		{"93.184.216.34", 7100, true, "ssrf.public"},
		{"127.0.0.1", 9100, false, "ssrf.self"},
		{"::1", 9100, false, "ssrf.self"},
		{"93.184.216.34", 7200, false, "ssrf.self"}, // a public listener passed explicitly
		{"93.184.216.35", 7200, true, "ssrf.public"},
		{"127.0.0.9", 7300, false, "ssrf.self"}, // a mapped listener is unmapped
	} {
		checkVerdict(t, "DecideAddr("+tc.addr+")", e.DecideAddr(h, netip.MustParseAddr(tc.addr), tc.port), tc.allowed, tc.rule)
	}
	// Through DecideHost, for literals.
	checkVerdict(t, "DecideHost([::1]:9000)", e.DecideHost(lit("::1"), 9000), false, "ssrf.self")
}

func TestExplain(t *testing.T) {
	e := mustEgress(t, policy.Network{Allow: domains("*.example.com"), Deny: domains("bad.example.com"), BlockAll: true})
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tc := range []struct {
		what    string
		e       *Egress
		h       Host
		addrs   []netip.Addr
		allowed bool
		rule    string
		per     []string // rules per address
	}{
		{"all public", e, name("a.example.com"), addrs("93.184.216.34", "2606:4700::1"), true, "network.allow[0]", []string{"ssrf.public", "ssrf.public"}},
		{"mixed", e, name("a.example.com"), addrs("127.0.0.1", "93.184.216.34"), true, "network.allow[0]", []string{"ssrf.loopback", "ssrf.public"}},
		{"all refused", e, name("a.example.com"), addrs("10.0.0.1", "169.254.169.254"), false, "ssrf.private", []string{"ssrf.private", "ssrf.metadata"}},
		{"no addresses", e, name("a.example.com"), nil, false, "resolve.none", nil},
		// Go's resolver (check url's lookup) answers A records as
		// ::ffff:a.b.c.d; the proxy unmaps them and dials the IPv4 address.
		{"resolver's mapped answers", e, name("a.example.com"), addrs("::ffff:93.184.216.34", "::ffff:127.0.0.1"), true, "network.allow[0]", []string{"ssrf.public", "ssrf.loopback"}},
		{"mapped literal stays mapped", mustEgress(t, policy.Network{}), lit("::ffff:93.184.216.34"), nil, false, "ssrf.ipv4-mapped", []string{"ssrf.ipv4-mapped"}},
		{"denied name", e, name("bad.example.com"), addrs("93.184.216.34"), false, "network.deny[0]", []string{"ssrf.public"}},
		{"literal ignores addrs", mustEgress(t, policy.Network{}), lit("127.0.0.1"), addrs("93.184.216.34"), false, "ssrf.loopback", []string{"ssrf.loopback"}},
		{"public literal", mustEgress(t, policy.Network{}), lit("93.184.216.34"), nil, true, "ssrf.public", []string{"ssrf.public"}},
	} {
		v, per := tc.e.Explain(tc.h, 443, tc.addrs)
		checkVerdict(t, tc.what, v, tc.allowed, tc.rule)
		if len(per) != len(tc.per) {
			t.Errorf("%s: %d address verdicts, want %d", tc.what, len(per), len(tc.per))
			continue
		}
		for i, av := range per {
			if av.Rule != tc.per[i] || av.Class != Classify(av.Addr) {
				t.Errorf("%s: address verdict %d = %+v, want rule %q", tc.what, i, av, tc.per[i])
			}
		}
	}
}

// TestDecideHostAgreesWithMatches checks the winner against the policy's
// own Domain.Matches for every rule: the winner matches, and no matching
// rule is more specific.
func TestDecideHostAgreesWithMatches(t *testing.T) {
	allowList := domains("*.a.test", "b.a.test", "*.b.a.test", "*.test", "c.test")
	denyList := domains("*.b.a.test", "c.test", "*.c.test", "d.b.a.test")
	e := mustEgress(t, policy.Network{Allow: allowList, Deny: denyList, BlockAll: true})
	for _, host := range []string{"a.test", "b.a.test", "x.b.a.test", "d.b.a.test", "c.test", "x.c.test", "x.test", "test.example"} {
		v := e.DecideHost(name(host), 443)
		if v.Rule == "network.block_all" {
			for _, d := range append(append([]policy.Domain(nil), allowList...), denyList...) {
				if d.Matches(host) {
					t.Errorf("%s: no rule chosen but %q matches", host, d)
				}
			}
			continue
		}
		list := allowList
		if strings.HasPrefix(v.Rule, "network.deny") {
			list = denyList
		}
		winner := list[indexOf(t, v.Rule)]
		if !winner.Matches(host) {
			t.Errorf("%s: winner %q does not match", host, winner)
		}
		for _, d := range append(append([]policy.Domain(nil), allowList...), denyList...) {
			if d.Matches(host) && egSpecificity(d, host) > egSpecificity(winner, host) {
				t.Errorf("%s: %q is more specific than the winner %q", host, d, winner)
			}
		}
	}
}

var ruleIndex = regexp.MustCompile(`\[(\d+)\]$`)

func indexOf(t *testing.T, rule string) int {
	t.Helper()
	m := ruleIndex.FindStringSubmatch(rule)
	if m == nil {
		t.Fatalf("no index in %q", rule)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An address of the machine net runs on is the host itself, even when it
// is public: refused as loopback unless unsafe_allow_private holds it.
// The control: the same public address is allowed when it is not one of
// the machine's.
func TestDecideAddrHostAddress(t *testing.T) {
	e, err := NewEgress(policy.Network{Mode: policy.NetProxy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pub := netip.MustParseAddr("203.0.114.7") // just outside TEST-NET-3: public
	if v := e.DecideAddr(Host{Name: "a.example"}, pub, 443); !v.Allowed {
		t.Fatalf("control: %+v", v)
	}
	e.SetHostAddrs([]netip.Addr{pub, netip.MustParseAddr("2001:4860::1")})
	for _, a := range []netip.Addr{pub, netip.MustParseAddr("::ffff:203.0.114.7"), netip.MustParseAddr("2001:4860::1")} {
		if v := e.DecideAddr(Host{Name: "a.example"}, a, 443); v.Allowed {
			t.Errorf("%s, one of the host's, allowed: %+v", a, v)
		}
	}
	u, _ := NewEgress(policy.Network{Mode: policy.NetProxy, UnsafeAllowPrivate: []policy.CIDR{policy.CIDR(netip.MustParsePrefix("203.0.114.0/24"))}}, nil)
	u.SetHostAddrs([]netip.Addr{pub})
	if v := u.DecideAddr(Host{Name: "a.example"}, pub, 443); !v.Allowed {
		t.Errorf("unsafe_allow_private holding the host's address: %+v", v)
	}
}

// TestDecideConn: a connection whose source is its destination is to
// the machine itself, and is decided as its known addresses are.
func TestDecideConn(t *testing.T) {
	e := mustEgress(t, policy.Network{})
	loopOK := mustEgress(t, policy.Network{UnsafeAllowPrivate: []policy.CIDR{policy.CIDR(netip.MustParsePrefix("127.0.0.0/8"))}})
	ap := netip.MustParseAddrPort
	h := Host{Name: "a.example"}
	for _, tc := range []struct {
		what          string
		e             *Egress
		local, remote netip.AddrPort
		allowed       bool
		rule          string
	}{
		{"outside", e, ap("192.0.2.9:40000"), ap("93.184.216.34:443"), true, "ssrf.public"},
		{"own public address", e, ap("93.184.216.34:40000"), ap("93.184.216.34:443"), false, "ssrf.loopback"},
		{"own, one end mapped", e, ap("[::ffff:93.184.216.34]:40000"), ap("93.184.216.34:443"), false, "ssrf.loopback"},
		{"own IPv6", e, ap("[2001:4860::1]:40000"), ap("[2001:4860::1]:443"), false, "ssrf.loopback"},
		{"loopback without a range", e, ap("127.0.0.1:40000"), ap("127.0.0.1:443"), false, "ssrf.loopback"},
		{"loopback in a range", loopOK, ap("127.0.0.1:40000"), ap("127.0.0.1:443"), true, "network.unsafe_allow_private[0]"},
		{"not TCP", e, netip.AddrPort{}, ap("93.184.216.34:443"), false, "ssrf.invalid"},
	} {
		checkVerdict(t, tc.what, tc.e.DecideConn(h, tc.local, tc.remote), tc.allowed, tc.rule)
	}
}
