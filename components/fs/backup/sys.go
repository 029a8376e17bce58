package backup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// resolve is how every name is looked up: one component beneath a
// directory descriptor, no symbolic link (so no magic link either), no
// mount point crossed.
const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openAt opens name beneath dfd with openat2 and the resolve rules.
func openAt(dfd int, name string, flags uint64, mode uint64) (int, error) {
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolve}
	for range 16 {
		fd, err := unix.Openat2(dfd, name, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
	return -1, unix.EAGAIN
}

// openDir opens the directory name beneath dfd for reading.
func openDir(dfd int, name string) (int, error) {
	return openAt(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
}

// readNames is every name in the directory dfd (not "." or ".."),
// sorted bytewise. It reads through a descriptor of its own, so dfd's
// offset is neither used nor moved (descriptors are shared).
func readNames(dfd int) ([]string, error) {
	fd, err := openDir(dfd, ".")
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			c, _, more := unix.ParseDirent(b, -1, names)
			b, names = b[c:], more
			if c == 0 {
				break
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// readlinkAt is the target of the symbolic link name beneath dfd (name
// "" reads dfd itself, an O_PATH|O_NOFOLLOW descriptor of a link).
func readlinkAt(dfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dfd, name, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<20 {
			return "", unix.ENAMETOOLONG
		}
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return unix.EIO
		}
		b = b[n:]
	}
	return nil
}

func pread(fd int, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

// removeAll removes name beneath dfd and everything below it, by
// descriptor, never following a symbolic link. Only ever used on trees
// this package made (a staging, a backup being removed, a restore's
// temporary tree): a directory is made 0700 first so that a restored
// read-only directory can be emptied. A name already gone is success.
func removeAll(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	fd, err := openDir(dfd, name)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return err
	}
	unix.Fchmod(fd, 0o700)
	var first error
	for {
		names, err := readNames(fd)
		if err != nil {
			unix.Close(fd)
			return err
		}
		if len(names) == 0 {
			break
		}
		progress := false
		for _, n := range names {
			if err := removeAll(fd, n); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			progress = true
		}
		if !progress {
			break
		}
	}
	unix.Close(fd)
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		if first != nil {
			return first
		}
		return err
	}
	return nil
}

// flock locks fd, retrying on EINTR.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if err != unix.EINTR {
			return err
		}
	}
}

func isErrno(err error, e unix.Errno) bool {
	return errors.Is(err, e)
}

// q quotes a tree-relative path for an error (it may hold newlines or
// bytes that are not UTF-8).
func q(p string) string { return strconv.Quote(p) }

// pathErr is an error about one path of a tree.
func pathErr(what, rel string, err error) error {
	return fmt.Errorf("backup: %s %s: %w", what, q(rel), err)
}
