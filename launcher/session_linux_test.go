package launcher

import (
	"os"
	"os/exec"
	"testing"
)

// A question stops the launcher's job but its own descendants: a child
// of a child of the test counts as the test's, and the test's parent, or
// the test itself as seen from a child's pid, does not.
func TestDescendsFrom(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	self := os.Getpid()
	var grandchild procIDs
	pollUntil(t, "the shell's child", func() bool {
		members, ok := groupMembers()
		for _, m := range members {
			if m.ppid == cmd.Process.Pid {
				grandchild = m
			}
		}
		return ok && grandchild.pid != 0
	})
	if !descendsFrom(grandchild, self) {
		t.Errorf("%d (child of %d) does not descend from %d", grandchild.pid, grandchild.ppid, self)
	}
	me, ok := procIDsOf(self)
	if !ok {
		t.Fatal("no stat for the test")
	}
	if descendsFrom(me, cmd.Process.Pid) {
		t.Errorf("the test (%d) descends from its own child %d", self, cmd.Process.Pid)
	}
	parent, ok := procIDsOf(os.Getppid())
	if !ok {
		t.Fatal("no stat for the test's parent")
	}
	if descendsFrom(parent, self) {
		t.Errorf("the test's parent %d descends from the test", parent.pid)
	}
}
