package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellPol is a components-mode policy whose [commands] leaves touch to
// the person, with a short timeout and a small output cap.
func shellPol() itPol {
	p := componentsPol()
	p.extra = "[commands]\napproval = [\"touch\"]\ntimeout = \"3s\"\noutput = \"1KiB\"\n"
	return p
}

// launcher sh: an automatic command runs in a confined worker in the
// workspace (what it writes belongs to the workspace's owner), with its
// output and exit status returned; the worker cannot write a protected
// path even when the person's modes would let anyone (a read-only mount,
// whatever the analyzer saw), cannot reach the agent's listeners (no
// network), is killed at the timeout and has its output cut at the cap;
// a command that needs approval, with no terminal to ask on, is denied
// and does not run.
func TestIntegrationComponentsShell(t *testing.T) {
	s := newSandbox(t)
	const owner = 4243
	must(t, os.Chown(s.ws, owner, owner))
	hooks := filepath.Join(s.ws, ".git", "hooks")
	must(t, os.MkdirAll(hooks, 0o777))
	hook := s.file(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\n")
	control := filepath.Join(s.ws, "open")
	must(t, os.Mkdir(control, 0o777))
	controlFile := s.file(t, filepath.Join(control, "file"), "#!/bin/sh\n")
	for _, p := range []string{filepath.Join(s.ws, ".git"), hooks, control} {
		must(t, os.Chmod(p, 0o777))
	}
	for _, p := range []string{filepath.Join(s.ws, ".git"), hooks, hook, control, controlFile} {
		must(t, os.Chown(p, owner, owner))
	}
	must(t, os.Chmod(hook, 0o666))
	must(t, os.Chmod(controlFile, 0o666))
	l := itEnv.launcher
	// Neither command names the path it writes (awk puts it together, so
	// the analyzer lets both run): only the worker's mounts tell them
	// apart. Both files are the owner's and writable by all.
	awk := func(dir, file, label string) string {
		return l + ` sh 'awk "BEGIN { f = \"` + dir[:2] + `\" \"` + dir[2:] + `/` + file + `\"; printf \"x\\n\" >> f; close(f) }"; echo ` + label + `=$?'; echo sh=$?`
	}
	script := strings.Join([]string{
		l + ` sh 'echo out; echo err >&2; pwd; echo made > made.txt; exit 3'; echo sh=$?`,
		awk(".git/hooks", "pre-commit", "hook"),
		awk("open", "file", "control"),
		l + ` sh 'exec 3<>/dev/tcp/127.0.0.1/7401 && echo REACHED-FS'; echo net=$?`,
		// Moving the repository aside (to make a new .git with a writable
		// config) fails: every directory above a read-only path is a
		// mount point, which cannot be renamed (perl dies with EBUSY, 16).
		l + ` sh 'perl -e "rename(q(.g).q(it), q(old)) or die qq(rename: \$!\n)"; echo mv=$?'; echo sh=$?`,
		// Protected paths the command makes were writable to it (there
		// was nothing to mount read-only): they are removed after it, and
		// the agent is told. A .git/commondir would have the person's
		// next git read its configuration (core.fsmonitor runs a command)
		// from a directory the agent writes; a link there counts too.
		l + ` sh 'perl -e "mkdir(q(.vs).q(code)) or die"'; echo made=$?`,
		l + ` sh 'perl -e "open(F, q(>), q(.gi).q(t/commondir)) or die; print F q(../x)"; perl -e "mkdir(q(sub)); symlink(q(../y), q(sub/.gi).q(t)) or die"; echo kept > kept.txt'; echo commondir=$?`,
		l + ` sh 'sleep 20'; echo timeout=$?`,
		l + ` sh 'yes | head -c 5000'; echo cap=$?`,
		l + ` sh 'touch approved.txt'; echo touch=$?`,
		"true",
	}, "\n")
	r := s.agentSh(t, shellPol(), itOpts{}, script)
	if r.code != 0 {
		t.Fatalf("session: %s", r)
	}
	for _, want := range []string{"out\n" + s.ws + "\nsh=3\n", "sh=0\n", "control=0\n", "net=1\n", "mv=16\n", "made=0\n", "commondir=0\n", "timeout=118\n", "touch=119\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, r)
		}
	}
	if !strings.Contains(r.stdout, "hook=2\n") || !strings.Contains(r.stderr, "Read-only file system") {
		t.Errorf("the worker wrote the hook, or failed for another reason: %s", r)
	}
	if strings.Contains(r.stdout, "REACHED-FS") {
		t.Errorf("the worker reached the agent's fs listener: %s", r)
	}
	if b, _ := os.ReadFile(hook); string(b) != "#!/bin/sh\n" {
		t.Errorf("the hook changed: %q", b)
	}
	if b, _ := os.ReadFile(controlFile); string(b) != "#!/bin/sh\nx\n" {
		t.Errorf("the control was not written: %q", b)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(s.ws, "made.txt"), &st); err != nil || st.Uid != owner {
		t.Errorf("made.txt: %v, owner %d (want %d)", err, st.Uid, owner)
	}
	if ys := strings.Count(r.stdout, "y\n"); ys != 512 || !strings.Contains(r.stderr, "output was cut") {
		t.Errorf("output cap (1 KiB): %d lines of y; %s", ys, r.stderr)
	}
	for _, want := range []string{"err\n", "rename: Device or resource busy", "killed at the policy's commands.timeout", "rule bash.declined", "commands.approval[0]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
	}
	for _, made := range []string{".vscode", ".git/commondir", "sub/.git"} {
		if want := "the protected path " + filepath.Join(s.ws, made) + " appeared or changed while the command ran: moved aside"; !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
		if _, err := os.Lstat(filepath.Join(s.ws, made)); err == nil {
			t.Errorf("%s, made by a command, is still there", made)
		}
		if held, _ := filepath.Glob(filepath.Join(s.ws, made) + ".pinfold-held-*"); len(held) != 1 {
			t.Errorf("%s was not moved aside: %q", made, held)
		}
	}
	mustExist(t, filepath.Join(s.ws, "kept.txt")) // the control: what is not protected stays
	mustExist(t, hook)
	mustNotExist(t, filepath.Join(s.ws, "approved.txt"), "a command needing approval ran without it")
	mustNotExist(t, filepath.Join(s.ws, "old"), "the repository was moved aside")
}

// What is moved aside after a command is only what is new at a protected
// name: a repository the agent moves through fs while a command runs
// keeps its config, hooks and .vscode. A .git/config the person replaces
// while a command runs (as git config does, by rename) is new too: it is
// moved aside, not lost. A command that leaves a tree the walk cannot
// look through still has its .git/commondir (a FIFO here) moved aside,
// and commands are then off for the session.
func TestIntegrationComponentsShellRemovesOnlyNew(t *testing.T) {
	s := newSandbox(t)
	for _, f := range []string{"proj/.git/config", "proj/.git/hooks/pre-commit", "proj/.vscode/settings.json"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(s.ws, f)), 0o755))
		s.file(t, filepath.Join(s.ws, f), "mine\n")
	}
	must(t, os.MkdirAll(filepath.Join(s.ws, ".git"), 0o755))
	cfg := s.file(t, filepath.Join(s.ws, ".git/config"), "old\n")
	l := itEnv.launcher
	// The person's git config, in the middle of the first command (its
	// sleep 2.31 is running).
	go func() {
		for i := 0; i < 200; i++ {
			if sleeping() {
				tmp := cfg + ".lock"
				os.WriteFile(tmp, []byte("the person's\n"), 0o644)
				os.Rename(tmp, cfg)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	script := strings.Join([]string{
		l + ` sh 'sleep 2.31' & sleep 1; ` + l + ` fs mv proj proj2; echo mv=$?; wait; ` + l + ` fs mv proj2 proj; echo back=$?`,
		l + ` sh 'perl -e "use POSIX; mkfifo(q(.gi).q(t/commondir), 0644) or die; for (1..2100) { mkdir q(d) or die; chdir q(d) or die }"'; echo deep=$?`,
		l + ` sh 'echo next'; echo next=$?`,
	}, "\n")
	r := s.agentSh(t, shellPol(), itOpts{}, script)
	for _, want := range []string{"mv=0\n", "back=0\n", "deep=125\n", "next=125\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s", want, r)
		}
	}
	for _, f := range []string{"proj/.git/config", "proj/.git/hooks/pre-commit", "proj/.vscode/settings.json"} {
		if b, err := os.ReadFile(filepath.Join(s.ws, f)); err != nil || string(b) != "mine\n" {
			t.Errorf("%s after the move and back: %q, %v", f, b, err)
		}
	}
	// Only what was moved aside or found new is looked at: fs has the
	// configs read again once the person's edit is seen (the watch),
	// perhaps while the repository is at proj2, whose config ("mine",
	// no git config) is then said not read, truly.
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "proj2") && !strings.HasPrefix(line, "launcher: warning: not covered: ") {
			t.Errorf("the moved repository was taken for new: %s", r)
		}
	}
	held, _ := filepath.Glob(cfg + ".pinfold-held-*")
	if len(held) != 1 {
		t.Fatalf("the config replaced during the command was not moved aside: %q; %s", held, r)
	}
	if b, err := os.ReadFile(held[0]); err != nil || string(b) != "the person's\n" {
		t.Errorf("what was moved aside: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(s.ws, ".git/commondir")); err == nil {
		t.Errorf(".git/commondir (a FIFO the command made) is still there: %s", r)
	}
	for _, want := range []string{"after the command: fs: looking for protected paths", "commands are off for the rest of the session", "commands are off for this session"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
	}
	if len(r.stderr) > 4000 {
		t.Errorf("stderr is %d bytes: a path was printed whole", len(r.stderr))
	}
}

// sleeping reports whether a process runs sleep 2.31.
func sleeping() bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.HasSuffix(string(b), "sleep\x002.31\x00") {
			return true
		}
	}
	return false
}

// The launcher's own files are never readable: with the policy file in
// the workspace, commands do not run at all (fs hides it; a worker that
// reads the workspace would read it).
func TestIntegrationComponentsShellAuthority(t *testing.T) {
	s := newSandbox(t)
	text := s.policyText(shellPol())
	path := filepath.Join(s.ws, "policy.toml")
	must(t, os.WriteFile(path, []byte(text), 0o644))
	sum := sha256.Sum256([]byte(text))
	l := itEnv.launcher
	r := s.run(t, itOpts{}, l, "--quiet", "--policy-sha256", hex.EncodeToString(sum[:]), "--policy", path, "--", "/usr/bin/sh", "-c", l+" sh 'cat pol*'; echo sh=$?")
	if r.stdout != "sh=125\n" || !strings.Contains(r.stderr, "lies in the workspace") || strings.Contains(r.stdout+r.stderr, "version = 1") {
		t.Fatalf("%s", r)
	}
}

// On the launcher's terminal: the person's "yes" lets a command that needs
// approval run, any other answer does not; a recursive deletion by shell
// command needs "delete" ("y" deletes nothing), and what it deleted is
// in a backup that restores byte for byte.
func TestIntegrationComponentsShellApproval(t *testing.T) {
	s := newSandbox(t)
	store, err := storeDirFor(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	l := itEnv.launcher
	touch := l + " sh 'touch approved.txt'; echo rc=$?"
	if r, screen := s.ptySessionWith(t, shellPol(), touch, "no"); r.stdout != "rc=119\n" || !strings.Contains(screen, "touch approved.txt") {
		t.Fatalf("answered no: %s; terminal %q", r, screen)
	}
	mustNotExist(t, filepath.Join(s.ws, "approved.txt"), "declined, the command ran")
	if r, _ := s.ptySessionWith(t, shellPol(), touch, "yes"); r.stdout != "rc=0\n" {
		t.Fatalf("answered y: %s", r)
	}
	mustExist(t, filepath.Join(s.ws, "approved.txt"))

	files := map[string]string{"build/a.o": "aaa", "build/sub/b.o": strings.Repeat("b", 70000)}
	for rel, content := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(s.ws, rel)), 0o755))
		s.file(t, filepath.Join(s.ws, rel), content)
	}
	rm := l + " sh 'rm -rf build'; echo rc=$?"
	r, screen := s.ptySessionWith(t, shellPol(), rm, "y")
	if r.stdout != "rc=119\n" || !strings.Contains(screen, "deletes recursively") || !strings.Contains(screen, `Type "delete `) {
		t.Fatalf("answered y: %s; terminal %q", r, screen)
	}
	mustExist(t, filepath.Join(s.ws, "build/sub/b.o"))
	r, _ = s.ptySessionWith(t, shellPol(), rm, "delete")
	if r.stdout != "rc=0\n" || !strings.Contains(r.stderr, "backed up first: [") {
		t.Fatalf("answered delete: %s", r)
	}
	mustNotExist(t, filepath.Join(s.ws, "build"), "the confirmed delete did not happen")
	id := strings.Trim(strings.Fields(r.stderr[strings.Index(r.stderr, "backed up first: [")+len("backed up first: ["):])[0], "[]")
	if rs := s.run(t, itOpts{}, l, "backups", "restore", id, "--workspace", s.ws); rs.code != 0 {
		t.Fatalf("restore %s: %s", id, rs)
	}
	for rel, want := range files {
		if b, err := os.ReadFile(filepath.Join(s.ws, rel)); err != nil || string(b) != want {
			t.Errorf("%s after restore: %d bytes, %v", rel, len(b), err)
		}
	}
}

// A command that needs the person only to write a protected path, which
// its worker has read-only (by a redirection, or as a word its program
// only writes: mv's or cp's destination, the files chmod or sed -i
// change), is refused at once: no question is put (the
// person's yes could not make the write), the agent is told the path
// and how it can be changed, and the file is as it was. A write the
// worker can make (a tool's configuration, the analyzer's alone) is
// still asked about and made on yes; a read needs no one.
func TestIntegrationComponentsShellReadOnlyWriteRefused(t *testing.T) {
	s := newSandbox(t)
	for _, f := range []string{".git/hooks/pre-commit", ".vscode/settings.json", ".cargo/config.toml"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(s.ws, f)), 0o755))
		s.file(t, filepath.Join(s.ws, f), "orig\n")
	}
	s.file(t, filepath.Join(s.ws, "new"), "new\n")
	l := itEnv.launcher
	script := strings.Join([]string{
		l + ` sh 'echo x > .git/hooks/pre-commit'; echo hook=$?`,
		l + ` sh 'mv new .git/hooks/pre-commit'; echo mv=$?`,
		l + ` sh 'cp new .git/hooks/pre-commit'; echo cp=$?`,
		l + ` sh 'chmod +x .vscode/settings.json'; echo chmod=$?`,
		l + ` sh 'sed -i s/orig/x/ .vscode/settings.json'; echo sed=$?`,
		l + ` sh 'echo x >> .vscode/settings.json'; echo vscode=$?`,
		l + ` sh 'echo x > .cargo/config.toml'; echo cargo=$?`,
		l + ` sh 'cat .git/hooks/pre-commit'; echo read=$?`,
	}, "\n")
	// One yes per command that could be asked: only the .cargo one may be.
	r, screen := s.ptySessionWith(t, shellPol(), script, "yes", "yes", "yes", "yes", "yes", "yes", "yes")
	for _, want := range []string{"hook=119\n", "mv=119\n", "cp=119\n", "chmod=119\n", "sed=119\n", "vscode=119\n", "cargo=0\n", "orig\nread=0\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q: %s; terminal %q", want, r, screen)
		}
	}
	if n := strings.Count(screen, "to allow"); n != 1 || !strings.Contains(screen, ".cargo/config.toml") || strings.Contains(screen, "pre-commit") || strings.Contains(screen, "settings.json") {
		t.Errorf("%d questions, want one, about .cargo only: terminal %q", n, screen)
	}
	for _, want := range []string{"structural.git-hooks", `launcher fs write ".git/hooks/pre-commit"`, `mv is given ".git/hooks/pre-commit"`, `cp is given ".git/hooks/pre-commit"`, `chmod is given ".vscode/settings.json"`, `sed is given ".vscode/settings.json"`, "structural.protected-path", `launcher fs write ".vscode/settings.json"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
	}
	for f, want := range map[string]string{".git/hooks/pre-commit": "orig\n", "new": "new\n", ".vscode/settings.json": "orig\n", ".cargo/config.toml": "x\n"} {
		if b, err := os.ReadFile(filepath.Join(s.ws, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", f, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(s.ws, ".vscode/settings.json")); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf(".vscode/settings.json: %v, %v; want it as it was, not executable", st, err)
	}
}

// The store's quota through real shell deletions in one session: a
// second backup that does not fit beside the first evicts nothing (an
// eviction nobody was shown would let the agent drop the first by
// deleting junk): its deletion is asked about as one with no backup,
// naming why, and goes ahead only on "irreversible"; a tree that fits no
// store even empty is the same. The first backup is kept and restores.
func TestIntegrationComponentsShellQuota(t *testing.T) {
	s := newSandbox(t)
	store, err := storeDirFor(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	for name, size := range map[string]int{"a": 100 << 10, "b": 100 << 10, "c": 400 << 10} {
		must(t, os.Mkdir(filepath.Join(s.ws, name), 0o755))
		s.file(t, filepath.Join(s.ws, name, "data"), strings.Repeat(name, size))
	}
	p := componentsPol()
	p.extra = "[backups]\nquota = \"150KiB\"\n"
	l := itEnv.launcher
	script := l + " sh 'rm -rf a'; echo a=$?; " + l + " sh 'rm -rf b'; echo b=$?; " + l + " sh 'rm -rf c'; echo c=$?"
	r, screen := s.ptySessionWith(t, p, script, "delete", "delete", "irreversible", "delete", "irreversible")
	if r.stdout != "a=0\nb=0\nc=0\n" || strings.Count(screen, `Type "irreversible `) != 2 || !strings.Contains(screen, "evicting the 1 oldest backups would make room") {
		t.Fatalf("%s; terminal %q", r, screen)
	}
	for _, name := range []string{"a", "b", "c"} {
		mustNotExist(t, filepath.Join(s.ws, name), name+" was not deleted")
	}
	ids := regexp.MustCompile(`backed up first: \[([0-9A-Za-z.-]+)\]`).FindAllStringSubmatch(r.stderr, -1)
	if len(ids) != 1 {
		t.Fatalf("want a backup for a alone: %s", r.stderr)
	}
	list := s.run(t, itOpts{}, l, "backups", "list", "--workspace", s.ws)
	if !strings.Contains(list.stdout, ids[0][1]) || strings.Count(list.stdout, "\n") != 1 {
		t.Fatalf("a's backup should be kept, alone: %s", list)
	}
	if rs := s.run(t, itOpts{}, l, "backups", "restore", ids[0][1], "--workspace", s.ws); rs.code != 0 {
		t.Fatalf("restore a: %s", rs)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "a", "data")); err != nil || string(b) != strings.Repeat("a", 100<<10) {
		t.Errorf("a after restore: %d bytes, %v", len(b), err)
	}
}

// A command whose caller leaves is ended, not left to run to the
// policy's timeout holding the runner (commands run one at a time): the
// agent's next command runs at once, and the first one's process is gone.
func TestIntegrationComponentsShellCancel(t *testing.T) {
	s := newSandbox(t)
	p := componentsPol()
	p.extra = "[commands]\ntimeout = \"90s\"\n"
	l := itEnv.launcher
	script := l + " sh 'sleep 737' & c=$!; sleep 2; kill $c; wait $c; " +
		"timeout 20 " + l + " sh 'echo second'; echo second=$?"
	r := s.agentSh(t, p, itOpts{}, script)
	if r.code != 0 || r.stdout != "second\nsecond=0\n" {
		t.Fatalf("the second command waited for the first one (exit 124 is timeout's): %s", r)
	}
	if strings.Contains(r.stderr, "sleep 737") && !strings.Contains(r.stderr, "its caller left") {
		t.Errorf("the log does not say why the first command ended: %s", r.stderr)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		if b, _ := os.ReadFile(f); string(b) == "sleep\x00737\x00" {
			t.Errorf("the first command's process is still running: %s", f)
		}
	}
}

// Code Mode in a session: the agent's script (launcher code run) is
// checked by bash, run in a worker the launcher starts, and its tools are
// served through the components — files through fs (what it writes is
// the owner's, a protected path refused), commands under the command
// policy (one needing approval refused with no one to ask); a runaway
// script ends at the policy's deadline; a script the static check refuses
// never runs.
func TestIntegrationComponentsCode(t *testing.T) {
	s := newSandbox(t)
	const owner = 4244
	must(t, os.Chown(s.ws, owner, owner))
	s.file(t, filepath.Join(s.ws, "in.txt"), "from the host")
	script := `const f = await pinfold.call("read_file", {path: "in.txt"});
await pinfold.call("write_file", {path: "out.txt", content: f.content + "!"});
const l = await pinfold.call("list_dir", {path: "."});
const r = await pinfold.call("run_command", {command: "cat out.txt"});
let hook = "", touch = "";
try { await pinfold.call("write_file", {path: ".git/hooks/pre-commit", content: "x"}); } catch (e) { hook = e.message; }
try { await pinfold.call("run_command", {command: "touch t"}); } catch (e) { touch = e.message; }
pinfold.log("listed", l.entries.length);
return {out: r.stdout, hook, touch};`
	p := shellPol()
	p.extra += "[code_mode]\ndeadline = \"2s\"\nscript_size = \"4KiB\"\n"
	run := func(js string) itResult {
		return s.agentSh(t, p, itOpts{stdin: fileWith(t, js)}, itEnv.launcher+" code run -; echo rc=$?")
	}
	r := run(script)
	if !strings.Contains(r.stdout, `"out":"from the host!"`) || !strings.Contains(r.stdout, "fs.protected") ||
		!strings.Contains(r.stdout, "commands.approval[0]") || !strings.Contains(r.stdout, "rc=0") || !strings.Contains(r.stderr, "listed") {
		t.Fatalf("%s", r)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(s.ws, "out.txt"), &st); err != nil || st.Uid != owner {
		t.Errorf("out.txt: %v, owner %d", err, st.Uid)
	}
	mustNotExist(t, filepath.Join(s.ws, "t"), "a command needing approval ran from a script")
	if r := run("for (;;) {}"); !strings.Contains(r.stdout, "rc=117") || !strings.Contains(r.stderr, "deadline") {
		t.Errorf("runaway: %s", r)
	}
	if r := run(`return globalThis`); !strings.Contains(r.stdout, "rc=119") || !strings.Contains(r.stderr, "code.static") {
		t.Errorf("static refusal: %s", r)
	}
	// Only the static check's refusal is 119: a script over the
	// session's script_size is a usage error.
	if r := run("return 1" + strings.Repeat(" ", 5000)); !strings.Contains(r.stdout, "rc=120") || !strings.Contains(r.stderr, "more than the 4096 allowed") {
		t.Errorf("a script over script_size: %s", r)
	}
	// A result within the output cap that the answer cannot carry (JSON
	// spells "<" in six bytes) ends as the output limit.
	if r := run(`return "<".repeat(300000)`); !strings.Contains(r.stdout, "rc=117") || !strings.Contains(r.stderr, "output limit exceeded") {
		t.Errorf("a result the answer cannot carry: %.2000s", r)
	}
}

// A script whose worker the kernel kills for its cgroup's memory limit is
// told so in a session, as code run --tools tells it: the memory limit,
// named, not "the worker failed: EOF" (bash sees only its channel close;
// the launcher, which started the worker, says how it ended). The memory
// here is the calls waiting in the worker (code's doc.go): four slow
// commands hold every place a call runs in, and the large calls behind
// them pile up in the worker, past its cgroup's bound, within a deadline
// far away.
func TestIntegrationComponentsCodeMemoryKilled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a components session runs as root")
	}
	s := newSandbox(t)
	p := componentsPol()
	p.extra = "[commands]\ntimeout = \"90s\"\n[code_mode]\ndeadline = \"90s\"\n"
	script := `for (let i = 0; i < 4; i++) pinfold.call("run_command", {command: "sleep 60"});
const s = "a".repeat(6000000);
for (let i = 0; i < 150; i++) pinfold.call("list_dir", {path: s});
await new Promise(() => {});`
	r := s.agentSh(t, p, itOpts{stdin: fileWith(t, script)}, itEnv.launcher+" code run -; echo rc=$?")
	if !strings.Contains(r.stdout, "rc=117") || !strings.Contains(r.stderr, "memory limit exceeded") || !strings.Contains(r.stderr, "cgroup's memory limit") {
		t.Errorf("a worker killed for memory, in a session: %.3000s", r)
	}
}

// A script's fetch goes through net, under the agent's decisions: an
// upstream on this host's loopback (allowed by unsafe_allow_private)
// answers; the metadata address and a denied name get net's 403 with
// its rule; a non-HTTP URL is refused by bash. Without net (mode
// "none") fetch says so.
func TestIntegrationComponentsCodeFetch(t *testing.T) {
	s := newSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "upstream says "+r.URL.Path)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	script := `const ok = await pinfold.call("fetch", {url: "http://` + ln.Addr().String() + `/hi"});
const md = await pinfold.call("fetch", {url: "http://169.254.169.254/latest/meta-data/"});
const dn = await pinfold.call("fetch", {url: "http://blocked.example/"});
let bad = "";
try { await pinfold.call("fetch", {url: "file:///etc/passwd"}); } catch (e) { bad = e.message; }
return {ok: ok.status + " " + ok.body, md: md.status + " " + md.headers["X-Pinfold-Rule"], dn: dn.status + " " + dn.headers["X-Pinfold-Rule"], bad};`
	r := s.agentSh(t, proxyPol(), itOpts{stdin: fileWith(t, script)}, itEnv.launcher+" code run -; echo rc=$?")
	for _, want := range []string{`"ok":"200 upstream says /hi"`, `"md":"403 ssrf.metadata"`, `"dn":"403 network.deny[0]"`, `is not an http or https URL`, "rc=0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("want %s: %s", want, r)
		}
	}
	r = s.agentSh(t, componentsPol(), itOpts{stdin: fileWith(t, `return await pinfold.call("fetch", {url: "http://example.com/"})`)}, itEnv.launcher+" code run -; echo rc=$?")
	if !strings.Contains(r.stdout, "rc=117") || !strings.Contains(r.stderr, "has no network") {
		t.Errorf("without net: %s", r)
	}
	// Neither a script's start nor its fetch waits for a command's end:
	// a long command holds the runner channel to its end, and the starts
	// have a channel of their own. (On one channel, the script waited
	// for the command: timeout's 124.)
	p := proxyPol()
	p.extra = "[commands]\ntimeout = \"90s\"\n"
	l := itEnv.launcher
	during := `const r = await pinfold.call("fetch", {url: "http://` + ln.Addr().String() + `/during"}); return r.status + " " + r.body;`
	r = s.agentSh(t, p, itOpts{stdin: fileWith(t, during)},
		l+" sh 'sleep 738' </dev/null & c=$!; sleep 2; timeout 20 "+l+" code run -; echo rc=$?; kill $c; wait $c")
	if !strings.Contains(r.stdout, `"200 upstream says /during"`) || !strings.Contains(r.stdout, "rc=0") {
		t.Errorf("a script while a command ran: %s", r)
	}
}

// The check after a command sees one state of the workspace: fs is
// frozen while it walks. A hunt made a command leave .vscode/tasks.json
// in a tree (Y/proj) walked after a slow part (big/, 40,000 directories),
// and had the agent's fs move the tree into a part already walked (X)
// meanwhile: the file stayed, with no notice, three times in three.
// Now it is moved aside whichever side of the check the move falls on.
func TestIntegrationComponentsCheckSeesOneState(t *testing.T) {
	s := newSandbox(t)
	// Names in the root's directory order: X before big before Y.
	for i := 0; i < 20; i++ {
		if err := os.Mkdir(filepath.Join(s.ws, fmt.Sprintf("n%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(s.ws, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	bi := slices.Index(names, "big")
	if bi < 1 || bi > len(names)-2 {
		t.Fatalf("big is not between two directories in %v", names)
	}
	x, y := names[bi-1], names[bi+1]
	l := itEnv.launcher
	// Perl builds the protected name, so the analyzer sees no write to it.
	cmd := `perl -e 'for $i (1..40000) { mkdir(qq(big/$i)) or die } mkdir(q(` + y + `/proj)); mkdir(q(` + y + `/proj/.vs).q(code)) or die; ` +
		`open(F, q(>), q(` + y + `/proj/.vs).q(code/tasks.json)) or die; print F q(evil); close F; open(F, q(>), q(done)); close F'`
	script := strings.Join([]string{
		l + ` sh '` + strings.ReplaceAll(cmd, `'`, `'\''`) + `' & `,
		`i=0; while [ $i -lt 3000 ]; do ` + l + ` fs stat done >/dev/null 2>&1 && break; i=$((i+1)); done; echo polls=$i`,
		`sleep 0.05; ` + l + ` fs mv ` + y + `/proj ` + x + `/proj; echo mv=$?`,
		`wait; echo sh=$?`,
	}, "\n")
	p := componentsPol()
	p.extra = "[commands]\ntimeout = \"60s\"\noutput = \"64KiB\"\n"
	r := s.agentSh(t, p, itOpts{}, script)
	for _, d := range []string{x, y} {
		if b, err := os.ReadFile(filepath.Join(s.ws, d, "proj", ".vscode", "tasks.json")); err == nil {
			t.Errorf("%s/proj/.vscode/tasks.json, made by the command, is still there (%q); agent:\n%s%s", d, b, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "mv=0") {
		t.Logf("the move did not happen (%s): the test showed nothing this run", r.stdout)
	}
}
