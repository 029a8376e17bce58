package policy

import (
	"net/netip"
	"slices"
	"testing"
)

// base is a valid policy built in code, as the rows below change it.
func base() Policy {
	p := Default()
	p.Version = 1
	p.Workspace.Path = "/home/ana/src/app"
	p.Files.Write = []Path{"/home/ana/src/app"}
	p.Files.Exec = []Path{"/usr/bin"}
	return p
}

func components(p *Policy) { p.Mode = ModeComponents }

func proxy(p *Policy) {
	p.Network.Mode = NetProxy
	p.Network.Allow = []Domain{"example.com"}
}

func secret(name SecretName) Secret {
	return Secret{Name: name, Hosts: []Domain{Domain(string(name) + ".api.example.com")}, Header: "Authorization", Template: "Bearer {secret}"}
}

// validated runs Validate and formats the problems as Parse reports them
// (without lines, which a policy built in code has none of).
func validated(p *Policy) []string {
	ps := Validate(p)
	sortProblems(ps)
	var out []string
	for _, pr := range ps {
		out = append(out, pr.Check+": "+pr.String())
	}
	return out
}

func TestValidate(t *testing.T) {
	const overlapWhy = ": a file the agent writes could then be executed (SR-01)"
	tests := []struct {
		name   string
		change func(p *Policy)
		want   []string // nil: the control row, no problem
	}{
		{"base", func(p *Policy) {}, nil},

		{"no workspace", func(p *Policy) { p.Workspace.Path = "" }, []string{
			"workspace-required: workspace: `[workspace] path` is missing: the agent's working directory must be pinned in the policy"}},

		{"duplicate read path", func(p *Policy) { p.Files.Read = []Path{"/a", "/b", "/a", "/a"} }, []string{
			`duplicate-entry: files.read: "/a" is listed more than once: each value is listed once (SR-13)`}},
		{"duplicate bind port", func(p *Policy) { p.Network.Mode = NetPorts; p.Network.BindTCP = []Port{80, 80} }, []string{
			`duplicate-entry: network.bind_tcp: 80 is listed more than once: each value is listed once (SR-13)`}},
		{"duplicate cidr", func(p *Policy) {
			proxy(p)
			c := CIDR(netip.MustParsePrefix("10.0.0.0/8"))
			p.Network.UnsafeAllowPrivate = []CIDR{c, c}
		}, []string{`duplicate-entry: network.unsafe_allow_private: 10.0.0.0/8 is listed more than once: each value is listed once (SR-13)`}},
		{"duplicate secret name", func(p *Policy) {
			components(p)
			proxy(p)
			p.Secrets = []Secret{secret("a"), secret("b"), secret("a")}
		}, []string{`duplicate-entry: secrets[2].name: secret "a" has more than one [[secrets]] rule: give each secret one rule with all its hosts (SR-13)`}},
		{"distinct entries", func(p *Policy) {
			p.Files.Read = []Path{"/a", "/a/b"}
			p.Env.Pass = []EnvName{"PATH", "Path"}
		}, nil},

		{"read and write", func(p *Policy) { p.Files.Read = []Path{"/home/ana/src/app"} }, []string{
			`path-in-two-lists: files.read: "/home/ana/src/app" is listed in both read and write: write already grants read, so list it once (SR-13)`}},
		{"read and exec", func(p *Policy) { p.Files.Read = []Path{"/usr/bin"} }, []string{
			`path-in-two-lists: files.read: "/usr/bin" is listed in both read and exec: exec already grants read, so list it once (SR-13)`}},
		// Not the read-only carve-out it reads as: refused, as exec
		// beneath write is.
		{"read beneath write", func(p *Policy) { p.Files.Read = []Path{"/home/ana/src/app/docs"} }, []string{
			`path-in-two-lists: files.read: "/home/ana/src/app/docs" is beneath write path "/home/ana/src/app", so it is writable too: a read path cannot make part of a write path read-only; list it once, or move what must stay read-only out of the write path (SR-13)`}},
		{"read above write", func(p *Policy) { p.Files.Read = []Path{"/home/ana/src"} }, nil},

		{"write equals exec", func(p *Policy) { p.Files.Exec = []Path{"/home/ana/src/app"} }, []string{
			`write-exec-overlap: files.write: write path "/home/ana/src/app" is also an exec path` + overlapWhy}},
		{"write beneath exec", func(p *Policy) { p.Files.Exec = []Path{"/home"} }, []string{
			`write-exec-overlap: files.write: write path "/home/ana/src/app" is beneath exec path "/home"` + overlapWhy}},
		{"write beneath exec root", func(p *Policy) { p.Files.Exec = []Path{"/"} }, []string{
			`write-exec-overlap: files.write: write path "/home/ana/src/app" is beneath exec path "/"` + overlapWhy}},
		{"write above exec", func(p *Policy) { p.Files.Exec = []Path{"/home/ana/src/app/node_modules/.bin"} }, []string{
			`write-exec-overlap: files.write: write path "/home/ana/src/app" contains exec path "/home/ana/src/app/node_modules/.bin"` + overlapWhy}},
		{"write root above exec", func(p *Policy) { p.Files.Write = []Path{"/"}; p.Workspace.Path = "/" }, []string{
			`write-exec-overlap: files.write: write path "/" contains exec path "/usr/bin"` + overlapWhy,
			`kernel-tree-write: files.write: write path "/" contains /proc, where files are the kernel's interfaces: writing there would change the host's kernel state, not files`}},
		// Kernel interface trees: /proc, /sys and /dev are not written
		// whole; a device file beneath /dev is.
		{"write /sys", func(p *Policy) { p.Files.Write = append(p.Files.Write, "/sys") }, []string{
			`kernel-tree-write: files.write: write path "/sys" is /sys, where files are the kernel's interfaces: writing there would change the host's kernel state, not files`}},
		{"write a device file", func(p *Policy) { p.Files.Write = append(p.Files.Write, "/dev/null", "/dev/pts") }, nil},
		{"write sibling of exec with common prefix", func(p *Policy) { p.Files.Exec = []Path{"/home/ana/src/app2", "/home/ana/src/ap"} }, nil},
		// Components mode: fs writes the whole workspace, listed or not.
		{"components, exec in the unlisted workspace", func(p *Policy) {
			components(p)
			p.Files.Write = nil
			p.Files.Exec = []Path{"/usr/bin", "/home/ana/src/app/bin"}
		}, []string{
			`write-exec-overlap: workspace.path: the workspace, which fs writes in components mode, "/home/ana/src/app" contains exec path "/home/ana/src/app/bin"` + overlapWhy}},
		{"components, exec elsewhere (control)", func(p *Policy) {
			components(p)
			p.Files.Write = nil
		}, nil},

		{"connect_tcp in none", func(p *Policy) { p.Network.ConnectTCP = []Port{443} }, []string{
			`network-keys: network.connect_tcp: connect_tcp applies only in "ports" mode, but network mode is "none"`}},
		{"bind_tcp in proxy", func(p *Policy) { proxy(p); p.Network.BindTCP = []Port{80} }, []string{
			`network-keys: network.bind_tcp: bind_tcp applies only in "ports" mode, but network mode is "proxy"`}},
		{"proxy keys in ports", func(p *Policy) {
			p.Network.Mode = NetPorts
			p.Network.ConnectTCP = []Port{443}
			p.Network.Allow = []Domain{"a.com"}
			p.Network.Deny = []Domain{"b.com"}
			p.Network.BlockAll = false
			p.Network.UnsafeAllowPrivate = []CIDR{CIDR(netip.MustParsePrefix("10.0.0.0/8"))}
			p.Network.AllowECH = true
		}, []string{
			`network-keys: network.allow: allow applies only in "proxy" mode, but network mode is "ports"`,
			`network-keys: network.deny: deny applies only in "proxy" mode, but network mode is "ports"`,
			`network-keys: network.block_all: block_all applies only in "proxy" mode, but network mode is "ports"`,
			`network-keys: network.unsafe_allow_private: unsafe_allow_private applies only in "proxy" mode, but network mode is "ports"`,
			`network-keys: network.allow_ech: allow_ech applies only in "proxy" mode, but network mode is "ports"`,
		}},
		{"ports without ports", func(p *Policy) { p.Network.Mode = NetPorts }, []string{
			`network-keys: network.mode: "ports" mode lists no ports in connect_tcp or bind_tcp, so it would allow nothing`}},
		{"ports with a bind port only", func(p *Policy) { p.Network.Mode = NetPorts; p.Network.BindTCP = []Port{8080} }, nil},
		{"proxy allowing nothing", func(p *Policy) { p.Network.Mode = NetProxy }, []string{
			`network-keys: network.allow: "proxy" mode with block_all = true and no allow rules would refuse every host`}},
		{"proxy with block_all false and no allow", func(p *Policy) { p.Network.Mode = NetProxy; p.Network.BlockAll = false }, nil},

		{"secrets in wrapper", func(p *Policy) { proxy(p); p.Secrets = []Secret{secret("a")} }, []string{
			`components-only: secrets: secrets is enforced by the components, but mode is "wrapper": in wrapper mode nothing would enforce it`}},
		{"commands in wrapper", func(p *Policy) { p.Commands.Auto = []Command{"go test"} }, []string{
			`components-only: commands: commands is enforced by the components, but mode is "wrapper": in wrapper mode nothing would enforce it`}},
		{"commands timeout in wrapper", func(p *Policy) { p.Commands.Timeout = Duration(1e9) }, []string{
			`components-only: commands: commands is enforced by the components, but mode is "wrapper": in wrapper mode nothing would enforce it`}},
		{"backups in wrapper", func(p *Policy) { p.Backups.Quota = GiB }, []string{
			`components-only: backups: backups is enforced by the components, but mode is "wrapper": in wrapper mode nothing would enforce it`}},
		{"protected in wrapper", func(p *Policy) { p.Files.Protected = []Path{"/home/ana/src/app/.env"} }, []string{
			`components-only: files.protected: files.protected is enforced by the components, but mode is "wrapper": in wrapper mode nothing would enforce it`}},
		{"commands at their defaults in wrapper", func(p *Policy) { p.Commands = Default().Commands }, nil},
		{"all of them in components", func(p *Policy) {
			components(p)
			proxy(p)
			p.Secrets = []Secret{secret("a")}
			p.Commands.Auto = []Command{"go test"}
			p.Backups.Quota = GiB
			p.Files.Protected = []Path{"/home/ana/src/app/.env", "/home/ana/src/app"}
		}, nil},

		// What the components hold for the agent, refused before anything
		// starts (the launch used to refuse it only once kms ran).
		{"components: a write path outside the workspace", func(p *Policy) {
			components(p)
			p.Files.Write = []Path{"/home/ana/src/app", "/home/ana/cache"}
		}, []string{`components-authority: files.write: write path "/home/ana/cache" is outside the workspace "/home/ana/src/app": in components mode the fs component writes for the agent and serves the workspace only (SR-37)`}},
		{"components: a write path beneath the workspace", func(p *Policy) {
			components(p)
			p.Files.Write = []Path{"/home/ana/src/app/out"}
		}, nil},
		{"components: ports", func(p *Policy) {
			components(p)
			p.Network.Mode = NetPorts
			p.Network.ConnectTCP = []Port{443}
		}, []string{`components-authority: network.mode: network mode "ports" would give the agent the network directly: in components mode its only sockets reach the components (SR-37)`}},
		{"components: Unix sockets", func(p *Policy) {
			components(p)
			p.Network.UnixSockets = true
		}, []string{`components-authority: network.unix_sockets: in components mode the agent never opens a Unix socket (SR-37)`}},
		{"wrapper: ports and Unix sockets", func(p *Policy) {
			p.Network.Mode = NetPorts
			p.Network.ConnectTCP = []Port{443}
			p.Network.UnixSockets = true
		}, nil},

		{"protected outside the workspace", func(p *Policy) {
			components(p)
			p.Files.Protected = []Path{"/home/ana/src/app2/.env"}
		}, []string{`protected-outside-workspace: files.protected: protected path "/home/ana/src/app2/.env" is not beneath the workspace "/home/ana/src/app": only the workspace is brokered by the fs component`}},

		{"env passed and set", func(p *Policy) { p.Env.Pass = []EnvName{"CI"}; p.Env.Set = EnvSet{"CI": "1"} }, []string{
			`env-pass-and-set: env.set: "CI" is both passed and set: give it one value (SR-13)`}},
		{"env passed and set, different case", func(p *Policy) { p.Env.Pass = []EnvName{"ci"}; p.Env.Set = EnvSet{"CI": "1"} }, nil},

		{"allowed and denied", func(p *Policy) { proxy(p); p.Network.Deny = []Domain{"example.com"} }, []string{
			`allow-and-deny: network.deny: "example.com" is both allowed and denied: list it once (SR-13)`}},
		{"wildcard allowed, name denied", func(p *Policy) {
			proxy(p)
			p.Network.Allow = []Domain{"*.github.com"}
			p.Network.Deny = []Domain{"gist.github.com"}
		}, nil},

		{"auto and approval", func(p *Policy) {
			components(p)
			p.Commands.Auto = []Command{"go test", "git push"}
			p.Commands.Approval = []Command{"git push"}
		}, []string{`auto-and-approval: commands.approval: "git push" is both automatic and needs approval: list it once (SR-13)`}},
		{"auto prefix of approval", func(p *Policy) {
			components(p)
			p.Commands.Auto = []Command{"git"}
			p.Commands.Approval = []Command{"git push"}
		}, nil},

		{"secrets without proxy", func(p *Policy) {
			components(p)
			p.Network.Mode = NetPorts
			p.Network.ConnectTCP = []Port{443}
			p.Secrets = []Secret{secret("a"), secret("b")}
		}, []string{
			`components-authority: network.mode: network mode "ports" would give the agent the network directly: in components mode its only sockets reach the components (SR-37)`,
			`secrets-need-proxy: secrets[0]: secrets are injected by the proxy, but network mode is "ports"`}},

		{"a secret host in two rules", func(p *Policy) {
			components(p)
			proxy(p)
			a, b := secret("a"), secret("b")
			b.Hosts = append(b.Hosts, "*.example.com", a.Hosts[0])
			a.Hosts = append(a.Hosts, "*.example.com")
			p.Secrets = []Secret{a, b}
		}, []string{
			`secret-host-in-two-rules: secrets[1].hosts: host "*.example.com" is in two [[secrets]] rules, "a" and "b": only one secret is sent to a host`,
			`secret-host-in-two-rules: secrets[1].hosts: host "a.api.example.com" is in two [[secrets]] rules, "a" and "b": only one secret is sent to a host`}},
		{"secret hosts nested across rules", func(p *Policy) {
			components(p)
			proxy(p)
			a, b := secret("a"), secret("b")
			a.Hosts = []Domain{"*.example.com"}
			b.Hosts = []Domain{"*.api.example.com", "x.api.example.com"}
			p.Secrets = []Secret{a, b}
		}, nil},

		{"processes 0", func(p *Policy) { p.Limits.Processes = 0 }, []string{
			`limit-range: limits.processes: 0 is below the minimum 1: a zero or negative process limit is not "unlimited"; fork bombs must stay bounded (SR-04)`}},
		{"processes 1", func(p *Policy) { p.Limits.Processes = 1 }, nil},
		{"open_files 15", func(p *Policy) { p.Limits.OpenFiles = 15 }, []string{
			`limit-range: limits.open_files: 15 is below the minimum 16: a program cannot start with fewer descriptors`}},
		{"open_files 16", func(p *Policy) { p.Limits.OpenFiles = 16 }, nil},
		{"tmp_size 1MiB-1", func(p *Policy) { p.Limits.TmpSize = MiB - 1 }, []string{
			`limit-range: limits.tmp_size: 1048575B is below the minimum 1MiB: the private /tmp needs at least 1MiB`}},
		{"tmp_size 1MiB", func(p *Policy) { p.Limits.TmpSize = MiB }, nil},
		{"cpu_time 1500ms", func(p *Policy) { p.Limits.CPUTime = Duration(1500e6) }, []string{
			`limit-range: limits.cpu_time: 1500ms is not whole seconds: RLIMIT_CPU counts seconds`}},
		{"cpu_time 1s", func(p *Policy) { p.Limits.CPUTime = Duration(1e9) }, nil},
		{"memory and file_size 0", func(p *Policy) { p.Limits.Memory = 0; p.Limits.FileSize = 0 }, nil},
		{"zero where there is no unlimited", func(p *Policy) {
			components(p)
			p.CodeMode = CodeMode{ToolCalls: 0}
			p.Commands.Timeout = 0
			p.Commands.Output = 0
			p.Backups.Quota = 0
		}, []string{
			`limit-range: code_mode.memory: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: code_mode.stack: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: code_mode.deadline: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: code_mode.output: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: code_mode.script_size: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: commands.timeout: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: commands.output: "0" is not allowed here: this limit has no "unlimited" value`,
			`limit-range: backups.quota: "0" is not allowed here: this limit has no "unlimited" value`,
		}},
		{"tool_calls -1", func(p *Policy) { p.CodeMode.ToolCalls = -1 }, []string{
			`limit-range: code_mode.tool_calls: -1 is below the minimum 0: a budget cannot be negative`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			tt.change(&p)
			eq(t, "problems", validated(&p), tt.want)
		})
	}
}

// Every list names each value once (SR-13): a value listed twice is
// refused in each list, not only in the ones TestValidate spells out.
func TestDuplicatesInEveryList(t *testing.T) {
	lists := map[string]func(p *Policy){
		"files.read":  func(p *Policy) { p.Files.Read = []Path{"/etc", "/etc"} },
		"files.write": func(p *Policy) { p.Files.Write = append(p.Files.Write, p.Files.Write[0]) },
		"files.exec":  func(p *Policy) { p.Files.Exec = append(p.Files.Exec, p.Files.Exec[0]) },
		"files.protected": func(p *Policy) {
			components(p)
			p.Files.Protected = []Path{"/home/ana/src/app/.git", "/home/ana/src/app/.git"}
		},
		"network.connect_tcp":          func(p *Policy) { p.Network.Mode = NetPorts; p.Network.ConnectTCP = []Port{443, 443} },
		"network.bind_tcp":             func(p *Policy) { p.Network.Mode = NetPorts; p.Network.BindTCP = []Port{8080, 8080} },
		"network.allow":                func(p *Policy) { proxy(p); p.Network.Allow = []Domain{"example.com", "example.com"} },
		"network.deny":                 func(p *Policy) { proxy(p); p.Network.Deny = []Domain{"evil.example", "evil.example"} },
		"network.unsafe_allow_private": nil, // TestValidate's "duplicate cidr"
		"env.pass":                     func(p *Policy) { p.Env.Pass = []EnvName{"CI", "CI"} },
		"commands.auto":                func(p *Policy) { components(p); p.Commands.Auto = []Command{"ls", "ls"} },
		"commands.approval":            func(p *Policy) { components(p); p.Commands.Approval = []Command{"rm", "rm"} },
	}
	for key, twice := range lists {
		if twice == nil {
			continue
		}
		t.Run(key, func(t *testing.T) {
			p := base()
			twice(&p)
			var found []string
			for _, pr := range Validate(&p) {
				if pr.Check == "duplicate-entry" {
					found = append(found, pr.Key)
				}
			}
			if len(found) != 1 || found[0] != key {
				t.Errorf("duplicate-entry problems at %q, want one at %s; all: %q", found, key, validated(&p))
			}
		})
	}
}

func TestChecks(t *testing.T) {
	eq(t, "Checks()", Checks(), []string{
		"workspace-required", "duplicate-entry", "path-in-two-lists", "write-exec-overlap", "private-dir",
		"kernel-tree-write", "network-keys", "components-only", "components-authority", "protected-outside-workspace", "env-pass-and-set",
		"allow-and-deny", "auto-and-approval", "secret-complete", "secrets-need-proxy", "secret-host-too-wide", "secret-host-in-two-rules", "limit-range",
	})
	// Validate names the check and its risk on every problem.
	p := base()
	p.Files.Exec = []Path{"/"}
	p.Files.Read = []Path{"/x", "/x"}
	got := Validate(&p)
	var risks []string
	for _, pr := range got {
		risks = append(risks, pr.Check+" "+pr.Risk)
	}
	eq(t, "check and risk", risks, []string{"duplicate-entry SR-13", "write-exec-overlap SR-01"})
	// Checks returns a copy.
	c := Checks()
	c[0] = "changed"
	if slices.Contains(Checks(), "changed") {
		t.Error("Checks() shares its slice")
	}
}

func TestPathContains(t *testing.T) {
	tests := []struct {
		p, q Path
		want bool
	}{
		{"/", "/", true},
		{"/", "/a", true},
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a", "/ab", false},
		{"/a/b", "/a", false},
		{"/a", "/b/a", false},
		{"/a b", "/a b/c", true},
	}
	for _, tt := range tests {
		if got := tt.p.Contains(tt.q); got != tt.want {
			t.Errorf("Path(%q).Contains(%q) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
	}
}

// [code_mode] memory and stack outside what a Code Mode VM accepts are
// refused by the policy check, not first by every script run; the
// bounds themselves pass.
func TestCodeModeLimitRange(t *testing.T) {
	for _, tt := range []struct{ key, value, want string }{
		{"memory", `"1023KiB"`, `4: code_mode.memory: 1023KiB is below the minimum 1MiB: a Code Mode VM refuses a smaller heap`},
		{"stack", `"63KiB"`, `4: code_mode.stack: 63KiB is below the minimum 64KiB: a Code Mode VM refuses a smaller stack`},
		{"stack", `"64MiB"`, `4: code_mode.stack: 67108864 is above the maximum 40960000: a Code Mode VM refuses a larger stack, whose depth the Go runtime's own stack would not bear`},
		{"memory", `"1MiB"`, ""},
		{"stack", `"64KiB"`, ""},
		{"stack", `"40000KiB"`, ""},
	} {
		text := "version = 1\nworkspace.path = \"/w\"\n[code_mode]\n" + tt.key + " = " + tt.value + "\n"
		_, err := Parse("c.toml", []byte(text))
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s = %s: %v", tt.key, tt.value, err)
			}
			continue
		}
		if pe := parseErr(t, "c.toml", []byte(text)); len(pe.Problems) != 1 || pe.Problems[0].String() != tt.want {
			t.Errorf("%s = %s: %v\nwant %s", tt.key, tt.value, pe.Problems, tt.want)
		}
	}
}
