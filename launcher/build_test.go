package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/pinfold/pinfold/policy"
)

// testPolicy parses a policy whose workspace is a fresh directory.
func testPolicy(t *testing.T, extra string) (*policy.Policy, string) {
	t.Helper()
	ws := t.TempDir()
	text := "version = 1\n[workspace]\npath = \"" + ws + "\"\n[files]\nread = [\"/usr/share\"]\nwrite = [\"" + ws + "\"]\nexec = [\"/usr/bin\"]\n" + extra
	p, err := policy.Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p, ws
}

func hostWith(abi int, netns bool) Host {
	ok := Feature{Available: true}
	h := Host{Root: false, UserNS: ok, NetNS: ok, PidNS: ok, MountNS: ok}
	h.Landlock.ABI = abi
	if !netns {
		h.NetNS = Feature{Detail: "disabled"}
	}
	return h
}

func TestBuildPlanNetwork(t *testing.T) {
	req := func(p *policy.Policy) Request {
		return Request{Policy: p, Argv: []string{"/usr/bin/true"}, Environ: []string{"PATH=/usr/bin", "SECRET=x"}, Cwd: "/"}
	}
	none, _ := testPolicy(t, "")
	ports, _ := testPolicy(t, "[network]\nmode = \"ports\"\nconnect_tcp = [443]\nbind_tcp = [8080]\n")
	tcp := uint64(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	tests := []struct {
		name       string
		p          *policy.Policy
		h          Host
		newNet     bool
		handledNet uint64
		ports      []PortRule
		refused    string
	}{
		{"none with a network namespace: loopback is the agent's own", none, hostWith(7, true), true, 0, nil, ""},
		{"none without one: Landlock denies all TCP", none, hostWith(7, false), false, tcp, nil, ""},
		{"none without one below ABI 4: refused (SR-03)", none, hostWith(3, false), false, 0, nil, "SR-03"},
		{"ports: host network, listed ports only", ports, hostWith(4, true), false, tcp,
			[]PortRule{{443, ll.AccessNetConnectTCP}, {8080, ll.AccessNetBindTCP}}, ""},
		{"ports below ABI 4: refused", ports, hostWith(3, true), false, 0, nil, "ABI 4"},
		// Not the network's floor but the write rules' (every testPolicy
		// has a write path): a second layer behind Assess's refusal.
		{"write rules below ABI 3: refused", none, hostWith(2, true), false, 0, nil, "write rules (the truncate right) need Landlock ABI 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, _, err := BuildPlan(req(tt.p), tt.h, IdentityPlan{})
			if tt.refused != "" {
				var re *RefusedError
				if !errors.As(err, &re) || !strings.Contains(re.Error(), tt.refused) {
					t.Fatalf("err = %v, want a refusal naming %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.NewNet != tt.newNet || plan.Landlock.HandledNet != tt.handledNet || !slices.Equal(plan.Landlock.Ports, tt.ports) {
				t.Errorf("NewNet %v HandledNet %#x Ports %v; want %v %#x %v", plan.NewNet, plan.Landlock.HandledNet, plan.Landlock.Ports, tt.newNet, tt.handledNet, tt.ports)
			}
		})
	}
}

func TestBuildPlanRulesAndEnv(t *testing.T) {
	p, ws := testPolicy(t, "[env]\npass = [\"PATH\", \"MISSING\"]\nset = { CI = \"1\" }\n")
	file := filepath.Join(ws, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	plan, notes, err := BuildPlan(Request{Policy: p, Argv: []string{"true"}, Environ: []string{"PATH=/usr/bin", "SECRET_TOKEN=x", "HOME=/root"}, Cwd: "/"}, hostWith(7, true), IdentityPlan{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Path != "/usr/bin/true" {
		t.Errorf("agent resolved to %q through the agent's PATH, want /usr/bin/true", plan.Path)
	}
	wantEnv := []string{"PATH=/usr/bin", "CI=1", "HOME=" + privateHome}
	if !slices.Equal(plan.Env, wantEnv) {
		t.Errorf("env = %q, want %q (nothing inherited but what is passed)", plan.Env, wantEnv)
	}
	if !slices.Equal(notes.Dropped, []string{"HOME", "SECRET_TOKEN"}) {
		t.Errorf("dropped = %q, want [HOME SECRET_TOKEN]", notes.Dropped)
	}
	rule := func(path string) PathRule {
		for _, r := range plan.Landlock.Paths {
			if r.Path == path {
				return r
			}
		}
		t.Fatalf("no rule for %s in %+v", path, plan.Landlock.Paths)
		return PathRule{}
	}
	if r := rule(ws); r.Access&ll.AccessFSExecute != 0 || r.Access&ll.AccessFSWriteFile == 0 {
		t.Errorf("write rule %+v: must write, never execute (SR-01)", r)
	}
	// The workspace is a write tree: cloned writable, never executable.
	if len(plan.Mounts.Trees) != 1 || plan.Mounts.Trees[0] != (TreePlan{Path: ws, Write: true, Owner: os.Getuid()}) {
		t.Errorf("trees = %+v, want the workspace as a write tree", plan.Mounts.Trees)
	}
	if r := rule("/usr/bin"); r.Access&ll.AccessFSExecute == 0 || r.Access&ll.AccessFSWriteFile != 0 {
		t.Errorf("exec rule %+v: must execute and never write", r)
	}
	if r := rule("/usr/share"); r.Access != accessRead {
		t.Errorf("read rule %+v: want read only", r)
	}
	if r := rule("/dev/null"); r.Access&^accessFileOnly != 0 {
		t.Errorf("file rule %+v carries directory rights", r)
	}
	if r := rule(privateTmp); r.Access&ll.AccessFSExecute != 0 {
		t.Errorf("private /tmp rule %+v is executable", r)
	}
	// A missing agent is an error before anything starts.
	if _, _, err := BuildPlan(Request{Policy: p, Argv: []string{"no-such-agent"}, Environ: []string{"PATH=/usr/bin"}, Cwd: "/"}, hostWith(7, true), IdentityPlan{}); err == nil || !strings.Contains(err.Error(), `agent "no-such-agent"`) {
		t.Errorf("missing agent: err = %v", err)
	}
}

// As root the agent's throwaway uid must be able to reach every listed
// path: a directory above one that others cannot search is refused, with
// the directory named; paths grafted into the private /tmp are not.
func TestCheckSearchable(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "pinfold-search-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	closed := filepath.Join(base, "closed")
	open := filepath.Join(base, "open")
	for _, d := range []string{filepath.Join(closed, "ws"), filepath.Join(open, "ws")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	err = checkSearchable([]policy.Path{policy.Path(filepath.Join(closed, "ws"))})
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Detail, closed+" is not searchable by others (mode 0700)") {
		t.Errorf("closed parent: err = %v", err)
	}
	if err := checkSearchable([]policy.Path{policy.Path(filepath.Join(open, "ws"))}); err != nil {
		t.Errorf("searchable parents: %v", err)
	}
	if err := checkSearchable([]policy.Path{"/tmp/some/where"}); err != nil {
		t.Errorf("a path under the private /tmp: %v", err)
	}
}

// A workspace beneath the sandbox's private /tmp that no list brings back
// is refused, naming the directory; listed in files.write it is grafted
// and the plan builds (the control).
func TestBuildPlanWorkspaceUnderTmp(t *testing.T) {
	ws, err := os.MkdirTemp("/tmp", "pinfold-ws-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	build := func(files string) error {
		text := "version = 1\n[workspace]\npath = \"" + ws + "\"\n[files]\nexec = [\"/usr/bin\"]\n" + files
		p, err := policy.Parse("test.toml", []byte(text))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		_, _, err = BuildPlan(Request{Policy: p, Argv: []string{"/usr/bin/true"}, Environ: []string{"PATH=/usr/bin"}, Cwd: "/"}, hostWith(7, true), IdentityPlan{})
		return err
	}
	var refused *RefusedError
	if err := build(""); !errors.As(err, &refused) || !strings.Contains(err.Error(), "is beneath /tmp") {
		t.Errorf("workspace under /tmp, not listed: %v", err)
	}
	if err := build("write = [\"" + ws + "\"]\n"); err != nil {
		t.Errorf("control: listed in files.write: %v", err)
	}
}

// The private HOME is made in the sandbox's /tmp; a listed path at or
// beneath it would collide with it: refused in stage 1, with a hint, not
// left to fail in stage 2. A path beside it is fine (the control).
func TestCheckPrivateHome(t *testing.T) {
	var refused *RefusedError
	for _, p := range []string{privateHome, privateHome + "/.config"} {
		if err := checkPrivateHome([]TreePlan{{Path: "/tmp/other"}, {Path: p}}); !errors.As(err, &refused) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := checkPrivateHome([]TreePlan{{Path: "/tmp/homework"}, {Path: "/srv/home"}}); err != nil {
		t.Errorf("control: %v", err)
	}
}
