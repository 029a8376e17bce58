package launcher

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Real-cgroup tests of Kill and the pids limit; helpers are in
// cgroup_manage_linux_test.go.

// procState is the state letter in /proc/<pid>/stat, "" if there is none.
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	_, after, _ := bytes.Cut(b, []byte(") "))
	return string(after[:1])
}

// assertGone checks that none of pids runs any more (each gone or a
// zombie) at once, then that kill(pid, 0) says ESRCH once pid 1 or we have
// reaped them.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		if s := procState(p); s != "" && s != "Z" && s != "X" {
			t.Errorf("pid %d is still running (state %s) after Kill", p, s)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range pids {
		for unix.Kill(p, 0) != unix.ESRCH {
			if time.Now().After(deadline) {
				t.Errorf("pid %d: kill(pid, 0) is not ESRCH (state %q)", p, procState(p))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func killGroup(t *testing.T, c *Cgroup) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := c.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Kill took %v", time.Since(start).Round(time.Millisecond))
	if pids, err := c.Pids(); err != nil || len(pids) != 0 {
		t.Fatalf("after Kill: %v, %v", pids, err)
	}
}

// pidsLimitDir is the group holding pids.max.
func (c *Cgroup) pidsLimitDir() string {
	if c.pids != "" {
		return c.pids
	}
	return c.v2
}

// runBomb starts 200 background sleeps under pids limit and returns the
// shell, the most pids.current seen while it ran, and the group's
// processes once it has started them or failed.
func runBomb(t *testing.T, c *Cgroup, wantAll bool) (*proc, int64, []int) {
	t.Helper()
	p := startInGroup(t, c, nil, shell(`i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done; wait`)...)
	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	sample := func() {
		if v, err := readCgroupFile(c.pidsLimitDir(), "pids.current"); err == nil {
			if n, _ := strconv.ParseInt(v, 10, 64); n > peak.Load() {
				peak.Store(n)
			}
		}
	}
	go func() {
		defer close(watched)
		for {
			sample()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	p.open(t)
	var pids []int
	if wantAll {
		pids = waitPids(t, c, 201)
	} else {
		p.wait(t, 20*time.Second) // dash exits at its first failed fork
		var err error
		if pids, err = c.Pids(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-watched
	sample()
	return p, peak.Load(), pids
}

func TestCgroupForkBomb(t *testing.T) {
	for _, tc := range cgroupCases(requireCgroups(t, false)) {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("pids 20", func(t *testing.T) {
				c := newTestCgroup(t, tc.l, 20, 0)
				p, peak, pids := runBomb(t, c, false)
				if peak > 20 {
					t.Errorf("pids.current reached %d with pids.max 20", peak)
				}
				if stderr := read(p.stderr); !strings.Contains(strings.ToLower(stderr), "fork") && !strings.Contains(stderr, "Resource temporarily unavailable") {
					t.Errorf("the shell reported no fork failure; stderr: %q", stderr)
				}
				if ev, err := readCgroupFile(c.pidsLimitDir(), "pids.events"); err != nil || eventValue(ev, "max") == "0" {
					t.Errorf("pids.events = %q, %v: want refused forks counted", ev, err)
				}
				t.Logf("peak pids.current %d; %d sleeps left; stderr %q", peak, len(pids), read(p.stderr))
				killGroup(t, c)
				assertGone(t, pids)
				if err := c.Remove(); err != nil {
					t.Fatal(err)
				}
			})
			t.Run("control pids 1000", func(t *testing.T) {
				c := newTestCgroup(t, tc.l, 1000, 0)
				p, peak, pids := runBomb(t, c, true)
				if len(pids) != 201 || peak < 201 {
					t.Errorf("%d processes (peak %d), want the shell and 200 sleeps", len(pids), peak)
				}
				killGroup(t, c)
				if err := p.wait(t, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
					t.Errorf("shell: %v, want killed", err)
				}
				if strings.Contains(strings.ToLower(read(p.stderr)), "fork") {
					t.Errorf("fork failed without a tight limit: %q", read(p.stderr))
				}
				assertGone(t, pids)
				if err := c.Remove(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestCgroupKill(t *testing.T) {
	trees := []struct {
		name, script string
		n            int // processes once started
		ignoreTERM   bool
	}{
		{"nested sh-sh-sleep", `sh -c 'sleep 60 & sleep 60 & wait' & sleep 60 & wait`, 5, false},
		{"ignores SIGTERM", `trap "" TERM; sleep 60 & sh -c 'sleep 60 & wait' & wait`, 4, true},
		{"still forking", `i=0; while [ $i -lt 500 ]; do sleep 60 & i=$((i+1)); done; wait`, 30, false},
	}
	for _, tc := range cgroupCases(requireCgroups(t, false)) {
		for _, tr := range trees {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				c := newTestCgroup(t, tc.l, 1000, 0)
				p := startInGroup(t, c, nil, shell(tr.script)...)
				p.open(t)
				pids := waitPids(t, c, tr.n)
				if tr.ignoreTERM {
					for _, pid := range pids {
						unix.Kill(pid, unix.SIGTERM)
					}
					time.Sleep(200 * time.Millisecond)
					if now, _ := c.Pids(); len(now) != len(pids) {
						t.Fatalf("SIGTERM ended some processes: %v → %v", pids, now)
					}
				}
				killGroup(t, c)
				if pids2, _ := c.Pids(); len(pids2) != 0 {
					t.Errorf("left %v", pids2)
				}
				assertGone(t, pids)
				if err := p.wait(t, 10*time.Second); err == nil {
					t.Error("the shell exited normally, want killed")
				}
				if err := c.Remove(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestCgroupKillV2Fallback empties a v2 group with killLoop and
// cgroup.freeze, the path Kill takes on kernels without cgroup.kill.
func TestCgroupKillV2Fallback(t *testing.T) {
	l := requireCgroups(t, false)
	requireFeature(t, "a cgroup2 mount", l.V2 != nil, "mode "+l.Mode)
	c := newTestCgroup(t, l, 1000, 0)
	p := startInGroup(t, c, nil, shell(`sh -c 'sleep 60 & sleep 60 & wait' & i=0; while [ $i -lt 300 ]; do sleep 60 & i=$((i+1)); done; wait`)...)
	p.open(t)
	pids := waitPids(t, c, 20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := killLoop(ctx, v2Signaller{dir: c.v2}, killPause); err != nil {
		t.Fatal(err)
	}
	assertFile(t, c.v2, "cgroup.freeze", "0")
	assertGone(t, pids)
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
}

// Freeze stops the group's writer until thaw, on every layout that has a
// freezer (v2's cgroup.freeze, the v1 freezer); a v1 group without one
// is an error, and its writer goes on.
func TestCgroupFreeze(t *testing.T) {
	for _, tc := range cgroupCases(requireCgroups(t, true)) {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCgroup(t, tc.l, 20, 64<<20)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := exec.Command("/usr/bin/yes")
			cmd.Stdout = w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			if err := c.Add(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			flowing := func() bool { // is more coming than the pipe held?
				buf := make([]byte, 1<<16)
				r.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				for { // drain what was written before
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
				time.Sleep(100 * time.Millisecond)
				r.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				n, _ := r.Read(buf)
				return n > 0
			}
			if !flowing() {
				t.Fatal("control: the writer writes nothing")
			}
			thaw, err := c.Freeze(context.Background())
			if tc.l.Mode == CgroupV1 && c.freezer == "" {
				if err == nil || !strings.Contains(err.Error(), "no freezer") || !flowing() {
					t.Fatalf("without a freezer: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if flowing() {
				thaw()
				t.Fatal("frozen, the writer still writes")
			}
			thaw()
			if !flowing() {
				t.Fatal("thawed, the writer does not go on")
			}
		})
	}
}
