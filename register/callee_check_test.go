package register

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/session"
)

// SR-38's check shows the call table from kms's side: the agent's
// certificate presented at kms's socket is refused, at fs's accepted. A
// launcher whose table allowed every call passed the agent's own cases,
// since the agent cannot reach kms (a mutation audit).
func TestSR38TableCase(t *testing.T) {
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	pc, err := checks()[indexOf(checks(), "SR-38")].prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(pc.also, func(c probeCase) bool { return c.name == "the agent's certificate at kms's socket" })
	if i < 0 || pc.also[i].race == nil || pc.also[i].rejudge == nil {
		t.Fatal("SR-38 has no case presenting the agent's certificate at kms's socket, from outside while the agent runs")
	}
	table := pc.also[i]
	// Before the race has run, nothing counts as a refusal.
	if table.refused(Run{Line: "ok"}) {
		t.Error("the agent's sleep is taken as a refusal although kms was not asked")
	}

	// presentAgentCert against servers with the session's TLS config: a
	// session directory as the launcher lays it out.
	sess, err := pki.NewSession("sr38test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agentDir := filepath.Join(dir, "agent")
	if err := os.Mkdir(agentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	agent, err := sess.Issue(pki.Agent)
	if err != nil {
		t.Fatal(err)
	}
	key, err := agent.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{session.CAFile: agent.CAPEM(), session.CertFile: agent.CertPEM(), session.KeyFile: key} {
		if err := os.WriteFile(filepath.Join(agentDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, role := range []pki.Role{pki.KMS, pki.FS} {
		leaf, err := sess.Issue(role)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pki.ServerConfig(leaf, nil)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tls.Listen("unix", filepath.Join(dir, string(role)+".sock"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func(c net.Conn) { // the handshake, then wait as a server for its request
					defer c.Close()
					if c.(*tls.Conn).Handshake() == nil {
						c.Read(make([]byte, 1))
					}
				}(c)
			}
		}()
	}
	if seen, why := presentAgentCert(agentDir, "kms"); seen != peerRefused {
		t.Errorf("kms: %q (%s), want refused", seen, why)
	}
	if seen, why := presentAgentCert(agentDir, "fs"); seen != peerAccepted {
		t.Errorf("fs: %q (%s), want accepted", seen, why)
	}
	if seen, _ := presentAgentCert(filepath.Join(dir, "nowhere"), "kms"); seen != peerUnseen {
		t.Errorf("no credentials: %q, want unseen", seen)
	}
}
