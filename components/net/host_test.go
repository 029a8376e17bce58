package proxy

import (
	"golang.org/x/net/idna"
	"net/netip"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

func TestNormalizeHostAccepts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"EXAMPLE.Com", "example.com"},
		{"example.com.", "example.com"},
		{"Sub.Example.COM.", "sub.example.com"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"XN--BCHER-KVA.example", "xn--bcher-kva.example"},
		// IDNA: decided as the name DNS resolves.
		{"bücher.example", "xn--bcher-kva.example"},
		{"BÜCHER.example", "xn--bcher-kva.example"},
		{"\u212Aelvin.example", "kelvin.example"}, // KELVIN SIGN maps to 'k'
		{"example.com\u3002", "example.com"},      // ideographic full stop, as a trailing dot
		{"ｅxample.com", "example.com"},            // fullwidth e
		{"ｇｉｔｈｕｂ.com", "github.com"},
		{"localhost", "localhost"}, // a name; its addresses are what the SSRF check sees
		{"a-b.c-d.e", "a-b.c-d.e"},
		{"1.2.3.4a", "1.2.3.4a"}, // last label is not a number
		{"0xg.example", "0xg.example"},
		{"0x00sec.org", "0x00sec.org"}, // "0x" then non-hex: a name
		{"a123.b", "a123.b"},
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com"},
		{strings.Repeat("a.", 125) + "abc", strings.Repeat("a.", 125) + "abc"},  // 253 characters
		{strings.Repeat("a.", 125) + "abc.", strings.Repeat("a.", 125) + "abc"}, // and its dot
	} {
		h, err := NormalizeHost(tc.in)
		if err != nil || h.IsIP() || h.Name != tc.want {
			t.Errorf("NormalizeHost(%q) = %+v, %v; want name %q", tc.in, h, err, tc.want)
		}
	}
}

func TestNormalizeHostAcceptsIPLiterals(t *testing.T) {
	for _, tc := range []string{
		"127.0.0.1", "0.0.0.0", "1.2.3.4", "255.255.255.255", "10.0.0.1", "169.254.169.254",
		"[::1]", "[::]", "[2001:db8::1]", "[fe80::1]", "[fd00:ec2::254]",
		"[::ffff:127.0.0.1]", // netip's canonical spelling; the classifier refuses it
		"[64:ff9b::7f00:1]",
	} {
		h, err := NormalizeHost(tc)
		if err != nil || !h.IsIP() || h.Name != "" {
			t.Errorf("NormalizeHost(%q) = %+v, %v; want an IP literal", tc, h, err)
			continue
		}
		want := strings.Trim(tc, "[]")
		if h.Addr.String() != want || (h.Addr.Is4() == strings.HasPrefix(tc, "[")) {
			t.Errorf("NormalizeHost(%q) = %v (Is4 %v)", tc, h.Addr, h.Addr.Is4())
		}
	}
}

func TestNormalizeHostRefuses(t *testing.T) {
	for _, tc := range []struct{ in, why string }{
		{"", "empty"},
		{".", "empty"},
		{"example.com..", "empty"},
		{"..example.com", "empty"},
		{"exa mple.com", "character"},
		{" example.com", "character"},
		{"example.com ", "character"},
		{"example.com\x00", "character"},
		{"example.com\n", "character"},
		{"ex_ample.com", "character"},
		{"-example.com", "hyphen"},
		{"example-.com", "hyphen"},
		{strings.Repeat("a", 64) + ".com", "label"},
		{strings.Repeat("a.", 125) + "abcd", "253"}, // 254 characters
		{strings.Repeat("a.", 127) + "com", "253"},
		{strings.Repeat("a", 300), "253"},
		{"*.example.com", "pattern"},
		{"user@example.com", "character"},
		{"example.com/path", "character"},
		{"exam\\ple.com", "character"},
		{"example.com:443", "colon"},
		// Not valid UTF-8, or not a valid internationalised name.
		{"\xff.example", "UTF-8"},
		{"xn--zz.example", "internationalised"},    // not punycode
		{"xn--a-ecp.ru", "internationalised"},      // not the canonical encoding of its label
		{"a\u200db.example", "internationalised"},  // ZERO WIDTH JOINER outside its context
		{"\u202eexample.com", "internationalised"}, // RIGHT-TO-LEFT OVERRIDE
		// Non-canonical IPv4 spellings.
		{"127.1", "IPv4"},
		{"127.0.1", "IPv4"},
		{"0x7f.0.0.1", "hexadecimal"},
		{"0x7F.0.0.1", "hexadecimal"},
		{"0x7f000001", "hexadecimal"},
		{"0x7f.0x1", "hexadecimal"},
		{"0x", "hexadecimal"},
		{"0xdeadbeef.example", "hexadecimal"},
		{"a.0xff.example", "hexadecimal"},
		{"017700000001", "IPv4"},
		{"2130706433", "IPv4"},
		{"0", "IPv4"},
		{"127.000.000.001", "IPv4"},
		{"127.0.0.01", "IPv4"},
		{"0127.0.0.1", "IPv4"},
		{"1.2.3.4.", "IPv4"},
		{"1.2.3.4.5", "IPv4"},
		{"1.2.3", "IPv4"},
		{"256.0.0.1", "IPv4"},
		{"1..2.3", "IPv4"},
		{" 1.2.3.4", "character"},
		{"1.2.3.4 ", "character"},
		{"a.123", "IP address"},
		// IPv6.
		{"::1", "bracket"},
		{"[0:0:0:0:0:0:0:1]", "canonical"},
		{"[::0001]", "canonical"},
		{"[::ABCD]", "canonical"},
		{"[2001:DB8::1]", "canonical"},
		{"[2001:db8:0::1]", "canonical"},
		{"[::ffff:7f00:1]", "canonical"},
		{"[fe80::1%eth0]", "zone"},
		{"[fe80::1%25eth0]", "zone"},
		{"[127.0.0.1]", "IPv6"},
		{"[::1", "bracket"},
		{"[::1]]", "bracket"},
		{"[[::1]]", "bracket"},
		{"[]", "IPv6"},
		{"[::1]:80", "bracket"},
		{"[example.com]", "IPv6"},
	} {
		h, err := NormalizeHost(tc.in)
		if err == nil {
			t.Errorf("NormalizeHost(%q) = %+v, want an error about %s", tc.in, h, tc.why)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("NormalizeHost(%q): %v; want it to mention %q", tc.in, err, tc.why)
		}
	}
}

func TestSplitHostPort(t *testing.T) {
	name := func(n string) Host { return Host{Name: n} }
	ip := func(s string) Host { return Host{Addr: netip.MustParseAddr(s)} }
	for _, tc := range []struct {
		in   string
		def  uint16
		host Host
		port uint16
	}{
		{"example.com:443", 0, name("example.com"), 443},
		{"Example.COM.:80", 443, name("example.com"), 80},
		{"example.com", 443, name("example.com"), 443},
		{"example.com:1", 0, name("example.com"), 1},
		{"example.com:65535", 0, name("example.com"), 65535},
		{"1.2.3.4:8080", 0, ip("1.2.3.4"), 8080},
		{"1.2.3.4", 80, ip("1.2.3.4"), 80},
		{"[::1]:443", 0, ip("::1"), 443},
		{"[2001:db8::1]", 443, ip("2001:db8::1"), 443},
	} {
		h, p, err := SplitHostPort(tc.in, tc.def)
		if err != nil || h != tc.host || p != tc.port {
			t.Errorf("SplitHostPort(%q, %d) = %+v, %d, %v; want %+v, %d", tc.in, tc.def, h, p, err, tc.host, tc.port)
		}
	}
}

func TestSplitHostPortRefuses(t *testing.T) {
	for _, tc := range []struct {
		in  string
		def uint16
		why string
	}{
		{"", 443, "empty"},
		{"example.com", 0, "no port"},
		{"[::1]", 0, "no port"},
		{"example.com:", 443, "empty"},
		{"[::1]:", 443, "empty"},
		{":443", 0, "empty"},
		{"example.com:0", 0, "1 to 65535"},
		{"example.com:00", 0, "1 to 65535"},
		{"example.com:0443", 0, "1 to 65535"},
		{"example.com:+443", 0, "1 to 65535"},
		{"example.com:-1", 0, "1 to 65535"},
		{"example.com:65536", 0, "1 to 65535"},
		{"example.com:99999", 0, "1 to 65535"},
		{"example.com:100000", 0, "1 to 65535"},
		{"example.com:4 43", 0, "1 to 65535"},
		{"example.com:443 ", 0, "1 to 65535"},
		{"example.com:0x1bb", 0, "1 to 65535"},
		{"example.com:४४३", 0, "1 to 65535"}, // Devanagari digits
		{"example.com:443:443", 0, "colon"},
		{"::1:443", 0, "colon"},
		{"::1", 443, "colon"},
		{"[::1]443", 0, "not :port"},
		{"[::1]x:443", 0, "not :port"},
		{"[::1", 443, "brackets"},
		{"::1]", 443, "colon"},
		{"user@example.com:443", 0, "userinfo"},
		{"user:pw@example.com", 443, "userinfo"},
		{"example.com@evil.example:443", 0, "userinfo"},
		{"127.1:80", 0, "IPv4"},
		{"[0:0:0:0:0:0:0:1]:80", 0, "canonical"},
		{"[fe80::1%eth0]:80", 0, "zone"},
		{"[fe80::1%25eth0]:80", 0, "zone"},
		{"example.com/:443", 0, "character"},
		{strings.Repeat("a", 400) + ":443", 0, "too long"},
	} {
		h, p, err := SplitHostPort(tc.in, tc.def)
		if err == nil {
			t.Errorf("SplitHostPort(%q, %d) = %+v, %d; want an error about %s", tc.in, tc.def, h, p, tc.why)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("SplitHostPort(%q, %d): %v; want it to mention %q", tc.in, tc.def, err, tc.why)
		}
	}
}

func TestJoinHostPort(t *testing.T) {
	for _, tc := range []struct {
		h    Host
		port uint16
		want string
	}{
		{Host{Name: "example.com"}, 443, "example.com:443"},
		{Host{Addr: netip.MustParseAddr("1.2.3.4")}, 80, "1.2.3.4:80"},
		{Host{Addr: netip.MustParseAddr("::1")}, 8080, "[::1]:8080"},
		{Host{Addr: netip.MustParseAddr("::ffff:1.2.3.4")}, 1, "[::ffff:1.2.3.4]:1"},
	} {
		if got := JoinHostPort(tc.h, tc.port); got != tc.want {
			t.Errorf("JoinHostPort(%+v, %d) = %q, want %q", tc.h, tc.port, got, tc.want)
		}
	}
}

func FuzzSplitHostPort(f *testing.F) {
	for _, s := range []string{
		"example.com:443", "EXAMPLE.com.:80", "example.com", "xn--bcher-kva.example:443",
		"1.2.3.4:80", "127.1:80", "0x7f.0x1:80", "2130706433", "127.000.000.001:1",
		"[::1]:443", "[::ffff:127.0.0.1]:80", "[0:0:0:0:0:0:0:1]:80", "[fe80::1%eth0]:80",
		"[::1]", "::1", "example.com:0443", "example.com:65536", "user@example.com:443",
		"bücher.example:443", "\u212Aelvin.example", "a..b:1", "[", "]", ":", "[]:1",
	} {
		f.Add(s, uint16(443))
		f.Add(s, uint16(0))
	}
	f.Fuzz(func(t *testing.T, authority string, def uint16) {
		h, port, err := SplitHostPort(authority, def)
		if err != nil {
			if h != (Host{}) || port != 0 {
				t.Fatalf("SplitHostPort(%q) failed (%v) but returned %+v, %d", authority, err, h, port)
			}
			return
		}
		if port == 0 {
			t.Fatalf("SplitHostPort(%q, %d) accepted port 0", authority, def)
		}
		if h.IsIP() == (h.Name != "") {
			t.Fatalf("SplitHostPort(%q) = %+v: not exactly one of Name and Addr", authority, h)
		}
		// The host part as written (the authority minus any ":port").
		written := authority
		if i := strings.LastIndexByte(authority, ':'); i > 0 && (h.Name != "" || h.Addr.Is4() || authority[i-1] == ']') {
			written = authority[:i]
		}
		if h.IsIP() {
			a := h.Addr
			if a.Zone() != "" {
				t.Fatalf("SplitHostPort(%q) accepted a zone: %v", authority, a)
			}
			canonical := a.String()
			if a.Is6() {
				canonical = "[" + canonical + "]"
			}
			if written != canonical {
				t.Fatalf("SplitHostPort(%q) accepted the non-canonical literal %q (canonical %q)", authority, written, canonical)
			}
		} else {
			if err := policy.CheckHost(h.Name); err != nil {
				t.Fatalf("SplitHostPort(%q) accepted the name %q, which CheckHost refuses: %v", authority, h.Name, err)
			}
			// Beyond case and one dot, only IDNA may change a name.
			if want, err := idna.Lookup.ToASCII(written); !strings.EqualFold(strings.TrimSuffix(written, "."), h.Name) &&
				(err != nil || strings.TrimSuffix(strings.ToLower(want), ".") != h.Name) {
				t.Fatalf("SplitHostPort(%q) changed the name beyond case, one dot and IDNA: %q", authority, h.Name)
			}
			for _, l := range strings.Split(h.Name, ".") {
				if isHexNumber(l) {
					t.Fatalf("SplitHostPort(%q) accepted a numeric label in %q", authority, h.Name)
				}
			}
		}
		joined := JoinHostPort(h, port)
		h2, port2, err := SplitHostPort(joined, 0)
		if err != nil || h2 != h || port2 != port {
			t.Fatalf("round trip of %q via %q: %+v, %d, %v; want %+v, %d", authority, joined, h2, port2, err, h, port)
		}
		// A normal form is a fixed point.
		if joined2 := JoinHostPort(h2, port2); joined2 != joined {
			t.Fatalf("JoinHostPort is not stable: %q then %q", joined, joined2)
		}
	})
}
