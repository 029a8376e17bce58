package probe

import (
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
