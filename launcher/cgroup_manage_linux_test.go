package launcher

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests create real cgroups (as root) and remove them in t.Cleanup,
// also on failure. On a hybrid host they also run pure v1 by handing
// createCgroup the host's layout without its cgroup2 mount (and once more
// without the freezer), which exercises the v1 code on real hierarchies.

// cgroupAllocEnv makes the test binary, re-executed, the allocation helper
// of TestCgroupMemory (see TestCgroupMemoryHelper).
const cgroupAllocEnv = "PINFOLD_TEST_CGROUP_ALLOC"

// requireCgroups skips (or fails under PINFOLD_REQUIRE_ALL_FEATURES=1)
// unless we are root with a writable pids hierarchy (and memory).
func requireCgroups(t *testing.T, memory bool) cgroupLayout {
	t.Helper()
	euid := os.Geteuid()
	requireFeature(t, "root", euid == 0, fmt.Sprintf("euid %d", euid))
	info := probeCgroups(true)
	requireFeature(t, "a writable cgroup pids controller", info.Available, info.Mode+": "+info.Detail)
	if memory {
		requireFeature(t, "a cgroup memory controller", info.HasController("memory"), info.Mode+" with controllers "+listOrNone(info.Controllers))
	}
	l, err := readCgroupLayout()
	if err != nil {
		t.Fatal(err)
	}
	if l.Mode != info.Mode {
		t.Fatalf("layout %s, probe %s", l.Mode, info.Mode)
	}
	return l
}

type cgroupCase struct {
	name string
	l    cgroupLayout
}

// cgroupCases is the host's layout and, on a hybrid host, pure v1 with and
// without a freezer.
func cgroupCases(l cgroupLayout) []cgroupCase {
	cases := []cgroupCase{{"host-" + l.Mode, l}}
	if l.Mode != CgroupHybrid {
		return cases
	}
	v1 := l
	v1.Mode, v1.V2 = CgroupV1, nil
	cases = append(cases, cgroupCase{"v1", v1})
	if findV1(v1, "freezer") != nil {
		nf := v1
		nf.V1 = slices.DeleteFunc(slices.Clone(v1.V1), func(m cgroupMount) bool { return slices.Contains(m.Controllers, "freezer") })
		cases = append(cases, cgroupCase{"v1-no-freezer", nf})
	}
	return cases
}

func testSession(t *testing.T) string {
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("t-%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// newTestCgroup creates a group that t.Cleanup empties and removes.
func newTestCgroup(t *testing.T, l cgroupLayout, pids, memory int64) *Cgroup {
	t.Helper()
	c, err := createCgroup(l, CgroupSpec{Session: testSession(t), Pids: pids, Memory: memory})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Kill(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := c.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return c
}

// proc is a child started in a group, held until its gate is opened.
type proc struct {
	cmd    *exec.Cmd
	gate   io.WriteCloser
	stdout *os.File // files, not pipes: Wait must not wait for grandchildren
	stderr *os.File // that inherited a pipe
	done   chan struct{}
	err    error // from Wait, once done is closed
}

// startInGroup starts argv in c: cloned into the v2 group when there is
// one, then added to the v1 groups, before it reads its first stdin line.
func startInGroup(t *testing.T, c *Cgroup, env []string, argv ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Env = env
	var err error
	for _, f := range []**os.File{&p.stdout, &p.stderr} {
		if *f, err = os.CreateTemp(t.TempDir(), "out"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*f).Close() })
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if fd, ok := c.CgroupFD(); ok {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	}
	if p.gate, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill() // ours; a no-op once reaped
		<-p.done
	})
	if err := c.Add(p.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *proc) open(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(p.gate, "go\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("%v still running after %v", p.cmd.Args, d)
		return nil
	}
}

// read returns what the child wrote to f so far.
func read(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

func shell(script string) []string { return []string{"/bin/sh", "-c", "read go; " + script} }

// waitPids waits until the group holds n processes, and returns them.
func waitPids(t *testing.T, c *Cgroup, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids, err := c.Pids()
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("group holds %d processes, want %d", len(pids), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func assertFile(t *testing.T, dir, name, want string) {
	t.Helper()
	got, err := readCgroupFile(dir, name)
	if err != nil || got != want {
		t.Errorf("%s/%s = %q, %v; want %q", dir, name, got, err, want)
	}
}

func TestCgroupCreateRemove(t *testing.T) {
	for _, tc := range cgroupCases(requireCgroups(t, true)) {
		t.Run(tc.name, func(t *testing.T) {
			const mem = 64 << 20
			c := newTestCgroup(t, tc.l, 20, mem)
			dirs := c.groupDirs()
			t.Log(c.Describe())
			if !strings.HasPrefix(c.Describe(), tc.l.Mode+": ") || !strings.Contains(c.Describe(), c.spec.Session) {
				t.Errorf("Describe: %s", c.Describe())
			}
			if tc.l.Mode == CgroupV2 {
				assertFile(t, c.v2, "pids.max", "20")
				assertFile(t, c.v2, "memory.max", strconv.Itoa(mem))
				if _, err := os.Stat(c.v2 + "/memory.swap.max"); err == nil {
					assertFile(t, c.v2, "memory.swap.max", "0")
				}
			} else {
				assertFile(t, c.pids, "pids.max", "20")
				assertFile(t, c.memory, "memory.limit_in_bytes", strconv.Itoa(mem))
				if _, err := os.Stat(c.memory + "/memory.memsw.limit_in_bytes"); err == nil {
					assertFile(t, c.memory, "memory.memsw.limit_in_bytes", strconv.Itoa(mem))
				}
			}
			if (tc.l.Mode == CgroupV1) != (c.v2 == "") {
				t.Errorf("mode %s, v2 group %q", tc.l.Mode, c.v2)
			}
			if tc.l.Mode == CgroupV1 && (c.freezer != "") != (findV1(tc.l, "freezer") != nil) {
				t.Errorf("freezer group %q, freezer mounted %v", c.freezer, findV1(tc.l, "freezer") != nil)
			}
			if fd, ok := c.CgroupFD(); ok != (c.v2 != "") {
				t.Errorf("CgroupFD = %d, %v with v2 group %q", fd, ok, c.v2)
			}
			if c.v2 != "" {
				if _, err := os.Stat(c.v2 + "/cgroup.kill"); err != nil {
					t.Errorf("no cgroup.kill: %v", err)
				}
				// CLONE_INTO_CGROUP: the child is in the v2 group before Add.
				cmd := exec.Command("/bin/sleep", "60")
				fd, _ := c.CgroupFD()
				cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				self, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
				v2own := parseSelfCgroup(string(self))[""]
				if !strings.HasSuffix(v2own, "/"+cgroupParentName+"/"+c.spec.Session) {
					t.Errorf("child not cloned into the v2 group: /proc/pid/cgroup:\n%s", self)
				}
				if err := c.Add(cmd.Process.Pid); err != nil {
					t.Error(err)
				}
				if pids, err := c.Pids(); err != nil || !slices.Equal(pids, []int{cmd.Process.Pid}) {
					t.Errorf("Pids = %v, %v; want [%d]", pids, err, cmd.Process.Pid)
				}
				killGroup(t, c)
				cmd.Wait()
			}
			if err := c.Add(0); err == nil {
				t.Error("Add(0) accepted")
			}
			if err := c.Remove(); err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s after Remove: %v", d, err)
				}
			}
			if err := c.Remove(); err != nil {
				t.Errorf("second Remove: %v", err)
			}
		})
	}
}

// expectedDirs lists where createCgroup would make the session's groups.
func expectedDirs(l cgroupLayout, session string) []string {
	var bases []string
	for _, ctl := range []string{"pids", "memory", "freezer"} {
		if m := findV1(l, ctl); m != nil && l.Mode != CgroupV2 && (ctl != "freezer" || l.Mode == CgroupV1) {
			bases = append(bases, m.dir())
		}
	}
	switch l.Mode {
	case CgroupHybrid:
		bases = append(bases, l.V2.dir())
	case CgroupV2:
		bases = append(bases, v2Base(l.V2.Point, l.V2.dir(), hasOwnProcs))
	}
	var dirs []string
	for _, b := range bases {
		if d := b + "/" + cgroupParentName + "/" + session; !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func assertNoDirs(t *testing.T, dirs []string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after a failed create (%v)", d, err)
			unix.Rmdir(d)
		}
	}
}

func TestCgroupCreateFails(t *testing.T) {
	host := requireCgroups(t, true)
	info := probeCgroups(true)
	t.Run("pids 0", func(t *testing.T) {
		s := testSession(t)
		_, err := CreateCgroup(info, CgroupSpec{Session: s, Pids: 0})
		if err == nil || !strings.Contains(err.Error(), "pids limit 0") {
			t.Errorf("err = %v, want pids limit 0", err)
		}
		assertNoDirs(t, expectedDirs(host, s))
	})
	t.Run("mode changed since probe", func(t *testing.T) {
		stale := info
		stale.Mode = map[string]string{CgroupV2: CgroupHybrid}[info.Mode]
		if stale.Mode == "" {
			stale.Mode = CgroupV2
		}
		s := testSession(t)
		if _, err := CreateCgroup(stale, CgroupSpec{Session: s, Pids: 5}); err == nil || !strings.Contains(err.Error(), "probe again") {
			t.Errorf("err = %v, want probe again", err)
		}
		assertNoDirs(t, expectedDirs(host, s))
	})
	if host.V2 != nil {
		// On a hybrid host, the cgroup2 mount taken for a pure v2 host
		// lacks pids: createCgroup must refuse before making anything.
		t.Run("v2 without pids", func(t *testing.T) {
			if have, _ := readFields(host.V2.Point, "cgroup.controllers"); slices.Contains(have, "pids") {
				t.Skip("this cgroup2 mount has pids: the host case covers v2")
			}
			l := cgroupLayout{Mode: CgroupV2, V2: host.V2}
			s := testSession(t)
			_, err := createCgroup(l, CgroupSpec{Session: s, Pids: 5})
			if err == nil || !strings.Contains(err.Error(), "has no pids controller") || !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("err = %v, want no pids controller", err)
			}
			assertNoDirs(t, expectedDirs(l, s))
		})
	}
	for _, tc := range cgroupCases(host) {
		t.Run(tc.name+"/last group exists", func(t *testing.T) {
			s := testSession(t)
			dirs := expectedDirs(tc.l, s)
			last := dirs[len(dirs)-1]
			parent := last[:strings.LastIndexByte(last, '/')]
			if err := os.Mkdir(parent, 0o755); err == nil {
				t.Cleanup(func() { unix.Rmdir(parent) })
			}
			if err := os.Mkdir(last, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Rmdir(last) })
			_, err := createCgroup(tc.l, CgroupSpec{Session: s, Pids: 5, Memory: 64 << 20})
			if err == nil || !strings.Contains(err.Error(), last+": a group for session") {
				t.Fatalf("err = %v, want %s already exists", err, last)
			}
			assertNoDirs(t, dirs[:len(dirs)-1])
			if _, err := os.Stat(last); err != nil {
				t.Errorf("the group createCgroup did not make was removed: %v", err)
			}
		})
		if tc.l.Mode != CgroupV2 {
			t.Run(tc.name+"/no memory hierarchy", func(t *testing.T) {
				l := tc.l
				l.V1 = slices.DeleteFunc(slices.Clone(l.V1), func(m cgroupMount) bool { return slices.Contains(m.Controllers, "memory") })
				s := testSession(t)
				_, err := createCgroup(l, CgroupSpec{Session: s, Pids: 5, Memory: 64 << 20})
				if err == nil || !strings.Contains(err.Error(), "no v1 memory hierarchy") {
					t.Errorf("err = %v, want no v1 memory hierarchy", err)
				}
				assertNoDirs(t, expectedDirs(tc.l, s))
			})
		}
	}
}

// TestCgroupMemoryHelper is not a test: re-executed with cgroupAllocEnv
// set, the test binary waits for a line on stdin (it is then in its group),
// allocates and touches that many bytes, and exits 0.
func TestCgroupMemoryHelper(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(cgroupAllocEnv))
	if err != nil {
		return
	}
	bufio.NewReader(os.Stdin).ReadString('\n')
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	fmt.Println("touched", len(b))
	os.Exit(0)
}

// raceBuild reports whether this test binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.ContainsFunc(bi.Settings, func(s debug.BuildSetting) bool { return s.Key == "-race" && s.Value == "true" })
}

func TestCgroupMemory(t *testing.T) {
	l := requireCgroups(t, true)
	const alloc = 256 << 20
	run := func(t *testing.T, limit int64) (*Cgroup, *proc, error) {
		c := newTestCgroup(t, l, 50, limit)
		env := append(os.Environ(), fmt.Sprintf("%s=%d", cgroupAllocEnv, alloc))
		p := startInGroup(t, c, env, os.Args[0], "-test.run=^TestCgroupMemoryHelper$", "-test.count=1")
		p.open(t)
		return c, p, p.wait(t, 60*time.Second)
	}
	oomKills := func(c *Cgroup) string {
		if c.memory != "" {
			ev, _ := readCgroupFile(c.memory, "memory.oom_control")
			return eventValue(ev, "oom_kill")
		}
		ev, _ := readCgroupFile(c.v2, "memory.events")
		return eventValue(ev, "oom_kill")
	}
	t.Run("256 MiB in 64 MiB", func(t *testing.T) {
		c, p, err := run(t, 64<<20)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("helper: %v, stdout %q, stderr %q; want killed by SIGKILL", err, read(p.stdout), read(p.stderr))
		}
		if n := oomKills(c); n == "" || n == "0" {
			t.Errorf("oom_kill count %q, want ≥ 1", n)
		}
	})
	t.Run("control 256 MiB in 512 MiB", func(t *testing.T) {
		limit := int64(512 << 20)
		if raceBuild() {
			limit *= 4 // the race detector's shadow memory is charged too
			t.Logf("race build: control limit %s", formatBytes(limit))
		}
		c, p, err := run(t, limit)
		if err != nil || !strings.Contains(read(p.stdout), fmt.Sprintf("touched %d", alloc)) {
			t.Fatalf("helper: %v, stdout %q, stderr %q; want it to finish", err, read(p.stdout), read(p.stderr))
		}
		if n := oomKills(c); n != "0" {
			t.Errorf("oom_kill count %q, want 0", n)
		}
	})
}

// TestCgroupSweepStale: a group left by a launcher killed with SIGKILL
// (its pid gone, the group empty) is removed by the next creation in the
// same parent; a group whose launcher still runs, and one that still has
// processes, are kept.
func TestCgroupSweepStale(t *testing.T) {
	l := requireCgroups(t, false)
	pids := findV1(l, "pids")
	base := ""
	if pids != nil {
		base = pids.dir()
	} else if l.V2 != nil {
		base = l.V2.dir()
	}
	parent := base + "/" + cgroupParentName
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	// A pid that is surely dead: a child we started and reaped.
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s/s-%d-%s", parent, dead.Process.Pid, "deadbeef0001")
	live := fmt.Sprintf("%s/s-%d-%s", parent, os.Getpid(), "deadbeef0002")
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Rmdir(d) })
	}
	sweepStale(parent)
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale group %s was kept (stat: %v)", stale, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("group of a running launcher %s was removed: %v", live, err)
	}
	for _, tt := range []struct {
		name string
		pid  int
		ok   bool
	}{{"s-12-ab", 12, true}, {"s-0-ab", 0, false}, {"s-x-ab", 0, false}, {"t-12-ab", 0, false}, {"s-12", 0, false}} {
		if pid, ok := sessionPid(tt.name); pid != tt.pid && tt.ok || ok != tt.ok {
			t.Errorf("sessionPid(%q) = %d, %v; want %d, %v", tt.name, pid, ok, tt.pid, tt.ok)
		}
	}
}
