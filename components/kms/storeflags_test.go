package kms

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping of this process that holds
// address a (/proc/self/smaps).
func vmFlags(t *testing.T, a uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(line[:strings.IndexByte(line, ' ')], "-") {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x", a)
	return nil
}

// The store's values are in a mapping that is locked (lo), left out of
// core dumps (dd) and wiped in a forked child (wf), as doc.go promises;
// TestStoreLocked sees the lock alone. The control: the Go heap, where
// Release's copy lives, has none of the last two.
func TestStoreMemoryFlags(t *testing.T) {
	s, err := NewStore(vaultSecrets(), rules())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	flags := vmFlags(t, uintptr(unsafe.Pointer(&s.mem[0])))
	for _, want := range []string{"lo", "dd", "wf"} {
		found := false
		for _, f := range flags {
			found = found || f == want
		}
		if !found {
			t.Errorf("the values' mapping lacks VmFlag %q: %v", want, flags)
		}
	}
	heap := make([]byte, 1<<20)
	for _, f := range vmFlags(t, uintptr(unsafe.Pointer(&heap[0]))) {
		if f == "dd" || f == "wf" {
			t.Errorf("control: the Go heap has VmFlag %q", f)
		}
	}
}
