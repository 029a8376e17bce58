package mcpserver

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzLines: whatever a client sends, every line the server writes is a
// JSON-RPC message and it still answers the next request (no crash, no
// hang, no end of the session).
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_command","arguments":{"command":7}}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{},"id":9}`,
		"\x00\xff{", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `"just a string"`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fk := newFakes()
		close(fk.gate)
		h := serveRaw(t, Backends{Files: fk, Shell: fk}, 4096)
		go func() {
			io.WriteString(h.in, in+"\n"+`{"jsonrpc":"2.0","id":"probe-4f1c","method":"ping"}`+"\n")
		}()
		got := make(chan error, 1)
		go func() {
			sc := bufio.NewScanner(h.out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
					got <- &badLine{sc.Text()}
					return
				}
				if m["id"] == "probe-4f1c" && strings.Contains(sc.Text(), `"result"`) {
					got <- nil
					return
				}
			}
			got <- io.ErrUnexpectedEOF
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("input %q: %v", in, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("input %q: no answer to the probe", in)
		}
	})
}

type badLine struct{ line string }

func (b *badLine) Error() string { return "not a JSON-RPC message: " + b.line }
