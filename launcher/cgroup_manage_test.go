package launcher

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCgroupSpecValidate(t *testing.T) {
	tests := []struct {
		spec CgroupSpec
		want string // "" = valid
	}{
		{CgroupSpec{Session: "s-123-abcdef", Pids: 1}, ""},
		{CgroupSpec{Session: "s", Pids: 512, Memory: 1 << 20}, ""},
		{CgroupSpec{Session: strings.Repeat("a", 64), Pids: pidMaxLimit}, ""},
		{CgroupSpec{Session: strings.Repeat("a", 65), Pids: 1}, "must be 1 to 64"},
		{CgroupSpec{Session: "", Pids: 1}, "must be 1 to 64"},
		{CgroupSpec{Session: "-s", Pids: 1}, "only a-z"},
		{CgroupSpec{Session: "S-1", Pids: 1}, "only a-z"},
		{CgroupSpec{Session: "s/../x", Pids: 1}, "only a-z"},
		{CgroupSpec{Session: "s.1", Pids: 1}, "only a-z"},
		{CgroupSpec{Session: "s", Pids: 0}, "pids limit 0: must be at least 1"},
		{CgroupSpec{Session: "s", Pids: -1}, "pids limit -1"},
		{CgroupSpec{Session: "s", Pids: pidMaxLimit + 1}, "above the kernel's limit"},
		{CgroupSpec{Session: "s", Pids: 1, Memory: -1}, "must not be negative"},
		{CgroupSpec{Session: "s", Pids: 1, Memory: 1<<20 - 1}, "below 1 MiB"},
	}
	for _, tt := range tests {
		err := tt.spec.validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", tt.spec, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tt.spec, err, tt.want)
		}
	}
}

func TestCgroupSupported(t *testing.T) {
	hybrid := cgroupInfo(classifyCgroups(hybridMountinfo, hybridSelf), true, []string{"hugetlb"}, nil)
	v2 := cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), true, []string{"memory", "pids"}, nil)
	v2NoPids := cgroupInfo(classifyCgroups(v2Mountinfo, v2Self), true, []string{"memory"}, nil)
	l := classifyCgroups(hybridMountinfo, hybridSelf)
	ro := cgroupInfo(l, true, nil, map[string]error{l.groupDirs()[0]: errors.New("read-only file system")})
	tests := []struct {
		name string
		info CgroupInfo
		euid int
		want string // "" = supported
	}{
		{"hybrid root", hybrid, 0, ""},
		{"v2 root", v2, 0, ""},
		{"hybrid not root", hybrid, 1000, "not root (euid 1000)"},
		{"v2 without pids", v2NoPids, 0, "no pids controller"},
		{"read-only", ro, 0, "not writable"},
		{"none", CgroupInfo{Mode: CgroupNone}, 0, "no cgroup file system"},
		{"zero", CgroupInfo{}, 0, "no cgroup file system"},
	}
	for _, tt := range tests {
		err := cgroupSupported(tt.info, tt.euid)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, errors.ErrUnsupported) || strings.HasSuffix(err.Error(), "operation") {
			t.Errorf("%s: got %v, want an ErrUnsupported containing %q", tt.name, err, tt.want)
		}
	}
}

func TestV2Base(t *testing.T) {
	withProcs := func(dirs ...string) func(string) bool {
		return func(d string) bool { return slices.Contains(dirs, d) }
	}
	const pt = "/sys/fs/cgroup"
	tests := []struct {
		own   string
		procs func(string) bool
		want  string
	}{
		{pt, withProcs(pt), pt}, // the root is exempt
		{pt + "/user.slice/user-0.slice/session-2.scope", withProcs(pt + "/user.slice/user-0.slice/session-2.scope"), pt + "/user.slice/user-0.slice"},
		{pt + "/a/b", withProcs(pt+"/a/b", pt+"/a"), pt},
		{pt + "/a/b", withProcs(), pt + "/a/b"}, // own without processes (not us): use it
		{pt + "x/a", withProcs(), pt},           // not beneath the mount: the mount
		{"", withProcs(), pt},
	}
	for _, tt := range tests {
		if got := v2Base(pt, tt.own, tt.procs); got != tt.want {
			t.Errorf("v2Base(%q) = %q, want %q", tt.own, got, tt.want)
		}
	}
	if got := chainBelow(pt, pt+"/a/b"); !slices.Equal(got, []string{pt, pt + "/a", pt + "/a/b"}) {
		t.Errorf("chainBelow = %q", got)
	}
	if got := chainBelow(pt, pt); !slices.Equal(got, []string{pt}) {
		t.Errorf("chainBelow(root) = %q", got)
	}
}

func TestCgroupTextHelpers(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64 MiB", 4 << 30: "4 GiB", 1536: "1536 bytes", 3 << 10: "3 KiB", 1<<20 + 1: "1048577 bytes"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	ev := "populated 1\nfrozen 0\n"
	if eventValue(ev, "populated") != "1" || eventValue(ev, "frozen") != "0" || eventValue(ev, "pop") != "" {
		t.Errorf("eventValue(%q) wrong", ev)
	}
	if p, err := parseProcs("12\n345\n"); err != nil || !slices.Equal(p, []int{12, 345}) {
		t.Errorf("parseProcs = %v, %v", p, err)
	}
	for _, bad := range []string{"12\nx\n", "0\n", "-3\n"} {
		if _, err := parseProcs(bad); err == nil {
			t.Errorf("parseProcs(%q) accepted", bad)
		}
	}
	c := &Cgroup{mode: CgroupHybrid, spec: CgroupSpec{Session: "s-1", Pids: 20, Memory: 64 << 20},
		pids: "/sys/fs/cgroup/pids/pinfold/s-1", memory: "/sys/fs/cgroup/memory/pinfold/s-1", v2: "/sys/fs/cgroup/unified/pinfold/s-1"}
	want := "hybrid: v1 pids /sys/fs/cgroup/pids/pinfold/s-1, memory /sys/fs/cgroup/memory/pinfold/s-1; v2 tracking group /sys/fs/cgroup/unified/pinfold/s-1 (pids.max 20, memory 64 MiB without swap; cgroup.kill)"
	if got := c.Describe(); got != want {
		t.Errorf("Describe:\n got %s\nwant %s", got, want)
	}
	c = &Cgroup{mode: CgroupV1, spec: CgroupSpec{Session: "s-1", Pids: 5}, pids: "/p/pinfold/s-1"}
	if got := c.Describe(); got != "v1: pids /p/pinfold/s-1 (pids.max 5, no memory limit; kill by SIGKILL loop)" {
		t.Errorf("Describe v1: %s", got)
	}
}

// fakeGroup simulates a process tree for killLoop: while not frozen, every
// live process forks once per listing (the child is not in that listing)
// until forks run out; a process killed while frozen dies at thaw.
type fakeGroup struct {
	alive      map[int]bool
	dying      map[int]bool
	hasFreezer bool
	frozen     bool
	forks      int
	next       int
	immortal   int // a pid SIGKILL does not end (a task stuck in the kernel)
	freezes    int
	thaws      int
	procsErr   error
	killErr    error
}

func newFakeGroup(n, forks int, freezer bool) *fakeGroup {
	g := &fakeGroup{alive: map[int]bool{}, dying: map[int]bool{}, forks: forks, hasFreezer: freezer, next: 100}
	for range n {
		g.spawn()
	}
	return g
}

func (g *fakeGroup) spawn() { g.next++; g.alive[g.next] = true }

func (g *fakeGroup) freeze(context.Context) bool {
	if !g.hasFreezer {
		return false
	}
	g.frozen = true
	g.freezes++
	return true
}

func (g *fakeGroup) thaw() error {
	g.frozen = false
	g.thaws++
	for p := range g.dying {
		delete(g.alive, p)
	}
	clear(g.dying)
	return nil
}

func (g *fakeGroup) procs() ([]int, error) {
	if g.procsErr != nil {
		return nil, g.procsErr
	}
	var pids []int
	for p := range g.alive {
		pids = append(pids, p)
	}
	slices.Sort(pids)
	if !g.frozen {
		for range pids {
			if g.forks > 0 {
				g.forks--
				g.spawn()
			}
		}
	}
	return pids, nil
}

func (g *fakeGroup) kill(pids []int) error {
	for _, p := range pids {
		switch {
		case p == g.immortal:
		case g.frozen:
			g.dying[p] = true
		default:
			delete(g.alive, p)
		}
	}
	return g.killErr
}

func TestKillLoop(t *testing.T) {
	noWait := func(ctx context.Context, round int) error { return ctx.Err() }
	t.Run("freezer stops forks", func(t *testing.T) {
		g := newFakeGroup(5, 1000, true)
		if err := killLoop(context.Background(), g, noWait); err != nil {
			t.Fatal(err)
		}
		if len(g.alive) != 0 || g.frozen || g.freezes != 2 || g.thaws != 2 {
			t.Errorf("alive %v, frozen %v, freezes %d, thaws %d; want empty, thawed, 2 rounds", g.alive, g.frozen, g.freezes, g.thaws)
		}
	})
	t.Run("no freezer, forking tree", func(t *testing.T) {
		g := newFakeGroup(5, 200, false)
		if err := killLoop(context.Background(), g, noWait); err != nil {
			t.Fatal(err)
		}
		if len(g.alive) != 0 || g.forks != 0 {
			t.Errorf("alive %v, forks left %d", g.alive, g.forks)
		}
	})
	t.Run("empty group", func(t *testing.T) {
		g := newFakeGroup(0, 0, true)
		if err := killLoop(context.Background(), g, noWait); err != nil || g.frozen {
			t.Errorf("err %v, frozen %v", err, g.frozen)
		}
	})
	t.Run("unkillable task: bounded by ctx, left thawed", func(t *testing.T) {
		g := newFakeGroup(3, 0, true)
		g.immortal = 101
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err := killLoop(ctx, g, killPause)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 processes remain") {
			t.Errorf("err = %v, want deadline exceeded with 1 process remaining", err)
		}
		if g.frozen || g.freezes != g.thaws {
			t.Errorf("left frozen: freezes %d, thaws %d", g.freezes, g.thaws)
		}
	})
	t.Run("done ctx still kills once", func(t *testing.T) {
		g := newFakeGroup(3, 0, false)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := killLoop(ctx, g, killPause); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want canceled", err)
		}
		if len(g.alive) != 0 {
			t.Errorf("alive %v after one round", g.alive)
		}
	})
	t.Run("errors are returned, group thawed", func(t *testing.T) {
		boom := errors.New("boom")
		g := newFakeGroup(3, 0, true)
		g.procsErr = boom
		if err := killLoop(context.Background(), g, noWait); !errors.Is(err, boom) || g.frozen {
			t.Errorf("procs error: err %v, frozen %v", err, g.frozen)
		}
		g = newFakeGroup(3, 0, true)
		g.killErr = boom
		if err := killLoop(context.Background(), g, noWait); !errors.Is(err, boom) || g.frozen {
			t.Errorf("kill error: err %v, frozen %v", err, g.frozen)
		}
	})
}
