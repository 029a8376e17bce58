package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/gateway"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
	"github.com/pinfold/pinfold/register"
)

const serveHelp = `Usage:
  launcher serve --policy-sha256 HASH --policy FILE [--listen ADDR]
                 [--tls-cert FILE --tls-key FILE | --tls-self | --insecure-plain-http]
                 [--state DIR] [--tokens FILE] [--max-sessions N] [--idle-timeout D]
                 [--guest-workspace SIZE] [--allow-host NAME]... [--max-connections N]
  launcher serve token add|list|revoke ...   (launcher serve token --help)

Serves MCP over streamable HTTP at /mcp (and GET /healthz). Each MCP
session runs in its own components-mode session under the pinned policy
(mode = "components"; as root): its own uids, components and sandbox,
created on initialize and ended on DELETE, after --idle-timeout without a
request, or when its sandbox stops — never retried, and never outside it.

Who a request is comes from its Authorization header alone:
  Bearer TOKEN (an owner token)   the policy's own session (safe mode), or,
                                  with the header "Pinfold-Mode: full" and a
                                  token that has the host.execute capability,
                                  full access: launcher mcp --full-access in the
                                  policy's workspace as its owner, UNCONFINED
  no token, or a token not valid  a guest: a new empty workspace and HOME, no
                                  host files beyond the system's, no secrets;
                                  a token not valid counts as a failed attempt
                                  and too many from one address get 429
Full access asked for without the capability is refused (403), never
turned into something else. The client's address is the socket's peer;
forwarded-for headers are ignored. No one answers the sandbox's questions
here: what the policy leaves to the person is refused.

  --listen ADDR          default 127.0.0.1:7480
  --tls-cert/--tls-key   serve HTTPS with this certificate
  --tls-self             serve HTTPS with a new self-signed certificate
                         (its sha256 fingerprint is printed; pin it)
  --insecure-plain-http  plain HTTP on an address that is not loopback
                         (tokens travel unencrypted; a warning is printed)
  --state DIR            sessions and logs (default /var/lib/pinfold/serve)
  --tokens FILE          owner tokens (default: launcher serve token's); where
                         the policy's paths reach it, its directory must hold
                         nothing but the store, its lock and the launcher's
                         other own files (the default vault), and every
                         session's sandbox covers it whole (else refused)
  --max-sessions N       sessions at once (default 8)
  --idle-timeout D       default 15m
  --max-connections N    connections held at once (default 1024), an eighth of
                         them from one address (an IPv6 /64) but loopback; one more is
                         answered 503 (plain HTTP: once its request comes, or
                         after 1 s) or closed at once (HTTPS)
  --auth-failures N      failed authentications one address may make before
                         429 (default 10; one more allowed every 30 s)
  --guest-workspace SIZE a guest's workspace is a tmpfs of this size, at most
                         16384 files (default 64MiB; needs Linux 6.3 or later);
                         "unlimited": a directory under --state, which a guest
                         can fill
  --allow-host NAME      a name (or address) clients reach the gateway by,
                         beyond the address they connect to, localhost on
                         loopback and the --tls-cert's names (repeatable):
                         a request whose Host or Origin names anything else
                         is refused (403), so that no web page on a name
                         pointed at this address can use it (DNS rebinding)

SIGINT or SIGTERM ends every session, then the gateway.
` + exitCodesHelp

func (e env) serve(args []string) error {
	if len(args) > 0 && args[0] == "token" {
		return e.serveToken(args[1:])
	}
	fset := flags("serve")
	pin := fset.String("policy-sha256", "", "")
	file := fset.String("policy", "", "")
	listen := fset.String("listen", "127.0.0.1:7480", "")
	certFile := fset.String("tls-cert", "", "")
	keyFile := fset.String("tls-key", "", "")
	self := fset.Bool("tls-self", false, "")
	plain := fset.Bool("insecure-plain-http", false, "")
	state := fset.String("state", "/var/lib/pinfold/serve", "")
	tokens := fset.String("tokens", "", "")
	maxSessions := fset.Int("max-sessions", 8, "")
	maxConns := fset.Int("max-connections", 1024, "")
	idle := fset.Duration("idle-timeout", 15*time.Minute, "")
	authFailures := fset.Int("auth-failures", 10, "")
	guestWS := fset.String("guest-workspace", "64MiB", "")
	var allowHosts hostFlags
	fset.Var(&allowHosts, "allow-host", "")
	if _, err := e.parse(fset, serveHelp, args, 0); err != nil {
		return err
	}
	if *pin == "" || *file == "" {
		return fail(exitUsage, "compute the hash yourself (sha256sum FILE) and pass both", "serve: needs --policy-sha256 HASH and --policy FILE")
	}
	if (*certFile == "") != (*keyFile == "") {
		return fail(exitUsage, "give both --tls-cert and --tls-key", "serve: a certificate needs its key")
	}
	if n := boolCount(*certFile != "", *self, *plain); n > 1 {
		return fail(exitUsage, "choose one of --tls-cert/--tls-key, --tls-self and --insecure-plain-http", "serve: more than one way to serve")
	}
	if *maxSessions < 1 || *maxSessions > 1024 {
		return fail(exitUsage, "", "serve: --max-sessions %d: want 1 to 1024", *maxSessions)
	}
	if *maxConns < 16 || *maxConns > 65536 {
		return fail(exitUsage, "", "serve: --max-connections %d: want 16 to 65536", *maxConns)
	}
	if *authFailures < 1 || *authFailures > 1000 {
		return fail(exitUsage, "", "serve: --auth-failures %d: want 1 to 1000", *authFailures)
	}
	if *idle < time.Second {
		return fail(exitUsage, "", "serve: --idle-timeout %v: want at least 1s", *idle)
	}
	guestSize := int64(-1)
	if *guestWS != "unlimited" {
		n, err := policy.ParseSize(*guestWS)
		if err == nil && (n < 1<<20 || n > 1<<40) {
			err = errors.New("want 1MiB to 1TiB")
		}
		if err != nil {
			return fail(exitUsage, `give a size such as 64MiB, or "unlimited"`, "serve: --guest-workspace %q: %v", *guestWS, err)
		}
		guestSize = int64(n)
	}
	for _, h := range allowHosts {
		if err := gateway.CheckHost(h); err != nil {
			return fail(exitUsage, "give a name or address clients reach the gateway by, e.g. --allow-host gw.example.org", "serve: --allow-host %q: %v", h, err)
		}
	}
	addr, err := netip.ParseAddrPort(*listen)
	if err != nil {
		return fail(exitUsage, "write it as IP:PORT, e.g. 127.0.0.1:7480 or [::1]:7480", "serve: --listen %q: %v", *listen, err)
	}
	tlsOn := *certFile != "" || *self
	if !tlsOn && !addr.Addr().IsLoopback() && !*plain {
		return fail(exitUsage, "serve HTTPS (--tls-cert/--tls-key or --tls-self), or say --insecure-plain-http", "serve: plain HTTP on %s, which is not loopback, would carry tokens unencrypted", addr)
	}
	if os.Geteuid() != 0 {
		return fail(exitRefused, "run it as root", "serve: every session is a components-mode session, which needs root")
	}
	p, data, want, err := e.loadPinned(*pin, *file)
	if err != nil {
		return err
	}
	if p.Mode != policy.ModeComponents {
		return fail(exitInvalid, `set mode = "components" in the policy: every gateway session is one`, "serve: %s: mode is %q", *file, p.Mode)
	}
	if !filepath.IsAbs(*state) {
		if *state, err = filepath.Abs(*state); err != nil {
			return fail(exitUsage, "give --state as an absolute path", "serve: --state: %v", err)
		}
	}
	exe, err := sharedExecutable()
	if err != nil {
		return err
	}
	if *tokens == "" {
		if *tokens, err = gateway.DefaultStorePath(); err != nil {
			return fail(exitUsage, "give --tokens FILE", "serve: %v", err)
		}
	}
	store := gateway.Store{Path: *tokens}
	if _, err := store.List(); err != nil {
		return fail(exitFailure, "check the file, or start afresh with `launcher serve token add NAME`", "serve: tokens: %v", err)
	}
	// The certificate before anything listens: its names are names the
	// gateway is served as.
	hosts := []string(allowHosts)
	var tlsCfg *tls.Config
	if tlsOn {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		if *self {
			cert, fp, err := selfSigned(addr.Addr())
			if err != nil {
				return fail(exitFailure, "", "serve: %v", err)
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
			fmt.Fprintf(e.stderr, "launcher: serve: self-signed certificate, sha256 fingerprint %s: pin it in your client\n", fp)
		} else {
			cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
			if err != nil {
				return fail(exitUsage, "", "serve: --tls-cert/--tls-key: %v", err)
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
			hosts = append(hosts, certNames(cert)...)
		}
	}
	// Owner sessions run under the pinned policy as it is: where it
	// reaches one of the gateway's own files, a mount over it in each
	// sandbox keeps them out (Landlock cannot take one file out of a
	// tree; guests' policies leave the tree out). The token store is
	// replaced by rename on every change, which undoes a mount on the
	// file for a command running then: its directory is covered instead,
	// and must hold nothing else (storeCover). A mount covers no hard
	// link, and the key, which is the person's, is covered as a file.
	private := pathForms(*keyFile, *tokens, *tokens+".lock")
	dir, err := storeCover(p, *tokens, private)
	if err != nil {
		return err
	}
	if dir != "" {
		private = append(private, pathForms(filepath.Dir(*tokens), dir)...)
	}
	for _, f := range pathForms(*keyFile) {
		if l, ok := policyReaches(p, f); ok {
			fmt.Fprintf(e.stderr, "launcher: warning: serve: the policy's %s holds the gateway's own %s: owner sessions' sandboxes cover it, but not a new version written while a command runs, nor a hard link to it; move it out of the policy's paths\n", l, f)
		}
	}
	// Listening first: the sessions' net must know the address to
	// refuse it.
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		return fail(exitFailure, "choose another --listen address", "serve: %v", err)
	}
	log := slog.New(slog.NewJSONHandler(e.stderr, nil))
	gateway.Version = register.Version
	g, err := gateway.New(gateway.Config{
		Launcher: exe, Policy: p, PolicyData: data, PolicyHash: want, StateDir: *state,
		Tokens: store, Limiter: gateway.NewLimiter(*authFailures, 30*time.Second, 4096),
		Listeners: []netip.AddrPort{ln.Addr().(*net.TCPAddr).AddrPort()}, Hosts: hosts,
		Private:     private,
		MaxSessions: *maxSessions, IdleTimeout: *idle, GuestWorkspace: guestSize, Log: log,
	})
	if err != nil {
		ln.Close()
		return fail(exitFailure, "", "serve: %v", err)
	}
	scheme := "http"
	srv := &http.Server{
		Handler:           g.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Bounded beneath TLS: a connection over the bound costs no handshake.
	ln = g.LimitConnections(ln, *maxConns, gateway.PerSource(*maxConns), !tlsOn)
	if tlsOn {
		scheme = "https"
		ln = tls.NewListener(ln, tlsCfg)
	} else if !addr.Addr().IsLoopback() {
		fmt.Fprintf(e.stderr, "launcher: warning: serving plain HTTP on %s: owner tokens travel unencrypted\n", addr)
	}
	// Subscribed before it says it serves: a SIGTERM sent on reading that
	// line ends the sessions, not the process (a CI run killed it so).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A client that goes away mid-answer is an error to write, not a
	// signal that kills the gateway.
	signal.Ignore(syscall.SIGPIPE)
	fmt.Fprintf(e.stdout, "launcher: serving MCP on %s://%s/mcp\n", scheme, ln.Addr())
	if f, ok := e.stdout.(*os.File); ok {
		f.Sync()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	log.Info("stopping: ending every session")
	sctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	gerr := g.Shutdown(sctx)
	srv.Shutdown(sctx)
	srv.Close()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fail(exitFailure, "", "serve: %v", serveErr)
	}
	if gerr != nil {
		return fail(exitFailure, "", "serve: %v", gerr)
	}
	log.Info("stopped")
	return nil
}

// hostFlags collects --allow-host NAME.
type hostFlags []string

func (h *hostFlags) String() string     { return strings.Join(*h, ",") }
func (h *hostFlags) Set(s string) error { *h = append(*h, s); return nil }
func (h *hostFlags) repeatable()        {}

// certNames are the names and addresses cert is for: names the gateway
// is served as. A wildcard names no one host (allow the host itself).
func certNames(cert tls.Certificate) []string {
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	if leaf == nil {
		return nil
	}
	var out []string
	for _, n := range leaf.DNSNames {
		if !strings.Contains(n, "*") {
			out = append(out, n)
		}
	}
	for _, ip := range leaf.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func boolCount(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// selfSigned is a new P-256 certificate for host (and localhost), valid
// for a year, and its sha256 fingerprint.
func selfSigned(host netip.Addr) (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "pinfold gateway"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host.IsValid() && !host.IsUnspecified() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, host.AsSlice())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, hex.EncodeToString(sum[:]), nil
}

// storeCover is the token store's directory, for owner sessions'
// sandboxes to cover whole, when the policy's paths reach the store
// ("" when they do not). The store is replaced by rename on every
// change, and a rename undoes a mount on the file in a sandbox whose
// command still runs (it could read the new store); a rename inside a
// covered directory does not show through. So the directory must hold
// nothing but the store, its lock and their temporaries, and beside
// them only the launcher's other own files (the default vault): else
// serve refuses, rather than hide the rest of it from every session.
// The store stays where it is: nothing is moved.
func storeCover(p *policy.Policy, store string, private []string) (string, error) {
	var l policy.Path
	ok := false
	for _, f := range pathForms(store, store+".lock", filepath.Dir(store)) {
		if l, ok = policyReaches(p, f); ok {
			break
		}
	}
	if !ok {
		return "", nil
	}
	dir := filepath.Dir(store)
	// The store's commands make its directory (0700) on first use.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fail(exitFailure, "", "serve: tokens: %v", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fail(exitFailure, "", "serve: tokens: %v", err)
	}
	own := slices.Clone(private)
	if vault, err := kms.DefaultPath(); err == nil {
		own = append(own, pathForms(vault, vault+".lock")...)
	}
	d, ok := launcher.CoverDir(p, filepath.Join(real, filepath.Base(store)), own)
	if !ok {
		return "", fail(exitRefused, "keep the store in a directory of its own, holding nothing else (e.g. --tokens "+filepath.Join(dir, "serve-tokens", "tokens.json")+", moved there with its .lock while no gateway or token command runs), or leave the directory out of the policy",
			"serve: the policy's %s reaches the gateway's token store %s, which every token change replaces by rename; owner sessions' sandboxes must cover its directory %s whole (a cover of the file is lost for a command running when it is replaced), but that directory holds other files, or a path the policy names", l, store, real)
	}
	return d, nil
}

// policyReaches names the path of p's (its workspace, a files list's)
// that holds f, if one does.
func policyReaches(p *policy.Policy, f string) (policy.Path, bool) {
	for _, l := range slices.Concat([]policy.Path{p.Workspace.Path}, p.Files.Read, p.Files.Write, p.Files.Exec) {
		if l.Contains(policy.Path(f)) {
			return l, true
		}
	}
	return "", false
}
