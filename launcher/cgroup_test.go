package launcher

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Fixture mount tables. hybridMountinfo and hybridSelf are this project's
// VM (Linux 6.18): v1 controllers and a cgroup2 mount without limits.
const (
	hybridMountinfo = `22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	hybridSelf = `9:name=systemd:/
8:pids:/
7:blkio:/
6:freezer:/
5:devices:/
4:memory:/process_api/a9a7baf98a875f26739dfc2eb1806e02
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`
	v2Mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
26 22 0:25 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
30 26 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	v2Self = "0::/user.slice/user-1000.slice/session-2.scope\n"

	v1Mountinfo = `25 20 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,cpu,cpuacct
30 25 0:27 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,memory
31 25 0:28 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,pids
`
	v1Self = `4:pids:/user.slice/user-1000.slice
3:memory:/user.slice
2:cpu,cpuacct:/user.slice
1:name=systemd:/user.slice/user-1000.slice/session-1.scope
`
	noneMountinfo = `22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
26 22 0:25 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
27 26 0:6 / /sys/kernel/security rw,nosuid,nodev,noexec,relatime - securityfs securityfs rw
`
)

func TestClassifyCgroups(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo string
		self      string
		wantMode  string
		wantV1    []string // "point=controllers" per v1 hierarchy
		wantV2    string   // v2 mount point, "" if none
		wantDirs  []string // groupDirs
	}{
		{"hybrid (this VM)", hybridMountinfo, hybridSelf, CgroupHybrid,
			[]string{"/sys/fs/cgroup/cpu=cpu", "/sys/fs/cgroup/cpuacct=cpuacct", "/sys/fs/cgroup/cpuset=cpuset",
				"/sys/fs/cgroup/memory=memory", "/sys/fs/cgroup/devices=devices", "/sys/fs/cgroup/freezer=freezer",
				"/sys/fs/cgroup/blkio=blkio", "/sys/fs/cgroup/pids=pids", "/sys/fs/cgroup/systemd="},
			"/sys/fs/cgroup/unified",
			[]string{"/sys/fs/cgroup/memory/process_api/a9a7baf98a875f26739dfc2eb1806e02", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"}},
		{"pure v2", v2Mountinfo, v2Self, CgroupV2, nil, "/sys/fs/cgroup",
			[]string{"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"}},
		{"v1", v1Mountinfo, v1Self, CgroupV1,
			[]string{"/sys/fs/cgroup/systemd=", "/sys/fs/cgroup/cpu,cpuacct=cpu,cpuacct", "/sys/fs/cgroup/memory=memory", "/sys/fs/cgroup/pids=pids"},
			"", []string{"/sys/fs/cgroup/memory/user.slice", "/sys/fs/cgroup/pids/user.slice/user-1000.slice"}},
		{"none", noneMountinfo, "", CgroupNone, nil, "", nil},
		{"empty", "", "", CgroupNone, nil, "", nil},
		{"v2 beside a lone name=systemd v1 hierarchy",
			v2Mountinfo + "40 30 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n",
			v2Self, CgroupV2, []string{"/sys/fs/cgroup/systemd="}, "/sys/fs/cgroup",
			[]string{"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"}},
		{"v1 hierarchy mounted twice keeps the first",
			v1Mountinfo + "50 22 0:28 / /mnt/pids rw,relatime - cgroup cgroup rw,pids\n", v1Self, CgroupV1,
			[]string{"/sys/fs/cgroup/systemd=", "/sys/fs/cgroup/cpu,cpuacct=cpu,cpuacct", "/sys/fs/cgroup/memory=memory", "/sys/fs/cgroup/pids=pids"},
			"", []string{"/sys/fs/cgroup/memory/user.slice", "/sys/fs/cgroup/pids/user.slice/user-1000.slice"}},
		{"container: cgroup2 bind-mounted from a sub-tree",
			"900 800 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n", "0::/docker/abc/init\n",
			CgroupV2, nil, "/sys/fs/cgroup", []string{"/sys/fs/cgroup/init"}},
		{"container: own cgroup outside the mounted sub-tree",
			"900 800 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n", "0::/docker/abcdef\n",
			CgroupV2, nil, "/sys/fs/cgroup", []string{"/sys/fs/cgroup"}},
		{"escaped mount point",
			`30 26 0:26 / /run/my\040cgroup rw - cgroup2 cgroup2 rw` + "\n", "0::/\n",
			CgroupV2, nil, "/run/my cgroup", []string{"/run/my cgroup"}},
		{"prefers /sys/fs/cgroup among cgroup2 mounts",
			"30 26 0:26 / /mnt/elsewhere rw - cgroup2 cgroup2 rw\n" + v2Mountinfo, "0::/\n",
			CgroupV2, nil, "/sys/fs/cgroup", []string{"/sys/fs/cgroup"}},
		{"malformed lines are skipped",
			"garbage\n1 2 3 - cgroup2\n31 23 0:28 / /x rw - cgroup2\n" + v2Mountinfo, "nonsense\n0::/\n",
			CgroupV2, nil, "/sys/fs/cgroup", []string{"/sys/fs/cgroup"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := classifyCgroups(tt.mountinfo, tt.self)
			if l.Mode != tt.wantMode {
				t.Errorf("Mode = %q, want %q", l.Mode, tt.wantMode)
			}
			var v1 []string
			for _, m := range l.V1 {
				v1 = append(v1, m.Point+"="+strings.Join(m.Controllers, ","))
			}
			if !slices.Equal(v1, tt.wantV1) {
				t.Errorf("V1 = %q, want %q", v1, tt.wantV1)
			}
			v2 := ""
			if l.V2 != nil {
				v2 = l.V2.Point
			}
			if v2 != tt.wantV2 {
				t.Errorf("V2 = %q, want %q", v2, tt.wantV2)
			}
			if dirs := l.groupDirs(); !slices.Equal(dirs, tt.wantDirs) {
				t.Errorf("groupDirs = %q, want %q", dirs, tt.wantDirs)
			}
		})
	}
}

func TestCgroupInfo(t *testing.T) {
	hybrid := classifyCgroups(hybridMountinfo, hybridSelf)
	v2 := classifyCgroups(v2Mountinfo, v2Self)
	v1 := classifyCgroups(v1Mountinfo, v1Self)
	tests := []struct {
		name          string
		l             cgroupLayout
		root          bool
		v2Controllers []string
		notWritable   map[string]error
		wantAvail     bool
		wantWritable  bool
		wantCtrl      string
		wantDetail    string
		wantHint      string
	}{
		{"hybrid as root", hybrid, true, []string{"hugetlb"}, nil, true, true,
			"cpu,cpuacct,cpuset,memory,devices,freezer,blkio,pids",
			"v1 controllers cpu, cpuacct, cpuset, memory, devices, freezer, blkio, pids; cgroup2 at /sys/fs/cgroup/unified with hugetlb", ""},
		{"v2 as root", v2, true, []string{"cpuset", "cpu", "io", "memory", "pids"}, nil, true, true,
			"cpuset,cpu,io,memory,pids", "cgroup2 at /sys/fs/cgroup", ""},
		{"v2 without pids", v2, true, []string{"cpu", "memory"}, nil, false, true,
			"cpu,memory", "no pids controller", "+pids in the parent's cgroup.subtree_control"},
		{"v2 unprivileged", v2, false, []string{"memory", "pids"},
			map[string]error{"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope": syscall.EACCES}, false, false,
			"memory,pids", "session-2.scope not writable: permission denied (EACCES)", "cgroup limits need root"},
		{"v1 read-only as root", v1, true, nil,
			map[string]error{"/sys/fs/cgroup/pids/user.slice/user-1000.slice": syscall.EROFS}, false, false,
			"cpu,cpuacct,memory,pids", "not writable: read-only file system (EROFS)", "not writable here"},
		{"none", classifyCgroups(noneMountinfo, ""), true, nil, nil, false, false, "", "no cgroup file system", "mount -t cgroup2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cgroupInfo(tt.l, tt.root, tt.v2Controllers, tt.notWritable)
			if got.Available != tt.wantAvail || got.Writable != tt.wantWritable {
				t.Errorf("Available %v Writable %v, want %v %v", got.Available, got.Writable, tt.wantAvail, tt.wantWritable)
			}
			if c := strings.Join(got.Controllers, ","); c != tt.wantCtrl {
				t.Errorf("Controllers = %q, want %q", c, tt.wantCtrl)
			}
			if got.Controllers == nil {
				t.Error("Controllers is nil: JSON would print null")
			}
			if !strings.Contains(got.Detail, tt.wantDetail) {
				t.Errorf("Detail = %q, want it to hold %q", got.Detail, tt.wantDetail)
			}
			if tt.wantHint == "" && got.Hint != "" || !strings.Contains(got.Hint, tt.wantHint) {
				t.Errorf("Hint = %q, want %q", got.Hint, tt.wantHint)
			}
		})
	}
	if got := cgroupInfo(hybrid, true, []string{"hugetlb"}, nil); !slices.Equal(got.V2Controllers, []string{"hugetlb"}) {
		t.Errorf("hybrid V2Controllers = %q, want [hugetlb]", got.V2Controllers)
	}
}

func FuzzClassifyCgroups(f *testing.F) {
	for _, s := range [][2]string{{hybridMountinfo, hybridSelf}, {v2Mountinfo, v2Self}, {v1Mountinfo, v1Self}, {noneMountinfo, ""},
		{`30 26 0:26 /a\040b /run/x\134y rw - cgroup2 cgroup2 rw`, "0::/a b/c"}} {
		f.Add(s[0], s[1])
	}
	modes := []string{CgroupV2, CgroupHybrid, CgroupV1, CgroupNone}
	f.Fuzz(func(t *testing.T, mountinfo, self string) {
		l := classifyCgroups(mountinfo, self)
		if !slices.Contains(modes, l.Mode) {
			t.Fatalf("mode %q", l.Mode)
		}
		if (l.Mode == CgroupV2 || l.Mode == CgroupHybrid) != (l.V2 != nil) {
			t.Fatalf("mode %q with V2 %v", l.Mode, l.V2)
		}
		info := cgroupInfo(l, true, nil, map[string]error{"/": errors.New("x")})
		if info.Available && !info.HasController("pids") {
			t.Fatal("available without pids")
		}
	})
}
