package launcher

import (
	"fmt"
	"os"
	"testing"
)

// Throwaway ids: two live claims never share an id, each lies in the
// documented range, the lock file exists while held and is gone after.
func TestClaimThrowawayID(t *testing.T) {
	requireFeature(t, "root", os.Geteuid() == 0, fmt.Sprintf("euid %d", os.Geteuid()))
	seen := map[int]bool{}
	var locks []*idLock
	for range 20 {
		id, lock, err := claimThrowawayID()
		if err != nil {
			t.Fatal(err)
		}
		locks = append(locks, lock)
		if id < throwawayBase || id >= throwawayBase+throwawaySpan {
			t.Errorf("id %d outside [%d, %d)", id, throwawayBase, throwawayBase+throwawaySpan)
		}
		if seen[id] {
			t.Errorf("id %d claimed twice while held", id)
		}
		seen[id] = true
		if _, err := os.Stat(fmt.Sprintf("%s/%d", idLockDir, id)); err != nil {
			t.Errorf("lock file for %d: %v", id, err)
		}
	}
	for id := range seen {
		path := fmt.Sprintf("%s/%d", idLockDir, id)
		for _, l := range locks {
			if l.f.Name() == path {
				l.Close()
			}
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("lock file %s still there after Close: %v", path, err)
		}
	}
	// A lock whose file was removed under it is not a claim.
	f, err := os.CreateTemp(t.TempDir(), "lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Remove(f.Name())
	if fileID(f) == pathID(f.Name()) {
		t.Error("a removed lock file still matches its path")
	}
}
