package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	sizeSyntax     = `is not digits followed by B, KiB, MiB, GiB or TiB (e.g. "512MiB"), or "0"`
	sizeTooBig     = `is over the limit of 2^53-1 bytes (SR-14)`
	durationSyntax = `is not digits followed by ms, s, m or h (e.g. "10s"), or "0"`
	durationTooBig = `is over the limit of 2^53-1 nanoseconds, about 104 days (SR-14)`
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want Size
		err  string // the message after `size "IN" `; "" when accepted
	}{
		{"0", 0, ""},
		{"0B", 0, `is zero, which has one spelling: "0"`},
		{"1B", 1, ""},
		{"512MiB", 512 * MiB, ""},
		{"4GiB", 4 * GiB, ""},
		{"1024KiB", MiB, ""},
		{"9007199254740991B", MaxInt, ""},             // MaxInt bytes
		{"9007199254740992B", 0, sizeTooBig},          // MaxInt+1
		{"9999999999999999B", 0, sizeTooBig},          // 16 digits
		{"10000000000000000B", 0, sizeTooBig},         // 17 digits
		{"99999999999999999999999TiB", 0, sizeTooBig}, // would overflow int64
		{"8796093022207KiB", 8796093022207 * KiB, ""},
		{"8796093022208KiB", 0, sizeTooBig},
		{"8589934591MiB", 8589934591 * MiB, ""},
		{"8589934592MiB", 0, sizeTooBig},
		{"8388607GiB", 8388607 * GiB, ""},
		{"8388608GiB", 0, sizeTooBig},
		{"8191TiB", 8191 * TiB, ""},
		{"8192TiB", 0, sizeTooBig},
		{"8388607TiB", 0, sizeTooBig}, // fits int64, not 2^53-1
		{"8388608TiB", 0, sizeTooBig}, // 2^63 bytes
		{"", 0, sizeSyntax},
		{"B", 0, sizeSyntax},
		{"GiB", 0, sizeSyntax},
		{"04GiB", 0, sizeSyntax},
		{"00", 0, sizeSyntax},
		{"00B", 0, sizeSyntax},
		{"-1MiB", 0, sizeSyntax},
		{"+1MiB", 0, sizeSyntax},
		{"1.5GiB", 0, sizeSyntax},
		{"4GB", 0, sizeSyntax},
		{"4G", 0, sizeSyntax},
		{"4 GiB", 0, sizeSyntax},
		{" 4GiB", 0, sizeSyntax},
		{"4GiB ", 0, sizeSyntax},
		{"4gib", 0, sizeSyntax},
		{"4iB", 0, sizeSyntax},
		{"4KB", 0, sizeSyntax},
		{"4MiBB", 0, sizeSyntax},
		{"1_000B", 0, sizeSyntax},
		{"0x10B", 0, sizeSyntax},
		{"٤GiB", 0, sizeSyntax}, // Arabic-Indic four
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
				continue
			}
			// Round trip: String gives a form that parses to the same size.
			back, err := ParseSize(got.String())
			if err != nil || back != got {
				t.Errorf("ParseSize(%q).String() = %q parses to %d, %v", tt.in, got.String(), back, err)
			}
			continue
		}
		want := fmt.Sprintf("size %q %s", tt.in, tt.err)
		if err == nil || err.Error() != want || got != 0 {
			t.Errorf("ParseSize(%q) = %d, %v; want error %s", tt.in, got, err, want)
		}
	}
}

func TestSizeString(t *testing.T) {
	tests := []struct {
		in   Size
		want string
	}{
		{0, "0"}, {1, "1B"}, {1023, "1023B"}, {KiB, "1KiB"}, {1536, "1536B"},
		{MiB, "1MiB"}, {3 * MiB / 2, "1536KiB"}, {4 * GiB, "4GiB"}, {1024 * GiB, "1TiB"},
		{8191 * TiB, "8191TiB"}, {MaxInt, "9007199254740991B"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
		}
		if back, err := ParseSize(tt.want); err != nil || back != tt.in {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.want, back, err, int64(tt.in))
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"0", 0, ""},
		{"0s", 0, `is zero, which has one spelling: "0"`},
		{"1ms", time.Millisecond, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"10s", 10 * time.Second, ""},
		{"1m", time.Minute, ""},
		{"90m", 90 * time.Minute, ""},
		{"2h", 2 * time.Hour, ""},
		{"9007199254ms", 9007199254 * time.Millisecond, ""},
		{"9007199255ms", 0, durationTooBig},
		{"9007199s", 9007199 * time.Second, ""},
		{"9007200s", 0, durationTooBig},
		{"150119m", 150119 * time.Minute, ""},
		{"150120m", 0, durationTooBig},
		{"2501h", 2501 * time.Hour, ""},
		{"2502h", 0, durationTooBig},
		{"99999999999999999h", 0, durationTooBig},
		{"", 0, durationSyntax},
		{"s", 0, durationSyntax},
		{"ms", 0, durationSyntax},
		{"10", 0, durationSyntax},
		{"010s", 0, durationSyntax},
		{"00", 0, durationSyntax},
		{"-1s", 0, durationSyntax},
		{"1.5s", 0, durationSyntax},
		{"1h30m", 0, durationSyntax},
		{"10mm", 0, durationSyntax},
		{"10sec", 0, durationSyntax},
		{"10S", 0, durationSyntax},
		{"10 s", 0, durationSyntax},
		{"10us", 0, durationSyntax},
		{"10µs", 0, durationSyntax},
		{"10ns", 0, durationSyntax},
		{"1d", 0, durationSyntax},
		{"1w", 0, durationSyntax},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.err == "" {
			if err != nil || got != Duration(tt.want) {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, time.Duration(got), err, tt.want)
				continue
			}
			back, err := ParseDuration(got.String())
			if err != nil || back != got {
				t.Errorf("ParseDuration(%q).String() = %q parses to %v, %v", tt.in, got.String(), time.Duration(back), err)
			}
			continue
		}
		want := fmt.Sprintf("duration %q %s", tt.in, tt.err)
		if err == nil || err.Error() != want || got != 0 {
			t.Errorf("ParseDuration(%q) = %v, %v; want error %s", tt.in, time.Duration(got), err, want)
		}
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0"}, {time.Millisecond, "1ms"}, {1500 * time.Millisecond, "1500ms"}, {time.Second, "1s"},
		{90 * time.Second, "90s"}, {time.Minute, "1m"}, {90 * time.Minute, "90m"}, {2 * time.Hour, "2h"},
	}
	for _, tt := range tests {
		if got := Duration(tt.in).String(); got != tt.want {
			t.Errorf("Duration(%v).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// unmarshalRows runs each value through a leaf's UnmarshalTOML; err is the
// exact message, "" when accepted.
type unmarshalRow struct {
	in  any
	err string
}

func checkUnmarshal(t *testing.T, what string, newLeaf func() interface{ UnmarshalTOML(any) error }, rows []unmarshalRow) {
	t.Helper()
	for _, r := range rows {
		err := newLeaf().UnmarshalTOML(r.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != r.err {
			t.Errorf("%s(%#v):\n got  %q\n want %q", what, r.in, got, r.err)
		}
	}
}

const intRange = " is outside ±(2^53-1): JavaScript and JSON readers would not keep it exact (SR-14)"

func TestInt(t *testing.T) {
	checkUnmarshal(t, "Int", func() interface{ UnmarshalTOML(any) error } { return new(Int) }, []unmarshalRow{
		{int64(0), ""},
		{int64(MaxInt), ""},
		{int64(-MaxInt), ""},
		{int64(MaxInt + 1), "integer 9007199254740992" + intRange},
		{int64(-MaxInt - 1), "integer -9007199254740992" + intRange},
		{int64(1<<63 - 1), "integer 9223372036854775807" + intRange},
		{int64(-1 << 63), "integer -9223372036854775808" + intRange},
		{1.0, "want an integer, found float"},
		{"1", `want an integer, found string "1"`},
		{true, "want an integer, found boolean"},
		{[]any{int64(1)}, "want an integer, found array"},
		{map[string]any{}, "want an integer, found table"},
		{time.Time{}, "want an integer, found date-time"},
		{int(1), "want an integer, found int"},
	})
	var i Int
	if err := i.UnmarshalTOML(int64(-MaxInt)); err != nil || i != -MaxInt {
		t.Errorf("Int(-MaxInt) = %d, %v", i, err)
	}
}

func TestPort(t *testing.T) {
	checkUnmarshal(t, "Port", func() interface{ UnmarshalTOML(any) error } { return new(Port) }, []unmarshalRow{
		{int64(1), ""},
		{int64(443), ""},
		{int64(65535), ""},
		{int64(0), "port 0 is not between 1 and 65535"},
		{int64(-1), "port -1 is not between 1 and 65535"},
		{int64(65536), "port 65536 is not between 1 and 65535"},
		{int64(1 << 16 * 2), "port 131072 is not between 1 and 65535"},
		{int64(MaxInt + 1), "integer 9007199254740992" + intRange},
		{"443", `want an integer, found string "443"`},
	})
}

func TestPath(t *testing.T) {
	const notAbs = " is not absolute: a relative path binds to whatever directory the launcher starts in"
	const clean = "): the text must read as it binds (SR-12)"
	checkUnmarshal(t, "Path", func() interface{ UnmarshalTOML(any) error } { return new(Path) }, []unmarshalRow{
		{"/", ""},
		{"/usr/bin", ""},
		{"/home/zoë/a b", ""},
		{"/a/.b/..c", ""},
		{"", `path ""` + notAbs},
		{"usr", `path "usr"` + notAbs},
		{"./usr", `path "./usr"` + notAbs},
		{"~/src", `path "~/src"` + notAbs},
		{"/usr/", `path "/usr/" is not clean (write it as "/usr"` + clean},
		{"//usr", `path "//usr" is not clean (write it as "/usr"` + clean},
		{"/a//b", `path "/a//b" is not clean (write it as "/a/b"` + clean},
		{"/a/../b", `path "/a/../b" is not clean (write it as "/b"` + clean},
		{"/a/./b", `path "/a/./b" is not clean (write it as "/a/b"` + clean},
		{"/..", `path "/.." is not clean (write it as "/"` + clean},
		{"/a\u202e", `string "/a\u202e" holds character U+202E at byte 2: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)`},
		{"/a\x00", `string "/a\x00" holds character U+0000 at byte 2: control characters are not allowed in policy text (SR-12)`},
		{"/a\xff", `string "/a\xff" holds invalid UTF-8 at byte 2`},
		{"/srv/caf\u00e9", ""},
		{"/srv/cafe\u0301", `path "/srv/cafe\u0301" is not in Unicode normal form C ("/srv/caf\u00e9" is): it displays like another name that is a different directory; rename it to the NFC spelling (SR-12)`},
		{int64(1), "want a string, found integer 1"},
	})
}

func TestText(t *testing.T) {
	checkUnmarshal(t, "Text", func() interface{ UnmarshalTOML(any) error } { return new(Text) }, []unmarshalRow{
		{"", ""},
		{"a b\tc", `string "a b\tc" holds character U+0009 at byte 3: control characters are not allowed in policy text (SR-12)`},
		{"héllo ✓ 日本", ""},
		{"a\u200db", `string "a\u200db" holds character U+200D at byte 1: a zero-width character is invisible, so the policy would not read as it binds (SR-16)`},
		{"a\u2060b", `string "a\u2060b" holds character U+2060 at byte 1: a zero-width character is invisible, so the policy would not read as it binds (SR-16)`},
		{"a\u061cb", `string "a\u061cb" holds character U+061C at byte 1: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)`},
		{"a\u200eb", `string "a\u200eb" holds character U+200E at byte 1: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)`},
		{"a\u2069b", `string "a\u2069b" holds character U+2069 at byte 1: a bidirectional control reorders how text displays, so the policy would not read as it binds (SR-16)`},
		{"a\u3000b", `string "a\u3000b" holds character U+3000 at byte 1: only the ASCII space and tab may separate text; other spaces and separators look alike or break lines invisibly (SR-16)`},
		{"a\u2029b", `string "a\u2029b" holds character U+2029 at byte 1: only the ASCII space and tab may separate text; other spaces and separators look alike or break lines invisibly (SR-16)`},
		{"a\u009fb", `string "a\u009fb" holds character U+009F at byte 1: control characters are not allowed in policy text (SR-12)`},
		{"a\U000f0000b", `string "a\U000f0000b" holds character U+F0000 at byte 1: only printable characters are allowed in policy text (SR-16)`},
		{"a\U000e0001b", `string "a\U000e0001b" holds character U+E0001 at byte 1: only printable characters are allowed in policy text (SR-16)`},
		{"a\ufffdb", `string "a�b" holds U+FFFD, the replacement character: the text was damaged before it reached the policy`},
		{"a\xed\xa0\x80", `string "a\xed\xa0\x80" holds invalid UTF-8 at byte 1`},
	})
}

func TestDomain(t *testing.T) {
	const chars = ` has a character outside a-z, 0-9 and '-' (write internationalised names as xn-- labels; wildcards only as a leading "*.")`
	const label = ` has an empty, over-long or hyphen-edged label `
	long63 := strings.Repeat("a", 63)
	long254 := strings.Repeat("a.", 126) + "ab"
	checkUnmarshal(t, "Domain", func() interface{ UnmarshalTOML(any) error } { return new(Domain) }, []unmarshalRow{
		{"github.com", ""},
		{"*.github.com", ""},
		{"localhost", ""},
		{"xn--bcher-kva.de", ""},
		{"a-b.c0m", ""},
		{"1.2.3.4.example", ""},
		{long63 + ".com", ""},
		{long254[2:], ""}, // 252 characters
		{long254, `host "` + long254 + `" is empty or longer than 253 characters`},
		{strings.Repeat("a", 64) + ".com", `host "` + strings.Repeat("a", 64) + `.com"` + label + `"` + strings.Repeat("a", 64) + `"`},
		{"Github.com", `host "Github.com" is not in normal form: write "github.com" (lower case, no trailing dot)`},
		{"github.com.", `host "github.com." is not in normal form: write "github.com" (lower case, no trailing dot)`},
		{"*.GitHub.com.", `host "*.GitHub.com." is not in normal form: write "*.github.com" (lower case, no trailing dot)`},
		{"BÜCHER.de", `host "BÜCHER.de"` + chars},
		{"bücher.de", `host "bücher.de"` + chars},
		{"*", `host "*"` + chars},
		{"*.", `host "*." is empty or longer than 253 characters`},
		{"", `host "" is empty or longer than 253 characters`},
		{".", `host "." is empty or longer than 253 characters`},
		{"a..b", `host "a..b"` + label + `""`},
		{".a.com", `host ".a.com"` + label + `""`},
		{"-a.com", `host "-a.com"` + label + `"-a"`},
		{"a-.com", `host "a-.com"` + label + `"a-"`},
		{"1.2.3.4", `host "1.2.3.4" looks like an IP address: domain rules take names; use unsafe_allow_private for address ranges`},
		{"example.123", `host "example.123" looks like an IP address: domain rules take names; use unsafe_allow_private for address ranges`},
		{"exa mple.com", `host "exa mple.com"` + chars},
		{"a.*.com", `host "a.*.com"` + chars},
		{"*.*.com", `host "*.*.com"` + chars},
		{"*com", `host "*com"` + chars},
		{"a_b.com", `host "a_b.com"` + chars},
		{"[::1]", `host "[::1]"` + chars},
		{"a\u200b.com", `string "a\u200b.com" holds character U+200B at byte 1: a zero-width character is invisible, so the policy would not read as it binds (SR-16)`},
		{int64(1), "want a string, found integer 1"},
	})
	if s, ok := Domain("*.github.com").Wildcard(); !ok || s != "github.com" {
		t.Errorf("Wildcard() = %q, %v", s, ok)
	}
	if _, ok := Domain("github.com").Wildcard(); ok {
		t.Error("github.com is not a wildcard")
	}
}

func TestCIDR(t *testing.T) {
	checkUnmarshal(t, "CIDR", func() interface{ UnmarshalTOML(any) error } { return new(CIDR) }, []unmarshalRow{
		{"10.0.0.0/8", ""},
		{"192.168.1.0/24", ""},
		{"10.1.2.3/32", ""},
		{"fd00::/8", ""},
		{"::1/128", ""},
		{"::/80", ""},
		{"10.0.0.1/8", `address range "10.0.0.1/8" is not in canonical form: write "10.0.0.0/8"`},
		{"FD00::/8", `address range "FD00::/8" is not in canonical form: write "fd00::/8"`},
		{"fd00:0::/8", `address range "fd00:0::/8" is not in canonical form: write "fd00::/8"`},
		{"::ffff:10.0.0.0/104", `address range "::ffff:10.0.0.0/104" is IPv4-mapped IPv6, which IPv4 addresses do not match: write "10.0.0.0/8"`},
		{"::ffff:a00:0/104", `address range "::ffff:a00:0/104" is IPv4-mapped IPv6, which IPv4 addresses do not match: write "10.0.0.0/8"`},
		{"::ffff:0.0.0.0/96", `address range "::ffff:0.0.0.0/96" is IPv4-mapped IPv6, which IPv4 addresses do not match: write "0.0.0.0/0"`},
		{"::ffff:10.0.0.0/80", `address range "::ffff:10.0.0.0/80" is not in canonical form: write "::/80"`},
		{"10.0.0.0", `address range "10.0.0.0" is not a CIDR prefix such as "10.0.0.0/8"`},
		{"10.0.0.0/33", `address range "10.0.0.0/33" is not a CIDR prefix such as "10.0.0.0/8"`},
		{"010.0.0.0/8", `address range "010.0.0.0/8" is not a CIDR prefix such as "10.0.0.0/8"`},
		{"fe80::1%eth0/64", `address range "fe80::1%eth0/64" is not a CIDR prefix such as "10.0.0.0/8"`},
		{"", `address range "" is not a CIDR prefix such as "10.0.0.0/8"`},
		{int64(8), "want a string, found integer 8"},
	})
}

func TestNames(t *testing.T) {
	newEnv := func() interface{ UnmarshalTOML(any) error } { return new(EnvName) }
	checkUnmarshal(t, "EnvName", newEnv, []unmarshalRow{
		{"PATH", ""}, {"_", ""}, {"_X1", ""}, {"lower_case", ""},
		{"", "environment variable name is empty"},
		{"1X", `environment variable name "1X" has character '1' at offset 0`},
		{"MY-VAR", `environment variable name "MY-VAR" has character '-' at offset 2`},
		{"A=B", `environment variable name "A=B" has character '=' at offset 1`},
		{"A B", `environment variable name "A B" has character ' ' at offset 1`},
		{"ÉTÉ", `environment variable name "ÉTÉ" has character 'É' at offset 0`},
		{"AÉ", `environment variable name "AÉ" has character 'É' at offset 1`},
	})
	if err := (EnvSet{}).CheckKey("1X"); err == nil || err.Error() != `environment variable name "1X" has character '1' at offset 0` {
		t.Errorf("EnvSet.CheckKey(1X) = %v", err)
	}
	checkUnmarshal(t, "SecretName", func() interface{ UnmarshalTOML(any) error } { return new(SecretName) }, []unmarshalRow{
		{"github", ""}, {"npm-token", ""}, {"a_1", ""},
		{"", "secret name is empty"},
		{"GitHub", `secret name "GitHub" has upper-case letters: names are lower case`},
		{"1password", `secret name "1password" has character '1' at offset 0`},
		{"-x", `secret name "-x" does not start with a letter`},
		{"_x", `secret name "_x" does not start with a letter`},
		{"a.b", `secret name "a.b" has character '.' at offset 1`},
		{"café", `secret name "café" has character 'é' at offset 3`},
		// A value typed for a name is not quoted whole: past 24 bytes,
		// its start and its length.
		{"ghp_16C7e42F292c6912E7710c838347Ae178B4a", `secret name "ghp_16C7"… (40 bytes) has upper-case letters: names are lower case`},
		{"-k-proj-0123456789abcdefghijkl", `secret name "-k-proj-"… (30 bytes) does not start with a letter`},
		{"xoxb.123456789012.abcdefghijkl", `secret name "xoxb.123"… (30 bytes) has character '.' at offset 4`},
		{"a23456789012345678901234", ""},
		{"a2345678901234567890123.", `secret name "a2345678901234567890123." has character '.' at offset 23`},
	})
	checkUnmarshal(t, "HeaderName", func() interface{ UnmarshalTOML(any) error } { return new(HeaderName) }, []unmarshalRow{
		{"Authorization", ""}, {"X-Api-Key", ""}, {"x_token!#$%&'*+-.^_`|~", ""},
		{"", "header name is empty"},
		{"X Token", `header name "X Token" has character ' ' at offset 1`},
		{"X:Token", `header name "X:Token" has character ':' at offset 1`},
		{"X\"", `header name "X\"" has character '"' at offset 1`},
	})
	checkUnmarshal(t, "Template", func() interface{ UnmarshalTOML(any) error } { return new(Template) }, []unmarshalRow{
		{"{secret}", ""}, {"Bearer {secret}", ""}, {"token={secret}; v=1", ""},
		{"Bearer", `template "Bearer" holds {secret} 0 times, not once`},
		{"{Secret}", `template "{Secret}" holds {secret} 0 times, not once`},
		{"{secret}{secret}", `template "{secret}{secret}" holds {secret} 2 times, not once`},
		{"Bearer {secret}\r\n", `string "Bearer {secret}\r\n" holds character U+000D at byte 15: control characters are not allowed in policy text (SR-12)`},
	})
}

func TestCommand(t *testing.T) {
	const shell = " holds shell syntax: prefixes are plain words matched on the parsed command"
	checkUnmarshal(t, "Command", func() interface{ UnmarshalTOML(any) error } { return new(Command) }, []unmarshalRow{
		{"go test", ""}, {"npm run build", ""}, {"git push --force", ""}, {"make -j8", ""}, {"a=b", ""},
		{"", `command prefix "" must be words separated by single spaces`},
		{" go", `command prefix " go" must be words separated by single spaces`},
		{"go ", `command prefix "go " must be words separated by single spaces`},
		{"go  test", `command prefix "go  test" must be words separated by single spaces`},
		{"go;rm", `command prefix "go;rm"` + shell},
		{"a && b", `command prefix "a && b"` + shell},
		{"a || b", `command prefix "a || b"` + shell},
		{"echo $HOME", `command prefix "echo $HOME"` + shell},
		{"echo `id`", "command prefix \"echo `id`\"" + shell},
		{"cat <x", `command prefix "cat <x"` + shell},
		{"echo 'a'", `command prefix "echo 'a'"` + shell},
		{`echo "a"`, `command prefix "echo \"a\""` + shell},
		{`echo \a`, `command prefix "echo \\a"` + shell},
		{"ls ~", `command prefix "ls ~"` + shell},
		{"ls [a]", `command prefix "ls [a]"` + shell},
		{"ls a?", `command prefix "ls a?"` + shell},
		{"echo {a,b}", `command prefix "echo {a,b}"` + shell},
		{"a # b", `command prefix "a # b"` + shell},
		{"!x", `command prefix "!x"` + shell},
		{"(x)", `command prefix "(x)"` + shell},
	})
	eq(t, "Words", Command("git push --force").Words(), []string{"git", "push", "--force"})
}

func TestEnums(t *testing.T) {
	checkUnmarshal(t, "Mode", func() interface{ UnmarshalTOML(any) error } { return new(Mode) }, []unmarshalRow{
		{"wrapper", ""}, {"components", ""},
		{"Wrapper", `"Wrapper" is not one of ["wrapper" "components"]`},
		{"", `"" is not one of ["wrapper" "components"]`},
		{int64(1), "want a string, found integer 1"},
	})
	checkUnmarshal(t, "NetMode", func() interface{ UnmarshalTOML(any) error } { return new(NetMode) }, []unmarshalRow{
		{"none", ""}, {"ports", ""}, {"proxy", ""},
		{"open", `"open" is not one of ["none" "ports" "proxy"]`},
		{"proxy ", `"proxy " is not one of ["none" "ports" "proxy"]`},
	})
}

// A pattern matches its exact name, or (as *.suffix) names strictly
// beneath the suffix; a lookalike, the bare suffix or an unnormalised
// name does not.
func TestDomainMatches(t *testing.T) {
	for _, c := range []struct {
		d    Domain
		host string
		want bool
	}{
		{"api.github.com", "api.github.com", true},
		{"api.github.com", "github.com", false},
		{"api.github.com", "xapi.github.com", false},
		{"api.github.com", "api.github.com.evil.com", false},
		{"api.github.com", "API.github.com", false},
		{"api.github.com", "api.github.com.", false},
		{"*.npmjs.org", "registry.npmjs.org", true},
		{"*.npmjs.org", "a.b.npmjs.org", true},
		{"*.npmjs.org", "npmjs.org", false},
		{"*.npmjs.org", "evilnpmjs.org", false},
		{"*.npmjs.org", ".npmjs.org", false},
		{"*.npmjs.org", "registry.npmjs.org.evil", false},
		// Not names: whatever a parser upstream let through.
		{"*.npmjs.org", "evil.com/.npmjs.org", false},
		{"*.npmjs.org", "evil.com\x00.npmjs.org", false},
		{"*.npmjs.org", "evil.com#.npmjs.org", false},
		{"*.npmjs.org", "evil.com:443.npmjs.org", false},
		{"*.npmjs.org", "..npmjs.org", false},
		{"*.npmjs.org", " .npmjs.org", false},
		{"*.npmjs.org", "*.npmjs.org", false},
	} {
		if got := c.d.Matches(c.host); got != c.want {
			t.Errorf("%q.Matches(%q) = %v, want %v", c.d, c.host, got, c.want)
		}
	}
}
