package launcher

// Integration tests: the real launcher binary confines the probe
// (internal/probe, the program around package probe) on the real kernel,
// and every refusal is checked against a control — the same probe run
// without the launcher — that must succeed (SR-09). They need root
// (cgroups, throwaway uids, the setuid control); integration_unpriv_linux_test.go
// runs a core subset as nobody.
//
// Layout of what the tests create, all under one directory made in
// /var/tmp (not /tmp: the sandbox replaces /tmp with a private
// tmpfs and re-attaches listed paths as separate mounts, which would turn
// the cross-directory link and rename probes into EXDEV for a reason that
// has nothing to do with the Boundary under test):
//
//	base/bin/            launcher, probe, probe-suid (setuid root): the exec dir, read-only, beneath no write path
//	base/TestX-NNN/      one per test (0755)
//	    ws/              the workspace, the only write path
//	    outside/         a directory no list names, on the same file system
//	    policy.toml

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// itEnv is what the first integration test built for all of them.
var itEnv struct {
	once                       sync.Once
	base, bin                  string
	launcher, probe, suidProbe string
	buildErr                   error
}

// TestMain removes what the integration tests built. The build itself
// happens once, when the first integration test asks for it, so that
// `go test -run SomeUnitTest` does not pay for linking the launcher.
func TestMain(m *testing.M) {
	// Components-mode runs keep their logs in /run/pinfold and make
	// backup stores in /var/lib/pinfold/backups, as real sessions do;
	// what this run made there (and is finished) goes when it ends.
	before := map[string]bool{}
	for _, dir := range sessionLeftovers {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			before[filepath.Join(dir, e.Name())] = true
		}
	}
	code := m.Run()
	if itEnv.base != "" {
		os.RemoveAll(itEnv.base)
	}
	for _, dir := range sessionLeftovers {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(p, "lock")); before[p] || err == nil || e.Name() == "ids" {
				continue // there before, or a session still running
			}
			os.RemoveAll(p)
		}
	}
	os.Exit(code)
}

// sessionLeftovers are where components-mode runs leave files on purpose.
var sessionLeftovers = []string{"/run/pinfold", "/var/lib/pinfold/backups"}

// buildIntegrationBinaries builds the launcher and the probe. A failure is
// recorded: every integration test then fails (never skips) with the
// build's output.
func buildIntegrationBinaries() {
	parent := "/var/tmp"
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		parent = os.TempDir()
	}
	base, err := os.MkdirTemp(parent, "pinfold-it-")
	if err != nil {
		itEnv.buildErr = err
		return
	}
	itEnv.base, itEnv.bin = base, filepath.Join(base, "bin")
	itEnv.launcher = filepath.Join(itEnv.bin, "launcher")
	itEnv.probe = filepath.Join(itEnv.bin, "probe")
	itEnv.suidProbe = filepath.Join(itEnv.bin, "probe-suid")
	err = os.Chmod(base, 0o755)
	if err == nil {
		err = os.Mkdir(itEnv.bin, 0o755)
	}
	gobin, lerr := exec.LookPath("go")
	if err == nil && lerr != nil {
		err = fmt.Errorf("go command not found: %w", lerr)
	}
	for _, b := range []struct {
		out, pkg string
		cgo      string
	}{
		{itEnv.launcher, "github.com/pinfold/pinfold/cmd/launcher", "1"},
		{itEnv.probe, "github.com/pinfold/pinfold/launcher/internal/probe", "0"},
	} {
		if err != nil {
			break
		}
		cmd := exec.Command(gobin, "build", "-tags", "netgo", "-o", b.out, b.pkg) // as scripts/lib.sh builds it
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, berr := cmd.CombinedOutput(); berr != nil {
			err = fmt.Errorf("go build %s: %v\n%s", b.pkg, berr, out)
		}
	}
	// A setuid-root copy of the probe: run with `euid`, it says whether
	// exec gained privilege.
	if err == nil {
		var data []byte
		if data, err = os.ReadFile(itEnv.probe); err == nil {
			err = os.WriteFile(itEnv.suidProbe, data, 0o755)
		}
		if err == nil && os.Geteuid() == 0 {
			if err = os.Chown(itEnv.suidProbe, 0, 0); err == nil {
				err = os.Chmod(itEnv.suidProbe, 0o755|os.ModeSetuid)
			}
		}
	}
	itEnv.buildErr = err
}

// requireIntegration skips the test (fails it, under
// PINFOLD_REQUIRE_ALL_FEATURES=1) when not root, builds the binaries on
// first use, and fails the test when they did not build.
func requireIntegration(t *testing.T) {
	t.Helper()
	requireFeature(t, "root (cgroups, throwaway uids)", os.Geteuid() == 0, fmt.Sprintf("euid %d", os.Geteuid()))
	itEnv.once.Do(buildIntegrationBinaries)
	if itEnv.buildErr != nil {
		t.Fatalf("integration binaries: %v", itEnv.buildErr)
	}
}

// itPol is a test policy; newSandbox fills in the workspace and the
// probe's directory.
type itPol struct {
	read, write, exec []string // beyond the workspace (write) and the probe's directory (exec)
	network           string   // "none" unless set
	connectTCP        []int
	unixSockets       bool
	processes         int    // 0: the policy default
	memory            string // "": the policy default
	limits            string // added to [limits]
	pass              []string
	set               map[string]string
	mode              string // "wrapper" unless set
	extra             string // appended to the policy text (whole tables)
	netExtra          string // added to [network] (proxy mode's keys)
}

// itSandbox is one test's directory.
type itSandbox struct {
	dir, ws, outside string
	uid              int // owner of dir, ws and outside; the uid the launcher and the controls run as
}

func newSandbox(t *testing.T) *itSandbox { return newSandboxAs(t, 0) }

// newUnprivSandbox is newSandboxAs for a launch as uid itself: for any
// uid but root's it needs user namespaces for unprivileged users, and
// the test says so and skips (or fails, PINFOLD_REQUIRE_ALL_FEATURES)
// where the kernel does not give them.
func newUnprivSandbox(t *testing.T, uid int) *itSandbox {
	t.Helper()
	s := newSandboxAs(t, uid)
	if uid != 0 {
		if r := s.direct(t, itOpts{}, "unshare-user"); r.stdout != "ok\n" {
			requireFeature(t, "user namespaces for unprivileged users", false, "`probe unshare-user` as nobody: "+r.String())
		}
	}
	return s
}

// newSandboxAs makes the test's directories, owned by uid.
func newSandboxAs(t *testing.T, uid int) *itSandbox {
	t.Helper()
	requireIntegration(t)
	dir, err := os.MkdirTemp(itEnv.base, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	s := &itSandbox{dir: dir, ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside"), uid: uid}
	t.Cleanup(func() {
		os.RemoveAll(dir)
		// A components session opens a backup store for its workspace
		// (under /var/lib/pinfold/backups): it goes with the workspace.
		if store, err := storeDirFor(s.ws); err == nil {
			os.RemoveAll(store)
		}
	})
	for _, d := range []string{s.ws, s.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{dir, s.ws, s.outside} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// file creates a file of the sandbox owner's, readable by all.
func (s *itSandbox) file(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, s.uid, s.uid); err != nil {
		t.Fatal(err)
	}
	return path
}

// policyText renders p for this sandbox.
func (s *itSandbox) policyText(p itPol) string {
	list := func(xs []string) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = strconv.Quote(x)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	var b strings.Builder
	mode := p.mode
	if mode == "" {
		mode = "wrapper"
	}
	fmt.Fprintf(&b, "version = 1\nmode = %q\n\n[workspace]\npath = %q\n\n[files]\n", mode, s.ws)
	if len(p.read) > 0 {
		fmt.Fprintf(&b, "read = %s\n", list(p.read))
	}
	fmt.Fprintf(&b, "write = %s\nexec = %s\n\n", list(append([]string{s.ws}, p.write...)), list(append([]string{itEnv.bin}, p.exec...)))
	network := orDefault(p.network, "none")
	fmt.Fprintf(&b, "[network]\nmode = %q\n%s", network, p.netExtra)
	if len(p.connectTCP) > 0 {
		ports := make([]string, len(p.connectTCP))
		for i, port := range p.connectTCP {
			ports[i] = strconv.Itoa(port)
		}
		fmt.Fprintf(&b, "connect_tcp = [%s]\n", strings.Join(ports, ", "))
	}
	if p.unixSockets {
		b.WriteString("unix_sockets = true\n")
	}
	b.WriteString("\n[limits]\n")
	if p.processes > 0 {
		fmt.Fprintf(&b, "processes = %d\n", p.processes)
	}
	if p.memory != "" {
		fmt.Fprintf(&b, "memory = %q\n", p.memory)
	}
	b.WriteString(p.limits)
	fmt.Fprintf(&b, "\n[env]\npass = %s\n", list(append([]string{"PATH"}, p.pass...)))
	if len(p.set) > 0 {
		var kv []string
		for k, v := range p.set {
			kv = append(kv, fmt.Sprintf("%s = %q", k, v))
		}
		slices.Sort(kv)
		fmt.Fprintf(&b, "set = { %s }\n", strings.Join(kv, ", "))
	}
	if p.extra != "" {
		b.WriteString("\n" + p.extra)
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// writePolicy writes p for this sandbox and returns its path and sha256.
func (s *itSandbox) writePolicy(t *testing.T, p itPol) (path, hash string) {
	t.Helper()
	text := s.policyText(p)
	path = filepath.Join(s.dir, "policy.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	return path, hex.EncodeToString(sum[:])
}

// itOpts adjusts one run of the launcher or of a control.
type itOpts struct {
	env        []string   // added to the base environment (PATH)
	extraFiles []*os.File // become fds 3, 4, …
	stdin      *os.File
	ctty       bool // make stdin the controlling terminal of a new session
	pgid       int  // join this process group (0: the test's own)
	verbose    bool // drop --quiet
	hash       string
	onStart    func(pid int) // called once the process started
}

// itResult is one finished run.
type itResult struct {
	stdout, stderr string
	code           int  // exit status, 128+N for a signal
	signaled       bool // the process itself was killed by a signal
	pid            int
	elapsed        time.Duration
}

func (r itResult) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

const runTimeout = 30 * time.Second

// run runs argv as the sandbox's uid and waits, bounded by runTimeout.
func (s *itSandbox) run(t *testing.T, o itOpts, argv ...string) itResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, o.env...)
	cmd.Dir = s.dir
	cmd.ExtraFiles = o.extraFiles
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.uid != 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid)}
	}
	if o.pgid != 0 {
		attr.Setpgid, attr.Pgid = true, o.pgid
	}
	if o.stdin != nil {
		cmd.Stdin = o.stdin
		if o.ctty {
			attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
		}
	}
	cmd.SysProcAttr = attr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	if o.onStart != nil {
		o.onStart(cmd.Process.Pid)
	}
	err := cmd.Wait()
	r := itResult{stdout: stdout.String(), stderr: stderr.String(), pid: cmd.Process.Pid, elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%v did not finish within %v (killed): %s", argv, runTimeout, r)
	case err != nil && !errors.As(err, &ee):
		t.Fatalf("%v: %v", argv, err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		r.code, r.signaled = 128+int(ws.Signal()), true
	} else {
		r.code = ws.ExitStatus()
	}
	return r
}

// launch runs the probe confined by p.
func (s *itSandbox) launch(t *testing.T, p itPol, o itOpts, probeArgs ...string) itResult {
	t.Helper()
	path, hash := s.writePolicy(t, p)
	if o.hash != "" {
		hash = o.hash
	}
	argv := []string{itEnv.launcher, "--policy-sha256", hash, "--policy", path}
	if !o.verbose {
		argv = append(argv, "--quiet")
	}
	argv = append(append(argv, "--", itEnv.probe), probeArgs...)
	return s.run(t, o, argv...)
}

// direct runs the probe without the launcher: the control.
func (s *itSandbox) direct(t *testing.T, o itOpts, probeArgs ...string) itResult {
	t.Helper()
	return s.run(t, o, append([]string{itEnv.probe}, probeArgs...)...)
}

// expect checks the probe's one line and the exit status.
func itExpect(t *testing.T, what string, r itResult, line string, code int) {
	t.Helper()
	if r.stdout != line+"\n" || r.code != code {
		t.Fatalf("%s: want %q and exit %d, got %s", what, line, code, r)
	}
}

// denied runs the probe confined by p, expects `denied ERRNO` with the
// launcher exiting 1, and then runs the control, which must print ok.
func (s *itSandbox) denied(t *testing.T, p itPol, o itOpts, errno string, probeArgs ...string) {
	t.Helper()
	r := s.launch(t, p, o, probeArgs...)
	itExpect(t, fmt.Sprintf("confined %v", probeArgs), r, "denied "+errno, 1)
	s.control(t, o, probeArgs...)
}

// control runs the probe directly and fails the test unless it printed
// ok: a refusal counts only when the control succeeded (SR-09).
func (s *itSandbox) control(t *testing.T, o itOpts, probeArgs ...string) {
	t.Helper()
	r := s.direct(t, o, probeArgs...)
	if r.stdout != "ok\n" || r.code != 0 {
		t.Fatalf("control %v (unconfined) did not succeed, so the refusal proves nothing (SR-09): %s", probeArgs, r)
	}
}

// allowed runs the probe confined by p and expects ok.
func (s *itSandbox) allowed(t *testing.T, p itPol, o itOpts, probeArgs ...string) {
	t.Helper()
	itExpect(t, fmt.Sprintf("confined %v", probeArgs), s.launch(t, p, o, probeArgs...), "ok", 0)
}

func mustNotExist(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists after the confined run (%v): %s", path, err, why)
	}
}

func mustExist(t *testing.T, path string) os.FileInfo {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}

// TestIntegrationExecHint: an agent the kernel will not run, for a
// reason its own error words badly (a script whose #! interpreter is
// missing fails with "No such file or directory"), gets a hint naming
// the cause.
func TestIntegrationExecHint(t *testing.T) {
	s := newSandbox(t)
	script := s.file(t, filepath.Join(s.outside, "agent.sh"), "#!/nonexistent/sh\necho hi\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	path, hash := s.writePolicy(t, itPol{exec: []string{s.outside}})
	r := s.run(t, itOpts{}, itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--quiet", "--", script)
	want := "launcher: hint: its #! line names the interpreter /nonexistent/sh, which does not exist"
	if r.code != 127 || !strings.Contains(r.stderr, "stage 2 exec: "+script+": No such file or directory") || !strings.Contains(r.stderr, want) {
		t.Fatalf("want exit 127 (as env(1): execve said ENOENT), the kernel's error and %q; got %s", want, r)
	}
}

// TestIntegrationAgentExitCodes: an agent that cannot be started exits
// as env(1) and the shells say it, confined or not: 127 when the program
// is not found, 126 when it is found and not run; never the launcher's
// own 125, and nothing runs.
func TestIntegrationAgentExitCodes(t *testing.T) {
	s := newSandbox(t)
	notExec := s.file(t, filepath.Join(s.outside, "plain"), "not a program\n")
	if err := os.Chmod(notExec, 0o755); err != nil {
		t.Fatal(err)
	}
	unlisted := s.file(t, filepath.Join(s.ws, "..", "unlisted.sh"), "#!/bin/sh\ntouch "+filepath.Join(s.ws, "ran")+"\n")
	if err := os.Chmod(unlisted, 0o755); err != nil {
		t.Fatal(err)
	}
	path, hash := s.writePolicy(t, itPol{exec: []string{notExec}})
	for _, c := range []struct {
		agent string
		want  int
	}{
		{"pinfold-no-such-agent", 127},             // not in the agent's PATH
		{filepath.Join(s.outside, "missing"), 127}, // execve: ENOENT
		{notExec, 126},  // execve: ENOEXEC
		{unlisted, 126}, // execve: EACCES (not in files.exec)
	} {
		r := s.run(t, itOpts{}, itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--quiet", "--", c.agent)
		if r.code != c.want || !strings.Contains(r.stderr, "launcher: error: ") {
			t.Errorf("confined %s: want exit %d and an error; got %s", c.agent, c.want, r)
		}
		mustNotExist(t, filepath.Join(s.ws, "ran"), "the agent could not be started")
	}
	for _, c := range []struct {
		agent string
		want  int
	}{
		{"pinfold-no-such-agent", 127},
		{filepath.Join(s.outside, "missing"), 127},
		{"/etc/passwd", 126}, // not executable
	} {
		r := s.run(t, itOpts{}, itEnv.launcher, "--full-access", "--", c.agent)
		if r.code != c.want || !strings.Contains(r.stderr, "launcher: error: full access: ") {
			t.Errorf("--full-access %s: want exit %d and an error; got %s", c.agent, c.want, r)
		}
	}
}
