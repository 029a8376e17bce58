package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzIsolateArgs fuzzes the JSON that crosses the bridge both ways: the tool
// name and the argument a script passes to pinfold.call (the argument is the
// fuzzed text parsed as JSON where it parses, else the text itself), and the
// bytes the tool returns. Run must not panic or hang, the tool must get a
// UTF-8 name and valid JSON, and Run must end with a JSON result or a
// ScriptError or LimitError.
func FuzzIsolateArgs(f *testing.F) {
	deep := strings.Repeat("[", 3000) + strings.Repeat("]", 3000) // 100000 levels: TestIsolateDeepToolResult
	for _, seed := range [][3]string{
		{"echo", `{"a":1}`, `{"x":[1,2]}`},
		{"", "", ""},
		{"\xff\xfe", "\xff", "\"\xff\xfe\""},
		{"n\x00ame", "a\x00b", "\"\x00\""},
		{"big", "1e400", "1e400"},
		{"big", "-1e-400", "123456789012345678901234567890"},
		{"big", "18446744073709551616", "-0"},
		{"deep", deep, deep},
		{"deep", `{"a":` + strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2001), `[` + strings.Repeat(`{"a":[`, 600) + strings.Repeat("]}", 600) + `]`},
		{"sur", `"\ud800"`, `"\udc00\ud800"`},
		{"bad", "{", "{"},
		{"bad", "[1,]", "[1,]"},
		{"null", "null", "null"},
		{"ws", " \n\t1 ", " \n\t1 "},
		{"\u2028", "\"\u2028\"", "\"\u2028\""},
		{"str", `"</script>"`, `"\u0000"`},
	} {
		f.Add(seed[0], seed[1], []byte(seed[2]))
	}
	lim := Limits{Memory: 16 << 20, Stack: 1 << 20, Deadline: 5 * time.Second, ToolCalls: 2, Output: 1 << 20, ScriptSize: 1 << 20}
	f.Fuzz(func(t *testing.T, name, args string, result []byte) {
		var toolErr error
		tool := func(ctx context.Context, gotName string, gotArgs json.RawMessage) (json.RawMessage, error) {
			if !utf8.ValidString(gotName) || !json.Valid(gotArgs) {
				toolErr = fmt.Errorf("tool got name %q args %q", gotName, gotArgs)
			}
			return json.RawMessage(result), nil
		}
		nameJS, _ := json.Marshal(name) // a JSON string is a JS string literal
		argsJS, _ := json.Marshal(args)
		script := fmt.Sprintf(`let a;
try { a = JSON.parse(%s) } catch (e) { a = %s }
const r = await pinfold.call(%s, a);
pinfold.log(r);
return r`, argsJS, argsJS, nameJS)
		start := time.Now()
		res, err := runVM(context.Background(), script, lim, tool)
		if took := time.Since(start); took > lim.Deadline+time.Second {
			t.Errorf("Run took %v", took)
		}
		if res != nil {
			t.Logf("value %.100s logs %.100q", res.Value, res.Logs)
		}
		t.Logf("err %v", err)
		if toolErr != nil {
			t.Error(toolErr)
		}
		var le *LimitError
		var se *ScriptError
		switch {
		case errors.As(err, &le) || errors.As(err, &se):
		case err != nil:
			t.Fatalf("unexpected error: %v", err)
		case !json.Valid(res.Value) || !utf8.Valid(res.Value):
			t.Fatalf("result %q is not JSON", res.Value)
		}
		if res != nil {
			for _, l := range res.Logs {
				if strings.ContainsAny(l, "\n\r") || !utf8.ValidString(l) {
					t.Fatalf("log line %q", l)
				}
			}
		}
	})
}
