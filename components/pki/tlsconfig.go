package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// ServerConfig returns the TLS configuration for a component that accepts
// calls as self. The handshake succeeds only with a TLS 1.3 client that
// presents a leaf of this session whose role the call table lets call self's
// role; every other client is refused, onReject (if not nil) is called with
// the reason, and the handshake error is a *RejectEvent.
//
// It is an error to ask for a server configuration for a role that no role
// may call (today: the agent): such a listener could never accept anything,
// so asking for one is a wiring mistake best caught at start-up.
//
// Callers may set fields the policy does not cover (NextProtos, for one) on
// the returned config; they must not change the version, certificate or
// verification fields.
func ServerConfig(self *Leaf, onReject func(RejectEvent)) (*tls.Config, error) {
	if self == nil {
		return nil, errors.New("pki: server config: no leaf")
	}
	if len(callersOf(self.Role())) == 0 {
		return nil, fmt.Errorf("pki: server config for %s: the call table lets no role call %s", self.id, self.Role())
	}
	return serverConfig(self, onReject, time.Now), nil
}

// ClientConfig returns the TLS configuration for self to call a server of
// role server. It is an error to ask for a call the table does not allow.
// The handshake succeeds only if the server presents a leaf of this session
// for exactly that role; otherwise the client aborts before it sends its own
// certificate, onReject (if not nil) is called, and the handshake error is a
// *RejectEvent.
func ClientConfig(self *Leaf, server Role, onReject func(RejectEvent)) (*tls.Config, error) {
	if self == nil {
		return nil, errors.New("pki: client config: no leaf")
	}
	if !MayCall(self.Role(), server) {
		return nil, fmt.Errorf("pki: client config for %s: the call table does not let %s call %s", self.id, self.Role(), server)
	}
	return clientConfig(self, server, onReject, time.Now), nil
}

// serverConfig is ServerConfig without the start-up check and with a clock,
// so tests can show that the per-connection check alone refuses too.
func serverConfig(self *Leaf, onReject func(RejectEvent), now func() time.Time) *tls.Config {
	c := &peerCheck{self: self, side: SideServer, roots: self.CertPool(), now: now, onReject: onReject}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		MaxVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{self.tlsCertificate()},
		// crypto/tls asks for a certificate and, when one comes, checks
		// the client's proof that it holds the key. Whether there is one,
		// and whether to believe it, is c.verify's decision, made the same
		// way on both ends, so a client with no certificate is refused
		// there and reaches the rejection hook like any other. No
		// ClientCAs: with them a Go client whose leaf is from another CA
		// would send nothing, and the log would say "no certificate"
		// instead of who it claimed to be.
		ClientAuth:       tls.RequestClientCert,
		VerifyConnection: c.verify,
		// No resumption: every connection is a full handshake with a fresh
		// check, and there are no ticket keys to reason about.
		SessionTicketsDisabled: true,
		Time:                   now,
	}
}

func clientConfig(self *Leaf, server Role, onReject func(RejectEvent), now func() time.Time) *tls.Config {
	c := &peerCheck{self: self, side: SideClient, want: server, roots: self.CertPool(), now: now, onReject: onReject}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		MaxVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{self.tlsCertificate()},
		// The server is named by a URI, not a host name, so the built-in
		// verification (which needs a host name) has nothing to check.
		// This turns off that built-in path only: c.verify then does the
		// whole verification — chain to the session CA, time, identity,
		// role — and the handshake fails if it refuses. crypto/tls still
		// checks that the server holds its certificate's key.
		InsecureSkipVerify: true,
		VerifyConnection:   c.verify,
		Time:               now,
		// No ClientSessionCache: no resumption (see serverConfig).
	}
}

// peerCheck is the one decision both ends make about the other.
type peerCheck struct {
	self     *Leaf
	side     Side
	want     Role // client side only: the server role asked for
	roots    *x509.CertPool
	now      func() time.Time
	onReject func(RejectEvent)
}

func (c *peerCheck) verify(cs tls.ConnectionState) error {
	ev := c.check(cs)
	if ev == nil {
		return nil
	}
	if c.onReject != nil {
		c.onReject(*ev)
	}
	return ev
}

// check returns nil if the peer in cs may be talked to, or why not. The
// checks go from "is this certificate ours at all" to "may this call happen",
// so the reason names the first thing wrong.
func (c *peerCheck) check(cs tls.ConnectionState) *RejectEvent {
	ev := &RejectEvent{Side: c.side, Self: c.self.id, Claimed: "no certificate"}
	reject := func(r Reason, err error) *RejectEvent {
		ev.Reason, ev.Detail = r, err
		return ev
	}

	if len(cs.PeerCertificates) == 0 {
		return reject(ReasonNoCertificate, errors.New("the peer sent no certificate"))
	}
	peer := cs.PeerCertificates[0]
	ev.Claimed = claimedIdentity(peer)
	if n := len(cs.PeerCertificates); n > 1 {
		return reject(ReasonExtraCertificates, fmt.Errorf("the peer sent %d certificates; a session leaf comes alone", n))
	}

	// A client needs a leaf for client authentication, a server one for
	// server authentication (session leaves have both).
	usage := x509.ExtKeyUsageClientAuth
	if c.side == SideClient {
		usage = x509.ExtKeyUsageServerAuth
	}
	if _, err := peer.Verify(x509.VerifyOptions{
		Roots:       c.roots, // the session CA only, never the system roots
		CurrentTime: c.now(),
		KeyUsages:   []x509.ExtKeyUsage{usage},
	}); err != nil {
		if inv, ok := errors.AsType[x509.CertificateInvalidError](err); ok && inv.Reason == x509.Expired {
			return reject(ReasonExpired, err)
		}
		return reject(ReasonUntrusted, fmt.Errorf("does not verify to the CA of session %q: %w", c.self.id.Session, err))
	}

	id, reason, err := certIdentity(peer)
	if err != nil {
		return reject(reason, err)
	}
	ev.PeerRole = id.Role
	if id.Session != c.self.id.Session {
		return reject(ReasonOtherSession, fmt.Errorf("the certificate is for session %q, this is session %q", id.Session, c.self.id.Session))
	}

	switch c.side {
	case SideServer:
		if !MayCall(id.Role, c.self.Role()) {
			return reject(ReasonCallNotAllowed, fmt.Errorf("%s may not call %s", id.Role, c.self.Role()))
		}
	case SideClient:
		if id.Role != c.want {
			return reject(ReasonUnexpectedRole, fmt.Errorf("asked to reach %s, reached %s", c.want, id.Role))
		}
		if !MayCall(c.self.Role(), id.Role) {
			return reject(ReasonCallNotAllowed, fmt.Errorf("%s may not call %s", c.self.Role(), id.Role))
		}
	default:
		return reject(ReasonCallNotAllowed, bug("peer check with side %q", c.side))
	}
	return nil
}

// PeerRole returns the role of the peer of a connection made with a config
// from ServerConfig or ClientConfig, for handlers that answer differently by
// caller (fs serving the agent and bash, say). It re-reads the identity
// rather than trusting the caller to have used the right config: the
// handshake must be complete and TLS 1.3, and the peer's single certificate
// must be signed by l's CA and name l's session. It does not repeat the
// table and time checks, which the handshake made.
func (l *Leaf) PeerRole(cs tls.ConnectionState) (Role, error) {
	if !cs.HandshakeComplete {
		return "", fmt.Errorf("pki: peer role for %s: handshake not complete", l.id)
	}
	if cs.Version != tls.VersionTLS13 {
		return "", fmt.Errorf("pki: peer role for %s: connection is %s, not TLS 1.3", l.id, tls.VersionName(cs.Version))
	}
	if n := len(cs.PeerCertificates); n != 1 {
		return "", fmt.Errorf("pki: peer role for %s: peer has %d certificates, want 1", l.id, n)
	}
	peer := cs.PeerCertificates[0]
	if err := peer.CheckSignatureFrom(l.ca); err != nil {
		return "", fmt.Errorf("pki: peer role for %s: peer %q is not signed by the session CA: %w", l.id, claimedIdentity(peer), err)
	}
	id, _, err := certIdentity(peer)
	if err != nil {
		return "", fmt.Errorf("pki: peer role for %s: peer %q: %w", l.id, claimedIdentity(peer), err)
	}
	if id.Session != l.id.Session {
		return "", fmt.Errorf("pki: peer role for %s: peer %s is of another session", l.id, id)
	}
	return id.Role, nil
}

// bug describes an impossible state. Unlike policy's bug it does not panic:
// it is reached inside a handshake, where failing closed (refusing the peer)
// is as safe as crashing and keeps the component's other connections alive.
func bug(format string, args ...any) error {
	return fmt.Errorf("pki: bug: "+format, args...)
}
