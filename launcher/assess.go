package launcher

import (
	"fmt"
	"strings"

	"github.com/pinfold/pinfold/policy"
)

// Verdict is what would happen to one Boundary on this host.
type Verdict string

// Verdicts.
const (
	Applied   Verdict = "applied"    // enforced as the policy asks
	Refused   Verdict = "refused"    // cannot be applied here: the launch is refused
	Degraded  Verdict = "degraded"   // applied by a weaker mechanism; Detail says what is not covered
	NotNeeded Verdict = "not-needed" // the policy or the host makes it unnecessary
)

// Assessment is one Boundary the policy asks for and its verdict here.
type Assessment struct {
	Boundary string  `json:"boundary"`
	Verdict  Verdict `json:"verdict"`
	Detail   string  `json:"detail"`
	Hint     string  `json:"hint,omitempty"`
	Risk     string  `json:"risk,omitempty"` // register entry at stake, e.g. "SR-03"
}

// Refuses reports whether any assessment refuses the launch.
func Refuses(as []Assessment) bool {
	for _, a := range as {
		if a.Verdict == Refused {
			return true
		}
	}
	return false
}

// Assess says which Boundaries p would get on host h and which would be
// refused, and why, in the order stage 2 applies them. A nil p is the
// default policy.
func Assess(p *policy.Policy, h Host) []Assessment {
	if p == nil {
		d := policy.Default()
		p = &d
	}
	var as []Assessment
	add := func(a Assessment) { as = append(as, a) }
	ll := h.Landlock

	if p.Mode == policy.ModeComponents {
		if h.Root {
			// net runs only in proxy mode: name what the session starts.
			roles := "kms, fs and bash"
			if p.Network.Mode == policy.NetProxy {
				roles = "kms, fs, bash and net"
			}
			add(Assessment{Boundary: "components", Verdict: Applied, Detail: roles + " run as separate processes under their own uids; the agent itself writes no path (fs writes the workspace for it)"})
		} else {
			add(Assessment{Boundary: "components", Verdict: Refused, Detail: "components mode needs root: each component runs under its own uid", Hint: "run as root"})
		}
	}

	if a, ok := netComponentFloor(p, ll); ok {
		add(a)
	}

	// 1. Namespaces.
	switch {
	case h.Root:
		add(Assessment{Boundary: "user namespace", Verdict: NotNeeded, Detail: "root creates the namespaces directly and runs the agent under a throwaway uid"})
	case h.UserNS.Available:
		add(Assessment{Boundary: "user namespace", Verdict: Applied, Detail: "unprivileged: mount, pid and network namespaces are created inside a new user namespace"})
	default:
		add(Assessment{Boundary: "user namespace", Verdict: Refused, Detail: "not root, and user namespaces are unavailable: " + h.UserNS.Detail, Hint: h.UserNS.Hint})
	}
	add(nsAssessment("mount namespace", h.MountNS, "host mounts read-only and nosuid, write paths noexec, private /tmp and /dev/shm, fresh /proc, Unix-socket directories hidden (SR-08)"))
	add(nsAssessment("pid namespace", h.PidNS, "the agent sees and signals only its own tree, which dies with it"))
	add(assessNetwork(p, h))
	add(assessUnixSockets(p, h))

	// 4. Resource limits.
	add(Assessment{Boundary: "rlimits", Verdict: Applied, Detail: fmt.Sprintf("open files %d, file size %s, core 0, cpu time %s",
		p.Limits.OpenFiles, orUnlimited(p.Limits.FileSize), orUnlimited(p.Limits.CPUTime))})
	add(assessMemory(p, h))
	add(assessProcesses(p, h))

	// 5. Identity.
	if h.Root {
		add(Assessment{Boundary: "uid and capabilities", Verdict: Applied, Detail: "throwaway uid and gid, no supplementary groups, every capability set cleared"})
	} else {
		add(Assessment{Boundary: "uid and capabilities", Verdict: Applied, Detail: "the person's uid; every capability set cleared"})
	}
	add(Assessment{Boundary: "no_new_privs", Verdict: Applied, Detail: "set-uid bits and file capabilities cannot raise privileges"})

	// 6. Landlock.
	add(assessLandlockFiles(p, ll))
	add(assessIoctl(p, ll))
	add(assessScoping(p, h))

	// 7–9.
	add(Assessment{Boundary: "close fds", Verdict: Applied, Detail: "every file descriptor above 2 is closed before exec"})
	if h.Seccomp.Available {
		add(Assessment{Boundary: "seccomp", Verdict: Applied, Detail: "filter with libseccomp " + h.Seccomp.LibVersion + ": ptrace, mount, bpf, keyctl, io_uring, new namespaces, MPTCP and more denied"})
	} else {
		add(Assessment{Boundary: "seccomp", Verdict: Refused, Detail: "seccomp filters are unavailable: " + h.Seccomp.Detail, Hint: h.Seccomp.Hint})
	}
	add(assessEnv(p))
	return as
}

// assessEnv says what the agent's environment holds: the policy's
// variables, and what the launcher sets itself (BuildPlan, the
// components' AgentEnv), none of it copied from its own environment.
func assessEnv(p *policy.Policy) Assessment {
	d := fmt.Sprintf("%d variables passed, %d set, nothing else inherited", len(p.Env.Pass), len(p.Env.Set))
	// A passed name the launcher's environment lacks gives nothing.
	var own []string
	if _, set := p.Env.Set["PATH"]; !set {
		own = append(own, "PATH ("+defaultPath+")")
	}
	if _, set := p.Env.Set["HOME"]; !set {
		own = append(own, "HOME (a private directory)")
	}
	if len(own) > 0 {
		d += "; the launcher sets " + strings.Join(own, " and ") + " when the policy gives none"
	}
	if p.Network.Mode == policy.NetProxy {
		d += "; the proxy's address in HTTP_PROXY and the like"
	}
	if p.Mode == policy.ModeComponents {
		d += "; the session's PINFOLD_ variables"
	}
	return Assessment{Boundary: "environment", Verdict: Applied, Detail: d}
}

// netComponentFloor refuses proxy mode in components mode where the net
// component, which confines itself with Landlock TCP rules so that it
// cannot bind, cannot (ConfineComponent): refused before anything starts,
// not a session whose net exits under a running agent (SR-24).
func netComponentFloor(p *policy.Policy, ll LandlockInfo) (Assessment, bool) {
	if p.Mode != policy.ModeComponents || p.Network.Mode != policy.NetProxy || ll.enforced(LandlockTCP) {
		return Assessment{}, false
	}
	return Assessment{Boundary: "net component", Verdict: Refused,
		Detail: fmt.Sprintf("the net component confines itself with Landlock TCP rules (ABI ≥ %d); have ABI %d", landlockTCPMinABI, ll.ABI),
		Hint:   kernelForABI(landlockTCPMinABI) + `, or network mode "none"`}, true
}

func nsAssessment(name string, f Feature, what string) Assessment {
	if f.Available {
		return Assessment{Boundary: name, Verdict: Applied, Detail: what}
	}
	return Assessment{Boundary: name, Verdict: Refused, Detail: f.Detail, Hint: f.Hint}
}

func assessNetwork(p *policy.Policy, h Host) Assessment {
	a := Assessment{Boundary: "network"}
	abi := h.Landlock.ABI
	switch p.Network.Mode {
	case policy.NetPorts:
		if h.Landlock.enforced(LandlockTCP) {
			a.Verdict = Applied
			a.Detail = fmt.Sprintf("host network; Landlock allows TCP connect to ports %s and bind to ports %s only, on any host (SD-03); UDP is not covered", ports(p.Network.ConnectTCP), ports(p.Network.BindTCP))
			a.Risk = "SD-04"
		} else {
			a.Verdict = Refused
			a.Detail = fmt.Sprintf("ports mode needs Landlock TCP rules (ABI ≥ %d), have ABI %d", landlockTCPMinABI, abi)
			a.Hint = kernelForABI(landlockTCPMinABI) + ", or network mode \"none\" or \"proxy\""
		}
	case policy.NetProxy:
		if h.NetNS.Available {
			a.Verdict = Applied
			a.Detail = "network namespace whose only way out is the proxy's listener on 127.0.0.1"
		} else {
			a.Verdict = Refused
			a.Detail = "proxy mode needs a network namespace (the proxy's listener is placed inside it): " + h.NetNS.Detail
			a.Hint = h.NetNS.Hint
		}
	default: // none
		switch {
		case h.NetNS.Available:
			a.Verdict = Applied
			a.Detail = "empty network namespace: loopback only"
		case h.Landlock.enforced(LandlockTCP):
			a.Verdict = Degraded
			a.Detail = fmt.Sprintf("no network namespace (%s); instead Landlock denies every TCP bind and connect (ABI %d) and seccomp every socket family but Unix and netlink, so nothing reaches the network, but the agent has no loopback either", h.NetNS.Detail, abi)
			a.Hint = h.NetNS.Hint
			a.Risk = "SR-03"
		default:
			a.Verdict = Refused
			a.Detail = fmt.Sprintf("no network namespace (%s) and no Landlock TCP rules (ABI %d < %d): nothing would keep the agent off the network", h.NetNS.Detail, abi, landlockTCPMinABI)
			// Either way out: the namespace back, or a kernel with TCP rules.
			a.Hint = joinNote(h.NetNS.Hint, kernelForABI(landlockTCPMinABI)+" (Landlock TCP rules)")
			a.Risk = "SR-03"
		}
	}
	return a
}

func assessUnixSockets(p *policy.Policy, h Host) Assessment {
	a := Assessment{Boundary: "unix sockets", Risk: "SR-08"}
	switch {
	case !p.Network.UnixSockets && h.Seccomp.Available:
		a.Verdict = Applied
		a.Detail = "seccomp denies socket(AF_UNIX) and datagram socketpairs; stream and seqpacket socketpairs stay allowed"
	case !p.Network.UnixSockets:
		a.Verdict = Refused
		a.Detail = "denying socket(AF_UNIX) needs seccomp, which is unavailable"
		a.Hint = h.Seccomp.Hint
	case h.Landlock.enforced(LandlockUnixSocket):
		a.Verdict = Applied
		a.Detail = fmt.Sprintf("allowed by the policy; Landlock checks connecting to pathname sockets against the file rules (ABI %d)", h.Landlock.ABI)
	default:
		a.Verdict = Degraded
		why := fmt.Sprintf("Landlock ABI %d < %d does not check pathname sockets", h.Landlock.ABI, landlockUnixSockABI)
		if h.Landlock.ABI >= landlockUnixSockABI {
			why = fmt.Sprintf("this launcher applies Landlock only up to ABI %d", maxKnownABI)
		}
		a.Detail = "allowed by the policy, and " + why + ": any socket file visible to the agent is connectable; the mount namespace hides /run, /var/run and /tmp/.X11-unix unless listed"
		a.Hint = "set unix_sockets = false unless the agent needs them"
	}
	return a
}

func assessMemory(p *policy.Policy, h Host) Assessment {
	a := Assessment{Boundary: "memory limit"}
	switch {
	case p.Limits.Memory == 0:
		a.Verdict = NotNeeded
		a.Detail = "the policy sets no memory limit"
	case h.Root && h.Cgroup.Writable && h.Cgroup.HasController("memory"):
		a.Verdict = Applied
		a.Detail = fmt.Sprintf("cgroup memory limit %s for the agent's whole tree (%s)", p.Limits.Memory, h.Cgroup.Mode)
	default:
		a.Verdict = Degraded
		a.Detail = fmt.Sprintf("RLIMIT_AS %s per process: it counts address space, not memory, and does not bound the tree", p.Limits.Memory)
		a.Risk = "SD-05"
		if h.Root {
			a.Detail = "no usable cgroup memory controller; " + a.Detail
			a.Hint = h.Cgroup.Hint
		} else {
			a.Hint = "run as root for a cgroup memory limit"
		}
	}
	return a
}

func assessProcesses(p *policy.Policy, h Host) Assessment {
	a := Assessment{Boundary: "process limit"}
	switch {
	case p.Limits.Processes == 0:
		a.Verdict = NotNeeded
		a.Detail = "the policy sets no process limit"
	case h.Root && h.Cgroup.Writable && h.Cgroup.HasController("pids"):
		a.Verdict = Applied
		a.Detail = fmt.Sprintf("cgroup pids limit %d for the agent's whole tree (%s)", p.Limits.Processes, h.Cgroup.Mode)
	case h.Root:
		a.Verdict = Refused
		a.Detail = "as root the process limit needs a usable cgroup pids controller, and RLIMIT_NPROC does not bind root: " + h.Cgroup.Detail
		a.Hint = h.Cgroup.Hint
		a.Risk = "SR-04"
	default:
		a.Verdict = Degraded
		a.Detail = fmt.Sprintf("RLIMIT_NPROC %d: it counts processes per uid, not the agent's tree", p.Limits.Processes)
		a.Hint = "run as root for a cgroup pids limit"
	}
	return a
}

func assessLandlockFiles(p *policy.Policy, ll LandlockInfo) Assessment {
	a := Assessment{Boundary: "landlock files"}
	writes := len(p.Files.Write)
	if p.Mode == policy.ModeComponents {
		writes = 0 // the agent's policy has none: fs holds them (agentPolicy)
	}
	counts := fmt.Sprintf("read %d, write %d, exec %d paths; everything else denied", len(p.Files.Read), writes, len(p.Files.Exec))
	switch {
	case !ll.enforced(LandlockFS):
		a.Verdict = Refused
		a.Detail = "Landlock is unavailable: " + ll.Detail
		a.Hint = ll.Hint
	case len(p.Files.Write) > 0 && ll.ABI < landlockWriteMinABI:
		a.Verdict = Refused
		a.Detail = fmt.Sprintf("write paths need Landlock ABI ≥ %d so that truncation (ABI 3) and links and renames across directories (refer, ABI 2) are handled; have ABI %d", landlockWriteMinABI, ll.ABI)
		a.Hint = kernelForABI(landlockWriteMinABI)
	default:
		a.Verdict = Applied
		a.Detail = fmt.Sprintf("%s (ABI %d)", counts, ll.ABI)
	}
	return a
}

// devPaths lists the policy's paths that reach device files under /dev.
func devPaths(p *policy.Policy) []string {
	var out []string
	for _, list := range [][]policy.Path{p.Files.Read, p.Files.Write, p.Files.Exec} {
		for _, q := range list {
			if q.Contains("/dev") || policy.Path("/dev").Contains(q) {
				out = append(out, string(q))
			}
		}
	}
	return out
}

func assessIoctl(p *policy.Policy, ll LandlockInfo) Assessment {
	a := Assessment{Boundary: "landlock device ioctl"}
	dev := devPaths(p)
	switch {
	case len(dev) == 0:
		a.Verdict = NotNeeded
		a.Detail = "the policy grants no path under /dev"
	case ll.enforced(LandlockIoctlDev):
		a.Verdict = Applied
		a.Detail = fmt.Sprintf("ioctl on device files under %s denied (ABI %d)", strings.Join(dev, ", "), ll.ABI)
	default:
		a.Verdict = Degraded
		a.Detail = fmt.Sprintf("the policy grants %s, and Landlock ABI %d < %d does not restrict ioctl on device files opened there; seccomp still denies TIOCSTI and TIOCLINUX", strings.Join(dev, ", "), ll.ABI, landlockIoctlMinABI)
		a.Hint = kernelForABI(landlockIoctlMinABI)
	}
	return a
}

func assessScoping(p *policy.Policy, h Host) Assessment {
	a := Assessment{Boundary: "landlock scoping"}
	sig, abs := h.Landlock.enforced(LandlockScopeSignal), h.Landlock.enforced(LandlockScopeAbstract)
	if sig && abs {
		a.Verdict = Applied
		a.Detail = "signals and abstract Unix sockets are scoped to the agent's domain"
		return a
	}
	// Without scoping, what else covers signals and abstract sockets.
	var cover []string
	switch {
	case !h.PidNS.Available:
		cover = append(cover, "nothing keeps signals within the agent's tree")
	case h.Root:
		cover = append(cover, "the pid namespace keeps signals within the agent's tree")
	default:
		// The pid namespace hides pids, not process groups: off a
		// terminal of its own the agent shares the launcher's group,
		// and kill(0, SIG) named every member of the person's uid;
		// seccomp refuses it then (groupKillReaches).
		cover = append(cover, "the pid namespace hides other processes, and off a terminal of its own, where the agent shares the launcher's process group, seccomp refuses kill(0)")
	}
	switch {
	case !p.Network.UnixSockets && h.Seccomp.Available:
		cover = append(cover, "seccomp denies socket(AF_UNIX), so no abstract socket can be reached")
	case p.Network.Mode != policy.NetPorts && h.NetNS.Available:
		cover = append(cover, "abstract sockets are per network namespace, so the host's are out of reach")
	default:
		cover = append(cover, "the host's abstract Unix sockets are reachable")
	}
	a.Verdict = Degraded
	a.Detail = fmt.Sprintf("Landlock ABI %d < %d: no Landlock scoping; ", h.Landlock.ABI, landlockScopeMinABI) + strings.Join(cover, "; ")
	a.Hint = kernelForABI(landlockScopeMinABI) + " (Landlock ABI 6)"
	return a
}

func ports(ps []policy.Port) string {
	if len(ps) == 0 {
		return "(none)"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(uint16(p))
	}
	return strings.Join(s, ", ")
}

// orUnlimited prints a limit, "0" as "unlimited".
func orUnlimited(v fmt.Stringer) string {
	if s := v.String(); s != "0" {
		return s
	}
	return "unlimited"
}
