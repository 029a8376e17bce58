package backup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A manifest larger than MaxManifest is not read (list, show, verify and
// restore used to read all of it, and take gigabytes doing so): an error
// naming the backup and the limit, and List lists it with that problem.
func TestManifestReadBounded(t *testing.T) {
	w := newWorld(t, 0)
	_, b := stagedTree(t, w, 100, "d")
	// A sparse manifest one byte over the limit.
	must(t, os.Truncate(filepath.Join(w.storeDir, b.ID, manifestName), MaxManifest+1))
	wantLimit := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), b.ID) || !strings.Contains(err.Error(), "-byte limit") {
			t.Errorf("%s: error %v, want one naming %s and the limit", what, err, b.ID)
		}
	}
	var showErr error
	if n := allocated(func() { _, _, showErr = w.store.Show(b.ID) }); n > 1<<20 {
		t.Errorf("Show allocated %d bytes", n)
	}
	wantLimit("show", showErr)
	wantLimit("verify", w.store.Verify(b.ID))
	ws, err := os.Open(w.ws)
	must(t, err)
	defer ws.Close()
	wantLimit("restore", w.store.Restore(b.ID, ws, "again", self()))
	var infos []Info
	if n := allocated(func() { infos, err = w.store.List() }); n > 1<<20 {
		t.Errorf("List allocated %d bytes", n)
	}
	must(t, err)
	if len(infos) != 1 || infos[0].ID != b.ID {
		t.Fatalf("list %+v", infos)
	}
	wantLimit("list", errorOf(infos[0].Problem))
	// Not counted, so a new backup can be made; and Remove removes it.
	smallTree(t, filepath.Join(w.ws, "e"), 100)
	_, err = w.store.Stage(openPath(t, filepath.Join(w.ws, "e")), "e", t0.Add(1))
	must(t, err)
	must(t, w.store.Remove(b.ID))
}

type errorOf string

func (e errorOf) Error() string { return string(e) }

// List reads summaries, not whole manifests: a manifest of tens of MB
// (within the limit) costs it a few kilobytes; Show still reads it all.
func TestListReadsSummaries(t *testing.T) {
	w := newWorld(t, 0)
	_, b := stagedTree(t, w, 100, "d")
	// The same backup with 100,000 more (made up) entries in its manifest.
	m := &manifest{Version: Version, Info: b.Info, Entries: b.Tree}
	for i := range 100000 {
		m.Entries = append(m.Entries, Entry{Path: strings.Repeat("x", 200) + strconv.Itoa(i), Type: TypeFIFO, MTime: t0})
	}
	data, err := json.Marshal(m)
	must(t, err)
	if len(data) < 20<<20 || len(data) > MaxManifest {
		t.Fatalf("manifest of %d bytes", len(data))
	}
	must(t, os.WriteFile(filepath.Join(w.storeDir, b.ID, manifestName), data, 0o600))
	m, data = nil, nil
	var infos []Info
	if n := allocated(func() { infos, err = w.store.List() }); n > 1<<20 {
		t.Errorf("List allocated %d bytes for one backup", n)
	}
	must(t, err)
	if len(infos) != 1 || infos[0] != b.Info {
		t.Fatalf("list %+v, want %+v", infos, b.Info)
	}
	_, entries, err := w.store.Show(b.ID)
	must(t, err)
	if len(entries) != len(b.Tree)+100000 {
		t.Fatalf("show: %d entries", len(entries))
	}
}

// The summary is checked as the whole manifest is: a wrong version or id,
// or no root entry, is a problem in List too.
func TestListChecksSummaries(t *testing.T) {
	w := newWorld(t, 0)
	_, b := stagedTree(t, w, 10, "d")
	p := filepath.Join(w.storeDir, b.ID, manifestName)
	good, err := os.ReadFile(p)
	must(t, err)
	for _, c := range []struct{ name, from, to, want string }{
		{"version", `"version":1`, `"version":2`, "version 2"},
		{"id", `"id":"` + b.ID, `"id":"` + newID(t0), "names backup"},
		{"no root", `"entries":[{"path":"."`, `"entries":[{"path":"x"`, "no root entry"},
		{"no entries", `"entries":[`, `"entriez":[`, "no root entry"},
		{"truncated", `"label"`, `"label`, "not valid"},
	} {
		bad := strings.Replace(string(good), c.from, c.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q not in the manifest", c.name, c.from)
		}
		must(t, os.WriteFile(p, []byte(bad), 0o600))
		infos, err := w.store.List()
		must(t, err)
		if len(infos) != 1 || !strings.Contains(infos[0].Problem, c.want) {
			t.Errorf("%s: list %+v, want the problem %q", c.name, infos, c.want)
		}
	}
}
