package pki

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// identityPrefix starts every identity URI. The host part is the constant
// word "session"; the session id and the role are the two path segments.
const identityPrefix = "pinfold://session/"

// maxSessionIDLen bounds a session id. 64 characters hold a hex sha256, the
// longest id the launcher is expected to use.
const maxSessionIDLen = 64

// Identity is who a certificate speaks for: one role in one session. Its
// String form, pinfold://session/<id>/<role>, is the certificate's only
// subject alternative name.
type Identity struct {
	Session string
	Role    Role
}

func (id Identity) String() string {
	return identityPrefix + id.Session + "/" + string(id.Role)
}

// ParseIdentity parses the URI form pinfold://session/<id>/<role>. It is exact:
// the id must satisfy the session-id rules, the role must parse, and nothing
// may follow the role (no trailing slash, query or fragment).
func ParseIdentity(s string) (Identity, error) {
	id, _, err := parseIdentity(s)
	if err != nil {
		return Identity{}, fmt.Errorf("pki: %w", err)
	}
	return id, nil
}

// parseIdentity is ParseIdentity plus the Reason a peer check reports when the
// string is a certificate's claim.
func parseIdentity(s string) (Identity, Reason, error) {
	rest, ok := strings.CutPrefix(s, identityPrefix)
	if !ok {
		return Identity{}, ReasonBadIdentity, fmt.Errorf("identity %q does not start with %q", s, identityPrefix)
	}
	session, role, ok := strings.Cut(rest, "/")
	if !ok {
		return Identity{}, ReasonBadIdentity, fmt.Errorf("identity %q has no role after the session id", s)
	}
	if err := checkSessionID(session); err != nil {
		return Identity{}, ReasonBadIdentity, fmt.Errorf("identity %q: %w", s, err)
	}
	r, err := parseRole(role)
	if err != nil {
		return Identity{}, ReasonUnknownRole, fmt.Errorf("identity %q: %w", s, err)
	}
	return Identity{Session: session, Role: r}, ReasonNone, nil
}

// CheckSessionID reports whether id can name a session: 1 to 64 characters,
// each a lower-case letter, a digit or '-' (so a lower-case hex string is
// always valid). The id appears in certificates, log lines and paths, so it
// gets no character that any of those would have to escape.
func CheckSessionID(id string) error {
	if err := checkSessionID(id); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}

func checkSessionID(id string) error {
	if id == "" {
		return errors.New("session id is empty")
	}
	if len(id) > maxSessionIDLen {
		return fmt.Errorf("session id %q is %d characters, at most %d are allowed", id, len(id), maxSessionIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("session id %q has %q at byte %d: only a-z, 0-9 and '-' are allowed", id, c, i)
		}
	}
	return nil
}

// certIdentity reads the identity of a certificate that is meant to be a
// session leaf. It is strict about everything the issuer controls: a session
// leaf is never a CA and has exactly one subject alternative name, a pinfold
// URI. A certificate with extra names is refused rather than read, so there
// is never a question of which name counts.
func certIdentity(c *x509.Certificate) (Identity, Reason, error) {
	if c.IsCA {
		return Identity{}, ReasonBadIdentity, errors.New("certificate is a CA certificate, not a session leaf")
	}
	if n := len(c.DNSNames) + len(c.EmailAddresses) + len(c.IPAddresses); n != 0 {
		return Identity{}, ReasonBadIdentity, fmt.Errorf("certificate has %d DNS, email or IP names; a session leaf has only its pinfold URI", n)
	}
	if len(c.URIs) != 1 {
		return Identity{}, ReasonBadIdentity, fmt.Errorf("certificate has %d URI names; a session leaf has exactly one", len(c.URIs))
	}
	return parseIdentity(c.URIs[0].String())
}

// claimedIdentity is what a certificate says it is, for messages about a
// certificate that was refused: its URI names if it has any, else its
// subject. It is only ever shown, never trusted.
func claimedIdentity(c *x509.Certificate) string {
	if len(c.URIs) > 0 {
		s := make([]string, len(c.URIs))
		for i, u := range c.URIs {
			s[i] = u.String()
		}
		return strings.Join(s, ",")
	}
	if c.Subject.CommonName != "" {
		return "CN=" + c.Subject.CommonName
	}
	return "certificate without a name"
}
