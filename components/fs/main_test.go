package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/internal/syncbuf"
	"github.com/pinfold/pinfold/launcher"
)

const (
	envMain    = "PINFOLD_TEST_FS_MAIN"
	envConfine = "PINFOLD_TEST_FS_CONFINE" // the Landlock path to confine with
	envOutside = "PINFOLD_TEST_FS_OUTSIDE" // a file outside the root
)

// TestMain lets a test start this test binary as the fs process, or as a
// child that confines itself as fs does and reports what it can reach.
func TestMain(m *testing.M) {
	if os.Getenv(envMain) == "1" {
		os.Exit(Main())
	}
	if p := os.Getenv(envConfine); p != "" {
		os.Exit(confineProbe(p, os.Getenv(envOutside)))
	}
	os.Exit(m.Run())
}

// confineProbe confines with Write: {path} (fd 5 is the root) and prints
// one line: what it could do afterwards.
func confineProbe(path, outside string) int {
	res := func(err error) string {
		var errno unix.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &errno):
			return unix.ErrnoName(errno)
		default:
			return "error:" + err.Error()
		}
	}
	if err := launcher.ConfineComponent(confinement(path)); err != nil {
		fmt.Printf("confine=%s\n", res(err))
		return 1
	}
	out := []string{"confine=ok"}
	_, err := os.ReadFile(outside)
	out = append(out, "outside-read="+res(err))
	fd, err := unix.Openat(fdRoot, "existing", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	out = append(out, "inside-read="+res(err))
	fd, err = unix.Openat(fdRoot, "made-by-openat", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	out = append(out, "inside-create="+res(err))
	// fs's own operations: openat2.
	root := &Root{fd: fdRoot, match: &matcher{}, changes: new(sync.RWMutex)}
	err = root.Write("made-by-fs", []byte("x"), true)
	var fe *Error
	if errors.As(err, &fe) && fe.Err != nil {
		err = fe.Err
	}
	out = append(out, "fs-write="+res(err))
	fmt.Println(strings.Join(out, " "))
	return 0
}

// runProbe starts the probe with root as fd 5.
func runProbe(t *testing.T, root *os.File, path, outside string) map[string]string {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{envConfine + "=" + path, envOutside + "=" + outside}
	cmd.ExtraFiles = []*os.File{null, null, root}
	out, err := cmd.CombinedOutput()
	got := map[string]string{}
	line, _, _ := strings.Cut(string(out), "\n")
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	if got["confine"] != "ok" {
		t.Fatalf("probe (%s): %v\n%s", path, err, out)
	}
	return got
}

// Confined as fs confines itself, a process reads and writes beneath its
// root descriptor and reads nothing else: for a plain directory and for
// a detached mount clone (what the launcher hands fs, less the idmap).
func TestConfinement(t *testing.T) {
	w := newWorld(t)
	w.file(t, "existing", "in")
	roots := map[string]func() (*os.File, error){
		"directory": func() (*os.File, error) {
			fd, err := unix.Open(w.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			return os.NewFile(uintptr(fd), w.ws), err
		},
		"detached clone": func() (*os.File, error) {
			fd, err := unix.OpenTree(unix.AT_FDCWD, w.ws, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
			return os.NewFile(uintptr(fd), w.ws), err
		},
	}
	for name, open := range roots {
		t.Run(name, func(t *testing.T) {
			root, err := open()
			if err != nil {
				t.Skip(err)
			}
			defer root.Close()
			os.Remove(filepath.Join(w.ws, "made-by-openat"))
			os.Remove(filepath.Join(w.ws, "made-by-fs"))
			got := runProbe(t, root, landlockRoot, filepath.Join(w.outside, "secret"))
			for k, want := range map[string]string{"outside-read": "EACCES", "inside-read": "ok", "inside-create": "ok"} {
				if got[k] != want {
					t.Errorf("%s = %s, want %s (%v)", k, got[k], want, got)
				}
			}
			if _, err := os.Stat(filepath.Join(w.ws, "made-by-openat")); err != nil {
				t.Errorf("the confined create did not land in the workspace: %v", err)
			}
			// fs's own resolution, openat2, under the component seccomp filter.
			if got["fs-write"] != "ok" {
				t.Errorf("fs-write = %s after confinement", got["fs-write"])
			}
		})
	}
	// Why the rule's path ends in "/.": the launcher opens rule paths with
	// O_NOFOLLOW, so the bare magic link names the link, not the
	// directory. Reported, not asserted: it describes the launcher.
	root, _ := roots["directory"]()
	defer root.Close()
	os.Remove(filepath.Join(w.ws, "made-by-openat"))
	bare := runProbe(t, root, "/proc/self/fd/5", filepath.Join(w.outside, "secret"))
	t.Logf("confined with the bare /proc/self/fd/5: %v", bare)
}

// fsProcess starts the fs process as the launcher would: bootstrap pipe
// on 3, listening Unix socket on 4, the workspace on 5, and extra (the
// agent's TCP listener) on 6.
func fsProcess(t *testing.T, w *world, boot []byte, extra ...*os.File) (sock string, cmd *exec.Cmd, stderr *syncbuf.Buffer, exited chan struct{}) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "fs.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.UnixListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	br, bw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rfd, err := unix.Open(w.ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	rf := os.NewFile(uintptr(rfd), w.ws)
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{envMain + "=1"}
	cmd.ExtraFiles = append([]*os.File{br, lf, rf}, extra...)
	stderr = &syncbuf.Buffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br.Close()
	lf.Close()
	rf.Close()
	exited = make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	bw.Write(boot)
	bw.Close()
	return sock, cmd, stderr, exited
}

// The fs process, started as the launcher would start it: it serves the
// agent beneath its root, refuses what it must, and runs confined.
func TestFSProcess(t *testing.T) {
	w := newWorld(t)
	w.file(t, "in.txt", "from the host")
	sess, err := pki.NewSession("fs-proc", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fsLeaf, _ := sess.Issue(pki.FS)
	keyPEM, _ := fsLeaf.KeyPEM()
	boot, _ := json.Marshal(Bootstrap{Credential: boot.Credential{CAPEM: fsLeaf.CAPEM(), CertPEM: fsLeaf.CertPEM(), KeyPEM: keyPEM}, Protected: []string{"policy.toml"}})
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcpAddr := tcp.Addr().String()
	tf, err := tcp.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	tcp.Close() // the process holds its own copy
	sock, cmd, stderr, exited := fsProcess(t, w, boot, tf)
	tf.Close()

	dial := func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) }
	agentLeaf, _ := sess.Issue(pki.Agent)
	rc, err := rpc.NewClient(agentLeaf, pki.FS, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	c := NewClient(rc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rr, d, err := c.Read(ctx, "in.txt", 0, 0)
	if err != nil {
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("read: %v\nfs stderr:\n%s", err, stderr.String())
	}
	if !d.Allowed || string(rr.Data) != "from the host" {
		t.Fatalf("read: %+v %q\nfs stderr:\n%s", d, rr.Data, stderr.String())
	}
	if _, d, err := c.Write(ctx, "out.txt", []byte("by the agent"), false); err != nil || !d.Allowed {
		t.Errorf("write: %+v %v", d, err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "out.txt")); string(b) != "by the agent" {
		t.Errorf("out.txt: %q", b)
	}
	if _, d, err := c.Write(ctx, "policy.toml", []byte("x"), false); err != nil || d.Rule != RuleProtected {
		t.Errorf("write policy.toml: %+v %v", d, err)
	}
	if _, d, err := c.Read(ctx, "../outside/secret", 0, 0); err != nil || d.Allowed {
		t.Errorf("read ../outside/secret: %+v %v", d, err)
	}
	// The agent's TCP listener (fd 6) is served too.
	tdial := func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "tcp", tcpAddr) }
	trc, err := rpc.NewClient(agentLeaf, pki.FS, tdial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer trc.Close()
	if rr, d, err := NewClient(trc).Read(ctx, "out.txt", 0, 0); err != nil || !d.Allowed || string(rr.Data) != "by the agent" {
		t.Errorf("read over the agent's listener: %+v %q %v", d, rr.Data, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("fs status lacks %q", want)
		}
	}
	w.outsideUnchanged(t)
}

// Started by hand, or with something else than a directory on 5, fs
// refuses to run.
func TestFSProcessNeedsItsDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{envMain + "=1"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "runs only as a component the launcher starts") {
		t.Errorf("fs without descriptors: %v\n%s", err, out)
	}
	// A regular file where the workspace should be.
	br, bw, _ := os.Pipe()
	defer bw.Close()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lf, _ := ln.(*net.UnixListener).File()
	defer lf.Close()
	f, _ := os.CreateTemp(t.TempDir(), "notadir")
	defer f.Close()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{envMain + "=1"}
	cmd.ExtraFiles = []*os.File{br, lf, f}
	out, err = cmd.CombinedOutput()
	br.Close()
	if err == nil || !strings.Contains(string(out), "runs only as a component the launcher starts") {
		t.Errorf("fs with a file on 5: %v\n%s", err, out)
	}
}
