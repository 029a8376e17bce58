package register

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/session"
)

// What presentAgentCert saw at one component's socket.
const (
	peerUnseen   = ""         // the agent's session was not found: nothing was learned
	peerRefused  = "refused"  // the server ended the handshake with a TLS alert
	peerAccepted = "accepted" // the server kept the connection, waiting for a request
)

// agentCredentials waits (up to within) for a process beneath the
// launcher at root whose argv holds marker (the agent) and returns the
// credential directory its environment names (session.EnvCredentials):
// on the host the session's agent directory, beside the components'
// sockets. Root alone reads another uid's environ.
func agentCredentials(root int, marker string, within time.Duration) string {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, pid := range descendants(root) {
			if !marked(pid, marker) {
				continue
			}
			env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			for _, kv := range strings.Split(string(env), "\x00") {
				if dir, ok := strings.CutPrefix(kv, session.EnvCredentials+"="); ok && filepath.IsAbs(dir) {
					return dir
				}
			}
		}
	}
	return ""
}

// presentAgentCert opens a TLS connection to the socket of the component
// role in the session whose agent directory is dir, presenting the
// agent's own certificate and key, and says whether the server refused it
// at the handshake or kept the connection. It is a client of its own, not
// the agent's (session.AgentClient), whose table check refuses to call a
// role the agent may not before anything is sent: what is shown here is
// the server's side of the table. Root connects: every component admits
// root's processes (SO_PEERCRED), and the certificate is what decides.
func presentAgentCert(dir, role string) (seen, detail string) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, session.CertFile), filepath.Join(dir, session.KeyFile))
	if err != nil {
		return peerUnseen, err.Error()
	}
	c, err := net.DialTimeout("unix", filepath.Join(filepath.Dir(dir), role+".sock"), 3*time.Second)
	if err != nil {
		return peerUnseen, err.Error()
	}
	defer c.Close()
	// The server's identity is not checked: the socket is the session's
	// own, in root's directory, and only the server's answer is read.
	tc := tls.Client(c, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true,
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13})
	// TLS 1.3: the client's handshake ends before the server has checked
	// its certificate; a refusal comes as an alert on the first read. A
	// server that accepted waits for a request, and the read times out.
	tc.SetDeadline(time.Now().Add(2 * time.Second))
	err = tc.Handshake()
	if err == nil {
		_, err = tc.Read(make([]byte, 1))
	}
	var ne net.Error
	switch {
	case err != nil && strings.Contains(err.Error(), "remote error: tls:"):
		return peerRefused, err.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return peerAccepted, "no alert within 2s"
	case err == nil:
		return peerAccepted, "the server sent data"
	}
	return peerUnseen, err.Error()
}
