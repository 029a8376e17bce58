package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/mcpserver"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/session"
)

const mcpHelp = `Usage (inside a components-mode session, as one of the agent's MCP servers):
  launcher mcp
Usage (UNCONFINED, on the host, with all of your authority):
  launcher mcp --full-access --workspace DIR

Serves the session's components to the agent as Model Context Protocol
tools, over stdio (newline-delimited JSON-RPC):
  read_file, write_file, list_dir, delete   through fs (a recursive
                                            delete: the person confirms,
                                            a backup is made first)
  run_command                               through bash, under [commands]
  execute_code                              Code Mode, through bash
  fetch                                     through net (proxy mode only)
A call that needs the person's approval waits for their answer on the
launcher's terminal. A denial is a tool error naming the rule and a hint.

Without --full-access it has no authority of its own: it uses the agent's
credential and the addresses the launcher put in the agent's environment
(PINFOLD_CREDENTIALS, PINFOLD_FS, PINFOLD_BASH, PINFOLD_NET). Outside a
components-mode session it refuses to start: there is nothing to broker,
and it never reaches the host's files, commands or network itself.

Register it in the agent's MCP configuration (README: "MCP server").

--full-access --workspace DIR serves the same tools with no session, no
component and no policy: UNCONFINED. Files and commands act directly on
this host with the authority of the user running it (its uid, its
network, its environment and the secrets in it), and no one is asked:
it is for an owner who would run the agent with --full-access anyway.
What the host refuses comes back as the host's error (not found,
permission denied). Relative paths resolve against DIR (an absolute,
clean path of an existing directory); ".." and absolute paths reach
the rest of the host. read_file reads regular files only; write_file
is atomic; a recursive delete happens at once, with no backup (it is
irreversible), but never of /, DIR or a directory above DIR.
run_command runs /bin/bash --noprofile --norc -c in DIR, in its own
process group, killed at 10 minutes, each output stream capped at
1 MiB. There is no Code Mode (execute_code is refused) and no fetch.
A warning is printed on every start. It is never chosen automatically,
and the two flags go together: either alone is a usage error.
` + exitCodesHelp

// mcpProbeTimeout bounds the start-up check that fs answers.
const mcpProbeTimeout = 10 * time.Second

func (e env) mcpVerb(args []string) error {
	fset := flags("mcp")
	full := fset.Bool("full-access", false, "")
	ws := fset.String("workspace", "", "")
	if _, err := e.parse(fset, mcpHelp, args, 0); err != nil {
		return err
	}
	switch {
	case *full && *ws == "":
		return fail(exitUsage, "name the directory that relative paths resolve against: launcher mcp --full-access --workspace DIR",
			"mcp: --full-access needs --workspace DIR")
	case !*full && *ws != "":
		return fail(exitUsage, "inside a components-mode session the workspace is the session's: drop --workspace; "+
			"for an unconfined server on the host, add --full-access", "mcp: --workspace is only for --full-access")
	case *full:
		return e.mcpFullAccess(*ws)
	}
	const outside = `start it from inside a components-mode session (mode = "components"): register ` +
		"`launcher mcp` as an MCP server of the agent that the launcher starts"
	fc, err := session.AgentClient(pki.FS)
	if err != nil {
		return fail(exitUsage, outside, "mcp: nothing to broker: %v", err)
	}
	defer fc.Close()
	bc, err := session.AgentClient(pki.Bash)
	if err != nil {
		return fail(exitUsage, outside, "mcp: nothing to broker: %v", err)
	}
	defer bc.Close()
	files := fs.NewClient(fc)
	ctx, cancel := context.WithTimeout(context.Background(), mcpProbeTimeout)
	_, _, err = files.Stat(ctx, ".")
	cancel()
	if err != nil {
		return fail(exitFailure, "is the session still running? `launcher mcp` works only inside it", "mcp: the session's fs component does not answer: %v", err)
	}
	b := mcpserver.Backends{Files: files, Shell: bash.NewClient(bc)}
	if addr := os.Getenv(session.EnvNet); addr != "" {
		b.Web = proxyClient(addr)
	}
	return serveMCP(b)
}

// mcpFullAccess serves the host itself, unconfined, saying so.
func (e env) mcpFullAccess(ws string) error {
	b, err := mcpserver.HostBackends(ws, mcpserver.HostOptions{})
	if err != nil {
		return fail(exitUsage, "give an existing directory as an absolute, clean path", "mcp: %v", err)
	}
	fmt.Fprintf(e.stderr, "launcher: warning: UNCONFINED: mcp --full-access acts on this host with all of the authority of uid %d; no policy applies\n", os.Geteuid())
	return serveMCP(b)
}

// serveMCP serves b over stdio until the client goes or a signal comes.
func serveMCP(b mcpserver.Backends) error {
	// A client that goes away mid-answer is an error to write, not a
	// signal that kills the server.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserver.Serve(ctx, b, os.Stdin, os.Stdout); err != nil {
		return fail(exitFailure, "", "mcp: %v", err)
	}
	return nil
}

// proxyClient is fetch's client: every request through net's proxy at
// addr, redirects returned rather than followed, the system's roots
// (with SSL_CERT_FILE, which names the session's interception CA when
// net injects secrets).
func proxyClient(addr string) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second}
	d.SetMultipathTCP(false) // the agent's seccomp refuses MPTCP
	return &http.Client{
		Timeout: 5 * time.Minute,
		Transport: &http.Transport{
			Proxy:                 http.ProxyURL(&url.URL{Scheme: "http", Host: addr}),
			DialContext:           d.DialContext,
			ResponseHeaderTimeout: time.Minute,
			MaxIdleConns:          4,
			// net's refusal of a CONNECT (https) is its 403 with the
			// rule; without this the transport reports only "Forbidden".
			OnProxyConnectResponse: func(_ context.Context, _ *url.URL, _ *http.Request, r *http.Response) error {
				if rule := r.Header.Get("X-Pinfold-Rule"); r.StatusCode == http.StatusForbidden && rule != "" {
					return mcpserver.NetDenial(rule, r.Header.Get("X-Pinfold-Reason"))
				}
				return nil
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
