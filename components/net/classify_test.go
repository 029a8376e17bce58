package proxy

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

// classRows has, for every range, its first and last address and the
// neighbours just outside, plus the metadata addresses and their
// neighbours.
var classRows = []struct {
	addr string
	want Class
}{
	// 0.0.0.0/8 "this network"
	{"0.0.0.0", ClassUnspecified},
	{"0.0.0.1", ClassUnspecified},
	{"0.255.255.255", ClassUnspecified},
	{"1.0.0.0", ClassPublic},
	{"1.1.1.1", ClassPublic},
	{"8.8.8.8", ClassPublic},
	// 10.0.0.0/8
	{"9.255.255.255", ClassPublic},
	{"10.0.0.0", ClassPrivate},
	{"10.255.255.255", ClassPrivate},
	{"11.0.0.0", ClassPublic},
	// 100.64.0.0/10, with Alibaba's metadata inside
	{"100.63.255.255", ClassPublic},
	{"100.64.0.0", ClassCGNAT},
	{"100.100.100.199", ClassCGNAT},
	{"100.100.100.200", ClassMetadata},
	{"100.100.100.201", ClassCGNAT},
	{"100.127.255.255", ClassCGNAT},
	{"100.128.0.0", ClassPublic},
	// 127.0.0.0/8
	{"126.255.255.255", ClassPublic},
	{"127.0.0.0", ClassLoopback},
	{"127.0.0.1", ClassLoopback},
	{"127.255.255.255", ClassLoopback},
	{"128.0.0.0", ClassPublic},
	// Azure WireServer, a public address
	{"168.63.129.15", ClassPublic},
	{"168.63.129.16", ClassMetadata},
	{"168.63.129.17", ClassPublic},
	// 169.254.0.0/16, with metadata inside
	{"169.253.255.255", ClassPublic},
	{"169.254.0.0", ClassLinkLocal},
	{"169.254.0.22", ClassLinkLocal},
	{"169.254.0.23", ClassMetadata},
	{"169.254.0.24", ClassLinkLocal},
	{"169.254.42.42", ClassMetadata},
	{"169.254.169.253", ClassLinkLocal},
	{"169.254.169.254", ClassMetadata},
	{"169.254.169.255", ClassLinkLocal},
	{"169.254.170.1", ClassLinkLocal},
	{"169.254.170.2", ClassMetadata},
	{"169.254.170.3", ClassLinkLocal},
	{"169.254.170.23", ClassMetadata},
	{"169.254.255.255", ClassLinkLocal},
	{"169.255.0.0", ClassPublic},
	// 172.16.0.0/12
	{"172.15.255.255", ClassPublic},
	{"172.16.0.0", ClassPrivate},
	{"172.31.255.255", ClassPrivate},
	{"172.32.0.0", ClassPublic},
	// 192.0.0.0/24, with Oracle Cloud Classic's metadata inside
	{"191.255.255.255", ClassPublic},
	{"192.0.0.0", ClassReserved},
	{"192.0.0.191", ClassReserved},
	{"192.0.0.192", ClassMetadata},
	{"192.0.0.193", ClassReserved},
	{"192.0.0.255", ClassReserved},
	{"192.0.1.0", ClassPublic},
	// 192.0.2.0/24 TEST-NET-1
	{"192.0.1.255", ClassPublic},
	{"192.0.2.0", ClassDocumentation},
	{"192.0.2.255", ClassDocumentation},
	{"192.0.3.0", ClassPublic},
	// 192.88.99.0/24 6to4 relay anycast
	{"192.88.98.255", ClassPublic},
	{"192.88.99.0", Class6to4},
	{"192.88.99.255", Class6to4},
	{"192.88.100.0", ClassPublic},
	// 192.168.0.0/16
	{"192.167.255.255", ClassPublic},
	{"192.168.0.0", ClassPrivate},
	{"192.168.255.255", ClassPrivate},
	{"192.169.0.0", ClassPublic},
	// 198.18.0.0/15
	{"198.17.255.255", ClassPublic},
	{"198.18.0.0", ClassBenchmarking},
	{"198.19.255.255", ClassBenchmarking},
	{"198.20.0.0", ClassPublic},
	// 198.51.100.0/24 TEST-NET-2
	{"198.51.99.255", ClassPublic},
	{"198.51.100.0", ClassDocumentation},
	{"198.51.100.255", ClassDocumentation},
	{"198.51.101.0", ClassPublic},
	// 203.0.113.0/24 TEST-NET-3
	{"203.0.112.255", ClassPublic},
	{"203.0.113.0", ClassDocumentation},
	{"203.0.113.255", ClassDocumentation},
	{"203.0.114.0", ClassPublic},
	// 224.0.0.0/4, 240.0.0.0/4, 255.255.255.255
	{"223.255.255.255", ClassPublic},
	{"224.0.0.0", ClassMulticast},
	{"239.255.255.255", ClassMulticast},
	{"240.0.0.0", ClassReserved},
	{"255.255.255.254", ClassReserved},
	{"255.255.255.255", ClassBroadcast},

	// ::, ::1, ::/96 IPv4-compatible
	{"::", ClassUnspecified},
	{"::1", ClassLoopback},
	{"::2", "ipv4-compatible/unspecified"},
	{"::0.255.255.255", "ipv4-compatible/unspecified"},
	{"::1.0.0.0", ClassIPv4Compatible},
	{"::8.8.8.8", ClassIPv4Compatible},
	{"::127.0.0.1", "ipv4-compatible/loopback"},
	{"::169.254.169.254", "ipv4-compatible/metadata"},
	{"::255.255.255.255", "ipv4-compatible/broadcast"},
	{"::1:0:0", ClassReserved},
	// ::ffff:0:0/96 IPv4-mapped
	{"::fffe:ffff:ffff", ClassReserved},
	{"::ffff:0.0.0.0", "ipv4-mapped/unspecified"},
	{"::ffff:1.0.0.0", ClassIPv4Mapped},
	{"::ffff:8.8.8.8", ClassIPv4Mapped},
	{"::ffff:10.0.0.1", "ipv4-mapped/private"},
	{"::ffff:127.0.0.1", "ipv4-mapped/loopback"},
	{"::ffff:169.254.169.254", "ipv4-mapped/metadata"},
	{"::ffff:100.100.100.200", "ipv4-mapped/metadata"},
	{"::ffff:255.255.255.255", "ipv4-mapped/broadcast"},
	{"::1:0:0:0", ClassReserved},
	// 64:ff9b::/96 NAT64 well-known prefix, 64:ff9b:1::/48 local-use
	{"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"64:ff9b::", "nat64/unspecified"},
	{"64:ff9b::808:808", ClassNAT64},
	{"64:ff9b::7f00:1", "nat64/loopback"},
	{"64:ff9b::a00:1", "nat64/private"},
	{"64:ff9b::a9fe:a9fe", "nat64/metadata"},
	{"64:ff9b::ffff:ffff", "nat64/broadcast"},
	{"64:ff9b::1:0:0", ClassReserved},
	{"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"64:ff9b:1::", ClassNAT64},
	{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", ClassNAT64},
	{"64:ff9b:2::", ClassReserved},
	// 100::/64 discard-only
	{"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"100::", ClassReserved},
	{"100::ffff:ffff:ffff:ffff", ClassReserved},
	{"100:0:0:1::", ClassReserved},
	// 2000::/3 starts
	{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"2000::", ClassPublic},
	// 2001::/23 IETF protocol assignments: Teredo, benchmarking, the rest
	{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassPublic},
	{"2001::", ClassTeredo},
	{"2001::1", ClassTeredo},
	{"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", ClassTeredo},
	{"2001:1::", ClassReserved},
	{"2001:1::1", ClassReserved},
	{"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"2001:2::", ClassBenchmarking},
	{"2001:2:0:ffff:ffff:ffff:ffff:ffff", ClassBenchmarking},
	{"2001:2:1::", ClassReserved},
	{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"2001:200::", ClassPublic},
	// 2001:db8::/32
	{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ClassPublic},
	{"2001:db8::", ClassDocumentation},
	{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", ClassDocumentation},
	{"2001:db9::", ClassPublic},
	{"2001:4860:4860::8888", ClassPublic},
	// 2002::/16 6to4
	{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassPublic},
	{"2002::", "6to4/unspecified"},
	{"2002:808:808::", Class6to4},
	{"2002:7f00:1::", "6to4/loopback"},
	{"2002:a9fe:a9fe::1", "6to4/metadata"},
	{"2002:c0a8:101::", "6to4/private"},
	{"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4/broadcast"},
	{"2003::", ClassPublic},
	// 3fff::/20 and the end of 2000::/3
	{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassPublic},
	{"3fff::", ClassDocumentation},
	{"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", ClassDocumentation},
	{"3fff:1000::", ClassPublic},
	{"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassPublic},
	{"4000::", ClassReserved},
	{"5f00::1", ClassReserved},
	// fc00::/7, with metadata inside
	{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"fc00::", ClassULA},
	{"fd00:ec2::253", ClassULA},
	{"fd00:ec2::254", ClassMetadata},
	{"fd00:ec2::255", ClassULA},
	{"fd00:ec2::23", ClassMetadata},
	{"fd20:ce::254", ClassMetadata},
	{"fd20:ce::253", ClassULA},
	{"fd00:42::42", ClassMetadata},
	{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassULA},
	{"fe00::", ClassReserved},
	// fe80::/10, fec0::/10, ff00::/8
	{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassReserved},
	{"fe80::", ClassLinkLocal},
	{"fe80::1%eth0", ClassLinkLocal},
	{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassLinkLocal},
	{"fec0::", ClassSiteLocal},
	{"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassSiteLocal},
	{"ff00::", ClassMulticast},
	{"ff02::1", ClassMulticast},
	{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ClassMulticast},
}

func TestClassify(t *testing.T) {
	for _, tc := range classRows {
		a := netip.MustParseAddr(tc.addr)
		if got := Classify(a); got != tc.want {
			t.Errorf("Classify(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := Classify(netip.Addr{}); got != ClassInvalid {
		t.Errorf("Classify(zero) = %q, want %q", got, ClassInvalid)
	}
}

// TestClassifyTableEdges checks every listed range at its first and last
// address, so that a row missing above does not leave a boundary untested.
func TestClassifyTableEdges(t *testing.T) {
	for _, rs := range [][]rangeClass{ranges4, ranges6} {
		for _, r := range rs {
			for _, a := range []netip.Addr{r.p.Addr(), lastOf(r.p)} {
				got := Classify(a)
				if got != r.c && got != ClassMetadata && !shadowed(a, r) {
					t.Errorf("%s (edge of %s) = %q, want %q", a, r.p, got, r.c)
				}
			}
		}
	}
}

// shadowed reports whether an earlier entry of r's table holds a.
func shadowed(a netip.Addr, r rangeClass) bool {
	for _, rs := range [][]rangeClass{ranges4, ranges6} {
		for _, e := range rs {
			if e == r {
				break
			}
			if e.p.Contains(a) {
				return true
			}
		}
	}
	return false
}

func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestClassifyMetadata(t *testing.T) {
	for a := range metadataAddrs {
		if got := Classify(a); got != ClassMetadata {
			t.Errorf("Classify(%s) = %q, want metadata", a, got)
		}
		if !a.Is4() {
			continue
		}
		b := a.As4()
		for _, form := range []netip.Addr{
			netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			netip.AddrFrom16([16]byte{0: 0, 1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3]}),
		} {
			if got := Classify(form); !strings.HasSuffix(string(got), "/metadata") {
				t.Errorf("Classify(%s) = %q, want a form of metadata", form, got)
			}
		}
	}
}

// TestClassifyAgreesWithNetip samples addresses and checks that nothing
// netip knows to be special is called public.
func TestClassifyAgreesWithNetip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	special := func(a netip.Addr) bool {
		return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
			a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsUnspecified() || !a.IsGlobalUnicast()
	}
	for i := 0; i < 200000; i++ {
		var a netip.Addr
		switch i % 3 {
		case 0:
			a = netip.AddrFrom4([4]byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())})
		case 1:
			var b [16]byte
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			a = netip.AddrFrom16(b)
		default: // IPv6 with a random interesting top
			var b [16]byte
			tops := [][2]byte{{0x20, 0x01}, {0x20, 0x02}, {0x00, 0x64}, {0xfc, 0x00}, {0xfd, 0x00}, {0xfe, 0x80}, {0xfe, 0xc0}, {0xff, 0x02}, {0, 0}}
			top := tops[r.IntN(len(tops))]
			b[0], b[1] = top[0], top[1]
			for j := 2 + r.IntN(14); j < 16; j++ {
				b[j] = byte(r.Uint32())
			}
			a = netip.AddrFrom16(b)
		}
		c := Classify(a)
		if c == ClassPublic && (special(a) || a.Is4In6()) {
			t.Fatalf("Classify(%s) = public, but netip calls it special", a)
		}
		if c == "" || strings.Count(string(c), "/") > 1 {
			t.Fatalf("Classify(%s) = %q", a, c)
		}
	}
}

// FuzzClassify: for any 4 or 16 bytes, Classify answers a class it
// documents, never public for an address that carries an IPv4 address or
// lies outside 2000::/3 (IPv6), ignores the zone, and answers the same for
// the address spelt out and parsed back.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "127.0.0.1", "169.254.169.254", "::ffff:8.8.8.8", "64:ff9b::a00:1",
		"2002:c0a8:101::1", "2001::1", "fd00::1", "2606:4700::1", "::", "::1", "::8.8.8.8", "fe80::1", "ff02::1"} {
		a := netip.MustParseAddr(s)
		f.Add(a.AsSlice())
	}
	known := map[Class]bool{}
	for _, c := range []Class{ClassPublic, ClassMetadata, ClassLoopback, ClassPrivate, ClassLinkLocal, ClassCGNAT, ClassUnspecified,
		ClassMulticast, ClassBroadcast, ClassDocumentation, ClassBenchmarking, ClassReserved, ClassULA, ClassSiteLocal,
		ClassIPv4Mapped, ClassIPv4Compatible, ClassNAT64, Class6to4, ClassTeredo} {
		known[c] = true
	}
	global := netip.MustParsePrefix("2000::/3")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		c := Classify(a)
		if !known[c.base()] || (c.embedded() != "" && !known[c.embedded()]) {
			t.Fatalf("%s: class %q is not one Classify documents", a, c)
		}
		if a.Is6() && c == ClassPublic {
			if _, _, carries := embeddedIPv4(a); carries || !global.Contains(a) {
				t.Fatalf("%s: public, but it carries an IPv4 address or lies outside 2000::/3", a)
			}
		}
		if a.Is6() {
			if z := Classify(a.WithZone("eth0")); z != c {
				t.Fatalf("%s: %q, with a zone %q", a, c, z)
			}
		}
		if p, err := netip.ParseAddr(a.String()); err != nil || Classify(p) != c {
			t.Fatalf("%s: %q, spelt out and parsed back %v %q", a, c, err, Classify(p))
		}
	})
}
