package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/quickjs"
)

// isoLimits are roomy limits for tests that are not about a limit.
func isoLimits() Limits {
	return Limits{Memory: 32 << 20, Stack: 4 << 20, Deadline: 3 * time.Second, ToolCalls: 20, Output: 1 << 20, ScriptSize: 1 << 16}
}

// isoTool is a fake tool: "echo" returns {"name","args"}, "fail" fails with
// the message in args, "add" adds the numbers in args, "hang" waits for ctx,
// "deaf" ignores ctx until the test ends, "raw" returns args.raw verbatim.
func isoTool(t *testing.T) Tool {
	deaf := make(chan struct{})
	t.Cleanup(func() { close(deaf) })
	return func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		switch name {
		case "echo":
			return json.Marshal(map[string]any{"name": name, "args": args})
		case "fail":
			var msg string
			_ = json.Unmarshal(args, &msg)
			return nil, errors.New(msg)
		case "add":
			var ns []float64
			if err := json.Unmarshal(args, &ns); err != nil {
				return nil, err
			}
			sum := 0.0
			for _, n := range ns {
				sum += n
			}
			return json.Marshal(sum)
		case "hang":
			<-ctx.Done()
			return nil, ctx.Err()
		case "deaf":
			<-deaf
			return json.RawMessage("1"), nil
		case "raw":
			var a struct{ Raw string }
			_ = json.Unmarshal(args, &a)
			return json.RawMessage(a.Raw), nil
		case "panic":
			panic("tool bug")
		}
		return nil, fmt.Errorf("no tool %q", name)
	}
}

// isoRun runs script in the VM without the static pass: these tests
// try the VM's own defenses, many with scripts Validate rejects.
func isoRun(t *testing.T, script string, lim Limits) (*Result, error) {
	t.Helper()
	return runVM(context.Background(), script, lim, isoTool(t))
}

// Run makes the static pass itself: a script Validate rejects is not run
// (its tool is never called), whoever calls Run; one it accepts runs.
func TestRunValidates(t *testing.T) {
	called := false
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		called = true
		return json.RawMessage(`1`), nil
	}
	params := make([]string, 300)
	for i := range params {
		params[i] = fmt.Sprintf("p%d", i)
	}
	for _, script := range []string{
		`await pinfold.call("x"); return eval("1")`,
		`await pinfold.call("x"); return globalThis`,
		`await pinfold.call("x"); function f(` + strings.Join(params, ",") + `) {}; return 1`,
		`await pinfold.call("x"); return (`,
	} {
		res, err := Run(context.Background(), script, isoLimits(), tool)
		var re *RejectedError
		if !errors.As(err, &re) || len(re.Findings) == 0 || res != nil {
			t.Errorf("%.60s: %v %+v, want a RejectedError", script, err, res)
		}
	}
	if called {
		t.Error("a rejected script ran (its tool was called)")
	}
	res, err := Run(context.Background(), `return (await pinfold.call("x")) + 1`, isoLimits(), tool)
	if err != nil || string(res.Value) != "2" || !called {
		t.Errorf("an accepted script: %+v %v (tool called %v)", res, err, called)
	}
}

// isoOK runs script and wants its result JSON to be want.
func isoOK(t *testing.T, script, want string) *Result {
	t.Helper()
	res, err := isoRun(t, script, isoLimits())
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if string(res.Value) != want {
		t.Fatalf("%s: got %s, want %s", script, res.Value, want)
	}
	return res
}

// isoLimit runs script and wants the run to break limit within budget.
func isoLimit(t *testing.T, script string, lim Limits, limit string) *LimitError {
	t.Helper()
	start := time.Now()
	res, err := isoRun(t, script, lim)
	took := time.Since(start)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		v := ""
		if res != nil {
			v = string(res.Value)
		}
		t.Fatalf("%s: got %v (value %s), want a %s LimitError", script, err, v, limit)
	}
	if took > lim.Deadline+time.Second {
		t.Errorf("%s: Run took %v, deadline %v", script, took, lim.Deadline)
	}
	return le
}

func isoScriptErr(t *testing.T, script string, want string) *ScriptError {
	t.Helper()
	_, err := isoRun(t, script, isoLimits())
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, want) {
		t.Fatalf("%s: got %v, want a ScriptError containing %q", script, err, want)
	}
	return se
}

func TestIsolateValues(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"return 1", "1"},
		{"return -1.5e300", "-1.5e+300"},
		{"return 'hé\\u2028\"'", `"hé` + "\u2028" + `\""`},
		{"return true", "true"},
		{"return false", "false"},
		{"return null", "null"},
		{"", "null"},
		{"return undefined", "null"},
		{"return [1, 'a', null, [], {}]", `[1,"a",null,[],{}]`},
		{"return {a: {b: [1, {c: 'd'}]}, e: undefined}", `{"a":{"b":[1,{"c":"d"}]}}`},
		{"return NaN", "null"},
		{"return new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"return {toJSON() { return 7 }}", "7"},
		{"return '\\ud800'", `"\ud800"`},
		{"class A { constructor(x) { this.x = x } get y() { return this.x * 2 } }\nreturn new A(3).y", "6"},
		{"const mk = () => { let n = 0; return () => ++n }; const c = mk(); c(); c(); return c()", "3"},
		{"function* g() { yield 1; yield 2 }; return [...g()]", "[1,2]"},
		{"async function* g() { yield 1; yield 2 }; const r = []; for await (const x of g()) r.push(x); return r", "[1,2]"},
		{"return await new Promise(r => r(5))", "5"},
		{"return Promise.resolve(9)", "9"},
		{"return [1,2,3].map(x => x * 2).reduce((a, b) => a + b)", "12"},
		{"return JSON.parse('{\"a\":[1,2]}').a", "[1,2]"},
		{"return Object.entries({a: 1}).flat()", `["a",1]`},
		{"return typeof pinfold.call + typeof pinfold.log", `"functionfunction"`},
		{"return this === globalThis", "true"},
		{"let x = 1 // a comment at the end", "null"},
	} {
		isoOK(t, c.script, c.want)
	}
}

func TestIsolateToolCalls(t *testing.T) {
	res := isoOK(t, `
const a = await pinfold.call("add", [1, 2]);
const b = await pinfold.call("add", [a, 10]);
const e = await pinfold.call("echo", {x: [b]});
let f;
try { await pinfold.call("fail", "no such file") } catch (err) { f = err instanceof Error && err.message }
const u = await pinfold.call("echo");
return [a, b, e, f, u.args]`, `[3,13,{"args":{"x":[13]},"name":"echo"},"no such file",null]`)
	if res.ToolCalls != 5 {
		t.Errorf("ToolCalls = %d, want 5", res.ToolCalls)
	}

	res = isoOK(t, `
const ps = [];
for (let i = 0; i < 10; i++) ps.push(pinfold.call("add", [i, 100]));
return (await Promise.all(ps)).reduce((a, b) => a + b)`, "1045")
	if res.ToolCalls != 10 {
		t.Errorf("ToolCalls = %d, want 10", res.ToolCalls)
	}

	// A rejected call the script does not handle fails the run.
	isoScriptErr(t, `await pinfold.call("fail", "quota")`, "Error: quota")
	// A tool result that is not JSON rejects the call.
	isoOK(t, `try { await pinfold.call("raw", {raw: "{nope"}) } catch (e) { return e.message }`, `"pinfold.call(\"raw\"): the tool returned invalid JSON"`)
	// Arguments that are not JSON are the script's error, which it can catch.
	isoOK(t, `try { pinfold.call("echo", {f() {}}) } catch (e) { return e.message }`, `"pinfold.call: the argument is not JSON: TypeError: property \"f\" is a function"`)
	isoOK(t, `const o = {}; o.o = o; try { pinfold.call("echo", o) } catch (e) { return e.name }`, `"TypeError"`)
	isoOK(t, `try { pinfold.call(1) } catch (e) { return e.message }`, `"pinfold.call: the tool name must be a string"`)
	// A tool that panics ends the run with an error that is not the script's.
	_, err := isoRun(t, `await pinfold.call("panic")`, isoLimits())
	var se *ScriptError
	var le *LimitError
	if err == nil || errors.As(err, &se) || errors.As(err, &le) || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("panicking tool: got %v", err)
	}
	// No tool at all.
	res, err = Run(context.Background(), `try { await pinfold.call("x") } catch (e) { return e.message }`, isoLimits(), nil)
	if err != nil || string(res.Value) != `"no tools are available"` {
		t.Errorf("nil tool: got %v, %v", res, err)
	}
}

func TestIsolateDeepToolResult(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	script := fmt.Sprintf(`try { await pinfold.call("raw", {raw: %q}) } catch (e) { return e.message }`, deep)
	lim := isoLimits()
	lim.ScriptSize = 1 << 20
	res, err := isoRun(t, script, lim)
	if err != nil || !strings.Contains(string(res.Value), "nests deeper than") {
		t.Fatalf("got %v, %v", res, err)
	}
	// Just within the bound.
	ok := strings.Repeat("[", 900) + strings.Repeat("]", 900)
	isoOK(t, fmt.Sprintf(`let v = await pinfold.call("raw", {raw: %q}), d = 0; while (Array.isArray(v)) { v = v[0]; d++ } return d`, ok), "900")
}

func TestIsolateLogs(t *testing.T) {
	res := isoOK(t, `
pinfold.log("hello", 1, {a: [true]}, null);
pinfold.log();
pinfold.log(undefined, () => 1, Symbol("s"), 10n);
pinfold.log("two\nlines", "x\u2028y");
pinfold.log(String.raw`+"`a\\nb`"+`);
const o = {}; o.o = o; pinfold.log(o);
pinfold.log({toString() { throw 1 }, toJSON() { throw 2 }});
return 0`, "0")
	want := []string{
		`"hello" 1 {"a":[true]} null`,
		``,
		`undefined "() => 1" Symbol(s) 10`,
		`"two\nlines" "x\u2028y"`,
		`"a\\nb"`,
		`"[object Object]"`,
		`[unprintable]`,
	}
	if !reflect.DeepEqual(res.Logs, want) {
		t.Errorf("logs:\n got %q\nwant %q", res.Logs, want)
	}
	// A function's source has real line breaks; they are escaped (in
	// the JSON string it is logged as).
	res = isoOK(t, "pinfold.log(function () {\nreturn 1\n}); return 1", "1")
	if len(res.Logs) != 1 || res.Logs[0] != `"function () {\nreturn 1\n}"` {
		t.Errorf("got %q", res.Logs)
	}
	// Logs come back with a script error too.
	res, err := isoRun(t, `pinfold.log("before"); throw new RangeError("bad")`, isoLimits())
	var se *ScriptError
	if !errors.As(err, &se) || se.Message != "RangeError: bad" || res == nil || len(res.Logs) != 1 {
		t.Errorf("got %v, %v", res, err)
	}
}

// A value JSON cannot spell is logged as String(v), whose text an
// object or a function chooses (toString, Symbol.toPrimitive, an
// array's elements): it is quoted, so that no log line, which code run
// prints on stderr as it is, reads as the launcher's own "launcher:
// error: ..." line.
func TestIsolateLogsCannotForgeLines(t *testing.T) {
	const forged = "launcher: error: code run: code: tool_calls limit exceeded"
	for _, v := range []string{
		`{toJSON() {}, toString() { return F }}`,
		`(() => { const o = {toString() { return F }}; o.o = o; return o })()`,
		`[F, 1n]`,
		`{[Symbol.toPrimitive]() { return F }, toJSON() {}}`,
		`Object.assign(() => 1, {toString() { return F }})`,
		`class { static toString() { return F } }`,
	} {
		res := isoOK(t, fmt.Sprintf("const F = %q; pinfold.log(%s); return 0", forged, v), "0")
		if len(res.Logs) != 1 || !strings.HasPrefix(res.Logs[0], `"`+forged) {
			t.Errorf("log(%s): got %q, want the text quoted", v, res.Logs)
		}
	}
}

func TestIsolateScriptErrors(t *testing.T) {
	se := isoScriptErr(t, "const a = 1;\nfunction f() {\n  throw new TypeError('boom')\n}\nf()", "TypeError: boom")
	if !strings.Contains(se.Stack, "<script>:3:") || !strings.Contains(se.Stack, "<script>:5:") || strings.Contains(se.Stack, "isoJS") {
		t.Errorf("stack %q", se.Stack)
	}
	se = isoScriptErr(t, "null.x", "TypeError")
	if !strings.Contains(se.Stack, "<script>:1:5)") { // columns of line 1 do not count the wrapper
		t.Errorf("stack %q", se.Stack)
	}
	se = isoScriptErr(t, "let x = 1;\n  x = )", "SyntaxError")
	if !strings.Contains(se.Stack, "<script>:2:7") {
		t.Errorf("stack %q", se.Stack)
	}
	isoScriptErr(t, "throw 'plain'", "plain")
	isoScriptErr(t, "throw {code: 7}", `{"code":7}`)
	isoScriptErr(t, "await null; throw new Error('late')", "Error: late")
	isoScriptErr(t, "return Promise.reject(new Error('rej'))", "Error: rej")
	isoScriptErr(t, "const e = new Error('x'); Object.defineProperty(e, 'message', {get() { throw 1 }}); throw e", "cannot be printed")
	// Results that are not JSON.
	isoScriptErr(t, "return () => 1", "the result is not JSON: TypeError: it is a function")
	isoScriptErr(t, "return {f: () => 1}", `the result is not JSON: TypeError: property "f" is a function`)
	isoScriptErr(t, "return Symbol('s')", "the result is not JSON: TypeError: it is a symbol")
	isoScriptErr(t, "return [1n]", `the result is not JSON: TypeError: property "0" is a bigint`)
	isoScriptErr(t, "const o = {}; o.o = o; return o", "the result is not JSON: TypeError: circular reference")
	isoScriptErr(t, "return {toJSON() { throw new Error('nope') }}", "the result is not JSON: Error: nope")
	// Never settling, with nothing that could settle it.
	isoScriptErr(t, "await new Promise(() => {})", "never settles")
	isoScriptErr(t, "return new Promise(() => {})", "never settles")
	isoScriptErr(t, "const p = pinfold.call('add', [1]); await p; await new Promise(() => {})", "never settles")
}

// isoGlobals is the exact set of global names a script sees: the ECMAScript
// built-ins of QuickJS (InternalError is its own) without eval, Function,
// SharedArrayBuffer and Atomics, plus pinfold.
var isoGlobals = []string{
	"AggregateError", "Array", "ArrayBuffer", "BigInt", "BigInt64Array", "BigUint64Array", "Boolean",
	"DataView", "Date", "Error", "EvalError", "FinalizationRegistry", "Float16Array", "Float32Array",
	"Float64Array", "Infinity", "Int16Array", "Int32Array", "Int8Array", "InternalError", "Iterator", "JSON",
	"Map", "Math", "NaN", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect",
	"RegExp", "Set", "String", "Symbol", "SyntaxError", "TypeError", "URIError", "Uint16Array", "Uint32Array",
	"Uint8Array", "Uint8ClampedArray", "WeakMap", "WeakRef", "WeakSet", "decodeURI", "decodeURIComponent",
	"encodeURI", "encodeURIComponent", "escape", "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt",
	"pinfold", "undefined", "unescape",
}

func TestIsolateGlobals(t *testing.T) {
	isoOK(t, "return Object.getOwnPropertyNames(globalThis).sort()", mustJSON(t, isoGlobals))
	isoOK(t, "return Object.getOwnPropertySymbols(globalThis).map(String)", `["Symbol(Symbol.toStringTag)"]`)
	// Control: a bare QuickJS VM has the names the isolate removes.
	v, err := isoBare(t, `["eval", "Function", "SharedArrayBuffer", "Atomics"].every(n => n in globalThis) ? 1 : 0`)
	if err != nil || v != 1 {
		t.Errorf("control: %v, %v", v, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIsolateConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Run(context.Background(), fmt.Sprintf("return (await pinfold.call('add', [%d, 1])) + [1,2,3].length", i), isoLimits(), isoTool(t))
			if err != nil || string(res.Value) != fmt.Sprint(i+4) {
				t.Errorf("%d: %v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
}

// isoBare evaluates js in a bare QuickJS VM: the control for the escapes.
func isoBare(t *testing.T, js string) (any, error) {
	t.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	vm.SetEvalTimeout(5 * time.Second)
	p, err := vm.EvalValue("(async () => { return "+js+" })()", quickjs.EvalGlobal)
	if err != nil {
		return nil, err
	}
	defer p.Free()
	var got any
	var gotErr error
	next, err := p.Then(func(v quickjs.Value) { got, gotErr = v.Any() }, func(v quickjs.Value) { gotErr = quickjs.ErrorFromValue(v) })
	if err != nil {
		t.Fatal(err)
	}
	next.Free()
	if _, err := vm.ExecutePendingJobs(); err != nil {
		t.Fatal(err)
	}
	return got, gotErr
}

func TestIsolateEscapes(t *testing.T) {
	for _, c := range []struct {
		probe   string // an expression that is 1 where the escape works
		want    string // the error name in the isolate
		control bool   // whether the probe works in a bare QuickJS VM
	}{
		{`eval("1")`, "ReferenceError", true},
		{`(0, eval)("1")`, "ReferenceError", true},
		{`globalThis.eval("1")`, "TypeError", true},
		{`Function("return 1")()`, "ReferenceError", true},
		{`new Function("return 1")()`, "ReferenceError", true},
		{`(function () {}).constructor("return 1")()`, "TypeError", true},
		{`(() => {}).constructor("return 1")()`, "TypeError", true},
		{`(class {}).constructor("return 1")()`, "TypeError", true},
		{`[].constructor.constructor("return 1")()`, "TypeError", true},
		{`this.constructor.constructor("return 1")()`, "TypeError", true},
		{`(async () => {}).constructor("return 1")()`, "TypeError", true},
		{`Object.getPrototypeOf(async function () {}).constructor("return 1")()`, "TypeError", true},
		{`(function* () {}).constructor("yield 1")().next().value`, "TypeError", true},
		{`(async function* () {}).constructor("yield 1")().next().then(r => r.value)`, "TypeError", true},
		{`Object.getOwnPropertyDescriptor(Object.getPrototypeOf(() => {}), "constructor").value("return 1")()`, "TypeError", true},
		{`Reflect.construct(Function, ["return 1"])()`, "ReferenceError", true},
		{`Reflect.construct((function* () {}).constructor, ["yield 1"])().next().value`, "TypeError", true},
		{`(Object.defineProperty(Object.getPrototypeOf(() => {}), "constructor", {value: () => () => 1}), (() => {}).constructor()())`, "TypeError", true},
		{`(() => { "use strict"; delete Object.getPrototypeOf(async () => {}).constructor; return 1 })()`, "TypeError", true},
		{`new SharedArrayBuffer(8).byteLength / 8`, "ReferenceError", true},
		{`Atomics.add(new Int32Array(1), 0, 1) + 1`, "ReferenceError", true},
		{`import("os").then(() => 1)`, "ReferenceError", false},
		{`import("std").then(() => 1)`, "ReferenceError", false},
		{`require("fs") && 1`, "ReferenceError", false},
		{`std.open && 1`, "ReferenceError", false},
		{`os.exec && 1`, "ReferenceError", false},
		{`scriptArgs && 1`, "ReferenceError", false},
		{`print && console && 1`, "ReferenceError", false},
		{`(function f() { return f.caller.name })()`, "TypeError", false},
	} {
		script := fmt.Sprintf("try { const r = await (%s); return 'escaped: ' + String(r) } catch (e) { return e.name }", c.probe)
		isoOK(t, script, mustJSON(t, c.want))
		if !c.control {
			continue
		}
		if v, err := isoBare(t, c.probe); err != nil || v != 1 {
			t.Errorf("control %s: got %v, %v in a bare VM, want 1", c.probe, v, err)
		}
	}
	// Uncaught, an escape attempt is an ordinary script error.
	isoScriptErr(t, `(() => {}).constructor("return 1")()`, "TypeError: not a function")
}

func TestIsolateBridgeFrozen(t *testing.T) {
	for _, attack := range []string{
		`pinfold.call = () => 1`,
		`pinfold.log = () => 1`,
		`pinfold.extra = 1`,
		`globalThis.pinfold = {}`,
		`delete globalThis.pinfold`,
		`pinfold.call.x = 1`,
		`Object.defineProperty(pinfold, "call", {value: 1})`,
		`Object.defineProperty(globalThis, "pinfold", {value: 1})`,
		`Object.setPrototypeOf(pinfold, {call: 1})`,
	} {
		isoOK(t, fmt.Sprintf(`"use strict"; try { %s; return "changed" } catch (e) { return e.name }`, attack), `"TypeError"`)
		// In sloppy mode the assignment fails silently, and the bridge still works.
		isoOK(t, fmt.Sprintf(`try { %s } catch (e) {} return [await pinfold.call("add", [1, 1]), Object.keys(pinfold)]`, attack), `[2,["call","log"]]`)
	}
	// Why pinfold is an accessor: QuickJS lets defineProperty replace the value
	// of a non-configurable, non-writable data property of the global object.
	v, err := isoBare(t, `(Object.defineProperty(globalThis, "p", {value: 0, writable: false, configurable: false}),
		Object.defineProperty(globalThis, "p", {value: 1}), p)`)
	if err != nil || v != 1 {
		t.Errorf("bare VM: got %v, %v; if QuickJS now refuses this, pinfold could be a data property again", v, err)
	}
	// Replacing the built-ins the bridge uses does not change it.
	isoOK(t, `
JSON.stringify = () => '"forged"';
JSON.parse = () => "forged";
Promise.prototype.then = function () { throw new Error("forged") };
Array.prototype[Symbol.iterator] = function* () { yield "forged" };
pinfold.log("a", 1);
return {v: await pinfold.call("add", [2, 3])}`, `{"v":5}`)
}

func TestIsolateMemory(t *testing.T) {
	lim := isoLimits()
	lim.Memory = 8 << 20
	for _, script := range []string{
		`const a = []; for (;;) a.push("x".repeat(1000) + a.length)`,
		`const a = []; for (;;) a.push(new Array(1e5).fill(1))`,
		`let s = "x"; for (;;) s = (s + s).split("").join("")`,
		`return "x".repeat(2 ** 28)`,
		`return new ArrayBuffer(1e9)`,
		`const a = []; for (;;) { await null; a.push("y".repeat(1e4) + a.length) }`,
		// A catch that rethrows, a finally, or a catch that fails itself.
		`const a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } catch (e) { throw e }`,
		`const a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } finally { pinfold.log("finally") }`,
		`const a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } catch (e) { a.push(...a) }`,
		`const a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } catch (e) { return a }`,
		`const big = []; for (let i = 0; i < 2000; i++) big.push("z".repeat(1000) + i); return await pinfold.call("echo", big)`,
	} {
		isoLimit(t, script, lim, "memory")
	}
	// Control: the same growth, bounded, fits.
	res, err := isoRun(t, `const a = []; for (let i = 0; i < 1000; i++) a.push("x".repeat(1000) + a.length); return a.length`, lim)
	if err != nil || string(res.Value) != "1000" {
		t.Errorf("control: %v, %v", res, err)
	}
}

// TestIsolateMemoryCaught: an allocation the limit refuses ends the run as
// the memory limit, however the script swallows the error QuickJS throws
// for it (SD-19 once said otherwise). The grow helper fills the heap; each
// script then returns normally if the guard is gone.
func TestIsolateMemoryCaught(t *testing.T) {
	lim := isoLimits()
	lim.Memory = 8 << 20
	const grow = `const grow = () => { const a = []; for (;;) a.push("x".repeat(1000) + a.length) };`
	for _, script := range []string{
		`try { grow() } catch (e) {} return 1`,
		`const got = []; for (let i = 0; i < 2; i++) try { grow() } catch (e) { got.push(e.message) } return got`,
		`try { grow() } catch {} return 1`,
		`for (;;) { try { grow() } finally { return 1 } }`,
		`l: try { grow() } finally { break l } return 1`,
		`await (async () => grow())().catch(() => 0); return 1`,
		`await (async () => grow())().then(null, () => 0); return 1`,
		`await (async () => grow())().finally(() => 0).catch(() => 0); return 1`,
		`const r = await Promise.allSettled([(async () => grow())()]); return r[0].status`,
		`await Promise.any([(async () => grow())(), Promise.resolve(1)]); return 1`,
		`(async () => grow())(); return 1`,                   // an unhandled rejection
		`try { new ArrayBuffer(1e9) } catch (e) {} return 1`, // one large refusal, heap nearly empty
		`try { "x".repeat(2 ** 28) } catch (e) {} return 1`,
		`function* g() { try { yield grow() } catch (e) { yield 1 } } return [...g()]`,
		`try { JSON.parse("[" + "1,".repeat(3e6) + "1]") } catch (e) {} return 1`,
	} {
		isoLimit(t, grow+script, lim, "memory")
	}
	// The error names the first refusal.
	_, err := isoRun(t, `try { new ArrayBuffer(1e9) } catch (e) {} return 1`, lim)
	if le := (*LimitError)(nil); !errors.As(err, &le) || !strings.Contains(le.Detail, "an allocation of 1000000") {
		t.Errorf("a refused ArrayBuffer: %v, want the refused size named", err)
	}
	// Controls: churning through more than the limit in garbage, and a heap
	// filled to about half, end normally. Memory is what they show, so the
	// deadline is long: the churn took over 3 s on a loaded CI machine.
	ctl := lim
	ctl.Deadline = 30 * time.Second
	for script, want := range map[string]string{
		`let n = 0; for (let i = 0; i < 200; i++) n += new Array(1e5).fill(i).length; return n`:      "20000000",
		`const a = []; for (let i = 0; i < 3000; i++) a.push("x".repeat(1000) + i); return a.length`: "3000",
		`try { throw new InternalError("out of memory") } catch (e) { return e.message }`:            `"out of memory"`,
		`const r = await Promise.allSettled([Promise.reject(new Error("no"))]); return r[0].status`:  `"rejected"`,
	} {
		res, err := isoRun(t, script, ctl)
		if err != nil || string(res.Value) != want {
			t.Errorf("control %q: %v, %v; want %s", script, res, err, want)
		}
	}
}

// TestIsolateHeapGuard: the guard is under every VM Run makes, and a VM
// whose runtime it cannot find is refused, not run without it.
func TestIsolateHeapGuard(t *testing.T) {
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	h, release, err := isoGuardHeap(vm)
	if err != nil {
		t.Fatal(err)
	}
	vm.SetMemoryLimit(2 << 20)
	vm.SetEvalTimeout(10 * time.Second) // a backstop; the refusal's interrupt ends the loop
	start := time.Now()
	if _, err := vm.Eval(`try { new ArrayBuffer(4 << 20) } catch (e) {} for (;;) {}`, quickjs.EvalGlobal); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("after the refusal the loop ended with %v after %v; want an interrupt at once", err, time.Since(start))
	}
	if _, ok := h.refusal(); !ok || h.size.Load() < 4<<20 {
		t.Errorf("refusal %v of %d bytes; want the 4 MiB allocation", ok, h.size.Load())
	}
	vm.Close()
	release()
	isoHeapsMu.Lock()
	watched := slices.Contains(slices.Collect(maps.Values(isoHeaps)), h)
	isoHeapsMu.Unlock()
	if watched {
		t.Error("the heap is still watched after release")
	}
	// A second guard under the same runtime finds the guard, not QuickJS's
	// allocator, and refuses.
	vm2, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer vm2.Close()
	_, release2, err := isoGuardHeap(vm2)
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if _, _, err := isoGuardHeap(vm2); err == nil || !strings.Contains(err.Error(), "default allocator") {
		t.Errorf("guarding twice: %v, want a refusal naming the allocator", err)
	}
}

func TestIsolateStack(t *testing.T) {
	lim := isoLimits()
	lim.Stack = 1 << 20
	for _, script := range []string{
		`function f() { return f() + 1 } return f()`,
		`const o = {get x() { return this.x }}; return o.x`,
		`function f() { [1].forEach(f) } f()`,
		`async function f() { await f() } await f()`,
		`return JSON.parse("[".repeat(100000) + "]".repeat(100000))`,
		`let o = {}; for (let i = 0; i < 100000; i++) o = {o}; return o`,
		`function f() { try { return f() + 1 } finally { } } return f()`,
		`function f() { return f() } try { f() } catch (e) { throw e }`,
	} {
		isoLimit(t, script, lim, "stack")
	}
	// Control: recursion well within the limit.
	res, err := isoRun(t, `function f(n) { return n === 0 ? 0 : 1 + f(n - 1) } return f(300)`, lim)
	if err != nil || string(res.Value) != "300" {
		t.Errorf("control: %v, %v", res, err)
	}
	// Depth follows Stack: about one slot (2 KiB) per plain call.
	res, err = isoRun(t, `let d = 0; function f() { d++; f() } try { f() } catch (e) {} return d`, lim)
	if err != nil {
		t.Fatal(err)
	}
	var d int
	if err := json.Unmarshal(res.Value, &d); err != nil || d < 400 || d > 512 {
		t.Errorf("1 MiB of stack recursed %s deep, want 400..512", res.Value)
	}
}

func TestIsolateDeadline(t *testing.T) {
	lim := isoLimits()
	lim.Deadline = 300 * time.Millisecond
	for _, script := range []string{
		`while (true) {}`,
		`while (true) { try { for (;;) {} } catch (e) {} }`,
		`try { while (true) {} } finally { while (true) {} }`,
		`try { while (true) {} } catch (e) { pinfold.log("caught") ; while (true) {} }`,
		`return {get x() { for (;;) {} }}`,
		`return {toJSON() { for (;;) {} }}`,
		`pinfold.log({toJSON() { for (;;) {} }})`,
		`for (;;) await null`,
		`async function spin() { for (;;) await Promise.resolve() } await Promise.all([spin(), spin()])`,
		`return /(a+)+$/.test("a".repeat(40) + "b")`,
		`await pinfold.call("hang")`,
		`await pinfold.call("deaf")`,
		`pinfold.call("deaf"); await new Promise(() => {})`,
	} {
		isoLimit(t, script, lim, "deadline")
	}
	// A native loop that does not poll the interrupt: Run returns anyway,
	// isoGrace after the deadline, and abandons the VM to its goroutine.
	start := time.Now()
	_, err := isoRun(t, `const a = []; a.length = 2 ** 25; return a.indexOf(1)`, lim)
	var le *LimitError
	if took := time.Since(start); !errors.As(err, &le) || !strings.Contains(le.Detail, "abandoned") || took > lim.Deadline+isoGrace+500*time.Millisecond {
		t.Errorf("got %v after %v", err, took)
	}
	// Control: the same loop, smaller, ends in time.
	isoOK(t, `const a = []; a.length = 2 ** 10; return a.indexOf(1)`, "-1")
}

func TestIsolateToolBudget(t *testing.T) {
	lim := isoLimits()
	lim.ToolCalls = 3
	three := `for (let i = 0; i < 3; i++) await pinfold.call("add", [i]);`
	res, err := isoRun(t, three+"return 1", lim)
	if err != nil || res.ToolCalls != 3 {
		t.Fatalf("3 calls: %v, %v", res, err)
	}
	isoLimit(t, three+`await pinfold.call("add", [9])`, lim, "tool_calls")
	isoLimit(t, three+`try { pinfold.call("add", [9]) } catch (e) {} finally { return 1 }`, lim, "tool_calls")
	isoLimit(t, `await Promise.all([1, 2, 3, 4].map(i => pinfold.call("add", [i])))`, lim, "tool_calls")
	lim.ToolCalls = 0
	res, err = isoRun(t, "return 1", lim)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("no calls: %v, %v", res, err)
	}
	le := isoLimit(t, `pinfold.call("add", [1])`, lim, "tool_calls")
	if !strings.Contains(le.Detail, "call 1 ") {
		t.Errorf("detail %q", le.Detail)
	}
}

func TestIsolateOutput(t *testing.T) {
	lim := isoLimits()
	lim.Output = 10000
	isoLimit(t, `for (;;) pinfold.log("x".repeat(100))`, lim, "output")
	isoLimit(t, `for (;;) pinfold.log()`, lim, "output")
	isoLimit(t, `return "x".repeat(10000)`, lim, "output")
	isoLimit(t, `pinfold.log("x".repeat(6000)); return "y".repeat(4000)`, lim, "output")
	res, err := isoRun(t, `for (let i = 0; i < 10; i++) pinfold.log("x".repeat(99)); try { for (;;) pinfold.log("more") } catch (e) {} return 1`, lim)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "output" || res == nil || len(res.Logs) < 10 {
		t.Errorf("got %v, %v", res, err)
	}
	// Control: just within.
	res, err = isoRun(t, `pinfold.log("x".repeat(4997)); return "y".repeat(4998)`, lim) // 4999+1 + 5000 bytes
	if err != nil || len(res.Value) != 5000 {
		t.Errorf("control: %v, %v", res, err)
	}
}

// A log line already past the output limit is refused as it is, not
// escaped first: escaping a line of U+2028 (three bytes, six escaped)
// the size of the heap took seconds in a host function the deadline
// cannot interrupt, and several times the line in Go memory the heap
// limit does not count. Here 9 MB of line allocated 117 MB.
func TestIsolateOutputNotEscapedPastLimit(t *testing.T) {
	lim := isoLimits()
	lim.Deadline = 30 * time.Second
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	isoLimit(t, `const s = "\u2028".repeat(1e6); pinfold.log([s, s, s])`, lim, "output")
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("one log line of 9 MB allocated %d MB of Go memory", got>>20)
	}
}

func TestIsolateScriptSize(t *testing.T) {
	lim := isoLimits()
	lim.ScriptSize = 10
	isoLimit(t, "return 12345", lim, "script_size")
	if _, err := isoRun(t, "return 123", lim); err != nil {
		t.Errorf("control: %v", err)
	}
}

func TestIsolateBadLimits(t *testing.T) {
	for _, mod := range []func(*Limits){
		func(l *Limits) { l.Memory = 0 },
		func(l *Limits) { l.Stack = 0 },
		func(l *Limits) { l.Stack = 1 << 30 },
		func(l *Limits) { l.Deadline = 0 },
		func(l *Limits) { l.ToolCalls = -1 },
		func(l *Limits) { l.Output = 0 },
		func(l *Limits) { l.ScriptSize = 0 },
	} {
		lim := isoLimits()
		mod(&lim)
		_, err := isoRun(t, "return 1", lim)
		var le *LimitError
		if err == nil || errors.As(err, &le) || !strings.Contains(err.Error(), "invalid limits") {
			t.Errorf("%+v: got %v", lim, err)
		}
	}
}

func TestIsolateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, "while (true) {}", isoLimits(), isoTool(t))
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("got %v after %v", err, time.Since(start))
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = Run(ctx, `await pinfold.call("hang")`, isoLimits(), isoTool(t))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// What of an exception leaves the VM is bounded, as the output is: its
// message and stack, and a tool's name quoted in an error (a hunt got
// 3 MB messages out past a 1000-byte output limit).
func TestIsolateBoundedErrors(t *testing.T) {
	lim := isoLimits()
	lim.Output = 1000
	_, err := isoRun(t, `throw new Error("\u001b]0;x\u0007" + "x".repeat(3e6))`, lim)
	var se *ScriptError
	if !errors.As(err, &se) || len(se.Message) > isoMaxMessage+64 || !strings.HasSuffix(se.Message, "more bytes)") {
		t.Errorf("a 3 MB exception: %T, %d bytes", err, len(fmt.Sprint(err)))
	}
	_, err = isoRun(t, `function f(n) { return n ? f(n - 1) : null.x } f(1800)`, lim)
	if !errors.As(err, &se) || len(se.Stack) > isoMaxStackText+64 {
		t.Errorf("a deep stack: %v, %d bytes of stack", err, len(se.Stack))
	}
	// A stack the script wrote itself, of 3 million lines: only its
	// start is looked at (it was split whole, 1 GB of Go memory for a
	// 24 MB stack under a 64 MiB heap, in a host function the deadline
	// cannot interrupt).
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = isoRun(t, `const e = new Error("x"); e.stack = "at\n".repeat(3e6); throw e`, lim)
	runtime.ReadMemStats(&after)
	if !errors.As(err, &se) || len(se.Stack) > isoMaxStackText+64 {
		t.Errorf("a long stack: %v, %d bytes of stack", err, len(se.Stack))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("a 9 MB stack allocated %d MB of Go memory", got>>20)
	}
	res, err := isoRun(t, `try { await pinfold.call("z".repeat(3e6)) } catch (e) { return e.message }`, lim)
	if err != nil || len(res.Value) > 200 || !strings.Contains(string(res.Value), "more than 256") {
		t.Errorf("a 3 MB tool name: %v, %.200s", err, fmt.Sprint(res))
	}
	lim.ToolCalls = 0
	_, err = isoRun(t, `pinfold.call("z".repeat(3e6))`, lim)
	if err == nil || len(err.Error()) > 500 {
		t.Errorf("a long tool name over the budget: %d bytes of error", len(fmt.Sprint(err)))
	}
}

// A script that awaits more than a million times (more jobs than one
// drain of the engine's runs) goes on to its result; one that makes jobs
// forever ends at its deadline.
func TestIsolateManyJobs(t *testing.T) {
	lim := isoLimits()
	lim.Deadline = 20 * time.Second
	res, err := isoRun(t, `let i = 0; for (; i < 1100000; i++) await null; return i`, lim)
	if err != nil || string(res.Value) != "1100000" {
		t.Errorf("1.1 million awaits: %v, %v", res, err)
	}
	lim.Deadline = 2 * time.Second
	isoLimit(t, `for (;;) await null`, lim, "deadline")
}

// bind is a closure whose arrays the heap limit counts: the engine's
// bound functions copied their arguments into C stack memory it does
// not (a hunt's chain used 887 MB under a 64 MiB limit, and returned).
// It still behaves as bind does.
func TestIsolateBind(t *testing.T) {
	lim := isoLimits()
	lim.Memory, lim.Stack = 8<<20, 1<<20
	for _, script := range []string{
		`const zeros = new Array(65000).fill(0); let top = () => 1; for (let i = 0; i < 40; i++) top = top.bind(null, ...zeros); return top()`,
		`const b = f.bind(null, ...new Array(65000).fill(0)); let depth = 0; function f() { if (++depth < 150) b() } f(); return depth`,
	} {
		isoLimit(t, script, lim, "memory")
	}
	isoOK(t, `
function add(a, b, c) { return [this && this.k, a + b + c] }
const b = add.bind({k: "this"}, 1, 2);
class P { constructor(x, y) { this.s = x + y } }
const BP = P.bind(null, 40);
const p = new BP(2);
let ext; try { class Q extends BP {}; ext = "extended" } catch (e) { ext = e instanceof TypeError }
return [b(3), b.name, b.length, add.bind().length, p.s, p instanceof BP, p instanceof P, ext,
  (() => 7).bind(null)(), Math.max.bind(null, 4)(9, 2), Object.getPrototypeOf(p) === P.prototype]`,
		`[["this",6],"bound add",1,3,42,true,true,true,7,9,true]`)
}
