// Package pidtest places a process at a given pid, for tests that check
// a kill by pid or process group spares whoever gets a reaped process's
// pid next.
package pidtest

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// SessionLeaderAt starts `sleep 30` in a session of its own (so its
// process group id is its pid) at pid, by ns_last_pid (root only), and
// returns a channel that receives its Wait result when it ends; it is
// killed and reaped when the test ends. The test is skipped when another
// process takes pid each of 50 tries.
func SessionLeaderAt(t *testing.T, pid int) <-chan error {
	t.Helper()
	var victim *exec.Cmd
	for try := 0; try < 50 && victim == nil; try++ {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatal(err)
		}
		c := exec.Command("/bin/sleep", "30")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.Process.Pid == pid {
			victim = c
			break
		}
		c.Process.Kill()
		c.Wait()
	}
	if victim == nil {
		t.Skipf("another process took pid %d each time", pid)
	}
	ended := make(chan error, 1)
	reaped := make(chan struct{})
	go func() { ended <- victim.Wait(); close(reaped) }()
	t.Cleanup(func() {
		victim.Process.Kill()
		<-reaped
	})
	return ended
}
