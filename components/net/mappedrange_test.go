package proxy

import (
	"net/netip"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// IPv4-mapped and IPv4-compatible addresses are refused whatever the
// ranges say (egress.go), even under a range that holds them (::/0) and
// with the IPv4 address they carry allowed too: the IPv4 range is the one
// to allow, and the proxy unmaps what it resolves. Without the outright
// refusal the embedded-address rule alone would let them through here.
// The controls: the same Egress allows the plain IPv4 address, and a
// non-mapped IPv6 ULA under ::/0.
func TestMappedRefusedUnderAnyRange(t *testing.T) {
	e := mustEgress(t, policy.Network{UnsafeAllowPrivate: cidrs("::/0", "10.0.0.0/8")})
	h := name("svc.example")
	for _, tc := range []struct {
		addr    string
		allowed bool
		rule    string
	}{
		{"10.1.2.3", true, "network.unsafe_allow_private[1]"},
		{"fd12::1", true, "network.unsafe_allow_private[0]"},
		{"::ffff:10.1.2.3", false, "ssrf.ipv4-mapped/private"},
		{"::ffff:93.184.216.34", false, "ssrf.ipv4-mapped"},
		{"::10.1.2.3", false, "ssrf.ipv4-compatible/private"},
	} {
		v := e.DecideAddr(h, netip.MustParseAddr(tc.addr), 443)
		if v.Allowed != tc.allowed || v.Rule != tc.rule {
			t.Errorf("%s: %+v; want allowed=%v under %q", tc.addr, v, tc.allowed, tc.rule)
		}
	}
}
