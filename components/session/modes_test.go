package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// What Start makes has the modes doc.go gives it: the session directory
// and the agent's directory root's and 0711 (searchable, not listable, not
// writable by others), each component's log root's and 0600 (its lines
// name callers and refusals), and the session root not writable by
// others. A log others could read would tell any local user who called
// what.
func TestSessionFileModes(t *testing.T) {
	s := startPlain(t)
	defer s.Stop()
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{s.Dir, os.ModeDir | 0o711},
		{s.AgentDir(), os.ModeDir | 0o711},
		{filepath.Join(s.Dir, "kms.log"), 0o600},
	} {
		st, err := os.Lstat(c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if st.Mode() != c.mode || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: mode %v, uid %d; want %v, root's", c.path, st.Mode(), st.Sys().(*syscall.Stat_t).Uid, c.mode)
		}
	}
	if st, err := os.Lstat(filepath.Dir(s.Dir)); err != nil || st.Mode().Perm()&0o022 != 0 { // the session root
		t.Errorf("session root: %v, %v", st.Mode(), err)
	}
}
