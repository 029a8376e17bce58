package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
)

// Each tool's input and output. Fields without omitempty are required;
// the jsonschema tag is the property's description.

type readFileIn struct {
	Path     string `json:"path" jsonschema:"the file, relative to the workspace"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"where to start, in bytes (default 0)"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"at most this many bytes (default 262144, at most 1048576)"`
}

type readFileOut struct {
	Content    string `json:"content"`
	Encoding   string `json:"encoding" jsonschema:"utf-8, or base64 when the bytes are not UTF-8 text"`
	Bytes      int    `json:"bytes" jsonschema:"how many bytes of the file content holds"`
	EOF        bool   `json:"eof" jsonschema:"whether they reach the end of the file"`
	NextOffset int64  `json:"next_offset,omitempty" jsonschema:"where to read on, when eof is false"`
}

func (t *tools) readFile(ctx context.Context, a readFileIn) (readFileOut, error) {
	want := a.MaxBytes
	if want == 0 {
		want = DefRead
	}
	if want < 4 || want > MaxRead || a.Offset < 0 {
		return readFileOut{}, fmt.Errorf("read_file: max_bytes must be 4..%d and offset at least 0", MaxRead)
	}
	var data []byte
	eof := false
	// fs answers at most MaxRead bytes a call; a short answer that is
	// not the end is read on. Every turn makes progress or stops.
	for len(data) < want && !eof {
		r, d, err := t.b.Files.Read(ctx, a.Path, a.Offset+int64(len(data)), want-len(data))
		if err != nil {
			return readFileOut{}, failed("read_file", err)
		}
		if !d.Allowed {
			return readFileOut{}, denial("read_file", d)
		}
		if len(r.Data) > want-len(data) {
			return readFileOut{}, errors.New("read_file: fs answered more than was asked")
		}
		data, eof = append(data, r.Data...), r.EOF
		if len(r.Data) == 0 && !eof {
			return readFileOut{}, fmt.Errorf("read_file %s: no progress at offset %d", a.Path, a.Offset+int64(len(data)))
		}
	}
	if !eof && !utf8.Valid(data) {
		// A character cut at the end is left for the next part.
		for cut := 1; cut < utf8.UTFMax && cut < len(data); cut++ {
			if utf8.Valid(data[:len(data)-cut]) {
				data = data[:len(data)-cut]
				break
			}
		}
	}
	out := readFileOut{Content: string(data), Encoding: "utf-8", Bytes: len(data), EOF: eof}
	if !utf8.Valid(data) {
		out.Content, out.Encoding = base64.StdEncoding.EncodeToString(data), "base64"
	}
	if !eof {
		out.NextOffset = a.Offset + int64(len(data))
	}
	return out, nil
}

type writeFileIn struct {
	Path    string `json:"path" jsonschema:"the file, relative to the workspace"`
	Content string `json:"content" jsonschema:"the file's new content, UTF-8 text (at most 1048576 bytes)"`
}

type writeFileOut struct {
	Bytes int `json:"bytes" jsonschema:"the size written"`
}

func (t *tools) writeFile(ctx context.Context, a writeFileIn) (writeFileOut, error) {
	if len(a.Content) > MaxWrite {
		return writeFileOut{}, fmt.Errorf("write_file: the content is %d bytes, more than the %d one call writes", len(a.Content), MaxWrite)
	}
	r, d, err := t.b.Files.Write(ctx, a.Path, []byte(a.Content), false)
	if err != nil {
		return writeFileOut{}, failed("write_file", err)
	}
	if !d.Allowed {
		return writeFileOut{}, denial("write_file", d)
	}
	return writeFileOut{Bytes: r.Size}, nil
}

type listDirIn struct {
	Path string `json:"path,omitempty" jsonschema:"the directory, relative to the workspace (default: the workspace)"`
}

type listDirOut struct {
	Entries   []fs.Entry `json:"entries"`
	Truncated bool       `json:"truncated,omitempty" jsonschema:"there were more entries than one answer holds"`
}

func (t *tools) listDir(ctx context.Context, a listDirIn) (listDirOut, error) {
	p := a.Path
	if p == "" {
		p = "."
	}
	r, d, err := t.b.Files.List(ctx, p)
	if err != nil {
		return listDirOut{}, failed("list_dir", err)
	}
	if !d.Allowed {
		return listDirOut{}, denial("list_dir", d)
	}
	if r.Entries == nil {
		r.Entries = []fs.Entry{}
	}
	return listDirOut{Entries: r.Entries, Truncated: r.Truncated}, nil
}

type deleteIn struct {
	Path      string `json:"path" jsonschema:"the file or directory, relative to the workspace"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a directory and everything beneath it (the person confirms; a backup is made first)"`
}

type deleteOut struct {
	Deleted      string `json:"deleted"`
	Backup       string `json:"backup,omitempty" jsonschema:"the backup's id (the person restores it with launcher backups restore)"`
	Irreversible bool   `json:"irreversible,omitempty" jsonschema:"no backup could be made and the person confirmed deleting without one"`
}

func (t *tools) delete(ctx context.Context, a deleteIn) (deleteOut, error) {
	if !a.Recursive {
		d, err := t.b.Files.Delete(ctx, a.Path)
		if err != nil {
			return deleteOut{}, failed("delete", err)
		}
		if !d.Allowed {
			return deleteOut{}, denial("delete", d)
		}
		return deleteOut{Deleted: a.Path}, nil
	}
	r, d, err := t.b.Files.DeleteRecursive(ctx, a.Path)
	if err != nil {
		return deleteOut{}, failed("delete", err)
	}
	if !d.Allowed {
		return deleteOut{}, denial("delete", d)
	}
	return deleteOut{Deleted: a.Path, Backup: r.Backup, Irreversible: r.Irreversible}, nil
}

type runCommandIn struct {
	Command string `json:"command" jsonschema:"the command line, run with bash -c in the workspace"`
}

type runCommandOut struct {
	ExitCode  int      `json:"exit_code"`
	Stdout    string   `json:"stdout" jsonschema:"as text: bytes that are not UTF-8 become U+FFFD"`
	Stderr    string   `json:"stderr"`
	Truncated bool     `json:"truncated,omitempty" jsonschema:"the output was cut at the policy's cap"`
	TimedOut  bool     `json:"timed_out,omitempty" jsonschema:"the command was killed at the policy's timeout"`
	Backups   []string `json:"backups,omitempty" jsonschema:"backups made before the command deleted recursively"`
	Created   []string `json:"created,omitempty" jsonschema:"protected paths the command made or changed, moved aside after it: they change only through write_file, with the person's approval"`
}

func (t *tools) runCommand(ctx context.Context, a runCommandIn) (runCommandOut, error) {
	r, d, err := t.b.Shell.Run(ctx, a.Command)
	if err != nil {
		return runCommandOut{}, failed("run_command", err)
	}
	if !d.Allowed && d.Rule == bash.RuleWorker {
		return runCommandOut{}, fmt.Errorf("run_command: the launcher could not run it: %s", d.Detail)
	}
	if !d.Allowed {
		return runCommandOut{}, denial("run_command", d)
	}
	return runCommandOut{ExitCode: r.ExitCode, Stdout: text(r.Stdout), Stderr: text(r.Stderr),
		Truncated: r.Truncated, TimedOut: r.TimedOut, Backups: r.Backups, Created: r.Created}, nil
}

func text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

type executeCodeIn struct {
	Script string `json:"script" jsonschema:"JavaScript: the body of an async function; return a JSON value"`
}

type executeCodeOut struct {
	Value     any      `json:"value" jsonschema:"the script's return value"`
	Logs      []string `json:"logs"`
	ToolCalls int      `json:"tool_calls"`
}

func (t *tools) executeCode(ctx context.Context, a executeCodeIn) (executeCodeOut, error) {
	if len(a.Script) > MaxScript {
		return executeCodeOut{}, fmt.Errorf("execute_code: the script is %d bytes, more than the %d one call carries", len(a.Script), MaxScript)
	}
	r, d, err := t.b.Shell.Code(ctx, a.Script)
	if err != nil {
		return executeCodeOut{}, failed("execute_code", err)
	}
	if !d.Allowed && d.Rule == bash.RuleWorker {
		return executeCodeOut{}, fmt.Errorf("execute_code: the launcher could not run it: %s", d.Detail)
	}
	if !d.Allowed {
		return executeCodeOut{}, denial("execute_code", d)
	}
	if r.Error != "" {
		msg := "execute_code: the script failed: " + r.Error
		if r.ToolCalls > 0 {
			// Their effects stand: a write made before the failure is made.
			msg += fmt.Sprintf("\nit made %d tool call(s) before it ended", r.ToolCalls)
		}
		if len(r.Logs) > 0 {
			msg += "\nlogs:\n" + strings.Join(r.Logs, "\n")
		}
		return executeCodeOut{}, errors.New(msg)
	}
	v, err := jsonValue(r.Value)
	if err != nil {
		return executeCodeOut{}, fmt.Errorf("execute_code: the script's value is not JSON: %v", err)
	}
	if r.Logs == nil {
		r.Logs = []string{}
	}
	return executeCodeOut{Value: v, Logs: r.Logs, ToolCalls: r.ToolCalls}, nil
}

type fetchIn struct {
	URL     string            `json:"url" jsonschema:"an http or https URL"`
	Method  string            `json:"method,omitempty" jsonschema:"GET (default), POST, …"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

func (t *tools) fetch(ctx context.Context, a fetchIn) (bash.FetchResult, error) {
	r, err := bash.Fetch(ctx, t.b.Web, bash.FetchArgs{URL: a.URL, Method: a.Method, Headers: a.Headers, Body: a.Body})
	var nd *netDenial
	if errors.As(err, &nd) {
		return bash.FetchResult{}, nd
	}
	if err != nil {
		return bash.FetchResult{}, err
	}
	// Only for plain http is the header surely net's (it strips it from
	// upstream answers there). Over https it is the remote site's, or, for
	// a [[secrets]] host net intercepts, net's own refusal (net drops the
	// upstream's there): either way it is passed on as an answer, so no
	// remote site can pass for a denial.
	if rule := r.Headers["X-Pinfold-Rule"]; strings.HasPrefix(a.URL, "http://") && r.Status == http.StatusForbidden && rule != "" {
		return bash.FetchResult{}, NetDenial(rule, r.Headers["X-Pinfold-Reason"])
	}
	return r, nil
}

// netDenial is net's refusal of a request, as the agent reads it.
type netDenial struct{ rule, reason string }

func (d *netDenial) Error() string {
	return fmt.Sprintf("fetch: denied by the session's network policy (rule %s): %s. Hint: "+
		"private, loopback and metadata addresses are never reached; other hosts only as the policy's [network] rules say — "+
		"if this one is needed, ask the person to allow it", d.rule, d.reason)
}

// NetDenial is the error for net's refusal under rule (for the proxy
// client's CONNECT hook).
func NetDenial(rule, reason string) error { return &netDenial{rule, reason} }
