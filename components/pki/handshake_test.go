package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestCallMatrix runs a real handshake for every ordered pair of roles.
// Allowed pairs succeed with this package's configs on both ends and each end
// reads the other's role. Disallowed pairs: ClientConfig refuses to build the
// client, and a client that ignores the rules (it presents its leaf to
// anyone) is refused by the server, whose hook sees the caller's identity.
func TestCallMatrix(t *testing.T) {
	s := newSession(t, "m4trix")
	leaves := map[Role]*Leaf{}
	for _, r := range Roles() {
		leaves[r] = issue(t, s, r)
	}

	for _, caller := range Roles() {
		for _, callee := range Roles() {
			from, to := leaves[caller], leaves[callee]
			t.Run(string(caller)+"→"+string(callee), func(t *testing.T) {
				if MayCall(caller, callee) {
					srvRec, cliRec := &recorder{}, &recorder{}
					o := handshake(t, mustServer(t, to, srvRec.hook), mustClient(t, from, callee, cliRec.hook))
					if !o.ok() {
						t.Fatalf("allowed call refused: server error %v, client error %v", o.serverErr, o.clientErr)
					}
					if got, err := to.PeerRole(o.serverState); err != nil || got != caller {
						t.Errorf("server reads caller role %q, %v; want %s", got, err, caller)
					}
					if got, err := from.PeerRole(o.clientState); err != nil || got != callee {
						t.Errorf("client reads server role %q, %v; want %s", got, err, callee)
					}
					if n := len(srvRec.all()) + len(cliRec.all()); n != 0 {
						t.Errorf("hooks saw %d rejections of an allowed call", n)
					}
					return
				}

				if _, err := ClientConfig(from, callee, nil); err == nil || !strings.Contains(err.Error(), "does not let "+string(caller)+" call "+string(callee)) {
					t.Errorf("ClientConfig(%s, %s) error = %v, want the table's refusal", caller, callee, err)
				}

				rec := &recorder{}
				srv, err := ServerConfig(to, rec.hook)
				callers := callersOf(callee)
				if len(callers) == 0 {
					// Nobody may call this role, so there is no server
					// config to get; the per-connection check must refuse
					// on its own all the same.
					if err == nil || !strings.Contains(err.Error(), "lets no role call "+string(callee)) {
						t.Fatalf("ServerConfig(%s) error = %v, want a refusal at start-up", callee, err)
					}
					srv = serverConfig(to, rec.hook, time.Now)
				} else if err != nil {
					t.Fatal(err)
				}

				o := handshake(t, srv, rawClient(certOf(from)))
				if o.serverErr == nil {
					t.Fatalf("server %s accepted %s", callee, caller)
				}
				ev := wantReject(t, o.serverErr, SideServer, ReasonCallNotAllowed, from.Identity().String())
				if ev.PeerRole != caller || ev.Self != to.Identity() {
					t.Errorf("rejection names peer role %q and self %s; want %s and %s", ev.PeerRole, ev.Self, caller, to.Identity())
				}
				wantOneEvent(t, rec, o.serverErr)
				if o.clientErr == nil {
					t.Error("the refused client could still read from the server")
				}

				// Controls: the same server with a caller the table allows,
				// and the same client credential with a callee it may call.
				// fs→agent and kms→agent have neither (those roles take part
				// in no allowed call together); for them the allowed rows
				// of this test, on the same session and harness, are it.
				if len(callers) > 0 {
					wantOK(t, string(callers[0])+"→"+string(callee), handshake(t, srv, rawClient(certOf(leaves[callers[0]]))))
				}
				for _, e := range Edges() {
					if e.Caller == caller {
						wantOK(t, e.String(), handshake(t, mustServer(t, leaves[e.Callee], nil), rawClient(certOf(from))))
						break
					}
				}
			})
		}
	}
}

// TestServerRefusesCredentials presents, to one fs server, an agent
// certificate that is wrong in one way per row, and the right one as control.
func TestServerRefusesCredentials(t *testing.T) {
	s := newSession(t, "abc")
	fs := issue(t, s, FS)
	agent := issue(t, s, Agent)
	sameID := newSession(t, "abc") // another launch that picked the same id
	other := newSession(t, "def")
	agentURI := agent.Identity().String()

	// A CA that looks like the session's (same subject) but has its own key.
	lookAlikeTmpl := &x509.Certificate{
		SerialNumber:          s.CACertificate().SerialNumber,
		Subject:               pkix.Name{CommonName: caCommonName("abc")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	lookAlike, lookAlikeKey := signCert(t, lookAlikeTmpl, nil, nil)

	// Signed by the real session CA, but not what Issue makes.
	bySessionCA := func(uris ...string) *tls.Certificate {
		return tlsCert(signCert(t, leafTemplate(t, uris...), s.caCert, s.caKey))
	}
	withDNS := leafTemplate(t, agentURI)
	withDNS.DNSNames = []string{"localhost"}
	noEKU := leafTemplate(t, agentURI)
	noEKU.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}

	rows := []struct {
		name    string
		cert    *tls.Certificate
		reason  Reason
		claimed string
	}{
		{"leaf of another session's CA", certOf(issue(t, other, Agent)), ReasonUntrusted, "pinfold://session/def/agent"},
		{"leaf of another CA with the same session id", certOf(issue(t, sameID, Agent)), ReasonUntrusted, agentURI},
		{"self-signed leaf with a pinfold URI", tlsCert(signCert(t, leafTemplate(t, agentURI), nil, nil)), ReasonUntrusted, agentURI},
		{"leaf of a look-alike CA", tlsCert(signCert(t, leafTemplate(t, agentURI), lookAlike, lookAlikeKey)), ReasonUntrusted, agentURI},
		{"session CA, another session id", bySessionCA("pinfold://session/other/agent"), ReasonOtherSession, "pinfold://session/other/agent"},
		{"session CA, unknown role", bySessionCA("pinfold://session/abc/root"), ReasonUnknownRole, "pinfold://session/abc/root"},
		{"session CA, two URIs", bySessionCA(agentURI, "pinfold://session/abc/bash"), ReasonBadIdentity, agentURI + ",pinfold://session/abc/bash"},
		{"session CA, no URI", bySessionCA(), ReasonBadIdentity, "CN=forged"},
		{"session CA, extra DNS name", tlsCert(signCert(t, withDNS, s.caCert, s.caKey)), ReasonBadIdentity, agentURI},
		{"session CA, server-only usage", tlsCert(signCert(t, noEKU, s.caCert, s.caKey)), ReasonUntrusted, agentURI},
		{"the session CA certificate itself", tlsCert(s.caCert, s.caKey), ReasonBadIdentity, "CN=" + caCommonName("abc")},
		{"leaf followed by its CA", &tls.Certificate{Certificate: [][]byte{agent.CertDER(), s.caCert.Raw}, PrivateKey: agent.PrivateKey()}, ReasonExtraCertificates, agentURI},
	}

	rec := &recorder{}
	srv := mustServer(t, fs, rec.hook)
	wantOK(t, "agent → fs", handshake(t, srv, rawClient(certOf(agent))))
	if n := len(rec.all()); n != 0 {
		t.Fatalf("control: hook saw %d events", n)
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			srv := mustServer(t, fs, rec.hook)
			o := handshake(t, srv, rawClient(tt.cert))
			if o.serverErr == nil {
				t.Fatal("server accepted the certificate")
			}
			wantReject(t, o.serverErr, SideServer, tt.reason, tt.claimed)
			wantOneEvent(t, rec, o.serverErr)
			wantOK(t, "agent → fs on the same config", handshake(t, srv, rawClient(certOf(agent))))
		})
	}
}

// TestExpiredLeafRefused uses a session made two days ago. The same
// credentials succeed when the server's clock is inside their validity, so
// the refusal is about time and nothing else.
func TestExpiredLeafRefused(t *testing.T) {
	then := time.Now().Add(-48 * time.Hour)
	s, err := NewSession("abc", then)
	if err != nil {
		t.Fatal(err)
	}
	fs, agent := issue(t, s, FS), issue(t, s, Agent)
	clock := func(at time.Time) func() time.Time { return func() time.Time { return at } }

	wantOK(t, "at the session's own time", handshake(t, serverConfig(fs, nil, clock(then.Add(time.Hour))), rawClient(certOf(agent))))

	for name, now := range map[string]func() time.Time{
		"expired (now)":                time.Now,
		"not yet valid (before start)": clock(then.Add(-Backdate - time.Minute)),
		"one second after the end":     clock(then.Add(Lifetime + time.Second)),
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			o := handshake(t, serverConfig(fs, rec.hook, now), rawClient(certOf(agent)))
			wantReject(t, o.serverErr, SideServer, ReasonExpired, agent.Identity().String())
			wantOneEvent(t, rec, o.serverErr)
		})
	}

	// The public config uses the real clock.
	o := handshake(t, mustServer(t, fs, nil), rawClient(certOf(agent)))
	wantReject(t, o.serverErr, SideServer, ReasonExpired, agent.Identity().String())
}

// TestNoClientCertificateRefused: a client without a certificate is refused
// by the check, and the hook sees it as "no certificate".
func TestNoClientCertificateRefused(t *testing.T) {
	s := newSession(t, "abc")
	fs, agent := issue(t, s, FS), issue(t, s, Agent)
	rec := &recorder{}
	srv := mustServer(t, fs, rec.hook)

	wantOK(t, "with the certificate", handshake(t, srv, rawClient(certOf(agent))))

	o := handshake(t, srv, rawClient(nil))
	if o.serverErr == nil || !strings.Contains(o.serverErr.Error(), "no_certificate") {
		t.Fatalf("server error = %v, want the check's no_certificate refusal", o.serverErr)
	}
	if o.clientErr == nil {
		t.Error("the client without a certificate could read from the server")
	}
	// Refused by the check, so logged like any other refusal.
	if evs := rec.all(); len(evs) != 1 || evs[0].Reason != ReasonNoCertificate || evs[0].Claimed != "no certificate" {
		t.Errorf("hook saw %+v, want one no_certificate event", evs)
	}

	// This package's own client config always presents its leaf: a client
	// config with the certificate removed is the same refusal.
	cli := mustClient(t, agent, FS, nil)
	cli.Certificates = nil
	if o := handshake(t, srv, cli); o.serverErr == nil {
		t.Fatal("server accepted a ClientConfig stripped of its certificate")
	}
}

// TestOldTLSVersionsRefused: a client or server capped at TLS 1.2 meets a
// refusal from the other end; the same configs uncapped succeed.
func TestOldTLSVersionsRefused(t *testing.T) {
	s := newSession(t, "abc")
	fs, agent := issue(t, s, FS), issue(t, s, Agent)
	srv, cli := mustServer(t, fs, nil), mustClient(t, agent, FS, nil)
	wantOK(t, "TLS 1.3 both ends", handshake(t, srv, cli))

	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS11, tls.VersionTLS10} {
		t.Run("client max "+tls.VersionName(v), func(t *testing.T) {
			old := cli.Clone()
			old.MinVersion, old.MaxVersion = tls.VersionTLS10, v
			o := handshake(t, srv, old)
			if o.serverErr == nil || !strings.Contains(o.serverErr.Error(), "unsupported versions") {
				t.Fatalf("server error = %v, want a version refusal", o.serverErr)
			}
			if o.clientErr == nil {
				t.Fatal("the old client's handshake succeeded")
			}
		})
	}

	t.Run("server max TLS 1.2", func(t *testing.T) {
		old := srv.Clone()
		old.MinVersion, old.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		o := handshake(t, old, cli)
		if o.clientErr == nil || !strings.Contains(o.clientErr.Error(), "protocol version") {
			t.Fatalf("client error = %v, want a version refusal", o.clientErr)
		}
	})
}

// TestNonTLSClientRefused sends bytes that are not a TLS 1.3 ClientHello.
// Each is refused with an error and no panic, and the hook sees nothing
// (there is no certificate yet).
func TestNonTLSClientRefused(t *testing.T) {
	s := newSession(t, "abc")
	fs, agent := issue(t, s, FS), issue(t, s, Agent)
	rec := &recorder{}
	srv := mustServer(t, fs, rec.hook)
	wantOK(t, "a TLS client on the same server", handshake(t, srv, mustClient(t, agent, FS, nil)))

	for name, data := range map[string][]byte{
		"nothing":                          nil,
		"HTTP request":                     []byte("GET / HTTP/1.1\r\nHost: fs\r\n\r\n"),
		"JSON request":                     []byte(`{"op":"read","path":"/etc/shadow"}` + "\n"),
		"handshake header, huge length":    {0x16, 0x03, 0x01, 0xff, 0xff},
		"handshake header, truncated body": {0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00},
		"alert record":                     {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28},
		"SSLv2 hello":                      {0x80, 0x2e, 0x01, 0x00, 0x02, 0x00, 0x15},
	} {
		t.Run(name, func(t *testing.T) {
			o := exchange(t, srv, func(c net.Conn) (tls.ConnectionState, error) {
				if _, err := c.Write(data); err != nil {
					return tls.ConnectionState{}, err
				}
				if uc, ok := c.(*net.UnixConn); ok {
					uc.CloseWrite() // so a server waiting for more bytes sees the end
				}
				var buf [512]byte
				for range 64 { // drain whatever the server answers, bounded
					if _, err := c.Read(buf[:]); err != nil {
						break
					}
				}
				return tls.ConnectionState{}, nil
			})
			if o.serverErr == nil {
				t.Fatal("server completed a handshake with a non-TLS client")
			}
			if n := len(rec.all()); n != 0 {
				t.Fatalf("hook saw %d events", n)
			}
		})
	}
}

// TestClientRefusesServer: a client configured to reach fs aborts, before
// sending its own certificate, when the server is anything else.
func TestClientRefusesServer(t *testing.T) {
	s := newSession(t, "abc")
	agent := issue(t, s, Agent)
	fs := issue(t, s, FS)
	fsURI := fs.Identity().String()

	rows := []struct {
		name    string
		srv     *tls.Config
		reason  Reason
		claimed string
	}{
		{"bash instead of fs", mustServer(t, issue(t, s, Bash), nil), ReasonUnexpectedRole, "pinfold://session/abc/bash"},
		{"kms instead of fs", rawServer(*certOf(issue(t, s, KMS))), ReasonUnexpectedRole, "pinfold://session/abc/kms"},
		{"fs of another CA with the same session id", mustServer(t, issue(t, newSession(t, "abc"), FS), nil), ReasonUntrusted, fsURI},
		{"fs of another session", mustServer(t, issue(t, newSession(t, "def"), FS), nil), ReasonUntrusted, "pinfold://session/def/fs"},
		{"self-signed fs", rawServer(*tlsCert(signCert(t, leafTemplate(t, fsURI), nil, nil))), ReasonUntrusted, fsURI},
		{"fs of the session CA for another session id", rawServer(*tlsCert(signCert(t, leafTemplate(t, "pinfold://session/zzz/fs"), s.caCert, s.caKey))), ReasonOtherSession, "pinfold://session/zzz/fs"},
	}

	rec := &recorder{}
	cli := mustClient(t, agent, FS, rec.hook)
	wantOK(t, "agent reaches fs", handshake(t, mustServer(t, fs, nil), cli))

	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			cli := mustClient(t, agent, FS, rec.hook)
			var sentCert bool
			// Record whether the server ever saw the client's certificate.
			srv := tt.srv.Clone()
			srv.VerifyConnection = func(cs tls.ConnectionState) error {
				sentCert = sentCert || len(cs.PeerCertificates) > 0
				if tt.srv.VerifyConnection != nil {
					return tt.srv.VerifyConnection(cs)
				}
				return nil
			}
			o := handshake(t, srv, cli)
			wantReject(t, o.clientErr, SideClient, tt.reason, tt.claimed)
			wantOneEvent(t, rec, o.clientErr)
			if o.serverErr == nil {
				t.Error("the server's handshake succeeded after the client aborted")
			}
			if sentCert {
				t.Error("the client sent its certificate to a server it refused")
			}
			wantOK(t, "the same client reaches fs", handshake(t, mustServer(t, fs, nil), cli))
		})
	}
}

// netToKMS is a genuine net → kms handshake in s, kms's leaf and the
// outcome, with its control: kms reads its peer as net.
func netToKMS(t *testing.T, s *Session) (*Leaf, outcome) {
	t.Helper()
	netLeaf, kms := issue(t, s, Net), issue(t, s, KMS)
	o := handshake(t, mustServer(t, kms, nil), mustClient(t, netLeaf, KMS, nil))
	wantOK(t, "net → kms", o)
	if r, err := kms.PeerRole(o.serverState); err != nil || r != Net {
		t.Fatalf("control: kms reads %q, %v; want net", r, err)
	}
	return kms, o
}

func TestPeerRole(t *testing.T) {
	s := newSession(t, "abc")
	kms, o := netToKMS(t, s)

	otherLeaf := issue(t, newSession(t, "abc"), KMS)
	for name, tt := range map[string]struct {
		l      *Leaf
		cs     tls.ConnectionState
		errHas string
	}{
		"no handshake":              {kms, tls.ConnectionState{}, "handshake not complete"},
		"read by another CA's leaf": {otherLeaf, o.serverState, "not signed by the session CA"},
		"TLS 1.2 state":             {kms, func() tls.ConnectionState { cs := o.serverState; cs.Version = tls.VersionTLS12; return cs }(), "not TLS 1.3"},
		"no peer certificate":       {kms, func() tls.ConnectionState { cs := o.serverState; cs.PeerCertificates = nil; return cs }(), "0 certificates"},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := tt.l.PeerRole(tt.cs)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("PeerRole = %q, %v; want an error saying %q", r, err, tt.errHas)
			}
		})
	}
}

func TestConfigs(t *testing.T) {
	s := newSession(t, "abc")
	fs, agent := issue(t, s, FS), issue(t, s, Agent)

	srv := mustServer(t, fs, nil)
	cli := mustClient(t, agent, FS, nil)
	for name, c := range map[string]*tls.Config{"server": srv, "client": cli} {
		if c.MinVersion != tls.VersionTLS13 || c.MaxVersion != tls.VersionTLS13 {
			t.Errorf("%s: versions %s..%s, want TLS 1.3 only", name, tls.VersionName(c.MinVersion), tls.VersionName(c.MaxVersion))
		}
		if len(c.Certificates) != 1 || len(c.Certificates[0].Certificate) != 1 {
			t.Errorf("%s: want exactly one certificate, alone", name)
		}
		if c.VerifyConnection == nil {
			t.Errorf("%s: no peer check", name)
		}
		if c.RootCAs != nil || c.ClientCAs != nil {
			t.Errorf("%s: a CA pool is set; verification must be the peer check's alone", name)
		}
	}
	if srv.ClientAuth != tls.RequestClientCert || !srv.SessionTicketsDisabled {
		t.Errorf("server: ClientAuth %v, tickets disabled %v", srv.ClientAuth, srv.SessionTicketsDisabled)
	}
	if cli.ClientSessionCache != nil {
		t.Error("client: a session cache enables resumption")
	}

	for name, err := range map[string]error{
		"server without leaf": func() error { _, err := ServerConfig(nil, nil); return err }(),
		"client without leaf": func() error { _, err := ClientConfig(nil, FS, nil); return err }(),
		"server for agent":    func() error { _, err := ServerConfig(agent, nil); return err }(),
		"client fs → kms":     func() error { _, err := ClientConfig(fs, KMS, nil); return err }(),
		"client agent → kms":  func() error { _, err := ClientConfig(agent, KMS, nil); return err }(),
		"client agent → root": func() error { _, err := ClientConfig(agent, "root", nil); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "pki: ") {
			t.Errorf("%s: error = %v, want a refusal", name, err)
		}
	}
}

// TestRejectEventError pins the text a log reader sees.
func TestRejectEventError(t *testing.T) {
	ev := &RejectEvent{
		Side:     SideServer,
		Self:     Identity{"abc", KMS},
		Claimed:  "pinfold://session/abc/agent",
		PeerRole: Agent,
		Reason:   ReasonCallNotAllowed,
		Detail:   errors.New("agent may not call kms"),
	}
	want := `pki: kms server refused peer "pinfold://session/abc/agent": agent may not call kms (call_not_allowed)`
	if got := ev.Error(); got != want {
		t.Errorf("Error() = %q\nwant      %q", got, want)
	}
	for r := ReasonNone; r <= ReasonUnexpectedRole; r++ {
		if s := r.String(); s == "" || strings.HasPrefix(s, "reason(") {
			t.Errorf("Reason %d has no name", r)
		}
	}
	if s := (ReasonUnexpectedRole + 1).String(); s != "reason(10)" {
		t.Errorf("out-of-range reason prints %q", s)
	}
}
