// Package memscan looks for bytes in this process's own memory, for
// tests that prove a secret's copies were cleared.
package memscan

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Find looks for a followed by b in this process's writable memory and
// names the mapping where they are ("" when nowhere). A test keeps its
// needle in the two halves a and b, each in a buffer of its own, so that
// the needle is not found in the test's own memory.
func Find(a, b []byte) (string, error) {
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", err
	}
	defer maps.Close()
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return "", err
	}
	defer mem.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[1], "rw") || len(f) >= 6 && strings.HasPrefix(f[5], "[v") {
			continue // only writable memory; not [vvar] or [vsyscall]
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end-start > 1<<30 {
			continue
		}
		buf := make([]byte, end-start)
		n, _ := mem.ReadAt(buf, int64(start))
		buf = buf[:n]
		for off := 0; ; {
			i := bytes.Index(buf[off:], a)
			if i < 0 {
				break
			}
			at := off + i
			if bytes.HasPrefix(buf[at+len(a):], b) {
				return sc.Text(), nil
			}
			off = at + 1
		}
	}
	return "", sc.Err()
}
