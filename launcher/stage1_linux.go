package launcher

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/mountinfo"
	"github.com/pinfold/pinfold/internal/privfile"
	"github.com/pinfold/pinfold/internal/userdb"
	"github.com/pinfold/pinfold/policy"
)

// LaunchOptions is one launch as the CLI asked for it.
type LaunchOptions struct {
	Policy  *policy.Policy
	Argv    []string
	Quiet   bool
	Verbose bool
	Stdin   *os.File
	Stdout  *os.File
	Stderr  io.Writer
	// Beside is the component session of a components-mode launch; nil
	// in wrapper mode.
	Beside Beside
	// ReadOnly are existing paths beneath the write paths mounted
	// read-only over them, the directories between pinned in place
	// (Request.ReadOnly).
	ReadOnly []string
	// Mask are the launcher's own files and directories, covered where
	// the agent could otherwise read them (Request.Mask).
	Mask []string
	// Uncovered is what the caller could not protect, said on every run
	// with the rest of what is uncovered.
	Uncovered []string
}

// Beside is what a components-mode launch runs next to the agent: the
// component session (components/session). The launcher confines the
// agent; the session holds the authority the agent asks for.
type Beside interface {
	// AgentDir is the agent's credential directory, granted to it
	// read-only ("" for none). It exists before Launch is called.
	AgentDir() string
	// AgentEnv is added to the agent's environment.
	AgentEnv() []string
	// Attach starts serving the agent: netns is its network namespace (a
	// path under /proc), uid and gid its identity. It is called once the
	// namespace exists and before the plan is sent; an error stops the
	// launch.
	Attach(netns string, uid, gid int) error
	// ProxyPort, when not 0, has stage 2 make a listener on
	// 127.0.0.1:ProxyPort in the agent's namespace (which an unprivileged
	// launcher could not enter to make one), handed to AttachProxy once
	// stage 2 is confined and before the agent starts.
	ProxyPort() uint16
	AttachProxy(listener *os.File) error
	// AgentPause is given, as root (where the agent has a cgroup) and
	// before the agent starts, a function that freezes the agent's whole
	// tree until resume is called: the person's questions are put on the
	// terminal the agent shares while it can write nothing there.
	AgentPause(pause func(ctx context.Context) (resume func(), err error))
}

// StepFailedError is a Boundary step that failed in stage 2, after the
// plan was accepted: the agent never started. Hint, when not empty, is
// what stage 1 sees that may have caused it. Status is stage 2's exit
// status: 127 when the agent's own execve said ENOENT, 126 when it
// failed otherwise (as env(1) and the shells exit), 125 for any other
// step.
type StepFailedError struct {
	Report, Hint string
	Status       int
}

func (e *StepFailedError) Error() string { return "stage 2 " + e.Report }

// ProbeForLaunch reads what a launch needs without starting any process:
// the namespaces are tested by the clone itself, which fails closed.
func ProbeForLaunch() Host {
	h := Host{Kernel: kernelRelease(), Root: os.Geteuid() == 0}
	h.Landlock = probeLandlock()
	assumed := Feature{Available: true, Detail: "tested by the launch's clone"}
	h.UserNS, h.NetNS, h.PidNS, h.MountNS = assumed, assumed, assumed, assumed
	// Network namespaces have a fallback (Landlock TCP and seccomp), so
	// their absence is read here rather than left to fail the clone.
	if _, err := os.Stat("/proc/self/ns/net"); err != nil || readSysctl("user/max_net_namespaces") == 0 {
		h.NetNS = Feature{Detail: "network namespaces are disabled (no /proc/self/ns/net, or user.max_net_namespaces = 0)",
			Hint: "sysctl -w user.max_net_namespaces=15000, or a kernel with CONFIG_NET_NS"}
	}
	h.Seccomp = probeSeccomp()
	h.Cgroup = probeCgroups(h.Root)
	return h
}

// Launch runs the agent under the policy and returns its exit status. An
// error means the agent did not run (or, once it has, that supervision
// failed); nothing is ever retried with less confinement.
func Launch(ctx context.Context, o LaunchOptions) (int, error) {
	runtime.LockOSThread() // PDEATHSIG follows the thread that started stage 2
	// Two one-time costs of the Go runtime are paid on other threads while
	// the checks below run, rather than on the launch's path (about 1 ms
	// each on our machines): subscribing to signals, where each signal is
	// a round trip to the runtime's signal thread, and os.StartProcess's
	// check that pidfds work, a child that exits at once.
	sigs := make(chan os.Signal, 8)
	held := make(chan struct{})
	go func() {
		signal.Notify(sigs, relayedSignals...)
		close(held)
	}()
	// Stopped off the launch's path too: Stop waits for the runtime's
	// signal loop to go idle, and the command line exits as soon as Launch
	// returns. A caller that goes on (bash's workers) has it stopped a
	// moment later.
	defer func() {
		go func() {
			<-held
			signal.Stop(sigs)
		}()
	}()
	go PreparePidfd()
	// Descriptors the launcher inherited without close-on-exec (a make
	// jobserver pipe, say) would reach stage 2, and through /proc the agent.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return 0, fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	// A launcher binary or library the agent can replace would confine
	// nothing next time. Both the check and the host's probe only look,
	// so they run at once; the check's refusal comes first.
	checked := make(chan error, 1)
	go func() { checked <- launcherChecks(o.Policy) }()
	h := ProbeForLaunch()
	if err := <-checked; err != nil {
		return 0, err
	}
	whole := o.Policy
	if o.Policy.Mode == policy.ModeComponents {
		p, err := agentPolicy(o.Policy, o.Beside)
		if err != nil {
			return 0, err
		}
		o.Policy = p
	}
	if o.Policy.Network.Mode == policy.NetProxy && (o.Beside == nil || o.Beside.ProxyPort() == 0) {
		return 0, &RefusedError{Boundary: "network", Detail: `mode "proxy" needs the net component beside the agent, and none was started`, Hint: `launch with the launcher's own command line, which starts it`}
	}
	assessed := Assess(o.Policy, h)
	if whole.Mode == policy.ModeComponents {
		// The write paths agentPolicy took from the agent are fs's, which
		// confines itself with them: the same floor holds; and the net
		// component's, which agentPolicy's network none hides (SR-24).
		if a := assessLandlockFiles(whole, h.Landlock); a.Verdict == Refused {
			assessed = append(assessed, a)
		}
		if a, ok := netComponentFloor(whole, h.Landlock); ok {
			assessed = append(assessed, a)
		}
	}
	if refused := refusals(assessed); refused != nil {
		return 0, refused
	}
	var degraded []Assessment
	for _, a := range assessed {
		if a.Verdict == Degraded {
			degraded = append(degraded, a)
		}
	}
	// Started in the background of the terminal the agent's keys would
	// come from (launcher … &): it waits for fg, before anything is made
	// (SD-23).
	var early []os.Signal // read while waiting for fg, relayed once the agent runs
	if tty, _ := ownTerminal(o.Stdin, o.Stdout, o.Stderr); tty >= 0 {
		if err := waitForeground(tty, o.Stderr, sigs, &early); err != nil {
			return endedStatus(o.Stderr, err)
		}
	}
	// A terminal on stdin that is not the launcher's own but another
	// session's (setsid launcher …, from the person's shell) is read by
	// that session's shell too, and no job control keeps the agent from
	// reading it while the shell waits for the person (a re-test).
	if err := foreignSessionStdin(o.Stdin); err != nil {
		return 0, err
	}
	if err := foreignSessionOutput(o.Stdout, o.Stderr); err != nil {
		return 0, err
	}
	if !h.Root {
		if err := listedTerminal(o.Policy, "/dev", os.Geteuid()); err != nil {
			return 0, err
		}
	}
	cwd, _ := os.Getwd()
	id := IdentityPlan{}
	if h.Root {
		uid, lock, err := claimThrowawayID()
		if err != nil {
			return 0, err
		}
		defer lock.Close()
		owner, ownerGID, err := checkWriteOwners(string(o.Policy.Workspace.Path), o.Policy.Files.Write)
		if err != nil {
			return 0, err
		}
		if err := checkSearchable(slices.Concat([]policy.Path{o.Policy.Workspace.Path}, o.Policy.Files.Read, o.Policy.Files.Write, o.Policy.Files.Exec)); err != nil {
			return 0, err
		}
		id = IdentityPlan{Setuid: true, UID: uid, GID: uid, Owner: owner, OwnerGID: ownerGID}
	}
	// Signals are held from here until the agent runs, then relayed: a
	// SIGTERM must not kill the launcher between creating the cgroup and
	// removing it.
	<-held
	// The plan is built while stage 2 is cloned and boots.
	planned := make(chan prepared, 1)
	go func() { planned <- preparePlan(o, h, id, cwd) }()
	newNet := wantsNewNet(o.Policy, h)
	if o.Beside != nil && !newNet {
		return 0, &RefusedError{Boundary: "components", Detail: "the agent's network namespace, where its only listeners are, cannot be made on this host", Hint: "run `launcher hello` to see what this host allows"}
	}
	s, err := cloneStage2(o, h, id, newNet)
	if err != nil {
		return 0, err
	}
	defer s.cleanup()
	if o.Beside != nil && s.cg != nil {
		// A question freezes the agent and stops copying keys to it, so
		// that the answer is read by the question alone.
		o.Beside.AgentPause(s.pauseForQuestion)
	}
	if o.Beside != nil {
		// Stage 2 waits for its plan: the agent cannot start before the
		// components serve it.
		if err := o.Beside.Attach(fmt.Sprintf("/proc/%d/ns/net", s.cmd.Process.Pid), id.UID, id.GID); err != nil {
			return 0, err
		}
	}
	pp := <-planned
	if pp.err != nil {
		return 0, pp.err
	}
	plan, notes, prog := pp.plan, pp.notes, pp.prog
	s.listenCovered = pp.listenCovered
	if err := s.sendPlan(plan); err != nil {
		return 0, err
	}
	s.readOnly, s.uncovered = len(o.ReadOnly), o.Uncovered
	if !o.Quiet {
		// Only the summary says it: a quiet launch reads nothing for it.
		s.uncovered = append(slices.Clip(s.uncovered), coreDumpsUncovered(plan)...)
		fmt.Fprintln(o.Stderr, summaryLine(plan, prog, s, len(notes.Dropped), degraded))
		if o.Verbose {
			for _, a := range degraded {
				notes.Other = append(notes.Other, "degraded: "+a.Boundary+": "+a.Detail)
			}
			if len(notes.Dropped) > 0 {
				notes.Other = append(notes.Other, "not passed to the agent: "+strings.Join(notes.Dropped, " "))
			}
			if s.cg != nil {
				notes.Other = append(notes.Other, "cgroup "+s.cg.Describe())
			}
			if len(o.ReadOnly) > 0 {
				notes.Other = append(notes.Other, "read-only inside the write paths: "+strings.Join(o.ReadOnly, " "))
			}
			for _, n := range notes.Other {
				fmt.Fprintln(o.Stderr, "launcher: note: "+n)
			}
		}
	}
	if o.Beside != nil && o.Beside.ProxyPort() != 0 {
		ln, err := s.receiveProxyListener()
		if err != nil {
			return 0, err
		}
		err = o.Beside.AttachProxy(ln)
		ln.Close()
		if err != nil {
			return 0, err
		}
	}
	if err := context.Cause(ctx); err != nil {
		return 0, err // the session ended while the agent was being prepared
	}
	s.sigs, s.deferred = sigs, early
	if err := s.run(); err != nil {
		var failed *StepFailedError
		if errors.As(err, &failed) && strings.HasPrefix(failed.Report, "exec: "+plan.Path+": ") {
			failed.Hint = execHint(plan.Path, o.Policy)
		}
		return endedStatus(o.Stderr, err)
	}
	return s.wait(ctx, sigs)
}

// endedStatus is Launch's result for err, an error before the agent
// ran: a signal that ended the launch (endedError) is said and gives its
// status, as a job that ends by it; nothing ran.
func endedStatus(stderr io.Writer, err error) (int, error) {
	if e, ok := err.(endedError); ok {
		fmt.Fprintf(stderr, "launcher: %v\n", e)
		return 128 + int(e), nil
	}
	return 0, err
}

// launcherChecks refuses a policy under which the agent could replace
// the launcher's code (launcherCode, writableCode), each name looked at
// once for both.
func launcherChecks(p *policy.Policy) error {
	k := newLooks()
	code, err := launcherCodeWith(k)
	if err != nil {
		return err
	}
	return writableCodeWith(k, p, code)
}

// launcherCode is the launcher's executable and every file it has mapped
// (none in the static build cmd/launcher makes; a dynamic build's loader,
// C library and libseccomp), which the kernel names
// by the path it found them at, links resolved (/proc/self/exe, maps);
// and the way the person reached the executable: the path they ran
// (argv[0], looked up in PATH when it has no slash) and every symbolic
// link on the way from it. A link in a write path that leads to the real
// launcher outside is replaced as easily as the launcher would be: the
// next launch run by that name would run the agent's program (a hunt,
// 2026-12-01).
func launcherCode() ([]string, error) { return launcherCodeWith(newLooks()) }

// launcherCodeWith is launcherCode, looking at names through k.
func launcherCodeWith(k *looks) ([]string, error) {
	var files []string
	add := func(p string) {
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the launcher's own executable: %w", err)
	}
	add(exe)
	way, err := invokedAsWith(k, os.Args[0], exe)
	if err != nil {
		return nil, err
	}
	for _, p := range way {
		add(p)
	}
	maps, _ := mountinfo.ReadFile("/proc/self/maps")
	for line := range strings.Lines(string(maps)) {
		// address perms offset dev inode path: a path starts with '/'.
		if i := strings.Index(line, " /"); i >= 0 {
			add(strings.TrimSpace(line[i+1:]))
		}
	}
	return files, nil
}

// invokedAs is what the way the person ran the launcher (exe) depends
// on: the path argv0 names (found in PATH when it has no slash:
// searchPath), resolved as the kernel does (privfile.Resolve), every
// directory its names are looked up in and every symbolic link on the
// way (a link in a write path could be replaced, and so could a
// directory the path passes through before a ".." takes it back out: a
// re-test); and when argv0 is relative, the working directory it was
// resolved from, which the agent could move if it can write there.
func invokedAs(argv0, exe string) ([]string, error) { return invokedAsWith(newLooks(), argv0, exe) }

// invokedAsWith is invokedAs, looking at names through k.
func invokedAsWith(k *looks, argv0, exe string) ([]string, error) {
	p := argv0
	var paths []string
	if !strings.Contains(p, "/") {
		var err error
		if paths, p, err = searchPath(k, p, exe); err != nil {
			return nil, err
		}
	}
	if !filepath.IsAbs(p) {
		if wd, err := os.Readlink("/proc/self/cwd"); err == nil {
			paths = append(paths, wd)
		}
	}
	return append(paths, lookupDeps(k, p)...), nil
}

// searchPath looks name up in PATH as a shell does and returns the path
// it takes and, for each entry up to that one, what its lookup depends
// on (lookupDeps): a program of the same name put in a directory
// searched first would run instead of the launcher, so the agent need not
// replace the launcher, only come first (a re-test: a virtualenv's bin in
// the workspace, first in PATH). It fails, so that the launch is
// refused, when the lookup cannot be told: the first program of that
// name is not exe (the launcher was started some other way: a wrapper, a
// shell's remembered path, a PATH since changed), none is, or a relative
// entry (an empty one is ".") comes first or leads to it, which names
// wherever the next launch starts, the workspace perhaps (a re-test). An
// entry with a leading ~ is one: bash expands it when it looks a name up,
// but env, sudo, xargs, make's sh (dash) and every other execvp caller do
// not (a re-test ran the agent's ./~/bin/launcher as root through env).
func searchPath(k *looks, name, exe string) (deps []string, found string, err error) {
	self, err := k.stat(exe)
	if err != nil {
		return nil, "", fmt.Errorf("the launcher's own executable: %w", err)
	}
	refuse := func(detail string) error {
		return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("run as %q: %s, so whether a program the agent wrote would run instead next time cannot be told", name, detail),
			Hint: "run the launcher by its full path, or give PATH absolute entries that lead its name to it"}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if strings.HasPrefix(dir, "~") {
			return nil, "", refuse(fmt.Sprintf("PATH's entry %q, searched up to the launcher's own, starts with ~, which bash reads as a home but env, sudo, xargs and dash (sh) read as a directory named ~ in the working directory", dir))
		}
		if !strings.HasPrefix(dir, "/") {
			return nil, "", refuse(fmt.Sprintf("PATH's entry %q, searched up to the launcher's own, is relative (an empty entry is the working directory)", dir))
		}
		cand := dir + "/" + name
		deps = append(deps, lookupDeps(k, cand)...)
		st, err := k.stat(cand)
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
			continue
		}
		if st.Dev != self.Dev || st.Ino != self.Ino {
			return nil, "", refuse(fmt.Sprintf("PATH leads that name to %s, another program than this launcher (%s)", cand, exe))
		}
		return deps, cand, nil
	}
	return nil, "", refuse(fmt.Sprintf("no PATH entry leads that name to this launcher (%s)", exe))
}

// lookupDeps is what the lookup of path depends on: path as spelt
// (cleaned), every directory the kernel looks a name up in on the way to
// it and every link it passes (a shell runs a PATH entry's text as it
// stands, so link/../bin is bin beside where link leads, not beside link:
// a re-test), and the resolved name when it exists. An agent that can
// write one of those directories can put a program there, or make one
// that is missing.
func lookupDeps(k *looks, path string) []string {
	var out []string
	if filepath.IsAbs(path) {
		out = append(out, filepath.Clean(path))
	}
	var seen []string
	real, err := privfile.ResolveWith(path, k.lookups(), func(d string) error { seen = append(seen, d); return nil }, func(link string) { out = append(out, link) })
	out = append(out, seen...)
	if err == nil {
		out = append(out, real)
	}
	return out
}

// looks remembers what one launch's SR-25 checks saw of each name, so
// that each is looked at once: every PATH entry's lookup passes /usr,
// every code path's walk up reaches /, and the lookups have looked at
// each code path before writableCode does. It is made for one launch
// (newLooks) and not kept after: what was there when first looked at is
// what the checks judge.
type looks struct {
	l, s map[string]looked
	link map[string]linkRead
}

type looked struct {
	st  unix.Stat_t
	err error
}

type linkRead struct {
	target string
	err    error
}

func newLooks() *looks {
	return &looks{l: map[string]looked{}, s: map[string]looked{}, link: map[string]linkRead{}}
}

// lstat is unix.Lstat's answer for path.
func (k *looks) lstat(path string) (unix.Stat_t, error) {
	if r, ok := k.l[path]; ok {
		return r.st, r.err
	}
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	for err == unix.EINTR { // as os.Lstat, which Resolve used
		err = unix.Lstat(path, &st)
	}
	k.l[path] = looked{st, err}
	return st, err
}

// stat is unix.Stat's answer for path. Where lstat has looked at it, a
// name that is not a symbolic link is what lstat saw (stat follows no
// further), and one lstat could not look at stat cannot either (its
// lookups are lstat's, and then the link's).
func (k *looks) stat(path string) (unix.Stat_t, error) {
	if r, ok := k.s[path]; ok {
		return r.st, r.err
	}
	if r, ok := k.l[path]; ok && (r.err != nil || r.st.Mode&unix.S_IFMT != unix.S_IFLNK) {
		return r.st, r.err
	}
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	for err == unix.EINTR {
		err = unix.Stat(path, &st)
	}
	k.s[path] = looked{st, err}
	return st, err
}

// lookups are k's, for privfile.ResolveWith.
func (k *looks) lookups() privfile.Lookups {
	return privfile.Lookups{
		IsLink: func(path string) (bool, error) {
			st, err := k.lstat(path)
			if err != nil {
				return false, &os.PathError{Op: "lstat", Path: path, Err: err}
			}
			return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
		},
		Readlink: func(path string) (string, error) {
			r, ok := k.link[path]
			if !ok {
				r.target, r.err = os.Readlink(path)
				k.link[path] = r
			}
			return r.target, r.err
		},
	}
}

// writableCode refuses a policy under which the agent could write one of
// code (the launcher's own files, launcherCode).
func writableCode(p *policy.Policy, code []string) error {
	return writableCodeWith(newLooks(), p, code)
}

// writableCodeWith is writableCode, looking at names through k.
func writableCodeWith(k *looks, p *policy.Policy, code []string) error {
	hint := "keep the launcher, and the PATH directories searched before its own, outside the workspace and the write paths (and not bound from there)"
	writes := append([]policy.Path{p.Workspace.Path}, p.Files.Write...)
	ms := mountinfo.Read() // once: every check below uses it
	code, err := withBackingWith(k, ms, code)
	if err != nil {
		return err
	}
	// A file with another name is that file wherever the name is: one in
	// a write path hands the agent the launcher (a re-test: through the
	// idmap it owned a hard link in the workspace and made the launcher
	// world-writable; an overlay's lower file so linked it rewrote). Where
	// the other names are cannot be found, so a second name is refused.
	for _, c := range code {
		if st, err := k.lstat(c); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("the launcher's %s has %d names (hard links), and one may be beneath a path the agent can write: it could change the file the next launch runs", c, st.Nlink),
				Hint: "give it one name: copy it and move the copy over it (cp F F.new && mv F.new F), or install it with install(1); perf's build-id cache (~/.debug) makes such links"}
		}
	}
	for _, w := range writes {
		for _, c := range code {
			if w.Contains(policy.Path(c)) {
				what := "the launcher's " + c
				if fi, err := os.Lstat(c); err == nil && fi.IsDir() {
					what = "the directory " + c + ", where a lookup of the launcher's name passes,"
				}
				return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("%s is beneath %s, which the agent can write: it could replace code the next launch runs", what, w), Hint: hint}
			}
		}
	}
	// And by what the directories are, not how they are spelt: a write
	// path, or a mount beneath one, may be a bind of the launcher's own
	// directory (a re-test replaced the launcher so).
	type id struct{ dev, ino uint64 }
	reach := map[id]string{}
	note := func(path string) {
		if st, err := k.stat(path); err == nil {
			reach[id{st.Dev, st.Ino}] = path
		}
	}
	for _, w := range writes {
		note(string(w))
	}
	// under[i][j]: the mount ms[i] is at or beneath writes[j].
	under := make([][]bool, len(ms))
	for i, m := range ms {
		for j, w := range writes {
			if w.Contains(policy.Path(m.Point)) {
				if under[i] == nil {
					under[i] = make([]bool, len(writes))
				}
				under[i][j] = true
			}
		}
		if under[i] != nil {
			note(m.Point)
		}
	}
	// A directory whose walk up to / was made found nothing there: a
	// walk that reaches it again stops.
	walked := map[string]bool{}
	for _, c := range code {
		for d := c; !walked[d]; d = filepath.Dir(d) {
			walked[d] = true
			if st, err := k.stat(d); err == nil {
				if via, ok := reach[id{st.Dev, st.Ino}]; ok {
					return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("the launcher's %s is reachable for writing as %s (a bind mount), which the agent can write beneath: it could replace code the next launch runs", c, via), Hint: hint}
				}
			}
			if d == "/" || d == "." {
				break
			}
		}
	}
	// And the other way round: the launcher's own mount may be a bind of
	// a tree beneath a write path (a re-test ran the launcher from /opt,
	// a bind of a directory in the workspace). Each is named by its
	// device and its place in that device's file system, where a tree and
	// its binds are one.
	type tree struct{ dev, fs, via string }
	var trees []tree
	for j, w := range writes {
		if dev, fs, ok := mountinfo.Locate(ms, string(w)); ok {
			trees = append(trees, tree{dev, fs, string(w)})
		}
		for i, m := range ms {
			if under[i] != nil && under[i][j] {
				trees = append(trees, tree{m.Dev, m.Root, m.Point})
			}
		}
	}
	for _, c := range code {
		dev, fs, ok := mountinfo.Locate(ms, c)
		if !ok {
			continue
		}
		for _, t := range trees {
			if t.dev == dev && mountinfo.Within(fs, t.fs) {
				return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("the launcher's %s is the same file as one beneath %s (%s on device %s; a bind mount shows it in both places), which the agent can write: it could replace code the next launch runs", c, t.via, fs, dev), Hint: hint}
			}
		}
	}
	return nil
}

// withBacking is code and where the file systems that hold it keep it: an
// overlay's layers (a re-test ran the launcher from an overlay whose lower
// layer was in the workspace, rewrote it there while it ran, and stage 1
// ran what it wrote), an ecryptfs's lower directory, a loop device's image
// file; and theirs in turn. A FUSE file system keeps its files wherever
// its program does, which cannot be told: code on one is refused.
func withBacking(ms []mountinfo.Mount, code []string) ([]string, error) {
	return withBackingWith(newLooks(), ms, code)
}

// withBackingWith is withBacking, looking at names through k.
func withBackingWith(k *looks, ms []mountinfo.Mount, code []string) ([]string, error) {
	out := slices.Clone(code)
	const most = 4096                   // backings of backings, bounded
	whole := map[mountinfo.Mount]bool{} // mounts whose whole-file backing (an image) is in out already
	for i := 0; i < len(out) && len(out) < most; i++ {
		m, fsPath, ok := mountinfo.Holder(ms, out[i])
		if !ok {
			continue
		}
		var more []string
		unknown := func(what string) error {
			return &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("the launcher's %s is on a %s file system at %s %s: where it keeps the launcher cannot be told", out[i], m.Type, m.Point, what),
				Hint: "mount it with absolute paths, or install the launcher on a local file system"}
		}
		switch {
		case m.Type == "overlay":
			// With metacopy a file's data stays in a lower layer at the
			// path its upper copy's extended attributes name, not at its
			// own (a re-test: data renamed in the lower layer, with a
			// second name in the workspace).
			if v, _ := m.SuperOption("metacopy"); v == "on" {
				return nil, unknown("with metacopy=on, which keeps a file's data at a path only its upper layer's extended attributes give")
			}
			// lowerdir+ and datadir+ are the new mount API's layers, one
			// option each (a re-test's overlay listed only those). A
			// relative layer was taken from where the person mounted
			// it, which is not known (a re-test: lowerdir=ov/lower).
			for _, key := range []string{"lowerdir", "lowerdir+", "datadir+", "upperdir", "workdir"} {
				for _, v := range m.SuperOptions(key) {
					for _, layer := range overlayLayers(v) {
						if !filepath.IsAbs(layer) {
							return nil, unknown(fmt.Sprintf("whose layer %q is a relative path", layer))
						}
						// mountinfo gives the path as typed at the mount;
						// a layer moved since (into the workspace, say: a
						// re-test) is not where it says. A layer moved and
						// another put in its place cannot be told apart.
						if st, err := os.Stat(layer); err != nil || !st.IsDir() {
							return nil, unknown(fmt.Sprintf("whose layer %q is no longer a directory at that path (moved since the mount?)", layer))
						}
						more = append(more, lookupDeps(k, layer+fsPath)...)
					}
				}
			}
		case m.Type == "ecryptfs" && strings.HasPrefix(m.Source, "/"):
			more = lookupDeps(k, m.Source+fsPath)
		case m.Type == "fuse" || strings.HasPrefix(m.Type, "fuse."):
			return nil, &RefusedError{Boundary: "launcher", Detail: fmt.Sprintf("the launcher's %s is on a FUSE file system (%s at %s), which keeps its files wherever its program does: whether the agent can write them cannot be told", out[i], m.Type, m.Point),
				Hint: "install the launcher on a local file system"}
		}
		if !whole[m] { // once a mount: its devices hold every file of it
			whole[m] = true
			imgs, err := mountImages(m)
			if err != nil {
				return nil, unknown(err.Error())
			}
			for _, img := range imgs {
				more = append(more, lookupDeps(k, img)...)
			}
		}
		for _, p := range more {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// overlayLayers splits an overlay's lowerdir (or upperdir, workdir) into
// its directories: ':' separates them (two for a data-only layer), and
// "\:" is a colon within one.
func overlayLayers(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i <= len(v); i++ {
		switch {
		case i < len(v) && v[i] == '\\' && i+1 < len(v):
			i++
			cur.WriteByte(v[i])
		case i == len(v) || v[i] == ':':
			if cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	return out
}

// mountImages are the files that m's block devices keep their data in
// (blockImages): its device, the device it was mounted from (btrfs's
// st_dev is not a block device), every other device of a btrfs, and the
// devices its options name (erofs device=, xfs logdev= and rtdev=, ext4
// journal_path=; a re-test's erofs kept the launcher in a blob in the
// workspace). A file system mounted straight from a file (erofs since
// Linux 6.12, without a loop device) is refused: unlike a loop device's,
// its file cannot be checked to be the one at the path mountinfo gives.
func mountImages(m mountinfo.Mount) ([]string, error) {
	devs := []string{m.Dev}
	// must: a device the file system uses that is not there cannot be
	// checked. A source may be a name that never was (/dev/root).
	fromPath := func(p, what string, must bool) error {
		var st unix.Stat_t
		switch err := unix.Stat(p, &st); {
		case (err != nil || !filepath.IsAbs(p)) && !must:
			return nil
		case err != nil || !filepath.IsAbs(p):
			return fmt.Errorf("mounted with %s %q, which is not an absolute path to a device that is there", what, p)
		case st.Mode&unix.S_IFMT == unix.S_IFBLK:
			devs = append(devs, fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)))
			return nil
		case st.Mode&unix.S_IFMT == unix.S_IFREG:
			return fmt.Errorf("mounted from the file %s (%s), whose identity with the file the kernel holds cannot be checked", p, what)
		}
		return nil // not a device ("overlay", "tmpfs", a server's name)
	}
	// erofs and btrfs name their device only so.
	if err := fromPath(m.Source, "its source", m.Type == "erofs" || m.Type == "btrfs"); err != nil {
		return nil, err
	}
	for _, key := range []string{"device", "logdev", "rtdev", "journal_path"} {
		for _, v := range m.SuperOptions(key) {
			if err := fromPath(v, key+"=", true); err != nil {
				return nil, err
			}
		}
	}
	if m.Type == "btrfs" {
		devs = append(devs, btrfsDevices(devs)...)
	}
	if m.Type == "ext3" || m.Type == "ext4" {
		j, err := extJournal(m.Dev)
		if err != nil {
			return nil, err
		}
		if j != "" {
			devs = append(devs, j)
		}
	}
	return blockImages(devs)
}

// extJournal is the device (major:minor) of an ext3 or ext4's external
// journal, from the superblock on dev; "" for none. Neither mountinfo
// nor sysfs names it, and a journal the agent can write rewrites the
// launcher's blocks when it is replayed after a crash (a re-test). Where
// the device cannot be read (unprivileged, or a host that keeps even
// root from its disks), sysfs and jbd2 tell whether the journal is none
// or in an inode of the file system's own; anything else is refused.
func extJournal(dev string) (string, error) {
	if _, err := os.Stat("/sys/dev/block/" + dev); err != nil {
		return "", nil // no such block device (as blockImages reads it)
	}
	fd, err := openBlock(dev)
	if err != nil {
		// sysfs and jbd2 spell a / in a device's name (cciss/c0d0) as !.
		name := strings.ReplaceAll(devName(dev), "/", "!")
		task, terr := mountinfo.ReadFile("/sys/fs/ext4/" + name + "/journal_task")
		internal, _ := filepath.Glob("/proc/fs/jbd2/" + name + "-*") // an internal journal is "DEV-INODE"
		if name != "" && terr == nil && (strings.TrimSpace(string(task)) == "<none>" || len(internal) > 0) {
			return "", nil
		}
		return "", fmt.Errorf("whose journal's place cannot be told (its superblock: %v)", err)
	}
	defer unix.Close(fd)
	sb := make([]byte, 1024)
	if n, err := unix.Pread(fd, sb, 1024); err != nil || n != len(sb) {
		return "", fmt.Errorf("whose superblock cannot be read for its journal (%v)", err)
	}
	le := binary.LittleEndian
	const hasJournal = 0x4 // s_feature_compat's EXT3_FEATURE_COMPAT_HAS_JOURNAL
	if le.Uint16(sb[0x38:]) != 0xef53 || le.Uint32(sb[0x5c:])&hasJournal == 0 || le.Uint32(sb[0xe0:]) != 0 {
		return "", nil // not ext, no journal, or one in an inode of its own
	}
	j := le.Uint32(sb[0xe4:]) // s_journal_dev, as the kernel encodes a dev_t (new_encode_dev)
	if j == 0 {
		return "", fmt.Errorf("whose external journal is not named by device")
	}
	return fmt.Sprintf("%d:%d", (j&0xfff00)>>8, (j&0xff)|((j>>12)&0xfff00)), nil
}

// openBlock opens the block device dev (major:minor) read-only, through
// its node in /dev, which must be that device.
func openBlock(dev string) (int, error) {
	name := devName(dev)
	if name == "" || strings.Contains(name, "..") {
		return -1, fmt.Errorf("the device %s has no name in /dev", dev)
	}
	fd, err := unix.Open("/dev/"+name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return -1, fmt.Errorf("/dev/%s: %w", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK || fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)) != dev {
		unix.Close(fd)
		return -1, fmt.Errorf("/dev/%s is not the device %s", name, dev)
	}
	return fd, nil
}

// devName is the block device dev's name in /dev, from sysfs; "" when
// it has none.
func devName(dev string) string {
	uevent, _ := mountinfo.ReadFile("/sys/dev/block/" + dev + "/uevent")
	for l := range strings.Lines(string(uevent)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "DEVNAME="); ok {
			return v
		}
	}
	return ""
}

// btrfsDevices are the devices of every btrfs (in /sys/fs/btrfs) that has
// one of devs among its own.
func btrfsDevices(devs []string) []string {
	var out []string
	fss, _ := filepath.Glob("/sys/fs/btrfs/*/devices")
	for _, fs := range fss {
		ents, _ := os.ReadDir(fs)
		var mine []string
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(fs, e.Name(), "dev")); err == nil {
				mine = append(mine, strings.TrimSpace(string(b)))
			}
		}
		if slices.ContainsFunc(mine, func(d string) bool { return slices.Contains(devs, d) }) {
			out = append(out, mine...)
		}
	}
	return out
}

// blockImages are the files behind the block devices devs (major:minor),
// as sysfs has them: a partition's disk, a device mapper target's or md
// array's members, and a loop device's backing file, followed through
// each in turn (a re-test: a loop device over another, whose image was in
// the workspace). A loop device's file counts only when the file at the
// path the kernel reports is the one it holds: the path is as typed when
// it was set up, and a lazy unmount or another mount namespace leaves it
// naming another file (a re-test); a loop device that cannot be checked
// so (LOOP_GET_STATUS64) is an error.
func blockImages(devs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var walk func(dev string, depth int) error
	walk = func(dev string, depth int) error {
		if seen[dev] || strings.ContainsAny(dev, "/.") || !strings.Contains(dev, ":") {
			return nil
		}
		seen[dev] = true
		if depth > 16 {
			return fmt.Errorf("whose block devices are stacked more than 16 deep")
		}
		dir := "/sys/dev/block/" + dev
		if _, err := os.Stat(dir); err != nil {
			return nil // not a block device: tmpfs, overlay, btrfs's own
		}
		// A device whose blocks a program serves (nbd, ublk) or the
		// network keeps (rbd, drbd) keeps them wherever that is: as
		// with FUSE, that cannot be told.
		name := devName(dev)
		for _, served := range []string{"nbd", "ublkb", "rbd", "drbd"} {
			if strings.HasPrefix(name, served) {
				return fmt.Errorf("on the device %s, whose blocks %s serves from wherever it keeps them", name, served)
			}
		}
		var next []string
		if _, err := os.Stat(dir + "/partition"); err == nil {
			next = append(next, readDev(dir+"/../dev")) // not Join: ".." is the kernel's to take, after the link
		}
		if b, err := mountinfo.ReadFile(dir + "/loop/backing_file"); err == nil {
			img := strings.TrimSuffix(string(b), "\n")
			st, err := loopFile(dev, img)
			if err != nil {
				return err
			}
			out = append(out, img)
			if st.Mode&unix.S_IFMT == unix.S_IFBLK {
				next = append(next, fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)))
			}
		}
		slaves, _ := os.ReadDir(dir + "/slaves")
		for _, sl := range slaves {
			next = append(next, readDev(dir+"/slaves/"+sl.Name()+"/dev"))
		}
		for _, d := range next {
			if err := walk(d, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range devs {
		if err := walk(d, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readDev(path string) string {
	b, _ := mountinfo.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// loopFile checks that img, the backing file sysfs names for the loop
// device dev, is the file the device holds (same device and inode), and
// returns its stat.
func loopFile(dev, img string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fail := func(why string) (unix.Stat_t, error) {
		return st, fmt.Errorf("on the loop device %s, whose file %q %s", dev, img, why)
	}
	fd, err := openBlock(dev)
	if err != nil {
		return fail(fmt.Sprintf("cannot be checked (%v)", err))
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return fail(fmt.Sprintf("cannot be checked (LOOP_GET_STATUS64: %v)", err))
	}
	if err := unix.Stat(img, &st); err != nil {
		return fail(fmt.Sprintf("is not there (%v)", err))
	}
	if st.Dev != info.Device || st.Ino != info.Inode {
		return fail("is not the file it holds (moved, or named in another mount namespace)")
	}
	return st, nil
}

// prepared is the plan and what the summary says about it.
type prepared struct {
	plan          *Plan
	notes         Notes
	prog          SeccompProgram
	listenCovered bool // listen() cannot open a port the policy does not grant
	err           error
}

// preparePlan builds the plan and compiles its seccomp filter.
func preparePlan(o LaunchOptions, h Host, id IdentityPlan, cwd string) prepared {
	req := Request{Policy: o.Policy, Argv: o.Argv, Environ: os.Environ(), Cwd: cwd, ReadOnly: o.ReadOnly, Mask: o.Mask}
	if o.Beside != nil {
		req.ExtraEnv = o.Beside.AgentEnv()
		req.ProxyPort = o.Beside.ProxyPort()
	}
	plan, notes, err := BuildPlan(req, h, id)
	if err != nil {
		return prepared{err: err}
	}
	// Root sets vm.memfd_noexec=2 in the agent's pid namespace (Linux 6.3+),
	// so memfds are sealed non-executable by the kernel; otherwise seccomp
	// refuses every memfd that is not sealed so (fileless execution).
	_, err = os.Stat("/proc/sys/vm/memfd_noexec")
	plan.Mounts.Memfd = h.Root && err == nil
	spec := SeccompSpec{
		AllowUnixSockets: o.Policy.Network.UnixSockets,
		DenyInet:         o.Policy.Network.Mode == policy.NetNone && !plan.NewNet,
		// listen() on an unbound socket binds an ephemeral port with no
		// Landlock hook: refused when the policy allows no bind (and
		// Unix sockets, which also listen, are off).
		DenyListen:        o.Policy.Network.Mode == policy.NetPorts && len(o.Policy.Network.BindTCP) == 0 && !o.Policy.Network.UnixSockets,
		MemfdNoexecSysctl: plan.Mounts.Memfd,
	}
	tty, _ := ownTerminal(o.Stdin, o.Stdout, o.Stderr)
	spec.DenyGroupKill = groupKillReaches(h, tty >= 0)
	spec.DenyGroupCont = groupContReaches(h, tty >= 0)
	prog, err := BuildSeccomp(spec)
	if err != nil {
		return prepared{err: fmt.Errorf("seccomp: %w", err)}
	}
	plan.Seccomp = prog.Marshal()
	// listen() is covered when seccomp refuses it, or when the policy
	// allows binding anyway.
	return prepared{plan: plan, notes: notes, prog: prog, listenCovered: spec.DenyListen || len(o.Policy.Network.BindTCP) > 0}
}

// listedTerminal refuses files lists that reach a terminal of the
// person's in dev (the host's /dev, which the sandbox shows read-only):
// a pseudo-terminal in dev/pts, or a virtual console (dev/tty1, whose
// owner is who logged in there), that the agent's uid, the person's own
// when unprivileged, may read. Giving up the controlling terminal
// (SR-52) kept /dev/tty from the agent, but with /dev, /dev/pts or /
// listed for reading it opened the person's terminal by its path, on or
// off a terminal of its own, and read what was typed to the shell (a
// re-test). As root the agent's throwaway uid reads no one's terminal,
// and stage 1 does not call this.
func listedTerminal(p *policy.Policy, dev string, uid int) error {
	lists := slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec)
	// Most policies list single devices (/dev/null, /dev/urandom): then
	// no list reaches a terminal, and dev is not read on every launch.
	if !slices.ContainsFunc(lists, func(l policy.Path) bool {
		return l.Contains(policy.Path(dev+"/pts/x")) || l.Contains(policy.Path(dev+"/ttyx")) ||
			strings.HasPrefix(string(l), dev+"/pts/") || strings.HasPrefix(string(l), dev+"/tty")
	}) {
		return nil
	}
	var names []string
	if ents, err := os.ReadDir(filepath.Join(dev, "pts")); err == nil {
		for _, e := range ents {
			if e.Name() != "ptmx" {
				names = append(names, filepath.Join(dev, "pts", e.Name()))
			}
		}
	}
	if ents, err := os.ReadDir(dev); err == nil {
		for _, e := range ents {
			// /dev/tty itself opens the caller's controlling terminal,
			// which the agent does not have (drop_controlling_terminal)
			// or which is its own.
			if strings.HasPrefix(e.Name(), "tty") && e.Name() != "tty" {
				names = append(names, filepath.Join(dev, e.Name()))
			}
		}
	}
	for _, name := range names {
		var st unix.Stat_t
		if unix.Stat(name, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue
		}
		if int(st.Uid) != uid && st.Mode&0o004 == 0 {
			continue // not readable by the agent's uid
		}
		for _, l := range lists {
			if l.Contains(policy.Path(name)) {
				return &RefusedError{Boundary: "terminal", Detail: fmt.Sprintf("files lists %s, which holds %s, a terminal the agent's uid may read: it could read what is typed there (SR-52)", l, name),
					Hint: "list only the devices the agent needs (/dev/null, /dev/urandom, /dev/tty), not " + string(l) + " whole"}
			}
		}
	}
	return nil
}

// groupKillReaches reports whether the agent's kill(0) would reach the
// launcher's process group: off a terminal of its own (ownTTY false) the
// agent shares it, and as the person's uid it may signal every member,
// where no Landlock signal scoping keeps its signals in its domain. As
// root the agent's uid is a throwaway one, which may signal none of them.
func groupKillReaches(h Host, ownTTY bool) bool {
	return !h.Root && !ownTTY && !h.Landlock.enforced(LandlockScopeSignal)
}

// groupContReaches reports whether the agent's kill(0, SIGCONT) would
// reach the launcher's process group where nothing else of kill(0) does:
// as root, off a terminal of its own, the agent's throwaway uid shares
// the launcher's group and session, and the kernel lets SIGCONT through
// to any process of the caller's session whatever its uid (a re-test: a
// stopped process of the launcher's group ran again).
func groupContReaches(h Host, ownTTY bool) bool {
	return h.Root && !ownTTY && !h.Landlock.enforced(LandlockScopeSignal)
}

func refusals(as []Assessment) error {
	var msgs, hints []string
	for _, a := range as {
		if a.Verdict == Refused {
			msgs = append(msgs, a.Boundary+": "+a.Detail)
			if a.Hint != "" && !slices.Contains(hints, a.Hint) { // boundaries share hints (user namespaces)
				hints = append(hints, a.Hint)
			}
		}
	}
	if msgs == nil {
		return nil
	}
	return &RefusedError{Boundary: "host", Detail: strings.Join(msgs, "; "), Hint: strings.Join(hints, "; ")}
}

// idLockDir holds one lock file per throwaway id in use. A launch holds
// an exclusive flock on its id's file for its whole life, so two sessions
// never share an id; the kernel drops the lock when the launcher dies,
// however it dies.
const idLockDir = "/run/pinfold/ids"

// sweepStaleIDLocks removes the lock files of launchers that died without
// releasing them (SIGKILL runs no cleanup): a file whose lock can be taken
// has no holder. Removing it under the lock is what idLock.Close does, so
// a launcher that opened the file just before sees it gone and picks
// another id.
func sweepStaleIDLocks() {
	ents, err := os.ReadDir(idLockDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		path := filepath.Join(idLockDir, e.Name())
		f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && fileID(f) == pathID(path) {
			os.Remove(path)
		}
		f.Close()
	}
}

// ClaimThrowawayID claims a throwaway uid for a process of a session
// other than the agent (a component): see claimThrowawayID. Close
// releases it, once the process is gone.
func ClaimThrowawayID() (int, io.Closer, error) {
	id, lock, err := claimThrowawayID()
	if err != nil {
		return 0, nil, err
	}
	return id, lock, nil
}

// claimThrowawayID returns a uid (used as the gid too) in the documented
// throwaway range [throwawayBase, throwawayBase+throwawaySpan) that no
// account or group names and no other pinfold session holds, and the lock
// that holds it.
func claimThrowawayID() (int, *idLock, error) {
	if err := os.MkdirAll(idLockDir, 0o700); err != nil {
		return 0, nil, fmt.Errorf("throwaway uid: %w", err)
	}
	sweepStaleIDLocks()
	return claimIDFrom(randomThrowawayID, takenIDs(hostIDSources))
}

// randomThrowawayID is an id drawn at random from the throwaway range.
func randomThrowawayID() (int, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return throwawayBase + int(binary.LittleEndian.Uint32(b[:])%throwawaySpan), nil
}

// claimIDFrom tries up to 64 ids from next: it skips those taken says
// the host has given out, and claims the first no other session holds.
func claimIDFrom(next func() (int, error), taken func(int) bool) (int, *idLock, error) {
	for range 64 {
		id, err := next()
		if err != nil {
			return 0, nil, err
		}
		if taken(id) {
			continue
		}
		path := fmt.Sprintf("%s/%d", idLockDir, id)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return 0, nil, fmt.Errorf("throwaway uid: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue // another session holds it
		}
		// The holder before us may have removed the file after we opened
		// it (see idLock.Close): then our lock is on a file nobody else
		// will ever open, and the id is not ours.
		if held, now := fileID(f), pathID(path); held != now {
			f.Close()
			continue
		}
		return id, &idLock{f}, nil
	}
	return 0, nil, errors.New("throwaway uid: no free id found in 64 tries")
}

// idLock holds a throwaway id. Close removes the lock file while it still
// holds the lock, so the directory does not grow with every launch.
type idLock struct{ f *os.File }

func (l *idLock) Close() error {
	os.Remove(l.f.Name())
	return l.f.Close()
}

func fileID(f *os.File) [2]uint64 {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) != nil {
		return [2]uint64{}
	}
	return [2]uint64{st.Dev, st.Ino}
}

func pathID(path string) [2]uint64 {
	if id, ok := FileID(path); ok {
		return id
	}
	return [2]uint64{1} // gone: never equal to a held file's id
}

// FileID is path's device and inode, not following a final link; false
// when it cannot be looked at.
func FileID(path string) ([2]uint64, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return [2]uint64{}, false
	}
	return [2]uint64{st.Dev, st.Ino}, true
}

// idSources are the files that give out ids on a host: accounts, groups,
// and the ranges delegated to users for their containers.
type idSources struct{ passwd, group, subuid, subgid string }

var hostIDSources = idSources{"/etc/passwd", "/etc/group", "/etc/subuid", "/etc/subgid"}

// takenIDs reads files once and reports whether an id is given out: a uid
// or gid that passwd or group names, or an id in a range subuid or subgid
// delegates to some user.
func takenIDs(files idSources) func(int) bool {
	named := map[int]bool{}
	for _, e := range slices.Concat(userdb.Read(files.passwd), userdb.Read(files.group)) {
		if n, err := strconv.Atoi(e.Field(2)); err == nil && len(e) > 2 {
			named[n] = true
		}
	}
	var ranges [][2]int // [start, start+count)
	for _, f := range []string{files.subuid, files.subgid} {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Split(line, ":")
			if len(fields) != 3 {
				continue
			}
			start, err1 := strconv.Atoi(fields[1])
			n, err2 := strconv.Atoi(fields[2])
			if err1 == nil && err2 == nil {
				ranges = append(ranges, [2]int{start, start + n})
			}
		}
	}
	return func(id int) bool {
		return named[id] || slices.ContainsFunc(ranges, func(r [2]int) bool { return id >= r[0] && id < r[1] })
	}
}
