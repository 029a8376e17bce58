package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// adviceChecks are the names Advice reports under.
var adviceChecks = []string{
	"listed-whole", "shared-tmp", "credential-store", "workspace-not-writable",
	"udp-uncovered", "ports-not-hosts", "public-allowed", "unsafe", "ech-allowed", "unix-sockets", "unlimited",
	"credential-env",
}

// advicePolicy is a valid policy with the workspace writable; extra is
// appended, so it may add keys to [files] or open new tables.
func advicePolicy(extra string) string {
	return "version = 1\n[workspace]\npath = \"/home/ana/src/app\"\n[files]\nwrite = [\"/home/ana/src/app\"]\n" + extra
}

func TestAdvice(t *testing.T) {
	dir := liveDir(t)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		check   string
		trigger string // policy text; @DIR@ is the test's directory
		want    string // the advice's String()
		control string // like trigger, without the advice
	}{
		{"listed-whole", advicePolicy(`read = ["/etc"]`),
			`6: files.read: "/etc" is readable whole: everything beneath it, including files created later (SD-08)`,
			advicePolicy(`read = ["/etc/ssl"]`)},
		{"listed-whole", advicePolicy(`exec = ["/opt"]`),
			`6: files.exec: "/opt" is executable whole: everything beneath it, including files created later (SD-08)`,
			advicePolicy(`exec = ["/opt/go/bin"]`)},
		{"listed-whole", advicePolicy(`read = ["/home/bob"]`),
			`6: files.read: "/home/bob" is readable whole: everything beneath it, including files created later (SD-08)`,
			advicePolicy(`read = ["/home/bob/src"]`)},
		{"shared-tmp", advicePolicy(`read = ["/var/tmp/cache"]`),
			`6: files.read: "/var/tmp/cache" is in /var/tmp, which is shared with other users: another user's process can plant or read files there`,
			advicePolicy(`read = ["/var/cache"]`)},
		{"shared-tmp", "version = 1\n[workspace]\npath = \"/tmp/app\"\n[files]\nwrite = [\"/tmp/app\"]\n",
			`3: workspace.path: the workspace "/tmp/app" is in /tmp, which is shared with other users`,
			"version = 1\n[workspace]\npath = \"/tmpfoo/app\"\n[files]\nwrite = [\"/tmpfoo/app\"]\n"},
		{"credential-store", advicePolicy(`read = ["/home/ana/.aws"]`),
			`6: files.read: "/home/ana/.aws" is a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/home/ana/.awsome"]`)},
		{"credential-store", advicePolicy(`read = ["/home/ana/.ssh/known_hosts"]`),
			`6: files.read: "/home/ana/.ssh/known_hosts" is in /home/ana/.ssh, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/home/ana/ssh/known_hosts"]`)},
		{"credential-store", advicePolicy(`read = ["/home/ana/.local/share"]`),
			`6: files.read: "/home/ana/.local/share" includes /home/ana/.local/share/keyrings, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/home/ana/.local/bin"]`)},
		{"credential-store", advicePolicy(`read = ["/home/bob"]`),
			`6: files.read: "/home/bob" includes /home/bob/.ssh, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/home/bob/src"]`)},
		{"credential-store", advicePolicy(`read = ["/home/ana/.config"]`),
			`6: files.read: "/home/ana/.config" includes /home/ana/.config/gcloud, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/home/ana/.config/nvim"]`)},
		{"credential-store", advicePolicy(`read = ["/etc"]`),
			`6: files.read: "/etc" includes /etc/shadow, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/etc/ssl"]`)},
		{"credential-store", advicePolicy(`read = ["/"]`),
			`6: files.read: "/" includes /etc/shadow, a credential store: the agent could read keys or tokens`,
			advicePolicy(`read = ["/usr"]`)},
		{"workspace-not-writable", "version = 1\n[workspace]\npath = \"/home/ana/src/app\"\n[files]\nread = [\"/home/ana/src/app\"]\n",
			`3: workspace.path: the workspace "/home/ana/src/app" is not beneath any write path: the agent cannot change it`,
			"version = 1\n[workspace]\npath = \"/home/ana/src/app\"\n[files]\nwrite = [\"/home/ana/src\"]\n"},
		{"udp-uncovered", advicePolicy("[network]\nmode = \"ports\"\nconnect_tcp = [443]"),
			`7: network.mode: UDP is not covered without a network namespace: in "ports" mode the agent can send UDP (DNS included) anywhere (SD-04)`,
			advicePolicy("[network]\nmode = \"none\"")},
		{"ports-not-hosts", advicePolicy("[network]\nmode = \"ports\"\nbind_tcp = [8080]"),
			`7: network.mode: "ports" mode restricts ports, not hosts: an allowed port is reachable on every host, loopback included (SD-03)`,
			advicePolicy("[network]\nmode = \"proxy\"\nallow = [\"example.com\"]")},
		{"public-allowed", advicePolicy("[network]\nmode = \"proxy\"\nblock_all = false"),
			`8: network.block_all: block_all = false: every public host not denied is reachable`,
			advicePolicy("[network]\nmode = \"proxy\"\nblock_all = true\nallow = [\"example.com\"]")},
		{"unsafe", advicePolicy("[network]\nmode = \"proxy\"\nallow = [\"example.com\"]\nunsafe_allow_private = [\"10.0.0.0/8\"]"),
			`9: network.unsafe_allow_private: SSRF protection is off for 10.0.0.0/8`,
			advicePolicy("[network]\nmode = \"proxy\"\nallow = [\"example.com\"]\nunsafe_allow_private = []")},
		{"ech-allowed", advicePolicy("[network]\nmode = \"proxy\"\nallow = [\"example.com\"]\nallow_ech = true"),
			`9: network.allow_ech: allow_ech = true: a client can reach any name behind an allowed host's front-end that accepts encrypted_client_hello`,
			advicePolicy("[network]\nmode = \"proxy\"\nallow = [\"example.com\"]\nallow_ech = false")},
		{"unix-sockets", advicePolicy("[network]\nunix_sockets = true"),
			`7: network.unix_sockets: Unix sockets are allowed: a pathname socket the agent can reach (through a listed path) connects it to that socket's server (SR-08)`,
			advicePolicy("[network]\nunix_sockets = false")},
		{"unlimited", advicePolicy("[limits]\nmemory = \"0\""),
			`7: limits.memory: memory is unlimited`,
			advicePolicy("[limits]\nmemory = \"1B\"")},
		{"unlimited", advicePolicy("[limits]\nfile_size = \"0\""),
			`7: limits.file_size: file size is unlimited`,
			advicePolicy("[limits]\nfile_size = \"8TiB\"\ncpu_time = \"0\"")},
		{"credential-env", advicePolicy("[env]\npass = [\"PATH\", \"GITHUB_TOKEN\"]"),
			`7: env.pass: "GITHUB_TOKEN" looks like a credential and is passed to the agent (SR-11)`,
			advicePolicy("[env]\npass = [\"PATH\", \"HOME\", \"TERM\"]\nset = { API_KEY = \"not passed\" }")},
		{"credential-env", advicePolicy("[env]\npass = [\"AWS_PROFILE\"]"),
			`7: env.pass: "AWS_PROFILE" looks like a credential and is passed to the agent (SR-11)`,
			advicePolicy("[env]\npass = [\"LANG\"]")},
		{"credential-env", advicePolicy("[env]\npass = [\"SSH_KEY\"]"),
			`7: env.pass: "SSH_KEY" looks like a credential and is passed to the agent (SR-11)`,
			advicePolicy("[env]\npass = [\"KEYBOARD\"]")},
	}
	advised := func(t *testing.T, text string) []Problem {
		t.Helper()
		p, err := Parse("advice.toml", []byte(strings.ReplaceAll(text, "@DIR@", dir)))
		if err != nil {
			t.Fatalf("Parse:\n%s\n%v", text, err)
		}
		return p.Advice()
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.check] = true
		t.Run(tt.check, func(t *testing.T) {
			want := strings.ReplaceAll(tt.want, "@DIR@", dir)
			var got []string
			for _, a := range advised(t, tt.trigger) {
				if a.Check == tt.check {
					got = append(got, a.String())
				}
			}
			if !slices.Contains(got, want) {
				t.Errorf("advice %s:\n got  %q\n want %q", tt.check, got, want)
			}
			for _, a := range advised(t, tt.control) {
				if a.Check == tt.check {
					t.Errorf("control: unexpected advice %s", a)
				}
			}
		})
	}
	for _, c := range adviceChecks {
		if !covered[c] {
			t.Errorf("advice %q has no row", c)
		}
	}
}

// TestAdviceNone: a careful policy gets no advice at all, and advice comes
// in file order with each problem's check named.
func TestAdviceNone(t *testing.T) {
	p := parseValid(t, "proxy-secrets.toml")
	var got []string
	for _, a := range p.Advice() {
		got = append(got, a.Check+": "+a.String())
	}
	eq(t, "advice", got, []string{
		"unsafe: 20: network.unsafe_allow_private: SSRF protection is off for 10.1.0.0/16",
		"unsafe: 20: network.unsafe_allow_private: SSRF protection is off for fd00::/8",
	})
	p.Network.UnsafeAllowPrivate = nil
	if a := p.Advice(); len(a) != 0 {
		t.Errorf("advice for a careful policy: %v", a)
	}
	for _, a := range parseValid(t, "every-key.toml").Advice() {
		if !slices.Contains(adviceChecks, a.Check) {
			t.Errorf("advice with an unknown check %q: %s", a.Check, a)
		}
	}
}
