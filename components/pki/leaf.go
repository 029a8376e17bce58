package pki

import (
	"bytes"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Leaf is one participant's credential: its certificate, its private key,
// and the session CA it trusts. The launcher gets one from Session.Issue and
// hands the three PEM pieces to the child over an inherited pipe; the child
// rebuilds it with ParseLeaf. A Leaf is immutable and safe for concurrent use.
type Leaf struct {
	id   Identity
	cert *x509.Certificate
	key  ed25519.PrivateKey
	ca   *x509.Certificate
}

// Identity returns who the leaf speaks for.
func (l *Leaf) Identity() Identity { return l.id }

// Role returns the leaf's role.
func (l *Leaf) Role() Role { return l.id.Role }

// SessionID returns the leaf's session id.
func (l *Leaf) SessionID() string { return l.id.Session }

// Certificate returns the parsed leaf certificate. Callers must not modify it.
func (l *Leaf) Certificate() *x509.Certificate { return l.cert }

// CertDER returns a copy of the leaf certificate in DER form.
func (l *Leaf) CertDER() []byte { return bytes.Clone(l.cert.Raw) }

// CertPEM returns the leaf certificate in PEM form.
func (l *Leaf) CertPEM() []byte { return certPEM(l.cert.Raw) }

// PrivateKey returns the leaf's private key. It is the key itself, not a
// copy: whoever holds it is this role for the rest of the session.
func (l *Leaf) PrivateKey() ed25519.PrivateKey { return l.key }

// KeyPEM returns the private key as a PKCS#8 "PRIVATE KEY" PEM block, for the
// launcher to write to the child's pipe. This package never writes it
// anywhere itself.
func (l *Leaf) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(l.key)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: marshal private key: %w", l.id, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// CAPEM returns the session CA certificate in PEM form.
func (l *Leaf) CAPEM() []byte { return certPEM(l.ca.Raw) }

// CertPool returns a new pool holding the session CA and nothing else.
func (l *Leaf) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(l.ca)
	return p
}

func (l *Leaf) tlsCertificate() tls.Certificate {
	return tls.Certificate{
		Certificate: [][]byte{l.cert.Raw}, // the leaf alone: peers refuse chains
		PrivateKey:  l.key,
		Leaf:        l.cert,
	}
}

// ParseLeaf rebuilds a Leaf from the three PEM pieces a child process reads
// from its pipe, and refuses it unless all of these hold:
//
//   - each piece is exactly one PEM block of the right type and nothing else;
//   - the CA certificate is a self-signed CA named for the leaf's session;
//   - the leaf is a session leaf (one pinfold URI, not a CA) that verifies
//     to that CA, for client and server use, at the current time;
//   - the leaf's role is want: a child knows what it is, and a launcher that
//     hands the kms credential to the fs process should fail here, not later;
//   - the private key is ed25519 and is the key of the leaf's public key.
func ParseLeaf(caPEM, leafPEM, keyPEM []byte, want Role) (*Leaf, error) {
	return parseLeaf(caPEM, leafPEM, keyPEM, want, time.Now())
}

func parseLeaf(caPEM, leafPEM, keyPEM []byte, want Role, now time.Time) (*Leaf, error) {
	caDER, err := decodeOnePEM(caPEM, "CERTIFICATE")
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf: CA certificate: %w", err)
	}
	if !ca.IsCA || !ca.BasicConstraintsValid {
		return nil, fmt.Errorf("pki: parse leaf: CA certificate %q is not a CA", ca.Subject.CommonName)
	}
	if err := ca.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("pki: parse leaf: CA certificate %q is not self-signed: %w", ca.Subject.CommonName, err)
	}

	leafDER, err := decodeOnePEM(leafPEM, "CERTIFICATE")
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf: leaf certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf: leaf certificate: %w", err)
	}
	id, _, err := certIdentity(cert)
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf %q: %w", claimedIdentity(cert), err)
	}
	if id.Role != want {
		return nil, fmt.Errorf("pki: parse leaf %s: this process is %s, the leaf is for %s", id, want, id.Role)
	}
	if ca.Subject.CommonName != caCommonName(id.Session) {
		return nil, fmt.Errorf("pki: parse leaf %s: CA is %q, not the CA of session %q", id, ca.Subject.CommonName, id.Session)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{
		Roots:       pool,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return nil, fmt.Errorf("pki: parse leaf %s: does not verify to the given CA: %w", id, err)
	}

	keyDER, err := decodeOnePEM(keyPEM, "PRIVATE KEY")
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf %s: private key: %w", id, err)
	}
	anyKey, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("pki: parse leaf %s: private key: %w", id, err)
	}
	key, ok := anyKey.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pki: parse leaf %s: private key is %T, want ed25519", id, anyKey)
	}
	pub, ok := cert.PublicKey.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("pki: parse leaf %s: certificate key is %T, want ed25519", id, cert.PublicKey)
	}
	if !pub.Equal(key.Public()) {
		return nil, fmt.Errorf("pki: parse leaf %s: private key does not match the certificate's public key", id)
	}
	return &Leaf{id: id, cert: cert, key: key, ca: ca}, nil
}

// decodeOnePEM returns the bytes of the single PEM block in data, which must
// be of type typ, carry no headers, and be followed by nothing but
// whitespace. Being strict here means a pipe that carries two keys, or a
// certificate with a chain glued on, is an error and not a guess.
func decodeOnePEM(data []byte, typ string) ([]byte, error) {
	// pem.Decode skips anything before the first BEGIN line; we do not.
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN ")) {
		return nil, errors.New("does not start with a PEM block")
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	if block.Type != typ {
		return nil, fmt.Errorf("PEM block is %q, want %q", block.Type, typ)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("PEM block %q has headers; none are expected", typ)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%d bytes follow the %q PEM block; exactly one block is expected", len(rest), typ)
	}
	return block.Bytes, nil
}
