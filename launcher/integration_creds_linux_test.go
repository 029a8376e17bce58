package launcher

// Integration tests for what stage 2 hands the agent besides its mounts
// and filters: no capability in any set, the policy's resource limits
// whatever the launcher inherited, and write trees on which device nodes
// do not open.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The agent holds no capability in any set, the bounding set included
// (what it still held, a set-uid-root program or a file capability
// could give back on exec). The control, root unconfined, holds them all.
func TestIntegrationNoCapabilities(t *testing.T) {
	newSandbox(t).denied(t, itPol{}, itOpts{}, "none", "caps")
}

// raiseRlimit raises this process's limit r to at least v (soft and hard) for the
// test, so that the launcher inherits more than the policy allows and
// the control shows it; the old limit comes back at the end. A limit
// already above v is left, and so is one this process may not raise (no
// CAP_SYS_RESOURCE, as in some containers): the control then tells
// whether the row can show anything.
func raiseRlimit(t *testing.T, r int, v uint64) {
	t.Helper()
	var old unix.Rlimit
	must(t, unix.Getrlimit(r, &old))
	if old.Cur >= v && old.Max >= v {
		return
	}
	if unix.Setrlimit(r, &unix.Rlimit{Cur: max(old.Cur, v), Max: max(old.Max, v)}) != nil {
		return
	}
	t.Cleanup(func() { unix.Setrlimit(r, &old) })
}

// Each resource limit is the policy's (or the launcher's fixed one) in
// the agent, whatever the launcher inherited: the test raises each
// before launching, and the control, the probe run directly, sees the
// raised value.
func TestIntegrationRlimits(t *testing.T) {
	s := newSandbox(t)
	inf := uint64(unix.RLIM_INFINITY)
	for _, r := range []struct {
		name  string
		res   int
		raise uint64
		want  string
	}{
		{"NOFILE", unix.RLIMIT_NOFILE, 8192, "soft 4096 hard 4096"},
		{"FSIZE", unix.RLIMIT_FSIZE, inf, "soft 2147483648 hard 2147483648"},
		{"CORE", unix.RLIMIT_CORE, inf, "soft 1 hard 1"},
		{"CPU", unix.RLIMIT_CPU, inf, "soft 90 hard 90"},
		{"NPROC", unix.RLIMIT_NPROC, inf, "soft 512 hard 512"},
		{"RTPRIO", unix.RLIMIT_RTPRIO, 99, "soft 0 hard 0"},
		{"RTTIME", unix.RLIMIT_RTTIME, inf, "soft 0 hard 0"},
		{"NICE", unix.RLIMIT_NICE, 40, "soft 0 hard 0"},
		{"MEMLOCK", unix.RLIMIT_MEMLOCK, inf, "soft 8388608 hard 8388608"},
		{"MSGQUEUE", unix.RLIMIT_MSGQUEUE, inf, "soft 819200 hard 819200"},
	} {
		t.Run(r.name, func(t *testing.T) {
			raiseRlimit(t, r.res, r.raise)
			c := s.direct(t, itOpts{}, "rlimit", r.name)
			if c.code != 0 || !strings.HasPrefix(c.stdout, "soft ") {
				t.Fatalf("control rlimit %s (unconfined): %s", r.name, c)
			}
			if c.stdout == r.want+"\n" {
				// SR-09: the launcher's limit would be indistinguishable.
				t.Skipf("this process's RLIMIT_%s is already the policy's (%s) and could not be raised", r.name, r.want)
			}
			itExpect(t, "confined rlimit "+r.name, s.launch(t, itPol{limits: "cpu_time = \"90s\"\n"}, itOpts{}, "rlimit", r.name), r.want, 0)
		})
	}
}

// A device node in the workspace (a copy of /dev/zero's numbers, as a
// tarball or a careless cp -a could leave there) does not open: write
// trees are nodev. Unconfined it reads.
func TestIntegrationWritePathNodev(t *testing.T) {
	s := newSandbox(t)
	dev := filepath.Join(s.ws, "zero")
	must(t, unix.Mknod(dev, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 5))))
	must(t, os.Chmod(dev, 0o666))
	s.denied(t, itPol{}, itOpts{}, "EACCES", "read", dev)
}

// The mounts carry the flags SR-01, SR-18 and SR-21 name: the workspace
// (a write tree) is nosuid, nodev and noexec; the host's own mounts,
// where the exec directory lies too, read-only and nosuid. nosuid has
// no_new_privs behind it, so only the options themselves show it gone.
// The control, the same paths unconfined, lacks at least one.
func TestIntegrationMountFlags(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct {
		what, path string
		want       []string
	}{
		{"workspace", s.ws, []string{"nosuid", "nodev", "noexec", "rw"}},
		{"host", s.outside, []string{"nosuid", "ro"}},
		{"exec directory", itEnv.bin, []string{"nosuid", "ro"}},
	} {
		t.Run(c.what, func(t *testing.T) {
			has := func(r itResult) bool {
				opts, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), "opts ")
				return ok && r.code == 0 && !slices.ContainsFunc(c.want, func(o string) bool { return !slices.Contains(strings.Split(opts, ","), o) })
			}
			if r := s.launch(t, itPol{}, itOpts{}, "mount-opts", c.path); !has(r) {
				t.Fatalf("confined mount-opts %s: want options %v, got %s", c.path, c.want, r)
			}
			if r := s.direct(t, itOpts{}, "mount-opts", c.path); r.code != 0 || has(r) {
				t.Fatalf("control mount-opts %s (unconfined): want options without all of %v, got %s", c.path, c.want, r)
			}
		})
	}
}

// A crash in the sandbox never starts the host's core dump helper. With
// a pipe in core_pattern (systemd-coredump, apport) the kernel runs that
// program as root, outside every namespace, on whatever the agent's
// memory holds, whatever its RLIMIT_CORE, unless that limit is exactly 1
// (the kernel's own guard against recursive dumps). So the agent's limit
// is 1, and the agent cannot lower it to 0 for itself or another process.
// The test points core_pattern at its own helper for its duration (the
// host's pattern comes back at the end; a crash elsewhere on the host
// meanwhile reaches this helper instead, which reads and discards it).
// The control: each way of lowering the limit, unconfined, does start
// the helper; the last control, run after every confined crash, shows
// the helper had its chance to record them.
func TestIntegrationCoreDumpNoHostHelper(t *testing.T) {
	requireIntegration(t)
	if os.Geteuid() != 0 {
		t.Skip("core_pattern is root's to set")
	}
	dir := t.TempDir()
	called := filepath.Join(dir, "called")
	helper := filepath.Join(dir, "helper")
	must(t, os.WriteFile(helper, []byte("#!/bin/sh\necho \"$1\" >> "+called+"\nexec cat > /dev/null\n"), 0o755))
	const pattern = "/proc/sys/kernel/core_pattern"
	old, err := os.ReadFile(pattern)
	must(t, err)
	must(t, os.WriteFile(pattern, []byte("|"+helper+" %e"), 0))
	t.Cleanup(func() {
		if err := os.WriteFile(pattern, old, 0); err != nil {
			t.Errorf("core_pattern could not be put back to %q: %v", old, err)
		}
	})
	seen := func(marker string) bool {
		b, _ := os.ReadFile(called)
		return slices.Contains(strings.Fields(string(b)), marker)
	}
	waitSeen := func(marker string) bool {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if seen(marker) {
				return true
			}
		}
		return false
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	hows := []struct{ how, lowered string }{
		{"keep", ""},
		// The agent's own limit: its change is answered as done and
		// changes nothing (ssh-agent exits when it cannot lower it).
		{"setrlimit", "lowered ok, "},
		// Naming a pid, or asking the old limit back: refused.
		{"prlimit-pid", "lowered EPERM, "},
		{"prlimit-old", "lowered EPERM, "},
	}
	for _, uid := range []int{0, nobody} {
		s := newUnprivSandbox(t, uid)
		for i, h := range hows {
			marker := fmt.Sprintf("cd%s%d%d", id, uid%10, i)
			r := s.launch(t, itPol{}, itOpts{}, "core-dump", marker, h.how)
			if want := h.lowered + "core soft 1 hard 1\n"; r.stdout != want || r.code != 128+int(unix.SIGSEGV) {
				t.Errorf("uid %d, %s: want %q and exit %d, got %s", uid, h.how, want, 128+int(unix.SIGSEGV), r)
			}
			ctl := marker + "c"
			if c := s.direct(t, itOpts{}, "core-dump", ctl, h.how); c.code != 128+int(unix.SIGSEGV) || !waitSeen(ctl) {
				t.Fatalf("control uid %d, %s unconfined: want the helper started (exit %d), got %s; helper saw %v", uid, h.how, 128+int(unix.SIGSEGV), c, seen(ctl))
			}
			if seen(marker) {
				t.Errorf("uid %d, %s: a confined crash started the host's core dump helper", uid, h.how)
			}
		}
	}

	// A launcher that inherits a hard core limit of 0 (limits.conf's
	// "hard core 0") cannot give the agent 1 (raising it needs
	// CAP_SYS_RESOURCE, which root in a container may lack): the launch
	// goes on with 0, and the summary says that a crash reaches the pipe,
	// which it does.
	var old0 unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_CORE, &old0))
	must(t, unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}))
	defer unix.Setrlimit(unix.RLIMIT_CORE, &old0)
	for _, uid := range []int{0, nobody} {
		s := newUnprivSandbox(t, uid)
		marker := fmt.Sprintf("cd%s%dh", id, uid%10)
		r := s.launch(t, itPol{}, itOpts{verbose: true}, "core-dump", marker, "keep")
		said := strings.Contains(r.stderr, "a crash runs the host's core dump program "+helper+" as root")
		if r.stdout != "core soft 0 hard 0\n" || !said || !waitSeen(marker) {
			t.Errorf("uid %d, inherited hard core limit 0: want the limit left 0, the summary saying the helper runs, and the helper run; got %s; helper saw %v", uid, r, seen(marker))
		}
	}
}
