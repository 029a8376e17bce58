package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/policy"
)

// agentSession is what a components session gives the agent, in
// process: the agent's credential in a directory PINFOLD_CREDENTIALS
// names, and PINFOLD_FS and PINFOLD_BASH naming loopback addresses where
// the test serves (serveAs) or where nothing listens.
type agentSession struct {
	t    *testing.T
	sess *pki.Session
}

func newAgentSession(t *testing.T) *agentSession {
	t.Helper()
	sess, err := pki.NewSession("verbs-test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	agent, err := sess.Issue(pki.Agent)
	if err != nil {
		t.Fatal(err)
	}
	key, err := agent.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{session.CAFile: sess.CAPEM(), session.CertFile: agent.CertPEM(), session.KeyFile: key} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(session.EnvCredentials, dir)
	t.Setenv(session.EnvFS, closedAddr(t))
	t.Setenv(session.EnvBash, closedAddr(t))
	return &agentSession{t: t, sess: sess}
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveAs serves role's component with register's operations on a
// loopback listener that env names, until the test ends.
func (a *agentSession) serveAs(role pki.Role, env string, register func(*rpc.Server)) *rpc.Server {
	t := a.t
	t.Helper()
	leaf, err := a.sess.Issue(role)
	if err != nil {
		t.Fatal(err)
	}
	srv := rpc.NewServer(leaf, slog.New(slog.NewTextHandler(io.Discard, nil)))
	register(srv)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	t.Setenv(env, ln.Addr().String())
	return srv
}

// serveFS serves the real fs component over a fresh workspace, which it
// returns.
func (a *agentSession) serveFS() string {
	ws := a.t.TempDir()
	root, err := fs.OpenRoot(ws, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	a.serveAs(pki.FS, session.EnvFS, func(srv *rpc.Server) { fs.Register(srv, root) })
	return ws
}

// runVerb runs the launcher with args, as the CLI does, and returns its
// exit status and what it printed.
func runVerb(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// answering is an operation whose handler answers d (and result).
func answering(op string, d rpc.Decision, result any) func(*rpc.Server) {
	return func(srv *rpc.Server) {
		srv.Handle(op, func(context.Context, pki.Role, json.RawMessage) (rpc.Decision, any) { return d, result })
	}
}

// verbCase is a verb's command line and what it must end with: the exit
// status, words the message must hold, and whether it may say "denied"
// (only a component's decision does).
type verbCase struct {
	name   string
	args   []string
	code   int
	says   []string
	denied bool
}

func (c verbCase) check(t *testing.T) {
	t.Helper()
	code, _, stderr := runVerb(c.args...)
	if code != c.code {
		t.Errorf("%s: launcher %s exits %d, want %d: %s", c.name, strings.Join(c.args, " "), code, c.code, stderr)
	}
	for _, w := range c.says {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: the message lacks %q: %s", c.name, w, stderr)
		}
	}
	if strings.Contains(stderr, "denied") != c.denied {
		t.Errorf("%s: says denied: %v, want %v: %s", c.name, !c.denied, c.denied, stderr)
	}
}

// fs's answers that decide nothing exit 125 and say what happened; only
// its decisions (a rule, the call table) exit 119 and say "denied". A
// file not found, a path fs does not take or a directory that is not
// empty exited 119 as "denied (unknown)" and "denied (bad-request)".
func TestFSVerbNotDecisions(t *testing.T) {
	a := newAgentSession(t)
	ws := a.serveFS()
	if err := os.MkdirAll(filepath.Join(ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "d", "f"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []verbCase{
		{"read", []string{"fs", "read", "d/f"}, exitOK, nil, false},
		{"read missing", []string{"fs", "read", "nope"}, exitFailure, []string{"fs read: not found", "no such file"}, false},
		{"stat missing", []string{"fs", "stat", "nope"}, exitFailure, []string{"fs stat: not found"}, false},
		{"ls missing", []string{"fs", "ls", "nope"}, exitFailure, []string{"fs ls: not found"}, false},
		{"mv missing", []string{"fs", "mv", "nope", "x"}, exitFailure, []string{"fs mv: not found"}, false},
		{"read a directory", []string{"fs", "read", "d"}, exitFailure, []string{"fs read: failed (bad-request)", "not a regular file"}, false},
		{"dot-dot", []string{"fs", "read", "../etc/passwd"}, exitFailure, []string{"failed (bad-request)", `".." component`}, false},
		{"absolute", []string{"fs", "stat", "/etc/passwd"}, exitFailure, []string{"failed (bad-request)", "absolute"}, false},
		{"not empty", []string{"fs", "rm", "d"}, exitFailure, []string{"fs rm: failed (bad-request)", "not empty"}, false},
		{"exists", []string{"fs", "mkdir", "d"}, exitFailure, []string{"fs mkdir: failed (bad-request)", "already exists"}, false},
		// A decision: no person and no backup store in this session.
		{"recursive", []string{"fs", "rm", "-r", "d"}, exitDenied, []string{"fs rm: denied (no-rule, rule fs.delete-recursive)"}, true},
	} {
		c.check(t)
	}
	if _, err := os.Stat(filepath.Join(ws, "d", "f")); err != nil {
		t.Errorf("the workspace changed: %v", err)
	}
}

// sh's answers from bash: a decision (its rules, the person, the call
// table) exits 119 and says "denied"; a command line bash cannot read is
// a usage error, as check command says; a request bash could not take
// fails (125). bash.parse exited 119 as "denied (bad-request, …)".
func TestShVerbRefusals(t *testing.T) {
	for _, c := range []struct {
		d rpc.Decision
		verbCase
	}{
		{rpc.Deny(rpc.ReasonNoRule, "commands.deny[0]", "refused (rm)"),
			verbCase{"rule", []string{"sh", "rm x"}, exitDenied, []string{"sh: denied (no-rule, rule commands.deny[0]): refused (rm)"}, true}},
		{rpc.Deny(rpc.ReasonNoRule, bash.RuleDeclined, "the person did not approve it"),
			verbCase{"declined", []string{"sh", "make"}, exitDenied, []string{"rule bash.declined"}, true}},
		{rpc.Deny(rpc.ReasonCallerRole, "", "only the agent runs commands"),
			verbCase{"caller", []string{"sh", "true"}, exitDenied, []string{"sh: denied (caller-role)"}, true}},
		{rpc.Deny(rpc.ReasonBadRequest, bash.RuleParse, "the command line was not analysed: unclosed quote"),
			verbCase{"parse", []string{"sh", "echo 'x"}, exitUsage, []string{"sh: bash could not read the command line", "unclosed quote"}, false}},
		{rpc.Deny(rpc.ReasonBadRequest, "", `run takes {"command": …} and no data`),
			verbCase{"malformed", []string{"sh", "true"}, exitFailure, []string{"sh: failed (bad-request)"}, false}},
		{rpc.Deny(rpc.ReasonNoRule, bash.RuleWorker, "the command's worker failed (it may have started): boom"),
			verbCase{"worker", []string{"sh", "true"}, exitFailure, []string{"worker failed"}, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newAgentSession(t)
			a.serveAs(pki.Bash, session.EnvBash, func(srv *rpc.Server) {
				srv.HandleData(bash.OpRun, func(context.Context, pki.Role, json.RawMessage, []byte) (rpc.Decision, any, []byte) {
					return c.d, nil, nil
				})
			})
			c.check(t)
		})
	}
}

// A verb that gets no decision (nothing listening, a connection that
// ends at once or while the component answers, a component of another
// session, an answer that does not decode) fails with 125 and says that
// no usable answer came, never "denied".
func TestAgentVerbsNoAnswer(t *testing.T) {
	verbs := []verbCase{
		{"fs", []string{"fs", "stat", "x"}, exitFailure, []string{"fs stat: no usable answer from the session's fs component"}, false},
		{"sh", []string{"sh", "true"}, exitFailure, []string{"sh: no usable answer from the session's bash component"}, false},
		{"code", []string{"code", "run", "/dev/null"}, exitFailure, []string{"code run: no usable answer from the session's bash component"}, false},
	}
	check := func(t *testing.T, why string) {
		t.Helper()
		for _, c := range verbs {
			c.name += ", " + why
			c.check(t)
		}
	}
	t.Run("nothing listens", func(t *testing.T) {
		newAgentSession(t)
		check(t, "nothing listens")
	})
	t.Run("closed at once", func(t *testing.T) {
		newAgentSession(t)
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for i := 0; i < 100; i++ {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		t.Setenv(session.EnvFS, ln.Addr().String())
		t.Setenv(session.EnvBash, ln.Addr().String())
		check(t, "closed at once")
	})
	t.Run("another session", func(t *testing.T) {
		other := newAgentSession(t)
		other.serveAs(pki.FS, session.EnvFS, answering(fs.OpStat, rpc.Allow("x"), fs.Info{}))
		other.serveAs(pki.Bash, session.EnvBash, answering(bash.OpCode, rpc.Allow("x"), nil))
		fsAddr, bashAddr := os.Getenv(session.EnvFS), os.Getenv(session.EnvBash)
		newAgentSession(t) // the agent's credential from another CA
		t.Setenv(session.EnvFS, fsAddr)
		t.Setenv(session.EnvBash, bashAddr)
		check(t, "another session")
	})
	t.Run("dies while answering", func(t *testing.T) {
		a := newAgentSession(t)
		die := func(srv **rpc.Server) rpc.Handler {
			return func(ctx context.Context, _ pki.Role, _ json.RawMessage) (rpc.Decision, any) {
				gone, cancel := context.WithCancel(context.Background())
				cancel()
				go (*srv).Shutdown(gone) // closes the connection in flight
				<-ctx.Done()
				return rpc.Allow("x"), nil
			}
		}
		var fsSrv, bashSrv *rpc.Server
		fsSrv = a.serveAs(pki.FS, session.EnvFS, func(srv *rpc.Server) { srv.Handle(fs.OpStat, die(&fsSrv)) })
		bashSrv = a.serveAs(pki.Bash, session.EnvBash, func(srv *rpc.Server) {
			srv.Handle(bash.OpRun, die(&bashSrv))
			srv.Handle(bash.OpCode, die(&bashSrv))
		})
		for _, c := range verbs {
			c.name += ", dies while answering"
			c.check(t)
			// Each verb ends its server; the next needs its own.
			if c.name == "fs, dies while answering" {
				continue
			}
			bashSrv = a.serveAs(pki.Bash, session.EnvBash, func(srv *rpc.Server) {
				srv.Handle(bash.OpRun, die(&bashSrv))
				srv.Handle(bash.OpCode, die(&bashSrv))
			})
		}
	})
	t.Run("malformed answer", func(t *testing.T) {
		a := newAgentSession(t)
		a.serveAs(pki.FS, session.EnvFS, answering(fs.OpStat, rpc.Allow("x"), "not an Info"))
		a.serveAs(pki.Bash, session.EnvBash, func(srv *rpc.Server) {
			srv.HandleData(bash.OpRun, func(context.Context, pki.Role, json.RawMessage, []byte) (rpc.Decision, any, []byte) {
				return rpc.Allow("x"), bash.RunResult{StdoutLen: 99}, nil // more than the data sent
			})
			srv.Handle(bash.OpCode, func(context.Context, pki.Role, json.RawMessage) (rpc.Decision, any) {
				return rpc.Allow("x"), []int{1}
			})
		})
		check(t, "malformed answer")
	})
}

// names is a resolver with fixed answers; a name it lacks does not
// resolve.
type names map[string][]netip.Addr

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// net get against the real net proxy, in process: net's decisions (403,
// in plain HTTP and on a CONNECT) exit 119 with the rule; what net could
// not do (502: no resolution, no connection; 504) exits 125 naming net's
// reason and rule, not "denied"; an upstream's own error status exits 125
// as the site's answer, even with a forged X-Pinfold-Rule (net drops it).
// A refused CONNECT exited 125 as "Forbidden" (Go's transport keeps only
// the status), and a 502 printed net's text on stdout as if a body.
func TestNetVerbAnswers(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/forged":
			w.Header().Set("X-Pinfold-Rule", "network.deny[0]")
			w.Header().Set("X-Pinfold-Reason", "denied-host")
			w.WriteHeader(http.StatusForbidden)
		case "/reflected": // as net answers on a connection it intercepts
			w.Header().Set("X-Pinfold-Rule", netc.RuleSecretsReflected)
			w.Header().Set("X-Pinfold-Reason", netc.ReasonSecretReflected)
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "pinfold: secret-reflected (secrets.reflected): the upstream's answer carries the injected secret\n")
		case "/missing":
			http.NotFound(w, r)
		default:
			io.WriteString(w, "hello from upstream\n")
		}
	}))
	defer upstream.Close()
	var upstreamFor map[uint16]string
	var intercepted string
	eg, err := netc.NewEgress(policy.Network{Mode: policy.NetProxy, BlockAll: true,
		Allow: []policy.Domain{"site.test", "gone.test", "noname.test", "secret.test"}, Deny: []policy.Domain{"denied.test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	site, gone, secret := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.20"), netip.MustParseAddr("192.0.2.30")
	p := &netc.Proxy{Decider: eg, Parse: netc.SplitHostPort, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Resolver: names{"site.test": {site}, "gone.test": {gone}, "secret.test": {secret}},
		Dial: func(ctx context.Context, network string, a netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			switch a.Addr() {
			case site:
				return d.DialContext(ctx, "tcp4", upstreamFor[a.Port()])
			case secret:
				return d.DialContext(ctx, "tcp4", intercepted)
			}
			return nil, errors.New("no route in this test")
		}}
	// TEST-NET addresses are not public: the test's own Decider allows
	// them, the host's rule still deciding first.
	p.Decider = testNetDecider{eg}
	// https to site.test is a byte tunnel to a TLS upstream whose chain
	// ends in the root that netGetRoots trusts.
	ca := newTestCA(t, "some public CA")
	netGetRoots = x509.NewCertPool()
	netGetRoots.AddCert(ca.cert)
	defer func() { netGetRoots = nil }()
	tlsUp := httptest.NewUnstartedServer(upstream.Config.Handler)
	tlsUp.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "site.test")}}
	tlsUp.StartTLS()
	defer tlsUp.Close()
	// secret.test stands for a host net intercepts: its chain ends in
	// a root named as net's interception CA, and its X-Pinfold-* are
	// net's.
	injectCA := newTestCA(t, netc.InjectCAName)
	netGetRoots.AddCert(injectCA.cert)
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, session.InjectCAFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: injectCA.cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(session.EnvCredentials, creds)
	injected := httptest.NewUnstartedServer(upstream.Config.Handler)
	injected.TLS = &tls.Config{Certificates: []tls.Certificate{injectCA.leaf(t, "secret.test")}}
	injected.StartTLS()
	defer injected.Close()
	intercepted = injected.Listener.Addr().String()
	upstreamFor = map[uint16]string{80: upstream.Listener.Addr().String(), 443: tlsUp.Listener.Addr().String()}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	defer p.Shutdown(context.Background())
	t.Setenv(session.EnvNet, ln.Addr().String())
	for _, c := range []verbCase{
		{"fetched", []string{"net", "get", "http://site.test/"}, exitOK, nil, false},
		{"denied", []string{"net", "get", "http://denied.test/"}, exitDenied, []string{"net get http://denied.test/: denied (denied-host, rule network.deny[0]; HTTP 403 Forbidden)"}, true},
		{"denied https", []string{"net", "get", "https://denied.test/"}, exitDenied, []string{"net get https://denied.test/: denied (denied-host, rule network.deny[0]; HTTP 403 Forbidden)"}, true},
		{"no name", []string{"net", "get", "http://noname.test/"}, exitFailure, []string{"not fetched, and not a policy decision (resolve-failed, rule proxy.resolve; HTTP 502 Bad Gateway): pinfold: resolve-failed (proxy.resolve): the name did not resolve"}, false},
		{"no name https", []string{"net", "get", "https://noname.test/"}, exitFailure, []string{"(resolve-failed, rule proxy.resolve; HTTP 502 Bad Gateway)"}, false},
		{"no connection", []string{"net", "get", "http://gone.test/"}, exitFailure, []string{"(dial-failed, rule proxy.dial; HTTP 502 Bad Gateway)"}, false},
		{"site's 404", []string{"net", "get", "http://site.test/missing"}, exitFailure, []string{"the site answered HTTP 404 Not Found"}, false},
		{"forged", []string{"net", "get", "http://site.test/forged"}, exitFailure, []string{"the site answered HTTP 403 Forbidden"}, false},
		{"fetched https", []string{"net", "get", "https://site.test/"}, exitOK, nil, false},
		// In a byte tunnel net never sees the answer: its headers are the
		// site's, whatever they say.
		{"forged https", []string{"net", "get", "https://site.test/forged"}, exitFailure, []string{"the site answered HTTP 403 Forbidden"}, false},
		{"reflected", []string{"net", "get", "https://secret.test/reflected"}, exitDenied,
			[]string{"net get https://secret.test/reflected: denied (secret-reflected, rule secrets.reflected; HTTP 502 Bad Gateway): pinfold: secret-reflected"}, true},
		{"forged in a tunnel", []string{"net", "get", "https://site.test/reflected"}, exitFailure, []string{"the site answered HTTP 502 Bad Gateway"}, false},
	} {
		c.check(t)
	}
	// A site whose chain ends in a root the agent trusts that bears the
	// interception CA's name but is another certificate: its headers are
	// its own.
	lookalike := newTestCA(t, netc.InjectCAName)
	netGetRoots.AddCert(lookalike.cert)
	tlsUp.TLS.Certificates[0] = lookalike.leaf(t, "site.test")
	verbCase{"forged under the CA's name", []string{"net", "get", "https://site.test/reflected"}, exitFailure, []string{"the site answered HTTP 502 Bad Gateway"}, false}.check(t)
	// A site whose certificate does not verify: its TLS failed, not net.
	roots := netGetRoots
	netGetRoots = x509.NewCertPool()
	verbCase{"untrusted site", []string{"net", "get", "https://site.test/"}, exitFailure, []string{"certificate signed by unknown authority"}, false}.check(t)
	if _, _, stderr := runVerb("net", "get", "https://site.test/"); strings.Contains(stderr, "net component") {
		t.Errorf("a site's TLS failure is blamed on net: %s", stderr)
	}
	netGetRoots = roots
	// net's refusal is not the body of a page.
	if code, stdout, _ := runVerb("net", "get", "http://gone.test/"); code == exitOK || stdout != "" {
		t.Errorf("net's 502 printed on stdout: %d %q", code, stdout)
	}
	// net not there: no answer, not a refusal.
	t.Setenv(session.EnvNet, closedAddr(t))
	verbCase{"net gone", []string{"net", "get", "http://site.test/"}, exitFailure, []string{"no usable answer from the session's net component"}, false}.check(t)
}

// testNetDecider is eg with the documentation range 192.0.2.0/24 taken
// as public: the test's upstream stands behind those addresses.
type testNetDecider struct{ eg *netc.Egress }

func (d testNetDecider) DecideHost(h netc.Host, port uint16) netc.Verdict {
	return d.eg.DecideHost(h, port)
}
func (d testNetDecider) DecideAddr(h netc.Host, a netip.Addr, port uint16) netc.Verdict {
	if netip.MustParsePrefix("192.0.2.0/24").Contains(a) {
		return netc.Verdict{Allowed: true, Rule: "test.public"}
	}
	return d.eg.DecideAddr(h, a, port)
}

// testCA is a root for the test's https upstreams.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert, key}
}

func (ca *testCA) leaf(t *testing.T, host string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// check url when this machine's resolver fails: a name its rules allow is
// not one net "would refuse" (net looks it up itself), so check url fails
// (125) and says to give the addresses; a name its rules refuse is still
// refused (119). It exited 119, "refused by resolve.none".
func TestCheckURLLookupFailed(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "proxy.toml")
	if err := os.WriteFile(pol, []byte("version = 1\n[workspace]\npath = \"/var/tmp\"\n[network]\nmode = \"proxy\"\nallow = [\"*.github.com\", \"api.github.com\"]\ndeny = [\"gist.github.com\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := checkLookup
	defer func() { checkLookup = lookup }()
	checkLookup = func(context.Context, string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}
	}
	for _, c := range []verbCase{
		{"allowed name", []string{"check", "url", "--policy", pol, "https://api.github.com/"}, exitFailure,
			[]string{"api.github.com is allowed by name (network.allow[1]), but its addresses could not be checked", "server misbehaving", "hint: give the name's addresses with --resolve"}, false},
		{"refused name", []string{"check", "url", "--policy", pol, "https://gist.github.com/"}, exitDenied, nil, false},
		{"given", []string{"check", "url", "--policy", pol, "--resolve", "api.github.com=140.82.112.6", "https://api.github.com/"}, exitOK, nil, false},
	} {
		c.check(t)
	}
	checkLookup = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("140.82.112.6")}, nil
	}
	verbCase{"looked up", []string{"check", "url", "--policy", pol, "https://api.github.com/"}, exitOK, nil, false}.check(t)
}

// The statuses the verbs document for what bash answers: the command's
// own status, 118 at its timeout, 117 for a script that failed; and a
// credential the agent cannot read in a session is a failure (125) for
// code run as for fs and sh, not a usage error (it exited 120, with the
// hint for outside a session).
func TestBashVerbsStatuses(t *testing.T) {
	a := newAgentSession(t)
	run := bash.RunResult{ExitCode: 3}
	a.serveAs(pki.Bash, session.EnvBash, func(srv *rpc.Server) {
		srv.HandleData(bash.OpRun, func(context.Context, pki.Role, json.RawMessage, []byte) (rpc.Decision, any, []byte) {
			return rpc.Allow("commands.auto[0]"), run, nil
		})
		srv.Handle(bash.OpCode, func(context.Context, pki.Role, json.RawMessage) (rpc.Decision, any) {
			return rpc.Allow("code_mode"), bash.CodeResult{Logs: []string{}, Error: "Error: boom"}
		})
	})
	verbCase{"status", []string{"sh", "exit 3"}, 3, nil, false}.check(t)
	run = bash.RunResult{ExitCode: -1, TimedOut: true}
	verbCase{"timeout", []string{"sh", "sleep 9"}, exitTimedOut, []string{"killed at the policy's commands.timeout"}, false}.check(t)
	run = bash.RunResult{ExitCode: -1}
	verbCase{"no status", []string{"sh", "true"}, exitFailure, []string{"without an exit status"}, false}.check(t)
	verbCase{"script failed", []string{"code", "run", "/dev/null"}, exitScriptFailed, []string{"code run: Error: boom"}, false}.check(t)

	t.Setenv(session.EnvCredentials, filepath.Join(t.TempDir(), "nowhere"))
	for _, c := range []verbCase{
		{"fs credential", []string{"fs", "stat", "x"}, exitFailure, []string{"the agent's credential"}, false},
		{"sh credential", []string{"sh", "true"}, exitFailure, []string{"the agent's credential"}, false},
		{"code credential", []string{"code", "run", "/dev/null"}, exitFailure, []string{"code run: the agent's credential"}, false},
	} {
		c.check(t)
	}
}
