package backup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// testHookBeforeRestoreRename runs, in tests, once the restored tree is
// complete under its temporary name, before it is renamed into place.
var testHookBeforeRestoreRename func()

// testHookAfterMake runs, in tests, right after Restore made an entry by
// name (mkdirat, symlinkat, mkfifoat) and before it opens it: out and
// name are where it was made.
var testHookAfterMake func(out int, name string)

// lockTree is how mark locks the tree's root: flock, replaced in tests
// by a file system that refuses it.
var lockTree = flock

// RestorePrefix begins the temporary name a restore builds its tree
// under, in the destination directory, until it is renamed into place.
const RestorePrefix = ".pinfold-restore-"

// restoreMark marks a restore's temporary directory while it is built:
// an extended attribute of the trusted namespace, which only root
// (CAP_SYS_ADMIN) can set, so no one else can make a directory look like
// one. Its value is the restoring process's pid, for a person looking.
const restoreMark = "trusted.pinfold.restore"

// Verify reads backup id's stored copy again and checks it against the
// manifest: the same names in the same order, types, sizes, SHA-256 of
// every file, link targets, the tree hash, and the manifest's summary.
// A difference is ErrCorrupt.
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
	// The summary List and show print is the entries' too. (Not Size:
	// what an entry is charged has changed since backups were first
	// kept, and a backup keeps the charge it was made with.)
	sum := m.Info
	summarise(&sum, m.Entries)
	if sum.Type != m.Type || sum.Entries != m.Info.Entries || sum.Files != m.Files || sum.Skipped != m.Skipped || sum.Bytes != m.Bytes {
		return fmt.Errorf("%w: %s: the manifest says %s, %d entries, %d files, %d skipped, %d bytes; its entries are %s, %d, %d, %d, %d",
			ErrCorrupt, id, m.Type, m.Info.Entries, m.Files, m.Skipped, m.Bytes, sum.Type, sum.Entries, sum.Files, sum.Skipped, sum.Bytes)
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

// Owner is who a restored tree belongs to: every entry gets this user and
// group (when the process is root), whatever the manifest recorded. The
// caller gives the owner of the workspace the tree goes back into.
type Owner struct{ UID, GID int }

// Restore recreates backup id's tree in the directory dst (a descriptor;
// O_PATH is enough) under name, a single file name that must not exist:
// contents byte for byte (each file's SHA-256 checked against the
// manifest as it is copied), link targets, FIFOs, permission bits and
// sticky (mode & 01777: setuid and setgid are never restored),
// modification times, and, when the process is root, owner as every
// entry's owner. The owners the manifest records are not used: fs
// recorded them as it saw them through its idmapped mount (the
// workspace owner's files as fs's throwaway uid, everyone else's as
// 65534). Sockets and devices are not restored.
//
// The tree is built under a temporary name (RestorePrefix and random) in
// dst, every entry made exclusively (O_EXCL, mkdirat, symlinkat) and,
// once made, reached only through a descriptor checked to be what this
// restore made (type, owner, and for a directory empty). The tree's root
// stays this process's, mode 0700, until it has been renamed onto name
// with RENAME_NOREPLACE (its owner, mode and time are set then, through
// its descriptor), so nothing inside it can be reached by others while
// it is built. When name was made meanwhile, ErrExists and nothing else
// was touched. Any failure removes what was made (see discard). The
// backup stays in the store.
func (s *Store) Restore(id string, dst *os.File, name string, owner Owner) error {
	return s.RestoreContext(context.Background(), id, dst, name, owner)
}

// RestoreContext is Restore, stopped when ctx is done before the tree is
// in place: the error wraps ctx.Err(), and what was made is removed as
// after any failure. The CLI cancels it on Ctrl-C, which would otherwise
// end the process and leave a partial tree, root's and 0700, in the
// workspace under its temporary name. Once renamed into place, the tree
// is finished whatever ctx says.
func (s *Store) RestoreContext(ctx context.Context, id string, dst *os.File, name string, owner Owner) error {
	if err := checkID(id); err != nil {
		return err
	}
	if owner.UID < 0 || owner.GID < 0 {
		return fmt.Errorf("backup: restore: owner %d:%d is not a user and group", owner.UID, owner.GID)
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
	r, err := newRestorer(ctx, m, owner)
	if err != nil {
		return fmt.Errorf("backup: %s: %w", id, err)
	}
	defer r.close()
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		return fmt.Errorf("%w: %q; restore under another name, or move it away first", ErrExists, name)
	case err != unix.ENOENT:
		return fmt.Errorf("backup: restore destination %q: %w", name, err)
	}
	sweepStale(dfd)
	var b [8]byte
	rand.Read(b[:])
	tmp := RestorePrefix + hex.EncodeToString(b[:])
	if err := r.node(0, bfd, dataName, dfd, tmp); err != nil {
		r.discard(dfd, tmp)
		return fmt.Errorf("backup: restoring %s: %w", id, err)
	}
	if testHookBeforeRestoreRename != nil {
		testHookBeforeRestoreRename()
	}
	// The mark goes before the rename: a tree in place never has it.
	if err := r.unmark(); err != nil {
		r.discard(dfd, tmp)
		return fmt.Errorf("backup: restoring %s: %w", id, err)
	}
	if err := unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE); err != nil {
		r.discard(dfd, tmp)
		if err == unix.EEXIST {
			return fmt.Errorf("%w: %q appeared during the restore; nothing was changed", ErrExists, name)
		}
		return fmt.Errorf("backup: restoring %s as %q: %w", id, name, err)
	}
	// In place: now the root gets its owner, mode and time, through the
	// descriptor held since it was made.
	if err := r.finishTop(); err != nil {
		return fmt.Errorf("backup: restored %s as %q, but: %w", id, name, err)
	}
	if pfd, err := openDir(dfd, "."); err == nil {
		unix.Fsync(pfd)
		unix.Close(pfd)
	}
	return nil
}

type restorer struct {
	ctx     context.Context // checked before each entry and each block copied
	entries []Entry
	kids    map[string][]int
	owners  bool  // root: set owners
	owner   Owner // every entry's (see Restore)
	euid    int
	buf     []byte
	// top is a descriptor of the tree's root once made and checked (-1
	// before), and topSt its stat then.
	top   int
	topSt unix.Stat_t
	// marked: top has restoreMark (see mark).
	marked bool
}

// newRestorer indexes the manifest's entries by directory, checking
// that every path is made of proper names beneath a directory listed
// before it.
func newRestorer(ctx context.Context, m *manifest, owner Owner) (*restorer, error) {
	euid := os.Geteuid()
	r := &restorer{ctx: ctx, entries: m.Entries, kids: map[string][]int{}, owners: euid == 0, owner: owner, euid: euid, buf: make([]byte, 1<<20), top: -1}
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

func (r *restorer) close() {
	if r.top >= 0 {
		unix.Close(r.top)
		r.top = -1
	}
}

func corrupt(rel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, q(rel), fmt.Sprintf(format, args...))
}

// errReplaced: what a restore made was no longer there when it opened it.
var errReplaced = fmt.Errorf("it was replaced after it was made")

// openMade opens name beneath out, just made by this restore as type t,
// and checks that what it opened is that: of type t, this process's, a
// single link, and, for a directory, empty. flags are the open's
// (O_NOFOLLOW is added; a link is opened O_PATH).
func (r *restorer) openMade(out int, name string, t uint32, flags uint64) (int, error) {
	if testHookAfterMake != nil {
		testHookAfterMake(out, name)
	}
	fd, err := openAt(out, name, flags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	ok := unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == t && int(st.Uid) == r.euid
	switch {
	case !ok:
	case t == unix.S_IFDIR:
		names, err := readNames(fd)
		ok = err == nil && len(names) == 0
	default:
		ok = st.Nlink == 1
	}
	if !ok {
		unix.Close(fd)
		return -1, errReplaced
	}
	return fd, nil
}

// keepTop makes fd, entry 0 just made and checked, the tree's root.
func (r *restorer) keepTop(fd int) error {
	if err := unix.Fstat(fd, &r.topSt); err != nil {
		unix.Close(fd)
		return err
	}
	r.top = fd
	return nil
}

// node restores entry i, stored as inName beneath in, as outName beneath
// out. Every entry but the root (i 0) gets its metadata here, children
// before their directories; the root's waits for finishTop.
func (r *restorer) node(i int, in int, inName string, out int, outName string) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	e := r.entries[i]
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
		dfd, err := r.openMade(out, outName, unix.S_IFDIR, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return pathErr("opening the new", e.Path, err)
		}
		if i == 0 {
			if err := r.keepTop(dfd); err != nil {
				return pathErr("opening the new", e.Path, err)
			}
			if err := r.mark(); err != nil {
				return pathErr("locking the new", e.Path, err)
			}
		} else {
			defer unix.Close(dfd)
		}
		for _, k := range r.kids[e.Path] {
			if r.entries[k].Skipped {
				continue
			}
			_, n := parent(r.entries[k].Path)
			if err := r.node(k, sfd, n, dfd, n); err != nil {
				return err
			}
		}
		if i != 0 {
			if err := r.meta(dfd, e); err != nil {
				return err
			}
		}
		if err := unix.Fsync(dfd); err != nil {
			return pathErr("writing", e.Path, err)
		}
		if i != 0 {
			return r.times(dfd, e)
		}
		return nil
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
		if i == 0 {
			if err := r.keepTop(dfd); err != nil {
				return pathErr("opening the new", e.Path, err)
			}
		} else {
			defer func() {
				if dfd >= 0 {
					unix.Close(dfd)
				}
			}()
		}
		h := sha256.New()
		var off int64
		for {
			if err := r.ctx.Err(); err != nil {
				return err
			}
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
		if err := unix.Fsync(dfd); err != nil {
			return pathErr("writing", e.Path, err)
		}
		if i == 0 {
			return nil
		}
		if err := r.meta(dfd, e); err != nil {
			return err
		}
		if err := r.times(dfd, e); err != nil {
			return err
		}
		err = unix.Close(dfd)
		dfd = -1
		if err != nil {
			return pathErr("writing", e.Path, err)
		}
		return nil
	case TypeSymlink:
		t, err := readlinkAt(in, inName)
		if err != nil || t != e.Target {
			return corrupt(e.Path, "the stored link's target differs from the manifest's")
		}
		if err := unix.Symlinkat(e.Target, out, outName); err != nil {
			return pathErr("making", e.Path, err)
		}
		// The link itself, O_PATH: its owner and time are set through
		// this descriptor (AT_EMPTY_PATH), never by name.
		fd, err := r.openMade(out, outName, unix.S_IFLNK, unix.O_PATH)
		if err == nil {
			if t, terr := readlinkAt(fd, ""); terr != nil || t != e.Target {
				unix.Close(fd)
				fd, err = -1, errReplaced
			}
		}
		if err != nil {
			return pathErr("opening the new", e.Path, err)
		}
		if i == 0 {
			return r.keepTop(fd)
		}
		defer unix.Close(fd)
		if err := r.meta(fd, e); err != nil {
			return err
		}
		return r.times(fd, e)
	case TypeFIFO:
		var st unix.Stat_t
		if err := unix.Fstatat(in, inName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return corrupt(e.Path, "the stored FIFO is missing or not a FIFO")
		}
		if err := unix.Mkfifoat(out, outName, 0o600); err != nil {
			return pathErr("making", e.Path, err)
		}
		// Opened (read-only, non-blocking: that does not wait for a
		// writer) so that its mode, owner and time are set through a
		// descriptor.
		fd, err := r.openMade(out, outName, unix.S_IFIFO, unix.O_RDONLY|unix.O_NONBLOCK)
		if err != nil {
			return pathErr("opening the new", e.Path, err)
		}
		defer unix.Close(fd)
		if err := r.meta(fd, e); err != nil {
			return err
		}
		return r.times(fd, e)
	}
	return corrupt(e.Path, "the manifest's type %q cannot be restored", e.Type)
}

// mark locks the tree's root directory (flock: released only when this
// process closes it, after the rename or the discard, or dies), then
// marks it (restoreMark). A restore killed before it could remove its
// tree (SIGKILL, a crash) leaves it, root's and 0700, where the
// workspace's owner cannot remove it: marked, and its lock free, it is
// the next restore's to remove (sweepStale). Without root or extended
// attributes there is no mark, and such a tree stays. So too where the
// file system refuses flock (EOPNOTSUPP, ENOLCK, EINVAL: some network
// file systems): the restore goes on, unlocked and so unmarked (a mark
// says its restore holds the lock while it lives; unlocked, the next
// restore would take the tree for a killed one's and empty it).
func (r *restorer) mark() error {
	switch err := lockTree(r.top, unix.LOCK_EX); err {
	case nil:
	case unix.EOPNOTSUPP, unix.ENOLCK, unix.EINVAL:
		return nil
	default:
		return err
	}
	r.marked = unix.Fsetxattr(r.top, restoreMark, []byte(strconv.Itoa(os.Getpid())), 0) == nil
	return nil
}

// unmark removes the mark, if the tree has one.
func (r *restorer) unmark() error {
	if !r.marked {
		return nil
	}
	if err := unix.Fremovexattr(r.top, restoreMark); err != nil {
		return fmt.Errorf("removing the mark of the temporary tree: %w", err)
	}
	r.marked = false
	return nil
}

// sweepStale removes from the directory dfd the temporary trees of
// restores that were killed: every directory named RestorePrefix...
// that is this process's user's, marked (restoreMark) and whose lock no
// restore holds. The lock is taken first, so the look is at a tree no
// restore is working on: one still building holds it, and one that
// finished renamed its tree away and unmarked it before letting go. A
// link or anything but a directory is not followed or touched. The tree
// is emptied through its descriptor (it was root's and 0700 since it
// was made, so nothing in it is anyone else's), and its name removed only
// while it still is that directory. Failures are left for the next.
func sweepStale(dfd int) {
	names, err := readNames(dfd)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, RestorePrefix) {
			sweepOne(dfd, n)
		}
	}
}

func sweepOne(dfd int, name string) {
	fd, err := openDir(dfd, name) // O_NOFOLLOW, RESOLVE_NO_SYMLINKS
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st, now unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return
	}
	if flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a restore is building it
	}
	if _, err := unix.Fgetxattr(fd, restoreMark, nil); err != nil {
		return // not a restore's, or finished
	}
	same := func() bool {
		return unix.Fstatat(dfd, name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == st.Dev && now.Ino == st.Ino
	}
	if !same() {
		return
	}
	if names, err := readNames(fd); err == nil {
		for _, n := range names {
			removeAll(fd, n)
		}
	}
	if same() {
		unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
	}
}

// finishTop sets the owner, mode and time of the tree's root, once it is
// in place, through its descriptor.
func (r *restorer) finishTop() error {
	e := r.entries[0]
	if err := r.meta(r.top, e); err != nil {
		return err
	}
	if err := r.times(r.top, e); err != nil {
		return err
	}
	if e.Type != TypeSymlink {
		if err := unix.Fsync(r.top); err != nil {
			return pathErr("writing", e.Path, err)
		}
	}
	return nil
}

// meta sets the owner (when root) then the mode (not a link's) of the
// new entry fd: Restore's owner, and the mode without setuid and setgid.
func (r *restorer) meta(fd int, e Entry) error {
	uid, gid, mode := r.owner.UID, r.owner.GID, e.Mode&01777
	if r.owners {
		if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return pathErr("setting the owner of", e.Path, err)
		}
	}
	if e.Type == TypeSymlink {
		return nil
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return pathErr("setting the mode of", e.Path, err)
	}
	return nil
}

// times sets the modification time (the access time is left as now) of
// the entry fd itself (a link's own, through its O_PATH descriptor).
func (r *restorer) times(fd int, e Entry) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Sec: e.MTime.Unix(), Nsec: int64(e.MTime.Nanosecond())}}
	if err := unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return pathErr("setting the time of", e.Path, err)
	}
	return nil
}

// discard removes, after a failure, what this restore made under tmp in
// dst, and nothing else. The root's contents are removed through the
// descriptor held since the root was made: the root is this process's
// and 0700 until the rename, so no one else could have put anything in
// it. The name tmp is removed only if it still is that root (same device
// and inode); between that check and the unlink, only an empty directory
// (rmdir) or a name that whoever can write dst could have removed itself
// can be hit. A root that was made but could not be opened and checked
// is left in place.
func (r *restorer) discard(dfd int, tmp string) {
	if r.top < 0 {
		return
	}
	flags := 0
	if r.topSt.Mode&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
		for range 3 {
			names, err := readNames(r.top)
			if err != nil || len(names) == 0 {
				break
			}
			for _, n := range names {
				removeAll(r.top, n)
			}
		}
	}
	var st unix.Stat_t
	if unix.Fstatat(dfd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Dev == r.topSt.Dev && st.Ino == r.topSt.Ino {
		unix.Unlinkat(dfd, tmp, flags)
	}
}
