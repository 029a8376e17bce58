// Package mountinfo reads /proc/self/mountinfo: which tree of which
// device is mounted where. The launcher and `policy init` use it to tell
// what a path is when a bind mount put another tree there.
package mountinfo

import (
	"os"
	pathpkg "path"
	"strconv"
	"strings"
)

// Mount is one line: the device (major:minor), the path within that
// device's file system of the tree that is mounted (Root), and where
// (Point).
type Mount struct{ Dev, Root, Point string }

// Read reads the process's mounts; nil when /proc cannot be read.
func Read() []Mount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var ms []Mount
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		ms = append(ms, Mount{Dev: f[2], Root: Unescape(f[3]), Point: Unescape(f[4])})
	}
	return ms
}

// Unescape undoes mountinfo's octal escapes (\040 for a space).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Locate is where path is on its device: the device of the mount it is
// in (the last mounted at the longest point above it, which hides the
// others there) and its path within that device's file system (the
// mount's Root, then the rest of path). A bind mount shows one tree at
// two places; Locate gives both the same answer. path is absolute and
// resolved (no symbolic links, no ".."); ok is false when no mount
// holds it.
func Locate(ms []Mount, path string) (dev, fsPath string, ok bool) {
	best := -1
	for i, m := range ms {
		if within(path, m.Point) && (best < 0 || len(m.Point) >= len(ms[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return "", "", false
	}
	m := ms[best]
	rest := path
	if m.Point != "/" {
		rest = strings.TrimPrefix(path, m.Point)
	}
	return m.Dev, pathpkg.Join("/", m.Root, rest), true
}

// Within says whether path is dir or beneath it (both absolute, clean).
func Within(path, dir string) bool { return within(path, dir) }

func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}
