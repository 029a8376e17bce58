package pki

import "fmt"

// Reason is why a peer was refused. Logs and counters use Reason.String()
// rather than parsing the error text.
type Reason uint8

const (
	ReasonNone              Reason = iota
	ReasonNoCertificate            // the peer sent no certificate
	ReasonExtraCertificates        // the peer sent more than its leaf
	ReasonUntrusted                // the leaf does not chain to this session's CA
	ReasonExpired                  // the leaf chains, but is expired or not yet valid
	ReasonBadIdentity              // not a leaf with exactly one well-formed pinfold URI
	ReasonUnknownRole              // the URI names no known role
	ReasonOtherSession             // the URI names another session
	ReasonCallNotAllowed           // the call table has no edge for this direction
	ReasonUnexpectedRole           // the client reached a server of a role it did not ask for
)

var reasonNames = [...]string{
	ReasonNone:              "none",
	ReasonNoCertificate:     "no_certificate",
	ReasonExtraCertificates: "extra_certificates",
	ReasonUntrusted:         "untrusted",
	ReasonExpired:           "expired",
	ReasonBadIdentity:       "bad_identity",
	ReasonUnknownRole:       "unknown_role",
	ReasonOtherSession:      "other_session",
	ReasonCallNotAllowed:    "call_not_allowed",
	ReasonUnexpectedRole:    "unexpected_role",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Side says which end of a connection refused the other.
type Side string

const (
	SideServer Side = "server"
	SideClient Side = "client"
)

// RejectEvent describes one refused peer. A pointer to it is also the error
// the TLS handshake fails with, so errors.As recovers it from the handshake
// error; the configs' hook receives a copy.
type RejectEvent struct {
	Side Side     // the end that refused
	Self Identity // that end's own identity
	// Claimed is what the peer's certificate says it is: its URI names, its
	// subject, or "no certificate". On the server side the check runs before
	// the client has proved it holds the certificate's key (TLS 1.3 sends
	// that proof after the certificate), so this is a claim, not an
	// authenticated identity: anyone can replay a certificate they have seen.
	Claimed string
	// PeerRole is the role the peer's identity names, when it got as far as
	// parsing; empty otherwise.
	PeerRole Role
	Reason   Reason
	Detail   error // what exactly was wrong
}

func (e *RejectEvent) Error() string {
	return fmt.Sprintf("pki: %s %s refused peer %q: %v (%s)", e.Self.Role, e.Side, e.Claimed, e.Detail, e.Reason)
}

func (e *RejectEvent) Unwrap() error { return e.Detail }
