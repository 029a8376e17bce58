package session

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// Stop kills a component's cgroup whole, not only the process it started:
// a process that has joined kms's group (here a sleep the test moves in,
// standing for anything a component might fork before its confinement
// refuses fork) ends with the session. The control: the same sleep is
// alive just before Stop.
func TestSessionStopKillsComponentGroup(t *testing.T) {
	s := startPlain(t)
	defer s.Stop()
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill() // by its pid, whatever happens
	done := make(chan error, 1)
	go func() { done <- sleep.Wait() }()

	// Into every hierarchy's kms group (as TestSessionKMS finds them).
	group := fmt.Sprintf("/pinfold/s-%d-%s-kms", os.Getpid(), s.ID)
	cgs, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", s.Pid(pki.KMS)))
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, line := range strings.Split(strings.TrimSpace(string(cgs)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.Contains(f[2], group) {
			continue
		}
		hier := "/sys/fs/cgroup/unified"
		if f[1] != "" {
			hier = "/sys/fs/cgroup/" + strings.TrimPrefix(strings.Split(f[1], ",")[0], "name=")
		} else if _, err := os.Stat(hier); err != nil {
			hier = "/sys/fs/cgroup"
		}
		if err := os.WriteFile(filepath.Join(hier+f[2], "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0); err != nil {
			t.Fatalf("move the sleep into %s: %v", hier+f[2], err)
		}
		moved++
	}
	if moved == 0 {
		t.Fatalf("kms is in no group %s:\n%s", group, cgs)
	}
	if err := syscall.Kill(sleep.Process.Pid, 0); err != nil {
		t.Fatalf("control: the sleep is not running before Stop: %v", err)
	}
	stopErr := s.Stop()
	select {
	case err := <-done:
		if ws, ok := sleep.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("the sleep ended, but not by SIGKILL: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("a process in kms's group outlived Stop by 5s (Stop: %v)", stopErr)
	}
}
