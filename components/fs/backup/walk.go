package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// walkMode is what a walk does with the tree.
type walkMode int

const (
	walkMeasure walkMode = iota // stat only: entries and sizes, for the quota
	walkHash                    // read and hash every regular file
	walkCopy                    // hash, and copy everything into a staging directory
)

// walker walks a tree by descriptor: every name is looked up beneath its
// directory's descriptor with openat2 (RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), opened
// with O_NOFOLLOW, and what was opened is checked to be what was looked
// at (same device, inode and type). A symbolic link is read with
// readlinkat, never followed.
//
// Every walk tallies what it saw: entries, file bytes, the charge
// against the quota, the manifest's size and (given bsize) an estimate of
// the copy's use of the store's file system. The measure keeps only
// these, not the entries. A walk stops (errTooBig) once the manifest
// would pass MaxManifest, so no walk holds more names than a manifest
// may (the paths of a deep chain of long names grow with its depth
// squared).
type walker struct {
	mode     walkMode
	entries  []Entry // not kept by walkMeasure
	count    int     // entries seen
	bytes    int64   // regular files' content
	size     int64   // the charge against the quota (entryCharge)
	manifest int64   // the manifest's size (maxHeader for everything but the entries)
	bsize    int64   // the store's block size; 0: no disk estimate
	disk     int64   // the copy's estimated use of the store's file system
	limit    int64   // walkCopy: the content the measure found; more is a change
	buf      []byte
	avoid    *unix.Stat_t // the store's own directory: never walked into
	hook     func(rel string)
	leave    func(rel string) bool // names not walked at all (StageLeaving)
}

func newWalker(mode walkMode) *walker {
	w := &walker{mode: mode, limit: -1, manifest: maxHeader}
	if mode != walkMeasure {
		w.buf = make([]byte, 1<<20)
	}
	return w
}

// errTooBig: the tree's manifest would be larger than MaxManifest.
var errTooBig = fmt.Errorf("backup: the manifest would be larger than %d bytes (too many entries, or too long names)", MaxManifest)

// changed is an error for a source that changed under the walk.
func changed(rel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrChanged, q(rel), fmt.Sprintf(format, args...))
}

// lookupErr classifies an error of looking a name up during a walk.
func lookupErr(rel string, err error) error {
	switch {
	case isErrno(err, unix.ENOENT), isErrno(err, unix.ENOTDIR):
		return fmt.Errorf("%w: %s: it disappeared or was replaced: %w", ErrChanged, q(rel), err)
	case isErrno(err, unix.ELOOP):
		return fmt.Errorf("%w: %s: a symbolic link took its place (links are recorded, never followed): %w", ErrChanged, q(rel), err)
	case isErrno(err, unix.EXDEV):
		return fmt.Errorf("backup: %s is a mount point: trees spanning file systems are not backed up: %w", q(rel), err)
	case isErrno(err, unix.ENOSYS):
		return fmt.Errorf("backup: openat2 is not available (a kernel before 5.6, or a seccomp filter denies it): %w", err)
	}
	return pathErr("reading", rel, err)
}

func entryOf(st *unix.Stat_t, rel string, t Type) Entry {
	return Entry{
		Path:  rel,
		Type:  t,
		Mode:  st.Mode & 07777,
		MTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(),
		UID:   st.Uid,
		GID:   st.Gid,
	}
}

// same checks that the descriptor fd is what st described.
func same(fd int, st *unix.Stat_t, rel string) error {
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return pathErr("reading", rel, err)
	}
	if now.Dev != st.Dev || now.Ino != st.Ino || now.Mode&unix.S_IFMT != st.Mode&unix.S_IFMT {
		return changed(rel, "it was replaced between its lookup and its opening")
	}
	return nil
}

// child walks the entry name beneath the directory dfd. out is the
// staging directory to copy it into (walkCopy), under the same name.
func (w *walker) child(dfd int, name, rel string, out int) error {
	if w.leave != nil && w.leave(rel) {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return lookupErr(rel, err)
	}
	if w.hook != nil {
		w.hook(rel)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := openDir(dfd, name)
		if err != nil {
			return lookupErr(rel, err)
		}
		defer unix.Close(fd)
		if err := same(fd, &st, rel); err != nil {
			return err
		}
		return w.dir(fd, &st, rel, out, name)
	case unix.S_IFREG:
		if w.mode == walkMeasure {
			return w.file(-1, &st, rel, out, name)
		}
		fd, err := openAt(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			return lookupErr(rel, err)
		}
		defer unix.Close(fd)
		if err := same(fd, &st, rel); err != nil {
			return err
		}
		return w.file(fd, &st, rel, out, name)
	case unix.S_IFLNK:
		target, err := readlinkAt(dfd, name)
		if isErrno(err, unix.EINVAL) {
			return changed(rel, "it is no longer a symbolic link")
		}
		if err != nil {
			return lookupErr(rel, err)
		}
		return w.symlink(&st, target, rel, out, name)
	default:
		return w.special(&st, rel, out, name)
	}
}

// add records e: tallies it, and keeps it unless measuring. Once the
// manifest would pass MaxManifest it is errTooBig.
func (w *walker) add(e Entry) error {
	w.count++
	w.size += entryCharge(&e)
	w.manifest += lineLen(&e)
	if w.bsize > 0 {
		w.disk += diskCost(&e, w.bsize)
	}
	if w.manifest > MaxManifest {
		return fmt.Errorf("%w: %s is entry %d", errTooBig, q(e.Path), w.count)
	}
	if w.mode != walkMeasure {
		w.entries = append(w.entries, e)
	}
	return nil
}

// diskCost is roughly what e's copy takes on a file system with blocks
// of bsize: whole blocks for a file's content or a link's target, a
// block per directory, and its manifest line.
func diskCost(e *Entry, bsize int64) int64 {
	blocks := func(n int64) int64 { return (n + bsize - 1) / bsize * bsize }
	n := lineLen(e)
	switch e.Type {
	case TypeFile:
		n += blocks(e.Size)
	case TypeDir:
		n += bsize
	case TypeSymlink:
		n += blocks(max(1, int64(len(e.Target))))
	}
	return n
}

// dir records the directory fd (described by st) and walks its names in
// bytewise order.
func (w *walker) dir(fd int, st *unix.Stat_t, rel string, out int, outName string) error {
	if w.avoid != nil && st.Dev == w.avoid.Dev && st.Ino == w.avoid.Ino {
		return fmt.Errorf("backup: %s is the backup store itself: a tree holding the store is not backed up", q(rel))
	}
	if err := w.add(entryOf(st, rel, TypeDir)); err != nil {
		return err
	}
	sub := -1
	if w.mode == walkCopy {
		if err := unix.Mkdirat(out, outName, 0o700); err != nil {
			return storeErr(rel, err)
		}
		var err error
		if sub, err = openDir(out, outName); err != nil {
			return storeErr(rel, err)
		}
		defer unix.Close(sub)
	}
	names, err := readNames(fd)
	if err != nil {
		return pathErr("listing", rel, err)
	}
	for _, n := range names {
		if err := w.child(fd, n, child(rel, n), sub); err != nil {
			return err
		}
	}
	if sub >= 0 {
		if err := unix.Fsync(sub); err != nil {
			return storeErr(rel, err)
		}
	}
	return nil
}

// file records the regular file fd (described by st): its content is
// read once, hashed and (walkCopy) written to the staging.
func (w *walker) file(fd int, st *unix.Stat_t, rel string, out int, outName string) error {
	e := entryOf(st, rel, TypeFile)
	if w.mode == walkMeasure {
		e.Size = st.Size
		e.SHA256 = unhashed // its length, for the manifest's size
		w.bytes += st.Size
		return w.add(e)
	}
	dst := -1
	if w.mode == walkCopy {
		var err error
		dst, err = openAt(out, outName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return storeErr(rel, err)
		}
		defer func() {
			if dst >= 0 {
				unix.Close(dst)
			}
		}()
	}
	h := sha256.New()
	var off int64
	for {
		n, err := pread(fd, w.buf, off)
		if err != nil {
			return pathErr("reading", rel, err)
		}
		if n == 0 {
			break
		}
		h.Write(w.buf[:n])
		if dst >= 0 {
			if err := writeAll(dst, w.buf[:n]); err != nil {
				return storeErr(rel, err)
			}
		}
		off += int64(n)
		if w.limit >= 0 && w.bytes+off > w.limit {
			return changed(rel, "the tree grew past the %d bytes measured before staging", w.limit)
		}
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return pathErr("reading", rel, err)
	}
	if off != st.Size || now.Size != st.Size || now.Mtim != st.Mtim {
		return changed(rel, "it was written to while it was read")
	}
	if dst >= 0 {
		if err := unix.Fsync(dst); err != nil {
			return storeErr(rel, err)
		}
		err := unix.Close(dst)
		dst = -1
		if err != nil {
			return storeErr(rel, err)
		}
	}
	e.Size = off
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	w.bytes += off
	return w.add(e)
}

// unhashed stands for a file's hash where the walk does not read it.
const unhashed = "0000000000000000000000000000000000000000000000000000000000000000"

func (w *walker) symlink(st *unix.Stat_t, target, rel string, out int, outName string) error {
	e := entryOf(st, rel, TypeSymlink)
	e.Target = target
	if w.mode == walkCopy {
		if err := unix.Symlinkat(target, out, outName); err != nil {
			return storeErr(rel, err)
		}
	}
	return w.add(e)
}

// special records a FIFO (kept: made again in the staging, no content)
// or a socket or device (recorded, Skipped).
func (w *walker) special(st *unix.Stat_t, rel string, out int, outName string) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		if w.mode == walkCopy {
			if err := unix.Mkfifoat(out, outName, 0o600); err != nil {
				return storeErr(rel, err)
			}
		}
		return w.add(entryOf(st, rel, TypeFIFO))
	case unix.S_IFSOCK:
		e := entryOf(st, rel, TypeSocket)
		e.Skipped = true
		return w.add(e)
	case unix.S_IFCHR, unix.S_IFBLK:
		e := entryOf(st, rel, TypeDevice)
		e.Skipped = true
		return w.add(e)
	}
	return fmt.Errorf("backup: %s: unknown file type %#o", q(rel), st.Mode&unix.S_IFMT)
}

// storeErr is a failure to write the staging (ENOSPC, EIO, ...).
func storeErr(rel string, err error) error {
	if isErrno(err, unix.ENOSPC) || isErrno(err, unix.EDQUOT) {
		return fmt.Errorf("backup: the store's file system is full while copying %s: %w", q(rel), err)
	}
	return pathErr("writing the copy of", rel, err)
}

// source walks the tree beneath the caller's descriptor src: a
// directory (O_PATH is enough), a regular file (readable, or O_PATH) or
// a symbolic link (O_PATH|O_NOFOLLOW). Its root's entry is ".".
func (w *walker) source(src int, out int, outName string) error {
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return fmt.Errorf("backup: the source descriptor: %w", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := openDir(src, ".")
		if err != nil {
			return lookupErr(".", err)
		}
		defer unix.Close(fd)
		if err := same(fd, &st, "."); err != nil {
			return err
		}
		return w.dir(fd, &st, ".", out, outName)
	case unix.S_IFREG:
		if w.mode == walkMeasure {
			return w.file(-1, &st, ".", out, outName)
		}
		fd, err := reopenFile(src)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := same(fd, &st, "."); err != nil {
			return err
		}
		return w.file(fd, &st, ".", out, outName)
	case unix.S_IFLNK:
		target, err := readlinkAt(src, "")
		if err != nil {
			return pathErr("reading", ".", err)
		}
		return w.symlink(&st, target, ".", out, outName)
	}
	return fmt.Errorf("backup: the source is a %s: only a directory, a regular file or a symbolic link is backed up", typeName(st.Mode))
}

func typeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	}
	return "file of type " + strconv.FormatUint(uint64(mode&unix.S_IFMT), 8)
}

// reopenFile is a readable descriptor of the regular file src: a
// duplicate when src is readable (reads use pread, so its offset does
// not matter), otherwise (O_PATH) src reopened through /proc/self/fd.
func reopenFile(src int) (int, error) {
	fl, err := unix.FcntlInt(uintptr(src), unix.F_GETFL, 0)
	if err != nil {
		return -1, fmt.Errorf("backup: the source descriptor: %w", err)
	}
	if fl&unix.O_PATH == 0 && (fl&unix.O_ACCMODE == unix.O_RDONLY || fl&unix.O_ACCMODE == unix.O_RDWR) {
		fd, err := unix.FcntlInt(uintptr(src), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("backup: the source descriptor: %w", err)
		}
		return fd, nil
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(src), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("backup: reopening the source file for reading (pass a readable descriptor where /proc is not mounted): %w", err)
	}
	return fd, nil
}

// compareSource checks that the source's second walk b saw what the
// first a did: every entry with the same path, type, mode, owner, size,
// content, link target and (but for directories, whose time changes
// when a name is made and removed again) modification time.
func compareSource(a, b []Entry) error {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x.Path != y.Path {
			p := min(x.Path, y.Path)
			return changed(p, "a name appeared or disappeared")
		}
		switch {
		case x.Type != y.Type:
			return changed(x.Path, "its type changed from %s to %s", x.Type, y.Type)
		case x.Mode != y.Mode:
			return changed(x.Path, "its mode changed from %#o to %#o", x.Mode, y.Mode)
		case x.UID != y.UID || x.GID != y.GID:
			return changed(x.Path, "its owner changed")
		case x.Size != y.Size || x.SHA256 != y.SHA256:
			return changed(x.Path, "its content changed")
		case x.Target != y.Target:
			return changed(x.Path, "its link target changed")
		case x.Type != TypeDir && !x.MTime.Equal(y.MTime):
			return changed(x.Path, "its modification time changed")
		}
	}
	if len(a) != len(b) {
		p := ""
		if len(a) > len(b) {
			p = a[len(b)].Path
		} else {
			p = b[len(a)].Path
		}
		return changed(p, "a name appeared or disappeared")
	}
	return nil
}

// compareStored checks the stored copy's walk got (entries it saw)
// against want (the kept entries of the manifest): same paths, types,
// sizes, contents and link targets, in the same order. Its error wraps
// ErrCorrupt and names the first difference.
func compareStored(want, got []Entry) error {
	kept := want[:0:0]
	for _, e := range want {
		if !e.Skipped {
			kept = append(kept, e)
		}
	}
	bad := func(p, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, q(p), fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(kept) && i < len(got); i++ {
		x, y := kept[i], got[i]
		switch {
		case x.Path != y.Path:
			return bad(min(x.Path, y.Path), "missing from the copy or not in the manifest")
		case x.Type != y.Type:
			return bad(x.Path, "the copy is a %s, the manifest says %s", y.Type, x.Type)
		case x.Size != y.Size || x.SHA256 != y.SHA256:
			return bad(x.Path, "the copy's content differs from the manifest's hash")
		case x.Target != y.Target:
			return bad(x.Path, "the copy's link target differs from the manifest's")
		}
	}
	switch {
	case len(kept) > len(got):
		return bad(kept[len(got)].Path, "missing from the copy")
	case len(got) > len(kept):
		return bad(got[len(kept)].Path, "in the copy but not in the manifest")
	}
	if a, b := treeHash(kept), treeHash(got); a != b {
		return fmt.Errorf("%w: tree hash %s, want %s", ErrCorrupt, b, a)
	}
	return nil
}
