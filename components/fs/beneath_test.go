package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The lookup itself stays beneath the workspace (RESOLVE_BENEATH), not
// only the path checks in front of it: names that reach the kernel with
// "..", or absolute, are refused as escapes by openat2, both from the
// root and from a parent directory's descriptor. Path validation refuses
// these before any lookup today (TestMalformedPaths), so only this test
// holds the resolve flags to their promise (SR-39). The control opens a
// file of the workspace the same way.
func TestResolveStaysBeneath(t *testing.T) {
	w := newWorld(t)
	w.file(t, "inside", "in the workspace")
	fd, err := w.root.open("read", "inside", "inside", unix.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	unix.Close(fd)
	for _, p := range []string{"../outside/secret", "../ws/inside", "/etc/passwd", w.outside + "/secret"} {
		fd, err := w.root.open("read", p, p, unix.O_RDONLY, 0)
		if err == nil {
			unix.Close(fd)
		}
		wantKind(t, "open "+p+" from the root", err, KindEscape)
		fd, err = openAt("read", p, w.root.fd, p, unix.O_RDONLY, 0)
		if err == nil {
			unix.Close(fd)
		}
		wantKind(t, "openAt "+p+" beneath the root", err, KindEscape)
	}
	w.outsideUnchanged(t)
}
