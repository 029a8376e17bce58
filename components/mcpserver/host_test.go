package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/pidtest"
)

// hostHarness is the real server over HostBackends, in a workspace
// (dir/ws) whose parent dir is the test's too.
func hostHarness(t *testing.T, opts HostOptions) (h *harness, b Backends, dir, ws string) {
	t.Helper()
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := HostBackends(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, b), b, dir, ws
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileContent(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestHostBackendsWorkspace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	writeFile(t, file, "x")
	for _, c := range []struct {
		ws   string
		opts HostOptions
		want string
	}{
		{"rel/dir", HostOptions{}, "not an absolute, clean path"},
		{dir + "/", HostOptions{}, "not an absolute, clean path"},
		{dir + "/./x/..", HostOptions{}, "not an absolute, clean path"},
		{"", HostOptions{}, "not an absolute, clean path"},
		{filepath.Join(dir, "missing"), HostOptions{}, "no such file or directory"},
		{file, HostOptions{}, "not a directory"},
		{dir, HostOptions{CommandTimeout: -1}, "negative"},
		{dir, HostOptions{OutputCap: -1}, "negative"},
	} {
		_, err := HostBackends(c.ws, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("HostBackends(%q, %+v) = %v, want an error with %q", c.ws, c.opts, err, c.want)
		}
	}
	// The control: an absolute, clean directory.
	b, err := HostBackends(dir, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Web != nil {
		t.Error("host backends have a web client: fetch would be offered")
	}
	if s := b.Shell.(*hostShell); s.timeout != DefCommandTimeout || s.cap != DefOutputCap {
		t.Errorf("defaults: timeout %v, cap %d", s.timeout, s.cap)
	}
}

// Every allowed call says it was full access, not a policy rule.
func TestHostDecision(t *testing.T) {
	_, b, _, ws := hostHarness(t, HostOptions{})
	ctx := context.Background()
	writeFile(t, filepath.Join(ws, "a"), "x")
	_, d, err := b.Files.Read(ctx, "a", 0, 0)
	if err != nil || d != fullAccess() || d.Reason != rpc.ReasonAllowed || d.Rule != "full-access" {
		t.Errorf("read: %+v, %v", d, err)
	}
	_, d, err = b.Shell.Run(ctx, "true")
	if err != nil || !d.Allowed || d.Rule != RuleFullAccess {
		t.Errorf("run: %+v, %v", d, err)
	}
	// A cancelled call is an error, not a decision.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := b.Files.Read(cctx, "a", 0, 0); err != context.Canceled {
		t.Errorf("read with a cancelled context: %v", err)
	}
}

func TestHostFiles(t *testing.T) {
	h, _, _, ws := hostHarness(t, HostOptions{})
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	var w writeFileOut
	ok(t, h.call(t, "write_file", map[string]any{"path": "hello.txt", "content": "héllo\n"}), &w)
	if w.Bytes != len("héllo\n") || fileContent(t, filepath.Join(ws, "hello.txt")) != "héllo\n" {
		t.Errorf("write_file: %+v, on disk %q", w, fileContent(t, filepath.Join(ws, "hello.txt")))
	}
	if st, _ := os.Stat(filepath.Join(ws, "hello.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("a new file is %v under umask 077, want 0644", st.Mode().Perm())
	}
	// An existing file keeps its mode; no temporary file is left.
	script := filepath.Join(ws, "run.sh")
	writeFile(t, script, "old")
	os.Chmod(script, 0o750)
	ok(t, h.call(t, "write_file", map[string]any{"path": "run.sh", "content": "new"}), &w)
	if st, _ := os.Stat(script); st.Mode().Perm() != 0o750 || fileContent(t, script) != "new" {
		t.Errorf("rewritten file: mode %v, content %q", st.Mode().Perm(), fileContent(t, script))
	}
	// Through a link: the target changes, the link stays.
	writeFile(t, filepath.Join(ws, "target.txt"), "t0")
	os.Symlink("target.txt", filepath.Join(ws, "link"))
	ok(t, h.call(t, "write_file", map[string]any{"path": "link", "content": "t1"}), &w)
	if st, _ := os.Lstat(filepath.Join(ws, "link")); st.Mode()&os.ModeSymlink == 0 || fileContent(t, filepath.Join(ws, "target.txt")) != "t1" {
		t.Errorf("write through a link: link mode %v, target %q", st.Mode(), fileContent(t, filepath.Join(ws, "target.txt")))
	}

	var r readFileOut
	ok(t, h.call(t, "read_file", map[string]any{"path": "hello.txt"}), &r)
	if r.Content != "héllo\n" || !r.EOF || r.Encoding != "utf-8" {
		t.Errorf("read_file: %+v", r)
	}
	ok(t, h.call(t, "read_file", map[string]any{"path": "hello.txt", "offset": 1, "max_bytes": 4}), &r)
	if r.Content != "éll" || r.EOF || r.NextOffset != 5 {
		t.Errorf("read_file in parts: %+v", r)
	}
	ok(t, h.call(t, "read_file", map[string]any{"path": filepath.Join(ws, "hello.txt")}), &r)
	if r.Content != "héllo\n" {
		t.Errorf("read_file of an absolute path: %+v", r)
	}
	toolError(t, h.call(t, "read_file", map[string]any{"path": "missing"}), "read_file: not found (unknown): ", "missing", "no such file", "does not exist")
	toolError(t, h.call(t, "read_file", map[string]any{"path": "."}), "bad-request", "not a regular file (a dir)")
	toolError(t, h.call(t, "read_file", map[string]any{"path": ""}), "the path is empty")
	toolError(t, h.call(t, "read_file", map[string]any{"path": "a\x00b"}), "NUL byte")
	toolError(t, h.call(t, "write_file", map[string]any{"path": "no/such/dir/f", "content": "x"}), "write_file: not found (unknown): ", "no such file")
	if os.Getuid() != 0 { // root reads anything
		os.Chmod(filepath.Join(ws, "hello.txt"), 0)
		toolError(t, h.call(t, "read_file", map[string]any{"path": "hello.txt"}), "rule fs.permission", "full access has the authority of uid")
		os.Chmod(filepath.Join(ws, "hello.txt"), 0o644)
	}

	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	var l listDirOut
	ok(t, h.call(t, "list_dir", map[string]any{}), &l)
	got := fmt.Sprint(l.Entries)
	want := fmt.Sprint([]fs.Entry{{Name: "hello.txt", Type: fs.TypeFile, Size: 7}, {Name: "link", Type: fs.TypeSymlink, Size: 10},
		{Name: "run.sh", Type: fs.TypeFile, Size: 3}, {Name: "sub", Type: fs.TypeDir, Size: l.Entries[3].Size}, {Name: "target.txt", Type: fs.TypeFile, Size: 2}})
	if got != want || l.Truncated {
		t.Errorf("list_dir: %s (truncated %v), want %s (no temporary file)", got, l.Truncated, want)
	}
	toolError(t, h.call(t, "list_dir", map[string]any{"path": "hello.txt"}), "not a directory")

	var d deleteOut
	ok(t, h.call(t, "delete", map[string]any{"path": "hello.txt"}), &d)
	if exists(filepath.Join(ws, "hello.txt")) {
		t.Error("delete left the file")
	}
	ok(t, h.call(t, "delete", map[string]any{"path": "link"}), &d)
	if exists(filepath.Join(ws, "link")) || !exists(filepath.Join(ws, "target.txt")) {
		t.Error("delete of a link: the link stays or its target went")
	}
	writeFile(t, filepath.Join(ws, "sub", "f"), "x")
	toolError(t, h.call(t, "delete", map[string]any{"path": "sub"}), "bad-request", "directory not empty")
	os.Remove(filepath.Join(ws, "sub", "f"))
	ok(t, h.call(t, "delete", map[string]any{"path": "sub"}), &d)
	if exists(filepath.Join(ws, "sub")) {
		t.Error("delete left the empty directory")
	}
	toolError(t, h.call(t, "delete", map[string]any{"path": "sub"}), "delete: not found (unknown): ")
}

// Create-only (not reachable through the tools, which replace): an
// existing name, or a link, is refused; a new one is made.
func TestHostWriteCreateOnly(t *testing.T) {
	_, b, _, ws := hostHarness(t, HostOptions{})
	ctx := context.Background()
	writeFile(t, filepath.Join(ws, "old"), "old")
	os.Symlink("nowhere", filepath.Join(ws, "dangling"))
	for _, p := range []string{"old", "dangling"} {
		_, d, err := b.Files.Write(ctx, p, []byte("new"), true)
		if err != nil || d.Allowed || d.Reason != rpc.ReasonBadRequest || !strings.Contains(d.Detail, "already exists") {
			t.Errorf("create-only %s: %+v, %v", p, d, err)
		}
	}
	if fileContent(t, filepath.Join(ws, "old")) != "old" || exists(filepath.Join(ws, "nowhere")) {
		t.Error("a refused create-only write changed something")
	}
	r, d, err := b.Files.Write(ctx, "new", []byte("new"), true)
	if err != nil || !d.Allowed || r.Size != 3 || fileContent(t, filepath.Join(ws, "new")) != "new" {
		t.Errorf("create-only new: %+v %+v %v", r, d, err)
	}
}

func TestHostListCap(t *testing.T) {
	h, _, _, ws := hostHarness(t, HostOptions{})
	for i := range fs.MaxList + 1 {
		f, err := os.Create(filepath.Join(ws, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var l listDirOut
	ok(t, h.call(t, "list_dir", map[string]any{"path": "."}), &l)
	if len(l.Entries) != fs.MaxList || !l.Truncated {
		t.Fatalf("list of %d: %d entries, truncated %v", fs.MaxList+1, len(l.Entries), l.Truncated)
	}
	if !slices.IsSortedFunc(l.Entries, func(a, b fs.Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("entries not sorted")
	}
}

func TestHostDeleteRecursive(t *testing.T) {
	h, b, dir, ws := hostHarness(t, HostOptions{})
	tree := filepath.Join(ws, "tree")
	os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755)
	writeFile(t, filepath.Join(tree, "a", "b", "f"), "x")
	var d deleteOut
	ok(t, h.call(t, "delete", map[string]any{"path": "tree", "recursive": true}), &d)
	if exists(tree) || !d.Irreversible || d.Backup != "" {
		t.Errorf("recursive delete: %+v, tree still there: %v", d, exists(tree))
	}
	toolError(t, h.call(t, "delete", map[string]any{"path": "tree", "recursive": true}), "delete: not found (unknown): ")

	// Refused: "/", the workspace, what holds it, and links to them.
	// Through the server go only the paths whose deletion, were the guard
	// broken, would cost the test's own directories (a link to "/" is
	// deleted as a link): a recursive delete of "/" itself, or of a path
	// that cleans to it, is asked of the guard directly, so that a
	// regression fails this test rather than wipe the host.
	writeFile(t, filepath.Join(ws, "keep"), "x")
	os.Symlink("/", filepath.Join(ws, "root"))
	os.Symlink(ws, filepath.Join(dir, "wslink"))
	for _, p := range []string{".", "..", ws, ws + "/sub/..", dir, "root", "root/", "../wslink", "/proc/self/root"} {
		for _, recursive := range []bool{true, false} {
			toolError(t, h.call(t, "delete", map[string]any{"path": p, "recursive": recursive}),
				"denied (no-rule, rule full-access)", "full access never deletes those")
		}
	}
	if !exists(filepath.Join(ws, "keep")) || !exists(filepath.Join(ws, "root")) || !exists(filepath.Join(dir, "wslink")) {
		t.Error("a refused delete removed something")
	}
	// Not recursive, "/" is an rmdir, harmless if the guard broke.
	toolError(t, h.call(t, "delete", map[string]any{"path": "/"}), "denied (no-rule, rule full-access)")
	hf := b.Files.(*hostFiles)
	for _, p := range []string{"/", "/..", "../../../../../../../../../..", "root/..", "root/."} {
		abs, err := hf.path(context.Background(), fs.OpDeleteRecursive, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := hf.guard(fs.OpDeleteRecursive, abs); err == nil || !strings.Contains(err.Error(), "full access never deletes those") {
			t.Errorf("guard of %q (%s): %v", p, abs, err)
		}
	}
	// The control: a sibling of the workspace, outside it, is deleted.
	os.MkdirAll(filepath.Join(dir, "other", "x"), 0o755)
	ok(t, h.call(t, "delete", map[string]any{"path": "../other", "recursive": true}), &d)
	if exists(filepath.Join(dir, "other")) {
		t.Error("../other is still there")
	}
}

// A FIFO is refused at once, not opened for a read that would wait for
// a writer.
func TestHostReadFIFO(t *testing.T) {
	h, _, _, ws := hostHarness(t, HostOptions{})
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []struct{ tool, want string }{{"read_file", "not a regular file (a fifo)"}, {"list_dir", "not a directory"}} {
		r, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"path": "fifo"}})
		if err != nil {
			t.Fatalf("%s of a FIFO: %v (it blocked?)", c.tool, err)
		}
		toolError(t, r, c.want)
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		toolError(t, h.call(t, "read_file", map[string]any{"path": "/dev/null"}), "not a regular file (a device)")
	}
}

// Full access: ".." and absolute paths reach outside the workspace.
func TestHostPathsOutsideWorkspace(t *testing.T) {
	h, _, dir, _ := hostHarness(t, HostOptions{})
	writeFile(t, filepath.Join(dir, "outside.txt"), "outside")
	var r readFileOut
	ok(t, h.call(t, "read_file", map[string]any{"path": "../outside.txt"}), &r)
	if r.Content != "outside" {
		t.Errorf("read ../outside.txt: %+v", r)
	}
	var w writeFileOut
	ok(t, h.call(t, "write_file", map[string]any{"path": "../ws/../new.txt", "content": "n"}), &w)
	if fileContent(t, filepath.Join(dir, "new.txt")) != "n" {
		t.Error("write of ../ws/../new.txt did not land beside the workspace")
	}
	var l listDirOut
	ok(t, h.call(t, "list_dir", map[string]any{"path": dir}), &l)
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"new.txt", "outside.txt", "ws"}) {
		t.Errorf("list of the workspace's parent: %v", names)
	}
}

func TestHostRun(t *testing.T) {
	h, _, _, ws := hostHarness(t, HostOptions{OutputCap: 100})
	t.Setenv("PINFOLD_HOST_TEST", "inherited")
	var r runCommandOut
	ok(t, h.call(t, "run_command", map[string]any{"command": `pwd; printf %s "$PINFOLD_HOST_TEST"; cat; echo err >&2; exit 3`}), &r)
	if r.ExitCode != 3 || r.Stdout != ws+"\ninherited" || r.Stderr != "err\n" || r.Truncated || r.TimedOut {
		t.Errorf("run: %+v", r)
	}
	// Each stream capped on its own.
	ok(t, h.call(t, "run_command", map[string]any{"command": `head -c 1000 /dev/zero | tr '\0' a; echo short >&2`}), &r)
	if r.Stdout != strings.Repeat("a", 100) || r.Stderr != "short\n" || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("capped: stdout %d bytes, stderr %q, truncated %v, exit %d", len(r.Stdout), r.Stderr, r.Truncated, r.ExitCode)
	}
	r = runCommandOut{}
	ok(t, h.call(t, "run_command", map[string]any{"command": `echo fits`}), &r)
	if r.Stdout != "fits\n" || r.Truncated {
		t.Errorf("uncapped: %+v", r)
	}
	// No start-up files (--norc, --noprofile), but BASH_ENV, which is the
	// server's environment's to set, as documented.
	for _, f := range []string{".bashrc", ".bash_profile", ".profile"} {
		writeFile(t, filepath.Join(ws, f), "echo "+f)
	}
	t.Setenv("HOME", ws)
	r = runCommandOut{}
	ok(t, h.call(t, "run_command", map[string]any{"command": `true`}), &r)
	if r.Stdout != "" {
		t.Errorf("a start-up file ran: %q", r.Stdout)
	}
	writeFile(t, filepath.Join(ws, "env.sh"), "echo env.sh")
	t.Setenv("BASH_ENV", filepath.Join(ws, "env.sh"))
	r = runCommandOut{}
	ok(t, h.call(t, "run_command", map[string]any{"command": `true`}), &r)
	if r.Stdout != "env.sh\n" {
		t.Errorf("BASH_ENV: %q", r.Stdout)
	}
}

func TestHostRunTimeout(t *testing.T) {
	h, _, _, _ := hostHarness(t, HostOptions{CommandTimeout: time.Second})
	began := time.Now()
	var r runCommandOut
	ok(t, h.call(t, "run_command", map[string]any{"command": `echo $$; sleep 60 & echo $!; sleep 60`}), &r)
	if took := time.Since(began); took > 8*time.Second {
		t.Errorf("the command took %v with a 1s timeout", took)
	}
	if !r.TimedOut || r.ExitCode != 137 {
		t.Errorf("timed out: %+v", r)
	}
	var pids []int
	for _, f := range strings.Fields(r.Stdout) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q", r.Stdout)
		}
		pids = append(pids, n)
	}
	if len(pids) != 2 {
		t.Fatalf("output %q, want the shell's and the background sleep's pids", r.Stdout)
	}
	pgid := pids[0] // the shell leads its own group
	var left []int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if left = liveInGroup(t, pgid); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of group %d left: %v", pgid, left)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d is alive", pid)
		}
	}
	// The control: the same command with time to finish is not killed.
	r = runCommandOut{}
	ok(t, h.call(t, "run_command", map[string]any{"command": `sleep 0.1 & wait; echo done`}), &r)
	if r.TimedOut || r.Stdout != "done\n" {
		t.Errorf("short command: %+v", r)
	}
}

// procStat is /proc/PID/stat's state and process group.
func procStat(pid int) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0], pgrp, true
}

func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// liveInGroup lists the processes of group pgid that are not zombies
// (an orphan's zombie lingers until its reaper waits for it).
func liveInGroup(t *testing.T, pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, pg, ok := procStat(pid); ok && pg == pgid && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// No Code Mode and no fetch in full access.
func TestHostNoCodeNoFetch(t *testing.T) {
	h, _, _, ws := hostHarness(t, HostOptions{})
	r, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	if slices.Contains(names, "fetch") {
		t.Errorf("fetch offered: %v", names)
	}
	if slices.Contains(names, "execute_code") {
		toolError(t, h.call(t, "execute_code", map[string]any{"script": `await pinfold.call("write_file", {path: "x", content: "y"}); return 1`}),
			"denied (caller-role, rule full-access)", "Code Mode needs a components-mode session")
	}
	if exists(filepath.Join(ws, "x")) {
		t.Error("the script ran")
	}
}

// The delete guard compares what a path resolves to, not a name: a
// chain of links through a tree deeper than PATH_MAX (which
// filepath.EvalSymlinks cannot follow, and the kernel can) still reaches
// the workspace's parent, and is refused. Asked of the guard directly,
// so that a regression fails here rather than delete anything.
func TestHostGuardLongResolution(t *testing.T) {
	_, b, dir, ws := hostHarness(t, HostOptions{})
	hf := b.Files.(*hostFiles)
	name := strings.Repeat("n", 250)
	const levels = 17 // 17 × 251 bytes: past PATH_MAX
	root, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(unix.Mkdirat(root, "deep", 0o755))
	cur, err := unix.Openat(root, "deep", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(err)
	unix.Close(root)
	for i := range levels {
		must(unix.Mkdirat(cur, name, 0o755))
		next, err := unix.Openat(cur, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		must(err)
		if i == 7 { // halfway: a link to the rest of the way down
			must(unix.Symlinkat(strings.TrimSuffix(strings.Repeat(name+"/", levels-8), "/"), next, "rest"))
		}
		unix.Close(cur)
		cur = next
	}
	// At the bottom, a link back up to dir.
	must(unix.Symlinkat(strings.Repeat("../", levels+1), cur, "up"))
	unix.Close(cur)
	must(os.Symlink("../deep/"+strings.TrimSuffix(strings.Repeat(name+"/", 8), "/"), filepath.Join(ws, "half")))
	p := filepath.Join(ws, "half", "rest", "up")
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		t.Fatalf("the chain does not reach dir: %v", err)
	}
	if _, err := filepath.EvalSymlinks(p); err == nil {
		t.Fatal("EvalSymlinks resolved the chain: the test no longer shows what it should")
	}
	if err := hf.guard(fs.OpDeleteRecursive, p); err == nil || !strings.Contains(err.Error(), "full access never deletes those") {
		t.Errorf("guard of a chain to the workspace's parent: %v", err)
	}
	// Control: the same chain to a sibling of the workspace is allowed.
	must(os.Mkdir(filepath.Join(dir, "sib"), 0o755))
	if err := hf.guard(fs.OpDeleteRecursive, filepath.Join(p, "sib")); err != nil {
		t.Errorf("guard of a chain to a sibling: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, "deep"))
}

// A device renamed onto a file's name while read_file reads it is never
// opened (opening runs its driver): the look and the read are one
// descriptor's. The test makes its own null device node in a temporary
// directory and counts its opens with inotify, while another goroutine
// keeps swapping it with a regular file.
func TestHostReadNeverOpensASwappedDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	_, b, dir, ws := hostHarness(t, HostOptions{})
	hf := b.Files.(*hostFiles)
	dev := filepath.Join(dir, "null")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, dev, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	opens := func() (n int) {
		buf := make([]byte, 4096)
		for {
			k, err := unix.Read(in, buf)
			if err != nil || k <= 0 {
				return n
			}
			n += k / unix.SizeofInotifyEvent
		}
	}
	// Control: inotify sees an open of the device.
	if f, err := os.Open(dev); err == nil {
		f.Close()
	}
	if opens() == 0 {
		t.Fatal("control: inotify saw no open of the device")
	}
	name, reg := filepath.Join(ws, "f"), filepath.Join(dir, "reg")
	writeFile(t, name, "regular")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1_000_000 && !stop.Load(); i++ {
			unix.Rename(name, reg)
			unix.Rename(dev, name)
			unix.Rename(name, dev)
			unix.Rename(reg, name)
		}
	}()
	n, reads := 0, 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && n == 0; reads++ {
		hf.read(context.Background(), "f", 0, 0)
		n += opens()
	}
	stop.Store(true)
	wg.Wait()
	if n > 0 {
		t.Errorf("the swapped-in device was opened %d times in %d reads", n, reads)
	}
}

// os/exec may call Cancel after Wait reaped the shell: the group killed
// then is the shell's, never that of the process the kernel gave its pid
// next (here a setsid sleep placed there with ns_last_pid). Both ways
// of killing: the pidfd's group signal and, as before kernel 6.9, the
// group id while the shell is unreaped.
func TestHostCancelAfterReapSparesReusedPid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("placing a process at a pid (ns_last_pid) needs root")
	}
	for _, pidfd := range []bool{true, false} {
		t.Run(fmt.Sprintf("pidfd=%v", pidfd), func(t *testing.T) {
			defer func(old bool) { pidfdGroupSignal = old }(pidfdGroupSignal)
			pidfdGroupSignal = pidfd
			g := newShellGroup(exec.CommandContext(context.Background(), "/bin/true"))
			defer g.close()
			if err := g.run(); err != nil {
				t.Fatal(err)
			}
			pid := g.cmd.Process.Pid
			ended := pidtest.SessionLeaderAt(t, pid)
			if err := g.cmd.Cancel(); !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("Cancel after the reap: %v, want os.ErrProcessDone", err)
			}
			select {
			case err := <-ended:
				t.Errorf("Cancel after the shell's reap killed pid %d's new owner, a process in a session of its own: %v", pid, err)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// The fallback (kernels before 6.9) still kills the whole group at the
// deadline, as TestHostRunTimeout checks with the pidfd.
func TestHostRunTimeoutWithoutPidfdGroupSignal(t *testing.T) {
	defer func(old bool) { pidfdGroupSignal = old }(pidfdGroupSignal)
	pidfdGroupSignal = false
	TestHostRunTimeout(t)
}
