package probe

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capSets are the lines of /proc/self/status that hold this process's
// capability sets: inheritable, permitted, effective, bounding, ambient.
var capSets = []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}

// caps is ok when this process holds any capability in any of its five
// sets, and `denied none` when every set is empty. The bounding set
// counts: what it still holds, a file capability or a set-uid-root
// program could give back on exec.
func caps() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return setupErr("read /proc/self/status", err)
	}
	found := 0
	for line := range strings.Lines(string(b)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":\t")
		if !ok || !slices.Contains(capSets, name) {
			continue
		}
		found++
		v, err := strconv.ParseUint(value, 16, 64)
		if err != nil {
			return setupErr("parse "+name, err)
		}
		if v != 0 {
			return nil
		}
	}
	if found != len(capSets) {
		return Broken(fmt.Sprintf("/proc/self/status lists %d of the %d capability sets", found, len(capSets)))
	}
	return Denied{"none"}
}

// rlimitNames are the resources the `rlimit` action knows.
var rlimitNames = map[string]int{
	"NOFILE": unix.RLIMIT_NOFILE, "FSIZE": unix.RLIMIT_FSIZE, "CORE": unix.RLIMIT_CORE,
	"CPU": unix.RLIMIT_CPU, "NPROC": unix.RLIMIT_NPROC, "AS": unix.RLIMIT_AS,
	"RTPRIO": unix.RLIMIT_RTPRIO, "RTTIME": unix.RLIMIT_RTTIME, "NICE": unix.RLIMIT_NICE,
	"MEMLOCK": unix.RLIMIT_MEMLOCK, "MSGQUEUE": unix.RLIMIT_MSGQUEUE,
}

// rlimit prints `soft S hard H` for the resource (RLIMIT_ without its
// prefix), `inf` for no limit.
func rlimit(name string) {
	r, ok := rlimitNames[name]
	if !ok {
		broke(fmt.Errorf("resource %q: want one of NOFILE FSIZE CORE CPU NPROC AS RTPRIO RTTIME NICE MEMLOCK MSGQUEUE", name))
	}
	var l unix.Rlimit
	if err := unix.Getrlimit(r, &l); err != nil {
		broke(err)
	}
	show := func(v uint64) string {
		if v == unix.RLIM_INFINITY {
			return "inf"
		}
		return strconv.FormatUint(v, 10)
	}
	fmt.Printf("soft %s hard %s\n", show(l.Cur), show(l.Max))
	os.Exit(0)
}

// mountOpts prints `opts O,O,...`: the per-mount options (mountinfo's
// sixth field, sorted) of the mount PATH is on, found by its mount id.
func mountOpts(path string) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &st); err != nil {
		report(err)
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		broke(errors.New("statx gave no mount id"))
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		broke(err)
	}
	id := strconv.FormatUint(st.Mnt_id, 10)
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 5 && f[0] == id {
			opts := strings.Split(f[5], ",")
			slices.Sort(opts)
			fmt.Println("opts " + strings.Join(opts, ","))
			os.Exit(0)
		}
	}
	broke(fmt.Errorf("mount %s of %s is not in /proc/self/mountinfo", id, path))
}
