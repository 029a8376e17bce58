package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pinfold/pinfold/register"
)

// TestRegisterCheck builds the real launcher (the checks run it, and it is
// their probe too) into a directory every uid can reach, runs every check
// on this machine and requires no fail and no inconclusive: CI's kernel has
// every feature the checks need. A skip must say what the machine lacks.
func TestRegisterCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("register check: the checks' policies assume a root launch (found euid", os.Geteuid(), ")")
	}
	dir, err := os.MkdirTemp("/var/tmp", "pinfold-regtest-")
	if err != nil {
		t.Fatal(err)
	}
	// The components-mode checks leave their sessions' logs in
	// /run/pinfold, as real sessions do; this test's go when it ends.
	const runDir = "/run/pinfold"
	before := map[string]bool{}
	if ents, err := os.ReadDir(runDir); err == nil {
		for _, e := range ents {
			before[e.Name()] = true
		}
	}
	t.Cleanup(func() {
		ents, _ := os.ReadDir(runDir)
		for _, e := range ents {
			p := filepath.Join(runDir, e.Name())
			if _, err := os.Lstat(filepath.Join(p, "lock")); !before[e.Name()] && err != nil && e.Name() != "ids" {
				os.RemoveAll(p)
			}
		}
	})
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "launcher")
	build := exec.Command("go", "build", "-tags", "netgo", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build launcher: %v\n%s", err, out)
	}
	evFile := filepath.Join(dir, "evidence.json")
	out, err := exec.Command(bin, "register", "check", "--json", "--out", evFile).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("register check: %v", err)
	}
	var ev register.Evidence
	if err := json.Unmarshal(out, &ev); err != nil {
		t.Fatalf("register check --json: %v\n%s", err, out)
	}
	if len(ev.Results) != len(register.CheckIDs()) {
		t.Errorf("%d results for %d checks", len(ev.Results), len(register.CheckIDs()))
	}
	for _, r := range ev.Results {
		switch r.Verdict {
		case register.Pass:
		case register.Skipped:
			requireAll(t, r.ID+": "+r.Reason)
		default:
			t.Errorf("%s %s: %s", r.ID, r.Verdict, r.Reason)
		}
	}
	saved, err := os.ReadFile(evFile)
	if err != nil {
		t.Fatal(err)
	}
	var again register.Evidence
	if err := json.Unmarshal(saved, &again); err != nil || again.Machine.Kernel == "" || again.Machine.Date == "" {
		t.Errorf("evidence file: %v, machine %+v", err, again.Machine)
	}

	// Run by anyone else, the components-mode checks (and the gateway's)
	// are skipped, saying why: the launcher refuses them that mode, which
	// is not a check that proved nothing.
	nobody := exec.Command(bin, "register", "check", "--json", "--only", "SR-37,SR-42,SR-50")
	nobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err = nobody.Output()
	if err != nil {
		t.Fatalf("register check as nobody: %v", err)
	}
	var asNobody register.Evidence
	if err := json.Unmarshal(out, &asNobody); err != nil {
		t.Fatalf("register check --json as nobody: %v\n%s", err, out)
	}
	for _, r := range asNobody.Results {
		if r.Verdict != register.Skipped || !strings.Contains(r.Reason, "runs only as root") {
			t.Errorf("as nobody, %s: %s %s", r.ID, r.Verdict, r.Reason)
		}
	}
	if len(asNobody.Results) != 3 {
		t.Errorf("as nobody: %d results for 3 checks", len(asNobody.Results))
	}
}

// requireAll fails under PINFOLD_REQUIRE_ALL_FEATURES=1 (CI has every
// feature), and otherwise logs the skip with what was missing.
func requireAll(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
		t.Errorf("skipped, but PINFOLD_REQUIRE_ALL_FEATURES=1: %s", why)
		return
	}
	t.Logf("skipped: %s", why)
}

// register check run from where no sandbox can run the binary (here a
// directory others cannot search, as root) refuses before any check, and
// says where to put it, instead of fifty inconclusive checks.
func TestRegisterCheckRefusesAnUnreachableBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("register check: a directory others cannot search stops only a root launch's agent (found euid", os.Geteuid(), ")")
	}
	dir, err := os.MkdirTemp("/var/tmp", "pinfold-regplace-") // 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "launcher") // testscript runs launcherMain by this name
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	scratch := func() []string { m, _ := filepath.Glob("/var/tmp/pinfold-check-*"); return m }
	before := len(scratch())
	out, err := exec.Command(bin, "register", "check", "--only", "SR-01").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 {
		t.Fatalf("register check from %s: %v, want exit 125\n%s", dir, err, out)
	}
	for _, want := range []string{"launcher: error: register check: ", dir + " is not searchable by other users", "launcher: hint: copy it where every user may run it"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "SR-01") || len(scratch()) != before {
		t.Errorf("a check ran:\n%s", out)
	}
}
