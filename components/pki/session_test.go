package pki

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

func TestNewSessionRefusesBadIDs(t *testing.T) {
	now := time.Now()
	for _, tt := range sessionIDTests {
		s, err := NewSession(tt.id, now)
		if tt.ok {
			if err != nil || s.ID() != tt.id {
				t.Errorf("NewSession(%q) = %v; want a session", tt.id, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("NewSession(%q) succeeded; want an error", tt.id)
		} else if !strings.Contains(err.Error(), "session id") {
			t.Errorf("NewSession(%q) error %q does not name the session id", tt.id, err)
		}
	}
}

func TestSessionCA(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := NewSession("c0ffee", now)
	if err != nil {
		t.Fatal(err)
	}
	ca := s.CACertificate()
	if !ca.IsCA || !ca.BasicConstraintsValid || ca.MaxPathLen != 0 || !ca.MaxPathLenZero {
		t.Errorf("CA basic constraints: IsCA=%v valid=%v MaxPathLen=%d zero=%v; want a CA with path length 0",
			ca.IsCA, ca.BasicConstraintsValid, ca.MaxPathLen, ca.MaxPathLenZero)
	}
	if ca.KeyUsage != x509.KeyUsageCertSign {
		t.Errorf("CA key usage = %v, want cert sign only", ca.KeyUsage)
	}
	if _, ok := ca.PublicKey.(ed25519.PublicKey); !ok {
		t.Errorf("CA key is %T, want ed25519", ca.PublicKey)
	}
	if err := ca.CheckSignatureFrom(ca); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	if ca.Subject.CommonName != "pinfold session c0ffee" {
		t.Errorf("CA subject = %q, want it to name the session", ca.Subject.CommonName)
	}
	if !ca.NotBefore.Equal(now.Add(-Backdate)) || !ca.NotAfter.Equal(now.Add(Lifetime)) {
		t.Errorf("CA valid %v to %v, want %v to %v", ca.NotBefore, ca.NotAfter, now.Add(-Backdate), now.Add(Lifetime))
	}
	if n := ca.SerialNumber; n.Sign() <= 0 || n.BitLen() > 128 {
		t.Errorf("CA serial %v is not a positive number of at most 128 bits", n)
	}
	if !bytes.Equal(s.CAPEM(), issue(t, s, FS).CAPEM()) {
		t.Error("the session and its leaf disagree about the CA PEM")
	}
}

func TestIssue(t *testing.T) {
	s := newSession(t, "abc")
	ca := s.CACertificate()
	serials := map[string]Role{}
	for _, r := range Roles() {
		l := issue(t, s, r)
		c := l.Certificate()
		if l.Role() != r || l.SessionID() != "abc" || l.Identity().String() != "pinfold://session/abc/"+string(r) {
			t.Errorf("%s: leaf says %s", r, l.Identity())
		}
		if len(c.URIs) != 1 || c.URIs[0].String() != l.Identity().String() ||
			len(c.DNSNames)+len(c.IPAddresses)+len(c.EmailAddresses) != 0 {
			t.Errorf("%s: names URIs=%v DNS=%v IP=%v email=%v; want the one URI", r, c.URIs, c.DNSNames, c.IPAddresses, c.EmailAddresses)
		}
		if c.IsCA || !c.BasicConstraintsValid {
			t.Errorf("%s: IsCA=%v BasicConstraintsValid=%v, want a marked non-CA", r, c.IsCA, c.BasicConstraintsValid)
		}
		if len(c.ExtKeyUsage) != 2 || c.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth || c.ExtKeyUsage[1] != x509.ExtKeyUsageServerAuth {
			t.Errorf("%s: extended key usage %v, want client and server auth", r, c.ExtKeyUsage)
		}
		if c.KeyUsage != x509.KeyUsageDigitalSignature {
			t.Errorf("%s: key usage %v, want digital signature", r, c.KeyUsage)
		}
		if c.NotBefore.Before(ca.NotBefore) || c.NotAfter.After(ca.NotAfter) {
			t.Errorf("%s: valid %v to %v, outside the CA's %v to %v", r, c.NotBefore, c.NotAfter, ca.NotBefore, ca.NotAfter)
		}
		if err := c.CheckSignatureFrom(ca); err != nil {
			t.Errorf("%s: not signed by the session CA: %v", r, err)
		}
		if !l.PrivateKey().Public().(ed25519.PublicKey).Equal(c.PublicKey) {
			t.Errorf("%s: private key does not match the certificate", r)
		}
		if n := c.SerialNumber; n.Sign() <= 0 || n.BitLen() > 128 {
			t.Errorf("%s: serial %v is not a positive number of at most 128 bits", r, n)
		}
		if prev, dup := serials[c.SerialNumber.String()]; dup {
			t.Errorf("%s and %s share serial %v", r, prev, c.SerialNumber)
		}
		serials[c.SerialNumber.String()] = r
	}

	for _, bad := range []Role{"", "root", "FS"} {
		if _, err := s.Issue(bad); err == nil || !strings.Contains(err.Error(), "unknown role") {
			t.Errorf("Issue(%q) error = %v, want unknown role", bad, err)
		}
	}
}

func TestLeafPEMRoundTrip(t *testing.T) {
	s := newSession(t, "abc")
	for _, r := range Roles() {
		l := issue(t, s, r)
		keyPEM, err := l.KeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := pem.Decode(keyPEM); b == nil || b.Type != "PRIVATE KEY" {
			t.Fatalf("%s: key PEM is not a PKCS#8 PRIVATE KEY block:\n%s", r, keyPEM)
		}
		got, err := ParseLeaf(l.CAPEM(), l.CertPEM(), keyPEM, r)
		if err != nil {
			t.Fatalf("%s: ParseLeaf of its own PEM: %v", r, err)
		}
		if got.Identity() != l.Identity() || !bytes.Equal(got.CertDER(), l.CertDER()) ||
			!got.PrivateKey().Equal(l.PrivateKey()) || !bytes.Equal(got.CAPEM(), l.CAPEM()) {
			t.Fatalf("%s: round trip changed the leaf", r)
		}
	}

	// The rebuilt leaf works against the launcher's originals.
	fs := issue(t, s, FS)
	agent := issue(t, s, Agent)
	keyPEM, err := agent.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	child, err := ParseLeaf(agent.CAPEM(), agent.CertPEM(), keyPEM, Agent)
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, "rebuilt agent → fs", handshake(t, mustServer(t, fs, nil), mustClient(t, child, FS, nil)))
}

func TestParseLeafRefuses(t *testing.T) {
	now := time.Now()
	s := newSession(t, "abc")
	fs := issue(t, s, FS)
	fsKey, err := fs.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	bashKey, err := issue(t, s, Bash).KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	sameID := newSession(t, "abc") // same id, another CA
	other := newSession(t, "other")
	old, err := NewSession("abc", now.Add(-48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	oldFS := issue(t, old, FS)
	oldKey, err := oldFS.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	otherFS := issue(t, other, FS)
	otherKey, err := otherFS.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}

	// Control: the right three pieces parse, so each row below fails for
	// the one piece it changes.
	if _, err := ParseLeaf(fs.CAPEM(), fs.CertPEM(), fsKey, FS); err != nil {
		t.Fatalf("control: ParseLeaf of matching pieces: %v", err)
	}
	if _, err := ParseLeaf(old.CAPEM(), oldFS.CertPEM(), oldKey, FS); err == nil {
		t.Fatal("an expired leaf parsed") // (the row below has its own control)
	}
	if _, err := parseLeaf(old.CAPEM(), oldFS.CertPEM(), oldKey, FS, now.Add(-47*time.Hour)); err != nil {
		t.Fatalf("control: the old leaf parses at its own time: %v", err)
	}

	twoKeys := append(append([]byte{}, fsKey...), bashKey...)
	for _, tt := range []struct {
		name          string
		ca, leaf, key []byte
		want          Role
		errHas        string
	}{
		{"key of another leaf", fs.CAPEM(), fs.CertPEM(), bashKey, FS, "private key does not match"},
		{"leaf of another CA with the same session id", sameID.CAPEM(), fs.CertPEM(), fsKey, FS, "does not verify to the given CA"},
		{"CA of another session", other.CAPEM(), fs.CertPEM(), fsKey, FS, `not the CA of session "abc"`},
		{"leaf and key of another session", fs.CAPEM(), otherFS.CertPEM(), otherKey, FS, `not the CA of session "other"`},
		{"another role than the process", fs.CAPEM(), fs.CertPEM(), fsKey, Bash, "this process is bash, the leaf is for fs"},
		{"expired leaf", old.CAPEM(), oldFS.CertPEM(), oldKey, FS, "expired"},
		{"leaf given as the CA", fs.CertPEM(), fs.CertPEM(), fsKey, FS, "is not a CA"},
		{"CA given as the leaf", fs.CAPEM(), fs.CAPEM(), fsKey, FS, "CA certificate, not a session leaf"},
		{"two keys", fs.CAPEM(), fs.CertPEM(), twoKeys, FS, "exactly one block"},
		{"text before the key", fs.CAPEM(), fs.CertPEM(), append([]byte("junk\n"), fsKey...), FS, "does not start with a PEM block"},
		{"certificate in the key slot", fs.CAPEM(), fs.CertPEM(), fs.CertPEM(), FS, `is "CERTIFICATE", want "PRIVATE KEY"`},
		{"empty key", fs.CAPEM(), fs.CertPEM(), nil, FS, "does not start with a PEM block"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLeaf(tt.ca, tt.leaf, tt.key, tt.want)
			if err == nil {
				t.Fatalf("ParseLeaf succeeded: %s", l.Identity())
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("ParseLeaf error %q does not say %q", err, tt.errHas)
			}
		})
	}
}
