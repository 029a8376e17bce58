package launcher

import (
	"path"
	"slices"
	"strings"

	"github.com/pinfold/pinfold/internal/mountinfo"
)

// Cgroup modes.
const (
	CgroupV2     = "v2"
	CgroupHybrid = "hybrid"
	CgroupV1     = "v1"
	CgroupNone   = "none"
)

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	Point       string   // mount point
	Root        string   // root of the mount inside the hierarchy
	Controllers []string // v1: controllers from the super options; v2: none (read from cgroup.controllers)
	Name        string   // v1 named hierarchy ("systemd" for name=systemd)
	Own         string   // directory of this process's cgroup in it, "" if it is not visible
}

// cgroupLayout is what the mount table says about cgroups.
type cgroupLayout struct {
	Mode string
	V1   []cgroupMount // hierarchies with controllers or a name
	V2   *cgroupMount  // the cgroup2 mount, nil if none
}

// v1Controllers are the cgroup v1 controller names; other super options
// (rw, xattr, clone_children, release_agent=…) are not controllers.
func v1Controllers() []string {
	return []string{"blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb",
		"memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma"}
}

// classifyCgroups reads /proc/self/mountinfo and /proc/self/cgroup text.
// Only v1 hierarchies with controllers count towards "v1" and "hybrid": a
// lone name=systemd hierarchy beside a cgroup2 mount is still "v2".
func classifyCgroups(mountinfo, selfCgroup string) cgroupLayout {
	var l cgroupLayout
	own := parseSelfCgroup(selfCgroup)
	seen := map[string]bool{}
	for line := range strings.Lines(mountinfo) {
		m, fstype, ok := parseMountinfoLine(line)
		if !ok {
			continue
		}
		switch fstype {
		case "cgroup2":
			m.Own = ownDir(m, own[""])
			if l.V2 == nil || betterMount(m.Point, l.V2.Point) {
				l.V2 = &m
			}
		case "cgroup":
			key := v1Key(m)
			if key == "" || seen[key] {
				continue // the same hierarchy mounted twice: keep the first
			}
			seen[key] = true
			m.Own = ownDir(m, own[key])
			l.V1 = append(l.V1, m)
		}
	}
	hasV1 := slices.ContainsFunc(l.V1, func(m cgroupMount) bool { return len(m.Controllers) > 0 })
	switch {
	case hasV1 && l.V2 != nil:
		l.Mode = CgroupHybrid
	case hasV1:
		l.Mode = CgroupV1
	case l.V2 != nil:
		l.Mode = CgroupV2
	default:
		l.Mode = CgroupNone
	}
	return l
}

// betterMount prefers the conventional cgroup2 mount points.
func betterMount(p, than string) bool {
	rank := func(s string) int {
		switch s {
		case "/sys/fs/cgroup":
			return 0
		case "/sys/fs/cgroup/unified":
			return 1
		}
		return 2
	}
	return rank(p) < rank(than)
}

// parseMountinfoLine splits one line of /proc/self/mountinfo:
// "id parent maj:min root point opts [optional…] - fstype source superopts".
func parseMountinfoLine(line string) (cgroupMount, string, bool) {
	f := strings.Fields(line)
	sep := slices.Index(f, "-")
	if sep < 6 || len(f) < sep+4 {
		return cgroupMount{}, "", false
	}
	m := cgroupMount{Root: mountinfo.Unescape(f[3]), Point: mountinfo.Unescape(f[4])}
	fstype := f[sep+1]
	if fstype == "cgroup" {
		for _, o := range strings.Split(f[sep+3], ",") {
			if name, ok := strings.CutPrefix(o, "name="); ok {
				m.Name = name
			} else if slices.Contains(v1Controllers(), o) {
				m.Controllers = append(m.Controllers, o)
			}
		}
	}
	return m, fstype, true
}

// v1Key identifies a v1 hierarchy the way /proc/self/cgroup names it:
// its controllers and name, sorted, comma-separated.
func v1Key(m cgroupMount) string {
	parts := slices.Clone(m.Controllers)
	if m.Name != "" {
		parts = append(parts, "name="+m.Name)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// parseSelfCgroup maps each hierarchy key ("" for v2) to this process's
// cgroup path in it, from /proc/self/cgroup ("id:controllers:path").
func parseSelfCgroup(text string) map[string]string {
	own := map[string]string{}
	for line := range strings.Lines(text) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrl := strings.Split(parts[1], ",")
		slices.Sort(ctrl)
		key := strings.Join(ctrl, ",")
		if parts[0] == "0" && parts[1] == "" {
			key = ""
		}
		own[key] = parts[2]
	}
	return own
}

// ownDir places cgroup path p (relative to the hierarchy root) under mount
// m, or returns "" when p is not beneath the mount's root.
func ownDir(m cgroupMount, p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return ""
	}
	rel := p
	if m.Root != "/" {
		r, ok := strings.CutPrefix(p, m.Root)
		if !ok || (r != "" && !strings.HasPrefix(r, "/")) {
			return ""
		}
		rel = r
	}
	return path.Join(m.Point, rel)
}

// groupDirs lists the directories the launcher would create groups in:
// the v1 hierarchies holding pids or memory, and the cgroup2 directory in
// v2 and hybrid mode (hybrid uses it for tracking and kill).
func (l cgroupLayout) groupDirs() []string {
	var dirs []string
	for _, m := range l.V1 {
		if slices.Contains(m.Controllers, "pids") || slices.Contains(m.Controllers, "memory") {
			dirs = append(dirs, m.dir())
		}
	}
	if l.V2 != nil && l.Mode != CgroupV1 {
		dirs = append(dirs, l.V2.dir())
	}
	return dirs
}

func (m cgroupMount) dir() string {
	if m.Own != "" {
		return m.Own
	}
	return m.Point
}

// cgroupInfo builds the report. v2Controllers is the content of the
// cgroup2 cgroup.controllers file; notWritable maps each directory of
// l.groupDirs() that failed access(W_OK) to the error.
func cgroupInfo(l cgroupLayout, root bool, v2Controllers []string, notWritable map[string]error) CgroupInfo {
	info := CgroupInfo{Mode: l.Mode, Controllers: []string{}}
	var detail []string
	switch l.Mode {
	case CgroupNone:
		info.Detail = "no cgroup file system is mounted"
		info.Hint = "mount cgroup2 at /sys/fs/cgroup (mount -t cgroup2 cgroup2 /sys/fs/cgroup)"
		return info
	case CgroupV2:
		info.Controllers = append(info.Controllers, v2Controllers...)
		detail = append(detail, "cgroup2 at "+l.V2.Point)
	default:
		for _, m := range l.V1 {
			info.Controllers = append(info.Controllers, m.Controllers...)
		}
		detail = append(detail, "v1 controllers "+listOrNone(info.Controllers))
		if l.V2 != nil {
			info.V2Controllers = append([]string{}, v2Controllers...)
			detail = append(detail, "cgroup2 at "+l.V2.Point+" with "+listOrNone(v2Controllers))
		}
	}
	dirs := l.groupDirs()
	info.Writable = len(dirs) > 0
	if len(dirs) == 0 {
		detail = append(detail, "no pids or memory hierarchy to create a group in")
	}
	for _, d := range dirs {
		if err, bad := notWritable[d]; bad {
			info.Writable = false
			detail = append(detail, d+" not writable: "+errString(err))
		}
	}
	var hints []string
	if !info.HasController("pids") {
		detail = append(detail, "no pids controller")
		if l.Mode == CgroupV2 {
			hints = append(hints, "enable the pids controller: +pids in the parent's cgroup.subtree_control (kernel CONFIG_CGROUP_PIDS)")
		} else {
			hints = append(hints, "mount the pids hierarchy (mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids) or boot with cgroup v2")
		}
	}
	if !info.Writable {
		if root {
			hints = append(hints, "the cgroup file system is not writable here (read-only mount or a container): run the launcher on the host")
		} else {
			hints = append(hints, "cgroup limits need root; unprivileged, the launcher uses rlimits (SD-05)")
		}
	}
	info.Available = info.Writable && info.HasController("pids")
	info.Detail = strings.Join(detail, "; ")
	info.Hint = strings.Join(hints, "; ")
	return info
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}
