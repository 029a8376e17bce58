package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
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
	"slices"
	"strconv"
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

// InjectCAName is the interception CA's common name. It proves nothing:
// an agent-side client (launcher net get) believes X-Pinfold-* headers on
// an https answer only when its chain ends in the very CA certificate of
// the session (the agent's inject-ca.pem).
const InjectCAName = "pinfold session secret injection"

// NewInjectCA makes the interception CA for the rules' hosts, valid for
// validity from now. ECDSA P-256: every TLS client the agent may run
// takes it.
func NewInjectCA(rules []policy.Secret, now time.Time, validity time.Duration) (*InjectCA, error) {
	var permitted, exact, suffixes []string
	for _, r := range rules {
		for _, h := range r.Hosts {
			if suffix, ok := h.Wildcard(); ok {
				permitted = append(permitted, "."+suffix) // beneath the suffix only
				suffixes = append(suffixes, suffix)
			} else {
				permitted = append(permitted, string(h))
				exact = append(exact, string(h))
			}
		}
	}
	if len(permitted) == 0 {
		return nil, errors.New("net: an interception CA needs at least one [[secrets]] host")
	}
	// A DNS constraint "host" permits host and every name beneath it
	// (RFC 5280); ".host" is the names beneath only (crypto/x509 and
	// OpenSSL). So an exact rule's host excludes ".host", unless a
	// wildcard rule permits those names anyway (exclusion would win).
	var excluded []string
	for _, h := range exact {
		if !slices.ContainsFunc(suffixes, func(s string) bool { return h == s || strings.HasSuffix(h, "."+s) }) {
			excluded = append(excluded, "."+h)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: InjectCAName},
		NotBefore:                   now.Add(-time.Minute),
		NotAfter:                    now.Add(validity),
		KeyUsage:                    x509.KeyUsageCertSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         permitted,
		ExcludedDNSDomains:          excluded,
		// Rules take names: a certificate for an address is never net's.
		ExcludedIPRanges: []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		},
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
	// Idle is how long an intercepted connection may move no byte, either
	// way, before it is closed (0: injectIdleTimeout). A stream that keeps
	// moving (a model's answer token by token) is never cut.
	Idle time.Duration
	// WholeBudget bounds the bytes of answers read whole (for the
	// reflection check) held at once, over every connection (0:
	// defaultWholeBudget). Past it an answer is scanned as it streams,
	// which is as safe (cut off before the value would pass) but shows
	// the agent a broken answer instead of a 502.
	WholeBudget int64

	mu    sync.Mutex
	certs map[string]*tls.Certificate
	whole int64 // held now, of WholeBudget
}

// defaultWholeBudget is net's memory for answers read whole: with up to
// DefaultMaxConns connections each reading up to reflectLimit, it could
// otherwise pass net's memory limit (a re-test: 922 intercepted answers
// of 1 MiB killed net, and the session with it).
const defaultWholeBudget = 128 << 20

// holdWhole takes n bytes of the budget for an answer read whole, or
// says there is no room.
func (in *Injector) holdWhole(n int64) bool {
	budget := in.WholeBudget
	if budget == 0 {
		budget = defaultWholeBudget
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.whole+n > budget {
		return false
	}
	in.whole += n
	return true
}

func (in *Injector) dropWhole(n int64) {
	in.mu.Lock()
	in.whole -= n
	in.mu.Unlock()
}

// Rule returns the index of the rule whose host pattern matching host (a
// name in normal form) is the most specific, or -1 (policy.SecretRuleFor):
// an exact name before any *.suffix, a longer suffix before a shorter, as
// the domain policy reads its rules; kms releases by the same choice.
// Listed first, a rule for *.example.com sent its secret to
// api.example.com, which a later rule gave a secret of its own (a red
// team, 2026-12-03).
func (in *Injector) Rule(host string) int { return policy.SecretRuleFor(in.Rules, host) }

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
	// The agent chooses the names a wildcard rule matches: at most
	// maxLeaves are kept, one goes to make room.
	for k := range in.certs {
		if len(in.certs) < maxLeaves {
			break
		}
		delete(in.certs, k)
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
	maxLeaves              = 1024 // certificates kept for the names a rule matched
)

// Serve intercepts one CONNECT to host:port (rule ri) whose upstream
// connection, to the address the policy allowed, is already made: TLS
// from the agent with a certificate for host, TLS to upstream verified
// for host, then one request at a time with the header set. It closes
// both connections when done.
func (in *Injector) Serve(ctx context.Context, agent net.Conn, host string, port uint16, ri int, upstream net.Conn) error {
	defer agent.Close()
	defer upstream.Close()
	cert, err := in.leaf(host)
	if err != nil {
		return err
	}
	idle := in.Idle
	if idle <= 0 {
		idle = injectIdleTimeout
	}
	// Every read and write may wait idle at most (idleConn): a stream that
	// keeps moving, a model's answer token by token, is never cut. The
	// handshakes have a bound of their own (HandshakeContext closes the
	// connection when it passes).
	hctx, cancel := context.WithTimeout(ctx, injectHandshakeTimeout)
	defer cancel()
	a := tls.Server(&idleConn{Conn: agent, idle: idle}, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	if err := a.HandshakeContext(hctx); err != nil {
		return fmt.Errorf("agent handshake for %s: %w", host, err)
	}
	u := tls.Client(&idleConn{Conn: upstream, idle: idle}, &tls.Config{ServerName: host, RootCAs: in.Roots, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	if err := u.HandshakeContext(hctx); err != nil {
		// The agent learns the upstream failed, not why in detail.
		writeInjectError(a, http.StatusBadGateway, RuleSecretsUpstream, ReasonUpstreamTLS, "the upstream's certificate did not verify, or its TLS failed")
		return fmt.Errorf("upstream handshake for %s: %w", host, err)
	}
	// The request head is read through a limit of injectMaxHeaderBytes
	// (the body is not: the limit is lifted once the head is read).
	head := &io.LimitedReader{R: a, N: injectMaxHeaderBytes}
	ar, ur := bufio.NewReader(head), newAnswerReader(u)
	for {
		head.N = injectMaxHeaderBytes + int64(ar.Buffered())
		req, err := http.ReadRequest(ar)
		if err != nil {
			if head.N <= 0 {
				writeInjectError(a, http.StatusRequestHeaderFieldsTooLarge, RuleSecretsRequest, ReasonBadRequest, fmt.Sprintf("the request's head is larger than %d bytes", injectMaxHeaderBytes))
			}
			return nil // the agent is done (or sent garbage: nothing more to serve)
		}
		head.N = 1 << 62 // the body
		more, err := in.exchange(ctx, a, u, ur, req, host, port, ri)
		if err != nil || !more {
			return err
		}
	}
}

// exchange serves one request the agent sent on an intercepted
// connection: it refuses it, or sends it on with the rule's header set
// and passes the answer back, unless the answer carries the value. more
// says whether the connection may serve another request.
func (in *Injector) exchange(ctx context.Context, a io.Writer, u net.Conn, ur *answerReader, req *http.Request, host string, port uint16, ri int) (more bool, err error) {
	defer req.Body.Close()
	rule := in.Rules[ri]
	// The value is for host only, even on a connection to it, and for the
	// port the agent connected to: a front-end that picks virtual hosts
	// by host and port may serve another site for api.example:8443 on the
	// server verified as api.example.
	if h, p, ok := injectHost(req.Host); !ok || h != host || p != port {
		in.refuse(a, host, req, http.StatusForbidden, RuleSecretsHost, ReasonHostMismatch, "the request's Host is not the host and port this connection was opened to")
		return false, nil
	}
	// What goes up is the CONNECT authority, canonical, not the agent's
	// spelling of it (its case, a trailing dot, :443 written out or
	// 0443): a server that reads those otherwise than net did has nothing
	// to read.
	req.Host = host
	if port != 443 {
		req.Host = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	// Refused before the value is even fetched: a method whose answer
	// is the request itself would hand the agent the header.
	if m := reflectiveMethod(req, true); m != "" {
		r, detail := RuleSecretsTrace, m+" would send the request, and the secret set in it, back to the agent"
		if m == http.MethodConnect {
			r, detail = RuleSecretsConnect, "CONNECT inside an intercepted connection would carry the secret to a tunnel"
		}
		in.refuse(a, host, req, http.StatusForbidden, r, ReasonDeniedMethod, detail)
		return false, nil
	}
	// Nor does a request go on, the value set, that a front-end or
	// framework may route elsewhere than the Host just checked says
	// (doc.go): refused whatever the header's value, before kms is asked.
	if name := routeHeader(req.Header); name != "" {
		in.refuse(a, host, req, http.StatusForbidden, RuleSecretsRoute, ReasonDeniedHeader,
			name+" makes some servers route a request to another host or path than its own: net does not send the secret with it")
		return false, nil
	}
	// Only a path (origin-form) says what is asked for: an upstream reads
	// any other target instead of Host. An opaque one
	// (x:https://evil.example/steal, which Go's parser leaves without a
	// host, so the check above passed) went out as written, and a front-end
	// serving several hosts answered it as evil.example's, the secret set
	// (a hunt, 2026-12-02); a path beginning // reads as an authority to
	// some servers. The target sent is made again from the path and query.
	if !strings.HasPrefix(req.RequestURI, "/") || strings.HasPrefix(req.RequestURI, "//") || req.URL.Scheme != "" || req.URL.Host != "" || req.URL.Opaque != "" {
		in.refuse(a, host, req, http.StatusBadRequest, RuleSecretsRequest, ReasonBadRequest, "the request's target is not a path (origin-form): another form names a host of its own")
		return false, nil
	}
	// Nor does a fragment: no client sends one (origin-form has none),
	// Go's parser keeps it in the query as written, and servers differ on
	// whether '#' ends the target there (a red team, 2026-12-03).
	if strings.Contains(req.RequestURI, "#") {
		in.refuse(a, host, req, http.StatusBadRequest, RuleSecretsRequest, ReasonBadRequest, "the request's target holds '#': a fragment is not sent, and servers read one differently")
		return false, nil
	}
	req.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: escapeNonASCII(req.URL.RawQuery)}
	if strings.HasPrefix(req.URL.RequestURI(), "//") {
		// Made again, a path decoded from /%2Fevil.example/x{ (a RawPath
		// Go will not keep) would go out as //evil.example/x%7B (a
		// re-test).
		in.refuse(a, host, req, http.StatusBadRequest, RuleSecretsRequest, ReasonBadRequest, "the request's path, made again, would begin //, which some servers read as a host")
		return false, nil
	}
	expect := false
	if exp := req.Header.Values("Expect"); len(exp) > 0 {
		if len(exp) != 1 || !strings.EqualFold(strings.TrimSpace(exp[0]), "100-continue") {
			in.refuse(a, host, req, http.StatusExpectationFailed, RuleSecretsRequest, ReasonBadRequest, "only Expect: 100-continue is understood")
			return false, nil
		}
		expect = true
		req.Header.Del("Expect")
	}
	value, err := in.Release(ctx, string(rule.Name), host)
	if err != nil {
		in.refuse(a, host, req, http.StatusBadGateway, RuleSecretsRelease, ReasonSecretUnavailable, "the secret could not be had from kms")
		return false, fmt.Errorf("release %s for %s: %w", rule.Name, host, err)
	}
	// The value is kept until the answer has gone, to look for it there.
	defer clear(value)
	// An error may quote what the upstream sent, the value among it
	// (http.ReadResponse on a malformed answer): it goes to net's log.
	// What is looked for, in the answer and in an error, is the value as
	// it went (asSent): a value stored with a trailing space came back
	// without it, and the scan, looking for the space too, let it by (a
	// red team, 2026-12-03). Cleared after the scrub (defers run last
	// first).
	sent := asSent(value)
	defer clear(sent)
	defer func() { err = scrub(err, sent) }()
	header := strings.Replace(string(rule.Template), "{secret}", string(value), 1)
	removeHopByHop(req.Header)
	// The rule's header is the one net sets: whatever the agent sent under
	// that name goes (its placeholder), and so does every header some
	// server may read as that name ("authorization ", X_Api_Key: names
	// as routeHeader compares them). Left beside the value, one could be
	// the one a server reads (the first, the last, or the two joined).
	// They are dropped rather than refused: the agent's own spelling of
	// the header is replaced, not refused, and a look-alike is the same
	// header to the server that reads it, so one rule covers both and
	// leaves nothing to decide: upstream there is the value, once.
	for k := range req.Header {
		if sameHeaderName(k, string(rule.Header)) {
			delete(req.Header, k)
		}
	}
	req.Header.Set(string(rule.Header), header)
	// An answer compressed at the agent's asking would hide an echoed
	// value from the scan below: the agent does not choose the encoding.
	req.Header.Set("Accept-Encoding", "identity")
	// Nor does it choose a part: the scan looks at one answer at a time,
	// and an echo asked for in ranges (bytes=0-20, then 21-) would pass
	// it in pieces none of which holds the value (a hunt, 2026-12-01).
	req.Header.Del("Range")
	req.Header.Del("If-Range")
	req.Header.Del("Request-Range") // Apache's older spelling of Range (a re-test)
	// A chunked body's trailers come after the head, the value with it,
	// has gone: the checks above never see them, and a server that
	// merges trailers into the header (Apache's MergeTrailers, some
	// frameworks) would route by an X-Forwarded-Host sent there (a hunt).
	// They are dropped, declared or not, rather than refused: a refusal
	// at the body's end could only cut off a request the upstream has
	// partly taken, and any recipient may discard trailers (RFC 9110 §6.5),
	// so no client can depend on them. Go writes the trailers of
	// req.Trailer as it stood when the write began: nil sends none.
	req.Trailer = nil
	req.RequestURI = ""
	// An agent that said Expect: 100-continue sends its body only once
	// told to, or after its own wait (curl: a second). The request goes
	// on whole, body and all, so net says it itself, now that every
	// refusal is behind it; the upstream is not asked (its 100 would
	// come only after the body).
	if expect && req.ContentLength != 0 {
		if _, err := io.WriteString(a, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false, err
		}
	}
	// An upstream may answer before it has read the whole body and close
	// (401 to a wrong token, 413 to an upload too large): the request's
	// write then fails, but the answer is the agent's all the same, and
	// it was lost, the agent left with a connection that just closed (a
	// hunt). So a failed write that was the upstream's doing is followed
	// by a read of its answer, looked at as any other, and the
	// connection ends after it. One that was the agent's doing (its body
	// broke off) is not: the upstream still waits for the rest.
	body := &bodyErr{r: req.Body}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = body
	}
	sendErr := req.Write(u)
	if sendErr != nil {
		if body.err != nil {
			return false, sendErr
		}
		req.Close = true
	}
	// An empty value is nothing to hide (and would be found everywhere).
	scan := len(sent) > 0
	vs := string(sent)
	resp, err := ur.read(req)
	// Interim answers (100 Continue, 103 Early Hints) go to the agent
	// as they come; the final one follows (bounded: an upstream may not
	// keep a request forever in interim answers).
	for i := 0; err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols; i++ {
		if i == maxInterim {
			err = errors.New("too many interim answers")
			break
		}
		if where := reflectedHead(resp, vs); where != "" {
			in.refuseReflected(a, host, req, where)
			return false, nil
		}
		cleanAnswer(resp.Header)
		if err := resp.Write(a); err != nil {
			return false, err
		}
		resp, err = ur.read(req)
	}
	if err != nil {
		in.refuse(a, host, req, http.StatusBadGateway, RuleSecretsUpstream, ReasonUpstreamFailed, "the upstream's answer could not be read")
		if sendErr != nil {
			err = sendErr
		}
		return false, err
	}
	defer resp.Body.Close()
	// Nor does net ask for an upgrade here (Upgrade and Connection are
	// taken off the request): a 101 passed on told the agent the
	// connection spoke another protocol, while net went on reading HTTP
	// from both sides and sent the agent's next request, the value set,
	// to an upstream that had switched (a hunt). What follows a switch
	// is not an answer net can read and look at.
	if resp.StatusCode == http.StatusSwitchingProtocols {
		in.refuse(a, host, req, http.StatusBadGateway, RuleSecretsUpstream, ReasonUpstreamFailed,
			"the upstream switched protocols, which net does not ask for on an intercepted connection (no WebSocket to a [[secrets]] host)")
		return false, nil
	}
	if where := reflectedHead(resp, vs); where != "" {
		in.refuseReflected(a, host, req, where)
		return false, nil
	}
	if locs := resp.Header.Values("Location"); in.CheckRedirect != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 && len(locs) > 0 {
		// Clients differ on which of several Locations they follow (or
		// follow an empty one to the page itself): only one, not empty,
		// is an answer net can decide.
		if len(locs) > 1 || locs[0] == "" {
			in.refuse(a, host, req, http.StatusForbidden, RuleRedirect, ReasonDeniedRedirect, "the answer has more than one Location, or an empty one")
			return false, nil
		}
		base := &url.URL{Scheme: "https", Host: req.Host, Path: req.URL.Path}
		if rule, refused := in.CheckRedirect(ctx, base, locs[0]); refused {
			in.refuse(a, host, req, http.StatusForbidden, rule, ReasonDeniedRedirect, "the answer redirects to a target the policy refuses ("+rule+")")
			return false, nil
		}
	}
	if resp.Body != http.NoBody {
		if coding, err := decodeAnswer(resp); err != nil {
			in.refuse(a, host, req, http.StatusBadGateway, RuleSecretsUpstream, ReasonUpstreamFailed,
				"the upstream's answer is in a content coding net cannot read ("+coding+"), though identity was asked for")
			return false, nil
		}
	}
	if scan && resp.Body != http.NoBody {
		if resp.ContentLength >= 0 && resp.ContentLength <= reflectLimit && in.holdWhole(resp.ContentLength) {
			defer in.dropWhole(resp.ContentLength)
			// Small and of known length: read whole, so that an answer
			// carrying the value is refused before any of it goes.
			body := make([]byte, resp.ContentLength)
			if _, err := io.ReadFull(resp.Body, body); err != nil {
				in.refuse(a, host, req, http.StatusBadGateway, RuleSecretsUpstream, ReasonUpstreamFailed, "the upstream's answer could not be read")
				return false, err
			}
			if bytes.Contains(body, sent) {
				in.refuseReflected(a, host, req, "body")
				return false, nil
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
		} else {
			// Long or of unknown length (a download, a stream): passed
			// on as it comes, cut off before the value would go. The
			// agent has had the head by then: it sees the answer break.
			resp.Body = struct {
				io.Reader
				io.Closer
			}{newReflectScanner(resp.Body, sent, func() error {
				if headerHolds(resp.Trailer, vs) {
					return errReflected
				}
				return nil
			}), resp.Body}
		}
	}
	cleanAnswer(resp.Header)
	// Trailers arrive with the body's end: cleaned then, before they go.
	resp.Body = &trailerCleaner{ReadCloser: resp.Body, resp: resp}
	werr := resp.Write(a)
	if errors.Is(werr, errReflected) {
		in.warn("refused", "host", host, "method", req.Method, "rule", RuleSecretsReflected, "reason", ReasonSecretReflected,
			"status", resp.StatusCode, "detail", "found in the body or trailers as it streamed: the answer was cut off")
		return false, nil
	}
	if in.Log != nil {
		in.Log.Info("injected", "host", host, "rule", fmt.Sprintf("secrets[%d]", ri), "method", req.Method, "status", resp.StatusCode)
	}
	if werr != nil || resp.Close || req.Close {
		return false, werr
	}
	return true, nil
}

// bodyErr is a request's body that remembers why its reads ended, when
// that was not its end: the agent's body broke off, not the upstream.
type bodyErr struct {
	r   io.ReadCloser
	err error
}

func (b *bodyErr) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

func (b *bodyErr) Close() error { return b.r.Close() }

// decodeAnswer undoes an answer's content coding, which the upstream
// should not have applied (net asks for identity) but some do anyway: an
// echo compressed would pass the scan unseen, and the agent decode it
// (a hunt, 2026-12-02). gzip and deflate, alone, are decoded as the body
// is read, and the answer goes on as identity, chunked, through the same
// scan; any other coding, or more than one, is an error naming it. The
// decoded length is unknown, so such an answer is never read whole: an
// echo in it is cut off rather than refused with 502.
func decodeAnswer(resp *http.Response) (string, error) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	if len(codings) == 0 {
		return "", nil
	}
	coding := strings.Join(codings, ", ")
	var dec io.Reader
	var err error
	switch coding {
	case "gzip", "x-gzip":
		dec, err = gzip.NewReader(resp.Body)
	case "deflate": // zlib's format (RFC 9110 §8.4.1.2)
		dec, err = zlib.NewReader(resp.Body)
	default:
		err = errors.New("unknown content coding")
	}
	if err != nil {
		return coding, err
	}
	resp.Body = &decodedBody{dec: dec, ReadCloser: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.TransferEncoding = []string{"chunked"}
	return coding, nil
}

// decodedBody is an answer's body decoded. The decoder's end must be the
// body's end: a deflate stream ends before its chunked body does, and
// the trailers, read only at the body's end, would otherwise be read by
// Close, after the scan asked for them and before Go writes them out.
// Bytes after the compressed stream are an error (nothing net decodes
// goes unscanned).
type decodedBody struct {
	dec io.Reader
	io.ReadCloser
}

func (d *decodedBody) Read(p []byte) (int, error) {
	n, err := d.dec.Read(p)
	if err == io.EOF {
		var b [1]byte
		if _, e := io.ReadFull(d.ReadCloser, b[:]); e != io.EOF {
			err = errors.New("the upstream's answer goes on after its compressed body")
		}
	}
	return n, err
}

// answerReader reads an upstream's answers on an intercepted connection,
// each head bounded by maxResponseHeaderBytes as on the plain path (an
// unbounded head is memory the upstream chooses); bodies are not.
type answerReader struct {
	lim io.LimitedReader
	br  *bufio.Reader
}

func newAnswerReader(r io.Reader) *answerReader {
	a := &answerReader{lim: io.LimitedReader{R: r, N: maxResponseHeaderBytes}}
	a.br = bufio.NewReader(&a.lim)
	return a
}

// read reads one answer's head; its body reads on unbounded.
func (a *answerReader) read(req *http.Request) (*http.Response, error) {
	a.lim.N = maxResponseHeaderBytes
	resp, err := http.ReadResponse(a.br, req)
	over := a.lim.N <= 0
	a.lim.N = 1 << 62
	if err != nil && over {
		return nil, fmt.Errorf("the upstream's answer head is larger than %d bytes", maxResponseHeaderBytes)
	}
	return resp, err
}

// Rules of the refusals net makes inside an intercepted connection (a
// redirect's refusal names the rule that refused its target).
const (
	RuleSecretsHost      = "secrets.host"         // a Host other than the connection's
	RuleSecretsTrace     = "secrets.trace"        // TRACE or TRACK (or a method override saying so)
	RuleSecretsConnect   = "secrets.connect"      // CONNECT inside the intercepted connection
	RuleSecretsRoute     = "secrets.route-header" // a header some servers route by (routeHeaders)
	RuleSecretsRelease   = "secrets.release"      // kms did not release the value (502)
	RuleSecretsUpstream  = "secrets.upstream"     // the upstream's TLS or answer failed (502)
	RuleSecretsReflected = "secrets.reflected"    // the answer carries the injected value (502)
	RuleSecretsRequest   = "secrets.request"      // a request head over injectMaxHeaderBytes (431), a target that is not a path or holds '#', an Expect other than 100-continue
)

// trailerCleaner drops hop-by-hop and X-Pinfold-* trailers once the body
// has been read (only then are they there).
type trailerCleaner struct {
	io.ReadCloser
	resp *http.Response
}

func (t *trailerCleaner) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err != nil {
		cleanAnswer(t.resp.Trailer)
	}
	return n, err
}

// asSent is a copy of value as Go's header writer sends it, and so as an
// upstream echoes it: CR and LF as spaces (a vault made before `secrets
// add` refused them still opens), then blanks trimmed from the ends
// (RFC 9110; a token pasted with a trailing space). The caller clears
// it.
func asSent(value []byte) []byte {
	v := bytes.Clone(value)
	for i, c := range v {
		if c == '\r' || c == '\n' {
			v[i] = ' '
		}
	}
	return bytes.Trim(v, " \t")
}

// scrub replaces the value, as it is and as Go quotes it, in err's text.
func scrub(err error, value []byte) error {
	if err == nil || len(value) == 0 {
		return err
	}
	msg := err.Error()
	v, q := string(value), strings.Trim(strconv.Quote(string(value)), `"`)
	if !strings.Contains(msg, v) && !strings.Contains(msg, q) {
		return err
	}
	return errors.New(strings.ReplaceAll(strings.ReplaceAll(msg, v, "[the secret]"), q, "[the secret]"))
}

// Reasons only intercepted connections give.
const (
	ReasonHostMismatch      = "host-mismatch"
	ReasonSecretUnavailable = "secret-unavailable"
	ReasonUpstreamTLS       = "upstream-tls"
	ReasonSecretReflected   = "secret-reflected"
	ReasonDeniedHeader      = "denied-header"
)

func (in *Injector) warn(msg string, args ...any) {
	if in.Log != nil {
		in.Log.Warn(msg, args...)
	}
}

// refuse answers the agent with a refusal and logs it (the host, the
// method, the rule, never a path or a header's value).
func (in *Injector) refuse(w io.Writer, host string, req *http.Request, code int, rule, reason, detail string) {
	in.warn("refused", "host", host, "method", req.Method, "rule", rule, "reason", reason, "status", code, "detail", detail)
	writeInjectError(w, code, rule, reason, detail)
}

// refuseReflected refuses an answer that carries the injected value
// (where: "status", "header" or "body"); nothing of it reaches the agent.
func (in *Injector) refuseReflected(w io.Writer, host string, req *http.Request, where string) {
	in.refuse(w, host, req, http.StatusBadGateway, RuleSecretsReflected, ReasonSecretReflected,
		"the upstream's answer carries the injected secret (in its "+where+"); it was not passed on")
}

// cleanAnswer drops an answer's hop-by-hop headers and any X-Pinfold-*
// the upstream set, in any spelling a client may read as it
// (pinfoldHeader): only net says X-Pinfold-*, as for plain HTTP.
func cleanAnswer(h http.Header) {
	removeHopByHop(h)
	for k := range h {
		if pinfoldHeader(k) {
			delete(h, k)
		}
	}
}

// escapeNonASCII is query with every byte outside ASCII percent-encoded.
// Go escapes a path it sends again, not a raw query, and servers differ
// on such bytes in a request line (Python's splits it at \x85 and \xa0;
// others keep them): encoded, every server reads the same target, and
// one that decodes UTF-8 the same text.
func escapeNonASCII(query string) string {
	var b strings.Builder
	for i := 0; i < len(query); i++ {
		if c := query[i]; c >= 0x80 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// injectHost is the name and port a Host header on an intercepted
// connection names, the name lower case without a trailing dot: a name
// alone (port 443, https' default), or a name and a port of digits.
// Anything else (brackets, a port that is not a number or over 65535, a
// comma list) is not a Host net sends the value with.
func injectHost(hostport string) (string, uint16, bool) {
	name, port, hasPort := strings.Cut(hostport, ":")
	n := uint64(443)
	if hasPort {
		var err error
		if n, err = strconv.ParseUint(port, 10, 16); err != nil || len(port) > 5 {
			return "", 0, false
		}
	}
	if name == "" || strings.ContainsAny(name, "[]/,@ \t") {
		return "", 0, false
	}
	return strings.ToLower(strings.TrimSuffix(name, ".")), uint16(n), true
}

// routeHeaders are the headers by which a front-end or framework routes
// a request elsewhere than its Host and path say: to another virtual
// host or backend (X-Forwarded-Host and the like; Forwarded, whose host=
// some read, is refused whole rather than parsed), or to another path
// (X-Original-URL and X-Rewrite-URL: IIS's URL Rewrite, Symfony and Zend
// before 2018's fixes). So are those that carry the path a proxy
// received before it rewrote it, which an auth or routing service behind
// it acts on instead of the target (X-Original-URI: nginx's auth_request
// idiom; X-Forwarded-Uri: Traefik's forward auth; X-Envoy-Original-Path;
// X-Forwarded-Path, X-Original-Path), and X-Forwarded-Prefix, the base
// path a proxy stripped (Spring, ASP.NET Core, Werkzeug's ProxyFix),
// which those frameworks put before the target, in the request's URI
// their filters match and in the URLs they build. And those a service
// mesh routes by to another destination than the Host: Envoy's original
// destination cluster, with use_http_header, dials the address and port
// X-Envoy-Original-Dst-Host names, which Envoy does not strip from a
// client's request (its documentation warns of it; before 1.7.1 it was
// spelt X-Envoy-Orignal-Dst-Host), and Linkerd's proxy in ingress mode
// routes by L5d-Dst-Override; Linkerd 1 and Finagle add the dtab an
// L5d-Dtab, L5d-Ctx-Dtab or Dtab-Local header carries to the routing
// table for that request, where a later rule wins. A client has no use
// for any of them: proxies add them.
//
// Left out: X-Forwarded-Proto, -Scheme, -Port and -Ssl, the scheme and
// port a front-end was reached on. They change the URLs an application
// builds (an http to https redirect), not which host or path serves the
// request, and the connection is the one net verified for the host.
//
// Canonical spellings (http.CanonicalHeaderKey).
var routeHeaders = []string{
	"X-Forwarded-Host", "X-Host", "X-Forwarded-Server", "X-Http-Host-Override", "X-Original-Host",
	"Forwarded", "X-Original-Url", "X-Rewrite-Url",
	"X-Original-Uri", "X-Forwarded-Uri", "X-Envoy-Original-Path", "X-Forwarded-Path", "X-Original-Path",
	"X-Forwarded-Prefix",
	"X-Envoy-Original-Dst-Host", "X-Envoy-Orignal-Dst-Host", "L5d-Dst-Override",
	"L5d-Dtab", "L5d-Ctx-Dtab", "Dtab-Local",
}

// routeHeader names the routeHeaders entry one of h's names stands for,
// or "". A name is compared without regard to case, blanks around it
// trimmed and every byte but a letter or a digit read as '-'. Go leaves
// X_Forwarded_Host as it is (not canonical), but nginx's $http_ names
// (with underscores_in_headers) and CGI and WSGI stacks, which map '-'
// and '_' both to '_', read it as X-Forwarded-Host; and Go reads
// "X-Forwarded-Host : x" as a name with a blank in it, which a lenient
// server trims (Go's Request.Write leaves such a name out, but the check
// does not lean on that).
func routeHeader(h http.Header) string {
	for _, name := range routeHeaders { // in order: the same answer every time
		if len(headerValues(h, name)) > 0 {
			return name
		}
	}
	return ""
}

// headerValues are the values of every header in h whose name some
// server may read as name (see routeHeader): X_Forwarded_Host and
// "X-Forwarded-Host " as well as X-Forwarded-Host. A header present with
// no value counts as one empty value.
func headerValues(h http.Header, name string) []string {
	var vs []string
	for k, v := range h {
		if sameHeaderName(k, name) {
			if len(v) == 0 {
				v = []string{""}
			}
			vs = append(vs, v...)
		}
	}
	return vs
}

// sameHeaderName says whether some server may read the header names a
// and b as one: without regard to case, blanks around them trimmed, and
// any byte but a letter or a digit taken for '-' (see routeHeader).
func sameHeaderName(a, b string) bool {
	return strings.EqualFold(headerNameAsRead(a), headerNameAsRead(b))
}

// headerNameAsRead is k as the most lenient server reads a header's
// name (see routeHeader): blanks around it trimmed, and any byte but a
// letter or a digit '-'. Compare it without regard to case.
func headerNameAsRead(k string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.Trim(k, " \t"))
}

// pinfoldHeader says whether a client may read the header name k as one
// of net's own (X-Pinfold-Rule, X-Pinfold-Reason): one that reads names
// as CGI and WSGI stacks do, '_' and '-' alike, takes an answer's
// X_Pinfold_Rule for it, as a server takes X_Api_Key for X-Api-Key
// (sameHeaderName).
func pinfoldHeader(k string) bool {
	const prefix = "x-pinfold-"
	n := headerNameAsRead(k)
	return len(n) >= len(prefix) && strings.EqualFold(n[:len(prefix)], prefix)
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

// writeInjectError answers a refusal in the shape of Proxy.refuse's:
// X-Pinfold-Rule, X-Pinfold-Reason and a short text; the connection
// closes after it.
func writeInjectError(w io.Writer, code int, rule, reason, detail string) {
	msg := "pinfold: " + reason + " (" + rule + "): " + detail + "\n"
	resp := &http.Response{
		StatusCode: code, ProtoMajor: 1, ProtoMinor: 1, Close: true,
		Header: http.Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
			"X-Pinfold-Rule":         {rule},
			"X-Pinfold-Reason":       {reason},
		},
		ContentLength: int64(len(msg)),
		Body:          io.NopCloser(strings.NewReader(msg)),
	}
	// One write (one TLS record): a client that reads the head and then
	// closes must not leave the body's write waiting.
	var b bytes.Buffer
	resp.Write(&b)
	w.Write(b.Bytes())
}
