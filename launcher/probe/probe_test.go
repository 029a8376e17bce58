//go:build linux

package probe_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pinfold/pinfold/launcher/probe"
)

// probeEnv turns the test binary into the probe. "plain": argv is
// exe ACTION..., as for the probe program. "entry": argv must be
// exe __pinfold_probe ACTION..., as for the launcher; anything else is
// an error, so a re-exec that drops the prefix shows. Children the probe
// re-executes inherit the variable.
const probeEnv = "PINFOLD_PROBE_TEST_MAIN"

func TestMain(m *testing.M) {
	switch os.Getenv(probeEnv) {
	case "plain":
		probe.Main(nil, os.Args[1:])
	case "entry":
		if len(os.Args) < 2 || os.Args[1] != probe.Entry {
			fmt.Printf("error argv %q lacks the %s prefix\n", os.Args, probe.Entry)
			os.Exit(2)
		}
		probe.Main([]string{probe.Entry}, os.Args[2:])
	}
	os.Exit(m.Run())
}

// runProbe runs the probe in a re-executed copy of this test binary, with
// probeEnv set to mode, and returns its stdout and exit status.
func runProbe(t *testing.T, mode string, args ...string) (string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("own executable: %v", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), probeEnv+"="+mode)
	var stderr []byte
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code, stderr = ee.ExitCode(), ee.Stderr
	case err != nil:
		t.Fatalf("run probe %q: %v", args, err)
	}
	t.Logf("probe %q: %q, exit %d, stderr %q", args, out, code, stderr)
	return string(out), code
}

func TestMainProtocol(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		mode string
		args []string
		out  string
		code int
	}{
		{"noop", "plain", []string{"noop"}, "ok\n", 0},
		// The control for the refusal below: the same read of a file
		// that exists succeeds.
		{"read existing", "plain", []string{"read", "/proc/self/status"}, "ok\n", 0},
		{"read missing", "plain", []string{"read", filepath.Join(dir, "missing")}, "denied ENOENT\n", 1},
		{"unknown action", "plain", []string{"no-such-action"}, "error usage\n", 2},
		{"no action", "plain", nil, "error usage\n", 2},
		{"wrong argument count", "plain", []string{"read"}, "error usage\n", 2},
		// write-exec runs the copy it wrote as the probe again: this
		// checks that the re-exec argv is right for each prefix.
		{"write-exec", "plain", []string{"write-exec", filepath.Join(dir, "copy")}, "ok\n", 0},
		{"entry noop", "entry", []string{probe.Entry, "noop"}, "ok\n", 0},
		{"entry read missing", "entry", []string{probe.Entry, "read", filepath.Join(dir, "missing")}, "denied ENOENT\n", 1},
		{"entry write-exec", "entry", []string{probe.Entry, "write-exec", filepath.Join(dir, "copy2")}, "ok\n", 0},
		{"entry usage", "entry", []string{probe.Entry}, "error usage\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := runProbe(t, c.mode, c.args...)
			if out != c.out || code != c.code {
				t.Errorf("probe %q: got %q exit %d, want %q exit %d", c.args, out, code, c.out, c.code)
			}
		})
	}
}

// find-bytes finds the bytes in a nested file, not in the probe's own
// argv (which holds them in hex), and says absent when they are nowhere;
// a bad needle is the probe's failure, not an answer.
func TestFindBytes(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("..needle.."), 0o644))
	must(os.WriteFile(filepath.Join(dir, "other"), []byte("hay"), 0o644))
	hexNeedle := fmt.Sprintf("%x", "needle")
	if out, code := runProbe(t, "plain", "find-bytes", hexNeedle, dir, "/proc/self/cmdline"); code != 1 || out != "found "+filepath.Join(dir, "a", "b", "f")+"\n" {
		t.Errorf("present: %q, exit %d", out, code)
	}
	if out, code := runProbe(t, "plain", "find-bytes", fmt.Sprintf("%x", "absent-bytes"), dir, "/proc/self/cmdline", "/proc/self/environ"); code != 0 || out != "absent 4\n" {
		t.Errorf("absent: %q, exit %d", out, code)
	}
	if _, code := runProbe(t, "plain", "find-bytes", "zz", dir); code == 0 || code == 1 {
		t.Errorf("a bad needle answered with exit %d", code)
	}
}

// secret-hunt finds the bytes in the answer of the upstream it asks (an
// echo of what it received), in its headers, or beneath the roots, and
// otherwise says absent with the answer it got.
func TestSecretHunt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			fmt.Fprintln(w, "got ..needle..")
		case "/header":
			w.Header().Set("X-Echo", "needle")
			fmt.Fprintln(w, "nothing here")
		default:
			fmt.Fprintln(w, "nothing here")
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hay"), 0o644); err != nil {
		t.Fatal(err)
	}
	needle := fmt.Sprintf("%x", "needle")
	t.Setenv("PINFOLD_HUNT_DIR", dir) // the probe's environment: a root may name it
	for _, c := range []struct {
		path, root, want string
		code             int
	}{
		{"/echo", dir, "found the answer from " + srv.URL + "/echo\n", 1},
		{"/header", dir, "found the answer from " + srv.URL + "/header\n", 1},
		{"/plain", dir, "absent 1; status 200 - nothing here\n", 0},
		{"/plain", "/proc/self/cmdline", "absent 1; status 200 - nothing here\n", 0}, // its argv holds the needle in hex only
		{"/plain", "$PINFOLD_HUNT_DIR/f", "absent 1; status 200 - nothing here\n", 0},
		{"/plain", "$PINFOLD_HUNT_DIR/none", "absent 0; status 200 - nothing here\n", 0},
	} {
		if out, code := runProbe(t, "plain", "secret-hunt", needle, srv.URL+c.path, c.root); code != c.code || out != c.want {
			t.Errorf("%s, %s: %q, exit %d; want %q, exit %d", c.path, c.root, out, code, c.want, c.code)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("needle"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runProbe(t, "plain", "secret-hunt", needle, srv.URL+"/plain", dir); code != 1 || out != "found "+filepath.Join(dir, "g")+"\n" {
		t.Errorf("a planted copy: %q, exit %d", out, code)
	}
}

// without-netns is the host SR-03's second case is about: what a launch
// reads (user.max_net_namespaces) says 0, and making a network namespace
// is refused, while the rest (a mount namespace) still works. The host's
// own sysctl is left as it was.
func TestWithoutNetNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("without-netns binds over a sysctl in a mount namespace of its own: needs root")
	}
	host, err := os.ReadFile("/proc/sys/user/max_net_namespaces")
	if err != nil {
		t.Skipf("no user.max_net_namespaces here: %v", err)
	}
	out, code := runProbe(t, "plain", "without-netns", "/bin/cat", "/proc/sys/user/max_net_namespaces")
	if out != "0\n" || code != 0 {
		t.Errorf("the sysctl under without-netns: %q exit %d, want \"0\\n\" exit 0", out, code)
	}
	for flag, want := range map[string]int{"-n": 1, "-m": 0} {
		if _, err := os.Stat("/usr/bin/unshare"); err != nil {
			t.Skip("no /usr/bin/unshare")
		}
		_, code := runProbe(t, "plain", "without-netns", "/usr/bin/unshare", flag, "/bin/true")
		if code != want {
			t.Errorf("unshare %s under without-netns: exit %d, want %d", flag, code, want)
		}
	}
	if now, _ := os.ReadFile("/proc/sys/user/max_net_namespaces"); string(now) != string(host) {
		t.Errorf("the host's sysctl changed: %q, was %q", now, host)
	}
}
