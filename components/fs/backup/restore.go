package backup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// testHookBeforeRestoreRename runs, in tests, once the restored tree is
// complete under its temporary name, before it is renamed into place.
var testHookBeforeRestoreRename func()

// RestorePrefix begins the temporary name a restore builds its tree
// under, in the destination directory, until it is renamed into place.
const RestorePrefix = ".pinfold-restore-"

// Verify reads backup id's stored copy again and checks it against the
// manifest: the same names in the same order, types, sizes, SHA-256 of
// every file, link targets, and the tree hash. A difference is ErrCorrupt.
func (s *Store) Verify(id string) error {
	bfd, err := s.openBackup(id, false)
	if err != nil {
		return err
	}
	defer unix.Close(bfd)
	m, err := readManifest(bfd, id)
	if err != nil {
		return err
	}
	if h := treeHash(m.Entries); h != m.TreeSHA256 {
		return fmt.Errorf("%w: %s: the manifest's entries hash to %s, it records %s", ErrCorrupt, id, h, m.TreeSHA256)
	}
	w := newWalker(walkHash)
	if err := w.child(bfd, dataName, ".", -1); err != nil {
		return fmt.Errorf("%w: %s: reading the stored copy: %v", ErrCorrupt, id, err)
	}
	if err := compareStored(m.Entries, w.entries); err != nil {
		return fmt.Errorf("backup: %s: %w", id, err)
	}
	return nil
}

// checkName refuses a restore name that is not one file name.
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q has a slash or a NUL", ErrBadName, name)
	case len(name) > 255:
		return fmt.Errorf("%w: %q is longer than 255 bytes", ErrBadName, name)
	}
	return nil
}

// Restore recreates backup id's tree in the directory dst (a descriptor;
// O_PATH is enough) under name, a single file name that must not exist:
// contents byte for byte (each file's SHA-256 checked against the
// manifest as it is copied), link targets, FIFOs, permission bits with
// setuid, setgid and sticky, modification times, and, when the process
// is root, owners. Sockets and devices are not restored.
//
// The tree is built under a temporary name (RestorePrefix and random) in
// dst, every entry made exclusively (O_EXCL, mkdirat, symlinkat) and
// written through descriptors, then renamed onto name with
// RENAME_NOREPLACE: when name was made meanwhile, ErrExists, the
// temporary tree is removed and nothing else was touched. Any failure
// removes the temporary tree. The backup stays in the store.
func (s *Store) Restore(id string, dst *os.File, name string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	if dst == nil {
		return fmt.Errorf("backup: no destination descriptor")
	}
	dfd := int(dst.Fd())
	defer runtime.KeepAlive(dst)
	bfd, err := s.openBackup(id, false)
	if err != nil {
		return err
	}
	defer unix.Close(bfd)
	m, err := readManifest(bfd, id)
	if err != nil {
		return err
	}
	r, err := newRestorer(m)
	if err != nil {
		return fmt.Errorf("backup: %s: %w", id, err)
	}
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		return fmt.Errorf("%w: %q; restore under another name, or move it away first", ErrExists, name)
	case err != unix.ENOENT:
		return fmt.Errorf("backup: restore destination %q: %w", name, err)
	}
	var b [8]byte
	rand.Read(b[:])
	tmp := RestorePrefix + hex.EncodeToString(b[:])
	if err := r.node(0, bfd, dataName, dfd, tmp); err != nil {
		if r.rootMade {
			removeAll(dfd, tmp)
		}
		return fmt.Errorf("backup: restoring %s: %w", id, err)
	}
	if testHookBeforeRestoreRename != nil {
		testHookBeforeRestoreRename()
	}
	if err := unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE); err != nil {
		removeAll(dfd, tmp)
		if err == unix.EEXIST {
			return fmt.Errorf("%w: %q appeared during the restore; nothing was changed", ErrExists, name)
		}
		return fmt.Errorf("backup: restoring %s as %q: %w", id, name, err)
	}
	if pfd, err := openDir(dfd, "."); err == nil {
		unix.Fsync(pfd)
		unix.Close(pfd)
	}
	return nil
}

type restorer struct {
	entries  []Entry
	kids     map[string][]int
	owners   bool // root: restore owners
	buf      []byte
	rootMade bool
}

// newRestorer indexes the manifest's entries by directory, checking
// that every path is made of proper names beneath a directory listed
// before it.
func newRestorer(m *manifest) (*restorer, error) {
	r := &restorer{entries: m.Entries, kids: map[string][]int{}, owners: os.Geteuid() == 0, buf: make([]byte, 1<<20)}
	dirs := map[string]bool{}
	for i, e := range m.Entries {
		if i == 0 {
			if e.Path != "." || e.Skipped || (e.Type != TypeDir && e.Type != TypeFile && e.Type != TypeSymlink) {
				return nil, fmt.Errorf("%w: the manifest's root entry", ErrCorrupt)
			}
		} else {
			dir, name := parent(e.Path)
			if name == "" || name == "." || name == ".." || strings.IndexByte(name, 0) >= 0 || !dirs[dir] {
				return nil, fmt.Errorf("%w: the manifest's entry %s", ErrCorrupt, q(e.Path))
			}
			r.kids[dir] = append(r.kids[dir], i)
		}
		if e.Type == TypeDir {
			dirs[e.Path] = true
		}
	}
	return r, nil
}

func corrupt(rel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, q(rel), fmt.Sprintf(format, args...))
}

// node restores entry i, stored as inName beneath in, as outName beneath out.
func (r *restorer) node(i int, in int, inName string, out int, outName string) error {
	e := r.entries[i]
	made := func() {
		if i == 0 {
			r.rootMade = true
		}
	}
	switch e.Type {
	case TypeDir:
		sfd, err := openDir(in, inName)
		if err != nil {
			return corrupt(e.Path, "the stored directory: %v", err)
		}
		defer unix.Close(sfd)
		if err := unix.Mkdirat(out, outName, 0o700); err != nil {
			return pathErr("making", e.Path, err)
		}
		made()
		dfd, err := openDir(out, outName)
		if err != nil {
			return pathErr("opening the new", e.Path, err)
		}
		defer unix.Close(dfd)
		for _, k := range r.kids[e.Path] {
			if r.entries[k].Skipped {
				continue
			}
			_, n := parent(r.entries[k].Path)
			if err := r.node(k, sfd, n, dfd, n); err != nil {
				return err
			}
		}
		if err := r.meta(dfd, e); err != nil {
			return err
		}
		if err := unix.Fsync(dfd); err != nil {
			return pathErr("writing", e.Path, err)
		}
		return r.times(out, outName, e)
	case TypeFile:
		sfd, err := openAt(in, inName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			return corrupt(e.Path, "the stored file: %v", err)
		}
		defer unix.Close(sfd)
		var st unix.Stat_t
		if err := unix.Fstat(sfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return corrupt(e.Path, "the stored copy is not a regular file")
		}
		dfd, err := openAt(out, outName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return pathErr("making", e.Path, err)
		}
		made()
		defer func() {
			if dfd >= 0 {
				unix.Close(dfd)
			}
		}()
		h := sha256.New()
		var off int64
		for {
			n, err := pread(sfd, r.buf, off)
			if err != nil {
				return corrupt(e.Path, "reading the stored copy: %v", err)
			}
			if n == 0 {
				break
			}
			h.Write(r.buf[:n])
			if err := writeAll(dfd, r.buf[:n]); err != nil {
				return pathErr("writing", e.Path, err)
			}
			off += int64(n)
			if off > e.Size {
				break
			}
		}
		if off != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
			return corrupt(e.Path, "the stored copy's content differs from the manifest's hash")
		}
		if err := r.meta(dfd, e); err != nil {
			return err
		}
		if err := unix.Fsync(dfd); err != nil {
			return pathErr("writing", e.Path, err)
		}
		err = unix.Close(dfd)
		dfd = -1
		if err != nil {
			return pathErr("writing", e.Path, err)
		}
		return r.times(out, outName, e)
	case TypeSymlink:
		t, err := readlinkAt(in, inName)
		if err != nil || t != e.Target {
			return corrupt(e.Path, "the stored link's target differs from the manifest's")
		}
		if err := unix.Symlinkat(e.Target, out, outName); err != nil {
			return pathErr("making", e.Path, err)
		}
		made()
		if r.owners {
			if err := unix.Fchownat(out, outName, int(e.UID), int(e.GID), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return pathErr("setting the owner of", e.Path, err)
			}
		}
		return r.times(out, outName, e)
	case TypeFIFO:
		var st unix.Stat_t
		if err := unix.Fstatat(in, inName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return corrupt(e.Path, "the stored FIFO is missing or not a FIFO")
		}
		if err := unix.Mkfifoat(out, outName, 0o600); err != nil {
			return pathErr("making", e.Path, err)
		}
		made()
		// Opened (read-only, non-blocking: that does not wait for a
		// writer) so that its mode and owner are set through a descriptor.
		fd, err := openAt(out, outName, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
		if err != nil {
			return pathErr("opening the new", e.Path, err)
		}
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			unix.Close(fd)
			return pathErr("opening the new", e.Path, fmt.Errorf("it was replaced"))
		}
		err = r.meta(fd, e)
		unix.Close(fd)
		if err != nil {
			return err
		}
		return r.times(out, outName, e)
	}
	return corrupt(e.Path, "the manifest's type %q cannot be restored", e.Type)
}

// meta sets the owner (when root) then the mode of the new entry fd:
// in that order, since chown clears setuid and setgid.
func (r *restorer) meta(fd int, e Entry) error {
	if r.owners {
		if err := unix.Fchown(fd, int(e.UID), int(e.GID)); err != nil {
			return pathErr("setting the owner of", e.Path, err)
		}
	}
	if err := unix.Fchmod(fd, e.Mode&07777); err != nil {
		return pathErr("setting the mode of", e.Path, err)
	}
	return nil
}

// times sets the modification time (the access time is left as now) of
// name beneath dfd, never following a link.
func (r *restorer) times(dfd int, name string, e Entry) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Sec: e.MTime.Unix(), Nsec: int64(e.MTime.Nanosecond())}}
	if err := unix.UtimesNanoAt(dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return pathErr("setting the time of", e.Path, err)
	}
	return nil
}
