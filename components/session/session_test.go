package session

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

// requireRoot skips without root, or fails under
// PINFOLD_REQUIRE_ALL_FEATURES=1.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
		t.Fatalf("requires root, found euid %d (PINFOLD_REQUIRE_ALL_FEATURES=1 turns this skip into a failure)", os.Geteuid())
	}
	t.Skipf("requires root, found euid %d", os.Geteuid())
}

// buildLauncher builds the launcher into a directory others can read and
// search: the components run it under their own uids.
func buildLauncher(t *testing.T) (bin, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "pinfold-session-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "launcher")
	if out, err := exec.Command("go", "build", "-tags", "netgo", "-o", bin, "github.com/pinfold/pinfold/cmd/launcher").CombinedOutput(); err != nil {
		t.Fatalf("build launcher: %v\n%s", err, out)
	}
	return bin, dir
}

func status(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A real session: kms runs under a throwaway uid of its own, confined,
// serves net over the socket in the session directory and refuses the
// agent; killed, it is reported at once; Stop leaves no process and
// nothing in the directory but the log.
func TestSessionKMS(t *testing.T) {
	requireRoot(t)
	bin, dir := buildLauncher(t)
	rules := []policy.Secret{{Name: "github", Hosts: []policy.Domain{"api.github.com"}, Header: "Authorization", Template: "Bearer {secret}"}}
	s, err := Start(Config{Launcher: bin, Root: filepath.Join(dir, "sessions"), Rules: rules,
		Secrets: []kms.Secret{{Name: "github", Value: []byte("ghp_session_value")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	st, err := os.Stat(s.Dir)
	if err != nil || st.Mode().Perm() != 0o711 {
		t.Errorf("session directory %s: %v, %v", s.Dir, st.Mode(), err)
	}
	sock := filepath.Join(s.Dir, "kms.sock")
	dial := func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) }
	netLeaf, _ := s.PKI.Issue(pki.Net)
	c, err := rpc.NewClient(netLeaf, pki.KMS, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got kms.ReleaseResult
	var d rpc.Decision
	for { // kms may still be starting: the socket exists, the server not yet
		d, err = c.Call(ctx, "release", kms.ReleaseRequest{Name: "github", Host: "api.github.com"}, &got)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || !d.Allowed || string(got.Value) != "ghp_session_value" {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "kms.log"))
		t.Fatalf("net asks kms: %+v %q %v\nkms.log:\n%s", d, got.Value, err, log)
	}
	agentLeaf, _ := s.PKI.Issue(pki.Agent)
	agent, _ := rpc.NewClient(agentLeaf, pki.FS, dial, nil) // a call the agent may make, dialled to kms
	defer agent.Close()
	if d, err := agent.Call(ctx, "release", kms.ReleaseRequest{Name: "github", Host: "api.github.com"}, &got); err == nil {
		t.Errorf("the agent reached kms: %+v", d)
	}

	// A process of another uid (nobody) is turned away before TLS, and kms
	// logs it.
	probe := exec.Command(bin, "__pinfold_probe", "unix-connect", sock)
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	probe.Run()
	deadline := time.Now().Add(5 * time.Second)
	for {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "kms.log"))
		if strings.Contains(string(log), `caller="uid 65534" reason=peer_uid`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kms did not refuse nobody by uid:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}

	pid := s.Pid(pki.KMS)
	// kms runs in a cgroup of its own (every hierarchy the host has).
	group := fmt.Sprintf("/pinfold/s-%d-%s-kms", os.Getpid(), s.ID)
	cgs, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cgs), group) {
		t.Errorf("kms is not in its own group %s:\n%s", group, cgs)
	}
	stat := status(t, pid)
	var uid int
	fmt.Sscanf(stat[strings.Index(stat, "Uid:"):], "Uid:\t%d", &uid)
	if uid < 0x70000000 || uid >= 0x70000000+100_000_000 {
		t.Errorf("kms runs as uid %d, not a throwaway uid", uid)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "Groups:\t \n", "CapEff:\t0000000000000000"} {
		if !strings.Contains(stat, want) {
			t.Errorf("kms status lacks %q", want)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-s.Exited():
		if e.Role != pki.KMS || e.Err == nil {
			t.Errorf("exit reported as %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("kms's death was not reported")
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	// Only the logs stay, for the person.
	left, _ := os.ReadDir(s.Dir)
	for _, e := range left {
		if e.Name() != "kms.log" {
			t.Errorf("%s still there after Stop", filepath.Join(s.Dir, e.Name()))
		}
	}
	if len(left) != 1 {
		t.Errorf("the kms log was not kept: %v", left)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(cgs)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.Contains(f[2], group) {
			continue
		}
		hier := "/sys/fs/cgroup/unified" // hybrid's v2 mount; pure v2 below
		if f[1] != "" {
			hier = "/sys/fs/cgroup/" + strings.TrimPrefix(strings.Split(f[1], ",")[0], "name=")
		} else if _, err := os.Stat(hier); err != nil {
			hier = "/sys/fs/cgroup"
		}
		if _, err := os.Stat(hier + f[2]); !os.IsNotExist(err) {
			t.Errorf("kms's group %s still there after Stop: %v", hier+f[2], err)
		}
	}
}

// startPlain starts a session with nothing but its root (kms alone),
// as root.
func startPlain(t *testing.T) *Session {
	t.Helper()
	requireRoot(t)
	bin, dir := buildLauncher(t)
	s, err := Start(Config{Launcher: bin, Root: filepath.Join(dir, "sessions")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Stop ends components that are still running.
func TestSessionStopKills(t *testing.T) {
	s := startPlain(t)
	pid := s.Pid(pki.KMS)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("kms not running: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("kms (pid %d) still runs after Stop", pid)
	}
}

// Only the secrets some rule names leave the launcher for kms.
func TestNamed(t *testing.T) {
	got := named([]kms.Secret{{Name: "a"}, {Name: "b"}, {Name: "c"}}, []policy.Secret{{Name: "c"}, {Name: "a"}})
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "c" {
		t.Errorf("named: %+v", got)
	}
}

// A sessions directory others could write is refused before anything
// starts (they could swap the sockets).
func TestSessionRootMustBePrivate(t *testing.T) {
	requireRoot(t)
	root := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if s, err := Start(Config{Launcher: "/nonexistent", Root: root}); err == nil || !strings.Contains(err.Error(), "others cannot write") {
		if s != nil {
			s.Stop()
		}
		t.Errorf("world-writable root: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("something was made in the refused root: %v", ents)
	}
}

// A component runs Go on a few CPUs at most, whatever the host has: its
// threads must stay within ComponentPids.
func TestComponentEnvProcs(t *testing.T) {
	for _, role := range []pki.Role{pki.FS, pki.Net, pki.KMS, pki.Bash} {
		env := ComponentEnv(role)
		want := "GOMAXPROCS=" + strconv.Itoa(min(runtime.NumCPU(), ComponentProcs))
		if !slices.Contains(env, want) {
			t.Errorf("%s: environment %q lacks %s", role, env, want)
		}
		// The collector's soft limit is below the cgroup's hard one, with
		// room for what is not heap.
		var soft int64
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "GOMEMLIMIT="); ok {
				soft, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if hard := componentMemory(role); soft <= hard/2 || soft > hard*4/5 {
			t.Errorf("%s: GOMEMLIMIT %d for a cgroup limit of %d; want between a half and four fifths of it", role, soft, hard)
		}
	}
	if componentMemory(pki.Net) != NetMemory || componentMemory(pki.FS) != ComponentMemory {
		t.Error("net's memory limit is not its own")
	}
}
