package register

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// heldBeneath finds a descriptor on the directory in a process beneath
// this one once the marked process runs, finds none where the marked
// process holds none, and says it saw nothing when no marked process
// shows: the three answers SR-10's stage 2 case turns into a verdict.
func TestHeldBeneath(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := func(marker string, pass bool) {
		cmd := exec.Command("/bin/sh", "-c", "sleep 3", marker)
		if pass {
			cmd.ExtraFiles = []*os.File{f}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	start("pinfold-test-held", true)
	start("pinfold-test-clean", false)
	if got := heldBeneath(os.Getpid(), "pinfold-test-held", dir, 5*time.Second); got != heldYes {
		t.Errorf("a child holding the directory: %q, want %q", got, heldYes)
	}
	// This process holds it too: the root is not looked at.
	if got := heldBeneath(os.Getpid(), "pinfold-test-clean", t.TempDir(), 5*time.Second); got != heldNone {
		t.Errorf("no child holding another directory: %q, want %q", got, heldNone)
	}
	if got := heldBeneath(os.Getpid(), "pinfold-test-absent", dir, 200*time.Millisecond); got != heldUnseen {
		t.Errorf("no marked process: %q, want %q", got, heldUnseen)
	}
	// A fork that has not exec'd shows its parent's argv, marker and all,
	// and holds its parent's descriptors: the launcher's child on its way
	// to becoming stage 2. It is not the agent. Here the root is a shell
	// whose subshell is such a copy (dash forks for the parentheses and
	// waits there for sleep).
	copier := exec.Command("/bin/sh", "-c", "(sleep 3; :); :", "pinfold-test-copy")
	copier.ExtraFiles = []*os.File{f}
	if err := copier.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { copier.Process.Kill(); copier.Wait() })
	copies := 0
	for end := time.Now().Add(5 * time.Second); copies == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, pid := range descendants(copier.Process.Pid) {
			if c, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.Contains(string(c), "pinfold-test-copy") {
				copies++
			}
		}
	}
	if copies == 0 {
		t.Fatal("the shell's subshell never showed with the shell's argv: the case is not set up")
	}
	if got := heldBeneath(copier.Process.Pid, "pinfold-test-copy", dir, 300*time.Millisecond); got != heldUnseen {
		t.Errorf("only an un-exec'd copy of the root carries the marker: %q, want %q", got, heldUnseen)
	}
}

// As root SR-10 also looks at stage 2 from outside (the mutant that
// passed before: stage 1 no longer marking what it inherited
// close-on-exec, which stage 2's own marking hid from the agent's probe).
// The agent's "ok" counts as a refusal only once the race saw no process
// beneath the launcher holding the descriptor.
func TestSR10Stage2Case(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the case is root's (stage 2's descriptors are readable by root alone)")
	}
	s, err := newScratch(fakeLauncher(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	d, err := os.Open(s.dir) // what the check passes the launcher
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ok := Run{Line: "ok"}
	// A stand-in for the launcher's tree: this process, and beneath it
	// the marked agent, holding the descriptor or not.
	for _, held := range []bool{true, false} {
		pc, err := checks()[indexOf(checks(), "SR-10")].prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(pc.also) != 1 || pc.also[0].race == nil || !pc.also[0].passFD {
			t.Fatalf("SR-10's cases: %d more, want one that looks at stage 2 while the agent runs with the descriptor passed", len(pc.also))
		}
		st := pc.also[0]
		if st.refused(ok) {
			t.Errorf("the agent's ok is taken as a refusal before stage 2 was looked at")
		}
		if v, _ := st.rejudge(Fail, ""); v != Inconclusive {
			t.Errorf("stage 2 never looked at: %s, want inconclusive", v)
		}
		agent := exec.Command("/bin/sh", "-c", "sleep 3", st.probe[2])
		if held {
			agent.ExtraFiles = []*os.File{d}
		}
		if err := agent.Start(); err != nil {
			t.Fatal(err)
		}
		st.race(os.Getpid())
		agent.Process.Kill()
		agent.Wait()
		if got := st.refused(ok); got == held {
			t.Errorf("held %v: the agent's ok taken as a refusal: %v", held, got)
		}
		if v, why := st.rejudge(Fail, ""); held && (v != Fail || !strings.Contains(why, "holds the descriptor")) {
			t.Errorf("held: %s %q, want a fail that says stage 2 holds the descriptor", v, why)
		}
	}
}
