package agentprobe

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher/probe"
)

func init() {
	probe.Register("fs-read", 1, func(a []string) error { return fsDo("read", a[0]) },
		"PATH: read PATH through the session's fs, as the agent (components mode); a denial prints `denied RULE`")
	probe.Register("fs-write", 1, func(a []string) error { return fsDo("write", a[0]) },
		"PATH: write a line to PATH through the session's fs, as the agent")
	probe.Register("fs-rm-r", 1, func(a []string) error { return fsDo("rm-r", a[0]) },
		"PATH: delete the tree PATH through the session's fs, as the agent (`launcher fs rm -r`)")
	probe.Register("fs-backup", 1, func(a []string) error { return fsDo("backup", a[0]) },
		"PATH: ask the session's fs, as the agent, for the backup of PATH that only bash may ask for (`denied reason-caller-role`)")
	probe.Register("fs-present", 1, func(a []string) error { return fsPresent(a[0]) },
		"genuine|forged: stat . at the session's fs presenting the agent's certificate, or one for its identity from another CA (`denied handshake`)")
	probe.Register("sh-run", 1, func(a []string) error { return shRun(a[0]) },
		"COMMAND: run COMMAND through the session's bash, as the agent (`launcher sh`): `exit N STDERR-LINE`, or `denied RULE`")
	probe.Register("mcp-read", 1, func(a []string) error { return mcpRead(a[0]) },
		"PATH: start `launcher mcp` and call its read_file tool for PATH, as the agent's MCP client: `ok`, or `denied RULE`")
	probe.Register("gateway-read", 3, func(a []string) error { return gatewayRead(a[0], a[1], a[2]) },
		"URL TOKENFILE PATH: open an MCP session at the gateway (`launcher serve`) URL with the bearer token in TOKENFILE (- for none: a guest) and call read_file for PATH: `ok`, or `denied RULE`")
	probe.Register("gateway-sh", 3, func(a []string) error { return gatewaySh(a[0], a[1], a[2]) },
		"URL TOKENFILE COMMAND: as gateway-read, calling run_command for COMMAND: `exit N LINE` (its stdout's first line, its stderr's when it failed), or `denied RULE`")
	probe.Register("code-run", 1, func(a []string) error { return codeRun(a[0]) },
		"SCRIPT: run the Code Mode script SCRIPT (its text) through the session's bash, as the agent: `value JSON`, or `denied RULE` (the static check), `denied limit:NAME (WHAT IT SAID)`, `denied exception`")
}

// Bounds on one call: fs answers at once (no one is asked in a check);
// bash runs a command or a script.
const (
	fsTimeout   = 20 * time.Second
	mcpTimeout  = time.Minute // a gateway's session starts a components session first
	bashTimeout = 2 * time.Minute
)

// asAgent calls f with the session's client for role, as the agent has
// it, within timeout.
func asAgent(role pki.Role, timeout time.Duration, f func(ctx context.Context, rc *rpc.Client) error) error {
	rc, err := session.AgentClient(role)
	if err != nil {
		return probe.Broken(err.Error())
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return f(ctx, rc)
}

// outcome prints what came of a call that was allowed, at most 200
// bytes of it, and exits: its line is not report's `ok`.
func outcome(format string, a ...any) error {
	line := fmt.Sprintf(format, a...)
	if len(line) > 200 {
		line = line[:200]
	}
	fmt.Println(line)
	os.Exit(0)
	return nil
}

// fsDo asks the session's fs, as the agent, to read p, write a line to
// it, back it up (bash's call, not the agent's) or delete the tree p.
func fsDo(what, p string) error {
	return asAgent(pki.FS, fsTimeout, func(ctx context.Context, rc *rpc.Client) error {
		c := fs.NewClient(rc)
		var d rpc.Decision
		var err error
		switch what {
		case "read":
			_, d, err = c.Read(ctx, p, 0, 0)
		case "write":
			_, d, err = c.Write(ctx, p, []byte("written by the agent\n"), false)
		case "backup":
			_, d, err = c.Backup(ctx, p)
		default:
			_, d, err = c.DeleteRecursive(ctx, p)
		}
		return decided(d, err)
	})
}

// shRun asks the session's bash to run command, as `launcher sh` does:
// `exit N` and the first line of its stderr, or a denial.
func shRun(command string) error {
	return asAgent(pki.Bash, bashTimeout, func(ctx context.Context, rc *rpc.Client) error {
		r, d, err := bash.NewClient(rc).Run(ctx, command)
		if err != nil || !d.Allowed {
			return decided(d, err)
		}
		line, _, _ := strings.Cut(string(r.Stderr), "\n")
		return outcome("exit %d %s", r.ExitCode, line)
	})
}

// codeRun runs script (its text: the agent reads no workspace file
// itself in components mode) as `launcher code run` does in a session:
// `value JSON` (its result), or a denial.
func codeRun(script string) error {
	return asAgent(pki.Bash, bashTimeout, func(ctx context.Context, rc *rpc.Client) error {
		r, d, err := bash.NewClient(rc).Code(ctx, script)
		switch {
		case err != nil || !d.Allowed:
			return decided(d, err)
		case r.Limit != "":
			// With what the limit said (its value): a check can tell the
			// policy's limit from a default that held instead.
			why, _, _ := strings.Cut(r.Error, "\n")
			if len(why) > 160 {
				why = why[:160]
			}
			return probe.Denied{Rule: "limit:" + r.Limit + " (" + why + ")"}
		case r.Error != "":
			return probe.Denied{Rule: "exception"}
		}
		return outcome("value %s", r.Value)
	})
}

// mcpRule is the rule a tool error names (mcpserver's denial).
var mcpRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`, rule ([a-z0-9._:-]+)\)`) })

// mcpRead starts this binary's MCP server (`launcher mcp`) on pipes, as
// an agent's MCP client does, and calls read_file for p: the server
// holds nothing of its own, so its answer is fs's.
func mcpRead(p string) error {
	self, err := os.Executable()
	if err != nil {
		return probe.Broken(err.Error())
	}
	return mcpReadFile(&mcp.CommandTransport{Command: exec.Command(self, "mcp")}, p)
}

// gatewayRead is a caller of `launcher serve` at url: it opens an MCP
// session there, with the bearer token in tokenFile ("-": none, a guest),
// and calls read_file for p.
func gatewayRead(url, tokenFile, p string) error {
	t, err := gatewayTransport(url, tokenFile)
	if err != nil {
		return err
	}
	return mcpReadFile(t, p)
}

// gatewaySh is gatewayRead calling run_command for command: `exit N
// LINE`, LINE the first of its stdout (of its stderr when it failed),
// or `denied RULE` when it was refused.
func gatewaySh(url, tokenFile, command string) error {
	t, err := gatewayTransport(url, tokenFile)
	if err != nil {
		return err
	}
	r, err := mcpCall(t, "run_command", map[string]any{"command": command})
	if err != nil {
		return err
	}
	if r.IsError {
		return toolDenial(r)
	}
	var out struct {
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		ExitCode int    `json:"exit_code"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		return probe.Broken("run_command's result: " + err.Error())
	}
	line := out.Stdout
	if out.ExitCode != 0 {
		line = out.Stderr
	}
	first, _, _ := strings.Cut(line, "\n")
	return outcome("exit %d %s", out.ExitCode, first)
}

// gatewayTransport is the transport of a caller of the gateway at url
// with the bearer token in tokenFile ("-": none).
func gatewayTransport(url, tokenFile string) (mcp.Transport, error) {
	hdr := http.Header{}
	if tokenFile != "-" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, probe.Broken(err.Error())
		}
		hdr.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	client := &http.Client{Transport: withHeader{hdr, http.DefaultTransport}}
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: -1}, nil
}

// withHeader is a RoundTripper that adds h to every request.
type withHeader struct {
	h  http.Header
	rt http.RoundTripper
}

func (w withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.h {
		r.Header[k] = v
	}
	return w.rt.RoundTrip(r)
}

// mcpReadFile connects over t and calls read_file for p: `ok`, or
// `denied RULE` (mcp-error when the tool error names no rule), the tool's
// words on stderr.
func mcpReadFile(t mcp.Transport, p string) error {
	r, err := mcpCall(t, "read_file", map[string]any{"path": p})
	if err != nil {
		return err
	}
	if !r.IsError {
		return nil
	}
	return toolDenial(r)
}

// mcpCall opens an MCP session over t, as an agent's client does, and
// calls tool with args; a failure of the session or the call is the
// probe's (Broken), a tool error is in the result.
func mcpCall(t mcp.Transport, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pinfold-probe", Version: "1"}, nil).Connect(ctx, t, nil)
	if err != nil {
		return nil, probe.Broken("mcp: " + err.Error())
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, probe.Broken("mcp " + tool + ": " + err.Error())
	}
	return r, nil
}

// toolDenial is a tool error as a denial: its rule (mcp-error when it
// names none), the tool's words on stderr.
func toolDenial(r *mcp.CallToolResult) error {
	var text strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	fmt.Fprintln(os.Stderr, strings.TrimSpace(text.String())) // what the tool said, for the record
	if m := mcpRule().FindStringSubmatch(text.String()); m != nil {
		return probe.Denied{Rule: m[1]}
	}
	return probe.Denied{Rule: "mcp-error"}
}

// fsPresent asks the session's fs to stat "." over a connection on which
// the agent presents its own certificate ("genuine") or one for the same
// identity from a CA of its own making ("forged"). The server alone
// judges: this side checks nothing of the server's certificate.
func fsPresent(which string) error {
	dir, addr := os.Getenv(session.EnvCredentials), os.Getenv(session.EnvFS)
	if dir == "" || addr == "" {
		return probe.Broken("not inside a components-mode session")
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			probe.Fail(err)
		}
		return b
	}
	leaf, err := pki.ParseLeaf(read(session.CAFile), read(session.CertFile), read(session.KeyFile), pki.Agent)
	if err != nil {
		return probe.Broken("the agent's credential: " + err.Error())
	}
	switch which {
	case "genuine":
	case "forged":
		other, err := pki.NewSession(leaf.SessionID(), time.Now())
		if err != nil {
			return probe.Broken(err.Error())
		}
		if leaf, err = other.Issue(pki.Agent); err != nil {
			return probe.Broken(err.Error())
		}
	default:
		return probe.Broken(fmt.Sprintf("fs-present: %q is neither genuine nor forged", which))
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS13,
		Certificates:       []tls.Certificate{{Certificate: [][]byte{leaf.CertDER()}, PrivateKey: leaf.PrivateKey()}},
		InsecureSkipVerify: true, // the server's verdict on the client is what is probed
	}
	rc := rpc.NewClientTLS(cfg, pki.FS, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		d.SetMultipathTCP(false)
		return d.DialContext(ctx, "tcp4", addr)
	})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fsTimeout)
	defer cancel()
	_, d, err := fs.NewClient(rc).Stat(ctx, ".")
	if err != nil {
		// The session refused the connection: a TLS alert, or the
		// connection closed before any answer.
		return probe.Denied{Rule: "handshake"}
	}
	return decided(d, nil)
}

// decided turns a component's answer into the probe's.
func decided(d rpc.Decision, err error) error {
	switch {
	case err != nil:
		return probe.Broken(err.Error())
	case d.Allowed:
		return nil
	case d.Rule != "":
		return probe.Denied{Rule: d.Rule}
	default:
		return probe.Denied{Rule: "reason-" + fmt.Sprint(d.Reason)}
	}
}
