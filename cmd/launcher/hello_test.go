package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/launcher"
)

// TestHelloMatchesProbe checks that hello's JSON is the probe's view of this
// host, and that its exit code follows the policy assessment: 0 when every
// Boundary applies, 124 when one is refused.
func TestHelloMatchesProbe(t *testing.T) {
	release, err := exec.Command("uname", "-r").Output()
	if err != nil {
		t.Fatalf("uname -r: %v", err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"hello", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("hello --json exited %d: %s", code, errb.String())
	}
	var rep helloReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("hello --json is not JSON: %v\n%s", err, out.String())
	}
	if got, want := rep.Host.Kernel, strings.TrimSpace(string(release)); got != want {
		t.Errorf("kernel = %q, uname -r says %q", got, want)
	}
	probe := launcher.Probe()
	if rep.Host.Landlock.ABI != probe.Landlock.ABI || rep.Host.Cgroup.Mode != probe.Cgroup.Mode || rep.Host.Root != (os.Geteuid() == 0) {
		t.Errorf("hello host %+v differs from the probe %+v", rep.Host, probe)
	}

	// A ports policy needs Landlock TCP rules (ABI 4).
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.toml")
	text := "version = 1\n[workspace]\npath = \"" + dir + "\"\n[files]\nwrite = [\"" + dir + "\"]\n[network]\nmode = \"ports\"\nconnect_tcp = [443]\n"
	if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"hello", "--json", "--policy", pol}, &out, &errb)
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("hello --json --policy is not JSON: %v\n%s", err, out.String())
	}
	refused := launcher.Refuses(rep.Boundaries)
	switch {
	case refused && code != exitRefused:
		t.Errorf("a Boundary is refused but hello exited %d, want %d", code, exitRefused)
	case !refused && code != exitOK:
		t.Errorf("no Boundary is refused but hello exited %d: %s", code, errb.String())
	case probe.Landlock.ABI >= 4 && refused:
		t.Errorf("Landlock ABI %d supports ports mode, yet hello refuses: %+v", probe.Landlock.ABI, rep.Boundaries)
	case probe.Landlock.ABI < 4 && !refused:
		t.Errorf("Landlock ABI %d cannot enforce ports mode, yet hello does not refuse", probe.Landlock.ABI)
	}
}
