package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// launcher code run: a script runs in a worker of its own — as root under
// a throwaway uid, unprivileged in a user namespace — its tool calls
// answered from the table; a runaway script ends at its deadline with a
// clear error; a script that reaches for the host finds nothing (the
// static check refuses the obvious, the isolate has no such globals).
func TestIntegrationCodeRun(t *testing.T) {
	for _, uid := range []int{0, nobody} {
		s := newUnprivSandbox(t, uid)
		tools := s.file(t, filepath.Join(s.dir, "tools.json"), `{"read_file": {"result": {"text": "hello"}}, "fetch": {"error": "offline"}}`)
		script := func(name, body string) string { return s.file(t, filepath.Join(s.dir, name), body) }
		ok := script("ok.js", `const a = await pinfold.call("read_file", {path: "x"});
let err = "";
try { await pinfold.call("fetch", {url: "http://x"}); } catch (e) { err = e.message; }
pinfold.log("read", a.text.length);
return {text: a.text, err, globals: typeof std + typeof os + typeof scriptArgs};`)
		r := s.run(t, itOpts{}, itEnv.launcher, "code", "run", "--tools", tools, ok)
		if r.code != 0 || !strings.Contains(r.stdout, `"text":"hello"`) || !strings.Contains(r.stdout, `"err":"offline"`) ||
			!strings.Contains(r.stdout, `"globals":"undefinedundefinedundefined"`) || !strings.Contains(r.stderr, "read") {
			t.Errorf("uid %d: %s", uid, r)
		}
		// What the script returns reaches the person's terminal as JSON
		// that steers nothing: a C1 control (CSI), a bidirectional
		// override and a line separator are written escaped, as in its
		// logs.
		steer := script("steer.js", `pinfold.log("\u009b\u202e"); return "a\u009b[31mb\u202ec\u2028d"`)
		r = s.run(t, itOpts{}, itEnv.launcher, "code", "run", "--tools", tools, steer)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"a\u009b[31mb\u202ec\u2028d"` || !strings.Contains(r.stderr, `"\u009b\u202e"`) {
			t.Errorf("uid %d: terminal controls in the value: %s", uid, r)
		}
		// A run that fails shows what it logged before its error.
		throws := script("throws.js", `pinfold.log("before"); throw new Error("boom")`)
		r = s.run(t, itOpts{}, itEnv.launcher, "code", "run", "--tools", tools, throws)
		if r.code != 117 || !strings.Contains(r.stderr, "\"before\"\nlauncher: error: code run: code: script failed: Error: boom") {
			t.Errorf("uid %d: a failed run's logs: %s", uid, r)
		}
		p := s.policyText(itPol{extra: "[code_mode]\ndeadline = \"500ms\"\n"})
		pol := s.file(t, filepath.Join(s.dir, "p.toml"), p)
		loop := script("loop.js", "for (;;) { try { for (;;) {} } catch (e) {} }")
		r = s.run(t, itOpts{}, itEnv.launcher, "code", "run", "--tools", tools, "--policy", pol, loop)
		if r.code != 117 || !strings.Contains(r.stderr, "deadline") || r.elapsed.Seconds() > 5 {
			t.Errorf("uid %d runaway: %s (after %s)", uid, r, r.elapsed)
		}
		os.Remove(loop)
	}
}
