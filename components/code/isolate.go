// Isolate: the in-process VM runner of Code Mode (DESIGN §6).
//
// Run runs one script, the body of an async function written by a model, in a
// fresh modernc.org/quickjs VM (own runtime and heap, closed when the run ends)
// and returns its JSON result and log lines: nothing else leaves the VM. Runs
// share nothing; the engine is pure Go with an emulated C stack per VM, so they
// may run concurrently and need no LockOSThread.
//
// Globals are the QuickJS built-ins (ECMAScript plus InternalError) without
// eval, Function, SharedArrayBuffer and Atomics, plus pinfold: a non-configurable
// accessor for a frozen {call(name, args) -> Promise, log(...values)}. The
// constructor of the prototypes of the four function kinds is undefined and
// non-configurable, so (() => {}).constructor("...") cannot recover Function.
// No std/os module and no module loader: import() rejects. A log line is the
// values as JSON (else String(v), as a JSON string for an object or a
// function, whose text the script chooses) joined by spaces, with control
// characters and line separators escaped so that one call is one line.
//
// Limits, each a distinct *LimitError:
//   - script_size: checked before a VM exists.
//   - memory: the QuickJS heap limit. Any allocation the limit refuses ends
//     the run (isoheap.go), whether or not the script catches the error
//     QuickJS throws for it; so do an out-of-memory error that escapes the
//     script and an uncaught null, which QuickJS throws when it has no
//     memory left to create an error.
//   - stack: this port of QuickJS counts libc.TLS stack slots, not bytes: one
//     per plain JS call, 3-9 per level through a getter, forEach, a proxy or a
//     generator, one per level of JSON.parse. A slot costs up to ~1.7 KiB of
//     goroutine stack on linux/amd64; Run allows Stack/2048 slots.
//   - deadline: the interrupt handler stops the JS at the deadline with an
//     error no catch or finally block runs for; a pending tool is no longer
//     waited for. A native loop that does not poll the interrupt (indexOf on
//     an array of length 2**32-1 runs for minutes) cannot be stopped: Run then
//     returns 100 ms after the deadline and leaves the VM to its goroutine,
//     which closes it when the loop ends (the worker is killed long before).
//   - tool_calls: call N+1 ends the run (it does not reject, so no catch).
//   - output: bytes of the result JSON plus each log line and its line break,
//     counted as logged: the line that passes the limit ends the run.
//
// Tools run on their own goroutines with a ctx that ends at the deadline and
// when Run returns. A tool that ignores its ctx is not waited for: its
// goroutine leaks until it returns, and its result is dropped.
//
// # Limitations
//
//   - QuickJS throws a stack overflow as a catchable InternalError. A script
//     that catches one and carries on stays within its stack (deeper calls
//     keep failing) but ends with its own outcome, not a LimitError: the
//     engine's stack check calls nothing the isolate can watch, as the heap
//     guard watches the allocator. Rewriting catch clauses would not be
//     enough (Promise.allSettled and finally blocks swallow errors too).
//   - A call's frame (its arguments, locals and operand stack) is C stack
//     memory the heap limit does not count, one per stack slot in use. Its
//     size comes from the function's source, which Validate bounds
//     (MaxParams, MaxArgs, MaxDeclared, MaxPending: some 100 KiB at
//     most; measured, 480 frames of 2,040 pending values and 4,000
//     variables took 40 MB), not from
//     values made at run time: bind makes a closure whose arrays are heap
//     (the engine's bound functions copied their arguments there). So a
//     validated script's frames take at most about Stack/2048 such frames:
//     some 50 MiB at the default 1 MiB stack; the worker's RLIMIT_DATA
//     bounds the whole process. Run itself does not validate.
//   - A thrown InternalError or SyntaxError saying "out of memory" or "stack
//     overflow", or a thrown null, is reported as that limit.
//   - A script can close the function body early ("}); ...; (async () => {")
//     and run code at global scope, which has nothing the body lacks.

package code

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pinfold/pinfold/internal/clip"
	"github.com/pinfold/pinfold/policy"
	"modernc.org/quickjs"
)

// Limits bound one run. Zero values are invalid (Run refuses them), except
// ToolCalls 0 meaning "no tool calls allowed".
type Limits struct {
	Memory int64 // bytes of VM heap, at least 1 MiB (a fresh VM uses ~200 KiB)
	// Stack is bytes of VM stack, 64 KiB to 40 MiB: a QuickJS stack slot (one
	// per plain JS call) per 2 KiB, so 1 MiB allows ~500 levels of recursion.
	Stack      int64
	Deadline   time.Duration // wall clock from the start of Run
	ToolCalls  int           // pinfold.call budget
	Output     int           // bytes of result JSON plus log lines together
	ScriptSize int           // bytes of script
}

// Tool serves pinfold.call(name, args): args is the JSON of the script's
// argument (or "null"); it returns the JSON result or an error whose message
// becomes the rejected promise's Error message. It gets a ctx that ends at the
// deadline.
type Tool func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

// Result is what leaves the VM.
type Result struct {
	Value     json.RawMessage `json:"value"` // the script's return value as JSON; "null" for undefined
	Logs      []string        `json:"logs"`
	ToolCalls int             `json:"tool_calls"`
}

// LimitError is a limit the run broke; Limit is one of "memory", "stack",
// "deadline", "tool_calls", "output", "script_size".
type LimitError struct {
	Limit  string
	Detail string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("code: %s limit exceeded: %s", e.Limit, e.Detail)
}

// RejectedError is a script the static pass (Validate) rejects: Run does
// not start it.
type RejectedError struct{ Findings []Finding }

func (e *RejectedError) Error() string {
	msg := "code: the script was rejected: " + e.Findings[0].String()
	if n := len(e.Findings) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// ScriptError is an uncaught exception or a rejected result promise: Message
// (one line: escaped as a log line is, and bounded) and, where QuickJS
// gives it, Stack (line numbers of the user's script, 1-based; lines
// apart, each escaped as a log line is, bounded too).
type ScriptError struct {
	Message string
	Stack   string
}

func (e *ScriptError) Error() string { return "code: script failed: " + e.Message }

const (
	isoMinMemory = policy.CodeMinMemory
	isoSlotBytes = 2 << 10
	isoMinStack  = policy.CodeMinStack
	isoMaxStack  = policy.CodeMaxStack // 20000 slots: Go aborts at ~40000 on arm64
	isoMaxDepth  = 1000                // JSON nesting that may cross the bridge
	// Bounds on what of an exception leaves the VM, and on a tool's name.
	isoMaxMessage   = 4 << 10
	isoMaxStackText = 16 << 10
	isoMaxToolName  = 256
	isoGrace        = 100 * time.Millisecond
	isoPrefix       = "(async function () {" // the script follows on the same line
	isoSuffix       = "\n})"
)

// isoMaxArgs bounds a call's argument JSON: 1 MiB of content (what one fs
// write carries), JSON-escaped at its worst (six bytes a byte), and room
// for the rest. A larger one is the script's error, which it can catch;
// unchecked, the worker's line to its parent was refused as a broken
// channel.
const isoMaxArgs = 6<<20 + 64<<10

// Run runs script as the body of an async function in a fresh VM and returns
// its JSON result and logs. A script Validate rejects is not run: a
// *RejectedError. Its other errors are *LimitError, *ScriptError, or plain
// errors for bad Limits, the end of ctx, a tool that panicked and failures of
// the VM itself. With a LimitError or ScriptError it also returns the logs and
// tool calls so far in a Result with a nil Value, unless the VM had to be
// abandoned at the deadline. A nil tool fails every call.
func Run(ctx context.Context, script string, lim Limits, tool Tool) (*Result, error) {
	if err := isoCheckLimits(lim); err != nil {
		return nil, err
	}
	if len(script) > lim.ScriptSize {
		return nil, &LimitError{"script_size", fmt.Sprintf("the script has %d bytes, the limit is %d", len(script), lim.ScriptSize)}
	}
	// The static pass also bounds what the VM cannot see (a call's frame
	// lives outside its heap), so Run makes it itself: no caller can run
	// a script without it. Callers make it first too, to answer early.
	if fs := Validate(script); fs != nil {
		return nil, &RejectedError{Findings: fs}
	}
	return runVM(ctx, script, lim, tool)
}

// runVM is Run without the static pass: the VM's own defenses, which the
// tests try on scripts Validate would reject, so that each layer is
// known to hold alone.
func runVM(ctx context.Context, script string, lim Limits, tool Tool) (*Result, error) {
	deadline := time.Now().Add(lim.Deadline)
	if err := isoCheckLimits(lim); err != nil {
		return nil, err
	}
	if len(script) > lim.ScriptSize {
		return nil, &LimitError{"script_size", fmt.Sprintf("the script has %d bytes, the limit is %d", len(script), lim.ScriptSize)}
	}
	if tool == nil {
		tool = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("no tools are available")
		}
	}
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	st := &isoState{ctx: runCtx, parent: ctx, lim: lim, tool: tool, deadline: deadline,
		results: make(chan isoToolResult, 16), done: make(chan struct{}), logs: []string{}}
	type outcome struct {
		res *Result
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		defer close(st.done)
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{nil, fmt.Errorf("code: isolate panicked: %v", p)}
			}
			out <- o
		}()
		o.res, o.err = st.run(script)
	}()

	select {
	case o := <-out:
		return o.res, o.err
	case <-time.After(time.Until(deadline) + isoGrace):
	case <-ctx.Done():
		select {
		case o := <-out:
			return o.res, o.err
		case <-time.After(isoGrace):
		}
		if time.Now().Before(deadline) {
			return nil, fmt.Errorf("code: run: %w (the VM did not stop and was abandoned)", context.Cause(ctx))
		}
	}
	return nil, &LimitError{"deadline", fmt.Sprintf("the VM did not stop within %v of its %v deadline (a native loop that does not poll the interrupt) and was abandoned", isoGrace, lim.Deadline)}
}

func isoCheckLimits(l Limits) error {
	var bad []string
	check := func(ok bool, format string, v any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, v))
		}
	}
	check(l.Memory >= isoMinMemory, "Memory is %d, below 1 MiB, the least a VM runs in", l.Memory)
	check(l.Stack >= isoMinStack && l.Stack <= isoMaxStack, "Stack is %d, outside 64 KiB..40 MiB", l.Stack)
	check(l.Deadline > 0, "Deadline is %v, not positive", l.Deadline)
	check(l.ToolCalls >= 0, "ToolCalls is %d, negative", l.ToolCalls)
	check(l.Output > 0, "Output is %d, not positive", l.Output)
	check(l.ScriptSize > 0, "ScriptSize is %d, not positive", l.ScriptSize)
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("code: invalid limits: %s", strings.Join(bad, "; "))
}

// isoToolResult is what a tool goroutine hands back to the VM goroutine.
type isoToolResult struct {
	id       int
	name     string
	value    json.RawMessage
	err      error
	panicked any
}

// isoState is one run. Only the VM goroutine touches it; the tool goroutines
// use only tool, ctx, results and done.
type isoState struct {
	ctx      context.Context // ends at the deadline, with parent, or when Run returns
	parent   context.Context
	lim      Limits
	tool     Tool
	deadline time.Time
	results  chan isoToolResult
	done     chan struct{} // closed when the VM goroutine ends

	vm                     *quickjs.VM
	heap                   *isoHeap
	drainCut               bool // the last drain stopped at its bound with jobs left
	slots                  int
	logs                   []string
	outBytes, calls, still int // output so far, tool calls started, tool calls unsettled
	end                    *isoOutcome
}

// isoOutcome decides a run: a result JSON or an error.
type isoOutcome struct {
	value json.RawMessage
	err   error
}

// run creates the VM, runs the script to its end and closes the VM.
func (st *isoState) run(script string) (*Result, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("code: new VM: %w", err)
	}
	heap, release, err := isoGuardHeap(vm)
	if err != nil {
		vm.Close()
		return nil, err
	}
	st.vm, st.heap = vm, heap
	defer release() // after Close, which may still allocate
	defer vm.Close()
	defer context.AfterFunc(st.ctx, vm.Interrupt)()
	vm.SetMemoryLimit(uintptr(st.lim.Memory))
	st.slots = int(st.lim.Stack / isoSlotBytes)
	vm.SetMaxStackSize(uintptr(st.slots))
	vm.SetCanBlock(false)
	for name, fn := range map[string]quickjs.HostFunc{"isoGoCall": st.goCall, "isoGoLog": st.goLog, "isoGoEnd": st.goEnd} {
		if err := vm.RegisterHostFunc(name, fn); err != nil {
			return nil, fmt.Errorf("code: register %s: %w", name, err)
		}
	}
	// The values are freed before Close, which wants the heap empty.
	var entry, fn quickjs.Value
	if st.enter(func() (err error) { entry, err = vm.EvalBytecodeValue(isoGlueBytecode); return err }) {
		defer entry.Free()
		if st.enter(func() (err error) { fn, err = vm.EvalValue(isoPrefix+script+isoSuffix, quickjs.EvalGlobal); return err }) {
			defer fn.Free()
			if st.enter(func() error { _, err := entry.Call(quickjs.UndefinedValue, "start", fn); return err }) {
				st.loop(entry)
			}
		}
	}
	return st.result()
}

// loop runs jobs and settles tool calls until the run is decided.
func (st *isoState) loop(entry quickjs.Value) {
	for st.enter(func() error { st.drainCut = false; _, err := st.vm.ExecutePendingJobs(); return err }) {
		if st.drainCut {
			continue // jobs are left: the deadline, not the drain's bound, ends a script that keeps making them
		}
		if st.still == 0 {
			st.decide(isoOutcome{err: &ScriptError{Message: "the script's promise never settles: it awaits something no pending tool call can resolve"}})
			return
		}
		select {
		case r := <-st.results:
			if !st.settle(entry, r) {
				return
			}
		case <-st.ctx.Done():
			st.decide(isoOutcome{})
			return
		}
	}
}

// settle hands one tool result to the promise that waits for it.
func (st *isoState) settle(entry quickjs.Value, r isoToolResult) bool {
	st.still--
	if r.panicked != nil {
		st.decide(isoOutcome{err: fmt.Errorf("code: tool %q panicked: %v", r.name, r.panicked)})
		return false
	}
	depth := min(isoMaxDepth, st.slots/2) // JSON.parse takes a stack slot per level
	ok, payload := true, "null"
	switch {
	case r.err != nil:
		ok, payload = false, r.err.Error()
	case len(r.value) == 0:
	case int64(len(r.value)) > st.lim.Memory:
		ok, payload = false, fmt.Sprintf("pinfold.call(%q): the result has %d bytes, more than the VM's memory", r.name, len(r.value))
	case isoDepth(r.value) > depth:
		ok, payload = false, fmt.Sprintf("pinfold.call(%q): the result nests deeper than %d levels", r.name, depth)
	case !json.Valid(r.value):
		ok, payload = false, fmt.Sprintf("pinfold.call(%q): the tool returned invalid JSON", r.name)
	default:
		payload = string(r.value)
	}
	return st.enter(func() error { _, err := entry.Call(quickjs.UndefinedValue, "settle", r.id, ok, payload); return err })
}

// enter makes one call into the VM within what is left of the deadline and
// reports whether the run goes on.
func (st *isoState) enter(f func() error) bool {
	left := time.Until(st.deadline)
	if st.ctx.Err() != nil || left <= 0 {
		st.decide(isoOutcome{})
	}
	if st.end != nil {
		return false
	}
	st.vm.SetEvalTimeout(left)
	err := f()
	if _, refused := st.heap.refusal(); refused {
		st.decide(isoOutcome{}) // decide makes it the memory limit
	}
	var qe *quickjs.Error
	switch {
	case st.end != nil:
		return false
	case err == nil:
		return true
	case !errors.As(err, &qe):
		if strings.HasPrefix(err.Error(), "quickjs: aborted draining") {
			st.drainCut = true // a bound on the jobs of one drain, not of the run
			return true
		}
		st.decide(isoOutcome{err: fmt.Errorf("code: VM: %w", err)})
		return false
	}
	kind := "throw"
	switch {
	case qe.Error() == "null":
		kind = "null"
	case qe.Name == "InternalError" || qe.Name == "SyntaxError":
		kind = map[string]string{"out of memory": "memory", "stack overflow": "stack"}[qe.Message]
	}
	text := qe.Name + ": " + qe.Message
	if qe.Name == "" || qe.Message == "" {
		text = qe.Name + qe.Message
	}
	st.decide(st.outcome(kind, text, qe.Stack))
	return false
}

// outcome turns what isoGoEnd reports into an outcome: kind "ok" (text is the
// result JSON), "json" (the result is not JSON), "throw", "null" (an uncaught
// null), "memory" or "stack".
func (st *isoState) outcome(kind, text, stack string) isoOutcome {
	memory := fmt.Sprintf("the script ran out of its %d-byte heap", st.lim.Memory)
	switch kind {
	case "ok":
		return isoOutcome{value: json.RawMessage(text)}
	case "memory":
		return isoOutcome{err: &LimitError{"memory", memory}}
	case "null":
		return isoOutcome{err: &LimitError{"memory", memory + " (it ended with an uncaught null, which QuickJS throws when it has no memory to create an error)"}}
	case "stack":
		return isoOutcome{err: &LimitError{"stack", fmt.Sprintf("the script overflowed its %d-byte stack (%d QuickJS slots)", st.lim.Stack, st.slots)}}
	case "json":
		return isoOutcome{err: &ScriptError{Message: isoOneLine(text, isoMaxMessage)}}
	}
	return isoOutcome{err: &ScriptError{Message: isoOneLine(text, isoMaxMessage), Stack: clip.Bytes(isoStack(stack), isoMaxStackText)}}
}

// isoOneLine is s escaped as a log line is (isoEscape), cut once it has
// n bytes: an exception's message is the script's text, and with its
// line breaks it could pass for more lines of what is around it (the
// logs after execute_code's error).
func isoOneLine(s string, n int) string {
	var b strings.Builder
	for i, r := range s {
		if b.Len() >= n {
			return b.String() + fmt.Sprintf(" … (%d more bytes)", len(s)-i)
		}
		b.WriteString(isoEscape(string(r)))
	}
	return b.String()
}

// decide ends the run with o unless it is decided already. Once the deadline
// passed or ctx ended, that decides instead (o may be empty then): an interrupt
// inside an async function turns into an ordinary rejection, which must not
// pass for the script's outcome.
func (st *isoState) decide(o isoOutcome) {
	switch {
	case st.end != nil:
		return
	case st.parent.Err() != nil && time.Now().Before(st.deadline):
		o = isoOutcome{err: fmt.Errorf("code: run: %w", context.Cause(st.parent))}
	case st.ctx.Err() != nil || !time.Now().Before(st.deadline):
		o = isoOutcome{err: &LimitError{"deadline", fmt.Sprintf("the script ran past its %v deadline", st.lim.Deadline)}}
	default:
		if why, refused := st.heap.refusal(); refused {
			o = isoOutcome{err: &LimitError{"memory", fmt.Sprintf("the script ran out of its %d-byte heap: %s", st.lim.Memory, why)}}
		}
	}
	st.end = &o
}

// abort ends the run from a host function: the interrupt makes the engine
// throw an error that no catch or finally block runs for, as soon as the host
// function returns.
func (st *isoState) abort(o isoOutcome) (any, error) {
	st.decide(o)
	st.vm.Interrupt()
	return nil, nil
}

func (st *isoState) result() (*Result, error) {
	res := &Result{Logs: st.logs, ToolCalls: st.calls}
	var le *LimitError
	var se *ScriptError
	switch e := st.end; {
	case e == nil:
		return nil, errors.New("code: bug: the run ended undecided")
	case errors.As(e.err, &le) || errors.As(e.err, &se):
		return res, e.err
	case e.err != nil:
		return nil, e.err
	case len(e.value)+st.outBytes > st.lim.Output:
		return res, &LimitError{"output", fmt.Sprintf("the result has %d bytes and the logs %d, more than %d together", len(e.value), st.outBytes, st.lim.Output)}
	}
	res.Value = st.end.value
	return res, nil
}

// goCall starts pinfold.call: isoGoCall(name, argsJSON) returns the id the
// result settles.
func (st *isoState) goCall(args []any) (any, error) {
	name, ok1 := isoArg(args, 0)
	js, ok2 := isoArg(args, 1)
	switch {
	case !ok1 || !ok2:
		return nil, errors.New("pinfold.call: bad arguments")
	case len(name) > isoMaxToolName:
		return nil, fmt.Errorf("pinfold.call: the tool name has %d bytes, more than %d", len(name), isoMaxToolName)
	case st.calls >= st.lim.ToolCalls:
		return st.abort(isoOutcome{err: &LimitError{"tool_calls", fmt.Sprintf("call %d (of tool %q) is over the budget of %d", st.calls+1, name, st.lim.ToolCalls)}})
	case len(js) > isoMaxArgs:
		return nil, fmt.Errorf("pinfold.call(%q): the argument has %d bytes as JSON, more than the %d one call carries", name, len(js), isoMaxArgs)
	case isoDepth([]byte(js)) > isoMaxDepth:
		return nil, fmt.Errorf("pinfold.call(%q): the argument nests deeper than %d levels", name, isoMaxDepth)
	case !json.Valid([]byte(js)) || !utf8.ValidString(name):
		return nil, fmt.Errorf("pinfold.call(%q): the argument is not valid JSON", name)
	}
	st.calls++
	st.still++
	id := st.calls
	go func() {
		r := isoToolResult{id: id, name: name}
		defer func() {
			r.panicked = recover()
			select {
			case st.results <- r:
			case <-st.done:
			}
		}()
		r.value, r.err = st.tool(st.ctx, name, json.RawMessage(js))
	}()
	return id, nil
}

// goLog takes one rendered line of pinfold.log.
func (st *isoState) goLog(args []any) (any, error) {
	line, ok := isoArg(args, 0)
	if !ok {
		return nil, errors.New("pinfold.log: bad arguments")
	}
	// Escaping only lengthens a line: one already past the limit is not
	// escaped (a line of the VM's whole heap took seconds and several
	// times the heap to escape, in a host function the deadline cannot
	// interrupt).
	if st.outBytes+len(line)+1 > st.lim.Output {
		return st.abort(isoOutcome{err: &LimitError{"output", fmt.Sprintf("the logs reached at least %d bytes, more than the %d-byte output limit", st.outBytes+len(line)+1, st.lim.Output)}})
	}
	line = isoEscape(line)
	if st.outBytes += len(line) + 1; st.outBytes > st.lim.Output {
		return st.abort(isoOutcome{err: &LimitError{"output", fmt.Sprintf("the logs reached %d bytes, more than the %d-byte output limit", st.outBytes, st.lim.Output)}})
	}
	st.logs = append(st.logs, line)
	return nil, nil
}

// goEnd decides the run: isoGoEnd(kind, text, stack), see outcome. Nothing of
// the script runs after it.
func (st *isoState) goEnd(args []any) (any, error) {
	kind, _ := isoArg(args, 0)
	text, ok := isoArg(args, 1)
	stack, _ := isoArg(args, 2)
	if kind == "ok" && !ok {
		kind, text = "json", "the result is not JSON"
	}
	return st.abort(st.outcome(kind, text, stack))
}

// isoGlueBytecode is isoGlue compiled by this QuickJS (isoglue.bc): a
// worker lives for one script, and parsing the glue took a tenth of its
// CPU. TestGlueBytecode fails when the file is not what isoGlue compiles
// to now and rewrites it with -update-glue. The bytes are this package's
// own, never input: QuickJS trusts the bytecode it loads.
//
//go:embed isoglue.bc
var isoGlueBytecode []byte

// isoGlue runs before the script. It takes the host functions off the global
// object, removes eval, Function, SharedArrayBuffer and Atomics, neutralises
// the function constructors, installs pinfold, and returns the entry Go calls:
// entry("start", fn) runs the script, entry("settle", id, ok, payload) settles
// a tool call. It keeps its own references to the built-ins it uses and never
// names a global after setup (a script can redefine even undefined), so that
// replacing JSON.stringify or Promise.prototype.then does not change the
// bridge. Its function names start with isoJS, which isoStack drops.
const isoGlue = `(() => {
"use strict";
const g = globalThis, goCall = g.isoGoCall, goLog = g.isoGoLog, goEnd = g.isoGoEnd;
const getProto = Object.getPrototypeOf, def = Object.defineProperty, freeze = Object.freeze;
const apply = Reflect.apply, stringify = JSON.stringify, parse = JSON.parse, Str = String;
const P = Promise, then = P.prototype.then, Err = Error, TypeErr = TypeError;
const limitProtos = [InternalError.prototype, SyntaxError.prototype];
for (const k of ["isoGoCall", "isoGoLog", "isoGoEnd", "eval", "Function", "SharedArrayBuffer", "Atomics"]) delete g[k];
for (const f of [function () {}, async function () {}, function* () {}, async function* () {}])
  def(getProto(f), "constructor", {value: void 0, writable: false, enumerable: false, configurable: false});
// bind makes a closure, not the engine's bound function: calling one of
// those copies its bound arguments and the call's into C stack memory
// the heap limit does not count, and a chain of them grows that
// quadratically (a hunt used 887 MB under a 64 MiB limit). The closure's
// arrays are heap.
const construct = Reflect.construct, hasInstance = Symbol.hasInstance, FnProto = getProto(function () {});
const isoJSBind = function (thisArg, ...bound) {
  const fn = this;
  if (typeof fn !== "function") throw new TypeErr("bind: not a function");
  const isoJSBound = function (...args) {
    const all = [];
    for (let i = 0; i < bound.length; i++) def(all, i, {value: bound[i], writable: true, enumerable: true, configurable: true});
    for (let i = 0; i < args.length; i++) def(all, bound.length + i, {value: args[i], writable: true, enumerable: true, configurable: true});
    return new.target === void 0 ? apply(fn, thisArg, all) : construct(fn, all, new.target === isoJSBound ? fn : new.target);
  };
  const name = fn.name, length = fn.length;
  def(isoJSBound, "name", {value: "bound " + (typeof name === "string" ? name : ""), configurable: true});
  def(isoJSBound, "length", {value: typeof length === "number" && length > bound.length ? length - bound.length : 0, configurable: true});
  def(isoJSBound, hasInstance, {value: (v) => v instanceof fn, configurable: true});
  def(isoJSBound, "prototype", {value: void 0}); // as a bound function has none
  return isoJSBound;
};
def(FnProto, "bind", {value: isoJSBind, writable: true, enumerable: false, configurable: true});
const pending = Object.create(null);
const isoJSLimit = (e) => {
  try {
    if (e === null || typeof e !== "object" || (getProto(e) !== limitProtos[0] && getProto(e) !== limitProtos[1])) return "";
    return e.message === "out of memory" ? "memory" : e.message === "stack overflow" ? "stack" : "";
  } catch (x) { return ""; }
};
const isoJSCheck = (e) => { const l = isoJSLimit(e); if (l !== "") goEnd(l, "", ""); };
// undefined, a symbol and a bigint that JSON cannot spell print as the
// engine spells them; an object's or a function's text is the script's
// own (toString), so it is quoted: a log line starts with JSON or with
// one of those, never with text such as "launcher: error: ...".
const isoJSRender = (v) => {
  try { const s = stringify(v); if (typeof s === "string") return s; } catch (e) { isoJSCheck(e); }
  const t = typeof v;
  try { const s = Str(v); return t === "object" || t === "function" ? stringify(s) : s; } catch (e) { isoJSCheck(e); return "[unprintable]"; }
};
const isoJSDescribe = (e) => {
  try {
    if (e !== null && typeof e === "object" && e instanceof Err) {
      const name = Str(e.name), msg = Str(e.message), st = e.stack;
      return [msg === "" ? name : name + ": " + msg, typeof st === "string" ? st : ""];
    }
    return [typeof e === "string" ? e : isoJSRender(e), ""];
  } catch (x) { isoJSCheck(x); return ["an exception that cannot be printed", ""]; }
};
const isoJSReplacer = (k, v) => {
  const t = typeof v;
  if (t !== "function" && t !== "symbol" && t !== "bigint") return v;
  throw new TypeErr((k === "" ? "it" : "property " + stringify(k)) + " is a " + t);
};
const isoJSToJSON = (v, what) => {
  let s;
  try { s = stringify(v, isoJSReplacer); } catch (e) { isoJSCheck(e); throw new TypeErr(what + " is not JSON: " + isoJSDescribe(e)[0]); }
  return s === void 0 ? "null" : s;
};
const isoJSCall = (name, args) => {
  if (typeof name !== "string") throw new TypeErr("pinfold.call: the tool name must be a string");
  const json = isoJSToJSON(args, "pinfold.call: the argument");
  let fns;
  const p = new P((res, rej) => { fns = [res, rej]; });
  pending[goCall(name, json)] = fns;
  return p;
};
const isoJSLog = (...vs) => {
  let line = "";
  for (let i = 0; i < vs.length; i++) line += (i > 0 ? " " : "") + isoJSRender(vs[i]);
  goLog(line);
};
const isoJSOk = (v) => {
  let json;
  try { json = isoJSToJSON(v, "the result"); } catch (e) { return goEnd("json", Str(e.message), ""); }
  goEnd("ok", json, "");
};
const isoJSFail = (e) => { const d = isoJSDescribe(e); goEnd(e === null ? "null" : isoJSLimit(e) || "throw", d[0], d[1]); };
const isoJSSettle = (id, ok, payload) => {
  const f = pending[id];
  delete pending[id];
  if (!ok) return f[1](new Err(payload));
  let v;
  try { v = parse(payload); } catch (e) { isoJSCheck(e); return f[1](e); }
  f[0](v);
};
const bridge = freeze({call: freeze(isoJSCall), log: freeze(isoJSLog)});
// An accessor: QuickJS lets defineProperty replace the value of a non-configurable
// data property of the global object (even NaN), but not an accessor.
const isoJSPinfold = () => bridge;
def(g, "pinfold", {get: freeze(isoJSPinfold), set: void 0, enumerable: false, configurable: false});
const isoJSStart = (fn) => { apply(then, fn(), [isoJSOk, isoJSFail]); };
const isoJSEntry = (op, a, b, c) => op === "start" ? isoJSStart(a) : isoJSSettle(a, b, c);
return isoJSEntry;
})()`

func isoArg(args []any, i int) (string, bool) {
	if i >= len(args) {
		return "", false
	}
	s, ok := args[i].(string)
	return s, ok
}

// isoDepth returns how deep JSON text nests; it does not validate it.
func isoDepth(b []byte) int {
	depth, most, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = c == '\\', c != '"'
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}

// isoEscape escapes control characters and line separators so that one log
// line cannot pass for two.
func isoEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 && r != '\t' || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || isoBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isoBidi reports the bidirectional controls, which can make a line
// read differently from what it holds.
func isoBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// isoStack keeps the frames of the user's script in a QuickJS stack trace,
// names it <script>, corrects the columns of its first line, which
// follows isoPrefix, and escapes each line as a log line is. It stops once it has more than isoMaxStackText bytes:
// a script can make its error's stack as large as its heap, and this runs
// where the deadline cannot interrupt it.
func isoStack(s string) string {
	var out []string
	kept := 0
	for rest := s; rest != "" && kept <= isoMaxStackText; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimSpace(line) == "" || strings.Contains(line, "isoJS") {
			continue
		}
		line = strings.ReplaceAll(line, "<eval>", "<script>")
		if before, after, ok := strings.Cut(line, "<script>:1:"); ok {
			n := len(after) - len(strings.TrimLeft(after, "0123456789"))
			if col, err := strconv.Atoi(after[:n]); err == nil && col > len(isoPrefix) {
				line = before + "<script>:1:" + strconv.Itoa(col-len(isoPrefix)) + after[n:]
			}
		}
		line = isoEscape(line) // the script can set e.stack: no control character leaves raw
		out = append(out, line)
		kept += len(line) + 1
	}
	return strings.Join(out, "\n")
}

// isoEscapeLines escapes each line of s as a log line is (isoEscape),
// keeping the line feeds between them, once s is cut to n bytes: a
// worker's stack trace, which it may have written whole.
func isoEscapeLines(s string, n int) string {
	lines := strings.Split(clip.Bytes(s, n), "\n")
	for i, l := range lines {
		lines[i] = isoEscape(l)
	}
	return clip.Bytes(strings.Join(lines, "\n"), n)
}
