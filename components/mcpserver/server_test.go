package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/rpc"
)

// fakes stands in for fs and bash: files in a map, decisions from deny
// (path or command → decision), gate holding recursive deletes and
// commands named "wait" until it is closed. It counts calls in flight.
type fakes struct {
	mu    sync.Mutex
	files map[string][]byte
	deny  map[string]rpc.Decision
	gate  chan struct{}
	// chunk caps what one Read answers (0: no cap).
	chunk int
	// slow is how long Run and Write take, so that calls overlap.
	slow time.Duration

	inFlight, maxInFlight atomic.Int32
	cancelled             atomic.Int32
}

func newFakes() *fakes {
	return &fakes{files: map[string][]byte{}, deny: map[string]rpc.Decision{}, gate: make(chan struct{})}
}

func (f *fakes) enter() func() {
	n := f.inFlight.Add(1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { f.inFlight.Add(-1) }
}

func (f *fakes) decision(key string) (rpc.Decision, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deny[key]
	return d, ok
}

func (f *fakes) wait(ctx context.Context) error {
	select {
	case <-f.gate:
		return nil
	case <-ctx.Done():
		f.cancelled.Add(1)
		return ctx.Err()
	}
}

var allowed = rpc.Allow("workspace")

func (f *fakes) Read(ctx context.Context, path string, off int64, n int) (fs.ReadResult, rpc.Decision, error) {
	defer f.enter()()
	if d, ok := f.decision(path); ok {
		return fs.ReadResult{}, d, nil
	}
	f.mu.Lock()
	b, ok := f.files[path]
	f.mu.Unlock()
	if !ok {
		return fs.ReadResult{}, rpc.Deny(rpc.ReasonUnknown, "", path+": no such file"), nil
	}
	if n == 0 || n > rpc.MaxData {
		n = rpc.MaxData
	}
	if f.chunk > 0 && n > f.chunk {
		n = f.chunk
	}
	b = b[min(off, int64(len(b))):]
	eof := len(b) <= n
	b = b[:min(n, len(b))]
	return fs.ReadResult{EOF: eof, Data: b}, allowed, nil
}

func (f *fakes) Write(ctx context.Context, path string, data []byte, _ bool) (fs.WriteResult, rpc.Decision, error) {
	defer f.enter()()
	time.Sleep(f.slow)
	if d, ok := f.decision(path); ok {
		return fs.WriteResult{}, d, nil
	}
	f.mu.Lock()
	f.files[path] = data
	f.mu.Unlock()
	return fs.WriteResult{Size: len(data)}, allowed, nil
}

func (f *fakes) List(ctx context.Context, path string) (fs.ListResult, rpc.Decision, error) {
	defer f.enter()()
	if d, ok := f.decision(path); ok {
		return fs.ListResult{}, d, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var r fs.ListResult
	for name, b := range f.files {
		r.Entries = append(r.Entries, fs.Entry{Name: name, Type: fs.TypeFile, Size: int64(len(b))})
	}
	slices.SortFunc(r.Entries, func(a, b fs.Entry) int { return strings.Compare(a.Name, b.Name) })
	return r, allowed, nil
}

func (f *fakes) Delete(ctx context.Context, path string) (rpc.Decision, error) {
	defer f.enter()()
	if d, ok := f.decision(path); ok {
		return d, nil
	}
	f.mu.Lock()
	delete(f.files, path)
	f.mu.Unlock()
	return allowed, nil
}

func (f *fakes) DeleteRecursive(ctx context.Context, path string) (fs.DeletedTree, rpc.Decision, error) {
	defer f.enter()()
	if err := f.wait(ctx); err != nil { // the person's confirmation
		return fs.DeletedTree{}, rpc.Decision{}, err
	}
	if d, ok := f.decision(path); ok {
		return fs.DeletedTree{}, d, nil
	}
	return fs.DeletedTree{Backup: "b-1"}, allowed, nil
}

func (f *fakes) Run(ctx context.Context, command string) (bash.RunResult, rpc.Decision, error) {
	defer f.enter()()
	time.Sleep(f.slow)
	if d, ok := f.decision(command); ok {
		return bash.RunResult{}, d, nil
	}
	switch command {
	case "wait":
		if err := f.wait(ctx); err != nil {
			return bash.RunResult{}, rpc.Decision{}, err
		}
	case "broken":
		return bash.RunResult{}, rpc.Decision{}, errors.New("rpc: bash run: the connection ended before an answer")
	}
	return bash.RunResult{ExitCode: 3, Stdout: []byte("out:" + command + "\xff\n"), Stderr: []byte("err\n")}, allowed, nil
}

func (f *fakes) Code(ctx context.Context, script string) (bash.CodeResult, rpc.Decision, error) {
	defer f.enter()()
	if d, ok := f.decision(script); ok {
		return bash.CodeResult{}, d, nil
	}
	if script == "throw" {
		return bash.CodeResult{Error: "Error: boom", Logs: []string{"before"}, ToolCalls: 2}, allowed, nil
	}
	return bash.CodeResult{Value: json.RawMessage(`{"n":2}`), Logs: []string{"hi"}, ToolCalls: 1}, allowed, nil
}

// harness is a server on pipes with an SDK client connected to it.
type harness struct {
	cs   *mcp.ClientSession
	done chan error // Serve's result
	// in and out are the server's ends (for raw tests).
	in  *io.PipeWriter
	out *io.PipeReader
}

func start(t *testing.T, b Backends) *harness {
	t.Helper()
	h := serveRaw(t, b, 0)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: h.out, Writer: h.in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.cs = cs
	t.Cleanup(func() { cs.Close() })
	return h
}

// serveRaw runs Serve on pipes, max bytes a line (0: MaxLine).
func serveRaw(t *testing.T, b Backends, max int) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{in: inW, out: outR, done: make(chan error, 1)}
	srv := New(b)
	go func() {
		err := srv.Run(context.Background(), &Transport{In: inR, Out: outW, Max: max})
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			err = nil
		}
		outW.Close()
		h.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return h
}

func (h *harness) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return r
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok decodes a successful call's structured result into v.
func ok(t *testing.T, r *mcp.CallToolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %s", textOf(r))
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

func toolError(t *testing.T, r *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want a tool error with %q, got %s", want, textOf(r))
	}
	for _, w := range want {
		if !strings.Contains(textOf(r), w) {
			t.Errorf("tool error lacks %q: %s", w, textOf(r))
		}
	}
}

// The tools an agent sees: names, descriptions and input schemas that
// carry their limits; fetch only when the session has net.
func TestToolList(t *testing.T) {
	for _, web := range []bool{false, true} {
		b := Backends{Files: newFakes(), Shell: newFakes()}
		if web {
			b.Web = http.DefaultClient
		}
		h := start(t, b)
		r, err := h.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		schemas := map[string]string{}
		for _, tool := range r.Tools {
			names = append(names, tool.Name)
			if len(tool.Description) < 40 {
				t.Errorf("%s: description %q", tool.Name, tool.Description)
			}
			s, _ := json.Marshal(tool.InputSchema)
			schemas[tool.Name] = string(s)
		}
		want := []string{"delete", "execute_code", "list_dir", "read_file", "run_command", "write_file"}
		if web {
			want = append(want, "fetch")
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("web %v: tools %v, want %v", web, names, want)
		}
		for tool, frag := range map[string]string{"read_file": `"maxLength":4096`, "write_file": fmt.Sprintf(`"maxLength":%d`, MaxWrite), "run_command": `"maxLength":65536`} {
			if !strings.Contains(schemas[tool], frag) || !strings.Contains(schemas[tool], `"required":[`) {
				t.Errorf("%s schema lacks %s or required: %s", tool, frag, schemas[tool])
			}
		}
		if web && !strings.Contains(schemas["fetch"], `"maxProperties":64`) {
			t.Errorf("fetch schema: %s", schemas["fetch"])
		}
	}
}

// Every tool, through the SDK's client, against the fakes.
func TestToolsCall(t *testing.T) {
	f := newFakes()
	close(f.gate)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refused" {
			w.Header().Set("X-Pinfold-Rule", "network.deny[0]")
			w.Header().Set("X-Pinfold-Reason", "no-rule")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.Path, r.Header.Get("X-Test"), body)
	})}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	h := start(t, Backends{Files: f, Shell: f, Web: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}})

	var w writeFileOut
	ok(t, h.call(t, "write_file", map[string]any{"path": "a.txt", "content": "héllo\n"}), &w)
	if w.Bytes != 7 || string(f.files["a.txt"]) != "héllo\n" {
		t.Errorf("write_file: %+v, %q", w, f.files["a.txt"])
	}
	var rd readFileOut
	ok(t, h.call(t, "read_file", map[string]any{"path": "a.txt"}), &rd)
	if rd != (readFileOut{Content: "héllo\n", Encoding: "utf-8", Bytes: 7, EOF: true}) {
		t.Errorf("read_file: %+v", rd)
	}
	// In parts: a character cut by max_bytes waits for the next part.
	f.files["e.txt"] = []byte("ab\U0001F600c")
	ok(t, h.call(t, "read_file", map[string]any{"path": "e.txt", "max_bytes": 4}), &rd)
	if rd.Content != "ab" || rd.EOF || rd.NextOffset != 2 || rd.Encoding != "utf-8" {
		t.Errorf("read_file part 1: %+v", rd)
	}
	ok(t, h.call(t, "read_file", map[string]any{"path": "e.txt", "offset": 2, "max_bytes": 4}), &rd)
	if rd.Content != "\U0001F600" || rd.NextOffset != 6 {
		t.Errorf("read_file part 2: %+v", rd)
	}
	delete(f.files, "e.txt")
	// fs answering in small chunks is read on to max_bytes.
	f.files["bin"] = []byte{0, 0xff, 1, 2, 3, 4, 5}
	f.chunk = 2
	ok(t, h.call(t, "read_file", map[string]any{"path": "bin"}), &rd)
	if b, _ := base64.StdEncoding.DecodeString(rd.Content); rd.Encoding != "base64" || string(b) != string(f.files["bin"]) || !rd.EOF {
		t.Errorf("read_file binary: %+v", rd)
	}
	f.chunk = 0
	var ls listDirOut
	ok(t, h.call(t, "list_dir", map[string]any{}), &ls)
	if len(ls.Entries) != 2 || ls.Entries[0].Name != "a.txt" {
		t.Errorf("list_dir: %+v", ls)
	}
	var del deleteOut
	ok(t, h.call(t, "delete", map[string]any{"path": "bin"}), &del)
	if _, still := f.files["bin"]; still || del.Deleted != "bin" {
		t.Errorf("delete: %+v", del)
	}
	ok(t, h.call(t, "delete", map[string]any{"path": "build", "recursive": true}), &del)
	if del.Backup != "b-1" {
		t.Errorf("delete recursive: %+v", del)
	}
	var run runCommandOut
	ok(t, h.call(t, "run_command", map[string]any{"command": "make"}), &run)
	if run.ExitCode != 3 || run.Stdout != "out:make\uFFFD\n" || run.Stderr != "err\n" {
		t.Errorf("run_command: %+v", run)
	}
	var code executeCodeOut
	ok(t, h.call(t, "execute_code", map[string]any{"script": "return {n: 2}"}), &code)
	if fmt.Sprint(code.Value) != "map[n:2]" || code.Logs[0] != "hi" || code.ToolCalls != 1 {
		t.Errorf("execute_code: %+v", code)
	}
	toolError(t, h.call(t, "execute_code", map[string]any{"script": "throw"}), "the script failed: Error: boom", "it made 2 tool call(s) before it ended", "logs:\nbefore")
	var fe bash.FetchResult
	ok(t, h.call(t, "fetch", map[string]any{"url": "http://" + ln.Addr().String() + "/p", "method": "POST", "headers": map[string]string{"X-Test": "t"}, "body": "data"}), &fe)
	if fe.Status != 200 || fe.Body != "POST /p t data" {
		t.Errorf("fetch: %+v", fe)
	}
	toolError(t, h.call(t, "fetch", map[string]any{"url": "http://" + ln.Addr().String() + "/refused"}), "denied by the session's network policy (rule network.deny[0])", "Hint:")
	toolError(t, h.call(t, "fetch", map[string]any{"url": "file:///etc/passwd"}), "not an http or https URL")
}

// A component's denial is a tool error (not a protocol error) naming
// the reason, the rule and a hint; a call that got no decision says so.
func TestDenials(t *testing.T) {
	f := newFakes()
	close(f.gate)
	f.deny[".git/hooks/pre-commit"] = rpc.Deny(rpc.ReasonNoRule, "fs.protected", "the person declined")
	f.deny["../x"] = rpc.Deny(rpc.ReasonBadRequest, "fs.beneath", `"../x" leaves the workspace`)
	f.deny["curl x | sh"] = rpc.Deny(rpc.ReasonNoRule, "commands.deny[2]", "pipes a download into a shell")
	f.deny["rm -rf /"] = rpc.Deny(rpc.ReasonNoRule, bash.RuleDeclined, "the person said no")
	f.deny["build"] = rpc.Deny(rpc.ReasonNoRule, fs.RuleRecursive, "not confirmed")
	f.deny["eval"] = rpc.Deny(rpc.ReasonNoRule, bash.RuleStatic, "1:1 eval is refused")
	f.deny["worker"] = rpc.Deny(rpc.ReasonNoRule, bash.RuleWorker, "no throwaway uid")
	h := start(t, Backends{Files: f, Shell: f})
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, []string{"write_file: denied (no-rule, rule fs.protected): the person declined", "Hint: the person said no"}},
		{"read_file", map[string]any{"path": "../x"}, []string{"read_file: failed (bad-request, rule fs.beneath)", "Hint: fix the arguments"}},
		{"read_file", map[string]any{"path": "missing"}, []string{"read_file: not found (unknown): ", "list_dir shows"}},
		{"run_command", map[string]any{"command": "curl x | sh"}, []string{"rule commands.deny[2]", "pipes a download", "ask the person to change the policy"}},
		{"run_command", map[string]any{"command": "rm -rf /"}, []string{"rule bash.declined"}},
		{"run_command", map[string]any{"command": "worker"}, []string{"run_command: the launcher could not run it: no throwaway uid"}},
		{"run_command", map[string]any{"command": "broken"}, []string{"no answer from the session's components", "connection ended"}},
		{"delete", map[string]any{"path": "build", "recursive": true}, []string{"rule fs.delete-recursive"}},
		{"execute_code", map[string]any{"script": "eval"}, []string{"rule code.static", "rewrite the script"}},
	} {
		toolError(t, h.call(t, c.tool, c.args), c.want...)
	}
	if _, wrote := f.files[".git/hooks/pre-commit"]; wrote {
		t.Error("a denied write happened")
	}
}

// A call that needs the person waits for them: it has not answered
// while the question is open, and answers once it is.
func TestApprovalBlocks(t *testing.T) {
	f := newFakes()
	h := start(t, Backends{Files: f, Shell: f})
	got := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "build", "recursive": true}})
		got <- r
	}()
	// Other calls go on meanwhile.
	var ls listDirOut
	ok(t, h.call(t, "list_dir", map[string]any{"path": "."}), &ls)
	select {
	case r := <-got:
		t.Fatalf("answered before the person: %s", textOf(r))
	case <-time.After(300 * time.Millisecond):
	}
	close(f.gate)
	select {
	case r := <-got:
		var del deleteOut
		ok(t, r, &del)
		if del.Backup != "b-1" {
			t.Errorf("%+v", del)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the person answered")
	}
}

// Arguments of the wrong type, missing, unknown or too large are tool
// errors the SDK gives from the schema before a component is asked; an
// unknown tool is a protocol error. The server goes on serving.
func TestBadArguments(t *testing.T) {
	f := newFakes()
	close(f.gate)
	h := start(t, Backends{Files: f, Shell: f})
	for _, c := range []struct {
		tool string
		args any
	}{
		{"read_file", map[string]any{"path": 5}},
		{"read_file", map[string]any{}},
		{"read_file", map[string]any{"path": strings.Repeat("a", MaxPath+1)}},
		{"read_file", map[string]any{"path": "a", "max_bytes": MaxRead + 1}},
		{"read_file", map[string]any{"path": "a", "max_bytes": 3}},
		{"read_file", map[string]any{"path": "a", "max_bytes": -1}},
		{"read_file", map[string]any{"path": "a", "offset": -5}},
		{"write_file", map[string]any{"path": "a", "content": strings.Repeat("x", MaxWrite+1)}},
		{"write_file", map[string]any{"path": "a", "content": []int{1}}},
		{"delete", map[string]any{"path": "a", "recursive": "yes"}},
		{"run_command", map[string]any{"command": strings.Repeat("x", MaxCommand+1)}},
		{"run_command", []string{"ls"}},
		{"list_dir", map[string]any{"path": "a", "extra": 1}},
	} {
		r, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err == nil && !r.IsError {
			t.Errorf("%s %v: accepted", c.tool, c.args)
		}
	}
	if n := f.maxInFlight.Load(); n != 0 {
		t.Errorf("a component was asked %d time(s) with bad arguments", n)
	}
	if _, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_files", Arguments: map[string]any{"path": "a"}}); err == nil || !strings.Contains(err.Error(), "read_files") {
		t.Errorf("unknown tool: %v", err)
	}
	f.files["a"] = []byte("still here")
	var rd readFileOut
	ok(t, h.call(t, "read_file", map[string]any{"path": "a"}), &rd)
	if rd.Content != "still here" {
		t.Errorf("%+v", rd)
	}
}

// Malformed JSON-RPC lines are answered with the specification's errors
// and the session goes on; an oversized line is read past and refused.
func TestMalformedJSONRPC(t *testing.T) {
	f := newFakes()
	h := serveRaw(t, Backends{Files: f, Shell: f}, 4096)
	lines := make(chan map[string]any, 16)
	go func() {
		dec := json.NewDecoder(h.out)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(lines)
				return
			}
			lines <- m
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(h.in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output")
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	wantError := func(what string, id any, code float64) {
		t.Helper()
		m := next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != code || m["id"] != id {
			t.Errorf("%s: want error %v for id %v, got %v", what, code, id, m)
		}
		if _, has := m["id"]; !has {
			t.Errorf("%s: the error has no id member: %v", what, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`this is not json`)
	wantError("not JSON", nil, -32700)
	send(`{"jsonrpc":"2.0","id":2,"method":`)
	wantError("cut JSON", nil, -32700)
	send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	wantError("batch", nil, -32600)
	send(`{"id":4,"method":"ping"}`)
	wantError("no version", 4.0, -32600)
	send(`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`)
	wantError("object id", nil, -32600)
	send(`{"jsonrpc":"2.0","id":5,"method":"` + strings.Repeat("x", 5000) + `"}`)
	wantError("oversized", nil, -32600)
	send(`{"jsonrpc":"2.0","id":6,"method":"no/such/method"}`)
	wantError("unknown method", 6.0, -32601)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	wantError("unknown tool", 7.0, -32602)
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"not an object"}`)
	wantError("params not an object", 8.0, -32602)
	send(`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"x"}}}`)
	wantError("null id", nil, -32600) // the SDK took it for a notification: no answer at all
	send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if m := next(); m["id"] != 9.0 || m["error"] != nil {
		t.Fatalf("after the bad lines, ping: %v", m)
	}
	h.in.Close()
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("Serve after the end of input: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end at the end of its input")
	}
}

// A client that floods calls while MaxInFlight hold every slot is not
// read further once maxPending are unanswered: the calls waiting (each a
// goroutine holding its arguments in the SDK) stay bounded, and every one
// answers once the slots free. A hunt queued 300 1 MiB writes: +316
// goroutines and +911 MiB.
func TestFloodIsNotRead(t *testing.T) {
	f := newFakes() // "wait" holds its slot until f.gate closes
	h := serveRaw(t, Backends{Files: f, Shell: f}, 0)
	dec := json.NewDecoder(h.out)
	answers := make(chan map[string]any, 1024)
	go func() {
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(answers)
				return
			}
			answers <- m
		}
	}()
	io.WriteString(h.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	<-answers
	io.WriteString(h.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	base := runtime.NumGoroutine()
	sent := make(chan int, 1)
	go func() {
		n := 0
		for i := range MaxInFlight {
			if _, err := fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":"w%d","method":"tools/call","params":{"name":"run_command","arguments":{"command":"wait"}}}`+"\n", i); err != nil {
				break
			}
			n++
		}
		for i := range 300 {
			if _, err := fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"c%d"}}}`+"\n", i+1, i); err != nil {
				break
			}
			n++
		}
		sent <- n
	}()
	time.Sleep(time.Second)
	if g := runtime.NumGoroutine() - base; g > 2*maxPending+32 {
		t.Errorf("%d more goroutines with the flood waiting, want at most about %d", g, 2*maxPending)
	}
	select {
	case n := <-sent:
		t.Errorf("all %d lines were taken while the slots were held", n)
	default:
	}
	close(f.gate)
	got := 0
	for got < MaxInFlight+300 {
		select {
		case _, ok := <-answers:
			if !ok {
				t.Fatalf("the server closed after %d answers", got)
			}
			got++
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d answered", got, MaxInFlight+300)
		}
	}
}

// 100 calls at once all answer, never more than MaxInFlight reach the
// components together, and when the client goes every goroutine ends.
func TestConcurrentCalls(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFakes()
	close(f.gate)
	f.slow = 20 * time.Millisecond
	h := start(t, Backends{Files: f, Shell: f})
	var wg sync.WaitGroup
	var failures atomic.Int32
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool, args := "run_command", map[string]any{"command": fmt.Sprint("c", i)}
			if i%2 == 0 {
				tool, args = "write_file", map[string]any{"path": fmt.Sprint("f", i), "content": "x"}
			}
			r, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil || r.IsError {
				failures.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of 100 calls failed", n)
	}
	if len(f.files) != 50 {
		t.Errorf("%d files written, want 50", len(f.files))
	}
	if m := f.maxInFlight.Load(); m > MaxInFlight || m < MaxInFlight/2 {
		t.Errorf("at most %d calls in flight, want %d..%d", m, MaxInFlight/2, MaxInFlight)
	}
	h.cs.Close()
	waitServe(t, h)
	waitGoroutines(t, base)
}

// A client that goes mid-call: the call's context ends (the component
// call is abandoned), Serve returns, and nothing is left running.
func TestClientDisconnectMidCall(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFakes()
	h := start(t, Backends{Files: f, Shell: f})
	go h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "wait"}})
	deadline := time.Now().Add(10 * time.Second)
	for f.inFlight.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.inFlight.Load() != 1 {
		t.Fatal("the call did not reach bash")
	}
	h.in.Close() // the client's process is gone: its end of the pipe closes
	h.out.Close()
	waitServe(t, h)
	for f.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.cancelled.Load() != 1 {
		t.Error("the call in flight was not cancelled")
	}
	h.cs.Close()
	waitGoroutines(t, base)
}

func waitServe(t *testing.T, h *harness) {
	t.Helper()
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the client went")
	}
}

// waitGoroutines waits (bounded) for the goroutine count to come back
// to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	n := 0
	for range 200 {
		if n = runtime.NumGoroutine(); n <= base {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
}

// The end of the input (`printf … | launcher mcp`) does not lose the
// answers to what was read: every request is answered, then Serve
// returns. A client whose end of the output is gone instead has its
// calls cancelled at once.
func TestEndOfInputAnswered(t *testing.T) {
	f := newFakes()
	f.slow = 300 * time.Millisecond // the call is still running when the input ends
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	in := io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo hi"}}}
`))
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), Backends{Files: f, Shell: f}, in, outW); outW.Close() }()
	b, _ := io.ReadAll(outR)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"id":1,"result"`) || !strings.Contains(string(b), `"id":2,"result"`) || !strings.Contains(string(b), "out:echo hi") {
		t.Errorf("answers after the end of the input:\n%s", b)
	}

	// The client gone: the output's reader closed while a call waits.
	g := newFakes()
	outR, outW, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	done = make(chan error, 1)
	go func() { done <- Serve(context.Background(), Backends{Files: g, Shell: g}, inR, outW); outW.Close() }()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"wait"}}}`)
	deadline := time.Now().Add(10 * time.Second)
	for g.inFlight.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	outR.Close()
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve waited for a call whose client is gone")
	}
	if g.cancelled.Load() != 1 {
		t.Error("the gone client's call was not cancelled")
	}
}

// A cancellation the SDK does not act on frees no place among the
// maxPending: a call counts until it is answered. The SDK reads
// "requestId" case-sensitively; the transport read it with
// encoding/json, which matches "requestid" too, so a flood that sent one
// after each call was read whole while every call still waited (a hunt,
// 2026-12-03). A cancellation the SDK acts on gets its call answered,
// which frees the place.
func TestCancellationFreesNoPlaceUntilAnswered(t *testing.T) {
	f := newFakes() // "wait" holds its slot until f.gate closes
	h := serveRaw(t, Backends{Files: f, Shell: f}, 0)
	dec := json.NewDecoder(h.out)
	answers := make(chan map[string]any, 1024)
	go func() {
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(answers)
				return
			}
			answers <- m
		}
	}()
	io.WriteString(h.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	<-answers
	io.WriteString(h.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	// More than maxPending calls cancelled one after the other are each
	// answered, and the session is still read.
	for i := range maxPending + 1 {
		fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"run_command","arguments":{"command":"wait"}}}`+"\n", i)
		deadline := time.Now().Add(10 * time.Second)
		for f.inFlight.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		fmt.Fprintf(h.in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c%d"}}`+"\n", i)
		select {
		case m := <-answers:
			if m["id"] != fmt.Sprint("c", i) || !strings.Contains(fmt.Sprint(m["result"]), "cancelled") {
				t.Fatalf("after c%d's cancellation, the answer %v", i, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("cancelled call c%d was not answered", i)
		}
		for f.inFlight.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	const flood = 300
	sent := make(chan int, 1)
	go func() {
		n := 0
		for i := range MaxInFlight {
			if _, err := fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":"w%d","method":"tools/call","params":{"name":"run_command","arguments":{"command":"wait"}}}`+"\n", i); err != nil {
				break
			}
			n++
		}
		for i := range flood {
			if _, err := fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"c%d"}}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestid":%d}}`+"\n", i+1, i, i+1); err != nil {
				break
			}
			n++
		}
		sent <- n
	}()
	time.Sleep(time.Second)
	select {
	case n := <-sent:
		t.Errorf("all %d calls were taken while the slots were held: the miscased cancellations freed their places", n)
	default:
	}
	close(f.gate)
	for got := 0; got < MaxInFlight+flood; got++ {
		select {
		case _, ok := <-answers:
			if !ok {
				t.Fatalf("the server closed after %d answers", got)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d answered", got, MaxInFlight+flood)
		}
	}
}

// A message of more than MaxValues JSON values is refused before the SDK
// decodes it: a line of MaxLine bytes of "1,1,…" in a call's arguments
// took some 300 MiB and seconds of CPU in the SDK's schema check, before
// any limit of the server's applied (a hunt, 2026-12-03). One of
// MaxValues values, strings of any length and long escaped strings go
// through.
func TestManyValuesRefused(t *testing.T) {
	f := newFakes()
	h := serveRaw(t, Backends{Files: f, Shell: f}, 0)
	dec := json.NewDecoder(h.out)
	answers := make(chan map[string]any, 16)
	go func() {
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(answers)
				return
			}
			answers <- m
		}
	}()
	next := func() map[string]any {
		t.Helper()
		select {
		case m := <-answers:
			return m
		case <-time.After(30 * time.Second):
			t.Fatal("no answer")
		}
		return nil
	}
	io.WriteString(h.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	next()
	io.WriteString(h.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	n := (MaxLine - 200) / 2
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":"a","x":[%s1]}}}`+"\n", strings.Repeat("1,", n-1))
	m := next()
	runtime.ReadMemStats(&ms)
	if e, _ := m["error"].(map[string]any); m["id"] != 1.0 || e == nil || e["code"] != -32600.0 {
		t.Errorf("%d values: want invalid request for id 1, got %.300v", n, m)
	}
	// The line itself is read into memory, in a buffer that grows (some
	// 40 MiB in all); the SDK's decoding took some 300 MiB.
	if got := (ms.TotalAlloc - before) >> 20; got > 100 {
		t.Errorf("a line of %d MiB took %d MiB", MaxLine>>20, got)
	}
	// Commas, brackets and braces within strings are not values: the
	// call reaches the handler.
	fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"w","content":"%s\\\"%s"}}}`+"\n",
		strings.Repeat(",[{", MaxValues), strings.Repeat(",", MaxValues))
	if m := next(); m["id"] != 2.0 || m["result"] == nil || m["result"].(map[string]any)["isError"] == true {
		t.Errorf("a string of commas: %.300v", m)
	}
	f.mu.Lock()
	if got, want := string(f.files["w"]), strings.Repeat(",[{", MaxValues)+`\"`+strings.Repeat(",", MaxValues); got != want {
		t.Errorf("write_file wrote %d bytes, want %d", len(got), len(want))
	}
	f.mu.Unlock()
	// Just under MaxValues values: refused by the schema, not the
	// transport.
	fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":"a","x":[%s1]}}}`+"\n", strings.Repeat("1,", MaxValues-10))
	if m := next(); m["id"] != 3.0 || m["result"] == nil {
		t.Errorf("%d values: %.300v", MaxValues-10, m)
	}
}

// An error answer is at most MaxErrorText bytes, whatever the argument
// it quotes: the SDK's schema check and its unknown tool error quoted a
// 5 MiB argument whole (a hunt, 2026-12-03). A protocol error keeps its
// code; a short error is whole.
func TestErrorsAreCut(t *testing.T) {
	f := newFakes()
	close(f.gate)
	h := start(t, Backends{Files: f, Shell: f})
	huge := strings.Repeat("é", 2<<20)
	for _, args := range []map[string]any{
		{"path": huge},
		{"path": []string{huge}},
		{"path": "a", huge: 1},
	} {
		r := h.call(t, "list_dir", args)
		if !r.IsError || len(textOf(r)) > MaxErrorText || !strings.Contains(textOf(r), "more bytes not shown") || !utf8.ValidString(textOf(r)) {
			t.Errorf("an error of %d bytes: %.200s", len(textOf(r)), textOf(r))
		}
	}
	_, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: huge, Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || len(we.Message) > MaxErrorText || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %.200v", err)
	}
	r := h.call(t, "list_dir", map[string]any{"path": 5})
	if !r.IsError || strings.Contains(textOf(r), "not shown") {
		t.Errorf("a short error: %s", textOf(r))
	}
}
