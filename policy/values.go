package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"
)

// Leaf value types. Each implements toml.Unmarshaler, so the same parser
// runs in the schema walk (which reports every problem with its line) and in
// the final typed decode. A leaf accepts exactly one TOML type.

// MaxInt is the largest integer a policy may hold: 2^53-1, the largest that
// JavaScript (the site, the hash playground, JSON consumers) keeps exact (SR-14).
const MaxInt = 1<<53 - 1

// Byte sizes.
const (
	B   Size = 1
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	TiB Size = 1 << 40
)

// Int is an integer within ±MaxInt.
type Int int64

// UnmarshalTOML implements toml.Unmarshaler.
func (i *Int) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return typeError("an integer", v)
	}
	if n > MaxInt || n < -MaxInt {
		return fmt.Errorf("integer %d is outside ±(2^53-1): JavaScript and JSON readers would not keep it exact (SR-14)", n)
	}
	*i = Int(n)
	return nil
}

// Port is a TCP port, 1 to 65535.
type Port uint16

// UnmarshalTOML implements toml.Unmarshaler.
func (p *Port) UnmarshalTOML(v any) error {
	var n Int
	if err := n.UnmarshalTOML(v); err != nil {
		return err
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("port %d is not between 1 and 65535", n)
	}
	*p = Port(n)
	return nil
}

// Text is a printable string (SR-16).
type Text string

// UnmarshalTOML implements toml.Unmarshaler.
func (t *Text) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	*t = Text(s)
	return err
}

// printableString accepts a TOML string whose every character is printable.
func printableString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", typeError("a string", v)
	}
	return s, checkPrintable(s)
}

// Path is an absolute, clean, printable path.
type Path string

// UnmarshalTOML implements toml.Unmarshaler.
func (p *Path) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(s) {
		return fmt.Errorf("path %q is not absolute: a relative path binds to whatever directory the launcher starts in", s)
	}
	if c := filepath.Clean(s); c != s {
		return fmt.Errorf("path %q is not clean (write it as %q): the text must read as it binds (SR-12)", s, c)
	}
	// File systems compare names byte by byte: "café" with a combining
	// accent (NFD) is another directory than with the precomposed é
	// (NFC), and the two display alike. Only NFC is taken, so what the
	// policy shows is one name.
	if !norm.NFC.IsNormalString(s) {
		return fmt.Errorf("path %+q is not in Unicode normal form C (%+q is): it displays like another name that is a different directory; rename it to the NFC spelling (SR-12)", s, norm.NFC.String(s))
	}
	*p = Path(s)
	return nil
}

// Contains reports whether q is p or lies beneath it.
func (p Path) Contains(q Path) bool {
	if p == q || p == "/" {
		return true
	}
	return strings.HasPrefix(string(q), string(p)+"/")
}

// Size is a byte count written as digits and a unit: "512MiB", "4GiB".
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   Size
}{{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}, {"B", B}}

// UnmarshalTOML implements toml.Unmarshaler.
func (s *Size) UnmarshalTOML(v any) error {
	str, ok := v.(string)
	if !ok {
		return typeError(`a size string such as "512MiB"`, v)
	}
	n, err := ParseSize(str)
	*s = n
	return err
}

// ParseSize parses the one size syntax: "0", or decimal digits without a
// leading zero followed by B, KiB, MiB, GiB or TiB.
func ParseSize(str string) (Size, error) {
	if str == "0" {
		return 0, nil
	}
	for _, u := range sizeUnits {
		digits, ok := strings.CutSuffix(str, u.suffix)
		if !ok {
			continue
		}
		n, err := parseDigits(digits)
		if errors.Is(err, errTooBig) || err == nil && n > int64(MaxInt/u.mult) {
			return 0, fmt.Errorf("size %q is over the limit of 2^53-1 bytes (SR-14)", str)
		}
		if err == nil && n == 0 {
			return 0, fmt.Errorf(`size %q is zero, which has one spelling: "0"`, str)
		}
		if err != nil {
			break
		}
		return Size(n) * u.mult, nil
	}
	return 0, fmt.Errorf(`size %q is not digits followed by B, KiB, MiB, GiB or TiB (e.g. "512MiB"), or "0"`, str)
}

// String formats the size in the largest unit that divides it.
func (s Size) String() string {
	if s == 0 {
		return "0"
	}
	for _, u := range sizeUnits {
		if s%u.mult == 0 {
			return strconv.FormatInt(int64(s/u.mult), 10) + u.suffix
		}
	}
	return bug("unreachable size unit")
}

// Duration is a span written as digits and a unit: "10s", "500ms", "2h".
type Duration time.Duration

var durationUnits = []struct {
	suffix string
	mult   time.Duration
}{{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}}

// UnmarshalTOML implements toml.Unmarshaler.
func (d *Duration) UnmarshalTOML(v any) error {
	str, ok := v.(string)
	if !ok {
		return typeError(`a duration string such as "10s"`, v)
	}
	n, err := ParseDuration(str)
	*d = n
	return err
}

// ParseDuration parses the one duration syntax: "0", or decimal digits
// without a leading zero followed by ms, s, m or h.
func ParseDuration(str string) (Duration, error) {
	if str == "0" {
		return 0, nil
	}
	for _, u := range durationUnits {
		digits, ok := strings.CutSuffix(str, u.suffix)
		if !ok || (u.suffix == "m" && strings.HasSuffix(digits, "m")) {
			continue
		}
		n, err := parseDigits(digits)
		if errors.Is(err, errTooBig) || err == nil && n > int64(MaxInt/u.mult) {
			return 0, fmt.Errorf("duration %q is over the limit of 2^53-1 nanoseconds, about 104 days (SR-14)", str)
		}
		if err == nil && n == 0 {
			return 0, fmt.Errorf(`duration %q is zero, which has one spelling: "0"`, str)
		}
		if err != nil {
			break
		}
		return Duration(time.Duration(n) * u.mult), nil
	}
	return 0, fmt.Errorf(`duration %q is not digits followed by ms, s, m or h (e.g. "10s"), or "0"`, str)
}

// String formats the duration in the largest unit that divides it.
func (d Duration) String() string {
	if d == 0 {
		return "0"
	}
	for i := len(durationUnits) - 1; i >= 0; i-- {
		u := durationUnits[i]
		if time.Duration(d)%u.mult == 0 {
			return strconv.FormatInt(int64(time.Duration(d)/u.mult), 10) + u.suffix
		}
	}
	return time.Duration(d).String()
}

// errTooBig is parseDigits' answer for more than 16 digits: well formed,
// but over MaxInt whatever the unit.
var errTooBig = errors.New("too many digits")

// parseDigits accepts 1 to 16 ASCII digits with no sign and no leading zero.
func parseDigits(s string) (int64, error) {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return 0, fmt.Errorf("bad digits %q", s)
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("bad digits %q", s)
		}
		n = n*10 + int64(s[i]-'0') // wraps past 18 digits; unused then
	}
	if len(s) > 16 {
		return 0, errTooBig
	}
	return n, nil
}

// Mode is the launch mode.
type Mode string

// Launch modes.
const (
	ModeWrapper    Mode = "wrapper"
	ModeComponents Mode = "components"
)

// UnmarshalTOML implements toml.Unmarshaler.
func (m *Mode) UnmarshalTOML(v any) error {
	s, err := enum(v, string(ModeWrapper), string(ModeComponents))
	*m = Mode(s)
	return err
}

// NetMode is the network mode.
type NetMode string

// Network modes.
const (
	NetNone  NetMode = "none"
	NetPorts NetMode = "ports"
	NetProxy NetMode = "proxy"
)

// UnmarshalTOML implements toml.Unmarshaler.
func (m *NetMode) UnmarshalTOML(v any) error {
	s, err := enum(v, string(NetNone), string(NetPorts), string(NetProxy))
	*m = NetMode(s)
	return err
}

func enum(v any, allowed ...string) (string, error) {
	s, err := printableString(v)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", fmt.Errorf("%q is not one of %q", s, allowed)
}

// Domain is a host-name pattern: an exact name ("github.com") or a suffix
// ("*.npmjs.org"), lower-case ASCII (IDNs as xn-- labels), no trailing dot,
// not an IP address.
type Domain string

// UnmarshalTOML implements toml.Unmarshaler.
func (d *Domain) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*d = Domain(s)
	return checkDomain(s)
}

// Wildcard reports whether d is a "*.suffix" pattern, and returns the suffix.
func (d Domain) Wildcard() (string, bool) {
	return strings.CutPrefix(string(d), "*.")
}

// Matches reports whether host, already in normal form (lower case, no
// trailing dot), is d: the same name, or for "*.suffix" a name strictly
// beneath suffix (the suffix itself does not match). A host that is not a
// well-formed name in normal form (CheckHost) matches nothing.
func (d Domain) Matches(host string) bool {
	if CheckHost(host) != nil {
		return false
	}
	if suffix, ok := d.Wildcard(); ok {
		return len(host) > len(suffix)+1 && strings.HasSuffix(host, "."+suffix)
	}
	return host == string(d)
}

// CheckHost checks that host is a host name in normal form: ASCII labels
// of a-z, 0-9 and '-', no empty label, no trailing dot, not an IP address,
// no wildcard.
func CheckHost(host string) error {
	if strings.HasPrefix(host, "*.") {
		return fmt.Errorf("host %q is a pattern, not a name", host)
	}
	return checkDomain(host)
}

func checkDomain(s string) error {
	name, _ := strings.CutPrefix(s, "*.")
	// The shape checks run on the normal form, so that the "write X"
	// suggestion below is only made when X would be accepted.
	norm := strings.ToLower(strings.TrimSuffix(name, "."))
	if len(norm) == 0 || len(norm) > 253 {
		return fmt.Errorf("host %q is empty or longer than 253 characters", s)
	}
	labels := strings.Split(norm, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("host %q has an empty, over-long or hyphen-edged label %q", s, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("host %q has a character outside a-z, 0-9 and '-' (write internationalised names as xn-- labels; wildcards only as a leading \"*.\")", s)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("host %q looks like an IP address: domain rules take names; use unsafe_allow_private for address ranges", s)
	}
	if norm != name {
		return fmt.Errorf("host %q is not in normal form: write %q (lower case, no trailing dot)", s, strings.Replace(s, name, norm, 1))
	}
	return nil
}

// CIDR is an address range in canonical form ("10.0.0.0/8", "fd00::/8").
type CIDR netip.Prefix

// UnmarshalTOML implements toml.Unmarshaler.
func (c *CIDR) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	return c.UnmarshalText([]byte(s))
}

// MarshalText writes the canonical form (the policy travels to the net
// component as JSON).
func (c CIDR) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a range in canonical form only.
func (c *CIDR) UnmarshalText(b []byte) error {
	s := string(b)
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return fmt.Errorf("address range %q is not a CIDR prefix such as \"10.0.0.0/8\"", s)
	}
	m := p.Masked()
	if m.Addr().Is4In6() {
		v4 := netip.PrefixFrom(m.Addr().Unmap(), m.Bits()-96)
		return fmt.Errorf("address range %q is IPv4-mapped IPv6, which IPv4 addresses do not match: write %q", s, v4)
	}
	if m.String() != s {
		return fmt.Errorf("address range %q is not in canonical form: write %q", s, m)
	}
	*c = CIDR(p)
	return nil
}

// String returns the canonical form.
func (c CIDR) String() string { return netip.Prefix(c).String() }

// EnvName is an environment variable name: [A-Za-z_][A-Za-z0-9_]*.
type EnvName string

// UnmarshalTOML implements toml.Unmarshaler.
func (e *EnvName) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*e = EnvName(s)
	return checkIdent("environment variable name", s, "_", true)
}

// SecretName names a vault entry: [a-z0-9_-], starting with a letter.
type SecretName string

// UnmarshalTOML implements toml.Unmarshaler.
func (n *SecretName) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*n = SecretName(s)
	return CheckSecretName(s)
}

// maxSecretName bounds a secret's name.
const maxSecretName = 64

// CheckSecretName checks a vault entry's name, for the policy and the
// vault alike: the two must agree on what a policy can name.
func CheckSecretName(s string) error {
	// A name that is not one may be a value typed in its place
	// (`launcher secrets add ghp_…`): past secretNameShown bytes it is
	// quoted by its start and its length only, so that the error line (a
	// CI log, a terminal recording) does not carry the token (a red team,
	// 2026-12-03). Whole, a very long one also filled the line, which was
	// cut before the reason.
	q := strconv.Quote(s)
	if len(s) > secretNameShown {
		q = fmt.Sprintf("%.8q… (%d bytes)", s, len(s))
	}
	switch {
	case s == "":
		return errors.New("secret name is empty")
	case len(s) > maxSecretName:
		return fmt.Errorf("secret name %s is longer than %d characters", q, maxSecretName)
	case s != strings.ToLower(s):
		return fmt.Errorf("secret name %s has upper-case letters: names are lower case", q)
	}
	if err := checkIdentShown("secret name", s, q, "_-", false); err != nil {
		return err
	}
	if s[0] < 'a' || s[0] > 'z' {
		return fmt.Errorf("secret name %s does not start with a letter", q)
	}
	return nil
}

// secretNameShown is the longest name a secret name's error quotes whole.
const secretNameShown = 24

// HeaderName is an HTTP header field name (RFC 9110 token).
type HeaderName string

// UnmarshalTOML implements toml.Unmarshaler.
func (h *HeaderName) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*h = HeaderName(s)
	return checkIdent("header name", s, "!#$%&'*+-.^_`|~", true)
}

// Template is a header value with exactly one "{secret}".
type Template string

// SecretPlaceholder is what a Template's secret is written as.
const SecretPlaceholder = "{secret}"

// UnmarshalTOML implements toml.Unmarshaler.
func (t *Template) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*t = Template(s)
	if n := strings.Count(s, SecretPlaceholder); n != 1 {
		return fmt.Errorf("template %q holds %s %d times, not once", s, SecretPlaceholder, n)
	}
	return nil
}

// Command is a command prefix: whitespace-separated words, matched on the
// parsed words of a command, not its text.
type Command string

// UnmarshalTOML implements toml.Unmarshaler.
func (c *Command) UnmarshalTOML(v any) error {
	s, err := printableString(v)
	if err != nil {
		return err
	}
	*c = Command(s)
	if w := strings.Fields(s); len(w) == 0 || strings.Join(w, " ") != s {
		return fmt.Errorf("command prefix %q must be words separated by single spaces", s)
	}
	if strings.ContainsAny(s, "'\"\\$`;&|<>(){}*?[]!#~") {
		return fmt.Errorf("command prefix %q holds shell syntax: prefixes are plain words matched on the parsed command", s)
	}
	return nil
}

// Words returns the prefix's words.
func (c Command) Words() []string { return strings.Fields(string(c)) }

// checkIdent accepts a non-empty ASCII name of lower-case letters (and
// upper-case ones when upper), digits not in first place, and characters of
// extra (ASCII). The offset it reports is in bytes.
func checkIdent(what, s, extra string, upper bool) error {
	return checkIdentShown(what, s, strconv.Quote(s), extra, upper)
}

// checkIdentShown is checkIdent, its errors naming s as shown.
func checkIdentShown(what, s, shown, extra string, upper bool) error {
	if s == "" {
		return fmt.Errorf("%s is empty", what)
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' && i > 0 ||
			upper && c >= 'A' && c <= 'Z' || strings.ContainsRune(extra, c)
		if !ok {
			return fmt.Errorf("%s %s has character %q at offset %d", what, shown, c, i)
		}
	}
	return nil
}

func typeError(want string, v any) error {
	return fmt.Errorf("want %s, found %s", want, tomlType(v))
}

// tomlType names a decoded TOML value's type as the TOML spec does.
func tomlType(v any) string {
	switch v := v.(type) {
	case string:
		return "string " + strconv.Quote(v)
	case int64:
		return "integer " + strconv.FormatInt(v, 10)
	case float64:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "date-time"
	case map[string]any:
		return "table"
	case []map[string]any, []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}
