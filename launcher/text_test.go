package launcher

import (
	"strings"
	"syscall"
	"testing"
)

func TestHostText(t *testing.T) {
	h := fixtureHost(func(h *Host) {
		h.Kernel = "6.18.44"
		h.NetNS = Feature{Detail: "creating a network namespace failed: EPERM", Hint: "run on the host"}
	})
	var b strings.Builder
	h.Text(&b)
	want := `kernel        6.18.44
root          yes (euid 0): cgroups, throwaway uids and components mode are possible
landlock      ABI 7 (fs, refer, truncate, tcp, ioctl-dev, scope-signal, scope-abstract-unix, audit); not enforced: tsync (ABI 8), fs-unix-socket (ABI 9); errata 0x7
user ns       available
network ns    unavailable: creating a network namespace failed: EPERM
              hint: run on the host
pid ns        available
mount ns      available
seccomp       available; libseccomp 2.5.4; actions kill_process errno
cgroups       hybrid; v1 controllers cpu, cpuacct, cpuset, memory, devices, freezer, blkio, pids; cgroup2 at /sys/fs/cgroup/unified with hugetlb; writable
setting       ` + SettingCaveat + "\n"
	if b.String() != want {
		t.Errorf("Text =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHostTextMissing(t *testing.T) {
	h := fixtureHost(func(h *Host) {
		h.Root = false
		h.Landlock = landlockInfo(0, 0, syscall.EOPNOTSUPP, "lockdown,yama")
		h.Landlock.Features = landlockFeatures(7, 0) // erratum 2 note on the scope features
		h.Cgroup = CgroupInfo{Mode: CgroupNone, Feature: Feature{Detail: "no cgroup file system is mounted", Hint: "mount -t cgroup2"}}
	})
	var b strings.Builder
	h.Text(&b)
	for _, want := range []string{
		"root          no: user namespaces, Landlock, seccomp and rlimits; no cgroup limits, no components mode\n",
		"landlock      unavailable: Landlock is built but not enabled at boot (landlock_create_ruleset: EOPNOTSUPP)\n" +
			"              hint: add landlock to lsm= on the kernel command line (enabled now: lockdown,yama)\n",
		"              scope-signal: erratum 2 is not fixed",
		"cgroups       unusable: none; no cgroup file system is mounted\n              hint: mount -t cgroup2\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteAssessment(t *testing.T) {
	as := []Assessment{
		{Boundary: "network", Verdict: Refused, Detail: "no network namespace", Hint: "run on the host", Risk: "SR-03"},
		{Boundary: "memory limit", Verdict: Degraded, Detail: "RLIMIT_AS", Risk: "SD-05"},
		{Boundary: "seccomp", Verdict: Applied, Detail: "filter"},
	}
	var b strings.Builder
	WriteAssessment(&b, as)
	want := `BOUNDARY               VERDICT     DETAIL
network                refused     no network namespace
                                   hint: run on the host
                                   risk: SR-03
memory limit           degraded    RLIMIT_AS
                                   risk: SD-05
seccomp                applied     filter
the launch would be refused here: network cannot be applied
`
	if b.String() != want {
		t.Errorf("WriteAssessment =\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteAssessment(&b, as[1:])
	if !strings.HasSuffix(b.String(), "every Boundary can be applied here; weaker than asked: memory limit\n") {
		t.Errorf("degraded summary missing:\n%s", b.String())
	}
	b.Reset()
	WriteAssessment(&b, as[2:])
	if !strings.HasSuffix(b.String(), "every Boundary the policy asks for is applied here\n") {
		t.Errorf("applied summary missing:\n%s", b.String())
	}
}
