package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/pinfold/pinfold/policy"
)

// maxHostInput bounds what NormalizeHost looks at: a name is at most 253
// characters and a bracketed IPv6 literal at most 41 (47 with a mapped
// IPv4 tail), so anything longer is refused before any parsing, and error
// messages quote only its start.
const maxHostInput = 255

// NormalizeHost turns the host a client wrote (a CONNECT target, a Host
// header or an absolute URL's authority, without the port) into a Host,
// or refuses it.
//
// IP literals are accepted only in their one canonical spelling: IPv4 as a
// dotted quad of four decimal parts without leading zeros ("127.0.0.1", not
// "127.1", "0x7f.0.0.1", "2130706433" or "127.000.000.001"), IPv6 in
// brackets as net/netip prints it ("[::1]", not "[0:0:0:0:0:0:0:1]" or
// "[::ABCD]"), without a zone. A name that a numeric-address parser could
// read as an IPv4 address is refused too: one that consists of digits and
// dots, or that has a label of the form 0x<hex digits> (inet_aton reads
// "0x7f.0x1" as 127.0.0.1).
//
// Names are normalised once, as DNS will see them: IDNA (UTS #46, the
// lookup profile of golang.org/x/net/idna) maps and case-folds a Unicode
// name and writes it as xn-- labels, and checks an xn-- label it is
// given; one trailing dot goes; the result must pass policy.CheckHost.
// So a name spelled in full-width or mixed-case letters is decided as
// the name DNS resolves, and a label that does not round-trip is refused.
func NormalizeHost(h string) (Host, error) {
	if h == "" {
		return Host{}, errors.New("host is empty")
	}
	if len(h) > maxHostInput {
		return Host{}, fmt.Errorf("host %q… is longer than 253 characters", h[:32])
	}
	if h[0] == '[' {
		return normalizeIPv6(h)
	}
	if !utf8.ValidString(h) {
		return Host{}, fmt.Errorf("host %q is not valid UTF-8", h)
	}
	if !isASCII(h) || strings.Contains(strings.ToLower(h), "xn--") {
		a, err := idna.Lookup.ToASCII(h)
		if err == nil {
			// What is accepted must read back the same: a Unicode name
			// whose xn-- form the same rules refuse (a label mixing
			// directions after mapping, say) is refused too.
			_, err = idna.Lookup.ToASCII(a)
		}
		if err != nil {
			return Host{}, fmt.Errorf("host %q is not a valid internationalised name: %v", h, err)
		}
		if !isASCII(a) {
			return Host{}, fmt.Errorf("host %q does not map to an ASCII name", h)
		}
		h = a
	}
	if strings.Contains(h, ":") {
		return Host{}, fmt.Errorf("host %q holds a colon: IPv6 literals are written in brackets, such as [2001:db8::1]", h)
	}
	if strings.Trim(h, "0123456789.") == "" && strings.ContainsAny(h, "0123456789") {
		return normalizeIPv4(h)
	}
	name := strings.TrimSuffix(lowerASCII(h), ".")
	if name == "" || strings.HasSuffix(name, ".") {
		return Host{}, fmt.Errorf("host %q has an empty label (at most one trailing dot)", h)
	}
	for l := range strings.SplitSeq(name, ".") {
		if isHexNumber(l) {
			return Host{}, fmt.Errorf("host %q has the label %q, which address parsers read as a hexadecimal number: write IPv4 addresses as a dotted quad such as 127.0.0.1", h, l)
		}
	}
	if err := policy.CheckHost(name); err != nil {
		return Host{}, err
	}
	return Host{Name: name}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// normalizeIPv4 accepts a name of digits and dots only if it is the
// canonical dotted quad of an IPv4 address.
func normalizeIPv4(h string) (Host, error) {
	a, err := netip.ParseAddr(h)
	if err != nil || !a.Is4() || a.String() != h {
		return Host{}, fmt.Errorf("host %q is not an IPv4 address in canonical form: write four decimal parts without leading zeros, such as 127.0.0.1", h)
	}
	return Host{Addr: a}, nil
}

// normalizeIPv6 accepts "[addr]" only if addr is an IPv6 address without
// a zone, spelt as netip prints it.
func normalizeIPv6(h string) (Host, error) {
	inner, ok := strings.CutSuffix(h[1:], "]")
	if !ok || strings.ContainsAny(inner, "[]") {
		return Host{}, fmt.Errorf("host %q has unbalanced brackets", h)
	}
	if strings.Contains(inner, "%") {
		return Host{}, fmt.Errorf("host %q has a zone: IPv6 zones are refused", h)
	}
	a, err := netip.ParseAddr(inner)
	if err != nil || !a.Is6() {
		return Host{}, fmt.Errorf("host %q is not an IPv6 address in brackets", h)
	}
	if s := a.String(); s != inner {
		return Host{}, fmt.Errorf("host %q is not an IPv6 address in canonical form: write [%s]", h, s)
	}
	return Host{Addr: a}, nil
}

// isHexNumber reports whether l is "0x" followed by hexadecimal digits
// (none included), which inet_aton and WHATWG URL parsers read as a number.
func isHexNumber(l string) bool {
	digits, ok := strings.CutPrefix(l, "0x")
	return ok && strings.Trim(digits, "0123456789abcdef") == ""
}

// lowerASCII folds A-Z only: strings.ToLower would also fold non-ASCII
// letters (the Kelvin sign to "k"), which must never turn into a name.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// SplitHostPort parses an authority, "host:port", "[v6]:port", "host" or
// "[v6]", into a normalised Host (NormalizeHost) and a port. The port is
// decimal digits only, without sign or leading zero, from 1 to 65535; an
// authority without a port gets defaultPort, and is refused when that is 0.
// Userinfo ("user@host") is refused.
func SplitHostPort(authority string, defaultPort uint16) (Host, uint16, error) {
	if authority == "" {
		return Host{}, 0, errors.New("authority is empty")
	}
	if len(authority) > maxHostInput+6 {
		return Host{}, 0, fmt.Errorf("authority %q… is too long", authority[:32])
	}
	if strings.Contains(authority, "@") {
		return Host{}, 0, fmt.Errorf("authority %q holds userinfo (@): a proxy target is host and port only", authority)
	}
	host, port, hasPort := authority, "", false
	if authority[0] == '[' {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return Host{}, 0, fmt.Errorf("authority %q has unbalanced brackets", authority)
		}
		host = authority[:end+1]
		if rest := authority[end+1:]; rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return Host{}, 0, fmt.Errorf("authority %q has text after the bracketed address that is not :port", authority)
			}
			port, hasPort = p, true
		}
	} else if i := strings.IndexByte(authority, ':'); i >= 0 {
		if strings.Count(authority, ":") > 1 {
			return Host{}, 0, fmt.Errorf("authority %q has more than one colon: IPv6 literals are written in brackets, such as [2001:db8::1]:443", authority)
		}
		host, port, hasPort = authority[:i], authority[i+1:], true
	}
	p := defaultPort
	if hasPort {
		var err error
		if p, err = parseAuthorityPort(port); err != nil {
			return Host{}, 0, fmt.Errorf("authority %q: %w", authority, err)
		}
	} else if p == 0 {
		return Host{}, 0, fmt.Errorf("authority %q has no port", authority)
	}
	h, err := NormalizeHost(host)
	if err != nil {
		return Host{}, 0, err
	}
	return h, p, nil
}

// parseAuthorityPort accepts 1 to 65535 written as decimal digits without sign or
// leading zero.
func parseAuthorityPort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("port is empty")
	}
	if len(s) > 5 || s[0] == '0' || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535 (decimal digits, no sign, no leading zero)", s)
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return uint16(n), nil
}

// JoinHostPort formats h and port as an authority that SplitHostPort reads
// back to the same values: "name:port", "192.0.2.1:port" or "[v6]:port".
func JoinHostPort(h Host, port uint16) string {
	if h.IsIP() {
		return netip.AddrPortFrom(h.Addr, port).String()
	}
	return h.Name + ":" + strconv.FormatUint(uint64(port), 10)
}
