package launcher

// Integration tests, processes: other processes, limits, the terminal,
// and what is left after the launcher exits.

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startSleeper starts `sleep 30` outside any sandbox, with a secret in
// its environment, and kills it (by pid) when the test ends.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "30")
	cmd.Env = []string{"SLEEPER_SECRET=hunter2"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// The agent cannot see, trace or signal a process outside its sandbox:
// /proc is the sandbox's own (ENOENT), ptrace is refused by seccomp
// (EPERM), and the pid does not exist in the agent's pid namespace
// (ESRCH).
func TestIntegrationOutsideProcess(t *testing.T) {
	s := newSandbox(t)
	sleeper := startSleeper(t)
	pid := strconv.Itoa(sleeper.Process.Pid)
	t.Run("read-environ", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "ENOENT", "read-environ", pid)
	})
	t.Run("ptrace", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "EPERM", "ptrace", pid)
	})
	t.Run("kill", func(t *testing.T) {
		r := s.launch(t, itPol{}, itOpts{}, "kill", pid, "15")
		itExpect(t, "confined kill", r, "denied ESRCH", 1)
		if err := syscall.Kill(sleeper.Process.Pid, 0); err != nil {
			t.Fatalf("the sleeper is gone after the confined kill: %v", err)
		}
		s.control(t, itOpts{}, "kill", pid, "15")
		err := sleeper.Wait()
		if ws, ok := sleeper.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("control kill: the sleeper ended with %v, want SIGTERM", err)
		}
	})
}

// The sandbox's init (stage 2, pid 1 to the agent) runs as the agent's
// uid, and the kernel lets a process change the limits and scheduling of
// another of its uid: a hunt lowered stage 2's RLIMIT_NOFILE so that its
// reads of /proc failed, or starved it (SCHED_IDLE, nice 19), and its
// Ctrl-Z watch no longer saw a process run again. seccomp refuses each
// such call that names pid 1; the agent may still make them on its own
// processes. The control: the same calls on the probe itself, unconfined.
func TestIntegrationSteerInit(t *testing.T) {
	s := newSandbox(t)
	itExpect(t, "confined steer of pid 1", s.launch(t, itPol{}, itOpts{}, "steer", "1"), "denied EPERM", 1)
	s.control(t, itOpts{}, "steer", "self")
	s.allowed(t, itPol{}, itOpts{}, "steer", "self")
}

// A fork bomb stops at the policy's process limit (32, counting the
// sandbox's own init and the probe's threads); unconfined, as root, the
// same probe starts all 200 children.
func TestIntegrationForkBomb(t *testing.T) {
	s := newSandbox(t)
	p := itPol{processes: 32, exec: []string{"/usr/bin", "/usr/lib", "/usr/lib64"}}
	r := s.launch(t, p, itOpts{}, "fork-bomb", "200")
	var n, of int
	var errno string
	if _, err := fmt.Sscanf(r.stdout, "forked %d of %d %s\n", &n, &of, &errno); err != nil || r.code != 0 || of != 200 {
		t.Fatalf("confined fork-bomb: want `forked N of 200 ERRNO`, got %s", r)
	}
	if n >= 32 || errno != "EAGAIN" {
		t.Fatalf("confined fork-bomb: %d of 200 children started (stopped by %s); the limit is 32 processes", n, errno)
	}
	t.Logf("confined: %d children before EAGAIN", n)
	itExpect(t, "control fork-bomb", s.direct(t, itOpts{}, "fork-bomb", "200"), "forked 200 of 200", 0)
}

// Touching 4 GiB under a 512 MiB limit ends the probe: the memory cgroup
// kills it (exit 137, no line), or, without one, the address-space limit
// refuses the mapping (ENOMEM).
func TestIntegrationMemoryLimit(t *testing.T) {
	s := newSandbox(t)
	r := s.launch(t, itPol{memory: "512MiB"}, itOpts{}, "alloc", "4GiB")
	oomKilled := r.code == 137 && r.stdout == ""
	refused := r.code == 1 && r.stdout == "denied ENOMEM\n"
	if !oomKilled && !refused {
		t.Fatalf("confined alloc 4GiB under memory = 512MiB: want exit 137 (killed) or `denied ENOMEM`, got %s", r)
	}
	if h := ProbeForLaunch(); h.Root && h.Cgroup.HasController("memory") && !oomKilled {
		t.Fatalf("with a memory cgroup the probe should have been killed, got %s", r)
	}
	s.control(t, itOpts{}, "alloc", "4GiB")
}

// As root on a host with no memory controller, the launch falls back to
// RLIMIT_AS, as hello and SR-36 say (it exited 125: "a memory limit is
// asked for but no v1 memory hierarchy is mounted"). The host is this
// one with its v1 memory hierarchy unmounted in a mount namespace of
// the test's own.
func TestIntegrationMemoryWithoutController(t *testing.T) {
	s := newSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("as root only: unprivileged launches have no cgroup")
	}
	if h := ProbeForLaunch(); h.Cgroup.Mode == CgroupV2 || !h.Cgroup.HasController("memory") {
		t.Skip("needs a v1 memory hierarchy to take away (this host's layout: " + string(h.Cgroup.Mode) + ")")
	}
	path, hash := s.writePolicy(t, itPol{memory: "2GiB"}) // a Go probe reserves more than 512 MiB of address space to start
	r := s.run(t, itOpts{}, "unshare", "-m", "--propagation", "private", "sh", "-c",
		`umount -l /sys/fs/cgroup/memory && exec "$@"`, "sh",
		itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--", itEnv.probe, "alloc", "4GiB")
	if r.code != 1 || r.stdout != "denied ENOMEM\n" || !strings.Contains(r.stderr, "resident memory: only address space is bounded (SD-05)") {
		t.Fatalf("alloc 4GiB under memory = 2GiB without a memory controller: want RLIMIT_AS's `denied ENOMEM` (exit 1) and SD-05 on the summary, got %s", r)
	}
	s.control(t, itOpts{}, "alloc", "4GiB")
}

// openPTY returns a new pseudo-terminal's master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		requireFeature(t, "pseudo-terminals (/dev/ptmx)", false, err.Error())
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	sl, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { sl.Close() })
	return m, sl
}

// TIOCSTI on the agent's controlling terminal is refused (seccomp); the
// control, in the same position on its own terminal, injects.
func TestIntegrationTIOCSTI(t *testing.T) {
	s := newSandbox(t)
	_, slave := openPTY(t)
	o := itOpts{stdin: slave, ctty: true}
	s.denied(t, itPol{}, o, "EPERM", "tiocsti")
}

// An agent that leaves the terminal's echo off (a crash in the middle of
// a password prompt, or on purpose) does not leave the person's terminal
// so: the launcher sets the modes it found back when the agent is gone.
// The control: the same probe unconfined leaves echo off.
func TestIntegrationTerminalModesRestored(t *testing.T) {
	s := newSandbox(t)
	for _, confined := range []bool{true, false} {
		_, slave := openPTY(t)
		echo := func() bool {
			tm, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			must(t, err)
			return tm.Lflag&unix.ECHO != 0
		}
		if !echo() {
			t.Fatal("a fresh terminal has echo off")
		}
		o := itOpts{stdin: slave, ctty: true}
		var r itResult
		if confined {
			r = s.launch(t, itPol{}, o, "noecho")
		} else {
			r = s.run(t, o, itEnv.probe, "noecho")
		}
		if r.code != 0 {
			t.Fatalf("confined %v: %s", confined, r)
		}
		if echo() != confined {
			t.Errorf("confined %v: echo is on: %v", confined, echo())
		}
	}
}

// The launcher works when its stdin is a terminal that is not its
// controlling terminal (a pty handed over by a supervisor, say).
func TestIntegrationStdinForeignTerminal(t *testing.T) {
	s := newSandbox(t)
	_, slave := openPTY(t)
	s.allowed(t, itPol{}, itOpts{stdin: slave}, "noop")
}

// processesWith returns the pids of probes (argv[0] is the probe: not
// the launcher, whose own arguments carry the marker too) whose command
// line contains marker.
func processesWith(marker string) map[int]bool {
	found := map[int]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.HasPrefix(b, []byte(itEnv.probe+"\x00")) && bytes.Contains(b, []byte(marker)) {
			found[pid] = true
		}
	}
	return found
}

// Nothing the agent started outlives the launcher, not even a process in
// its own session: the pid namespace (and the cgroup) end with it.
func TestIntegrationNoProcessRemains(t *testing.T) {
	s := newSandbox(t)
	marker := uniqueName("pinfold-it-marker")
	r := s.launch(t, itPol{}, itOpts{}, "spawn-sleep", marker)
	if !strings.HasPrefix(r.stdout, "spawned ") || r.code != 0 {
		t.Fatalf("confined spawn-sleep: want `spawned PID`, got %s", r)
	}
	deadline := time.Now().Add(3 * time.Second)
	for left := processesWith(marker); len(left) > 0; left = processesWith(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("after the launcher exited, processes %v still carry the marker %s", left, marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Control: unconfined, the same probe leaves its sleeper behind, and
	// the scan finds it.
	marker2 := uniqueName("pinfold-it-marker")
	r = s.direct(t, itOpts{}, "spawn-sleep", marker2)
	var pid int
	if _, err := fmt.Sscanf(r.stdout, "spawned %d\n", &pid); err != nil || r.code != 0 {
		t.Fatalf("control spawn-sleep: want `spawned PID`, got %s", r)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if found := processesWith(marker2); !found[pid] || len(found) != 1 {
		t.Fatalf("control: the scan found %v, want exactly the sleeper %d: the check above proves nothing", found, pid)
	}
}

// cgroupDirsOf finds the session groups of the launcher with this pid,
// in every hierarchy, however deep its pinfold parent is (the v1 memory
// group sits beneath the test's own memory cgroup).
func cgroupDirsOf(pid int) []string {
	var out []string
	pat := fmt.Sprintf("pinfold/s-%d-*", pid)
	for depth := range 5 {
		m, _ := filepath.Glob(filepath.Join(append([]string{"/sys/fs/cgroup"}, append(repeat("*", depth+1), pat)...)...))
		out = append(out, m...)
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// The session's cgroups exist while the agent runs and are gone when the
// launcher has exited.
func TestIntegrationCgroupRemoved(t *testing.T) {
	s := newSandbox(t)
	var during []string
	o := itOpts{onStart: func(pid int) {
		deadline := time.Now().Add(3 * time.Second)
		for len(during) < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			during = cgroupDirsOf(pid)
		}
	}}
	r := s.launch(t, itPol{}, o, "sleep", "1")
	itExpect(t, "confined sleep", r, "ok", 0)
	if len(during) < 2 {
		t.Fatalf("while the agent ran, found session cgroups %v; want at least the pids and the v2 group (the check below would prove nothing)", during)
	}
	t.Logf("session cgroups while running: %v", during)
	if left := cgroupDirsOf(r.pid); len(left) > 0 {
		t.Fatalf("after the launcher exited, its cgroups remain: %v", left)
	}
}

// waitForMarker polls until a process carrying marker runs, for at most
// 3 s, and reports whether one did.
func waitForMarker(marker string) bool {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if len(processesWith(marker)) > 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// waitNoMarker polls until no process carries marker, for at most 3 s,
// and returns those still left.
func waitNoMarker(marker string) map[int]bool {
	deadline := time.Now().Add(3 * time.Second)
	left := processesWith(marker)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		left = processesWith(marker)
	}
	return left
}

// SIGTERM to the launcher reaches the agent, and the launcher exits as
// the agent did (143); nothing is left.
func TestIntegrationSignalForwarded(t *testing.T) {
	s := newSandbox(t)
	marker := uniqueName("pinfold-it-marker")
	var started bool
	o := itOpts{onStart: func(pid int) {
		if started = waitForMarker(marker); started {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}}
	r := s.launch(t, itPol{}, o, "sleep", "30", marker)
	if !started {
		t.Fatalf("the agent never appeared: %s", r)
	}
	if r.code != 143 || r.signaled || r.stdout != "" || r.elapsed > 10*time.Second {
		t.Fatalf("want the launcher to exit 143 (the agent's status, not killed itself) at once, got %s (signaled %v) after %v", r, r.signaled, r.elapsed)
	}
	if left := waitNoMarker(marker); len(left) > 0 {
		t.Fatalf("agent processes %v outlived the launcher", left)
	}
}

// When the launcher itself is killed (SIGKILL: no cleanup runs), the
// agent dies with it: stage 2 has a parent-death signal and is the pid
// namespace's init. The session's cgroup directories cannot be removed by
// a killed launcher; the test removes them (they are empty).
func TestIntegrationLauncherKilled(t *testing.T) {
	s := newSandbox(t)
	marker := uniqueName("pinfold-it-marker")
	var started bool
	o := itOpts{onStart: func(pid int) {
		if started = waitForMarker(marker); started {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}}
	r := s.launch(t, itPol{}, o, "sleep", "30", marker)
	if !started {
		t.Fatalf("the agent never appeared: %s", r)
	}
	if r.code != 137 {
		t.Fatalf("want the launcher killed (137), got %s", r)
	}
	if left := waitNoMarker(marker); len(left) > 0 {
		t.Fatalf("agent processes %v outlived the killed launcher", left)
	}
	if left := cgroupDirsOf(r.pid); len(left) > 0 {
		t.Logf("known residue: a killed launcher leaves its empty session cgroups: %v (removing them)", left)
		for _, d := range left {
			// Gone already is fine: any launch that starts meanwhile (a
			// test in another package) sweeps a dead launcher's groups.
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				t.Errorf("remove %s: %v", d, err)
			}
		}
	}
	// Its throwaway uid's lock file stays too, until the next claim
	// sweeps it: after a sweep, every lock file left has a holder.
	if os.Geteuid() == 0 {
		sweepStaleIDLocks()
		ents, _ := os.ReadDir(idLockDir)
		for _, e := range ents {
			f, err := os.OpenFile(filepath.Join(idLockDir, e.Name()), os.O_RDWR, 0)
			if err != nil {
				continue
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				t.Errorf("lock file %s has no holder after the sweep", e.Name())
			}
			f.Close()
		}
	}
}

// Stage 2 (pid 1 of the sandbox, same uid as the agent) is not dumpable:
// the agent cannot read its environment, memory or descriptors through
// /proc/1. The control reads a process of the same uid that is dumpable.
func TestIntegrationStage2NotReadable(t *testing.T) {
	s := newSandbox(t)
	itExpect(t, "confined read of /proc/1/environ", s.launch(t, itPol{}, itOpts{}, "read-environ", "1"), "denied EACCES", 1)
	itExpect(t, "confined read of its own environ", s.launch(t, itPol{}, itOpts{}, "read-environ", "self"), "ok", 0)
	s.control(t, itOpts{}, "read-environ", "self")
}

// The kernel's key lists (/proc/keys: the descriptions of keys the uid
// possesses, its session keyring's among them; /proc/key-users: key
// counts of every uid) are covered in the sandbox's /proc, as root here
// and unprivileged in TestIntegrationUnprivileged. The control, root
// unconfined, lists root's keyrings.
func TestIntegrationKeyListsCovered(t *testing.T) {
	newSandbox(t).denied(t, itPol{}, itOpts{}, "empty", "key-lists")
}

// The kernel's command line (the host's boot configuration; on this VM
// its init's listening address and flags) is covered in the sandbox's
// /proc: the agent finds none of its bytes there, where the control does.
func TestIntegrationKernelCmdlineCovered(t *testing.T) {
	host, err := os.ReadFile("/proc/cmdline")
	if err != nil || len(bytes.TrimSpace(host)) == 0 {
		t.Fatalf("the host's /proc/cmdline: %q, %v: nothing to look for", host, err)
	}
	needle := hex.EncodeToString(bytes.TrimSpace(host)[:min(24, len(bytes.TrimSpace(host)))])
	s := newSandbox(t)
	itExpect(t, "confined find-bytes in /proc/cmdline", s.launch(t, itPol{}, itOpts{}, "find-bytes", needle, "/proc/cmdline"), "absent 1", 0)
	if r := s.direct(t, itOpts{}, "find-bytes", needle, "/proc/cmdline"); r.stdout != "found /proc/cmdline\n" {
		t.Fatalf("control: %s, want the bytes found", r)
	}
}

// The agent cannot crash stage 2 with a signal that would make a Go
// program dump and exit (SIGABRT, SIGQUIT, SIGTRAP, SIGSYS): the launcher
// still reports the agent's own status.
func TestIntegrationStage2SurvivesSignals(t *testing.T) {
	s := newSandbox(t)
	for _, sig := range []string{"6", "3", "5", "31"} {
		r := s.launch(t, itPol{}, itOpts{}, "kill", "1", sig)
		itExpect(t, "kill 1 "+sig, r, "ok", 0)
	}
}

// A signal sent to the launcher's process group off a terminal (the
// terminal's Ctrl-C with the job's output redirected, timeout(1), a
// supervisor that signals the job) reaches the agent once. The agent
// shares that group and has the signal from the kernel; stage 1's relayed
// copy was a second one, and an agent that takes a second Ctrl-C as
// "quit now, skip the cleanup" quit at the first. A signal sent to the
// launcher alone is still relayed, and reaches the agent once too.
func TestIntegrationGroupSignalOnce(t *testing.T) {
	s := newSandbox(t)
	path, hash := s.writePolicy(t, itPol{exec: []string{"/usr/bin", "/usr/lib"}})
	log := filepath.Join(s.ws, "signals")
	ready := filepath.Join(s.ws, "ready")
	stop := filepath.Join(s.ws, "stop")
	// sleep is the agent's child, in the group too: the group's SIGINT ends
	// it, and the loop goes on. Bounded: 30 s at most.
	script := fmt.Sprintf(`trap 'echo INT >> %[1]s' INT; trap 'echo TERM >> %[1]s' TERM; : > %[2]s
i=0; while [ $i -lt 300 ] && [ ! -e %[3]s ]; do sleep 0.1; i=$((i+1)); done`, log, ready, stop)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, itEnv.launcher, "--quiet", "--policy-sha256", hash, "--policy", path, "--", "/usr/bin/sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // no terminal: stage 2 stays in the launcher's group
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(ready); err != nil && time.Now().Before(deadline); _, err = os.Stat(ready) {
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-pid, syscall.SIGINT) // the launcher's group: stage 1, stage 2, the agent
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGTERM) // the launcher alone: relayed
	time.Sleep(500 * time.Millisecond)
	os.WriteFile(stop, nil, 0o644)
	err := cmd.Wait()
	got, _ := os.ReadFile(log)
	if string(got) != "INT\nTERM\n" || err != nil {
		t.Fatalf("want the agent to get one SIGINT (sent to the group) and one SIGTERM (sent to the launcher) and exit 0, got %q, %v; output %q", got, err, out.String())
	}
}

// The agent has namespaces of its own for what DESIGN's first step names
// (pid, mount, ipc, uts, and net with network "none"), as root and
// unprivileged: each link in its /proc/self/ns differs from the one the
// same program sees run directly. The summary names them.
func TestIntegrationOwnNamespaces(t *testing.T) {
	kinds := []string{"pid", "mnt", "ipc", "uts", "net"}
	argv := []string{"/usr/bin/readlink"}
	for _, k := range kinds {
		argv = append(argv, "/proc/self/ns/"+k)
	}
	for _, uid := range []int{0, nobody} {
		t.Run(map[int]string{0: "root", nobody: "unprivileged"}[uid], func(t *testing.T) {
			s := newUnprivSandbox(t, uid)
			path, hash := s.writePolicy(t, itPol{exec: []string{"/usr/bin", "/usr/lib"}})
			confined := s.run(t, itOpts{}, append([]string{itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--"}, argv...)...)
			direct := s.run(t, itOpts{}, argv...)
			in, out := strings.Fields(confined.stdout), strings.Fields(direct.stdout)
			if confined.code != 0 || direct.code != 0 || len(in) != len(kinds) || len(out) != len(kinds) {
				t.Fatalf("confined: %s; direct: %s", confined, direct)
			}
			for i, k := range kinds {
				if in[i] == out[i] {
					t.Errorf("the agent shares the %s namespace of a process run directly (%s)", k, in[i])
				}
			}
			if !strings.Contains(confined.stderr, "pid+mount+ipc+uts ns") {
				t.Errorf("the summary does not name the namespaces: %q", confined.stderr)
			}
		})
	}
}
