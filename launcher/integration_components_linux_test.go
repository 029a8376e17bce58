package launcher

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/internal/testpki"
)

// Components mode, run for real: the launcher starts kms and fs under
// throwaway uids of their own, the agent reaches fs only through the
// listener in its network namespace, with its own certificate, and the
// session ends with its components.

// componentsPol is a components-mode policy under which the agent can
// run sh and the launcher binary (its fs client) and nothing reaches the
// workspace directly.
func componentsPol() itPol {
	return itPol{mode: "components", exec: []string{"/usr/bin", "/usr/lib"}}
}

// agentSh runs script with sh in a components session.
func (s *itSandbox) agentSh(t *testing.T, p itPol, o itOpts, script string) itResult {
	t.Helper()
	path, hash := s.writePolicy(t, p)
	argv := []string{itEnv.launcher, "--policy-sha256", hash, "--policy", path}
	if !o.verbose {
		argv = append(argv, "--quiet")
	}
	argv = append(argv, "--", "/usr/bin/sh", "-c", script)
	return s.run(t, o, argv...)
}

// The agent reads and writes the workspace through fs (files it creates
// belong to the workspace's owner on disk: fs works through an idmapped
// mount), cannot reach it directly, and gets answers that name the rule
// for what fs refuses.
func TestIntegrationComponentsFS(t *testing.T) {
	s := newSandbox(t)
	const owner = 4242
	if err := os.Chown(s.ws, owner, owner); err != nil {
		t.Fatal(err)
	}
	s.file(t, filepath.Join(s.ws, "in.txt"), "from the host\n")
	os.Chown(filepath.Join(s.ws, "in.txt"), owner, owner)
	secret := s.file(t, filepath.Join(s.outside, "secret"), "outside\n")
	l := itEnv.launcher
	script := strings.Join([]string{
		l + " fs read in.txt",
		"printf 'by the agent' | " + l + " fs write out.txt",
		l + " fs stat out.txt",
		l + " fs ls .",
		"echo direct > " + filepath.Join(s.ws, "direct.txt") + " 2>/dev/null && echo DIRECT-WRITE-WORKED",
		"cat " + filepath.Join(s.ws, "in.txt") + " 2>/dev/null && echo DIRECT-READ-WORKED",
		l + " fs read ../outside/secret; echo escape=$?",
		"printf x | " + l + " fs write .git/hooks/pre-commit; echo hook=$?",
		"true",
	}, "\n")
	r := s.agentSh(t, componentsPol(), itOpts{verbose: true}, script)
	if r.code != 0 {
		t.Fatalf("components session: %s", r)
	}
	for _, want := range []string{"from the host\n", "out.txt", "escape=125", "hook=119"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, r)
		}
	}
	for _, bad := range []string{"DIRECT-WRITE-WORKED", "DIRECT-READ-WORKED", "outside\n"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("stdout has %q: %s", bad, r)
		}
	}
	if !strings.Contains(r.stderr, "fs.protected") || !strings.Contains(r.stderr, "fs.beneath") && !strings.Contains(r.stderr, "bad-request") {
		t.Errorf("denials do not name their rule: %s", r.stderr)
	}
	if !strings.Contains(r.stderr, "components: ") || !strings.Contains(r.stderr, "fs ") {
		t.Errorf("no component summary on stderr: %s", r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(s.ws, "out.txt"))
	if err != nil || string(got) != "by the agent" {
		t.Fatalf("out.txt: %q %v", got, err)
	}
	st := mustExist(t, filepath.Join(s.ws, "out.txt")).Sys().(*syscall.Stat_t)
	if st.Uid != owner || st.Gid != owner {
		t.Errorf("out.txt belongs to %d:%d, want the workspace owner %d", st.Uid, st.Gid, owner)
	}
	mustNotExist(t, filepath.Join(s.ws, "direct.txt"), "the agent wrote the workspace directly")
	mustNotExist(t, filepath.Join(s.ws, ".git/hooks/pre-commit"), "fs wrote a protected path")
	// The control for the escape: the file is there to be read.
	if b, _ := os.ReadFile(secret); string(b) != "outside\n" {
		t.Fatal("control: the outside file is not readable")
	}
}

// sessionPids finds the processes of the session the launcher pid runs:
// its components (by role) and stage 2.
func sessionPids(launcher int) map[string]int {
	out := map[string]int{}
	for _, pid := range procChildren()[launcher] {
		args := cmdline(pid)
		switch {
		case len(args) == 3 && args[1] == "__pinfold_component":
			out[args[2]] = pid
		case len(args) == 2 && args[1] == "__pinfold_stage2":
			out["stage2"] = pid
		}
	}
	return out
}

// procChildren maps every live process to its children, from /proc.
func procChildren() map[int][]int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:\t"); ok {
				pp, _ := strconv.Atoi(v)
				children[pp] = append(children[pp], p)
			}
		}
	}
	return children
}

// waitSession polls until the launcher's kms, fs and stage 2 all run.
func waitSession(launcher int) (map[string]int, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		pids := sessionPids(launcher)
		if pids["kms"] != 0 && pids["fs"] != 0 && pids["stage2"] != 0 {
			return pids, nil
		}
		if time.Now().After(deadline) {
			return pids, fmt.Errorf("session processes not all seen: %v", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone waits until none of pids is alive (zombies included: their parent
// reaps them).
func gone(pids map[string]int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []string
		for role, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				alive = append(alive, fmt.Sprintf("%s (pid %d)", role, pid))
			}
		}
		if len(alive) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still alive: %s", strings.Join(alive, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agentRunning reports whether a process runs with marker in its
// command line (the launcher's own aside).
func agentRunning(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.HasPrefix(b, []byte(itEnv.launcher+"\x00")) {
			return true
		}
	}
	return false
}

// A component killed mid-session stops the session: the agent is killed,
// the other components stopped, the reason printed. The control: the same
// agent, undisturbed, runs to its end (exit 0).
func TestIntegrationComponentDeathStopsSession(t *testing.T) {
	s := newSandbox(t)
	var pids map[string]int
	var findErr error
	r := s.agentSh(t, componentsPol(), itOpts{onStart: func(pid int) {
		go func() {
			if pids, findErr = waitSession(pid); findErr != nil {
				return
			}
			// Mid-session: once the agent runs. Killed before fs had its
			// bootstrap, the launch failed with that reason instead (CI).
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if agentRunning("sleep 20") {
					break
				}
			}
			syscall.Kill(pids["fs"], syscall.SIGKILL)
		}()
	}}, "sleep 20; echo AGENT-FINISHED")
	if findErr != nil {
		t.Fatal(findErr)
	}
	if r.code != 125 || strings.Contains(r.stdout, "AGENT-FINISHED") || !strings.Contains(r.stderr, "component fs exited") || r.elapsed > 15*time.Second {
		t.Fatalf("fs killed: want exit 125 soon, no agent output and the reason, got %s after %v", r, r.elapsed)
	}
	if err := gone(pids); err != nil {
		t.Error(err)
	}
	ctl := s.agentSh(t, componentsPol(), itOpts{}, "sleep 0.2; echo AGENT-FINISHED")
	if ctl.code != 0 || ctl.stdout != "AGENT-FINISHED\n" {
		t.Fatalf("control: %s", ctl)
	}
}

// SIGKILL of the launcher leaves no process of the session behind.
func TestIntegrationComponentsLauncherKilled(t *testing.T) {
	s := newSandbox(t)
	var pids map[string]int
	var findErr error
	r := s.agentSh(t, componentsPol(), itOpts{onStart: func(pid int) {
		go func() {
			if pids, findErr = waitSession(pid); findErr == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}()
	}}, "sleep 20")
	if findErr != nil {
		t.Fatal(findErr)
	}
	if !r.signaled || r.code != 128+9 {
		t.Fatalf("launcher not killed: %s", r)
	}
	if err := gone(pids); err != nil {
		t.Error(err)
	}
}

// proxyPol is a components-mode policy in "proxy" mode whose only
// reachable upstreams are on this host's loopback (unsafe_allow_private),
// with one name denied.
func proxyPol() itPol {
	p := componentsPol()
	p.network = "proxy"
	p.netExtra = "block_all = false\ndeny = [\"blocked.example\"]\nunsafe_allow_private = [\"127.0.0.0/8\"]\n"
	return p
}

// In "proxy" mode the agent reaches the network only through net: a GET
// to an allowed upstream (on this host's loopback, allowed by
// unsafe_allow_private) goes through; a denied name, the cloud metadata
// address and another private range are refused with 403 and the rule,
// decided before anything is dialled (no packet leaves for them); a
// direct connection, without the proxy, does not get out of the agent's
// namespace at all.
func TestIntegrationComponentsProxy(t *testing.T) {
	s := newSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "upstream says hello")
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	up := "http://" + ln.Addr().String() + "/"
	for _, c := range []struct{ url, want string }{
		{up, "status 200 - upstream says hello"},
		{"http://blocked.example/", "status 403 network.deny[0]"},
		{"http://169.254.169.254/latest/meta-data/", "status 403 ssrf.metadata"},
		{"http://10.1.2.3/", "status 403 ssrf.private"},
	} {
		r := s.launch(t, proxyPol(), itOpts{}, "http-get", c.url)
		if r.code != 0 || !strings.HasPrefix(r.stdout, c.want) {
			t.Errorf("GET %s through net: want %q, got %s", c.url, c.want, r)
		}
	}
	if r := s.launch(t, proxyPol(), itOpts{}, "noop"); !strings.Contains(r.stderr, "warning: SSRF protection is off for 127.0.0.0/8") {
		t.Errorf("unsafe_allow_private not said on a --quiet run: %s", r)
	}
	// The agent's own client verb says the same, with the rule.
	v := s.agentSh(t, proxyPol(), itOpts{}, itEnv.launcher+" net get "+up+"; "+itEnv.launcher+" net get http://blocked.example/; echo rc=$?")
	if !strings.Contains(v.stdout, "upstream says hello\n") || !strings.Contains(v.stdout, "rc=119") || !strings.Contains(v.stderr, "rule network.deny[0]") {
		t.Errorf("launcher net get: %s", v)
	}
	// Without the proxy the agent's namespace has no route out.
	r := s.launch(t, proxyPol(), itOpts{}, "tcp-connect", ln.Addr().String())
	if !strings.HasPrefix(r.stdout, "denied ") {
		t.Errorf("a direct connect left the agent's namespace: %s", r)
	}
	s.control(t, itOpts{}, "tcp-connect", ln.Addr().String())
}

// The secret's bytes are nowhere the agent can read: its environment, its
// files, its credential directory, /proc. The control: the same scan finds
// them in a file planted where the agent can read. Nor are they in the
// launcher's output or the session's logs.
func TestIntegrationComponentsSecretUnseen(t *testing.T) {
	s := newSandbox(t)
	var value [24]byte
	rand.Read(value[:])
	secretValue := "ghp_" + hex.EncodeToString(value[:])
	keyFile := filepath.Join(s.dir, "vault.key")
	key := make([]byte, 32)
	rand.Read(key)
	must(t, os.WriteFile(keyFile, key, 0o600))
	vault := filepath.Join(s.dir, "vault")
	add := s.run(t, itOpts{stdin: fileWith(t, secretValue)}, itEnv.launcher, "secrets", "add", "github", "--vault", vault, "--key-file", keyFile)
	if add.code != 0 {
		t.Fatalf("secrets add: %s", add)
	}
	canary := filepath.Join(s.dir, "canary")
	must(t, os.Mkdir(canary, 0o755))
	s.file(t, filepath.Join(canary, "planted"), "x"+secretValue+"x")
	p := proxyPol()
	p.extra = "[[secrets]]\nname = \"github\"\nhosts = [\"api.github.com\"]\nheader = \"Authorization\"\ntemplate = \"Bearer {secret}\"\n"
	scan := func(p itPol, roots ...string) itResult {
		path, hash := s.writePolicy(t, p)
		argv := append([]string{itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--vault", vault, "--key-file", keyFile,
			"--", itEnv.launcher, "__pinfold_probe", "find-bytes", hex.EncodeToString([]byte(secretValue))}, roots...)
		return s.run(t, itOpts{}, argv...)
	}
	roots := []string{"/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline", "/tmp", "/dev/shm", "/run", "/etc", "/var", "/home", "/root", itEnv.base, canary}
	r := scan(p, roots...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "absent ") {
		t.Fatalf("the agent found the secret: %s", r)
	}
	if !strings.Contains(r.stderr, "kms 0 requests") || !strings.Contains(r.stderr, "net ") {
		t.Errorf("the session did not run kms and net: %s", r.stderr)
	}
	ctl := p
	ctl.read = append(ctl.read, canary)
	if c := scan(ctl, roots...); c.code != 1 || c.stdout != "found "+filepath.Join(canary, "planted")+"\n" {
		t.Fatalf("control: the scan does not find the planted copy, so its silence proves nothing: %s", c)
	}
	if strings.Contains(r.stdout+r.stderr, secretValue) {
		t.Error("the secret reached the launcher's output")
	}
	logs, _ := filepath.Glob("/run/pinfold/*/*.log")
	for _, l := range logs {
		if b, _ := os.ReadFile(l); bytes.Contains(b, []byte(secretValue)) {
			t.Errorf("the secret is in %s", l)
		}
	}
}

// fileWith is a file holding content, rewound, for a stdin.
func fileWith(t *testing.T, content string) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.WriteString(content)
	f.Seek(0, 0)
	return f
}

// A request to a [[secrets]] rule's host leaves net with the rule's
// header carrying the vault's value, over TLS verified against the roots
// the person gave the launcher (SSL_CERT_FILE, passed to net); the agent,
// which trusts only the interception CA for that host, sees an answer but
// never the value. The control: the same handler behind a host no rule
// names (127.0.0.1, plain HTTP), through the same net, gets no header.
func TestIntegrationComponentsSecretInjected(t *testing.T) {
	s := newSandbox(t)
	secretValue := "ghp_injected_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	keyFile := filepath.Join(s.dir, "vault.key")
	key := make([]byte, 32)
	rand.Read(key)
	must(t, os.WriteFile(keyFile, key, 0o600))
	vault := filepath.Join(s.dir, "vault")
	if add := s.run(t, itOpts{stdin: fileWith(t, secretValue)}, itEnv.launcher, "secrets", "add", "github", "--vault", vault, "--key-file", keyFile); add.code != 0 {
		t.Fatalf("secrets add: %s", add)
	}
	// The upstream: TLS for "localhost" and 127.0.0.1 under a test root,
	// saying whether the header carried the value (never the value).
	rootPEM, cert := testTLS(t)
	roots := filepath.Join(s.dir, "roots.pem")
	must(t, os.WriteFile(roots, rootPEM, 0o644))
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch got := r.Header.Get("Authorization"); {
			case got == "Bearer "+secretValue:
				fmt.Fprintln(w, "header-carries-the-secret")
			case got == "":
				fmt.Fprintln(w, "no-header")
			default:
				fmt.Fprintln(w, "another-header")
			}
		})}
	go srv.ServeTLS(ln, "", "")
	defer srv.Close()
	plainLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: srv.Handler}
	go plain.Serve(plainLn)
	defer plain.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	p := proxyPol()
	p.extra = "[[secrets]]\nname = \"github\"\nhosts = [\"localhost\"]\nheader = \"Authorization\"\ntemplate = \"Bearer {secret}\"\n"
	path, hash := s.writePolicy(t, p)
	get := func(url string, agentEnv ...string) itResult {
		argv := []string{itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--vault", vault, "--key-file", keyFile,
			"--", itEnv.launcher, "__pinfold_probe", "http-get", url}
		return s.run(t, itOpts{env: append([]string{"SSL_CERT_FILE=" + roots}, agentEnv...)}, argv...)
	}
	r := get("https://localhost:" + port + "/")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "status 200 - header-carries-the-secret") {
		t.Fatalf("through the injecting net: %s", r)
	}
	if strings.Contains(r.stdout+r.stderr, secretValue) {
		t.Error("the value reached the agent or the launcher's output")
	}
	if !strings.Contains(r.stderr, "kms 1 requests, 0 denied") {
		t.Errorf("kms did not release the value exactly once: %s", r.stderr)
	}
	if c := get("http://" + plainLn.Addr().String() + "/"); c.code != 0 || !strings.HasPrefix(c.stdout, "status 200 - no-header") {
		t.Errorf("control, a host no rule names: %s", c)
	}
}

// testTLS is a root certificate (PEM) and a server certificate under it
// for localhost and 127.0.0.1.
func testTLS(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	rootPEM, cert, err := testpki.Localhost()
	if err != nil {
		t.Fatal(err)
	}
	return rootPEM, cert
}

// Wrapper mode has net too in "proxy" mode, as root (net under a
// throwaway uid) and unprivileged (net under the person's uid): stage 2
// makes the listener in the agent's namespace and hands it out. The same
// decisions as in components mode: an allowed upstream answers, a denied
// name is refused with its rule, and a direct connect has no route out.
func TestIntegrationWrapperProxy(t *testing.T) {
	for _, uid := range []int{0, 65534} {
		t.Run(fmt.Sprintf("uid%d", uid), func(t *testing.T) {
			s := newSandboxAs(t, uid)
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintln(w, "upstream says hello")
			})}
			go srv.Serve(ln)
			defer srv.Close()
			p := itPol{network: "proxy", netExtra: "block_all = false\ndeny = [\"blocked.example\"]\nunsafe_allow_private = [\"127.0.0.0/8\"]\n"}
			for _, c := range []struct{ url, want string }{
				{"http://" + ln.Addr().String() + "/", "status 200 - upstream says hello"},
				{"http://blocked.example/", "status 403 network.deny[0]"},
				{"http://169.254.169.254/", "status 403 ssrf.metadata"},
			} {
				r := s.launch(t, p, itOpts{verbose: true}, "http-get", c.url)
				if r.code != 0 || !strings.HasPrefix(r.stdout, c.want) {
					t.Errorf("GET %s: want %q, got %s", c.url, c.want, r)
				}
			}
			r := s.launch(t, p, itOpts{}, "tcp-connect", ln.Addr().String())
			if !strings.HasPrefix(r.stdout, "denied ") {
				t.Errorf("a direct connect left the agent's namespace: %s", r)
			}
			// Whoever starts the launcher may name listeners of its own
			// (a gateway does): net refuses them though the policy opens
			// loopback, as in components mode; the control above reached
			// the same address. A malformed list starts nothing.
			self := itOpts{env: []string{"PINFOLD_SELF_LISTENERS=" + ln.Addr().String()}}
			if r := s.launch(t, p, self, "http-get", "http://"+ln.Addr().String()+"/"); r.code != 0 || !strings.HasPrefix(r.stdout, "status 403 ssrf.self") {
				t.Errorf("GET of a listener named in PINFOLD_SELF_LISTENERS: %s", r)
			}
			if r := s.launch(t, p, itOpts{env: []string{"PINFOLD_SELF_LISTENERS=garbage"}}, "http-get", "http://"+ln.Addr().String()+"/"); r.code != 120 || !strings.Contains(r.stderr, "PINFOLD_SELF_LISTENERS") {
				t.Errorf("a malformed PINFOLD_SELF_LISTENERS: %s", r)
			}
		})
	}
}

// A change to a protected path waits for the person's answer on the
// launcher's terminal: typed there, it goes ahead. The agent cannot give
// that answer: what it writes to its terminal (which is the launcher's)
// is output, not input, and the question times out as no.
func TestIntegrationComponentsApproval(t *testing.T) {
	s := newSandbox(t)
	hook := filepath.Join(s.ws, ".git", "hooks", "pre-commit")
	must(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	l := itEnv.launcher
	for _, c := range []struct {
		name, agentAlso string
		answer          bool
		want            string
	}{
		{"the person approves", "", true, "rc=0"},
		// Its stdin is the terminal, open for writing too: before the
		// question (typeahead) and while it waits.
		// (fd 3: sh gives an asynchronous list /dev/null as stdin.)
		{"the agent answers itself", "exec 3<&0; printf 'yes\\ny\\n' >&3; (for i in 1 2 3 4 5 6; do printf 'yes\\n' >&3; sleep 0.4; done) & ", false, "rc=119"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(hook)
			answer := ""
			if c.answer {
				answer = "yes"
			}
			r, shown := s.ptySession(t, c.agentAlso+"printf 'echo hooked' | "+l+" fs write .git/hooks/pre-commit; echo rc=$?", answer)
			if !strings.Contains(shown, `asks: write ".git/hooks/pre-commit"`) || r.stdout != c.want+"\n" {
				t.Fatalf("terminal %q; run %s", shown, r)
			}
			_, err := os.Stat(hook)
			if c.answer != (err == nil) {
				t.Errorf("the hook exists: %v, want %v", err == nil, c.answer)
			}
		})
	}
}

// While a question waits on the terminal the agent shares, the agent is
// frozen: a background writer that ignores SIGTTOU (so TOSTOP alone would
// not stop it) prints nothing between the question and the answer, and
// goes on after. The control is the same writer before the question.
func TestIntegrationComponentsApprovalAgentFrozen(t *testing.T) {
	s := newSandbox(t)
	hook := filepath.Join(s.ws, ".git", "hooks", "pre-commit")
	must(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	// fd 3: sh gives an asynchronous list /dev/null as its stdin.
	scribbler := "exec 3<&0; (trap '' TTOU; i=0; while [ $i -lt 150 ]; do printf 'SCRIBBLE%d\\n' $i >&3; sleep 0.02; i=$((i+1)); done) & sleep 0.3; "
	script := scribbler + "printf 'echo hooked' | " + itEnv.launcher + " fs write .git/hooks/pre-commit; echo rc=$?; wait"
	master, slave := openPTY(t)
	path, hash := s.writePolicy(t, componentsPol())
	var mu sync.Mutex
	var screen strings.Builder
	atAnswer := make(chan string, 1)
	o := itOpts{stdin: slave, ctty: true, onStart: func(int) {
		go func() {
			buf := make([]byte, 4096)
			asked := false
			for {
				n, err := master.Read(buf)
				mu.Lock()
				screen.Write(buf[:max(n, 0)])
				shown := screen.String()
				mu.Unlock()
				if !asked && strings.Contains(shown, "to allow") {
					asked = true
					go func() {
						time.Sleep(answerDelay) // the writer would print ~50 lines meanwhile
						mu.Lock()
						atAnswer <- screen.String()
						mu.Unlock()
						master.WriteString(withCode(shown, "yes") + "\n")
					}()
				}
				if err != nil {
					return
				}
			}
		}()
	}}
	r := s.run(t, o, itEnv.launcher, "--quiet", "--approval-timeout", "5s", "--policy-sha256", hash, "--policy", path, "--", "/usr/bin/sh", "-c", script)
	var before string
	select {
	case before = <-atAnswer:
	default:
		t.Fatalf("no question was shown: %s", r)
	}
	q := strings.Index(before, "to allow")
	if !strings.Contains(before[:q], "SCRIBBLE") {
		t.Fatalf("control: the writer printed nothing before the question: %q; %s", before, r)
	}
	if during := before[q:]; strings.Contains(during, "SCRIBBLE") {
		t.Errorf("the agent wrote over the waiting question: %q", during)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	after := screen.String()
	mu.Unlock()
	if !strings.Contains(after[len(before):], "SCRIBBLE") || r.stdout != "rc=0\n" {
		t.Errorf("after the answer the agent did not go on, or the write failed: %s; terminal %q", r, after)
	}
	if _, err := os.Stat(hook); err != nil {
		t.Errorf("approved, but the hook was not written: %v", err)
	}
}

// ptySession runs script in a components session whose launcher has a
// fresh pty as its controlling terminal, answering the first question
// shown there with answer ("" for none); it returns the run and what the
// terminal showed.
func (s *itSandbox) ptySession(t *testing.T, script, answer string) (itResult, string) {
	t.Helper()
	return s.ptySessionWith(t, componentsPol(), script, answer)
}

// ptySessionWith is ptySession under the components-mode policy p, with
// one answer per question, in order ("" leaves a question unanswered).
func (s *itSandbox) ptySessionWith(t *testing.T, p itPol, script string, answers ...string) (itResult, string) {
	t.Helper()
	master, slave := openPTY(t)
	path, hash := s.writePolicy(t, p)
	var screen func() string
	o := itOpts{stdin: slave, ctty: true, onStart: func(int) { screen = answerOn(master, answers...) }}
	r := s.run(t, o, itEnv.launcher, "--quiet", "--approval-timeout", "3s", "--policy-sha256", hash, "--policy", path, "--", "/usr/bin/sh", "-c", script)
	time.Sleep(100 * time.Millisecond)
	return r, screen()
}

// questionCode is what the latest question asks to be typed.
var questionCode = regexp.MustCompile(`Type "([a-z]+) ([0-9]{4})" to allow`)

// withCode is answer as the person types it for the latest question on
// screen: its word with the question's code, or answer itself when it is
// not that word (a refusal, a wrong word).
func withCode(screen, answer string) string {
	m := questionCode.FindAllStringSubmatch(screen, -1)
	if len(m) > 0 && m[len(m)-1][1] == answer {
		return answer + " " + m[len(m)-1][2]
	}
	return answer
}

// answerDelay is how long after a question shows the tests type its
// answer: more than approve's settle, within which keys are discarded.
const answerDelay = time.Second

// answerOn reads the launcher's terminal (master) until it closes and
// types one answer per question shown there, in order ("" leaves a
// question unanswered); screen is what it showed so far.
func answerOn(master *os.File, answers ...string) (screen func() string) {
	var mu sync.Mutex
	var b strings.Builder
	go func() {
		buf := make([]byte, 4096)
		answered := 0
		for {
			n, err := master.Read(buf)
			mu.Lock()
			b.Write(buf[:max(n, 0)])
			shown := b.String()
			asked := strings.Count(shown, "to allow")
			mu.Unlock()
			for ; answered < asked && answered < len(answers); answered++ {
				if a := answers[answered]; a != "" {
					// Typed once the question stands (keys that come
					// sooner are discarded), with its code when the answer
					// is the word it asks for.
					a = withCode(shown, a)
					go func() {
						time.Sleep(answerDelay)
						master.WriteString(a + "\n")
					}()
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// A recursive delete through fs: confirmed by the person's "delete" on
// the launcher's terminal, the tree is backed up and removed, and
// `launcher backups restore` brings it back byte for byte. "y" is not
// "delete": that answer removes nothing.
func TestIntegrationComponentsRecursiveDelete(t *testing.T) {
	s := newSandbox(t)
	store, err := storeDirFor(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	files := map[string]string{"build/a.o": "aaa", "build/sub/b.o": strings.Repeat("b", 70000), "build/sub/deep/c": "c"}
	for rel, content := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(s.ws, rel)), 0o755))
		s.file(t, filepath.Join(s.ws, rel), content)
	}
	rm := itEnv.launcher + " fs rm -r build; echo rc=$?"
	r, screen := s.ptySession(t, rm, "y")
	if r.stdout != "rc=119\n" || !strings.Contains(screen, `asks: delete "build" and everything beneath it`) || !strings.Contains(screen, `Type "delete `) {
		t.Fatalf("answered y: %s; terminal %q", r, screen)
	}
	mustExist(t, filepath.Join(s.ws, "build/sub/deep/c"))
	r, _ = s.ptySession(t, rm, "delete")
	if r.stdout != "rc=0\n" || !strings.Contains(r.stderr, "deleted; backup ") {
		t.Fatalf("answered delete: %s", r)
	}
	mustNotExist(t, filepath.Join(s.ws, "build"), "the confirmed delete did not happen")
	id := strings.TrimSpace(r.stderr[strings.Index(r.stderr, "backup ")+len("backup "):])
	id = strings.Fields(id)[0]
	list := s.run(t, itOpts{}, itEnv.launcher, "backups", "list", "--workspace", s.ws)
	if !strings.Contains(list.stdout, id) {
		t.Fatalf("backups list: %s", list)
	}
	if v := s.run(t, itOpts{}, itEnv.launcher, "backups", "verify", id, "--workspace", s.ws); v.code != 0 {
		t.Fatalf("verify: %s", v)
	}
	if rs := s.run(t, itOpts{}, itEnv.launcher, "backups", "restore", id, "--workspace", s.ws); rs.code != 0 {
		t.Fatalf("restore: %s", rs)
	}
	for rel, want := range files {
		if b, err := os.ReadFile(filepath.Join(s.ws, rel)); err != nil || string(b) != want {
			t.Errorf("%s after restore: %d bytes, %v", rel, len(b), err)
		}
	}
	if again := s.run(t, itOpts{}, itEnv.launcher, "backups", "restore", id, "--workspace", s.ws); again.code == 0 {
		t.Errorf("a second restore overwrote the tree: %s", again)
	}
}

// storeDirFor is the backup store the session uses for ws (as
// components/session.StoreDir names it: the launcher package cannot
// import the session).
func storeDirFor(ws string) (string, error) {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join("/var/lib/pinfold/backups", hex.EncodeToString(sum[:8])), nil
}

// A policy file kept in the workspace is the launcher's, not the
// agent's: fs neither reads nor lists it (the control: a file beside it
// is read).
func TestIntegrationComponentsPolicyHidden(t *testing.T) {
	s := newSandbox(t)
	s.file(t, filepath.Join(s.ws, "beside.txt"), "readable\n")
	text := s.policyText(componentsPol())
	path := filepath.Join(s.ws, "policy.toml")
	must(t, os.WriteFile(path, []byte(text), 0o644))
	sum := sha256.Sum256([]byte(text))
	l := itEnv.launcher
	script := l + " fs read beside.txt; " + l + " fs read policy.toml; echo policy=$?; " + l + " fs ls"
	r := s.run(t, itOpts{}, l, "--quiet", "--policy-sha256", hex.EncodeToString(sum[:]), "--policy", path, "--", "/usr/bin/sh", "-c", script)
	if !strings.HasPrefix(r.stdout, "readable\npolicy=119\n") || strings.Contains(r.stdout, "policy.toml") || !strings.Contains(r.stderr, "fs.authority") {
		t.Fatalf("%s", r)
	}
}

// While a question waits, nothing of the launcher's job writes to the
// terminal: what the agent had written to a pipe (launcher … | cat) was
// written by the pipeline's next process after the question was drawn,
// and an agent redrew the question's lines so (a re-test: the person
// approved a write to .git/hooks shown as one to README.md, with the real
// code, 5 in 5). The pipeline's other processes stop for the question
// and go on after the answer. Here cat starts a second after the launch,
// when the agent has filled the pipe and asked.
func TestIntegrationComponentsApprovalPipelineHeld(t *testing.T) {
	s := newSandbox(t)
	hook := filepath.Join(s.ws, ".git", "hooks", "pre-commit")
	must(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	path, hash := s.writePolicy(t, componentsPol())
	term := readyShell(t, s)
	script := "i=0; while [ $i -lt 2000 ]; do echo SCRIBBLE$i; i=$((i+1)); done; printf hooked | " + itEnv.launcher + " fs write .git/hooks/pre-commit 1>&2; echo rc=$? >&2"
	term.send(fmt.Sprintf("%s --quiet --approval-timeout 8s --policy-sha256 %s --policy %s -- /usr/bin/sh -c '%s' | (sleep 1.5; cat)\n", itEnv.launcher, hash, path, script))
	term.expect("to allow")
	time.Sleep(answerDelay + time.Second) // cat has started meanwhile
	shown := term.out.String()
	q := strings.LastIndex(shown, "to allow")
	if strings.Contains(shown[q:], "SCRIBBLE") {
		t.Fatalf("the pipeline wrote after the question: %q", shown[q:])
	}
	term.send(withCode(shown, "yes") + "\n")
	term.expect("rc=0")
	term.expect("SCRIBBLE1999")
	if _, err := os.Stat(hook); err != nil {
		t.Errorf("approved, but the hook was not written: %v", err)
	}
}

// In components mode what the workspace repository's config names is
// protected as .git/hooks is (SR-51's reading): fs refuses a write to
// core.hooksPath's directory and to core.fsmonitor's program with no one
// to ask, and a command's worker finds both read-only; a file beside
// them is written both ways (the control).
func TestIntegrationComponentsGitConfigNamed(t *testing.T) {
	s := newSandbox(t)
	const owner = 4245
	for _, d := range []string{".git", ".githooks", "tools"} {
		must(t, os.MkdirAll(filepath.Join(s.ws, d), 0o777))
	}
	s.file(t, filepath.Join(s.ws, ".git", "config"), "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n")
	fsmon := s.file(t, filepath.Join(s.ws, "tools", "fsmon.sh"), "#!/bin/sh\n")
	chownTree(t, s.ws, owner)
	for _, d := range []string{".githooks", "tools"} {
		must(t, os.Chmod(filepath.Join(s.ws, d), 0o777))
	}
	must(t, os.Chmod(fsmon, 0o666))
	l := itEnv.launcher
	script := strings.Join([]string{
		"printf x | " + l + " fs write .githooks/pre-commit; echo hooks=$?",
		"printf x | " + l + " fs write tools/fsmon.sh; echo fsmon=$?",
		"printf x | " + l + " fs write tools/other.sh; echo other=$?",
		l + ` sh 'perl -e "open(F, q(>>), q(tools/fs).q(mon.sh)) or die qq(\$!\n)"; echo shfsmon=$?'`,
		l + ` sh 'perl -e "open(F, q(>), q(.githo).q(oks/post-checkout)) or die qq(\$!\n)"; echo shhooks=$?'`,
		l + ` sh 'perl -e "open(F, q(>>), q(tools/ot).q(her2.sh)) or die qq(\$!\n)"; echo shother=$?'`,
		"true",
	}, "\n")
	r := s.agentSh(t, shellPol(), itOpts{}, script)
	if r.code != 0 {
		t.Fatalf("session: %s", r)
	}
	for _, want := range []string{"hooks=119\n", "fsmon=119\n", "other=0\n", "shother=0\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, r)
		}
	}
	for _, refused := range []string{"shfsmon=", "shhooks="} {
		if !strings.Contains(r.stdout, refused) || strings.Contains(r.stdout, refused+"0\n") {
			t.Errorf("a command wrote what the config names (%s): %s", refused, r)
		}
	}
	if b, _ := os.ReadFile(fsmon); string(b) != "#!/bin/sh\n" {
		t.Errorf("tools/fsmon.sh changed: %q", b)
	}
	mustNotExist(t, filepath.Join(s.ws, ".githooks", "pre-commit"), "fs wrote core.hooksPath's directory")
	mustNotExist(t, filepath.Join(s.ws, ".githooks", "post-checkout"), "a command wrote core.hooksPath's directory")
	mustExist(t, filepath.Join(s.ws, "tools", "other.sh"))
}

// A git config the person changes during the session is read again:
// after they approve fs's write of a .git/config that adds core.hooksPath,
// fs asks before writing the hooks directory it names (unanswered here:
// refused), and a command's worker has it read-only. Before, only what
// the configs named at the start was protected, and both writes went
// ahead unasked, for the person's next git commit to run. What the
// agent put there before the change (while nothing named it) stays: the
// person is told that the directory now named exists.
func TestIntegrationComponentsGitConfigChanged(t *testing.T) {
	s := newSandbox(t)
	const owner = 4246
	for _, d := range []string{".git", ".githooks", "tools"} {
		must(t, os.MkdirAll(filepath.Join(s.ws, d), 0o777))
	}
	chownTree(t, s.ws, owner)
	for _, d := range []string{".git", ".githooks", "tools"} {
		must(t, os.Chmod(filepath.Join(s.ws, d), 0o777))
	}
	l := itEnv.launcher
	script := strings.Join([]string{
		// Written while nothing names it: the person is told after the
		// approved change that the directory it names holds files.
		"printf x | " + l + " fs write .githooks/pre-push; echo staged=$?",
		`printf '[core]\n\thooksPath = .githooks\n' | ` + l + " fs write .git/config; echo cfg=$?",
		"printf x | " + l + " fs write .githooks/pre-commit; echo hooks=$?",
		l + ` sh 'perl -e "open(F, q(>), q(.githo).q(oks/post-checkout)) or die qq(\$!\n)"; echo shhooks=$?'`,
		"printf x | " + l + " fs write tools/other.sh; echo other=$?",
		"true",
	}, "\n")
	r, shown := s.ptySessionWith(t, shellPol(), script, "yes", "")
	if r.code != 0 {
		t.Fatalf("session: %s; terminal %q", r, shown)
	}
	for _, want := range []string{"staged=0\n", "cfg=0\n", "hooks=119\n", "other=0\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s; terminal %q", want, r, shown)
		}
	}
	if !strings.Contains(r.stdout, "shhooks=") || strings.Contains(r.stdout, "shhooks=0\n") {
		t.Errorf("a command wrote the hooks directory the changed config names: %s", r)
	}
	if !strings.Contains(shown, `asks: write ".githooks/pre-commit"`) {
		t.Errorf("fs did not ask before writing the new hooks directory: terminal %q", shown)
	}
	if !strings.Contains(shown, "fs: the git configs now name "+filepath.Join(s.ws, ".githooks")+", which exists already") {
		t.Errorf("the person was not told the newly named hooks directory holds files: terminal %q", shown)
	}
	mustNotExist(t, filepath.Join(s.ws, ".githooks", "pre-commit"), "fs wrote the hooks directory the approved config names")
	mustNotExist(t, filepath.Join(s.ws, ".githooks", "post-checkout"), "a command wrote the hooks directory the approved config names")
	mustExist(t, filepath.Join(s.ws, "tools", "other.sh"))
}

// A config the person edits themselves during the session (not through
// fs) is read again before each command: the hooks directory it now
// names is read-only for the command. fs sees the edit too before it
// serves the next change (the launcher's watch on the configs): its
// write there is refused (nobody to ask), where before the edit was
// fs's only after its next approved change, and the hook was written.
// The agent says when the session has started (a file through fs), the
// test changes the config then, and the agent waits for that before its
// command; a file beside is written both ways (the control).
func TestIntegrationComponentsGitConfigEditedByPerson(t *testing.T) {
	s := newSandbox(t)
	const owner = 4247
	for _, d := range []string{".git", "hk"} {
		must(t, os.MkdirAll(filepath.Join(s.ws, d), 0o777))
	}
	chownTree(t, s.ws, owner)
	for _, d := range []string{".", ".git", "hk"} {
		must(t, os.Chmod(filepath.Join(s.ws, d), 0o777))
	}
	l := itEnv.launcher
	script := strings.Join([]string{
		"printf x | " + l + " fs write started",
		"i=0; while ! " + l + " fs stat edited >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done",
		"printf x | " + l + " fs write hk/post-checkout; echo fshooks=$?",
		"printf x | " + l + " fs write other-fs; echo fsother=$?",
		l + ` sh 'perl -e "open(F, q(>), q(hk/pre).q(-commit)) or die qq(\$!\n)"; echo shhooks=$?'`,
		l + ` sh 'perl -e "open(F, q(>), q(other)) or die qq(\$!\n)"; echo shother=$?'`,
		"true",
	}, "\n")
	edited := make(chan error, 1)
	o := itOpts{onStart: func(int) {
		go func() {
			for range 200 {
				if _, err := os.Stat(filepath.Join(s.ws, "started")); err == nil {
					err := os.WriteFile(filepath.Join(s.ws, ".git", "config"), []byte("[core]\n\thooksPath = hk\n"), 0o644)
					if err == nil {
						err = os.WriteFile(filepath.Join(s.ws, "edited"), nil, 0o644)
					}
					edited <- err
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			edited <- errors.New("the agent did not start")
		}()
	}}
	r := s.agentSh(t, shellPol(), o, script)
	if err := <-edited; err != nil {
		t.Fatalf("the person's edit: %v; run %s", err, r)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "shother=0\n") || !strings.Contains(r.stdout, "fsother=0\n") {
		t.Fatalf("session, or the control command or write: %s", r)
	}
	if !strings.Contains(r.stdout, "fshooks=119\n") {
		t.Errorf("fs wrote the hooks directory the person's edit names: %s", r)
	}
	mustNotExist(t, filepath.Join(s.ws, "hk", "post-checkout"), "fs wrote the hooks directory the person's edit names")
	if !strings.Contains(r.stdout, "shhooks=") || strings.Contains(r.stdout, "shhooks=0\n") {
		t.Errorf("a command wrote the hooks directory the person's edit names: %s", r)
	}
	mustNotExist(t, filepath.Join(s.ws, "hk", "pre-commit"), "a command wrote the hooks directory the person's edit names")
}

// The person's own git config command during the session (git config
// renames a new config into place) reaches fs before its next write,
// on a terminal too: fs asks before writing into the hooks directory
// the person just named (unanswered: refused), and the launcher says
// that directory exists already and holds what was written before. A
// write beside it is neither asked about nor refused (the control).
func TestIntegrationComponentsGitConfigEditedByPersonAsked(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on this machine")
	}
	s := newSandbox(t)
	const owner = 4248
	for _, d := range []string{".git", "hk"} {
		must(t, os.MkdirAll(filepath.Join(s.ws, d), 0o777))
	}
	s.file(t, filepath.Join(s.ws, ".git", "config"), "[core]\n\tbare = false\n")
	chownTree(t, s.ws, owner)
	for _, d := range []string{".", ".git", "hk"} {
		must(t, os.Chmod(filepath.Join(s.ws, d), 0o777))
	}
	edited := make(chan error, 1)
	go func() {
		for range 400 {
			if _, err := os.Stat(filepath.Join(s.ws, "started")); err == nil {
				out, err := exec.Command(git, "config", "--file", filepath.Join(s.ws, ".git", "config"), "core.hooksPath", "hk").CombinedOutput()
				if err == nil {
					err = os.WriteFile(filepath.Join(s.ws, "edited"), nil, 0o644)
				} else {
					err = fmt.Errorf("%v: %s", err, out)
				}
				edited <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		edited <- errors.New("the agent did not start")
	}()
	l := itEnv.launcher
	script := strings.Join([]string{
		"printf x | " + l + " fs write started",
		"i=0; while ! " + l + " fs stat edited >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done",
		"printf x | " + l + " fs write hk/pre-commit; echo fshooks=$?",
		"printf x | " + l + " fs write beside; echo beside=$?",
		"true",
	}, "\n")
	r, shown := s.ptySessionWith(t, shellPol(), script, "")
	if err := <-edited; err != nil {
		t.Fatalf("the person's git config: %v; run %s", err, r)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "beside=0\n") {
		t.Fatalf("session, or the control write: %s; terminal %q", r, shown)
	}
	if !strings.Contains(r.stdout, "fshooks=119\n") || !strings.Contains(shown, `asks: write "hk/pre-commit"`) {
		t.Errorf("fs did not ask before writing the hooks directory the person's git config names: %s; terminal %q", r, shown)
	}
	if strings.Contains(shown, `asks: write "beside"`) {
		t.Errorf("fs asked about a write beside it: terminal %q", shown)
	}
	if !strings.Contains(shown, "fs: the git configs now name "+filepath.Join(s.ws, "hk")+", which exists already") {
		t.Errorf("the person was not told the newly named hooks directory exists: terminal %q", shown)
	}
	mustNotExist(t, filepath.Join(s.ws, "hk", "pre-commit"), "fs wrote the hooks directory the person's git config names")
}

// In components mode too, what a config names is read as git reads it:
// an alias's -c core.fsmonitor and a remote's uploadpack (git fetch runs
// it from a path remote) are protected, so fs refuses to write them
// without the person's approval; a file beside them is written.
func TestIntegrationComponentsGitConfigAsGitReads(t *testing.T) {
	s := newSandbox(t)
	const owner = 4245
	for _, d := range []string{".git", "tools"} {
		must(t, os.MkdirAll(filepath.Join(s.ws, d), 0o777))
	}
	s.file(t, filepath.Join(s.ws, ".git", "config"), "[alias]\n\tx = -c core.fsmonitor=tools/mon status\n"+
		"[remote \"origin\"]\n\turl = ../up\n\tuploadpack = ./tools/up\n")
	mon := s.file(t, filepath.Join(s.ws, "tools", "mon"), "#!/bin/sh\n")
	up := s.file(t, filepath.Join(s.ws, "tools", "up"), "#!/bin/sh\n")
	chownTree(t, s.ws, owner)
	must(t, os.Chmod(filepath.Join(s.ws, "tools"), 0o777))
	l := itEnv.launcher
	script := strings.Join([]string{
		"printf x | " + l + " fs write tools/mon; echo mon=$?",
		"printf x | " + l + " fs write tools/up; echo up=$?",
		"printf x | " + l + " fs write tools/other; echo other=$?",
		"true",
	}, "\n")
	r := s.agentSh(t, shellPol(), itOpts{}, script)
	if r.code != 0 {
		t.Fatalf("session: %s", r)
	}
	for _, want := range []string{"mon=119\n", "up=119\n", "other=0\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, r)
		}
	}
	for _, f := range []string{mon, up} {
		if b, _ := os.ReadFile(f); string(b) != "#!/bin/sh\n" {
			t.Errorf("%s changed: %q", f, b)
		}
	}
	mustExist(t, filepath.Join(s.ws, "tools", "other"))
}

// chownTree gives dir and everything beneath it to uid owner (and its
// group), as an agent's files are.
func chownTree(t *testing.T, dir string, owner int) {
	t.Helper()
	must(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chown(p, owner, owner)
		}
		return err
	}))
}

// A component stopped and continued (SIGSTOP, SIGCONT: only root can
// signal one, each running under a uid and in a session of its own) is
// not taken to have ended: the session goes on, and the agent's call
// made while fs was stopped waits and is served once fs is continued,
// where ending the session would have lost the agent's work for a pause
// the person undid (launcher/doc.go, Components mode).
func TestIntegrationComponentsStopContinue(t *testing.T) {
	s := newSandbox(t)
	const owner = 4249
	chownTree(t, s.ws, owner)
	must(t, os.Chmod(s.ws, 0o777))
	l := itEnv.launcher
	script := strings.Join([]string{
		"printf x | " + l + " fs write started",
		"sleep 1",
		"t0=$(date +%s); printf y | " + l + " fs write after; echo after=$? waited=$(( $(date +%s) - t0 ))",
	}, "\n")
	stopped := make(chan error, 1)
	o := itOpts{onStart: func(pid int) {
		go func() {
			for range 400 {
				if _, err := os.Stat(filepath.Join(s.ws, "started")); err == nil {
					fs := componentPid(pid, "fs")
					if fs == 0 {
						stopped <- errors.New("no fs component below the launcher")
						return
					}
					if err := syscall.Kill(fs, syscall.SIGSTOP); err != nil {
						stopped <- err
						return
					}
					time.Sleep(4 * time.Second)
					stopped <- syscall.Kill(fs, syscall.SIGCONT)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			stopped <- errors.New("the agent did not start")
		}()
	}}
	r := s.agentSh(t, shellPol(), o, script)
	if err := <-stopped; err != nil {
		t.Fatalf("stopping fs: %v; run %s", err, r)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "after=0 ") {
		t.Fatalf("the session, or the call made while fs was stopped, did not go on once fs was continued: %s", r)
	}
	// The call waited for fs (started at 1 s of the 4 s stop).
	if strings.Contains(r.stdout, "waited=0\n") || strings.Contains(r.stdout, "waited=1\n") {
		t.Errorf("the call did not wait for the stopped fs (not stopped?): %s", r)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "after")); err != nil || string(b) != "y" {
		t.Errorf("the call's write: %q, %v", b, err)
	}
}

// componentPid is the pid of component role among the descendants of
// pid (0 if none), by its command line (session.ComponentEntry).
func componentPid(pid int, role string) int {
	ents, _ := os.ReadDir("/proc")
	want := "launcher\x00__pinfold_component\x00" + role + "\x00"
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err != nil || string(b) != want {
			continue
		}
		// Below pid: walk up its parents (bounded).
		for q, i := p, 0; q > 1 && i < 64; i++ {
			if q == pid {
				return p
			}
			st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", q))
			if err != nil {
				break
			}
			f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
			if len(f) < 2 {
				break
			}
			q, _ = strconv.Atoi(f[1])
		}
	}
	return 0
}
