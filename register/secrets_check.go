package register

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/internal/testpki"
)

// What SR-42's upstreams answer: the rule's, whether the header carried
// the value (never the value); the agent's own, what it received.
const (
	carried  = "header-carries-the-secret"
	echoedAs = "authorization:"
)

// secretCase is SR-42's check (see checks). It needs the launcher's
// `secrets add`, a TLS upstream under a root of its own (given to the
// launcher as SSL_CERT_FILE, which net verifies upstreams against) and
// a plain one, both on this host's loopback.
func (s *scratch) secretCase() (probeCase, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return probeCase{}, err
	}
	value := "pinfold_check_" + hex.EncodeToString(raw[:])
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return probeCase{}, err
	}
	keyFile, vault := filepath.Join(s.dir, "vault.key"), filepath.Join(s.dir, "vault")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return probeCase{}, err
	}
	add := exec.Command(s.launcher, "secrets", "add", "token", "--vault", vault, "--key-file", keyFile)
	add.Stdin = strings.NewReader(value)
	if out, err := add.CombinedOutput(); err != nil {
		return probeCase{}, fmt.Errorf("launcher secrets add: %v: %s", err, strings.TrimSpace(string(out)))
	}
	rootPEM, cert, err := testpki.Localhost()
	if err != nil {
		return probeCase{}, err
	}
	roots := filepath.Join(s.dir, "roots.pem")
	if err := os.WriteFile(roots, rootPEM, 0o644); err != nil {
		return probeCase{}, err
	}
	rule, err := s.serve(&tls.Config{Certificates: []tls.Certificate{cert}}, func(w http.ResponseWriter, r *http.Request) {
		switch got := r.Header.Get("Authorization"); got {
		case "Bearer " + value:
			io.WriteString(w, carried+"\n")
		case "":
			io.WriteString(w, "no-header\n")
		default:
			io.WriteString(w, "another-header\n")
		}
	})
	if err != nil {
		return probeCase{}, err
	}
	own, err := s.serve(nil, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, echoedAs+" "+r.Header.Get("Authorization")+"\n")
	})
	if err != nil {
		return probeCase{}, err
	}
	text := s.componentsTextNet("[network]\nmode = \"proxy\"\nblock_all = false\nunsafe_allow_private = [\"127.0.0.1/32\"]\n" +
		"[[secrets]]\nname = \"token\"\nhosts = [\"localhost\"]\nheader = \"Authorization\"\ntemplate = \"Bearer {secret}\"\n")
	hunt := []string{"secret-hunt", hex.EncodeToString([]byte(value)), "http://localhost:" + port(own) + "/",
		"/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline",
		"/tmp", "/dev/shm", "/run", "/etc", "/var", "/home", "/root", s.ws}
	// The agent's credential directory, which it may not list.
	for _, f := range []string{session.CAFile, session.CertFile, session.KeyFile, session.InjectCAFile, session.BundleFile} {
		hunt = append(hunt, "$"+session.EnvCredentials+"/"+f)
	}
	return probeCase{raw: text, control: text, probe: hunt, controlProbe: []string{"http-get", "https://localhost:" + port(rule) + "/"},
		env: []string{"SSL_CERT_FILE=" + roots}, launcherArgs: []string{"--vault", vault, "--key-file", keyFile},
		refused: func(r Run) bool {
			return strings.HasPrefix(r.Line, "absent ") && strings.HasSuffix(r.Line, "; status 200 - "+echoedAs) && r.Code == 0
		},
		ok: func(r Run) bool { return r.Line == "status 200 - "+carried && r.Code == 0 }}, nil
}

// serve starts an HTTP server on the host's loopback, over TLS when cfg
// is given; it stops with the scratch.
func (s *scratch) serve(cfg *tls.Config, h http.HandlerFunc) (string, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: h, TLSConfig: cfg}
	if cfg != nil {
		go srv.ServeTLS(ln, "", "")
	} else {
		go srv.Serve(ln)
	}
	s.closers = append(s.closers, func() { srv.Close() })
	return ln.Addr().String(), nil
}

// port is the port of a host:port.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
