package launcher

import (
	"strings"
	"syscall"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// fixtureHost is a host with every feature (this VM, as root), changed by mods.
func fixtureHost(mods ...func(*Host)) Host {
	h := Host{
		Kernel:   "6.18.44",
		Root:     true,
		Landlock: landlockInfo(7, 7, nil, ""),
		UserNS:   Feature{Available: true},
		NetNS:    Feature{Available: true},
		PidNS:    Feature{Available: true},
		MountNS:  Feature{Available: true},
		Seccomp:  SeccompInfo{Feature: Feature{Available: true}, LibVersion: "2.5.4", Actions: []string{"kill_process", "errno"}},
		Cgroup:   cgroupInfo(classifyCgroups(hybridMountinfo, hybridSelf), true, []string{"hugetlb"}, nil),
	}
	for _, m := range mods {
		m(&h)
	}
	return h
}

func abi(n int) func(*Host) {
	return func(h *Host) { h.Landlock = landlockInfo(n, 7, nil, "") }
}

func noNetNS(h *Host) {
	h.NetNS = Feature{Detail: "creating a network namespace failed: EPERM", Hint: "run on the host"}
}

func unprivileged(h *Host) {
	h.Root = false
	h.Cgroup = cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), false, []string{"memory", "pids"},
		map[string]error{"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope": syscall.EACCES})
}

func pol(mods ...func(*policy.Policy)) *policy.Policy {
	p := policy.Default()
	for _, m := range mods {
		m(&p)
	}
	return &p
}

func find(t *testing.T, as []Assessment, boundary string) Assessment {
	t.Helper()
	for _, a := range as {
		if a.Boundary == boundary {
			return a
		}
	}
	t.Fatalf("no assessment for %q in %+v", boundary, as)
	return Assessment{}
}

func TestAssessFullHost(t *testing.T) {
	want := map[string]Verdict{
		"user namespace": NotNeeded, "mount namespace": Applied, "pid namespace": Applied,
		"network": Applied, "unix sockets": Applied, "rlimits": Applied, "memory limit": Applied,
		"process limit": Applied, "uid and capabilities": Applied, "no_new_privs": Applied,
		"landlock files": Applied, "landlock device ioctl": NotNeeded, "landlock scoping": Applied,
		"close fds": Applied, "seccomp": Applied, "environment": Applied,
	}
	as := Assess(pol(), fixtureHost())
	if len(as) != len(want) {
		t.Errorf("got %d assessments, want %d: %+v", len(as), len(want), as)
	}
	for _, a := range as {
		if want[a.Boundary] != a.Verdict {
			t.Errorf("%s: %s (%s), want %s", a.Boundary, a.Verdict, a.Detail, want[a.Boundary])
		}
	}
	if Refuses(as) {
		t.Error("Refuses = true on a full host")
	}
	// nil is the default policy.
	if nilAs := Assess(nil, fixtureHost()); len(nilAs) != len(as) || nilAs[3] != as[3] {
		t.Errorf("Assess(nil) differs from the default policy: %+v", nilAs)
	}
}

func TestAssess(t *testing.T) {
	write := func(p *policy.Policy) { p.Files.Write = []policy.Path{"/home/ana/src/app"} }
	ports := func(p *policy.Policy) {
		p.Network.Mode = policy.NetPorts
		p.Network.ConnectTCP = []policy.Port{443}
		p.Network.BindTCP = []policy.Port{8080}
	}
	tests := []struct {
		name     string
		p        *policy.Policy
		h        Host
		boundary string
		verdict  Verdict
		risk     string
		detail   string // substring
		hint     string // substring
	}{
		{"none without netns, ABI 3", pol(), fixtureHost(noNetNS, abi(3)), "network", Refused, "SR-03",
			"no Landlock TCP rules (ABI 3 < 4)", "run on the host"},
		// The launch's own probe gives the namespace no hint of its own:
		// the refusal still names the kernel that has TCP rules.
		{"none without netns, ABI 3, launch probe", pol(), fixtureHost(func(h *Host) { h.NetNS = Feature{Detail: "disabled"} }, abi(3)), "network", Refused, "SR-03",
			"no Landlock TCP rules (ABI 3 < 4)", "Linux ≥ 6.7 (Landlock TCP rules)"},
		{"none without netns, ABI 4", pol(), fixtureHost(noNetNS, abi(4)), "network", Degraded, "SR-03",
			"seccomp every socket family but Unix and netlink, so nothing reaches the network", "run on the host"},
		{"none with netns", pol(), fixtureHost(abi(1)), "network", Applied, "", "empty network namespace", ""},
		{"ports with ABI 3", pol(ports), fixtureHost(abi(3)), "network", Refused, "",
			"ports mode needs Landlock TCP rules (ABI ≥ 4), have ABI 3", "Linux ≥ 6.7"},
		{"ports with ABI 4", pol(ports), fixtureHost(abi(4)), "network", Applied, "SD-04",
			"connect to ports 443 and bind to ports 8080 only", ""},
		{"proxy without netns", pol(func(p *policy.Policy) { p.Network.Mode = policy.NetProxy }), fixtureHost(noNetNS), "network", Refused, "",
			"proxy mode needs a network namespace", "run on the host"},
		{"proxy with netns", pol(func(p *policy.Policy) { p.Network.Mode = policy.NetProxy }), fixtureHost(), "network", Applied, "",
			"only way out is the proxy", ""},
		{"root without pids", pol(), fixtureHost(func(h *Host) {
			h.Cgroup = cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), true, []string{"memory"}, nil)
		}), "process limit", Refused, "SR-04", "RLIMIT_NPROC does not bind root", "+pids"},
		{"root with read-only cgroups", pol(), fixtureHost(func(h *Host) {
			h.Cgroup = cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), true, []string{"memory", "pids"},
				map[string]error{"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope": syscall.EACCES})
		}), "process limit", Refused, "SR-04", "not writable", "not writable here"},
		{"root, no processes limit", pol(func(p *policy.Policy) { p.Limits.Processes = 0 }), fixtureHost(func(h *Host) {
			h.Cgroup = CgroupInfo{Mode: CgroupNone}
		}), "process limit", NotNeeded, "", "no process limit", ""},
		{"unprivileged processes", pol(), fixtureHost(unprivileged), "process limit", Degraded, "", "RLIMIT_NPROC 512", "run as root"},
		{"unprivileged memory", pol(), fixtureHost(unprivileged), "memory limit", Degraded, "SD-05", "RLIMIT_AS 4GiB per process", "run as root"},
		{"root without memory controller", pol(), fixtureHost(func(h *Host) {
			h.Cgroup = cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), true, []string{"pids"}, nil)
		}), "memory limit", Degraded, "SD-05", "no usable cgroup memory controller", ""},
		{"no memory limit", pol(func(p *policy.Policy) { p.Limits.Memory = 0 }), fixtureHost(unprivileged), "memory limit", NotNeeded, "", "no memory limit", ""},
		{"components unprivileged", pol(func(p *policy.Policy) { p.Mode = policy.ModeComponents }), fixtureHost(unprivileged),
			"components", Refused, "", "components mode needs root", "run as root"},
		{"components as root", pol(func(p *policy.Policy) { p.Mode = policy.ModeComponents }), fixtureHost(),
			"components", Applied, "", "kms, fs and bash run as separate processes under their own uids; the agent itself writes no path", ""},
		{"components as root, proxy", pol(func(p *policy.Policy) {
			p.Mode = policy.ModeComponents
			p.Network = policy.Network{Mode: policy.NetProxy, Allow: []policy.Domain{"example.com"}}
		}), fixtureHost(),
			"components", Applied, "", "kms, fs, bash and net run", ""},
		{"components, proxy, ABI 3", pol(func(p *policy.Policy) {
			p.Mode = policy.ModeComponents
			p.Network = policy.Network{Mode: policy.NetProxy, Allow: []policy.Domain{"example.com"}}
		}), fixtureHost(abi(3)),
			"net component", Refused, "", "Landlock TCP rules (ABI ≥ 4); have ABI 3", "Linux ≥ 6.7"},
		// The person's files.write is fs's, not the agent's: hello counts
		// the agent's.
		{"components: the agent's write paths", pol(func(p *policy.Policy) {
			p.Mode = policy.ModeComponents
			p.Workspace.Path = "/home/ana/app"
			p.Files.Write = []policy.Path{"/home/ana/app"}
		}), fixtureHost(),
			"landlock files", Applied, "", "write 0,", ""},
		{"unprivileged, userns blocked", pol(), fixtureHost(unprivileged, func(h *Host) {
			h.UserNS = userNSFeature(false, userNSSysctls{15000, -1, 1}, nil)
		}), "user namespace", Refused, "", "AppArmor strips its capabilities", "kernel.apparmor_restrict_unprivileged_userns=0"},
		{"unprivileged, userns works", pol(), fixtureHost(unprivileged), "user namespace", Applied, "", "inside a new user namespace", ""},
		{"mount namespace missing", pol(), fixtureHost(func(h *Host) { h.MountNS = Feature{Detail: "failed", Hint: "h"} }),
			"mount namespace", Refused, "", "failed", "h"},
		{"no landlock", pol(), fixtureHost(func(h *Host) { h.Landlock = landlockInfo(0, 0, syscall.EOPNOTSUPP, "") }),
			"landlock files", Refused, "", "built but not enabled at boot", "add landlock to lsm="},
		{"write paths with ABI 2", pol(write), fixtureHost(abi(2)), "landlock files", Refused, "",
			"write paths need Landlock ABI ≥ 3 so that truncation", "Linux ≥ 6.2"},
		{"write paths with ABI 3", pol(write), fixtureHost(abi(3)), "landlock files", Applied, "", "write 1", ""},
		{"read only with ABI 1", pol(func(p *policy.Policy) { p.Files.Read = []policy.Path{"/usr"} }), fixtureHost(abi(1)),
			"landlock files", Applied, "", "read 1, write 0, exec 0 paths; everything else denied (ABI 1)", ""},
		{"scoping ABI 5", pol(), fixtureHost(abi(5)), "landlock scoping", Degraded, "",
			"Landlock ABI 5 < 6: no Landlock scoping; the pid namespace keeps signals within the agent's tree; seccomp denies socket(AF_UNIX)", "Linux ≥ 6.12"},
		// Stage 2 scopes before the agent has threads: erratum 2 does not
		// weaken the launch (hello notes it on the feature).
		{"scoping ABI 5 unprivileged", pol(), fixtureHost(unprivileged, abi(5)), "landlock scoping", Degraded, "",
			"off a terminal of its own, where the agent shares the launcher's process group, seccomp refuses kill(0)", "Linux ≥ 6.12"},
		{"scoping ABI 7 without erratum 2", pol(), fixtureHost(func(h *Host) { h.Landlock = landlockInfo(7, 1, nil, "") }),
			"landlock scoping", Applied, "", "signals and abstract Unix sockets are scoped", ""},
		// A kernel with ABI 9 checks pathname sockets, but stage 2 applies
		// Landlock only up to ABI 7: allowed Unix sockets stay degraded.
		{"unix sockets allowed, ABI 9", pol(func(p *policy.Policy) { p.Network.UnixSockets = true }), fixtureHost(abi(9)),
			"unix sockets", Degraded, "SR-08", "this launcher applies Landlock only up to ABI 7: any socket file visible", "unix_sockets = false"},
		{"scoping ABI 5, unix sockets allowed, ports mode", pol(ports, func(p *policy.Policy) { p.Network.UnixSockets = true }), fixtureHost(abi(5)),
			"landlock scoping", Degraded, "", "the host's abstract Unix sockets are reachable", "Linux ≥ 6.12 (Landlock ABI 6)"},
		{"scoping ABI 5, unix sockets allowed, netns", pol(func(p *policy.Policy) { p.Network.UnixSockets = true }), fixtureHost(abi(5)),
			"landlock scoping", Degraded, "", "abstract sockets are per network namespace", "Linux ≥ 6.12"},
		{"no seccomp", pol(), fixtureHost(func(h *Host) { h.Seccomp = SeccompInfo{Feature: Feature{Detail: "x", Hint: "CONFIG_SECCOMP_FILTER"}} }),
			"seccomp", Refused, "", "seccomp filters are unavailable", "CONFIG_SECCOMP_FILTER"},
		{"no seccomp: unix sockets", pol(), fixtureHost(func(h *Host) { h.Seccomp = SeccompInfo{Feature: Feature{Detail: "x", Hint: "y"}} }),
			"unix sockets", Refused, "SR-08", "needs seccomp", "y"},
		{"unix sockets allowed, ABI 7", pol(func(p *policy.Policy) { p.Network.UnixSockets = true }), fixtureHost(),
			"unix sockets", Degraded, "SR-08", "ABI 7 < 9 does not check pathname sockets", "unix_sockets = false"},
		{"/dev path with ABI 4", pol(func(p *policy.Policy) { p.Files.Read = []policy.Path{"/dev/null"} }), fixtureHost(abi(4)),
			"landlock device ioctl", Degraded, "", "grants /dev/null, and Landlock ABI 4 < 5", "Linux ≥ 6.10"},
		{"/ read with ABI 5", pol(func(p *policy.Policy) { p.Files.Read = []policy.Path{"/"} }), fixtureHost(abi(5)),
			"landlock device ioctl", Applied, "", "under /", ""},
		{"rlimits", pol(func(p *policy.Policy) { p.Limits.CPUTime = policy.Duration(90e9) }), fixtureHost(),
			"rlimits", Applied, "", "open files 4096, file size 2GiB, core 0, cpu time 90s", ""},
		{"rlimits unlimited", pol(func(p *policy.Policy) { p.Limits.FileSize = 0 }), fixtureHost(),
			"rlimits", Applied, "", "file size unlimited, core 0, cpu time unlimited", ""},
		{"/devices is not /dev", pol(func(p *policy.Policy) { p.Files.Read = []policy.Path{"/devices"} }), fixtureHost(abi(4)),
			"landlock device ioctl", NotNeeded, "", "no path under /dev", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := Assess(tt.p, tt.h)
			a := find(t, as, tt.boundary)
			if a.Verdict != tt.verdict || a.Risk != tt.risk {
				t.Errorf("verdict %s risk %q, want %s %q (%s)", a.Verdict, a.Risk, tt.verdict, tt.risk, a.Detail)
			}
			if !strings.Contains(a.Detail, tt.detail) {
				t.Errorf("Detail = %q, want it to hold %q", a.Detail, tt.detail)
			}
			if !strings.Contains(a.Hint, tt.hint) || tt.hint == "" && a.Hint != "" {
				t.Errorf("Hint = %q, want %q", a.Hint, tt.hint)
			}
			if (a.Verdict == Refused) != Refuses(as) && tt.verdict == Refused {
				t.Error("Refuses disagrees with a refused assessment")
			}
			for _, b := range as {
				if (b.Verdict == Refused || b.Verdict == Degraded) && b.Detail == "" {
					t.Errorf("%s is %s without a Detail", b.Boundary, b.Verdict)
				}
				if b.Verdict == Refused && b.Hint == "" {
					t.Errorf("%s is refused without a Hint", b.Boundary)
				}
			}
		})
	}
}

// kill(0) is refused exactly where it would reach the launcher's group:
// off a terminal of its own, as the person's uid, without Landlock
// signal scoping (ABI 6).
func TestGroupKillReaches(t *testing.T) {
	for _, c := range []struct {
		name   string
		h      Host
		ownTTY bool
		want   bool
	}{
		{"unprivileged, ABI 5, off a terminal", fixtureHost(unprivileged, abi(5)), false, true},
		{"unprivileged, ABI 5, its own terminal", fixtureHost(unprivileged, abi(5)), true, false},
		{"unprivileged, ABI 6", fixtureHost(unprivileged, abi(6)), false, false},
		{"root, ABI 5", fixtureHost(abi(5)), false, false},
	} {
		if got := groupKillReaches(c.h, c.ownTTY); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// As root, kill(0) of the throwaway uid reaches the launcher's group with
// SIGCONT alone, which the kernel allows within a session.
func TestGroupContReaches(t *testing.T) {
	for _, c := range []struct {
		name   string
		h      Host
		ownTTY bool
		want   bool
	}{
		{"root, ABI 5, off a terminal", fixtureHost(abi(5)), false, true},
		{"root, ABI 5, its own terminal", fixtureHost(abi(5)), true, false},
		{"root, ABI 6", fixtureHost(abi(6)), false, false},
		{"unprivileged, ABI 5 (all of kill(0) refused)", fixtureHost(unprivileged, abi(5)), false, false},
	} {
		if got := groupContReaches(c.h, c.ownTTY); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The environment's line names what the launcher sets itself besides
// the policy's variables (PATH and HOME when the policy gives none, the
// proxy's address in proxy mode), as the launch does: it said "nothing
// else" while the agent got HOME=/tmp/home and a default PATH.
func TestAssessEnvironmentSaysWhatTheLauncherSets(t *testing.T) {
	for _, c := range []struct {
		name      string
		p         *policy.Policy
		want, not []string
	}{
		{"default", pol(), []string{"PATH", "HOME"}, []string{"HTTP_PROXY"}},
		{"both set", pol(func(p *policy.Policy) {
			p.Env.Set = policy.EnvSet{"PATH": "/usr/bin", "HOME": "/home/ana"}
		}), nil, []string{"PATH", "HOME", "HTTP_PROXY"}},
		{"proxy", pol(func(p *policy.Policy) { p.Network.Mode = policy.NetProxy }), []string{"HOME", "HTTP_PROXY"}, nil},
	} {
		d := find(t, Assess(c.p, fixtureHost()), "environment").Detail
		for _, w := range c.want {
			if !strings.Contains(d, w) {
				t.Errorf("%s: %q does not name %s, which the launcher sets", c.name, d, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(d, n) {
				t.Errorf("%s: %q names %s, which the launcher does not set here", c.name, d, n)
			}
		}
	}
}
