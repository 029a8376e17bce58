package agentprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher/probe"
)

func init() {
	probe.Register("fs-read", 1, func(a []string) error { return fsRead(a[0]) },
		"PATH: read PATH through the session's fs, as the agent (components mode); a denial prints `denied RULE`")
	probe.Register("fs-write", 1, func(a []string) error { return fsDo(a[0], "write") },
		"PATH: write a line to PATH through the session's fs, as the agent")
	probe.Register("fs-rm-r", 1, func(a []string) error { return fsDo(a[0], "rm-r") },
		"PATH: delete the tree PATH through the session's fs, as the agent (`launcher fs rm -r`)")
	probe.Register("fs-present", 1, func(a []string) error { return fsPresent(a[0]) },
		"genuine|forged: stat . at the session's fs presenting the agent's certificate, or one for its identity from another CA (`denied handshake`)")
	probe.Register("sh-run", 1, func(a []string) error { return shRun(a[0]) },
		"COMMAND: run COMMAND through the session's bash, as the agent (`launcher sh`): `exit N STDERR-LINE`, or `denied RULE`")
	probe.Register("code-run", 1, func(a []string) error { return codeRun(a[0]) },
		"SCRIPT: run the Code Mode script SCRIPT (its text) through the session's bash, as the agent: `value JSON`, or `denied RULE` (the static check), `denied limit:NAME`, `denied exception`")
}

// shRun asks the session's bash to run command, as `launcher sh` does,
// and prints how it ended: `exit N` and the first line of its stderr
// (at most 200 bytes), or a denial. It exits itself when the command ran.
func shRun(command string) error {
	rc, err := session.AgentClient(pki.Bash)
	if err != nil {
		return probe.Broken(err.Error())
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, d, err := bash.NewClient(rc).Run(ctx, command)
	if err != nil || !d.Allowed {
		return decided(d, err)
	}
	line, _, _ := strings.Cut(string(r.Stderr), "\n")
	if len(line) > 200 {
		line = line[:200]
	}
	fmt.Printf("exit %d %s\n", r.ExitCode, line)
	os.Exit(0)
	return nil
}

// codeRun runs script (its text: the agent reads no workspace file
// itself in components mode) as `launcher code run` does in a session,
// and prints what came of it: `value JSON` (its result, at most 200
// bytes of it), or a denial. It exits itself on success, since its line
// is not report's `ok`.
func codeRun(script string) error {
	rc, err := session.AgentClient(pki.Bash)
	if err != nil {
		return probe.Broken(err.Error())
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, d, err := bash.NewClient(rc).Code(ctx, script)
	switch {
	case err != nil || !d.Allowed:
		return decided(d, err)
	case r.Limit != "":
		return probe.Denied{Rule: "limit:" + r.Limit}
	case r.Error != "":
		return probe.Denied{Rule: "exception"}
	}
	v := string(r.Value)
	if len(v) > 200 {
		v = v[:200]
	}
	fmt.Println("value " + v)
	os.Exit(0)
	return nil
}

// componentTimeout bounds one call to a component.
const componentTimeout = 20 * time.Second

// fsRead reads p through the session's fs, as the agent.
func fsRead(p string) error {
	rc, err := session.AgentClient(pki.FS)
	if err != nil {
		return probe.Broken(err.Error())
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), componentTimeout)
	defer cancel()
	_, d, err := fs.NewClient(rc).Read(ctx, p, 0, 0)
	return decided(d, err)
}

// fsDo asks the session's fs, as the agent, to write a line to p or to
// delete the tree p.
func fsDo(p, what string) error {
	rc, err := session.AgentClient(pki.FS)
	if err != nil {
		return probe.Broken(err.Error())
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), componentTimeout)
	defer cancel()
	var d rpc.Decision
	if what == "write" {
		_, d, err = fs.NewClient(rc).Write(ctx, p, []byte("written by the agent\n"), false)
	} else {
		_, d, err = fs.NewClient(rc).DeleteRecursive(ctx, p)
	}
	return decided(d, err)
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
	ctx, cancel := context.WithTimeout(context.Background(), componentTimeout)
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
