package launcher

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
)

// Host is what this machine can enforce, read once.
type Host struct {
	Kernel   string       `json:"kernel"` // uname release
	Root     bool         `json:"root"`   // euid == 0
	Landlock LandlockInfo `json:"landlock"`
	UserNS   Feature      `json:"user_namespaces"`
	NetNS    Feature      `json:"network_namespaces"`
	PidNS    Feature      `json:"pid_namespaces"`
	MountNS  Feature      `json:"mount_namespaces"`
	Seccomp  SeccompInfo  `json:"seccomp"`
	Cgroup   CgroupInfo   `json:"cgroups"`
}

// Feature is one kernel feature as this process can use it. When Available
// is false, Detail says why and Hint what to change.
type Feature struct {
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

// LandlockInfo is the Landlock ABI of the running kernel and, feature by
// feature, what the launcher can enforce with it.
type LandlockInfo struct {
	ABI    int    `json:"abi"`              // 0 = unavailable
	Errata uint64 `json:"errata,omitempty"` // fixed errata, bit n-1 for erratum n
	Feature
	Features []LandlockFeature `json:"features"`
}

// LandlockFeature is one Landlock feature and whether this host enforces it.
type LandlockFeature struct {
	Name     string `json:"name"`
	MinABI   int    `json:"min_abi"`
	Enforced bool   `json:"enforced"`
	Detail   string `json:"detail,omitempty"`
}

// SeccompInfo is seccomp filter support and the libseccomp the launcher is
// linked with.
type SeccompInfo struct {
	Feature
	LibVersion string   `json:"libseccomp_version"`
	Actions    []string `json:"actions"` // /proc/sys/kernel/seccomp/actions_avail
}

// CgroupInfo is the cgroup layout and whether the launcher can create a
// group for the agent's tree.
type CgroupInfo struct {
	Mode string `json:"mode"` // "v2", "hybrid", "v1", "none"
	// Controllers usable for limits: v2 from cgroup.controllers of our own
	// cgroup (or the root); v1 and hybrid from the mounted v1 hierarchies.
	Controllers []string `json:"controllers"`
	// V2Controllers are those of the cgroup2 mount in hybrid mode.
	V2Controllers []string `json:"v2_controllers,omitempty"`
	// Writable reports whether the directories a group would be created in
	// pass access(W_OK). Nothing is created while probing.
	Writable bool `json:"writable"`
	Feature
}

// HasController reports whether controller c is usable for limits.
func (c CgroupInfo) HasController(name string) bool {
	return slices.Contains(c.Controllers, name)
}

// Landlock feature names.
const (
	LandlockFS            = "fs"
	LandlockRefer         = "refer"
	LandlockTruncate      = "truncate"
	LandlockTCP           = "tcp"
	LandlockIoctlDev      = "ioctl-dev"
	LandlockScopeSignal   = "scope-signal"
	LandlockScopeAbstract = "scope-abstract-unix"
	LandlockAudit         = "audit"
	LandlockTSync         = "tsync"
	LandlockUnixSocket    = "fs-unix-socket"
)

// Landlock errata bits (LANDLOCK_CREATE_RULESET_ERRATA); erratum n is bit n-1.
const (
	erratumTCPSockets   = 1 << 0 // ABI 4: TCP rules applied to other stream sockets
	erratumScopedSignal = 1 << 1 // ABI 6: signals between threads of one process denied
	erratumDisconnected = 1 << 2 // ABI 1: rename/link via a disconnected directory
)

// Landlock ABI floors the launcher and Assess rely on.
const (
	maxKnownLandlockABI = 9
	landlockScopeMinABI = 6
	landlockWriteMinABI = 3
	landlockTCPMinABI   = 4
	landlockIoctlMinABI = 5
	landlockUnixSockABI = 9
)

type landlockFeatureDef struct {
	name   string
	abi    int
	kernel string // first mainline release with this ABI, "" if not known here
}

// landlockFeatureDefs lists every Landlock feature the launcher knows, by ABI.
func landlockFeatureDefs() []landlockFeatureDef {
	return []landlockFeatureDef{
		{LandlockFS, 1, "5.13"},            // file access rights: read, write, execute, make, remove
		{LandlockRefer, 2, "5.19"},         // link and rename across directories
		{LandlockTruncate, 3, "6.2"},       // truncate(2) and O_TRUNC
		{LandlockTCP, 4, "6.7"},            // TCP bind and connect by port
		{LandlockIoctlDev, 5, "6.10"},      // ioctl on device files
		{LandlockScopeSignal, 6, "6.12"},   // signals to processes outside the domain
		{LandlockScopeAbstract, 6, "6.12"}, // connecting to abstract Unix sockets outside the domain
		{LandlockAudit, 7, "6.15"},         // audit logging of denials
		{LandlockTSync, 8, ""},             // enforcing on every thread at once
		{LandlockUnixSocket, 9, ""},        // connecting to pathname Unix sockets
	}
}

// kernelForABI names the first kernel with Landlock ABI abi, for hints.
func kernelForABI(abi int) string {
	for _, d := range landlockFeatureDefs() {
		if d.abi == abi && d.kernel != "" {
			return "Linux ≥ " + d.kernel
		}
	}
	return "a newer kernel"
}

// landlockFeatures says, for every known feature, whether a launch on a
// kernel with this ABI and errata enforces it: the kernel has it and the
// launcher applies it (stage 2 handles rights up to maxKnownABI).
//
// Erratum 2 (signals between threads of one process in different domains
// denied) does not stop the scopes: stage 2 restricts itself while it is
// one thread, before the agent exists, so every thread of the agent
// shares its domain. Only an agent that restricts some of its own
// threads further meets it; the feature says so.
func landlockFeatures(abi int, errata uint64) []LandlockFeature {
	defs := landlockFeatureDefs()
	fs := make([]LandlockFeature, 0, len(defs))
	for _, d := range defs {
		f := LandlockFeature{Name: d.name, MinABI: d.abi, Enforced: abi >= d.abi}
		switch {
		case f.Enforced && d.abi > maxKnownABI:
			f.Enforced = false
			f.Detail = fmt.Sprintf("the kernel has it, but this launcher applies Landlock only up to ABI %d", maxKnownABI)
		case f.Enforced && d.name == LandlockScopeSignal && errata&erratumScopedSignal == 0:
			f.Detail = "erratum 2 is not fixed in this kernel: an agent that restricts some of its own threads further cannot signal between them (the launcher's scope itself is not affected)"
		}
		fs = append(fs, f)
	}
	return fs
}

// landlockInfo turns the results of the ABI and errata queries into a report.
// lsm is the content of /sys/kernel/security/lsm, "" if unreadable.
func landlockInfo(abi int, errata uint64, err error, lsm string) LandlockInfo {
	info := LandlockInfo{Errata: errata}
	switch {
	case errors.Is(err, syscall.ENOSYS):
		info.Detail = "kernel built without Landlock (landlock_create_ruleset: ENOSYS)"
		info.Hint = "a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"
	case errors.Is(err, syscall.EOPNOTSUPP):
		info.Detail = "Landlock is built but not enabled at boot (landlock_create_ruleset: EOPNOTSUPP)"
		info.Hint = "add landlock to lsm= on the kernel command line"
		if lsm = strings.TrimSpace(lsm); lsm != "" {
			info.Hint += " (enabled now: " + lsm + ")"
		}
	case err != nil:
		info.Detail = "landlock_create_ruleset: " + errString(err)
		info.Hint = "a container runtime or seccomp filter around the launcher may block Landlock: run the launcher on the host"
	case abi < 1:
		info.Detail = fmt.Sprintf("landlock_create_ruleset returned ABI %d", abi)
		info.Hint = "a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"
	default:
		info.ABI = abi
		info.Available = true
		if abi > maxKnownLandlockABI {
			info.Detail = fmt.Sprintf("ABI %d is newer than this launcher knows; it uses features up to ABI %d", abi, maxKnownLandlockABI)
		}
		if errata&erratumDisconnected == 0 {
			info.Detail = joinNote(info.Detail, "erratum 3 is not fixed: rename or link through a directory moved out of a bind mount can widen access")
			info.Hint = "a kernel with the fix for Landlock erratum 3 (a current stable release)"
		}
	}
	info.Features = landlockFeatures(info.ABI, errata)
	return info
}

// enforced reports whether feature name is enforced.
func (l LandlockInfo) enforced(name string) bool {
	for _, f := range l.Features {
		if f.Name == name {
			return f.Enforced
		}
	}
	return false
}

// userNSSysctls are the knobs that restrict unprivileged user namespaces;
// -1 means the file is absent on this kernel.
type userNSSysctls struct {
	MaxUserNS        int // user.max_user_namespaces
	UnprivClone      int // kernel.unprivileged_userns_clone (Debian)
	AppArmorRestrict int // kernel.apparmor_restrict_unprivileged_userns (Ubuntu ≥ 23.10)
}

// userNSFeature judges user namespaces from the sysctls and from starting a
// child in a new user namespace (spawnErr).
func userNSFeature(root bool, s userNSSysctls, spawnErr error) Feature {
	var hints []string
	if s.MaxUserNS == 0 {
		hints = append(hints, "user.max_user_namespaces is 0: sysctl -w user.max_user_namespaces=15000 (persist it in /etc/sysctl.d)")
	}
	if s.UnprivClone == 0 && !root {
		hints = append(hints, "kernel.unprivileged_userns_clone is 0: sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if s.AppArmorRestrict == 1 && !root {
		hints = append(hints, "kernel.apparmor_restrict_unprivileged_userns is 1: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or give the launcher an AppArmor profile with the userns rule")
	}
	if spawnErr == nil {
		if root {
			return Feature{Available: true, Detail: "not needed as root (namespaces are created directly)"}
		}
		if s.AppArmorRestrict == 1 {
			return Feature{Detail: "a user namespace can be created, but AppArmor strips its capabilities", Hint: strings.Join(hints, "; ")}
		}
		return Feature{Available: true, Detail: "unprivileged user namespaces work"}
	}
	f := Feature{Detail: "creating a user namespace failed: " + errString(spawnErr)}
	if root {
		f.Detail += " (not needed as root)"
	}
	if len(hints) == 0 {
		hints = append(hints, errnoHint(spawnErr, "CONFIG_USER_NS", "user.max_user_namespaces"))
	}
	f.Hint = strings.Join(hints, "; ")
	return f
}

// nsFeature judges a namespace type from starting a child in it. name is
// "network", "pid" or "mount"; config the kernel option; sysctl the limit
// knob; max its value (-1 if unknown).
func nsFeature(root bool, userNS Feature, name, config, sysctl string, max int, spawnErr error) Feature {
	if spawnErr == nil {
		if root {
			return Feature{Available: true}
		}
		return Feature{Available: true, Detail: "inside a new user namespace"}
	}
	if !root && !userNS.Available {
		return Feature{
			Detail: fmt.Sprintf("not root, and user namespaces are unavailable, so no %s namespace can be created", name),
			Hint:   "run as root, or enable unprivileged user namespaces (see user namespaces)",
		}
	}
	f := Feature{Detail: fmt.Sprintf("creating a %s namespace failed: %s", name, errString(spawnErr))}
	if max == 0 {
		f.Hint = fmt.Sprintf("%s is 0: sysctl -w %s=15000", sysctl, sysctl)
	} else {
		f.Hint = errnoHint(spawnErr, config, sysctl)
	}
	return f
}

// errnoHint turns the errno of a failed clone into a hint.
func errnoHint(err error, config, sysctl string) string {
	switch {
	case errors.Is(err, syscall.EINVAL):
		return "the kernel lacks " + config
	case errors.Is(err, syscall.ENOSPC):
		return "the namespace limit is reached: raise " + sysctl
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "not permitted here: a container or seccomp filter around the launcher may forbid namespaces; run on the host, or as root"
	case errors.Is(err, syscall.ENOENT):
		return "no /bin/true or /usr/bin/true to test with"
	}
	return "see the error above; the launcher needs this namespace"
}

// seccompInfo judges seccomp filter support. prctlErr is the result of
// prctl(PR_GET_SECCOMP), mode its value; actions the text of actions_avail.
func seccompInfo(prctlErr error, mode int, actions string, actionsErr error, lib string, libErr error) SeccompInfo {
	info := SeccompInfo{LibVersion: lib, Actions: strings.Fields(actions)}
	switch {
	case prctlErr != nil:
		info.Detail = "prctl(PR_GET_SECCOMP): " + errString(prctlErr)
		info.Hint = "a kernel with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y"
		return info
	case actionsErr != nil:
		info.Detail = "no seccomp filter support: " + errString(actionsErr)
		info.Hint = "a kernel with CONFIG_SECCOMP_FILTER=y"
		return info
	case libErr != nil:
		info.Detail = "libseccomp: " + errString(libErr)
		info.Hint = "build the launcher with cgo and libseccomp ≥ 2.5 (Debian: apt-get install libseccomp-dev)"
		return info
	}
	var missing []string
	for _, a := range []string{"kill_process", "errno"} {
		if !slices.Contains(info.Actions, a) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		info.Detail = "the kernel lacks seccomp actions " + strings.Join(missing, ", ")
		info.Hint = "a kernel ≥ 4.14 (SECCOMP_RET_KILL_PROCESS)"
		return info
	}
	info.Available = true
	if mode == 2 {
		info.Detail = "this process already runs under a seccomp filter; the launcher's filter stacks on it"
	}
	return info
}

func errString(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Sprintf("%v (%s)", err, errnoName(errno))
	}
	return err.Error()
}

// errnoName names the errnos the probes can meet.
func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.ENOENT:
		return "ENOENT"
	case syscall.EACCES:
		return "EACCES"
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.ENOSYS:
		return "ENOSYS"
	case syscall.EOPNOTSUPP:
		return "EOPNOTSUPP"
	case syscall.EROFS:
		return "EROFS"
	}
	return fmt.Sprintf("errno %d", int(e))
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	return a + "; " + b
}
