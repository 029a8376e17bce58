package probe

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

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

// coreDump names the process marker, lowers its RLIMIT_CORE to 0 as how
// says, prints what that gave and the limit it has on one line (`lowered ok, core soft S hard H`), and dies of
// SIGSEGV's default action: with a pipe in core_pattern the kernel then
// starts the host's helper (as root, outside every namespace) unless the
// limit is 1, and an RLIMIT_CORE of 0 does not stop it. With no marker
// it exits 0 instead of naming itself and dying.
func coreDump(marker, how string) {
	if marker != "" {
		if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(marker+"\x00"))), 0, 0, 0); err != nil {
			broke(err)
		}
	}
	zero := unix.Rlimit{}
	var err error
	switch how {
	case "keep":
	case "setrlimit":
		err = unix.Setrlimit(unix.RLIMIT_CORE, &zero) // prlimit64(0, CORE, new, NULL)
	case "prlimit-pid":
		err = unix.Prlimit(os.Getpid(), unix.RLIMIT_CORE, &zero, nil)
	case "prlimit-old":
		var old unix.Rlimit
		err = unix.Prlimit(0, unix.RLIMIT_CORE, &zero, &old)
	case "setrlimit-call":
		// The setrlimit system call itself, which libcs no longer make
		// but a program may.
		if _, _, e := unix.RawSyscall(unix.SYS_SETRLIMIT, unix.RLIMIT_CORE, uintptr(unsafe.Pointer(&zero)), 0); e != 0 {
			err = e
		}
	default:
		broke(fmt.Errorf("how %q: want keep, setrlimit, setrlimit-call, prlimit-pid or prlimit-old", how))
	}
	line := ""
	if how != "keep" {
		var errno unix.Errno
		switch {
		case errors.As(err, &errno):
			line = "lowered " + unix.ErrnoName(errno) + ", "
		case err != nil:
			broke(err)
		default:
			line = "lowered ok, "
		}
	}
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_CORE, &l); err != nil {
		broke(err)
	}
	fmt.Printf("%score soft %d hard %d\n", line, l.Cur, l.Max)
	if marker == "" {
		os.Exit(0)
	}
	os.Stdout.Sync()
	// The Go runtime handles SIGSEGV; the default action, which dumps
	// core, is put back for the whole process just before the signal.
	var dfl [4]uintptr // struct kernel_sigaction: handler SIG_DFL, flags, restorer, mask
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGSEGV), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0); e != 0 {
		broke(e)
	}
	unix.Kill(os.Getpid(), unix.SIGSEGV)
	select {} // the signal ends the process
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
