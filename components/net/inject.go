package proxy

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/pinfold/pinfold/policy"
)

// InjectCA is the session's interception CA: net signs, with it, the
// certificates it shows the agent for the hosts of [[secrets]] rules. It
// is not the session's mutual-TLS CA (DESIGN.md says "the session CA"):
// a CA the agent must trust for web hosts is better kept apart from the
// one that says who is a component, and this one is name-constrained to
// the rules' hosts, so even its key, stolen from net, mints nothing a
// client honouring name constraints would accept for any other host.
type InjectCA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewInjectCA makes the interception CA for the rules' hosts, valid for
// validity from now. ECDSA P-256: every TLS client the agent may run
// takes it.
func NewInjectCA(rules []policy.Secret, now time.Time, validity time.Duration) (*InjectCA, error) {
	var permitted []string
	for _, r := range rules {
		for _, h := range r.Hosts {
			if suffix, ok := h.Wildcard(); ok {
				permitted = append(permitted, "."+suffix) // beneath the suffix only
			} else {
				permitted = append(permitted, string(h))
			}
		}
	}
	if len(permitted) == 0 {
		return nil, errors.New("net: an interception CA needs at least one [[secrets]] host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: "pinfold session secret injection"},
		NotBefore:                   now.Add(-time.Minute),
		NotAfter:                    now.Add(validity),
		KeyUsage:                    x509.KeyUsageCertSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         permitted,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &InjectCA{Cert: cert, Key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// CertPEM is the CA's certificate, for the agent's trust bundle.
func (ca *InjectCA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM is the CA's key, for net alone.
func (ca *InjectCA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// ParseInjectCA reads a CA from its PEM certificate and key.
func ParseInjectCA(certPEM, keyPEM []byte) (*InjectCA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil || cb.Type != "CERTIFICATE" || kb.Type != "EC PRIVATE KEY" {
		return nil, errors.New("net: the interception CA is not a PEM certificate and EC key")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.New("net: the interception CA's key does not match its certificate")
	}
	return &InjectCA{Cert: cert, Key: key}, nil
}

// Injector terminates the agent's TLS for a host a [[secrets]] rule
// names, sets the rule's header on each request, and sends it on to the
// real host over TLS verified against the system's roots. The agent only
// ever holds a placeholder; hosts no rule names are tunnelled untouched
// and never see a value.
type Injector struct {
	CA    *InjectCA
	Rules []policy.Secret
	// Release fetches a secret's value for a host from kms.
	Release func(ctx context.Context, name, host string) ([]byte, error)
	Roots   *x509.CertPool // nil: the system's
	Log     *slog.Logger
	// CheckRedirect, when set, decides a 3xx answer's Location; a refused
	// target's answer becomes 403, as for plain HTTP (Proxy.CheckRedirect).
	CheckRedirect func(ctx context.Context, base *url.URL, loc string) (rule string, refused bool)

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

// Rule returns the index of the first rule whose hosts match host (a
// name in normal form), or -1.
func (in *Injector) Rule(host string) int {
	for i, r := range in.Rules {
		for _, d := range r.Hosts {
			if d.Matches(host) {
				return i
			}
		}
	}
	return -1
}

// leaf is the certificate shown to the agent for host, made once.
func (in *Injector) leaf(host string) (*tls.Certificate, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.certs[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     in.CA.Cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, in.CA.Cert, &key.PublicKey, in.CA.Key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, in.CA.Cert.Raw}, PrivateKey: key}
	if in.certs == nil {
		in.certs = map[string]*tls.Certificate{}
	}
	in.certs[host] = c
	return c, nil
}

// Bounds on an intercepted exchange.
const (
	maxInterim             = 8
	injectHandshakeTimeout = 10 * time.Second
	injectIdleTimeout      = 2 * time.Minute
	injectMaxHeaderBytes   = 64 << 10
)

// Serve intercepts one CONNECT to host (rule ri) whose upstream
// connection, to the address the policy allowed, is already made: TLS
// from the agent with a certificate for host, TLS to upstream verified
// for host, then one request at a time with the header set. It closes
// both connections when done.
func (in *Injector) Serve(ctx context.Context, agent net.Conn, host string, ri int, upstream net.Conn) error {
	defer agent.Close()
	defer upstream.Close()
	rule := in.Rules[ri]
	cert, err := in.leaf(host)
	if err != nil {
		return err
	}
	a := tls.Server(agent, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	a.SetDeadline(time.Now().Add(injectHandshakeTimeout))
	if err := a.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("agent handshake for %s: %w", host, err)
	}
	u := tls.Client(upstream, &tls.Config{ServerName: host, RootCAs: in.Roots, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	u.SetDeadline(time.Now().Add(injectHandshakeTimeout))
	if err := u.HandshakeContext(ctx); err != nil {
		// The agent learns the upstream failed, not why in detail.
		writeInjectError(a, http.StatusBadGateway, "upstream-tls", "the upstream's certificate did not verify, or its TLS failed")
		return fmt.Errorf("upstream handshake for %s: %w", host, err)
	}
	ar, ur := bufio.NewReader(a), bufio.NewReader(u)
	for {
		a.SetDeadline(time.Now().Add(injectIdleTimeout))
		req, err := http.ReadRequest(ar)
		if err != nil {
			return nil // the agent is done (or sent garbage: nothing more to serve)
		}
		if h := strings.ToLower(strings.TrimSuffix(hostOnly(req.Host), ".")); h != host {
			// The value is for host only, even on a connection to it.
			writeInjectError(a, http.StatusForbidden, "host-mismatch", "the request's Host is not the host this connection was opened to")
			req.Body.Close()
			return nil
		}
		value, err := in.Release(ctx, string(rule.Name), host)
		if err != nil {
			writeInjectError(a, http.StatusBadGateway, "secret-unavailable", "the secret could not be had from kms")
			req.Body.Close()
			return fmt.Errorf("release %s for %s: %w", rule.Name, host, err)
		}
		header := strings.Replace(string(rule.Template), "{secret}", string(value), 1)
		clear(value)
		removeHopByHop(req.Header)
		req.Header.Del(string(rule.Header))
		req.Header.Set(string(rule.Header), header)
		req.RequestURI = ""
		u.SetDeadline(time.Now().Add(injectIdleTimeout))
		werr := req.Write(u)
		req.Body.Close()
		if werr != nil {
			return werr
		}
		resp, err := http.ReadResponse(ur, req)
		// Interim answers (100 Continue, 103 Early Hints) go to the agent
		// as they come; the final one follows (bounded: an upstream may not
		// keep a request forever in interim answers).
		for i := 0; err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols; i++ {
			if i == maxInterim {
				err = errors.New("too many interim answers")
				break
			}
			removeHopByHop(resp.Header)
			if werr := resp.Write(a); werr != nil {
				return werr
			}
			resp, err = http.ReadResponse(ur, req)
		}
		if err != nil {
			writeInjectError(a, http.StatusBadGateway, "upstream", "the upstream's answer could not be read")
			return err
		}
		if loc := resp.Header.Get("Location"); in.CheckRedirect != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			base := &url.URL{Scheme: "https", Host: req.Host, Path: req.URL.Path}
			if rule, refused := in.CheckRedirect(ctx, base, loc); refused {
				resp.Body.Close()
				writeInjectError(a, http.StatusForbidden, "denied-redirect", "the answer redirects to a target the policy refuses ("+rule+")")
				if in.Log != nil {
					in.Log.Warn("refused", "host", host, "reason", "denied-redirect", "rule", rule)
				}
				return nil
			}
		}
		removeHopByHop(resp.Header)
		werr = resp.Write(a)
		resp.Body.Close()
		if in.Log != nil {
			in.Log.Info("injected", "host", host, "rule", fmt.Sprintf("secrets[%d]", ri), "method", req.Method, "status", resp.StatusCode)
		}
		if werr != nil || resp.Close || req.Close {
			return werr
		}
	}
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// hopByHop are the headers one connection's ends keep to themselves.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Upgrade"}

func removeHopByHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
}

func writeInjectError(w io.Writer, code int, reason, detail string) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Pinfold-Reason: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		code, http.StatusText(code), reason, len(detail)+1, detail)
}
