package register

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/launcher"
)

// Version is the launcher version results are recorded against.
const Version = "0.1.0-dev"

// probeEntry is the hidden first argument that makes the launcher binary
// the probe.
const probeEntry = "__pinfold_probe"

// Result is one check's outcome on this machine, with what it ran on.
type Result struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Verdict  Verdict `json:"verdict"`
	Reason   string  `json:"reason"`
	Confined Run     `json:"confined"`
	Control  Run     `json:"control"`
}

// Machine is what every result of one run was measured on.
type Machine struct {
	Date        string `json:"date"`
	Kernel      string `json:"kernel"`
	LandlockABI int    `json:"landlock_abi"`
	CgroupMode  string `json:"cgroup_mode"`
	UID         int    `json:"uid"`
	Version     string `json:"launcher_version"`
}

// Evidence is one dated run of the checks.
type Evidence struct {
	Machine Machine  `json:"machine"`
	Results []Result `json:"results"`
}

// Runner runs checks with one launcher binary.
type Runner struct {
	Launcher string        // the launcher binary: the confined runs' launcher and, through probeEntry, the probe
	Timeout  time.Duration // per run
}

// UnknownIDError names an id that has no check.
type UnknownIDError struct{ ID string }

func (e *UnknownIDError) Error() string {
	return fmt.Sprintf("no check for %q; checks exist for %s", e.ID, strings.Join(CheckIDs(), ", "))
}

// Run runs the checks for ids (all when empty), calling progress before
// each. It refuses unknown ids before running anything.
func (r Runner) Run(ctx context.Context, ids []string, progress func(id string)) (Evidence, error) {
	all := checks()
	var todo []check
	for _, id := range ids {
		i := indexOf(all, id)
		if i < 0 {
			return Evidence{}, &UnknownIDError{id}
		}
		todo = append(todo, all[i])
	}
	if len(ids) == 0 {
		todo = all
	}
	if err := runnableThere(r.Launcher, os.Geteuid() == 0); err != nil {
		return Evidence{}, err
	}
	h := launcher.Probe()
	ev := Evidence{Machine: Machine{
		Date: time.Now().UTC().Format(time.RFC3339), Kernel: h.Kernel, LandlockABI: h.Landlock.ABI,
		CgroupMode: h.Cgroup.Mode, UID: os.Geteuid(), Version: Version,
	}}
	for _, c := range todo {
		if progress != nil {
			progress(c.id)
		}
		ev.Results = append(ev.Results, r.one(ctx, c))
	}
	return ev, nil
}

// PlaceError says why the checks cannot run the launcher binary where it
// is: every check's confined run would fail the same way, and fifty
// inconclusive verdicts hid the one thing to do.
type PlaceError struct{ Launcher, Why string }

func (e *PlaceError) Error() string {
	return fmt.Sprintf("the checks run this binary (%s) as the confined agent too, and a sandbox cannot run it there: %s", e.Launcher, e.Why)
}

// Hint is what to do instead.
func (e *PlaceError) Hint() string {
	return "copy it where every user may run it, and run the copy: install -m 755 " + e.Launcher + " /usr/local/bin/launcher"
}

// scratchRoot holds each run's scratch directory, whose workspace every
// check's policy lists for writing.
const scratchRoot = "/var/tmp"

// runnableThere checks that a sandbox can run the binary at path: not
// from /tmp or /dev/shm themselves, which a sandbox replaces with private
// empty ones; not from scratchRoot or a directory above it, which the
// checks' policies list as executable with the workspace beneath it
// (refused: a written file could be run, SR-01); and, as root, where the
// agent's throwaway uid may reach it (each directory above searchable by
// others, the file executable by them), as the launch's policy check says
// for a path it cannot reach.
func runnableThere(path string, root bool) error {
	dir := filepath.Dir(path)
	if dir == "/tmp" || dir == "/dev/shm" {
		return &PlaceError{path, dir + " is a directory every sandbox replaces with a private, empty one of its own"}
	}
	if dir == scratchRoot || dir == "/" || strings.HasPrefix(scratchRoot, dir+"/") {
		return &PlaceError{path, dir + " holds the checks' workspaces (" + scratchRoot + "/pinfold-check-*), and a policy that lets the agent run the binary from " + dir + " may not let it write beneath"}
	}
	if !root {
		return nil // the agent has the person's own uid
	}
	st, err := os.Stat(path)
	if err != nil {
		return &PlaceError{path, err.Error()}
	}
	if st.Mode().Perm()&0o001 == 0 {
		return &PlaceError{path, "it is not executable by other users, and as root the agent runs under a throwaway uid"}
	}
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return &PlaceError{path, err.Error()}
		}
		if st.Mode().Perm()&0o001 == 0 {
			return &PlaceError{path, d + " is not searchable by other users, and as root the agent runs under a throwaway uid"}
		}
		if d == "/" {
			return nil
		}
	}
}

func indexOf(cs []check, id string) int {
	for i, c := range cs {
		if c.id == id {
			return i
		}
	}
	return -1
}

// one runs a check in a scratch directory of its own.
func (r Runner) one(ctx context.Context, c check) Result {
	for attempt := 1; ; attempt++ {
		res, retries := r.attempt(ctx, c)
		if res.Verdict != Inconclusive || attempt > retries {
			if attempt > 1 {
				res.Reason += fmt.Sprintf(" (attempt %d)", attempt)
			}
			return res
		}
	}
}

// attempt runs a check once, in a scratch directory of its own, and says
// how many times more an inconclusive result may be tried again.
func (r Runner) attempt(ctx context.Context, c check) (Result, int) {
	res, pc := r.run(ctx, c)
	return res, pc.retries
}

func (r Runner) run(ctx context.Context, c check) (Result, probeCase) {
	e, _ := Lookup(c.id)
	res := Result{ID: c.id, Title: e.Title}
	s, err := newScratch(r.Launcher)
	if err != nil {
		res.Verdict, res.Reason = Inconclusive, "set-up: "+err.Error()
		return res, probeCase{}
	}
	defer s.close()
	pc, err := c.prepare(s)
	if err != nil {
		res.Verdict, res.Reason = Inconclusive, "set-up: "+err.Error()
		return res, pc
	}
	cases := append([]probeCase{pc}, pc.also...)
	results := make([]Result, len(cases))
	for i, one := range cases {
		results[i] = r.runCase(ctx, s, one)
	}
	v := combine(cases, results)
	res.Verdict, res.Reason, res.Confined, res.Control = v.Verdict, v.Reason, v.Confined, v.Control
	return res, pc
}

// severity orders verdicts for a check of several cases: one case
// failing is the check failing, whatever the others; one that learned
// nothing, or could not run here, leaves the check so; a pass needs
// every case.
var severity = map[Verdict]int{Pass: 0, Skipped: 1, Inconclusive: 2, Fail: 3}

// combine is the verdict of a check whose cases ran with results: the
// most severe, with the runs of the first case that had it and the
// reasons of each case that had it, by name.
func combine(cases []probeCase, results []Result) Result {
	if len(results) == 1 {
		return results[0]
	}
	res := results[0]
	for _, r := range results[1:] {
		if severity[r.Verdict] > severity[res.Verdict] {
			res = r
		}
	}
	var why []string
	for i, r := range results {
		if r.Verdict == res.Verdict {
			why = append(why, cases[i].name+": "+r.Reason)
		}
	}
	res.Reason = strings.Join(why, "; ")
	return res
}

// runCase runs one case of a check, its confined run and its control,
// and judges them.
func (r Runner) runCase(ctx context.Context, s *scratch, pc probeCase) Result {
	var res Result
	confinedText := pc.raw
	if confinedText == "" {
		confinedText = s.policyText(pc.policy)
	}
	if os.Geteuid() != 0 && (pc.bare || componentsMode().MatchString(confinedText)) {
		res.Verdict, res.Reason = Skipped, needsRoot
		return res
	}
	if pc.bare {
		res.Confined = r.exec(ctx, s, append([]string{r.Launcher, probeEntry}, pc.probe...), pc, 0)
	} else {
		res.Confined = r.launch(ctx, s, confinedText, pc.pin, pc, true)
	}
	pc.race = nil // the confined run's alone
	if pc.direct {
		cp := pc.probe
		if pc.controlProbe != nil {
			cp = pc.controlProbe
		}
		res.Control = r.exec(ctx, s, append([]string{r.Launcher, probeEntry}, cp...), pc, pc.controlUID)
	} else {
		control := pc.control
		if control == "" {
			control = confinedText
		}
		cpc := pc
		if pc.controlProbe != nil {
			cpc.probe = pc.controlProbe
		}
		if pc.controlAnswer != "" {
			cpc.pty, cpc.answer, cpc.answerWithoutCode = true, pc.controlAnswer, false
		}
		res.Control = r.launch(ctx, s, control, "", cpc, false)
	}
	refused, ok := pc.refused, pc.ok
	if refused == nil {
		refused = deniedLine
	}
	if ok == nil {
		ok = okLine
	}
	if pc.skip != nil {
		if skip, why := pc.skip(res.Control); skip {
			res.Verdict, res.Reason = Skipped, why
			return res
		}
	}
	res.Verdict, res.Reason = judge(res.Confined, res.Control, refused, ok)
	if pc.rejudge != nil {
		res.Verdict, res.Reason = pc.rejudge(res.Verdict, res.Reason)
	}
	return res
}

// launch runs the probe under the policy text (pinned by its own hash
// unless pin is given).
func (r Runner) launch(ctx context.Context, s *scratch, text, pin string, pc probeCase, confined bool) Run {
	path := filepath.Join(s.dir, fmt.Sprintf("policy-%d.toml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return Run{Code: -1, Err: err.Error()}
	}
	if pin == "" {
		sum := sha256.Sum256([]byte(text))
		pin = hex.EncodeToString(sum[:])
	}
	outer := r.Launcher
	if pc.launcherInWS && confined {
		outer = filepath.Join(s.ws, "launcher")
		if err := copyFile(r.Launcher, outer, 0o755); err != nil {
			return Run{Code: -1, Err: err.Error()}
		}
	}
	if pc.launcherLinkedInWS && confined {
		outer = filepath.Join(s.xbin, "launcher")
		link := filepath.Join(s.ws, "launcher-link")
		os.Remove(outer) // a case run again (retries) in this scratch
		os.Remove(link)
		if err := copyFile(r.Launcher, outer, 0o755); err != nil {
			return Run{Code: -1, Err: err.Error()}
		}
		if err := os.Link(outer, link); err != nil {
			return Run{Code: -1, Err: err.Error()}
		}
	}
	argv := []string{outer, "--policy-sha256", pin, "--policy", path, "--quiet"}
	if pc.answer != "" {
		argv = append(argv, "--approval-timeout", "30s")
	}
	argv = append(argv, pc.launcherArgs...)
	argv = append(append(argv, "--", r.Launcher, probeEntry), pc.probe...)
	if confined && pc.wrap != nil {
		argv = append(append([]string{r.Launcher, probeEntry}, pc.wrap...), argv...)
	}
	return r.exec(ctx, s, argv, pc, 0)
}

// exec runs argv, bounded by the timeout, and keeps the first line of
// stdout and the exit status.
func (r Runner) exec(ctx context.Context, s *scratch, argv []string, pc probeCase, uid int) Run {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, pc.env...)
	cmd.Dir = s.dir
	cmd.WaitDelay = 2 * time.Second
	attr := &syscall.SysProcAttr{}
	if uid != 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	if pc.pty || pc.cttyOnly {
		master, slave, err := openPTY()
		if err != nil {
			return Run{Code: -1, Err: err.Error()}
		}
		defer master.Close()
		defer slave.Close()
		if pc.answer != "" {
			go answerOn(master, pc.answer, !pc.answerWithoutCode)
		}
		// The controlling terminal: stdin, or descriptor 3 alone.
		attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
		if pc.cttyOnly {
			cmd.ExtraFiles = []*os.File{slave}
			attr.Ctty = 3
		} else {
			cmd.Stdin = slave
		}
	}
	cmd.SysProcAttr = attr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if pc.passFD {
		f, err := os.Open(s.dir)
		if err != nil {
			return Run{Code: -1, Err: err.Error()}
		}
		defer f.Close()
		cmd.ExtraFiles = make([]*os.File, passedFD-2)
		cmd.ExtraFiles[passedFD-3] = f
	}
	err := cmd.Start()
	if err == nil {
		if pc.race != nil {
			pc.race(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	// A run that ended with a status, a signal among them (SR-27's
	// launcher killed), is observed; one that did not start is not.
	if pc.observe != nil && (err == nil || errors.As(err, new(*exec.ExitError))) {
		time.Sleep(100 * time.Millisecond) // let a killed tree finish dying
		line = pc.observe()
	}
	run := Run{Line: line, Stderr: lastLine(errb.String()), ErrorLine: errorLineBeforeHint(errb.String())}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return Run{Line: line, Code: -1, Err: fmt.Sprintf("timed out after %v", r.Timeout)}
	case errors.As(err, &ee):
		run.Code = ee.ExitCode()
		if run.Code < 0 {
			run.Code = 128 + 9 // killed by a signal; ExitCode hides which
		}
	case err != nil:
		return Run{Code: -1, Err: err.Error()}
	}
	return run
}

// scratch is one check's directory (not under /tmp, which the sandbox
// replaces), a loopback listener and a sleeping process outside the
// sandbox, for the checks that reach for them.
type scratch struct {
	dir, ws, outside string
	execDir          string
	launcher         string // the launcher binary
	xbin             string // an extra directory, executable in policyTextExec
	listener         string
	ln               net.Listener
	abstract         string // name of an abstract Unix socket listening outside the sandbox
	aln              net.Listener
	sleeper          int
	sleep            *exec.Cmd
	closers          []func() // what a check started, stopped by close
}

func newScratch(launcherPath string) (*scratch, error) {
	dir, err := os.MkdirTemp(scratchRoot, "pinfold-check-")
	if err != nil {
		return nil, err
	}
	s := &scratch{dir: dir, ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside"), execDir: filepath.Dir(launcherPath),
		launcher: launcherPath, xbin: filepath.Join(dir, "xbin")}
	// As root the agent runs under a throwaway uid, which must be able to
	// reach the workspace.
	if err := os.Chmod(dir, 0o755); err != nil {
		s.close()
		return nil, err
	}
	for _, d := range []string{s.ws, s.outside, s.xbin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			s.close()
			return nil, err
		}
	}
	if s.ln, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		s.close()
		return nil, err
	}
	s.listener = s.ln.Addr().String()
	s.abstract = filepath.Base(dir)
	if s.aln, err = net.Listen("unix", "@"+s.abstract); err != nil {
		s.close()
		return nil, err
	}
	for _, ln := range []net.Listener{s.ln, s.aln} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	s.sleep = exec.Command("/bin/sleep", "60")
	if err := s.sleep.Start(); err != nil {
		s.close()
		return nil, err
	}
	s.sleeper = s.sleep.Process.Pid
	return s, nil
}

// policyText is the standard policy of a check: the workspace writable,
// the launcher's directory, /usr/bin and /usr/lib executable, network none, and
// whatever extra adds.
func (s *scratch) policyText(extra string) string {
	execs := []string{s.execDir, "/usr/bin", "/usr/lib"}
	if st, err := os.Lstat("/usr/lib64"); err == nil && st.IsDir() {
		execs = append(execs, "/usr/lib64")
	}
	q := func(xs []string) string {
		var b []string
		for _, x := range xs {
			b = append(b, fmt.Sprintf("%q", x))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	return fmt.Sprintf("version = 1\n[workspace]\npath = %q\n[files]\nwrite = [%q]\nexec = %s\n[network]\nmode = \"none\"\n%s", s.ws, s.ws, q(execs), extra)
}

// policyTextExec is the standard policy with dir executable too.
func (s *scratch) policyTextExec(dir string) string {
	return strings.Replace(s.policyText(""), "exec = [", fmt.Sprintf("exec = [%q, ", dir), 1)
}

// copyFile copies a file, with mode.
func copyFile(from, to string, mode os.FileMode) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, mode)
}

// answerOn reads a terminal's output until a question shows ("to
// allow") and, once it has stood longer than the launcher discards keys
// for, types answer with the question's code, as the person would (or,
// withCode false, the answer alone, as a person answering a prompt the
// agent printed might). A
// launcher slowed down (a loaded machine) may still be discarding when
// the answer comes, so an answer the terminal does not echo within a few
// seconds is typed again, a few times at most. It ends when the terminal
// does.
func answerOn(master *os.File, answer string, withCode bool) {
	var (
		mu   sync.Mutex
		seen strings.Builder
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			if seen.Len() < 1<<20 {
				seen.Write(buf[:max(n, 0)])
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	output := func() string { mu.Lock(); defer mu.Unlock(); return seen.String() }
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var typed string
	asked, tries := 0, 0 // where the question ended in the output; answers typed
	var last time.Time
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		out := output()
		if typed == "" {
			loc := questionCode().FindStringSubmatchIndex(out)
			if loc == nil {
				continue
			}
			word, code := out[loc[2]:loc[3]], out[loc[4]:loc[5]]
			typed, asked = answer, loc[1]
			if word == answer && withCode {
				typed += " " + code
			}
			last = time.Now() // the question's standing time, then the first answer
		}
		if strings.Contains(out[asked:], typed) || tries == 5 {
			return // echoed, so taken (the reader drains the rest), or given up
		}
		if time.Since(last) < time.Second+time.Duration(tries)*2*time.Second {
			continue
		}
		master.WriteString(typed + "\n")
		tries++
		last = time.Now()
	}
}

// questionCode is what a question asks to be typed: its word and code.
var questionCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Type "([a-z]+) ([0-9]{4})" to allow`) })

// needsRoot is why a components-mode check is skipped when not root: the
// launcher refuses components mode (and serve) to anyone else.
const needsRoot = "components mode (and the gateway) runs only as root: run the checks as root"

// componentsMode finds mode = "components" in a policy text.
var componentsMode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^mode = "components"$`) })

// inComponents is a policy text with mode = "components".
func inComponents(text string) string {
	return strings.Replace(text, "version = 1\n", "version = 1\nmode = \"components\"\n", 1)
}

// componentsText is the standard policy in components mode.
func (s *scratch) componentsText(extra string) string { return inComponents(s.policyText(extra)) }

// componentsTextNet is componentsText with its [network] section
// replaced by network.
func (s *scratch) componentsTextNet(network string) string {
	return inComponents(s.policyTextNet(network))
}

// webPage is the first line of what webServer serves.
const webPage = "pinfold register check"

// webServer starts an HTTP server on the host's loopback, serving
// webPage, for the proxy's checks; it stops with the scratch.
func (s *scratch) webServer() (string, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, webPage+"\n")
	})}
	go srv.Serve(ln)
	s.closers = append(s.closers, func() { srv.Close() })
	return ln.Addr().String(), nil
}

// udpEcho starts a UDP echo server on the host's loopback; it stops
// with the scratch.
func (s *scratch) udpEcho() (string, error) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
	s.closers = append(s.closers, func() { pc.Close() })
	return pc.LocalAddr().String(), nil
}

// policyTextNet is the standard policy with its [network] section
// replaced by network.
func (s *scratch) policyTextNet(network string) string {
	text := s.policyText("")
	i := strings.Index(text, "[network]")
	return text[:i] + network
}

func (s *scratch) close() {
	for _, c := range s.closers {
		c()
	}
	for _, ln := range []net.Listener{s.ln, s.aln} {
		if ln != nil {
			ln.Close()
		}
	}
	if s.sleep != nil && s.sleep.Process != nil {
		s.sleep.Process.Kill()
		s.sleep.Wait()
	}
	os.RemoveAll(s.dir)
}

// errorLineBeforeHint is the last "launcher: error:" line of s when a
// "launcher: hint:" line ends s, else "".
func errorLineBeforeHint(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "launcher: hint:") {
		return ""
	}
	for i := len(lines) - 2; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "launcher: error:") {
			return lines[i]
		}
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// openPTY opens a new pseudo-terminal pair.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}
