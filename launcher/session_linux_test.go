package launcher

import (
	"errors"
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

// A hint several refused Boundaries share (user namespaces refuse the
// mount, pid and network ones alike) is said once.
func TestRefusalsHintOnce(t *testing.T) {
	shared := "enable unprivileged user namespaces"
	err := refusals([]Assessment{
		{Boundary: "user namespace", Verdict: Refused, Detail: "a", Hint: shared},
		{Boundary: "mount namespace", Verdict: Refused, Detail: "b", Hint: shared},
		{Boundary: "landlock", Verdict: Applied, Detail: "c", Hint: "not a refusal"},
		{Boundary: "seccomp", Verdict: Refused, Detail: "d", Hint: "other"},
	})
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("refusals = %v, want a RefusedError", err)
	}
	if re.Hint != shared+"; other" || re.Detail != "user namespace: a; mount namespace: b; seccomp: d" {
		t.Errorf("hint %q, detail %q", re.Hint, re.Detail)
	}
}
