package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/rpc"
)

// Files is fs as the server calls it (*fs.Client).
type Files interface {
	Read(ctx context.Context, path string, offset int64, length int) (fs.ReadResult, rpc.Decision, error)
	Write(ctx context.Context, path string, data []byte, createOnly bool) (fs.WriteResult, rpc.Decision, error)
	List(ctx context.Context, path string) (fs.ListResult, rpc.Decision, error)
	Delete(ctx context.Context, path string) (rpc.Decision, error)
	DeleteRecursive(ctx context.Context, path string) (fs.DeletedTree, rpc.Decision, error)
}

// Shell is bash as the server calls it (*bash.Client).
type Shell interface {
	Run(ctx context.Context, command string) (bash.RunResult, rpc.Decision, error)
	Code(ctx context.Context, script string) (bash.CodeResult, rpc.Decision, error)
}

// Backends are the components the tools call.
type Backends struct {
	Files Files
	Shell Shell
	// Web goes through net's proxy; nil when the session has none
	// (network.mode is not "proxy"), and then fetch is not offered.
	Web *http.Client
	// FullAccess: Files and Shell act on the host unconfined
	// (HostBackends); the server says so and offers no Code Mode.
	FullAccess bool
}

// Limits on what one call carries.
const (
	MaxPath    = 4096        // a path argument
	MaxWrite   = rpc.MaxData // write_file's content, in bytes
	MaxRead    = rpc.MaxData // read_file's max_bytes
	DefRead    = 256 << 10   // read_file's default max_bytes
	MaxCommand = 64 << 10    // run_command's command line
	MaxURL     = 8 << 10     // fetch's url
	MaxHeaders = 64          // fetch's headers
	MaxScript  = 256 << 10   // execute_code's script, in bytes (bash applies the policy's limit too)

	// MaxInFlight is how many calls run at once; the others wait for a
	// place (or their cancellation).
	MaxInFlight = 16
	// callTimeout bounds a call: it may wait for the person, whose
	// questions have their own timeout, and run a command, which has
	// the policy's.
	callTimeout = 2 * time.Hour
)

// Version is the server's version as it tells clients.
var Version = "dev"

// New is the MCP server for b: read_file, write_file, list_dir, delete,
// run_command, execute_code, and fetch when b.Web is set.
func New(b Backends) *mcp.Server {
	instr := "Tools of a pinfold session: every file, command and network request goes through the session's components, " +
		"which decide it under the person's pinned policy. Paths are relative to the workspace. A call that needs the person's " +
		"approval waits for their answer. A denial names the policy rule that decided it; do not retry a denied call unchanged."
	if b.FullAccess {
		instr = "Full access: these tools act on this host UNCONFINED, with all of the server's authority; no policy applies " +
			"and no one is asked. Paths are relative to the workspace; absolute paths reach the whole host. Code Mode is not offered."
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "pinfold", Version: Version}, &mcp.ServerOptions{
		Instructions: instr,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.AddReceivingMiddleware(capErrors)
	t := &tools{b: b, slots: make(chan struct{}, MaxInFlight)}
	add(s, t, &mcp.Tool{Name: "read_file", Description: "Read a file of the workspace. Text comes back as it is (encoding utf-8); " +
		"other bytes as base64. Read a large file in parts with offset and max_bytes (next_offset says where to go on)."}, t.readFile,
		limit{"path", MaxPath}, bound{"max_bytes", 4, MaxRead}, bound{"offset", 0, 1 << 53})
	add(s, t, &mcp.Tool{Name: "write_file", Description: "Replace a file of the workspace with content (UTF-8 text), atomically, " +
		"making it if it does not exist." + pick(b.FullAccess, "", " Protected paths (git hooks and config, shell start-up files, .ssh, …) need the person's approval.")}, t.writeFile,
		limit{"path", MaxPath}, limit{"content", MaxWrite})
	add(s, t, &mcp.Tool{Name: "list_dir", Description: "List a directory of the workspace (default: the workspace itself): each entry's name, type and size."}, t.listDir,
		limit{"path", MaxPath})
	add(s, t, &mcp.Tool{Name: "delete", Description: "Delete a file or an empty directory. With recursive, delete a directory and everything " +
		pick(b.FullAccess, "beneath it, at once and with no backup.", "beneath it: the person is asked to confirm, and a verified backup is made first (its id is returned).")}, t.delete,
		limit{"path", MaxPath})
	add(s, t, &mcp.Tool{Name: "run_command", Description: pick(b.FullAccess,
		"Run a shell command line (bash -c) in the workspace, UNCONFINED on this host with the server's authority, with a timeout and an output cap. ",
		"Run a shell command line (bash -c) in the workspace under the session's command policy: "+
			"some commands run at once, some need the person's approval (the call waits), some are refused. It runs confined, with no network, "+
			"a timeout and an output cap. ") + "Returns the exit code and the output; a non-zero exit code is a result, not an error."}, t.runCommand,
		limit{"command", MaxCommand})
	if !b.FullAccess {
		addExecuteCode(s, t)
	}
	if b.Web != nil {
		add(s, t, &mcp.Tool{Name: "fetch", Description: "Make an HTTP or HTTPS request through the session's network proxy, under its domain " +
			"rules (private and metadata addresses are refused). Redirects are not followed. The body comes back as text (at most 1 MiB)."}, t.fetch,
			limit{"url", MaxURL}, limit{"method", 16}, limit{"body", MaxWrite}, count{"headers", MaxHeaders})
	}
	return s
}

// Serve serves b over in and out until the client goes (the end of in,
// or a write it no longer reads) or ctx ends, which are not errors.
func Serve(ctx context.Context, b Backends, in io.ReadCloser, out io.Writer) error {
	t := &Transport{In: in, Out: out}
	// Run's own Close on ctx waits for calls in flight, which may be
	// waiting for the person: ending the input first cancels them.
	stop := context.AfterFunc(ctx, func() { in.Close() })
	defer stop()
	err := New(b).Run(ctx, t)
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// tools holds what every handler shares: the components and the places
// for calls in flight.
type tools struct {
	b     Backends
	slots chan struct{}
}

// A schema constraint on one property of a tool's input.
type constraint interface{ apply(*jsonschema.Schema) }

type limit struct {
	prop string
	max  int
}

func (l limit) apply(s *jsonschema.Schema) { s.Properties[l.prop].MaxLength = &l.max }

type bound struct {
	prop     string
	min, max float64
}

func (b bound) apply(s *jsonschema.Schema) {
	p := s.Properties[b.prop]
	p.Minimum, p.Maximum = &b.min, &b.max
}

type count struct {
	prop string
	max  int
}

func (c count) apply(s *jsonschema.Schema) { s.Properties[c.prop].MaxProperties = &c.max }

// add registers h as tool t, its input schema inferred from In with cs
// applied: the SDK checks every call against it before h sees it, and
// answers a mismatch as a tool error. h runs when a place is free, with
// the call's time bounded.
func add[In, Out any](s *mcp.Server, t *tools, tool *mcp.Tool, h func(context.Context, In) (Out, error), cs ...constraint) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: %s: %v", tool.Name, err))
	}
	for _, c := range cs {
		c.apply(in)
	}
	tool.InputSchema = in
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, args In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		select {
		case t.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, zero, ctx.Err()
		}
		defer func() { <-t.slots }()
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		out, err := h(ctx, args)
		return nil, out, err
	})
}

// denial is a component's answer other than yes as the tool error the
// agent reads: the reason, the rule that decided, the component's
// sentence and a hint for what to do instead. Only a decision (a rule,
// the person, the call table) reads as "denied", as the agent verbs and
// Code Mode's tools say it: what was named is not there (not found), or
// the request could not be carried out as asked (failed: a path with
// "..", a worker the launcher could not start).
func denial(tool string, d rpc.Decision) error {
	var b strings.Builder
	decided := d.Rule != bash.RuleWorker && (d.Reason == rpc.ReasonNoRule || d.Reason == rpc.ReasonCallerRole)
	switch {
	case decided:
		fmt.Fprintf(&b, "%s: denied (%s", tool, d.Reason)
	case d.Reason == rpc.ReasonUnknown:
		fmt.Fprintf(&b, "%s: not found (%s", tool, d.Reason)
	default:
		fmt.Fprintf(&b, "%s: failed (%s", tool, d.Reason)
	}
	switch {
	case d.Rule != "":
		fmt.Fprintf(&b, ", rule %s", d.Rule)
	case decided:
		b.WriteString(", no policy rule: the request itself was refused")
	}
	b.WriteString(")")
	if d.Detail != "" {
		b.WriteString(": " + d.Detail)
	}
	b.WriteString(". Hint: " + hint(d))
	return fmt.Errorf("%s", b.String())
}

func hint(d rpc.Decision) string {
	switch {
	case d.Rule == bash.RuleDeclined || strings.Contains(d.Detail, "declined"):
		return "the person said no (or could not be asked); do not ask again unchanged — say what you need and why."
	case d.Rule == bash.RuleNeedsPerson:
		return "a script runs only commands that need no approval; call run_command for this one."
	case d.Rule == bash.RuleStatic:
		return "rewrite the script without the refused names (each finding gives its line and column)."
	case d.Rule == fs.RuleNoRoom:
		return "there is no room for a backup; free some, or ask the person to delete it themselves."
	case d.Reason == rpc.ReasonUnknown:
		return "it does not exist; list_dir shows what does."
	case d.Reason == rpc.ReasonBadRequest:
		return "fix the arguments (paths are relative to the workspace, without .. or symbolic links)."
	case d.Reason == rpc.ReasonCallerRole:
		return "this session's agent may not ask this of that component."
	}
	return "the session's policy does not allow this; if it is needed, ask the person to change the policy."
}

// failed is a call that got no decision (a component unreachable, a
// broken answer).
func failed(tool string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: the call was cancelled before an answer came: a question it left open for the person counts as no, "+
			"whatever they answer, but a command or change already under way may have had its effect — look before retrying (%v)", tool, err)
	}
	return fmt.Errorf("%s: no answer from the session's components: %v", tool, err)
}

// jsonValue decodes a script's JSON value for the structured result.
func jsonValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// pick is a when c, else b.
func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// addExecuteCode offers Code Mode (through bash, in a components session).
func addExecuteCode(s *mcp.Server, t *tools) {
	add(s, t, &mcp.Tool{Name: "execute_code", Description: "Run a JavaScript script (the body of an async function) in a confined QuickJS worker. " +
		"It calls tools with await pinfold.call(name, args) — read_file {path}, write_file {path, content}, list_dir {path}, " +
		"run_command {command} (only commands that need no approval), fetch {url, method, headers, body} — and logs with pinfold.log(...). " +
		"Its return value (JSON) and logs come back. eval, Function, require, import, process, globalThis, Reflect and the properties " +
		"constructor, __proto__ and prototype are refused by a static check."}, t.executeCode,
		limit{"script", MaxScript})
}

// MaxErrorText bounds the text of a tool error and the message of a
// protocol error. The SDK's schema check quotes the argument it refused
// whole ("validating /properties/path: maxLength: …"), as its unknown
// tool error does the name: a 5 MiB path came back as a 5 MiB error, in
// the model's context.
const MaxErrorText = 8 << 10

// capErrors cuts every error the server answers to MaxErrorText bytes,
// keeping the protocol error's code.
func capErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					tc.Text = cutText(tc.Text)
				}
			}
		}
		if err != nil && len(err.Error()) > MaxErrorText {
			e := &jsonrpc.Error{Message: cutText(err.Error())}
			var wire *jsonrpc.Error
			if errors.As(err, &wire) {
				e.Code = wire.Code
			}
			err = e
		}
		return res, err
	}
}

// cutText is s cut to MaxErrorText bytes, on a character's boundary, with
// a note of how much was left out.
func cutText(s string) string {
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText - 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes not shown)", s[:cut], len(s)-cut)
}
