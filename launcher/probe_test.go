package launcher

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func enforcedNames(fs []LandlockFeature) string {
	var on []string
	for _, f := range fs {
		if f.Enforced {
			on = append(on, f.Name)
		}
	}
	return strings.Join(on, ",")
}

func TestLandlockFeatures(t *testing.T) {
	const allErrata = erratumTCPSockets | erratumScopedSignal | erratumDisconnected
	tests := []struct {
		abi    int
		errata uint64
		want   string
	}{
		{0, 0, ""},
		{1, allErrata, "fs"},
		{2, allErrata, "fs,refer"},
		{3, allErrata, "fs,refer,truncate"},
		{4, allErrata, "fs,refer,truncate,tcp"},
		{5, allErrata, "fs,refer,truncate,tcp,ioctl-dev"},
		{6, allErrata, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix"},
		{7, allErrata, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix,audit"},
		// The kernel has more than stage 2 applies (ABI 7): not enforced.
		{8, allErrata, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix,audit"},
		{9, allErrata, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix,audit"},
		{12, allErrata, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix,audit"},
		// Erratum 2 unfixed: stage 2 scopes anyway (it restricts while it
		// is one thread, so the agent's threads share one domain).
		{6, erratumDisconnected, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix"},
		{7, 0, "fs,refer,truncate,tcp,ioctl-dev,scope-signal,scope-abstract-unix,audit"},
		// Erratum 2 is irrelevant below ABI 6.
		{5, 0, "fs,refer,truncate,tcp,ioctl-dev"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("abi%d/errata%#x", tt.abi, tt.errata), func(t *testing.T) {
			fs := landlockFeatures(tt.abi, tt.errata)
			if got := enforcedNames(fs); got != tt.want {
				t.Errorf("enforced = %q, want %q", got, tt.want)
			}
			if len(fs) != 10 {
				t.Errorf("got %d features, want all 10 listed", len(fs))
			}
			for _, f := range fs {
				if f.Enforced && f.MinABI > tt.abi {
					t.Errorf("%s enforced at ABI %d < its MinABI %d", f.Name, tt.abi, f.MinABI)
				}
				// Erratum 2 is about signals: its note belongs to that
				// scope alone, not to abstract sockets'.
				if noted := strings.Contains(f.Detail, "erratum 2"); noted != (f.Name == LandlockScopeSignal && tt.abi >= 6 && tt.errata&erratumScopedSignal == 0) {
					t.Errorf("%s at ABI %d, errata %#x: erratum 2 noted = %v: %q", f.Name, tt.abi, tt.errata, noted, f.Detail)
				}
			}
		})
	}
}

func TestLandlockFeatureMinABI(t *testing.T) {
	want := map[string]int{"fs": 1, "refer": 2, "truncate": 3, "tcp": 4, "ioctl-dev": 5,
		"scope-signal": 6, "scope-abstract-unix": 6, "audit": 7, "tsync": 8, "fs-unix-socket": 9}
	for _, f := range landlockFeatures(0, 0) {
		if want[f.Name] != f.MinABI {
			t.Errorf("%s: MinABI %d, want %d", f.Name, f.MinABI, want[f.Name])
		}
		delete(want, f.Name)
	}
	if len(want) > 0 {
		t.Errorf("features missing from the table: %v", want)
	}
}

func TestLandlockInfo(t *testing.T) {
	tests := []struct {
		name       string
		abi        int
		errata     uint64
		err        error
		lsm        string
		wantABI    int
		wantAvail  bool
		wantDetail string
		wantHint   string
	}{
		{"enosys", 0, 0, syscall.ENOSYS, "", 0, false, "kernel built without Landlock", "a kernel ≥ 5.13 with CONFIG_SECURITY_LANDLOCK=y"},
		{"eopnotsupp", 0, 0, syscall.EOPNOTSUPP, "lockdown,capability,yama\n", 0, false, "built but not enabled at boot",
			"add landlock to lsm= on the kernel command line (enabled now: lockdown,capability,yama)"},
		{"eperm", 0, 0, syscall.EPERM, "", 0, false, "landlock_create_ruleset: operation not permitted (EPERM)", "run the launcher on the host"},
		{"abi7", 7, 7, nil, "", 7, true, "", ""},
		{"abi3 no errata query", 3, 0, nil, "", 3, true, "erratum 3 is not fixed", "erratum 3"},
		{"abi12", 12, 7, nil, "", 12, true, "ABI 12 is newer than this launcher knows", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := landlockInfo(tt.abi, tt.errata, tt.err, tt.lsm)
			if got.ABI != tt.wantABI || got.Available != tt.wantAvail {
				t.Errorf("ABI %d available %v, want %d %v", got.ABI, got.Available, tt.wantABI, tt.wantAvail)
			}
			if !strings.Contains(got.Detail, tt.wantDetail) || (tt.wantDetail == "" && got.Detail != "") {
				t.Errorf("Detail = %q, want it to hold %q", got.Detail, tt.wantDetail)
			}
			if !strings.Contains(got.Hint, tt.wantHint) || (tt.wantHint == "" && got.Hint != "") {
				t.Errorf("Hint = %q, want it to hold %q", got.Hint, tt.wantHint)
			}
			if !got.Available && enforcedNames(got.Features) != "" {
				t.Errorf("unavailable Landlock enforces %q", enforcedNames(got.Features))
			}
		})
	}
}

func TestUserNSFeature(t *testing.T) {
	open := userNSSysctls{MaxUserNS: 15000, UnprivClone: -1, AppArmorRestrict: -1}
	tests := []struct {
		name      string
		root      bool
		s         userNSSysctls
		err       error
		wantAvail bool
		wantHint  string // substring; "" means no hint
	}{
		{"works unprivileged", false, open, nil, true, ""},
		{"works as root", true, open, nil, true, ""},
		{"max zero", false, userNSSysctls{0, -1, -1}, syscall.ENOSPC, false, "sysctl -w user.max_user_namespaces=15000"},
		{"debian knob", false, userNSSysctls{15000, 0, -1}, syscall.EPERM, false, "sysctl -w kernel.unprivileged_userns_clone=1"},
		{"debian knob ignored as root", true, userNSSysctls{15000, 0, -1}, nil, true, ""},
		{"apparmor restricts", false, userNSSysctls{15000, -1, 1}, nil, false, "kernel.apparmor_restrict_unprivileged_userns=0"},
		{"apparmor irrelevant as root", true, userNSSysctls{15000, -1, 1}, nil, true, ""},
		{"eperm unknown cause", false, open, syscall.EPERM, false, "container or seccomp filter"},
		{"no CONFIG_USER_NS", false, open, syscall.EINVAL, false, "the kernel lacks CONFIG_USER_NS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := userNSFeature(tt.root, tt.s, tt.err)
			if got.Available != tt.wantAvail {
				t.Errorf("Available = %v, want %v (%+v)", got.Available, tt.wantAvail, got)
			}
			if tt.wantHint == "" && got.Hint != "" || !strings.Contains(got.Hint, tt.wantHint) {
				t.Errorf("Hint = %q, want %q", got.Hint, tt.wantHint)
			}
			if !got.Available && got.Detail == "" {
				t.Error("unavailable without a Detail")
			}
		})
	}
}

func TestNSFeature(t *testing.T) {
	userOK := Feature{Available: true}
	userNo := Feature{Detail: "creating a user namespace failed"}
	tests := []struct {
		name       string
		root       bool
		user       Feature
		max        int
		err        error
		wantAvail  bool
		wantDetail string
		wantHint   string
	}{
		{"root", true, userNo, 100, nil, true, "", ""},
		{"unprivileged in userns", false, userOK, 100, nil, true, "inside a new user namespace", ""},
		{"no userns", false, userNo, 100, errors.New("no user namespace"), false, "user namespaces are unavailable", "run as root"},
		{"limit zero", true, userNo, 0, syscall.ENOSPC, false, "ENOSPC", "user.max_net_namespaces is 0"},
		{"no config", true, userNo, -1, syscall.EINVAL, false, "EINVAL", "the kernel lacks CONFIG_NET_NS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nsFeature(tt.root, tt.user, "network", "CONFIG_NET_NS", "user.max_net_namespaces", tt.max, tt.err)
			if got.Available != tt.wantAvail || !strings.Contains(got.Detail, tt.wantDetail) || !strings.Contains(got.Hint, tt.wantHint) {
				t.Errorf("got %+v, want available %v, detail with %q, hint with %q", got, tt.wantAvail, tt.wantDetail, tt.wantHint)
			}
			if tt.wantHint == "" && got.Hint != "" {
				t.Errorf("unexpected hint %q", got.Hint)
			}
		})
	}
}

func TestSeccompInfo(t *testing.T) {
	const all = "kill_process kill_thread trap errno user_notif trace log allow\n"
	tests := []struct {
		name      string
		prctlErr  error
		mode      int
		actions   string
		actErr    error
		libErr    error
		wantAvail bool
		wantText  string // in Detail
	}{
		{"ok", nil, 0, all, nil, nil, true, ""},
		{"already filtered", nil, 2, all, nil, nil, true, "already runs under a seccomp filter"},
		{"no seccomp", syscall.EINVAL, 0, "", nil, nil, false, "prctl(PR_GET_SECCOMP)"},
		{"no filter", nil, 0, "", syscall.ENOENT, nil, false, "no seccomp filter support"},
		{"no kill_process", nil, 0, "kill_thread trap errno trace allow", nil, nil, false, "lacks seccomp actions kill_process"},
		{"no libseccomp", nil, 0, all, nil, errors.New("built without cgo"), false, "libseccomp: built without cgo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := seccompInfo(tt.prctlErr, tt.mode, tt.actions, tt.actErr, "2.5.4", tt.libErr)
			if got.Available != tt.wantAvail || !strings.Contains(got.Detail, tt.wantText) {
				t.Errorf("got %+v, want available %v with %q", got, tt.wantAvail, tt.wantText)
			}
			if !got.Available && got.Hint == "" {
				t.Error("unavailable without a Hint")
			}
		})
	}
	if got := seccompInfo(nil, 0, all, nil, "2.5.4", nil); strings.Join(got.Actions, ",") != "kill_process,kill_thread,trap,errno,user_notif,trace,log,allow" {
		t.Errorf("Actions = %q", got.Actions)
	}
}
