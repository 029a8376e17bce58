package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// In wrapper mode the agent may write its whole workspace, but not what
// the person's own programs run from it, unconfined, when they next use
// it: a repository's hooks and config (git status runs what
// core.fsmonitor names), a nested repository's, editor configuration.
// Those that exist are mounted read-only
// over the write paths, and the directories above them pinned, so they
// cannot be moved aside and made again. The agent still uses the
// repository (the rest of .git stays writable). Each refusal has its
// unconfined control; as root and unprivileged.
func TestIntegrationProtectedReadOnly(t *testing.T) {
	asRootAndUnprivileged(t, func(t *testing.T, s *itSandbox) {
		s.mkdirs(t, ".git/hooks", ".git/objects", "sub/.git/hooks", ".vscode", "docs")
		config := s.file(t, filepath.Join(s.ws, ".git/config"), "[core]\n")
		notes := s.file(t, filepath.Join(s.ws, "docs/notes.md"), "notes\n")
		pol := itPol{}

		hook := filepath.Join(s.ws, ".git/hooks/pre-commit")
		s.denied(t, pol, itOpts{}, "EROFS", "write", hook)
		os.Remove(hook) // the control made it
		s.denied(t, pol, itOpts{}, "EROFS", "write", config)
		s.denied(t, pol, itOpts{}, "EROFS", "write", filepath.Join(s.ws, "sub/.git/hooks/post-checkout"))
		os.Remove(filepath.Join(s.ws, "sub/.git/hooks/post-checkout"))
		s.denied(t, pol, itOpts{}, "EROFS", "write", filepath.Join(s.ws, ".vscode/tasks.json"))
		os.Remove(filepath.Join(s.ws, ".vscode/tasks.json"))

		// The repository cannot be moved aside and made again around
		// the read-only paths: .git is pinned in place.
		old := filepath.Join(s.ws, ".git-old")
		s.denied(t, pol, itOpts{}, "EBUSY", "rename", filepath.Join(s.ws, ".git"), old)
		if err := os.Rename(old, filepath.Join(s.ws, ".git")); err != nil {
			t.Fatal(err)
		}

		// What git writes as it works stays writable, and so does the
		// rest of the workspace.
		s.allowed(t, pol, itOpts{}, "write", filepath.Join(s.ws, ".git/objects/made"))
		s.allowed(t, pol, itOpts{}, "write", notes)

		// Said in the summary line: .git/config, .git/hooks,
		// sub/.git/hooks and .vscode.
		if r := s.launch(t, pol, itOpts{verbose: true}, "noop"); r.code != 0 || !strings.Contains(r.stderr, ", 4 protected paths read-only") {
			t.Errorf("the launch does not say what is read-only: %s", r)
		}
	})
}

// asRootAndUnprivileged runs f in a sandbox of its own as root and as
// nobody (where the kernel gives unprivileged users namespaces).
func asRootAndUnprivileged(t *testing.T, f func(t *testing.T, s *itSandbox)) {
	t.Run("root", func(t *testing.T) { f(t, newSandbox(t)) })
	t.Run("unprivileged", func(t *testing.T) { f(t, newUnprivSandbox(t, nobody)) })
}

// mkdirs makes the directories rel (relative to the workspace) and those
// above them, the sandbox owner's.
func (s *itSandbox) mkdirs(t *testing.T, rel ...string) {
	t.Helper()
	for _, r := range rel {
		d := filepath.Join(s.ws, r)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for p := d; p != s.ws; p = filepath.Dir(p) {
			if err := os.Chown(p, s.uid, s.uid); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// What a repository's config names in the workspace is run by the
// person's git as its hooks are: core.hooksPath = .githooks (git commit
// runs .githooks/pre-commit) and core.fsmonitor = tools/fsmon.sh (git
// status runs it). Both are mounted read-only like the repository's own
// hooks, the rest of tools staying writable; each refusal has its
// unconfined control; as root and unprivileged. Where .githooks does
// not exist yet, the launch says so, and names it when the agent made it.
func TestIntegrationProtectedGitConfigNamed(t *testing.T) {
	asRootAndUnprivileged(t, func(t *testing.T, s *itSandbox) {
		s.mkdirs(t, ".git/hooks", ".githooks", "tools")
		s.file(t, filepath.Join(s.ws, ".git/config"), "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n")
		fsmon := s.file(t, filepath.Join(s.ws, "tools/fsmon.sh"), "#!/bin/sh\n")
		pol := itPol{}

		hook := filepath.Join(s.ws, ".githooks/pre-commit")
		s.denied(t, pol, itOpts{}, "EROFS", "write", hook)
		os.Remove(hook) // the control made it
		s.denied(t, pol, itOpts{}, "EROFS", "write", fsmon)
		s.allowed(t, pol, itOpts{}, "write", filepath.Join(s.ws, "tools/other"))
		s.allowed(t, pol, itOpts{}, "write", filepath.Join(s.ws, "notes.md"))
		// .git/config, .git/hooks, .githooks and tools/fsmon.sh.
		if r := s.launch(t, pol, itOpts{verbose: true}, "noop"); r.code != 0 || !strings.Contains(r.stderr, ", 4 protected paths read-only") {
			t.Errorf("the launch does not count what the config names: %s", r)
		}
		// A hooks directory the config names that does not exist yet is
		// said before the agent starts, and named when the agent made it.
		if err := os.Remove(filepath.Join(s.ws, ".githooks")); err != nil {
			t.Fatal(err)
		}
		r := s.launch(t, pol, itOpts{verbose: true}, "write", filepath.Join(s.ws, ".githooks"))
		if r.stdout != "ok\n" || !strings.Contains(r.stderr, "core.hooksPath in "+s.ws+"/.git/config names "+s.ws+"/.githooks, which does not exist: the agent may make it") ||
			!strings.Contains(r.stderr, "launcher: warning: the agent made "+s.ws+"/.githooks, which your own programs run") {
			t.Errorf("a hooks directory the agent may make, and made, is not said: %s", r)
		}
	})
}

// What a config names is read as git reads it: a hooksPath ending in a
// lone CR (git's blank), a remote's uploadpack (git fetch runs it from a
// path remote), and a program named through the person's own link
// outside the write paths are each mounted read-only, a file beside
// them staying writable. Before, each stayed writable and git ran what
// the agent wrote there.
func TestIntegrationProtectedGitConfigAsGitReads(t *testing.T) {
	s := newSandbox(t)
	s.mkdirs(t, ".git/hooks", ".githooks", "tools")
	if err := os.Symlink(filepath.Join(s.ws, "tools"), filepath.Join(s.outside, "tools")); err != nil {
		t.Fatal(err)
	}
	s.file(t, filepath.Join(s.ws, ".git/config"), "[core]\n\thooksPath = .githooks\r\r\n\tfsmonitor = "+s.outside+"/tools/fsmon\n"+
		"[remote \"origin\"]\n\turl = ../up\n\tuploadpack = ./tools/up\n")
	pol := itPol{}
	for _, f := range []string{".githooks/pre-commit", "tools/up", "tools/fsmon"} {
		p := s.file(t, filepath.Join(s.ws, f), "#!/bin/sh\n")
		s.denied(t, pol, itOpts{}, "EROFS", "write", p)
	}
	s.allowed(t, pol, itOpts{}, "write", filepath.Join(s.ws, "tools/other"))
}

// A program git runs past a value's first word (git 2.39 runs each:
// core.fsmonitor = sh .githooks/mon.sh, core.sshCommand = env tools/ssh,
// core.pager = "cat; tools/evil", core.editor = vi $(tools/x), an
// alias's !bash scripts/x.sh, an alias's rebase --exec tools/r and
// !sh "~/q", which runs the working tree's ~/q) is read-only for the
// agent, as a value's first word is; a file no value names stays
// writable.
func TestIntegrationProtectedGitConfigPastFirstWord(t *testing.T) {
	s := newSandbox(t)
	s.mkdirs(t, ".git/hooks", ".githooks", "tools", "scripts", "~")
	s.file(t, filepath.Join(s.ws, ".git/config"), "[core]\n\tfsmonitor = sh .githooks/mon.sh\n\tsshCommand = env tools/ssh\n"+
		"\tpager = \"cat; tools/evil\"\n\teditor = vi $(tools/x)\n[alias]\n\tx = !bash scripts/x.sh\n\tr = rebase --exec tools/r\n\tq = !sh \\\"~/q\\\"\n")
	pol := itPol{}
	for _, f := range []string{".githooks/mon.sh", "tools/ssh", "tools/evil", "tools/x", "scripts/x.sh", "tools/r", "~/q"} {
		p := s.file(t, filepath.Join(s.ws, f), "#!/bin/sh\n")
		s.denied(t, pol, itOpts{}, "EROFS", "write", p)
	}
	s.allowed(t, pol, itOpts{}, "write", filepath.Join(s.ws, "tools/other"))
}

// What cannot be made read-only is said on every run: a symbolic link at
// a protected name (nothing can be mounted over a link, and the tree it
// leads to stays writable).
func TestIntegrationProtectedUncoveredSaid(t *testing.T) {
	s := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(s.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.ws, "tools/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tools/hooks", filepath.Join(s.ws, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	r := s.launch(t, itPol{}, itOpts{verbose: true}, "noop")
	if r.code != 0 || !strings.Contains(r.stderr, "uncovered: ") || !strings.Contains(r.stderr, "/.git/hooks (a symbolic link at a protected name") {
		t.Errorf("the uncovered hooks link is not said: %s", r)
	}
}

// A protected path the agent makes is not covered (SD-27), so the launch
// says it when the agent ends, --quiet or not: here the agent's own
// .mcp.json, whose servers the person's next agent would start.
func TestIntegrationProtectedMadeSaid(t *testing.T) {
	s := newSandbox(t)
	made := filepath.Join(s.ws, ".mcp.json")
	r := s.launch(t, itPol{}, itOpts{}, "write", made)
	if r.stdout != "ok\n" || !strings.Contains(r.stderr, "launcher: warning: the agent made "+made+", which your own programs run") {
		t.Errorf("what the agent made is not said: %s", r)
	}
	os.Remove(made)
	if r := s.launch(t, itPol{}, itOpts{}, "write", filepath.Join(s.ws, "notes.md")); r.stdout != "ok\n" || r.stderr != "" {
		t.Errorf("an ordinary file is said: %s", r)
	}
}

// The names in the write paths are the agent's: a directory named
// "a\r\x1b[2K\x1b[8m" erased the start of the warning that named what it
// made there and hid the rest of it on the person's terminal (after the
// relay's own reset, which the agent's output cannot reach past). The
// launcher writes such characters as escapes.
func TestIntegrationProtectedMadeSaidEscaped(t *testing.T) {
	s := newSandbox(t)
	dir := filepath.Join(s.ws, "a\r\x1b[2K\x1b[8m\u202e")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := s.launch(t, itPol{}, itOpts{}, "write", filepath.Join(dir, ".mcp.json"))
	want := "launcher: warning: the agent made " + s.ws + `/a\r\x1b[2K\x1b[8m\u202e/.mcp.json, which your own programs run`
	if r.stdout != "ok\n" || !strings.Contains(r.stderr, want) || strings.ContainsAny(r.stderr, "\r\x1b\u202e") {
		t.Errorf("what the agent made is not said with its controls escaped (want %q): %s", want, r)
	}
	// What a previous agent left that the next launch cannot cover is
	// said at its start, in the summary and in --quiet's warning alike.
	if err := syscall.Mkfifo(filepath.Join(dir, ".vscode"), 0o644); err != nil {
		t.Fatal(err)
	}
	want = s.ws + `/a\r\x1b[2K\x1b[8m\u202e/.vscode (a FIFO or socket at a protected name`
	for _, o := range []itOpts{{verbose: true}, {}} {
		r := s.launch(t, itPol{}, o, "noop")
		if r.code != 0 || !strings.Contains(r.stderr, want) || strings.ContainsAny(r.stderr, "\r\x1b\u202e") {
			t.Errorf("what cannot be covered is not said with its controls escaped (verbose %v, want %q): %s", o.verbose, want, r)
		}
	}
}

// The agent shapes the tree the end-of-launch walk looks through: past
// the walk's bound (more names than fs.MaxProtectedWalk in the workspace
// itself, read before any directory beneath it) what it made is not
// found, so that the walk did not look through it all is said instead
// of nothing. The control: the same name made without the padding is
// named.
func TestIntegrationProtectedMadeUnseenSaid(t *testing.T) {
	s := newSandbox(t)
	sub := filepath.Join(s.ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(sub, ".mcp.json")
	if r := s.launch(t, itPol{}, itOpts{}, "write", made); r.stdout != "ok\n" || !strings.Contains(r.stderr, "launcher: warning: the agent made "+made+", which your own programs run") {
		t.Fatalf("control: what the agent made is not said: %s", r)
	}
	os.Remove(made)
	r := s.launch(t, itPol{}, itOpts{}, "fill", s.ws, "200001", made)
	if r.stdout != "ok\n" {
		t.Fatalf("the probe did not fill the workspace: %s", r)
	}
	if !strings.Contains(r.stderr, "launcher: warning: what the agent made was not all looked for (") ||
		!strings.Contains(r.stderr, "more than 200000 entries") {
		t.Errorf("what the walk did not look through is not said: %s", r)
	}
}

// A FIFO a previous agent made at a protected name (named when it ended)
// holds the name: nothing is mounted over it, and a .vscode directory the
// next agent puts in its place is not new to the end-of-launch walk. So
// the launch says it as uncovered rather than count it as nothing.
func TestIntegrationProtectedFifoSaid(t *testing.T) {
	s := newSandbox(t)
	if err := syscall.Mkfifo(filepath.Join(s.ws, ".vscode"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := s.launch(t, itPol{}, itOpts{verbose: true}, "noop")
	if r.code != 0 || !strings.Contains(r.stderr, "uncovered: ") || !strings.Contains(r.stderr, "/.vscode (a FIFO or socket at a protected name") {
		t.Errorf("the FIFO at .vscode is not said: %s", r)
	}
}

// --quiet drops the summary line, not what could not be made read-only:
// the agent may rewrite it, and the person's programs run it.
func TestIntegrationProtectedUncoveredQuiet(t *testing.T) {
	s := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(s.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tools/hooks", filepath.Join(s.ws, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	r := s.launch(t, itPol{}, itOpts{}, "noop")
	if r.code != 0 || !strings.Contains(r.stderr, "launcher: warning: not read-only for the agent") || !strings.Contains(r.stderr, "/.git/hooks (a symbolic link at a protected name") {
		t.Errorf("--quiet hides the uncovered hooks link: %s", r)
	}
	// Nothing uncovered: --quiet stays quiet.
	os.Remove(filepath.Join(s.ws, ".git/hooks"))
	if r := s.launch(t, itPol{}, itOpts{}, "noop"); r.code != 0 || r.stderr != "" {
		t.Errorf("a quiet launch with all covered says something: %s", r)
	}
}

// A previous agent's decoys do not push the workspace's own repository
// past the mounts one launch makes: 128 directories holding a .vscode,
// as deep as .git/hooks and sorting before it by name, took every mount
// (each with its pinned directory) and left .git/hooks writable.
func TestIntegrationProtectedDecoys(t *testing.T) {
	s := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(s.ws, ".git/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range MaxReadOnly / 2 {
		if err := os.MkdirAll(filepath.Join(s.ws, fmt.Sprintf("!%03d/.vscode", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook := filepath.Join(s.ws, ".git/hooks/pre-commit")
	s.denied(t, itPol{}, itOpts{}, "EROFS", "write", hook)
}

// What the agent made is said however the launch ends: here net, the
// proxy beside a wrapper-mode agent, exits mid-run, which kills the
// agent and ends the launch with an error. The .mcp.json made while it
// ran (by the test, as the agent would) is said all the same.
func TestIntegrationProtectedMadeSaidOnError(t *testing.T) {
	s := newSandbox(t)
	made := filepath.Join(s.ws, ".mcp.json")
	killed := make(chan string, 1)
	o := itOpts{onStart: func(launcher int) {
		go func() {
			time.Sleep(2 * time.Second) // the agent is running
			if err := os.WriteFile(made, []byte("{}\n"), 0o644); err != nil {
				killed <- err.Error()
				return
			}
			killed <- killNet(launcher)
		}()
	}}
	r := s.launch(t, itPol{network: "proxy", netExtra: "block_all = false\n"}, o, "sleep", "20")
	if why := <-killed; why != "" {
		t.Fatalf("net was not killed: %s (%s)", why, r)
	}
	if !strings.Contains(r.stderr, "component net exited") {
		t.Fatalf("the launch did not end by net's exit: %s", r)
	}
	if !strings.Contains(r.stderr, "launcher: warning: the agent made "+made+", which your own programs run") {
		t.Errorf("what the agent made is not said when the launch ends in an error: %s", r)
	}
}

// killNet kills the launcher's net component (its child running
// `launcher __pinfold_component net`); "" when it did.
func killNet(launcher int) string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return err.Error()
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.HasSuffix(string(cmdline), "\x00__pinfold_component\x00net\x00") {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil || !strings.Contains(string(status), fmt.Sprintf("\nPPid:\t%d\n", launcher)) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err.Error()
		}
		return ""
	}
	return "no net component beside launcher " + strconv.Itoa(launcher)
}

// A hook that is a link to a file of the project (tools/pre-commit, a
// common way to share hooks) runs what that file holds: it is mounted
// read-only with the hooks, or the summary's "read-only" hooks would run
// what the agent wrote. The rest of tools stays writable.
func TestIntegrationProtectedHookLinkTarget(t *testing.T) {
	s := newSandbox(t)
	for _, d := range []string{".git/hooks", "tools"} {
		if err := os.MkdirAll(filepath.Join(s.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := s.file(t, filepath.Join(s.ws, "tools/pre-commit"), "#!/bin/sh\nexit 0\n")
	if err := os.Symlink("../../tools/pre-commit", filepath.Join(s.ws, ".git/hooks/pre-commit")); err != nil {
		t.Fatal(err)
	}
	s.denied(t, itPol{}, itOpts{}, "EROFS", "write", target)
	s.allowed(t, itPol{}, itOpts{}, "write", filepath.Join(s.ws, "tools/other"))
	if r := s.launch(t, itPol{}, itOpts{verbose: true}, "noop"); r.code != 0 || !strings.Contains(r.stderr, ", 2 protected paths read-only") {
		t.Errorf("the hook's target is not counted: %s", r)
	}
}
