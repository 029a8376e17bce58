package code

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// valRejectCase is a script that must be rejected; the first finding must carry Rule and Name.
type valRejectCase struct {
	name string
	src  string
	rule string
	ban  string // Finding.Name of the first finding
}

// valRejects are escape attempts. Each is a distinct way to reach a banned name or property.
var valRejects = []valRejectCase{
	// Banned globals, referenced.
	{"eval call", `eval("1+1")`, "banned-name", "eval"},
	{"indirect eval", `(0, eval)("1")`, "banned-name", "eval"},
	{"eval nullish", `const f = eval ?? null`, "banned-name", "eval"},
	{"new Function", `new Function("return this")()`, "banned-name", "Function"},
	{"Function call", `Function("return 1")()`, "banned-name", "Function"},
	{"Function.prototype", `Function.prototype.call`, "banned-name", "Function"},
	{"require", `const fs = require("fs")`, "banned-name", "require"},
	{"process", `process.exit(1)`, "banned-name", "process"},
	{"typeof process", `if (typeof process !== "undefined") {}`, "banned-name", "process"},
	{"Deno", `await Deno.readTextFile("/etc/passwd")`, "banned-name", "Deno"},
	{"globalThis", `globalThis.x = 1`, "banned-name", "globalThis"},
	{"Reflect", `Reflect.construct(Object, [])`, "banned-name", "Reflect"},
	{"dynamic import", `const m = await import("fs")`, "banned-name", "import"},
	{"import.meta", `return import.meta.url`, "banned-name", "import"},
	{"eval in template substitution", "log(`${eval('1')}`)", "banned-name", "eval"},
	{"eval as tag", "eval`1`", "banned-name", "eval"},
	{"eval in arrow body", `const f = () => eval`, "banned-name", "eval"},
	{"eval in default", `function f(a = eval) {}`, "banned-name", "eval"},
	{"Function as spread", `f(...Function)`, "banned-name", "Function"},
	{"require in class extends", `class A extends require("x") {}`, "banned-name", "require"},
	// Banned globals, bound.
	{"let eval", `let eval = 1`, "banned-name", "eval"},
	{"param Function", `function f(Function) { return Function }`, "banned-name", "Function"},
	{"arrow param", `const f = (process) => process`, "banned-name", "process"},
	{"function named require", `function require() {}`, "banned-name", "require"},
	{"class named Reflect", `class Reflect {}`, "banned-name", "Reflect"},
	{"catch binding", `try {} catch (globalThis) {}`, "banned-name", "globalThis"},
	{"shorthand reference", `const o = {eval}`, "banned-name", "eval"},
	{"shorthand binding", `const {eval} = obj`, "banned-name", "eval"},
	{"shorthand binding default", `const {Function = 1} = obj`, "banned-name", "Function"},
	{"array binding", `const [Deno] = xs`, "banned-name", "Deno"},
	{"destructuring default value", `const {a = eval} = obj`, "banned-name", "eval"},
	{"label", `eval: for (;;) { break eval }`, "banned-name", "eval"},
	// Escaped spellings of banned globals.
	{"u escape", `\u0065val("1")`, "banned-name", "eval"},
	{"u brace escape", `\u{65}val("1")`, "banned-name", "eval"},
	{"escape in the middle", `eva\u006c("1")`, "banned-name", "eval"},
	{"escaped Function", `new \u0046unction("x")`, "banned-name", "Function"},
	{"escaped globalThis", `glob\u{61}lThis.x`, "banned-name", "globalThis"},
	{"escaped import keyword", `\u0069mport("fs")`, "banned-name", "import"},
	// Banned properties by dot.
	{"dot constructor", `[].constructor.constructor("return this")()`, "banned-property", "constructor"},
	{"optional chain", `x?.constructor`, "banned-property", "constructor"},
	{"dot __proto__", `x.__proto__ = y`, "banned-property", "__proto__"},
	{"delete __proto__", `delete x.__proto__`, "banned-property", "__proto__"},
	{"Object.prototype", `Object.prototype.polluted = 1`, "banned-property", "prototype"},
	{"this.constructor", `class A { m() { return this.constructor } }`, "banned-property", "constructor"},
	{"super.constructor", `class A extends B { m() { return super.constructor } }`, "banned-property", "constructor"},
	{"super computed", "class A extends B { m() { return super[`constructor`] } }", "banned-property", "constructor"},
	{"member of a number literal", `return 1..constructor`, "banned-property", "constructor"},
	{"member after a conditional's decimal", `return a?.5:x.constructor`, "banned-property", "constructor"},
	{"catch binding default", `try {} catch ({a = x.prototype}) {}`, "banned-property", "prototype"},
	{"escaped dot property", `x.\u0063onstructor`, "banned-property", "constructor"},
	{"async fn constructor", `(async () => {}).constructor("x")`, "banned-property", "constructor"},
	// Banned properties by string, template and computed keys.
	{"double quoted", `x["constructor"]`, "banned-property", "constructor"},
	{"single quoted", `x['__proto__']`, "banned-property", "__proto__"},
	{"template", "x[`prototype`]", "banned-property", "prototype"},
	{"optional index", `x?.["constructor"]`, "banned-property", "constructor"},
	{"hex escape", `x['\x63onstructor']`, "banned-property", "constructor"},
	{"unicode escape", `x["\u0063onstructor"]`, "banned-property", "constructor"},
	{"unicode brace escape", `x["\u{5f}_proto__"]`, "banned-property", "__proto__"},
	{"octal escape", `x["\143onstructor"]`, "banned-property", "constructor"},
	{"line continuation", "x[\"con\\\nstructor\"]", "banned-property", "constructor"},
	{"concatenation", `x["con" + "structor"]`, "banned-property", "constructor"},
	{"concatenation chain", `x["c" + "" + "onstr" + ("uct" + "or")]`, "banned-property", "constructor"},
	{"template with constant substitution", "x[`con${'struct'}or`]", "banned-property", "constructor"},
	{"template escape", "x[`\\u0070rototype`]", "banned-property", "prototype"},
	{"parenthesized", `x[("constructor")]`, "banned-property", "constructor"},
	{"comma", `x[(0, "constructor")]`, "banned-property", "constructor"},
	{"one-element array", `x[["constructor"]]`, "banned-property", "constructor"},
	{"nested arrays", `x[[["__proto__"]]]`, "banned-property", "__proto__"},
	{"conditional", `x[c ? "constructor" : "a"]`, "banned-property", "constructor"},
	{"logical or", `x[k || "prototype"]`, "banned-property", "prototype"},
	{"call argument in key", `x[id("constructor")]`, "banned-property", "constructor"},
	{"toString object key", `x[{toString() { return "constructor" }}]`, "banned-property", "constructor"},
	{"String.raw key", "x[String.raw`constructor`]", "banned-property", "constructor"},
	// Object literals.
	{"object __proto__", `const o = {__proto__: null}`, "banned-property", "__proto__"},
	{"object quoted __proto__", `const o = {"__proto__": evil}`, "banned-property", "__proto__"},
	{"object computed __proto__", `const o = {["__proto__"]: evil}`, "banned-property", "__proto__"},
	{"object escaped key", `const o = {"\x5f_proto__": evil}`, "banned-property", "__proto__"},
	{"object constructor method", `const o = {constructor() {}}`, "banned-property", "constructor"},
	{"object getter", `const o = {get __proto__() { return 1 }}`, "banned-property", "__proto__"},
	{"object setter", `const o = {set prototype(v) {}}`, "banned-property", "prototype"},
	{"object generator method", `const o = {*prototype() {}}`, "banned-property", "prototype"},
	{"object shorthand constructor", `const o = {constructor}`, "banned-property", "constructor"},
	// Destructuring.
	{"destructure constructor", `const {constructor: C} = x`, "banned-property", "constructor"},
	{"destructure assignment", `let C; ({constructor: C} = x)`, "banned-property", "constructor"},
	{"destructure computed", `const {["__proto__"]: p} = x`, "banned-property", "__proto__"},
	{"destructure quoted", `const {'prototype': p} = F`, "banned-property", "prototype"},
	{"destructure shorthand", `const {constructor} = x`, "banned-property", "constructor"},
	{"destructure nested", `const {a: {constructor: c}} = x`, "banned-property", "constructor"},
	{"destructure in array", `const [{__proto__: p}] = xs`, "banned-property", "__proto__"},
	{"destructure param", `function f({constructor}) {}`, "banned-property", "constructor"},
	{"destructure for-of", `for (const {prototype: p} of xs) {}`, "banned-property", "prototype"},
	{"destructure catch", `try {} catch ({constructor: c}) {}`, "banned-property", "constructor"},
	{"destructure arrow param", `const f = ({constructor}) => constructor`, "banned-property", "constructor"},
	// Classes.
	{"static constructor", `class A { static constructor() {} }`, "banned-property", "constructor"},
	{"computed constructor", `class A { ['constructor']() {} }`, "banned-property", "constructor"},
	{"quoted constructor", `class A { "constructor"() {} }`, "banned-property", "constructor"},
	{"escaped constructor method", `class A { \u0063onstructor() {} }`, "banned-property", "constructor"},
	{"getter constructor", `class A { get constructor() {} }`, "banned-property", "constructor"},
	{"async constructor", `class A { async constructor() {} }`, "banned-property", "constructor"},
	{"generator constructor", `class A { *constructor() {} }`, "banned-property", "constructor"},
	{"class getter __proto__", `class A { get __proto__() {} }`, "banned-property", "__proto__"},
	{"static prototype field", `class A { static prototype = 1 }`, "banned-property", "prototype"},
	{"field named constructor", `class A { constructor = 1 }`, "banned-property", "constructor"},
	// Bare identifiers that are property reads of the global object.
	{"bare constructor", `const O = constructor`, "banned-property", "constructor"},
	{"bare __proto__", `__proto__.x = 1`, "banned-property", "__proto__"},
	{"with statement", `with (f) { constructor }`, "banned-syntax", "with"},
	// Syntax that parsers disagree about.
	{"html open comment", "a <!-- b[eval('1')]", "banned-syntax", ""},
	{"html close comment", "x = 1\n--> hidden", "banned-syntax", ""},
	{"escaped keyword call", `\u0069f(x)`, "syntax", ""},
	{"html close after multi-line comment", "/*\n*/ --> eval(1)", "banned-syntax", ""},
	{"line separator ends a comment", "// note\u2028eval(1)", "banned-name", "eval"},
	{"paragraph separator ends a comment", "// note\u2029x.constructor", "banned-property", "constructor"},
	{"regex after if", `if (x) /"/.test(y); eval("1")`, "banned-name", "eval"},
	// U+2118, U+212E, U+309B and U+309C continue a name in QuickJS; the parser's lexer
	// starts a new one at them, so it read "let ℘x" and a regular expression where the
	// engine runs let℘x / (…) / i: the division's middle was hidden from the static pass.
	{"name split by U+2118", "this[\"let\u2118x\"] = 1\nlet\u2118x\n/([].constructor.constructor, eval)/i", "syntax", ""},
	{"name split by U+212E", "this[\"let\u212ex\"] = 1\nlet\u212ex\n/(eval)/i", "syntax", ""},
	{"name split by U+309B", "var\u309bx = 1", "syntax", ""},
	{"name split by U+309C", "return\u309cx", "syntax", ""},
}

// valAccepts are benign modern scripts; each must be accepted.
var valAccepts = []struct{ name, src string }{
	{"await tool call", `const r = await pinfold.call("fs.read", {path: "a.txt"}); return r.text`},
	{"top-level return", `return 42`},
	{"class with constructor method", "class Point {\n  constructor(x, y) { this.x = x; this.y = y }\n  norm() { return Math.hypot(this.x, this.y) }\n}\nreturn new Point(3, 4).norm()"},
	{"subclass constructor", `class A { constructor() {} } class B extends A { constructor() { super() } } return new B()`},
	{"private fields and static block", `class C { #prototype = 1; static #n = 0; static { C.#n = 1 } get v() { return this.#prototype } } return new C().v`},
	{"optional chaining", `return a?.b?.[c]?.(d)`},
	{"nullish coalescing", `let x = null; x ??= 5; return x ?? 0`},
	{"template with substitutions", "const n = 3; return `n=${n + 1} and ${`nested ${n}`}`"},
	{"tagged template", "const tag = (s, ...v) => s.raw.join(); return tag`a${1}b`"},
	{"destructuring with defaults and rest", `const {a = 1, b: {c = 2} = {}, ...rest} = obj; const [x, , y = 3, ...zs] = arr; return {a, c, rest, x, y, zs}`},
	{"spread", `const a = [...xs, ...ys]; const o = {...p, q: 1}; f(...a)`},
	{"regex with flags and named groups", `const m = /(?<year>\d{4})-(?<month>\d{2})/u.exec(s); return m.groups.year`},
	{"regex containing banned words", `return /eval|constructor|__proto__|prototype/gi.test(s) && /[/]Function/.source`},
	{"regex after paren of if", `if (ok) /x/.test(s)`},
	{"labels with break and continue", "outer: for (const a of as) {\n  inner: for (const b of bs) {\n    if (a === b) continue outer\n    if (b > 9) break inner\n  }\n}"},
	{"generators", `function* gen() { yield 1; yield* [2, 3] } return [...gen()]`},
	{"async iterators", `async function* g() { yield 1 } for await (const v of g()) { log(v) }`},
	{"getters and setters", `const o = { get v() { return 1 }, set v(x) {} }; return o.v`},
	{"arrow functions", `const add = (a, b) => a + b; const inc = x => add(x, 1); return [1, 2].map(inc)`},
	{"Map Set Promise.all", `const m = new Map([[1, 2]]); const s = new Set([1]); const rs = await Promise.all([pinfold.call("a"), pinfold.call("b")]); return [m.size, s.has(1), rs]`},
	{"JSON", `return JSON.parse(JSON.stringify({a: [1, "two", null]}))`},
	{"try catch finally", `try { await f() } catch (e) { log(e.message) } finally { log("done") }`},
	{"optional catch binding", `try { JSON.parse(s) } catch { return null }`},
	{"BigInt and exponent", `const big = 2n ** 64n; return [big.toString(), 2 ** 10]`},
	{"numeric separators", `return 1_000_000 + 0xff_ff + 0b1010_0101 + 1_000.5e1_0`},
	{"near misses in names", `const constructorName = "x"; const prototypes = []; const evaluate = () => 1; const Functional = 1; const processData = 2; const Reflection = 3; return [constructorName, prototypes, evaluate(), Functional, processData, Reflection]`},
	{"banned names as properties", `obj.eval(1); x.require; y.process.pid; z.Function; return {eval: 1, Function: 2, import: 3, with: 4}.import`},
	{"banned name as destructuring key", `const {process: p, eval: e, require: r} = data; return [p, e, r]`},
	{"near-miss properties", `return [x.constructorName, x.prototypes, x["constructor_"], x["proto"], x.__proto, x.evaluate]`},
	{"strings as data", `log("eval is banned"); log('constructor'); log("__proto__" + " " + "prototype"); return "constructor" in x`},
	{"dynamic key left to the isolate", `const k = "constructor"; return x[k]`},
	{"object methods", `const o = { m() { return 1 }, async n() { await 0 }, *g() {}, ["computed" + 1]: 2 }; return o`},
	{"switch and loops", `let n = 0; switch (x) { case 1: n++; break; default: n-- } while (n < 3) n++; do { n-- } while (n > 0); for (const k in obj) n++; return n`},
	{"comments mentioning eval", "// never call eval() here\n/* constructor */ return 1"},
	{"unicode text", `const s = "héllo wörld 😀 \u{1F600} \uD83D\uDE00"; return s.length`},
	{"division after paren and brace", `const a = (b) / 2; const c = {d: 1}.d / 2; return a / c`},
	{"class getters setters static", `class T { static of(x) { return new T(x) } constructor(x) { this._x = x } get x() { return this._x } set x(v) { this._x = v } } return T.of(1).x`},
	{"async arrow and await in loop", `const rs = []; for (const id of ids) { rs.push(await (async (i) => pinfold.call("get", {id: i}))(id)) } return rs`},
	{"new.target and instanceof", `function F() { if (!new.target) return new F() } return F() instanceof F`},
	{"exponent assignment and logical assignment", `let a = 2; a **= 3; let b; b ||= 1; let c = 1; c &&= 2; return [a, b, c]`},
}

func TestValidateRejects(t *testing.T) {
	if len(valRejects) < 60 {
		t.Fatalf("only %d reject cases, want at least 60", len(valRejects))
	}
	seen := map[string]bool{}
	for _, tc := range valRejects {
		if seen[tc.src] {
			t.Errorf("duplicate reject case %q", tc.src)
		}
		seen[tc.src] = true
		t.Run(tc.name, func(t *testing.T) {
			fs := Validate(tc.src)
			if len(fs) == 0 {
				t.Fatalf("Validate(%q) accepted an escape attempt", tc.src)
			}
			var match bool
			for _, f := range fs {
				if f.Rule == tc.rule && f.Name == tc.ban {
					match = true
				}
			}
			if !match {
				t.Errorf("Validate(%q) = %v, want a finding with rule %q name %q", tc.src, fs, tc.rule, tc.ban)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	if len(valAccepts) < 30 {
		t.Fatalf("only %d accept cases, want at least 30", len(valAccepts))
	}
	for _, tc := range valAccepts {
		t.Run(tc.name, func(t *testing.T) {
			if fs := Validate(tc.src); fs != nil {
				t.Errorf("Validate(%q) = %v, want accepted", tc.src, fs)
			}
		})
	}
}

// TestValidateNearMisses pins each decision at the boundary with a pair: the accepted control and
// the rejected variant differ by one thing.
func TestValidateNearMisses(t *testing.T) {
	pairs := []struct{ ok, bad string }{
		{`obj.eval(1)`, `eval(1)`},
		{`const o = {eval: 1}`, `const o = {eval}`},
		{`const {eval: e} = o`, `const {eval} = o`},
		{`class A { constructor() {} }`, `class A { static constructor() {} }`},
		{`x.constructorName`, `x.constructor`},
		{`x["constructorName"]`, `x["constructor"]`},
		{`x["con" + "structors"]`, `x["con" + "structor"]`},
		{"x[`proto${k}`]", "x[`proto${'type'}`]"},
		{`log("__proto__")`, `log(x["__proto__"])`},
		{`const k = "__proto__"; x[k]`, `x["__proto__"]`},
		{`/constructor/.test(s)`, `s.constructor`},
		{`class A { #prototype = 1 }`, `class A { prototype = 1 }`},
		{`obj.with = 1`, `with (obj) {}`},
		{`a --> b`, "a\n--> b"},
		{`a < !--b`, `a <!--b`},
		{`x.import`, `import("x")`},
		{`evaluate(1)`, `\u0065val(1)`},
		{`if\u0030 = 1`, `\u0069f(1)`},
		{"let \u2118x = 1", "let\u2118x = 1"},
		{"const a\u00b7b = 1", "const a\u2118b = 1"},
		{"return.5", "return\u2118"},
	}
	for _, p := range pairs {
		if fs := Validate(p.ok); fs != nil {
			t.Errorf("control Validate(%q) = %v, want accepted", p.ok, fs)
		}
		if fs := Validate(p.bad); fs == nil {
			t.Errorf("Validate(%q) accepted, want rejected", p.bad)
		}
	}
}

func TestValidatePositions(t *testing.T) {
	src := "eval(1)\nconst a = 1\n\n// x\n  x.constructor\n\tx.__proto__\nconst s = \"héllo😀\"; s.prototype\r\nrequire(1)\u2028process"
	want := []string{
		"1:1: banned-name eval",
		"5:5: banned-property constructor",
		"6:4: banned-property __proto__",
		"7:23: banned-property prototype",
		"8:1: banned-name require",
		"9:1: banned-name process",
	}
	fs := Validate(src)
	var got []string
	for _, f := range fs {
		got = append(got, strings.Join([]string{valItoa(f.Line) + ":" + valItoa(f.Col) + ":", f.Rule, f.Name}, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func valItoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestValidatePositionsOfKeysAndSyntax(t *testing.T) {
	for _, tc := range []struct {
		src       string
		line, col int
		rule      string
	}{
		{"x = 1\ny[\"con\" + \"structor\"]", 2, 3, "banned-property"},
		{"const o = {\n  a: 1,\n  \"__proto__\": 2\n}", 3, 3, "banned-property"},
		{"let a = 1\nlet b = (\n", 3, 1, "syntax"},
		{"let a = 1;\n  a +* 2", 2, 6, "syntax"},
		{"x = \"ok\"\ny = \"\\uD800\"", 2, 5, "encoding"},
		{"\tconst é = \"😀\"; \\u0065val", 1, 17, "banned-name"},
	} {
		fs := Validate(tc.src)
		if len(fs) == 0 {
			t.Errorf("Validate(%q) accepted", tc.src)
			continue
		}
		if f := fs[0]; f.Line != tc.line || f.Col != tc.col || f.Rule != tc.rule {
			t.Errorf("Validate(%q)[0] = %v, want %d:%d %s", tc.src, f, tc.line, tc.col, tc.rule)
		}
	}
}

func TestValidateFindingString(t *testing.T) {
	f := Finding{Line: 3, Col: 7, Rule: "banned-name", Name: "eval", Message: `"eval" may not be referenced or bound`}
	if got, want := f.String(), `3:7: banned-name: "eval" may not be referenced or bound`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b, err := json.Marshal(f)
	if err != nil || string(b) != `{"line":3,"col":7,"rule":"banned-name","name":"eval","message":"\"eval\" may not be referenced or bound"}` {
		t.Errorf("json = %s, %v", b, err)
	}
}

// TestValidateBadInput checks that hostile inputs give one clear finding, fast.
func TestValidateBadInput(t *testing.T) {
	const n = 100000
	for _, tc := range []struct {
		name string
		src  string
		rule string
	}{
		{"10 MB", strings.Repeat("a;", 5<<20), "too-large"},
		{"just over the limit", strings.Repeat(" ", MaxScriptSize+1), "too-large"},
		{"deep parens", strings.Repeat("(", n) + "a" + strings.Repeat(")", n), "too-deep"},
		{"deep brackets", strings.Repeat("[", n) + strings.Repeat("]", n), "too-deep"},
		{"deep braces", strings.Repeat("{", n) + strings.Repeat("}", n), "too-deep"},
		{"deep binding pattern", "let " + strings.Repeat("[", n) + "a" + strings.Repeat("]", n) + " = x", "too-deep"},
		{"deep templates", strings.Repeat("`${", n) + "a" + strings.Repeat("}`", n), "too-deep"},
		{"deep arrows", strings.Repeat("a=>", n) + "a", "too-deep"},
		{"deep unary", strings.Repeat("!", n) + "a", "too-deep"},
		{"deep if", strings.Repeat("if (a) ", n) + ";", "too-deep"},
		{"unclosed parens", strings.Repeat("(", n), "too-deep"},
		{"NUL byte", "a = 1;\x00 eval(1)", "encoding"},
		{"invalid UTF-8", "a = \"\xff\xfe\"", "encoding"},
		{"lone surrogate in identifier", `\uD800 = 1`, "encoding"},
		{"lone low surrogate in string", `s = "\uDC00"`, "encoding"},
		{"surrogate pair split by text", `s = "\uD83Dx\uDE00"`, "encoding"},
		{"syntax error", "let = = 1", "syntax"},
		{"unterminated string", `s = "abc`, "syntax"},
		{"unterminated template", "s = `abc", "syntax"},
		{"unterminated regex", "s = /abc\n/", "syntax"},
		{"closing the wrapper", "}); (function(){", "syntax"},
		{"export", `export const a = 1`, "syntax"},
		{"static import", `import fs from "fs"`, "syntax"},
		{"malformed hex escape", `s = "\x4"`, "syntax"},
		{"malformed unicode escape", `s = "\u12"`, "syntax"},
		{"out of range code point", `s = "\u{110000}"`, "syntax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			fs := Validate(tc.src)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if len(fs) == 0 {
				t.Fatalf("accepted")
			}
			if fs[0].Rule != tc.rule || fs[0].Line < 1 || fs[0].Col < 1 || fs[0].Message == "" {
				t.Errorf("first finding %v, want rule %q", fs[0], tc.rule)
			}
		})
	}
}

func TestValidateMaxNestingBoundary(t *testing.T) {
	at := strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting)
	if fs := Validate("x = " + at); fs != nil {
		t.Errorf("nesting of exactly %d rejected: %v", MaxNesting, fs)
	}
	over := strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)
	fs := Validate("x = " + over)
	if len(fs) != 1 || fs[0].Rule != "too-deep" || fs[0].Line != 1 || fs[0].Col != 5+MaxNesting {
		t.Errorf("nesting of %d: %v, want one too-deep at 1:%d", MaxNesting+1, fs, 5+MaxNesting)
	}
	// Brackets inside strings, comments, templates and regular expressions do not count.
	data := strings.Repeat("(", 1000)
	src := "const s = \"" + data + "\"; // " + data + "\n/* " + data + " */ const t = `" + data + "`; const r = /\\(" + strings.Repeat("[(]", 300) + "/"
	if fs := Validate(src); fs != nil {
		t.Errorf("brackets in data counted: %v", fs)
	}
}

func TestValidateManyFindingsIsLinear(t *testing.T) {
	src := strings.Repeat("eval;", MaxScriptSize/5)
	start := time.Now()
	fs := Validate(src)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if len(fs) != MaxScriptSize/5 {
		t.Errorf("got %d findings, want %d", len(fs), MaxScriptSize/5)
	}
}

func TestValidateEmpty(t *testing.T) {
	for _, src := range []string{"", " ", "\n", ";", "// only a comment"} {
		if fs := Validate(src); fs != nil {
			t.Errorf("Validate(%q) = %v", src, fs)
		}
	}
}

// What makes a call's frame large is bounded, just past each bound
// rejected, at it accepted: parameters, arguments written out, variables.
func TestValidateFrameBounds(t *testing.T) {
	names := func(n int, prefix string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s%d", prefix, i)
		}
		return b.String()
	}
	decls := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "let v%d = %d;\n", i, i)
		}
		return b.String()
	}
	for _, c := range []struct {
		src  string
		want string // "" to accept
	}{
		{"function f(" + names(MaxParams, "p") + ") {}", ""},
		{"function f(" + names(MaxParams+1, "p") + ") {}", "parameters"},
		{"const f = (" + names(MaxParams+1, "p") + ") => 0", "parameters"},
		{"class A { m(" + names(MaxParams+1, "p") + ") {} }", "parameters"},
		{"Math.max(" + names(MaxArgs, "") + ")", ""},
		{"Math.max(" + names(MaxArgs+1, "") + ")", "arguments"},
		{"new Array(" + names(MaxArgs+1, "") + ")", "arguments"},
		// Values a function holds on its operand stack at once: a call's
		// arguments while an argument nested in it is made, a template's
		// parts (it is "".concat(part, …)). Each call below is within
		// MaxArgs; nested, they are not.
		{"f(" + names(MaxArgs-3, "") + ", f(" + names(MaxArgs-3, "") + "))", ""},
		{"f(" + names(MaxArgs-3, "") + ", f(" + names(MaxArgs-3, "") + ", f(1)))", "values at once"},
		{"new F(" + names(MaxArgs-3, "") + ", new F(" + names(MaxArgs-3, "") + ", f(1)))", "values at once"},
		{"[" + strings.Repeat("[", 60) + strings.Repeat("]", 60) + "]", ""},
		{"`" + strings.Repeat("${0}", MaxPending/2-2) + "`", ""},
		{"`" + strings.Repeat("${0}", MaxPending/2+1) + "`", "values at once"},
		{"tag`" + strings.Repeat("${0}", MaxPending+1) + "`", "values at once"},
		{"f(" + names(MaxArgs-1, "") + ", `" + strings.Repeat("${0}", MaxPending/2-MaxArgs/2) + "`)", "values at once"},
		// A function's own stack starts empty.
		{"f(" + names(MaxArgs-3, "") + ", () => f(" + names(MaxArgs-3, "") + ", f(1)))", ""},
		{"f(" + names(MaxArgs-3, "") + ", function () { return f(" + names(MaxArgs-3, "") + ", f(1)) })", ""},
		{"f(" + names(MaxArgs-3, "") + ", {m() { return f(" + names(MaxArgs-3, "") + ", f(1)) }})", ""},
		// A class holds variables of its own in the frame of the function
		// that makes it (its fields' initializer, each computed field's
		// key), declared or not.
		{strings.Repeat("(class {});\n", MaxDeclared/classVars), ""},
		{strings.Repeat("(class {});\n", MaxDeclared/classVars+1), "variables"},
		{"(class {" + strings.Repeat("[k] = 1;", MaxDeclared) + "})", "variables"},
		{decls(MaxDeclared), ""},
		{decls(MaxDeclared/2) + "function g() {\n" + decls(MaxDeclared/2+1) + "}", "variables"},
	} {
		fs := Validate(c.src)
		switch {
		case c.want == "" && len(fs) > 0:
			t.Errorf("%.60s…: rejected: %v", c.src, fs)
		case c.want != "" && (len(fs) != 1 || fs[0].Rule != "too-large" || !strings.Contains(fs[0].Message, c.want)):
			t.Errorf("%.60s…: %v, want one too-large finding about %s", c.src, fs, c.want)
		}
	}
}
