package launcher

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14).
const madvPopulateRead = 22

// TestImagePopulated checks that the constructor mapped the executable's
// code at start (image_linux.c). It runs a copy of this test binary whose
// pages were dropped from the page cache, as a binary read from disk is:
// such a copy runs a small part of its code, so without the constructor
// much of its code segment is never mapped; with it, all of it is. (A
// binary just written by the linker may be mapped whole either way.)
func TestImagePopulated(t *testing.T) {
	probe, err := unix.Mmap(-1, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	must(t, err)
	defer unix.Munmap(probe)
	err = unix.Madvise(probe, madvPopulateRead)
	have := "madvise works"
	if err != nil {
		have = "madvise: " + errString(err)
	}
	requireFeature(t, "MADV_POPULATE_READ (Linux 5.14)", err == nil, have)
	if os.Getenv("PINFOLD_IMAGE_CHILD") == "1" {
		size, rss := codeResident(t)
		fmt.Printf("code %d KiB, resident %d KiB\n", size, rss)
		return
	}

	self, err := os.Executable()
	must(t, err)
	src, err := os.Open(self)
	must(t, err)
	defer src.Close()
	cp := filepath.Join(t.TempDir(), "image.test")
	dst, err := os.OpenFile(cp, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Sync())
	must(t, unix.Fadvise(int(dst.Fd()), 0, 0, unix.FADV_DONTNEED))
	must(t, dst.Close())
	cmd := exec.Command(cp, "-test.run=^TestImagePopulated$")
	cmd.Env = append(os.Environ(), "PINFOLD_IMAGE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the copy: %v\n%s", err, out)
	}
	var size, rss int64
	if _, err := fmt.Sscanf(lastLine(string(out), "code "), "code %d KiB, resident %d KiB", &size, &rss); err != nil {
		t.Fatalf("the copy said %q: %v", out, err)
	}
	// All of it, but for pages reclaimed since (none, on a quiet machine).
	if size == 0 || rss*100 < size*98 {
		t.Fatalf("code segment %d KiB, resident %d KiB: the image was not mapped at start", size, rss)
	}
}

// lastLine is the last line of out that begins with prefix.
func lastLine(out, prefix string) string {
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			line = l
		}
	}
	return line
}

// codeResident sums Size and Rss of this process's executable code
// mappings, in KiB.
func codeResident(t *testing.T) (size, rss int64) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	must(t, err)
	f, err := os.Open("/proc/self/smaps")
	must(t, err)
	defer f.Close()
	var inCode, found bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			// A mapping's first line: range, perms, offset, dev, inode, path.
			inCode = len(fields) == 6 && fields[5] == exe && fields[1] == "r-xp"
			found = found || inCode
			continue
		}
		if !inCode || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "Size:":
			size += kb(t, fields[1])
		case "Rss:":
			rss += kb(t, fields[1])
		}
	}
	must(t, sc.Err())
	if !found || size == 0 {
		t.Fatalf("no executable mapping of %s in /proc/self/smaps", exe)
	}
	return size, rss
}

func kb(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	must(t, err)
	return n
}
