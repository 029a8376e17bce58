package launcher

import (
	"fmt"
	"os"
	"path/filepath"
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

// A claim skips every id the host has given out and every id another
// session holds: ids come from a fixed cycle of three, the middle one
// named by the host; two claims get the first and the third, and a third
// claim, with all three held or named, finds none.
func TestClaimIDSkipsTakenAndHeld(t *testing.T) {
	requireFeature(t, "root", os.Geteuid() == 0, fmt.Sprintf("euid %d", os.Geteuid()))
	if err := os.MkdirAll(idLockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The top of the range: a random claim lands on one of these three
	// with odds of 3 in 10^8.
	b := throwawayBase + throwawaySpan - 3
	cycle := []int{b, b + 1, b + 2}
	i := 0
	next := func() (int, error) { i++; return cycle[(i-1)%len(cycle)], nil }
	taken := func(id int) bool { return id == b+1 }
	var ids []int
	for range 2 {
		id, lock, err := claimIDFrom(next, taken)
		if err != nil {
			t.Fatalf("claim %d: %v", len(ids)+1, err)
		}
		defer lock.Close()
		ids = append(ids, id)
	}
	if ids[0] != b || ids[1] != b+2 {
		t.Errorf("claimed %v, want [%d %d]: the named id %d skipped, the held id %d not claimed again", ids, b, b+2, b+1, b)
	}
	if id, lock, err := claimIDFrom(next, taken); err == nil {
		lock.Close()
		t.Errorf("a third claim got %d, want none: each id is held or named", id)
	}
}

// takenIDs reads the host's files: a uid in passwd, a gid in group, and an
// id in a subuid or subgid range are taken; ids beside them are not.
func TestTakenIDs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := throwawayBase
	taken := takenIDs(idSources{
		passwd: write("passwd", fmt.Sprintf("root:x:0:0::/root:/bin/sh\nodd:x:%d:100::/:/bin/false\n", b+10)),
		group:  write("group", fmt.Sprintf("wheel:x:%d:\n", b+20)),
		subuid: write("subuid", fmt.Sprintf("ana:%d:65536\n", b+1000)),
		subgid: write("subgid", fmt.Sprintf("ana:%d:10\n", b+100000)),
	})
	for id, want := range map[int]bool{
		0: true, b + 10: true, b + 20: true, b + 1000: true, b + 1000 + 65535: true, b + 100000: true, b + 100009: true,
		b: false, b + 11: false, b + 999: false, b + 1000 + 65536: false, b + 100010: false,
	} {
		if got := taken(id); got != want {
			t.Errorf("taken(%d) = %v, want %v", id, got, want)
		}
	}
}
