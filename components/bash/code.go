package bash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/rpc"
)

// OpCode runs a Code Mode script for the agent: checked statically, run
// in a worker the launcher starts (code.StartWorker), its tool calls
// served here through the components.
const OpCode = "code"

// RuleStatic is the static check's refusal of a script; RuleScriptSize
// is the refusal of one larger than [code_mode] script_size.
const (
	RuleStatic     = "code.static"
	RuleScriptSize = "code_mode.script_size"
)

// CodeArgs is the agent's script.
type CodeArgs struct {
	Script string `json:"script"`
}

// CodeResult is how a script that ran ended: its value and logs, or the
// error that ended it (Limit names a limit it broke).
type CodeResult struct {
	Value     json.RawMessage `json:"value,omitempty"`
	Logs      []string        `json:"logs"`
	ToolCalls int             `json:"tool_calls"`
	Error     string          `json:"error,omitempty"`
	Limit     string          `json:"limit,omitempty"`
}

// Code checks and runs script. A script the static check refuses is
// denied (code.static, every finding in the detail); one that ran is
// allowed, whatever its result.
func (b *Broker) Code(ctx context.Context, script string) (rpc.Decision, *CodeResult) {
	rpc.Watch(ctx) // a script runs for up to its deadline
	if len(script) > b.CodeLimits.ScriptSize {
		return rpc.Deny(rpc.ReasonBadRequest, RuleScriptSize, fmt.Sprintf("the script is %d bytes, more than the %d allowed", len(script), b.CodeLimits.ScriptSize)), nil
	}
	if fs := code.Validate(script); fs != nil {
		msgs := make([]string, len(fs))
		for i, f := range fs {
			msgs[i] = f.String()
		}
		b.Log.Info("code", "allowed", false, "rule", RuleStatic, "findings", len(fs))
		return rpc.Deny(rpc.ReasonNoRule, RuleStatic, strings.Join(msgs, "; ")), nil
	}
	if b.StartCode == nil {
		return rpc.Deny(rpc.ReasonNoRule, RuleWorker, "this session cannot start Code Mode workers"), nil
	}
	lim := b.CodeLimits
	conn, end, err := b.StartCode(ctx, Job{Kind: JobCode, Timeout: lim.Deadline + code.WorkerGrace})
	if err != nil {
		return rpc.Deny(rpc.ReasonNoRule, RuleWorker, "the Code Mode worker could not start: "+err.Error()), nil
	}
	defer conn.Close()
	if end != nil {
		defer end.Close()
	}
	runCtx, cancel := context.WithTimeout(ctx, lim.Deadline)
	defer cancel()
	res, err := code.Serve(runCtx, conn, conn, script, lim, b.tool)
	// A worker the kernel killed for memory closed the channel without a
	// word: the launcher, which sees its cgroup, says so on end, once the
	// worker has ended. The channel is closed first: a worker that broke
	// the protocol and lives on then ends now, not at its deadline.
	conn.Close()
	err = code.WorkerEnd(err, end, lim)
	out := &CodeResult{Logs: []string{}}
	// A run that failed says what it logged and how many tool calls it
	// made too: those calls had their effects, which "tool_calls": 0
	// would deny.
	if res != nil {
		out.Logs, out.ToolCalls = res.Logs, res.ToolCalls
	}
	var le *code.LimitError
	switch {
	case errors.As(err, &le):
		out.Error, out.Limit = le.Error(), le.Limit
	case err != nil:
		out.Error = err.Error()
	default:
		out.Value = res.Value
	}
	// One answer carries at most rpc.MaxBody bytes of JSON. A run within
	// its output cap can need more (the cap may be larger, and the answer
	// spells each <, > and & in six bytes), and the answer would then be
	// refused whole, with no word of the limit.
	if answer, err := json.Marshal(out); err != nil || len(answer) > rpc.MaxBody {
		out = &CodeResult{Logs: []string{}, ToolCalls: out.ToolCalls, Limit: "output",
			Error: fmt.Sprintf("code: output limit exceeded: the result and the logs take %d bytes as the answer's JSON, more than the %d one answer carries", len(answer), rpc.MaxBody)}
	}
	b.Log.Info("code", "allowed", true, "tool_calls", out.ToolCalls, "error", out.Error != "", "limit", out.Limit)
	return rpc.Allow("code_mode"), out
}

// The tools a script calls with pinfold.call, served through the
// components: fs for files (its own rules and questions), this broker for
// commands (the command policy and its questions).
func (b *Broker) tool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: the script has ended (%v)", name, err) // a call queued behind the deadline
	}
	decode := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("%s: bad arguments: %v", name, err)
		}
		return nil
	}
	// Only a decision (a rule, the person, the call table) reads as
	// "denied"; fs's not found and its bad requests decided nothing.
	denied := func(d rpc.Decision) error {
		rule := ""
		if d.Rule != "" {
			rule = ", rule " + d.Rule
		}
		switch {
		case d.Reason == rpc.ReasonUnknown:
			return fmt.Errorf("%s: not found: %s", name, d.Detail)
		case d.Rule != RuleWorker && (d.Reason == rpc.ReasonNoRule || d.Reason == rpc.ReasonCallerRole):
			return fmt.Errorf("%s: denied (%s%s): %s", name, d.Reason, rule, d.Detail)
		}
		return fmt.Errorf("%s: failed (%s%s): %s", name, d.Reason, rule, d.Detail)
	}
	// answer is fs's result as the tool's, or its error or denial.
	answer := func(r any, d rpc.Decision, err error) (json.RawMessage, error) {
		switch {
		case err != nil:
			return nil, err
		case !d.Allowed:
			return nil, denied(d)
		}
		return json.Marshal(r)
	}
	switch name {
	case "read_file":
		var a struct {
			Path string `json:"path"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		r, d, err := b.Files.Read(ctx, a.Path, 0, 0)
		switch {
		case err != nil:
			return nil, err
		case !d.Allowed:
			return nil, denied(d)
		case !r.EOF:
			return nil, fmt.Errorf("read_file: %s is larger than %d bytes", a.Path, rpc.MaxData)
		case !utf8.Valid(r.Data):
			return nil, fmt.Errorf("read_file: %s is not UTF-8 text", a.Path)
		}
		return json.Marshal(map[string]string{"content": string(r.Data)})
	case "write_file":
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return answer(b.Files.Write(ctx, a.Path, []byte(a.Content), false))
	case "list_dir":
		var a struct {
			Path string `json:"path"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return answer(b.Files.List(ctx, a.Path))
	case "run_command":
		var a struct {
			Command string `json:"command"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		d, r := b.handle(ctx, a.Command, true)
		if !d.Allowed {
			return nil, denied(d)
		}
		return json.Marshal(map[string]any{"exit_code": r.ExitCode, "stdout": string(r.Stdout), "stderr": string(r.Stderr), "timed_out": r.TimedOut})
	case "fetch":
		var a FetchArgs
		if err := decode(&a); err != nil {
			return nil, err
		}
		return b.fetch(ctx, a)
	}
	return nil, fmt.Errorf("no tool %q (read_file, write_file, list_dir, run_command, fetch)", name)
}
