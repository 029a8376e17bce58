package launcher

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// probeTimeout bounds the whole probe; the namespace children are killed
// when it passes.
const probeTimeout = 3 * time.Second

// Probe reads what this host can enforce. It never fails: a feature it
// cannot determine is reported unavailable, with the reason in Detail.
func Probe() Host {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return probe(ctx)
}

func probe(ctx context.Context) Host {
	h := Host{Kernel: kernelRelease(), Root: os.Geteuid() == 0}
	h.Landlock = probeLandlock()
	h.UserNS, h.NetNS, h.PidNS, h.MountNS = probeNamespaces(ctx, h.Root)
	h.Seccomp = probeSeccomp()
	h.Cgroup = probeCgroups(h.Root)
	return h
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown (uname: " + err.Error() + ")"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// landlockQuery calls landlock_create_ruleset(NULL, 0, flags), which returns
// the ABI version or the errata bits instead of a ruleset.
func landlockQuery(flags uintptr) (uintptr, error) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, flags)
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

func probeLandlock() LandlockInfo {
	abi, err := landlockQuery(unix.LANDLOCK_CREATE_RULESET_VERSION)
	var errata uintptr
	if err == nil {
		// EINVAL: a kernel older than the errata query; no errata fixed.
		errata, _ = landlockQuery(unix.LANDLOCK_CREATE_RULESET_ERRATA)
	}
	lsm, _ := os.ReadFile("/sys/kernel/security/lsm")
	return landlockInfo(int(abi), uint64(errata), err, string(lsm))
}

// readSysctl reads an integer from /proc/sys; -1 if absent or unreadable.
func readSysctl(name string) int {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

func probeNamespaces(ctx context.Context, root bool) (user, net, pid, mnt Feature) {
	s := userNSSysctls{
		MaxUserNS:        readSysctl("user/max_user_namespaces"),
		UnprivClone:      readSysctl("kernel/unprivileged_userns_clone"),
		AppArmorRestrict: readSysctl("kernel/apparmor_restrict_unprivileged_userns"),
	}
	user = userNSFeature(root, s, spawnInNamespaces(ctx, root, unix.CLONE_NEWUSER))
	try := func(flag uintptr, name, config, sysctl string) Feature {
		var err error
		if root || user.Available {
			err = spawnInNamespaces(ctx, root, flag)
		} else {
			err = errors.New("no user namespace")
		}
		return nsFeature(root, user, name, config, sysctl, readSysctl(strings.ReplaceAll(sysctl, ".", "/")), err)
	}
	net = try(unix.CLONE_NEWNET, "network", "CONFIG_NET_NS", "user.max_net_namespaces")
	pid = try(unix.CLONE_NEWPID, "pid", "CONFIG_PID_NS", "user.max_pid_namespaces")
	mnt = try(unix.CLONE_NEWNS, "mount", "CONFIG_NAMESPACES", "user.max_mnt_namespaces")
	return user, net, pid, mnt
}

// spawnInNamespaces starts /bin/true in new namespaces (flags), inside a new
// user namespace mapping our uid and gid to 0 when not root, and waits for
// it. The calling process never unshares: it is multi-threaded.
func spawnInNamespaces(ctx context.Context, root bool, flags uintptr) error {
	truePath := ""
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			truePath = p
			break
		}
	}
	if truePath == "" {
		return &os.PathError{Op: "stat", Path: "/bin/true", Err: syscall.ENOENT}
	}
	cmd := exec.CommandContext(ctx, truePath)
	cmd.Env = []string{}
	cmd.Dir = "/"
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if !root {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	cmd.SysProcAttr = attr
	err := cmd.Run() // Run reaps the child, also when ctx kills it
	if ctxErr := ctx.Err(); ctxErr != nil && err != nil {
		return errors.New("timed out starting a child in the namespace")
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err // the clone errno
	}
	return err
}

func probeSeccomp() SeccompInfo {
	mode, prctlErr := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	actions, actionsErr := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	lib, libErr := libseccompVersion()
	return seccompInfo(prctlErr, mode, string(actions), actionsErr, lib, libErr)
}

func probeCgroups(root bool) CgroupInfo {
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	self, _ := os.ReadFile("/proc/self/cgroup")
	l := classifyCgroups(string(mountinfo), string(self))
	if err != nil {
		// Without a mount table, statfs still tells a pure v2 host.
		var st unix.Statfs_t
		if unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			l = cgroupLayout{Mode: CgroupV2, V2: &cgroupMount{Point: "/sys/fs/cgroup", Root: "/"}}
		}
	}
	var v2 []string
	if l.V2 != nil {
		b, err := os.ReadFile(l.V2.dir() + "/cgroup.controllers")
		if err != nil {
			b, _ = os.ReadFile(l.V2.Point + "/cgroup.controllers")
		}
		v2 = strings.Fields(string(b))
	}
	notWritable := map[string]error{}
	for _, d := range l.groupDirs() {
		if err := unix.Faccessat(unix.AT_FDCWD, d, unix.W_OK, unix.AT_EACCESS); err != nil {
			notWritable[d] = err
		}
	}
	return cgroupInfo(l, root, v2, notWritable)
}
