package launcher

import (
	"strings"
	"testing"
)

// The summary says where a crash still reaches the host's core dump
// handler: a pipe when the agent's core limit could not be made 1, a
// socket always; a file pattern, or a pipe under a limit of 1, is
// nothing to say.
func TestCoreDumpsReach(t *testing.T) {
	for _, c := range []struct {
		pattern string
		limit   uint64
		want    string
	}{
		{"core\n", 0, ""},
		{"/var/crash/core.%p", 0, ""},
		{"|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h\n", 1, ""},
		{"|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h\n", 0, "core dump program /usr/lib/systemd/systemd-coredump as root"},
		{"|/usr/share/apport/apport -p%p", 0, "/usr/share/apport/apport as root (the hard core limit"},
		{"@/run/systemd/coredump\n", 1, "core dump socket /run/systemd/coredump (SD-28)"},
		{"@@/run/systemd/coredump", 1, "core dump socket /run/systemd/coredump (SD-28)"},
		{"|/tmp/x\x1b[2Jy", 0, `"/tmp/x\x1b[2Jy"`},
		{" |/usr/bin/x\n", 0, ""}, // a file named " |…" to the kernel
	} {
		got := strings.Join(coreDumpsReach(c.pattern, c.limit), "; ")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("core_pattern %q, limit %d: got %q, want %q", c.pattern, c.limit, got, c.want)
		}
	}
}
