package kms

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/syncbuf"
)

// TestMain lets a test start this test binary as the kms process.
func TestMain(m *testing.M) {
	if os.Getenv("PINFOLD_TEST_KMS_MAIN") == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// The kms process, started as the launcher would start it: it serves the
// release operation to net over its handed listener, refuses the agent,
// runs with no_new_privs and a seccomp filter, and its secret is in none
// of its world-readable /proc files.
func TestKMSProcess(t *testing.T) {
	sess, err := pki.NewSession("kms-proc", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	kmsLeaf, _ := sess.Issue(pki.KMS)
	keyPEM, _ := kmsLeaf.KeyPEM()
	boot, err := Bootstrap{Credential: boot.Credential{CAPEM: kmsLeaf.CAPEM(), CertPEM: kmsLeaf.CertPEM(), KeyPEM: keyPEM}, Rules: rules(), Secrets: vaultSecrets()}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "kms.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.UnixListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the process holds its own copy
	br, bw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{"PINFOLD_TEST_KMS_MAIN=1"}
	cmd.ExtraFiles = []*os.File{br, lf}
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br.Close()
	lf.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if _, err := bw.Write(boot); err != nil {
		t.Fatal(err)
	}
	bw.Close()

	dial := func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) }
	netLeaf, _ := sess.Issue(pki.Net)
	c, err := rpc.NewClient(netLeaf, pki.KMS, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got ReleaseResult
	d, err := c.Call(ctx, "release", ReleaseRequest{Name: "github", Host: "api.github.com"}, &got)
	if err != nil || !d.Allowed || string(got.Value) != "ghp_value" {
		t.Fatalf("net asks: %+v %q %v\nkms stderr:\n%s", d, got.Value, err, stderr.String())
	}
	// The agent: refused in the handshake.
	agentLeaf, _ := sess.Issue(pki.Agent)
	fake, err := rpc.NewClient(agentLeaf, pki.FS, dial, nil) // agent → fs is allowed; the server is kms
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	if d, err := fake.Call(ctx, "release", ReleaseRequest{Name: "github", Host: "api.github.com"}, &got); err == nil {
		t.Errorf("the agent reached kms: %+v", d)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("kms status lacks %q", want)
		}
	}
	for _, f := range []string{"cmdline", "environ"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", cmd.Process.Pid, f))
		if strings.Contains(string(b), "ghp_value") {
			t.Errorf("the secret is in kms's %s", f)
		}
	}
	if strings.Contains(stderr.String(), "ghp_value") {
		t.Errorf("the secret is in kms's log")
	}
}

// Started by hand, without its descriptors, kms refuses to run.
func TestKMSProcessNeedsItsDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{"PINFOLD_TEST_KMS_MAIN=1"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "runs only as a component the launcher starts") {
		t.Errorf("kms without descriptors: %v\n%s", err, out)
	}
}
