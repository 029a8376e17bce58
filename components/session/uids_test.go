package session

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/components/pki"
)

// Each component runs under a uid of its own, none of them the agent's
// (doc.go): a uid shared by two components would let one signal, trace or
// read the other's /proc, and SO_PEERCRED could not tell them apart.
func TestSessionDistinctUIDs(t *testing.T) {
	a := attach(t)
	a.waitLog(t, pki.Bash, "msg=serving")
	seen := map[int]pki.Role{a.uid: pki.Agent}
	for _, role := range []pki.Role{pki.KMS, pki.FS, pki.Bash} {
		pid := a.s.Pid(role)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatalf("%s (pid %d): %v", role, pid, err)
		}
		s := string(b)
		var real, eff, saved, fsuid int
		if _, err := fmt.Sscanf(s[strings.Index(s, "Uid:"):], "Uid:\t%d\t%d\t%d\t%d", &real, &eff, &saved, &fsuid); err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if real != eff || eff != saved || saved != fsuid || real == 0 {
			t.Errorf("%s runs as uids %d %d %d %d: want one throwaway uid", role, real, eff, saved, fsuid)
		}
		if other, ok := seen[real]; ok {
			t.Errorf("%s runs as uid %d, as %s does", role, real, other)
		}
		seen[real] = role
	}
}
