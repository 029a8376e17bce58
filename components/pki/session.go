package pki

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"time"
)

const (
	// Lifetime is how long a session's CA and leaves are valid, counted from
	// the time given to NewSession. A session that outlives it must be
	// restarted; there is no renewal.
	Lifetime = 24 * time.Hour
	// Backdate is how far before that time validity starts, so a peer whose
	// clock is a little behind still accepts a certificate made just now.
	Backdate = 5 * time.Minute
)

// Session is one launch's certificate authority. It lives in the launcher's
// memory only: there is no way to export its private key, so the only process
// that can mint a session identity is the one that made the session.
//
// A Session is immutable after NewSession and safe for concurrent use.
type Session struct {
	id     string
	caCert *x509.Certificate
	caKey  ed25519.PrivateKey
}

// NewSession makes a session CA: a fresh ed25519 key and a self-signed
// certificate valid from now-Backdate to now+Lifetime that may sign leaves
// but not other CAs (path length zero).
func NewSession(id string, now time.Time) (*Session, error) {
	if err := checkSessionID(id); err != nil {
		return nil, fmt.Errorf("pki: new session: %w", err)
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: new session %q: generate CA key: %w", id, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("pki: new session %q: %w", id, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: caCommonName(id)},
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(Lifetime),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return nil, fmt.Errorf("pki: new session %q: sign CA certificate: %w", id, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: new session %q: parse CA certificate: %w", id, err)
	}
	return &Session{id: id, caCert: cert, caKey: key}, nil
}

// ID returns the session id the CA and every leaf name.
func (s *Session) ID() string { return s.id }

// CACertificate returns the parsed CA certificate. It is public data; callers
// must not modify it.
func (s *Session) CACertificate() *x509.Certificate { return s.caCert }

// CAPEM returns the CA certificate in PEM form, for peers and for the agent's
// CA-bundle variables.
func (s *Session) CAPEM() []byte { return certPEM(s.caCert.Raw) }

// CertPool returns a new pool holding the session CA and nothing else.
func (s *Session) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.caCert)
	return p
}

// Issue makes a leaf for role: a fresh ed25519 key and a certificate whose
// only name is the URI pinfold://session/<id>/<role>, usable for both client
// and server authentication, not a CA, valid exactly as long as the CA.
func (s *Session) Issue(role Role) (*Leaf, error) {
	if _, err := parseRole(string(role)); err != nil {
		return nil, fmt.Errorf("pki: session %q: issue: %w", s.id, err)
	}
	id := Identity{Session: s.id, Role: role}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: issue %s: generate key: %w", id, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("pki: issue %s: %w", id, err)
	}
	uri, err := url.Parse(id.String())
	if err != nil {
		return nil, fmt.Errorf("pki: issue %s: %w", id, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// The subject repeats the URI for people reading the certificate
		// with openssl; nothing in this package reads it.
		Subject:               pkix.Name{CommonName: id.String()},
		URIs:                  []*url.URL{uri},
		NotBefore:             s.caCert.NotBefore,
		NotAfter:              s.caCert.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.caCert, pub, s.caKey)
	if err != nil {
		return nil, fmt.Errorf("pki: issue %s: sign: %w", id, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: issue %s: parse: %w", id, err)
	}
	return &Leaf{id: id, cert: cert, key: key, ca: s.caCert}, nil
}

// caCommonName is the CA's subject. ParseLeaf checks it against the leaf's
// session id, so a child is never handed a CA of one session and a leaf of
// another without noticing.
func caCommonName(id string) string { return "pinfold session " + id }

// newSerial returns a random positive serial number of at most 128 bits.
func newSerial() (*big.Int, error) {
	var b [16]byte
	rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program rather than return an error
	n := new(big.Int).SetBytes(b[:])
	if n.Sign() == 0 {
		// 2^-128: the random source is broken, not unlucky.
		return nil, errors.New("serial number: random source returned zeros")
	}
	return n, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
