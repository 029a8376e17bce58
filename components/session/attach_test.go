package session

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/nstest"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// attached is a session with kms and fs running, fs serving an agent
// namespace the test made.
type attached struct {
	s   *Session
	ns  netns.NsHandle
	ws  string
	uid int // the agent's
}

func attach(t *testing.T) *attached {
	t.Helper()
	requireRoot(t)
	bin, dir := buildLauncher(t)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	const owner = 4242
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ws, filepath.Join(ws, "in.txt")} {
		if err := os.Chown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.Default()
	p.Workspace.Path = policy.Path(ws)
	s, err := Start(Config{Launcher: bin, Root: filepath.Join(dir, "sessions"), Workspace: ws, Worker: launcher.WorkerPolicy(&p)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	ns, err := nstest.NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	a := &attached{s: s, ns: ns, ws: ws, uid: 4343}
	if err := s.Attach(fmt.Sprintf("/proc/self/fd/%d", int(ns)), a.uid, a.uid); err != nil {
		t.Fatal(err)
	}
	return a
}

// dialAgent connects to fs's listener from inside the agent's namespace.
func (a *attached) dialAgent(ctx context.Context) (c net.Conn, err error) {
	nerr := nstest.In(a.ns, func() error { c, err = (&net.Dialer{}).DialContext(ctx, "tcp4", AgentFSAddr); return nil })
	if nerr != nil {
		return nil, nerr
	}
	return c, err
}

func (a *attached) dialKMS(ctx context.Context) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(a.s.Dir, "kms.sock"))
}

// agentLeaf is the credential Attach wrote for the agent, read back.
func (a *attached) agentLeaf(t *testing.T) *pki.Leaf {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(a.s.AgentDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	leaf, err := pki.ParseLeaf(read(CAFile), read(CertFile), read(KeyFile), pki.Agent)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// rawCall presents leaf's certificate to whatever dial reaches, without
// the client-side call-table check, and reports whether a request got any
// answer. TLS 1.3 servers refuse a client certificate after the client's
// handshake is done, so the refusal shows on the first read.
func rawCall(leaf *pki.Leaf, dial func(context.Context) (net.Conn, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw, err := dial(ctx)
	if err != nil {
		return err
	}
	defer raw.Close()
	keyPEM, err := leaf.KeyPEM()
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(leaf.CertPEM(), keyPEM)
	if err != nil {
		return err
	}
	c := tls.Client(raw, &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.Handshake(); err != nil {
		return err
	}
	// A frame any server answers (an unknown operation): 4-byte length,
	// 1-byte name length, name, 4-byte arguments length, arguments.
	frame := []byte{0, 0, 0, 10, 4, 'n', 'o', 'p', 'e', 0, 0, 0, 1, '1'}
	if _, err := c.Write(frame); err != nil {
		return err
	}
	var b [4]byte
	_, err = c.Read(b[:])
	return err
}

// waitLog waits until role's log has want.
func (a *attached) waitLog(t *testing.T, role pki.Role, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		log, _ := os.ReadFile(filepath.Join(a.s.Dir, string(role)+".log"))
		if strings.Contains(string(log), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s.log lacks %q:\n%s", role, want, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A real session with fs attached to an agent namespace: the agent's own
// credential (its key its uid's alone) reaches fs through its listener
// and reads the workspace (the control for every refusal below); the
// agent's certificate cannot call kms; a certificate of another CA with
// the same session id is refused; one component's certificate cannot act
// as another's (fs → kms, net → fs); a plain-text client is refused. Each
// refusal is logged with the identity claimed.
func TestSessionAttach(t *testing.T) {
	a := attach(t)
	st, err := os.Stat(filepath.Join(a.s.AgentDir(), KeyFile))
	if err != nil || st.Mode().Perm() != 0o400 || st.Sys().(*syscall.Stat_t).Uid != uint32(a.uid) {
		t.Errorf("the agent's key: %v %v", st.Mode(), err)
	}
	agent := a.agentLeaf(t)
	rc, err := rpc.NewClient(agent, pki.FS, a.dialAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r fs.ReadResult
	var d rpc.Decision
	for { // fs may still be starting
		if r, d, err = fs.NewClient(rc).Read(ctx, "in.txt", 0, 0); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || !d.Allowed || string(r.Data) != "from the host" {
		log, _ := os.ReadFile(filepath.Join(a.s.Dir, "fs.log"))
		t.Fatalf("control: the agent reads through fs: %+v %q %v\nfs.log:\n%s", d, r.Data, err, log)
	}
	if err := rawCall(agent, a.dialAgent); err != nil {
		t.Fatalf("control: the raw client is served with the agent's certificate: %v", err)
	}
	status := func(pid int) string { b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); return string(b) }
	a.waitLog(t, pki.Bash, "msg=serving") // bash confines itself before it serves
	for _, role := range []pki.Role{pki.FS, pki.Bash} {
		if s := status(a.s.Pid(role)); !strings.Contains(s, "NoNewPrivs:\t1") || !strings.Contains(s, "Seccomp:\t2") {
			t.Errorf("%s is not confined:\n%s", role, s)
		}
	}

	if err := rawCall(agent, a.dialKMS); err == nil {
		t.Error("the agent's certificate was served by kms")
	}
	a.waitLog(t, pki.KMS, fmt.Sprintf("msg=refused component=kms caller=pinfold://session/%s/agent reason=call_not_allowed", a.s.ID))

	other, err := pki.NewSession(a.s.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.Issue(pki.Agent)
	if err := rawCall(forged, a.dialAgent); err == nil {
		t.Error("fs served a certificate of another CA")
	}
	a.waitLog(t, pki.FS, "msg=refused component=fs caller=pinfold://session/"+a.s.ID+"/agent reason=")

	fsLeaf, _ := a.s.PKI.Issue(pki.FS)
	if err := rawCall(fsLeaf, a.dialKMS); err == nil {
		t.Error("fs's certificate was served by kms (only net may call it)")
	}
	a.waitLog(t, pki.KMS, fmt.Sprintf("msg=refused component=kms caller=pinfold://session/%s/fs reason=call_not_allowed", a.s.ID))
	netLeaf, _ := a.s.PKI.Issue(pki.Net)
	if err := rawCall(netLeaf, a.dialAgent); err == nil {
		t.Error("net's certificate was served by fs")
	}
	a.waitLog(t, pki.FS, fmt.Sprintf("msg=refused component=fs caller=pinfold://session/%s/net reason=call_not_allowed", a.s.ID))

	plain, err := a.dialAgent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plain.SetDeadline(time.Now().Add(5 * time.Second))
	plain.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	var b [64]byte
	if n, _ := plain.Read(b[:]); n > 0 && !strings.HasPrefix(string(b[:n]), "\x15") { // only a TLS alert may come back
		t.Errorf("a plain-text client got %q", b[:n])
	}
	plain.Close()
	a.waitLog(t, pki.FS, "msg=refused component=fs caller=unknown reason=handshake")
}

// The launcher's own paths inside the workspace are handed to fs as
// relative paths to hide; ones outside are not; one holding the
// workspace refuses the session.
func TestAuthorityPaths(t *testing.T) {
	ws := "/home/ana/src"
	got := beneath(ws, []string{"/home/ana/src/policy.toml", "/home/ana/.config/pinfold", "/home/ana/src/.config/pinfold", "/home/ana/srcx/p", "/run/pinfold"})
	if strings.Join(got, " ") != "policy.toml .config/pinfold" {
		t.Errorf("beneath: %q", got)
	}
	for _, c := range []struct {
		paths []string
		in    bool
	}{
		{[]string{"/run/pinfold", "/var/lib/pinfold/backups"}, false},
		{[]string{"/home/ana"}, true},
		{[]string{"/home/ana/src"}, true},
		{[]string{"/home/ana/sr"}, false},
		{[]string{"/"}, true},
	} {
		if _, in := insideAuthority(ws, c.paths); in != c.in {
			t.Errorf("%v: inside %v", c.paths, in)
		}
	}
}
