// Package mountinfo reads /proc/self/mountinfo: which tree of which
// device is mounted where. The launcher and `policy init` use it to tell
// what a path is when a bind mount put another tree there.
package mountinfo

import (
	"os"
	pathpkg "path"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Mount is one line: the device (major:minor), the path within that
// device's file system of the tree that is mounted (Root), and where
// (Point); the file system's type, its source and its own options
// (Super: an overlay's lowerdir=…), as the line gives them.
type Mount struct{ Dev, Root, Point, Type, Source, Super string }

// Read reads the process's mounts; nil when /proc cannot be read.
func Read() []Mount {
	b, err := ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return parse(string(b))
}

// ReadFile is os.ReadFile for the kernel's files (/proc, sysfs): what
// was read, and the error that stopped it. It opens the file without the
// runtime's poller, which costs os.Open a few system calls more, for
// files that cannot be polled.
func ReadFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 8192)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return b, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// parse reads mountinfo's lines.
func parse(b string) []Mount {
	var ms []Mount
	for line := range strings.Lines(b) {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := Mount{Dev: f[2], Root: Unescape(f[3]), Point: Unescape(f[4])}
		// After the optional fields: "-", type, source, super options.
		if i := slices.Index(f[5:], "-"); i >= 0 && len(f) >= 5+i+4 {
			m.Type, m.Source, m.Super = f[5+i+1], Unescape(f[5+i+2]), f[5+i+3]
		}
		ms = append(ms, m)
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
	m, fsPath, ok := Holder(ms, path)
	return m.Dev, fsPath, ok
}

// Holder is the mount that holds path (the last one mounted at the
// deepest mount point above it) and path's place within its file
// system, as Locate.
func Holder(ms []Mount, path string) (m Mount, fsPath string, ok bool) {
	best := -1
	for i, m := range ms {
		if within(path, m.Point) && (best < 0 || len(m.Point) >= len(ms[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return Mount{}, "", false
	}
	m = ms[best]
	rest := path
	if m.Point != "/" {
		rest = strings.TrimPrefix(path, m.Point)
	}
	return m, pathpkg.Join("/", m.Root, rest), true
}

// SuperOption is the value of the super option key= in m (an overlay's
// lowerdir, say), and whether it is there: the first, when it repeats.
func (m Mount) SuperOption(key string) (string, bool) {
	if vs := m.SuperOptions(key); len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

// SuperOptions are the values of every super option key= in m, in order
// (an overlay mounted with the new mount API lists each of its layers as
// a lowerdir+= of its own), with mountinfo's octal escapes undone: the
// line separates options by bare commas, and spells a comma, a space or
// a backslash within a value as \054, \040, \134. What is left is the
// file system's own text (an overlay's "\:" within a layer's name).
func (m Mount) SuperOptions(key string) []string {
	var out []string
	for _, opt := range strings.Split(m.Super, ",") {
		if v, ok := strings.CutPrefix(opt, key+"="); ok {
			out = append(out, Unescape(v))
		}
	}
	return out
}

// Within says whether path is dir or beneath it (both absolute, clean).
func Within(path, dir string) bool { return within(path, dir) }

func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}
