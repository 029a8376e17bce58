package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `launcher mcp` as the agent of a real components session, driven by
// the go-sdk's own client over the launcher's stdio (which is the
// agent's), with the launcher's controlling terminal a pty where the
// person's answers are typed. Every tool is called; a command and a
// recursive delete wait for the person and go ahead on their answer; a
// protected write the person declines, a path outside the workspace and
// the metadata address are tool errors naming their rule.
func TestIntegrationMCP(t *testing.T) {
	s := newSandbox(t)
	store, err := storeDirFor(s.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	s.file(t, filepath.Join(s.ws, "hello.txt"), "hello from the workspace\n")
	must(t, os.MkdirAll(filepath.Join(s.ws, "build", "sub"), 0o755))
	s.file(t, filepath.Join(s.ws, "build", "sub", "a.o"), "object")
	must(t, os.MkdirAll(filepath.Join(s.ws, ".git", "hooks"), 0o755))
	up := upstream(t)

	p := proxyPol()
	p.extra = "[commands]\napproval = [\"touch\"]\ntimeout = \"10s\"\n"
	path, hash := s.writePolicy(t, p)
	master, slave := openPTY(t)
	// The questions come in the order of the calls below.
	screen := answerOn(master, "yes", "delete", "no")
	cmd := exec.Command(itEnv.launcher, "--quiet", "--approval-timeout", "5s", "--policy-sha256", hash, "--policy", path, "--", itEnv.launcher, "mcp")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Dir = s.dir
	cmd.Stderr = slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2, Pdeathsig: syscall.SIGKILL}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pinfold-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; terminal %q", err, screen())
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"delete", "execute_code", "fetch", "list_dir", "read_file", "run_command", "write_file"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	call := func(name string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v; terminal %q", name, err, screen())
		}
		text, out := toolResult(r)
		return out, text, r.IsError
	}
	want := func(what string, got any, exp any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("%s: got %v, want %v", what, got, exp)
		}
	}

	out, _, isErr := call("read_file", map[string]any{"path": "hello.txt"})
	want("read_file", out["content"], "hello from the workspace\n")
	want("read_file is an error", isErr, false)
	out, text, isErr := call("write_file", map[string]any{"path": "new.txt", "content": "made through mcp\n"})
	want("write_file", out["bytes"], 17)
	want("write_file is an error", isErr, false)
	if b, _ := os.ReadFile(filepath.Join(s.ws, "new.txt")); string(b) != "made through mcp\n" {
		t.Errorf("new.txt on disk: %q (%s)", b, text)
	}
	out, _, _ = call("list_dir", map[string]any{})
	if b, _ := json.Marshal(out["entries"]); !strings.Contains(string(b), `"name":"new.txt"`) || !strings.Contains(string(b), `"name":"build"`) {
		t.Errorf("list_dir: %s", b)
	}
	call("delete", map[string]any{"path": "new.txt"})
	mustNotExist(t, filepath.Join(s.ws, "new.txt"), "delete did not delete")
	out, _, _ = call("run_command", map[string]any{"command": "echo out; echo err >&2; exit 3"})
	want("run_command exit", out["exit_code"], 3)
	want("run_command stdout", out["stdout"], "out\n")
	want("run_command stderr", out["stderr"], "err\n")

	// Approval-gated: the person's "y", then "delete".
	out, text, isErr = call("run_command", map[string]any{"command": "touch approved.txt"})
	if isErr || out["exit_code"] != 0.0 {
		t.Errorf("approved command: %s", text)
	}
	mustExist(t, filepath.Join(s.ws, "approved.txt"))
	out, text, isErr = call("delete", map[string]any{"path": "build", "recursive": true})
	if isErr || out["backup"] == nil || out["backup"] == "" {
		t.Errorf("confirmed recursive delete: %s", text)
	}
	mustNotExist(t, filepath.Join(s.ws, "build"), "the confirmed delete did not happen")
	// The person's "no": a tool error naming the rule, and nothing written.
	_, text, isErr = call("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "echo hooked"})
	if !isErr || !strings.Contains(text, "rule fs.protected") || !strings.Contains(text, "Hint:") {
		t.Errorf("declined protected write: error %v, %s", isErr, text)
	}
	mustNotExist(t, filepath.Join(s.ws, ".git", "hooks", "pre-commit"), "a declined write happened")
	// Refusals nobody is asked about. A path out of the workspace is a
	// request fs does not take (as the agent verbs say it), not a
	// decision: "failed", with the reason.
	_, text, isErr = call("read_file", map[string]any{"path": "../policy.toml"})
	if !isErr || !strings.Contains(text, "read_file: failed (bad-request)") || !strings.Contains(text, `the path has a ".." component`) {
		t.Errorf("a path outside the workspace: error %v, %s", isErr, text)
	}
	_, text, isErr = call("fetch", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"})
	if !isErr || !strings.Contains(text, "rule ssrf.metadata") {
		t.Errorf("metadata fetch: error %v, %s", isErr, text)
	}
	_, text, isErr = call("fetch", map[string]any{"url": "https://blocked.example/"})
	if !isErr || !strings.Contains(text, "rule network.deny[0]") || !strings.Contains(text, "Hint:") {
		t.Errorf("https fetch of a denied name: error %v, %s", isErr, text)
	}
	out, _, _ = call("fetch", map[string]any{"url": up + "/hi"})
	want("fetch", fmt.Sprint(out["status"], " ", out["body"]), "200 upstream says /hi")

	out, text, isErr = call("execute_code", map[string]any{"script": `const f = await pinfold.call("read_file", {path: "hello.txt"}); pinfold.log("read"); return f.content.trim();`})
	if isErr || out["value"] != "hello from the workspace" || fmt.Sprint(out["logs"]) != `["read"]` {
		t.Errorf("execute_code: %v %s", out, text)
	}
	_, text, isErr = call("execute_code", map[string]any{"script": `return eval("1")`})
	if !isErr || !strings.Contains(text, "rule code.static") {
		t.Errorf("execute_code static refusal: %s", text)
	}
	shown := screen()
	for _, q := range []string{"touch approved.txt", `delete "build" and everything beneath it`, `write ".git/hooks/pre-commit"`} {
		if !strings.Contains(shown, q) {
			t.Errorf("the terminal did not ask about %s: %q", q, shown)
		}
	}
	// The client goes: the session ends with the agent, cleanly.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the launcher after the client closed: %v; terminal %q", cmd.ProcessState, screen())
	}
}

// In wrapper mode, even with net beside the agent, `launcher mcp` has
// nothing to broker and refuses to start; it does not serve the
// agent's own files instead.
func TestIntegrationMCPWrapperRefused(t *testing.T) {
	s := newSandbox(t)
	path, hash := s.writePolicy(t, itPol{network: "proxy", netExtra: "block_all = false\n", exec: []string{"/usr/bin", "/usr/lib"}})
	r := s.run(t, itOpts{}, itEnv.launcher, "--quiet", "--policy-sha256", hash, "--policy", path, "--", itEnv.launcher, "mcp")
	if r.code != 120 || r.stdout != "" || !strings.Contains(r.stderr, "mcp: nothing to broker") {
		t.Fatalf("%s", r)
	}
}
