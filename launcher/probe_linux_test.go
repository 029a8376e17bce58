package launcher

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestProbeLandlockMatchesKernel(t *testing.T) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	h := Probe()
	if errno != 0 {
		if h.Landlock.ABI != 0 || h.Landlock.Available {
			t.Errorf("kernel says %v, Probe says ABI %d available %v", errno, h.Landlock.ABI, h.Landlock.Available)
		}
		requireFeature(t, "Landlock", false, errno.Error())
	}
	if h.Landlock.ABI != int(r) {
		t.Errorf("Probe ABI %d, landlock_create_ruleset says %d", h.Landlock.ABI, r)
	}
	if !h.Landlock.Available {
		t.Errorf("ABI %d but not Available: %+v", h.Landlock.ABI, h.Landlock.Feature)
	}
	e, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
	if errno == 0 && h.Landlock.Errata != uint64(e) {
		t.Errorf("Probe errata %#x, kernel says %#x", h.Landlock.Errata, e)
	}
	for _, f := range h.Landlock.Features {
		want := f.MinABI <= h.Landlock.ABI && f.MinABI <= maxKnownABI
		if f.Enforced != want {
			t.Errorf("%s (ABI %d) enforced = %v on ABI %d errata %#x", f.Name, f.MinABI, f.Enforced, h.Landlock.ABI, h.Landlock.Errata)
		}
	}
}

func TestProbeIdentity(t *testing.T) {
	h := Probe()
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	if want := unix.ByteSliceToString(u.Release[:]); h.Kernel != want {
		t.Errorf("Kernel = %q, want %q", h.Kernel, want)
	}
	if h.Root != (os.Geteuid() == 0) {
		t.Errorf("Root = %v with euid %d", h.Root, os.Geteuid())
	}
}

func TestProbeNamespaces(t *testing.T) {
	h := Probe()
	for _, ns := range []struct {
		name string
		f    Feature
	}{{"user namespaces", h.UserNS}, {"network namespaces", h.NetNS}, {"pid namespaces", h.PidNS}, {"mount namespaces", h.MountNS}} {
		t.Run(ns.name, func(t *testing.T) {
			requireFeature(t, ns.name, ns.f.Available, fmt.Sprintf("%s (hint: %s)", ns.f.Detail, ns.f.Hint))
			if ns.f.Hint != "" {
				t.Errorf("available with a hint: %q", ns.f.Hint)
			}
		})
	}
}

func TestSpawnInNamespacesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := spawnInNamespaces(ctx, os.Geteuid() == 0, unix.CLONE_NEWNET)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want the time-out error", err)
	}
	// Control: the same spawn with a live context succeeds where netns exist.
	err = spawnInNamespaces(context.Background(), os.Geteuid() == 0, unix.CLONE_NEWNET)
	requireFeature(t, "network namespaces", err == nil, fmt.Sprint(err))
}

func TestProbeSeccomp(t *testing.T) {
	h := Probe()
	requireFeature(t, "seccomp filters", h.Seccomp.Available, h.Seccomp.Detail)
	if !regexp.MustCompile(`^2\.\d+\.\d+$`).MatchString(h.Seccomp.LibVersion) {
		t.Errorf("LibVersion = %q, want 2.x.y", h.Seccomp.LibVersion)
	}
	b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(string(b)); !slices.Equal(h.Seccomp.Actions, want) {
		t.Errorf("Actions = %q, want %q", h.Seccomp.Actions, want)
	}
	for _, a := range []string{"kill_process", "errno"} {
		if !slices.Contains(h.Seccomp.Actions, a) {
			t.Errorf("available without action %s", a)
		}
	}
}

func TestProbeCgroups(t *testing.T) {
	h := Probe()
	var st unix.Statfs_t
	err := unix.Statfs("/sys/fs/cgroup", &st)
	switch {
	case err != nil:
		if h.Cgroup.Mode != CgroupNone && !strings.Contains(h.Cgroup.Detail, "cgroup2 at") {
			t.Errorf("no /sys/fs/cgroup (%v), yet mode %q: %s", err, h.Cgroup.Mode, h.Cgroup.Detail)
		}
	case st.Type == unix.CGROUP2_SUPER_MAGIC:
		if h.Cgroup.Mode != CgroupV2 {
			t.Errorf("/sys/fs/cgroup is cgroup2, mode %q", h.Cgroup.Mode)
		}
	case st.Type == unix.TMPFS_MAGIC:
		if h.Cgroup.Mode != CgroupV1 && h.Cgroup.Mode != CgroupHybrid {
			t.Errorf("/sys/fs/cgroup is tmpfs, mode %q", h.Cgroup.Mode)
		}
	}
	requireFeature(t, "usable cgroups", h.Cgroup.Available, fmt.Sprintf("mode %s: %s", h.Cgroup.Mode, h.Cgroup.Detail))
	if !h.Cgroup.HasController("pids") || !h.Cgroup.Writable {
		t.Errorf("available without pids or writability: %+v", h.Cgroup)
	}
}

func TestProbeReport(t *testing.T) {
	var b strings.Builder
	Probe().Text(&b)
	t.Logf("\n%s", b.String())
	if !strings.HasPrefix(b.String(), "kernel ") || !strings.HasSuffix(b.String(), SettingCaveat+"\n") {
		t.Errorf("report does not start with the kernel and end with the caveat:\n%s", b.String())
	}
}
