// Package privfile replaces a private file (a vault, a token store)
// atomically and durably.
package privfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotDurable: the new file is in place, but syncing its directory
// failed, so a crash now might bring back the old one.
var ErrNotDurable = errors.New("the change is made, but its directory could not be synced")

// Replace replaces the file at path with data: a new file (mode 0600) in
// the same directory, written and synced, renamed over the old one, and
// the directory synced. A crash leaves the old file or the new one, never
// half of either. After the rename an error wraps ErrNotDurable: the
// change is made. The caller checks the directory first.
func Replace(path string, data []byte) (err error) {
	if err := Replaceable(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	sweep(dir, "."+filepath.Base(path)+"-")
	// Until the rename the old file is as it was, and the error says so:
	// a full disk must not read as a lost or damaged file. Where there
	// was none, none is made, and the error says that instead.
	unchanged := func(err error) error { return fmt.Errorf("%s is unchanged: %w", path, err) }
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		unchanged = func(err error) error { return fmt.Errorf("%s was not made: %w", path, err) }
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return unchanged(err)
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600 already; say so rather than rely on it.
	// (The errors of *os.File name the file and the operation already.)
	if err := tmp.Chmod(0o600); err != nil {
		return unchanged(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return unchanged(err)
	}
	if err := tmp.Sync(); err != nil {
		return unchanged(err)
	}
	if err := tmp.Close(); err != nil {
		return unchanged(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return unchanged(err)
	}
	renamed = true
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotDurable, err)
	}
	return nil
}

// staleAfter is how old another writer's temporary file must be before
// it is taken as left behind (a writer killed between creating it and
// renaming it); a live writer renames its file within milliseconds.
const staleAfter = 10 * time.Minute

// sweep removes the temporary files of earlier writers of the same file
// that were killed before their rename: regular files named prefix and
// CreateTemp's digits, the caller's, older than staleAfter. Best effort:
// a file it cannot remove stays, as before.
func sweep(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		st, isUnix := fi.Sys().(*syscall.Stat_t)
		if err != nil || !isUnix || int(st.Uid) != os.Geteuid() || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// NotPrivateError is a directory Dir refuses.
type NotPrivateError struct{ Problem string }

func (e *NotPrivateError) Error() string { return e.Problem }

// Dir makes dir (0700) if missing, and refuses one that is not a
// directory, not the caller's, or writable by others, who could put an
// older file (the what it holds) back in its place: a *NotPrivateError.
func Dir(dir, what string) error {
	_, before := os.Lstat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if errors.Is(before, os.ErrNotExist) {
		// The umask takes what it masks from the 0700 asked for: under
		// 0277 the directory was made 0500, and nothing could be written
		// in it.
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return CheckDir(dir, what)
}

// CheckDir is Dir's check alone, for a directory that must already be
// there (an error wrapping fs.ErrNotExist when it is not).
func CheckDir(dir, what string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	uid := st.Sys().(*syscall.Stat_t).Uid
	switch {
	case !st.IsDir():
		return &NotPrivateError{fmt.Sprintf("%s is not a directory", dir)}
	case uid != uint32(os.Geteuid()):
		return &NotPrivateError{fmt.Sprintf("directory %s belongs to uid %d, not to you: refusing it", dir, uid)}
	case st.Mode().Perm()&0o022 != 0:
		return &NotPrivateError{fmt.Sprintf("directory %s has mode %04o: others could replace the %s (chmod 700 %s)", dir, st.Mode().Perm(), what, dir)}
	}
	return nil
}

// CheckAncestors refuses when a directory above dir belongs to a user
// other than root and the caller, or is writable by group or others
// without the sticky bit: whoever can write it can rename what is
// beneath, and swap dir (with the what in it) for another of theirs or
// an older copy. It resolves dir as the kernel does (Resolve), so that
// every directory a name is looked up in is checked: those holding the
// links on the way too, since a link is replaced as a directory is.
// Only dir's own directory check (CheckDir) looks at dir itself. A
// missing dir is fs.ErrNotExist.
func CheckAncestors(dir, what string) error {
	_, err := Resolve(dir, func(d string) error { return checkAncestor(d, what) }, nil)
	return err
}

// Resolve follows path as the kernel does, one name at a time from /
// (a relative path after the process's working directory as the kernel
// knows it, not $PWD); ".." after a symbolic link is taken in
// the link's target, not by folding the text. It calls lookup with every
// directory a name is looked up in (its error stops the walk), and
// onLink with the path of every link on the way. It returns the path
// resolved, with no link in it. A missing name is fs.ErrNotExist.
func Resolve(path string, lookup func(dir string) error, onLink func(link string)) (string, error) {
	return ResolveWith(path, Lookups{}, lookup, onLink)
}

// Lookups are how ResolveWith looks at a name: IsLink says whether it
// is a symbolic link (os.Lstat's error when it cannot be looked at), and
// Readlink reads one. A nil field is os.Lstat's or os.Readlink's; a
// caller that resolves many paths in one moment gives its own, which
// remember what they read.
type Lookups struct {
	IsLink   func(path string) (bool, error)
	Readlink func(path string) (string, error)
}

// ResolveWith is Resolve with the names looked at through l.
func ResolveWith(path string, l Lookups, lookup func(dir string) error, onLink func(link string)) (string, error) {
	if l.IsLink == nil {
		l.IsLink = func(p string) (bool, error) {
			st, err := os.Lstat(p)
			if err != nil {
				return false, err
			}
			return st.Mode()&os.ModeSymlink != 0, nil
		}
	}
	if l.Readlink == nil {
		l.Readlink = os.Readlink
	}
	cur, pending := "/", strings.Split(path, "/")
	if !filepath.IsAbs(path) {
		// From the working directory, whose own way down is walked too:
		// a directory above it can be swapped as well as any other.
		wd, err := os.Readlink("/proc/self/cwd")
		if err != nil {
			return "", err
		}
		pending = append(strings.Split(wd, "/"), pending...)
	}
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		if lookup != nil {
			if err := lookup(cur); err != nil {
				return "", err
			}
		}
		next := filepath.Join(cur, c)
		isLink, err := l.IsLink(next)
		if err != nil {
			return "", err
		}
		if !isLink {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", &os.PathError{Op: "resolve", Path: path, Err: syscall.ELOOP}
		}
		if onLink != nil {
			onLink(next)
		}
		target, err := l.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return cur, nil
}

func checkAncestor(a, what string) error {
	st, err := os.Lstat(a)
	if err != nil {
		return err
	}
	uid := st.Sys().(*syscall.Stat_t).Uid
	switch {
	case uid != 0 && uid != uint32(os.Geteuid()):
		return &NotPrivateError{fmt.Sprintf("directory %s, above the %s, belongs to uid %d: its owner could swap the %s's directory", a, what, uid, what)}
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0:
		return &NotPrivateError{fmt.Sprintf("directory %s, above the %s, has mode %04o without the sticky bit: others could rename the directories beneath it, the %s's among them (chmod go-w %s)", a, what, st.Mode().Perm(), what, a)}
	}
	return nil
}

// Replaceable refuses a path that holds something other than a regular
// file or a symbolic link: renaming a new file over it would destroy a
// device (as root, /dev/null for every program), a FIFO, a socket or a
// directory's place. A missing path is fine.
func Replaceable(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode().IsRegular() || st.Mode()&os.ModeSymlink != 0:
		return nil
	}
	return fmt.Errorf("%s is %s, which a file written in its place would destroy: nothing was written (name a regular file)", path, Kind(st.Mode()))
}

// Kind names a file type other than a regular file's in words ("a
// directory", "a FIFO"), for errors that refuse it.
func Kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "an irregular file (" + m.Type().String() + ")"
}

// OpenRegular opens path for reading only when it is a regular file:
// without waiting on a FIFO that has no writer (a read from one would
// block forever) and without reading a device.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file", path, Kind(st.Mode()))
	}
	return f, nil
}
