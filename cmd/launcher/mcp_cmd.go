package main

import (
	"context"
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

It has no authority of its own: it uses the agent's credential and the
addresses the launcher put in the agent's environment (PINFOLD_CREDENTIALS,
PINFOLD_FS, PINFOLD_BASH, PINFOLD_NET). Outside a components-mode session
it refuses to start: there is nothing to broker, and it never reaches the
host's files, commands or network itself.

Register it in the agent's MCP configuration (README: "MCP server").
` + exitCodesHelp

// mcpProbeTimeout bounds the start-up check that fs answers.
const mcpProbeTimeout = 10 * time.Second

func (e env) mcpVerb(args []string) error {
	if _, err := e.parse(flags("mcp"), mcpHelp, args, 0); err != nil {
		return err
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
