package pki

import (
	"strings"
	"testing"
	"time"
)

// The client's own per-connection check refuses a call the table forbids,
// even when the start-up check in ClientConfig was bypassed (clientConfig
// directly): agent → kms is refused by the agent's side, before it sends
// its certificate, and its hook says so. The kms server would refuse it
// too, but the client's hook would then stay silent. The control is net →
// kms with the same server.
func TestClientChecksTableItself(t *testing.T) {
	s := newSession(t, "abc")
	agent, netLeaf, kms := issue(t, s, Agent), issue(t, s, Net), issue(t, s, KMS)
	srv := mustServer(t, kms, nil)
	wantOK(t, "net → kms", handshake(t, srv, mustClient(t, netLeaf, KMS, nil)))

	var rec recorder
	o := handshake(t, srv, clientConfig(agent, KMS, rec.hook, time.Now))
	if o.clientErr == nil {
		t.Fatal("agent → kms: the client went ahead")
	}
	evs := rec.all()
	if len(evs) != 1 || evs[0].Side != SideClient || evs[0].Reason != ReasonCallNotAllowed || evs[0].PeerRole != KMS {
		t.Fatalf("agent → kms: client hook saw %+v; want one client-side call-not-allowed refusal of kms", evs)
	}
}

// PeerRole re-reads the session from the certificate: a leaf signed by
// this session's CA but naming another session (which Issue never
// makes, so only a bug or a stolen CA key could) is refused, not read as
// a role of this session. The control is the same state with the genuine
// leaf.
func TestPeerRoleRefusesOtherSessionOfSameCA(t *testing.T) {
	s := newSession(t, "abc")
	kms, o := netToKMS(t, s)
	forged, _ := signCert(t, leafTemplate(t, "pinfold://session/other/net"), s.caCert, s.caKey)
	cs := o.serverState
	cs.PeerCertificates = append(cs.PeerCertificates[:0:0], forged)
	if r, err := kms.PeerRole(cs); err == nil || !strings.Contains(err.Error(), "another session") {
		t.Fatalf("PeerRole of a session-CA leaf for session \"other\" = %q, %v; want an error saying \"another session\"", r, err)
	}
}
