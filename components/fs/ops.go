package fs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FileType is what a path names. fs never follows a symbolic link: a
// link is reported as one.
type FileType string

// File types.
const (
	TypeFile    FileType = "file"
	TypeDir     FileType = "dir"
	TypeSymlink FileType = "symlink"
	TypeFIFO    FileType = "fifo"
	TypeSocket  FileType = "socket"
	TypeDevice  FileType = "device"
	TypeOther   FileType = "other"
)

func fileType(mode uint32) FileType {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return TypeFile
	case unix.S_IFDIR:
		return TypeDir
	case unix.S_IFLNK:
		return TypeSymlink
	case unix.S_IFIFO:
		return TypeFIFO
	case unix.S_IFSOCK:
		return TypeSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return TypeDevice
	}
	return TypeOther
}

// Info is what stat says of a path.
type Info struct {
	Type  FileType  `json:"type"`
	Size  int64     `json:"size"`
	Mode  uint32    `json:"mode"` // permission bits, with setuid, setgid and sticky (07777)
	MTime time.Time `json:"mtime"`
}

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Type:  fileType(st.Mode),
		Size:  st.Size,
		Mode:  st.Mode & 07777,
		MTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(),
	}
}

// Entry is one name in a listing.
type Entry struct {
	Name string   `json:"name"`
	Type FileType `json:"type"`
	Size int64    `json:"size"`
}

func (r *Root) check(op, p string) error {
	if err := checkPath(p); err != nil {
		return badRequest(op, p, "%v", err)
	}
	return r.checkHidden(op, p, false)
}

// Stat describes p, without following a symbolic link at its end.
func (r *Root) Stat(p string) (Info, error) {
	const op = "stat"
	if err := r.check(op, p); err != nil {
		return Info{}, err
	}
	// O_PATH with O_NOFOLLOW opens a final symbolic link itself, even
	// under RESOLVE_NO_SYMLINKS; nothing is opened for reading, so a
	// FIFO or a device is not touched.
	fd, err := r.open(op, p, p, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return Info{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Info{}, sysErr(op, p, err, false)
	}
	return infoOf(&st), nil
}

// Read returns at most length bytes of the regular file p from offset,
// and whether they reach its end. length 0 means MaxData.
func (r *Root) Read(p string, offset int64, length int) (data []byte, eof bool, err error) {
	const op = "read"
	if err := r.check(op, p); err != nil {
		return nil, false, err
	}
	if offset < 0 {
		return nil, false, badRequest(op, p, "the offset is negative")
	}
	if length < 0 || length > MaxData {
		return nil, false, badRequest(op, p, "the length is not between 0 and %d", MaxData)
	}
	if length == 0 {
		length = MaxData
	}
	fd, st, err := r.openRegular(op, p)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	// One byte more than asked tells whether the end was reached. The
	// buffer starts at the file's size as fstat saw it at the open (plus
	// that byte), not at the limit, nor with room to spare: in a
	// component every byte allocated is collector work, and a 1 KiB read
	// that allocated 5 KiB spent more there than in its system calls
	// (bench/roundtrip). A file that holds more than its size said (it
	// grew meanwhile, or its file system says 0) grows the buffer by
	// doubling, from at least minReadBuf, up to the limit.
	want := length + 1
	if offset > math.MaxInt64-int64(want) {
		// Past any file's end; pread would say EINVAL (offset + count
		// overflows), which reads as another error.
		return []byte{}, true, nil
	}
	buf := make([]byte, min(int64(want), max(st.Size-offset, 0)+1))
	n := 0
	for {
		if testHookBeforeRead != nil {
			testHookBeforeRead(n)
		}
		m, err := unix.Pread(fd, buf[n:], offset+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, sysErr(op, p, err, false)
		}
		n += m
		if m == 0 || n < len(buf) && int64(n) >= st.Size-offset {
			break // the end; a short read before the size seen at open (a signal) reads on
		}
		if n == len(buf) {
			if n == want {
				break
			}
			grown := make([]byte, min(want, max(2*n, minReadBuf)))
			copy(grown, buf[:n])
			buf = grown
		}
	}
	data, eof = ReadEnd(buf, n, length)
	return data, eof, nil
}

// openRegular opens the regular file p for reading and returns its
// descriptor and what fstat says of it.
//
// Opening a device for reading runs its driver, so on a root that may
// hold devices it looks first with O_PATH. On a nodev root the kernel
// refuses that open before a driver sees it, and the look is made only to
// explain a refused open. Either way the open is O_NONBLOCK (a FIFO
// swapped in cannot block it) and O_NOFOLLOW, and the type is checked
// again on what was opened, since the name may have changed since.
func (r *Root) openRegular(op, p string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	look := func() error {
		fd, err := r.open(op, p, p, unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return sysErr(op, p, err, false)
		}
		return regular(op, p, &st)
	}
	if !r.nodev {
		if err := look(); err != nil {
			return -1, st, err
		}
	}
	fd, err := r.open(op, p, p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if r.nodev {
			if lerr := look(); lerr != nil {
				return -1, st, lerr
			}
		}
		return -1, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, sysErr(op, p, err, false)
	}
	if err := regular(op, p, &st); err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// ReadEnd is what a read of up to length bytes returns when it asked for
// len(buf) (more than length, to see the end) and got n: the data, and
// whether the end of the file was reached.
func ReadEnd(buf []byte, n, length int) (data []byte, eof bool) {
	switch {
	case n < len(buf): // the end came first
		return buf[:n:n], true
	case len(buf) > length: // more than asked: not the end
		return buf[:length:length], false
	default: // the file grew past its size at open: not known to be the end
		return buf[:n:n], false
	}
}

func regular(op, p string, st *unix.Stat_t) error {
	switch t := fileType(st.Mode); t {
	case TypeFile:
		return nil
	case TypeSymlink:
		return &Error{Op: op, Path: p, Kind: KindEscape, Detail: "the path is a symbolic link; fs follows none"}
	default:
		return badRequest(op, p, "not a regular file (a %s)", t)
	}
}

// Write replaces the regular file p with data, atomically: a reader
// sees the old content or the new, never a part. The new file keeps the
// old one's permission bits less setuid, setgid and sticky, or is 0644;
// it is never made executable. createOnly refuses a name that exists.
func (r *Root) Write(p string, data []byte, createOnly bool) error {
	const op = "write"
	if len(data) > MaxData {
		if err := r.check(op, p); err != nil {
			return err
		}
		return badRequest(op, p, "%d bytes is more than one write stores (%d)", len(data), MaxData)
	}
	// Worked out only when the person is asked: what a config sets is
	// its data parsed, a third of a second for a MiB of short variables.
	action := func() string {
		return fmt.Sprintf("write %s: %d bytes%s%s", quoteForQuestion(p), len(data), beginning(data), sayConfig(p, data))
	}
	return r.gated(op, p, func(r *Root) error {
		return r.inParent(op, p, guardWrite, action, func(par parent) error { return r.write(op, p, par, data, createOnly) })
	})
}

// write is Write in p's parent directory.
func (r *Root) write(op, p string, par parent, data []byte, createOnly bool) error {
	mode := uint32(0o644)
	var st unix.Stat_t
	switch err := unix.Fstatat(par.fd, par.name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && createOnly:
		return &Error{Op: op, Path: p, Kind: KindBadRequest, Detail: "already exists (create only)", Err: unix.EEXIST}
	case err == nil:
		if err := regular(op, p, &st); err != nil {
			return err
		}
		mode = st.Mode & 0o777
	case err != unix.ENOENT:
		return sysErr(op, p, err, false)
	}
	tmp, fd, err := createTemp(op, p, par.fd)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		if !done {
			unix.Unlinkat(par.fd, tmp, 0)
		}
	}()
	// Exactly mode, whatever the umask; never a setuid, setgid or sticky bit.
	if err := unix.Fchmod(fd, mode); err != nil {
		return sysErr(op, p, err, false)
	}
	for off := 0; off < len(data); {
		n, err := unix.Write(fd, data[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return sysErr(op, p, err, false)
		}
		off += n
	}
	if err := unix.Fsync(fd); err != nil {
		return sysErr(op, p, err, false)
	}
	err = unix.Close(fd)
	fd = -1
	if err != nil {
		return sysErr(op, p, err, false)
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename()
	}
	if createOnly {
		err = unix.Renameat2(par.fd, tmp, par.fd, par.name, unix.RENAME_NOREPLACE)
	} else {
		err = unix.Renameat(par.fd, tmp, par.fd, par.name)
	}
	if err != nil {
		return sysErr(op, p, err, false)
	}
	done = true
	// The name now has the new content: a failure to make the rename
	// durable is not a refusal of what already happened.
	unix.Fsync(par.fd)
	return nil
}

// minReadBuf is the least a read's buffer grows to once the file holds
// more than its size said: a file that says 0 is read in a few steps.
const minReadBuf = 4096

// testHookBeforeRead runs, in tests, before each pread of a Read, with
// the bytes read so far.
var testHookBeforeRead func(n int)

// sayConfig is configSays; a test counts its calls.
var sayConfig = configSays

// testHookBeforeRename runs, in tests, between a write's fsync and its
// rename.
var testHookBeforeRename func()

// TempPrefix begins the name of a write's temporary file, which lives in
// the target's directory until the rename.
const TempPrefix = ".pinfold-write-"

func createTemp(op, p string, dfd int) (string, int, error) {
	var b [8]byte
	for range 16 {
		rand.Read(b[:])
		name := TempPrefix + hex.EncodeToString(b[:])
		fd, err := openAt(op, p, dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if KindOf(err) == KindBadRequest && isErrno(err, unix.EEXIST) {
			continue
		}
		return name, fd, err
	}
	return "", -1, &Error{Op: op, Path: p, Kind: KindFailed, Detail: "no free temporary name"}
}

func isErrno(err error, e unix.Errno) bool {
	if fe, ok := err.(*Error); ok {
		return fe.Err == e
	}
	return err == e
}

// List returns the names in directory p, sorted, with their types and
// sizes (of the entry itself: a symbolic link is not followed). At most
// MaxList: when there are more, truncated is set and the entries are
// MaxList of them, in directory order, then sorted.
func (r *Root) List(p string) (entries []Entry, truncated bool, err error) {
	const op = "list"
	if err := r.check(op, p); err != nil {
		return nil, false, err
	}
	fd, err := r.open(op, p, p, unix.O_RDONLY|unix.O_DIRECTORY, 0) // a final link: ELOOP, see openParent
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 32<<10)
read:
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false, sysErr(op, p, err, false)
		}
		if n == 0 {
			break
		}
		for b := buf[:n]; len(b) > 0; {
			c, _, more := unix.ParseDirent(b, MaxList+1-len(names), names)
			b, names = b[c:], more
			if len(names) > MaxList {
				break read
			}
			if c == 0 {
				break
			}
		}
	}
	if len(names) > MaxList {
		names, truncated = names[:MaxList], true
	}
	slices.Sort(names)
	entries = make([]Entry, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since
		}
		if r.hides(append(components(p), name)) {
			continue // not even its name
		}
		entries = append(entries, Entry{Name: name, Type: fileType(st.Mode), Size: st.Size})
	}
	return entries, truncated, nil
}

// Mkdir makes directory p (0755 less the umask); its parent must exist.
func (r *Root) Mkdir(p string) error {
	const op = "mkdir"
	return r.gated(op, p, func(r *Root) error {
		return r.inParent(op, p, guardPlain, nil, func(par parent) error {
			if err := unix.Mkdirat(par.fd, par.name, 0o755); err != nil {
				return sysErr(op, p, err, false)
			}
			return nil
		})
	})
}

// Rename moves from to to, both beneath the root. An existing to is
// refused unless overwrite, and then only as rename(2) allows (a file
// over a file, a directory over an empty directory).
func (r *Root) Rename(from, to string, overwrite bool) error {
	return r.gated("rename", from, func(r *Root) error { return r.rename(from, to, overwrite) })
}

func (r *Root) rename(from, to string, overwrite bool) error {
	const op = "rename"
	r.changes.RLock()
	defer r.changes.RUnlock()
	// Any move, not only one onto a gitLayouts name: a directory moved
	// over an empty one changes what a layout check there saw.
	r.layout.Lock()
	defer r.layout.Unlock()
	for _, p := range []string{from, to} {
		if err := checkPath(p); err != nil {
			return badRequest(op, p, "%v", err)
		}
		if err := r.checkHidden(op, p, true); err != nil {
			return err
		}
	}
	// One question for the move, both ends and the direction in it.
	action := func() string {
		a := fmt.Sprintf("rename %s to %s", quoteForQuestion(from), quoteForQuestion(to))
		if overwrite {
			a += ", replacing what is there"
		}
		return a
	}
	if err := r.guard(op, []string{from, to}, guardRename, false, action); err != nil {
		return err
	}
	src, err := r.openParent(op, from)
	if err != nil {
		return err
	}
	defer unix.Close(src.fd)
	dst, err := r.openParent(op, to)
	if err != nil {
		return err
	}
	defer unix.Close(dst.fd)
	if err := r.singleLinked(op, to, src, dst.fold); err != nil {
		return err
	}
	var folded []string
	if src.fold {
		folded = append(folded, from)
	}
	if dst.fold {
		folded = append(folded, to)
	}
	if err := r.guard(op, folded, guardRename, true, action); err != nil {
		return err
	}
	var a, b unix.Stat_t
	if unix.Fstatat(src.fd, src.name, &a, unix.AT_SYMLINK_NOFOLLOW) == nil && unix.Fstatat(dst.fd, dst.name, &b, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		a.Dev == b.Dev && a.Ino == b.Ino && !(dst.fold && foldEqual(src.name, dst.name)) {
		// rename(2) does nothing then, and says it succeeded (in a
		// case-insensitive directory it changes a name's case).
		return badRequest(op, from, "%s and %s are names of the same file: nothing would move (delete one of them instead)", quoteForQuestion(from), quoteForQuestion(to))
	}
	var flags uint
	if !overwrite {
		flags = unix.RENAME_NOREPLACE
	}
	if err := unix.Renameat2(src.fd, src.name, dst.fd, dst.name, flags); err != nil {
		return sysErr(op, from, err, false)
	}
	unix.Fsync(dst.fd)
	if dst.fd != src.fd {
		unix.Fsync(src.fd)
	}
	return nil
}

// maxLinkCheck bounds the entries singleLinked looks through in a tree.
const maxLinkCheck = 10_000

// singleLinked refuses to move into a protected path (to) a file with
// another name, a symbolic link, a FIFO, socket or device, or a tree
// holding one: a command (or fs itself) could write through the other
// name, or into the FIFO as it is read, and the content would change
// with no new inode for the launcher's check to see (SD-17), and no
// question. Elsewhere it allows anything. fold: to's directory
// compares names case-insensitively, and to is matched so, as guard
// matches it (a hard-linked file moved to .GIT/hooks there is in
// .git/hooks). A tree it cannot look through whole (a directory it
// cannot open or read, more than maxLinkCheck entries) is refused too.
func (r *Root) singleLinked(op, to string, src parent, fold bool) error {
	if _, _, ok := r.protects(components(to), guardRename, fold); !ok {
		return nil
	}
	refuse := func(what string) error {
		return &Error{Op: op, Path: to, Kind: KindProtected,
			Detail: fmt.Sprintf("%s: a protected path must not share its file with another name (copy it instead)", what)}
	}
	// A FIFO's content is whatever a writer puts in it when it is read
	// (git opening a config), a socket's or a device's is another
	// program's: changed with no question, as a second name's, and the
	// launcher reads regular files only.
	special := func(what string) error {
		return &Error{Op: op, Path: to, Kind: KindProtected,
			Detail: what + ": only regular files and directories move into a protected path"}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(src.fd, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil // the rename reports it
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return refuse(fmt.Sprintf("the file has %d names", st.Nlink))
		}
	case unix.S_IFLNK:
		// What it names is another name's file: it could change with no
		// question, and the question would not show it.
		return refuse("it is a symbolic link")
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFCHR, unix.S_IFBLK:
		return special(fmt.Sprintf("it is not a regular file (a %s)", fileType(st.Mode)))
	case unix.S_IFDIR:
		// A directory that cannot be looked through (unreadable, or no
		// descriptor left for a deep tree) is refused, not passed over:
		// what it holds is not known to have one name each.
		unchecked := func(name string, err error) string {
			return fmt.Sprintf("%s in the tree could not be looked through (%v)", name, err)
		}
		fd, err := unix.Openat(src.fd, src.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			return nil // the rename reports it
		} else if err != nil {
			return refuse(unchecked(src.name, err))
		}
		seen, odd := 0, false
		var walk func(fd int, name string) string
		walk = func(fd int, name string) string {
			f := os.NewFile(uintptr(fd), "")
			defer f.Close()
			ents, err := f.ReadDir(-1)
			if err != nil {
				return unchecked(name, err)
			}
			for _, e := range ents {
				if seen++; seen > maxLinkCheck {
					return fmt.Sprintf("the tree has more than %d entries to check", maxLinkCheck)
				}
				var est unix.Stat_t
				if err := unix.Fstatat(fd, e.Name(), &est, unix.AT_SYMLINK_NOFOLLOW); err == unix.ENOENT {
					continue // gone since: not moved
				} else if err != nil {
					return unchecked(e.Name(), err)
				}
				switch est.Mode & unix.S_IFMT {
				case unix.S_IFREG:
					if est.Nlink > 1 {
						return fmt.Sprintf("%s in the tree has %d names", e.Name(), est.Nlink)
					}
				case unix.S_IFLNK:
					return fmt.Sprintf("%s in the tree is a symbolic link", e.Name())
				case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFCHR, unix.S_IFBLK:
					odd = true
					return fmt.Sprintf("%s in the tree is not a regular file (a %s)", e.Name(), fileType(est.Mode))
				case unix.S_IFDIR:
					cfd, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
					if err == unix.ENOENT {
						continue
					} else if err != nil {
						return unchecked(e.Name(), err)
					}
					if why := walk(cfd, e.Name()); why != "" {
						return why
					}
				}
			}
			return ""
		}
		if why := walk(fd, src.name); odd {
			return special(why)
		} else if why != "" {
			return refuse(why)
		}
	}
	return nil
}

// Delete removes p: a file (or a symbolic link, FIFO, socket: the name,
// never what it points to) or an empty directory.
func (r *Root) Delete(p string) error {
	const op = "delete"
	return r.inParent(op, p, guardRemove, nil, func(par parent) error {
		err := unix.Unlinkat(par.fd, par.name, 0)
		if err == unix.EISDIR {
			err = unix.Unlinkat(par.fd, par.name, unix.AT_REMOVEDIR)
		}
		if err != nil {
			return sysErr(op, p, err, false)
		}
		unix.Fsync(par.fd)
		return nil
	})
}

// inParent checks p, guards it (mode), opens its parent directory and,
// where that directory compares names case-insensitively, guards p again
// so; then it runs f on the parent and p's last name.
func (r *Root) inParent(op, p string, mode guardMode, action func() string, f func(par parent) error) error {
	if op != "delete-recursive" { // which takes it exclusively, once confirmed
		r.changes.RLock()
		defer r.changes.RUnlock()
	}
	if op != "delete" && op != "delete-recursive" && layoutNamed(p) {
		r.layout.Lock()
		defer r.layout.Unlock()
	}
	if err := r.check(op, p); err != nil {
		return err
	}
	// A removal (or a recursive one) of a directory holding a hidden path.
	moves := op == "delete" || op == "delete-recursive"
	if err := r.checkHidden(op, p, moves); err != nil {
		return err
	}
	if err := r.guard(op, []string{p}, mode, false, action); err != nil {
		return err
	}
	par, err := r.openParent(op, p)
	if err != nil {
		return err
	}
	defer unix.Close(par.fd)
	if par.fold {
		if err := r.guard(op, []string{p}, mode, true, action); err != nil {
			return err
		}
	}
	return f(par)
}

// gated runs change, a change other than a removal, holding the gate
// (Root.gate) shared; where it would ask the person (errAskHeld), it is
// begun again holding the gate exclusively, and after a change the
// person approved, what the git configs name is read again (Refresh)
// before any other change is checked. A removal is not gated: it makes
// nothing a config could name, and removes no config's name. Before
// the change is checked, a git config changed outside fs since it was
// last read (Stale) is read again (recheck): a change that arrives
// after the person's edit is checked against what the edited config
// names. op and p name the change in a refusal.
func (r *Root) gated(op, p string, change func(r *Root) error) error {
	if r.Refresh == nil || r.gateHeld {
		return change(r)
	}
	r.gate.RLock()
	if r.stale() {
		r.gate.RUnlock()
		if err := r.recheck(op, p); err != nil {
			return err
		}
		// A recheck cannot start again until the change is done: it
		// waits for the gate. An edit after this one is after the
		// change arrived.
		r.gate.RLock()
	}
	err := change(r)
	r.gate.RUnlock()
	if err != errAskHeld {
		return err
	}
	held := *r
	held.gateHeld = true
	held.gate.Lock()
	defer held.gate.Unlock()
	// An edit between the shared gate and this one is read too: the
	// question names every protected path the change touches.
	if err := r.recheckHeld(op, p); err != nil {
		return err
	}
	err = change(&held)
	if held.approved {
		// The change is made, whatever err says (a write's fsync): its
		// answer stays the change's. Refresh says what it could not read
		// and what fs would not take (main.go's).
		r.match.add(r.Refresh())
	}
	return err
}

// stale reports whether the git configs may have changed outside fs
// since they were last read (Root.Stale).
func (r *Root) stale() bool { return r.Stale != nil && r.Recheck != nil && r.Stale() }

// recheck reads the git configs again (Recheck) holding the gate
// exclusively, so that no change is checked meanwhile, and protects
// what they name from then on. A read that fails refuses the change op
// of p, and the next change asks again: fs does not guess what an edit
// it could not have read names.
func (r *Root) recheck(op, p string) error {
	r.gate.Lock()
	defer r.gate.Unlock()
	return r.recheckHeld(op, p)
}

// recheckHeld is recheck for a caller holding the gate exclusively.
func (r *Root) recheckHeld(op, p string) error {
	if !r.stale() {
		return nil // read again by another change meanwhile
	}
	paths, err := r.Recheck()
	if err != nil {
		return &Error{Op: op, Path: p, Kind: KindProtected,
			Detail: fmt.Sprintf("a git config of the workspace changed and could not be read again (%v): fs changes nothing until it can, since what the config names now is protected", err)}
	}
	r.match.add(paths)
	return nil
}

// errAskHeld is guard's answer, under a shared gate, where it would ask
// the person: gated asks again holding the gate. It never leaves fs.
var errAskHeld = &Error{Op: "guard", Kind: KindProtected, Detail: "asked holding the gate"}

type guardMode int

const (
	guardPlain  guardMode = iota // the path is, or is beneath, a protected path
	guardWrite                   // also: a file named .git (it would point git elsewhere)
	guardRename                  // also: an ancestor of a protected path (.git, a prefix of the bootstrap's)
	guardRemove                  // as guardPlain, but a removal makes nothing (no layout completed)
)

// guard refuses a mutation of the paths ps that touches a protected
// path, unless the person approves it: one question for the whole
// operation, action saying it as the person reads it (every path, the
// direction, the size; worked out only when asked; nil says op and the
// path), the detail naming each
// protected path it touches.
func (r *Root) guard(op string, ps []string, mode guardMode, fold bool, action func() string) error {
	var hit []string
	makes := "" // what a layout completed would make a repository of, or which layout protects
	for _, p := range ps {
		pr, made, ok := r.protects(components(p), mode, fold)
		if ok && !slices.Contains(hit, pr.path) {
			hit = append(hit, pr.path)
		}
		if made != "" {
			makes = fmt.Sprintf("; it would make %s a git repository, whose config and hooks git runs there", quoteForQuestion(made))
		} else if ok && pr.layout != "" {
			makes = fmt.Sprintf("; %s holds a git directory (objects and refs, or HEAD and commondir), whose config and hooks git runs", quoteForQuestion(pr.layout))
		}
	}
	if len(hit) == 0 {
		return nil
	}
	p := ps[0]
	shown := make([]string, len(hit))
	for i, h := range hit {
		shown[i] = quoteForQuestion(h)
	}
	are := strings.Join(shown, " and ") + " are"
	if len(hit) == 1 {
		are = shown[0] + " is"
	}
	if r.Approve != nil {
		if r.Refresh != nil && !r.gateHeld && op != "delete" && op != "delete-recursive" {
			return errAskHeld // asked holding the gate (gated)
		}
		asked := op + " " + quoteForQuestion(p)
		if action != nil {
			asked = action()
		}
		yes, why := r.Approve(asked+" (asked by the agent)",
			fmt.Sprintf("%s protected (rule %s): it changes how tools behave for the person%s", are, RuleProtected, makes))
		if yes {
			r.approved = true
			return nil
		}
		return &Error{Op: op, Path: p, Kind: KindProtected,
			Detail: fmt.Sprintf("%s protected, and the person did not approve (%s)", are, why)}
	}
	return &Error{Op: op, Path: p, Kind: KindProtected,
		Detail: fmt.Sprintf("%q is protected%s: changing it needs the person's approval, and this session cannot ask", hit[0], makes)}
}

// protects is what protects the path with components cs from an
// operation of mode, if anything does (see guardMode); made, when not
// "", is the directory the operation would make a git directory of.
func (r *Root) protects(cs []string, mode guardMode, fold bool) (pr protection, made string, ok bool) {
	// Only a removal may touch a lock file in a git directory (gitBeneath).
	if pr, ok := r.match.protectedAs(cs, fold, mode != guardRemove); ok {
		return pr, "", true
	}
	if mode == guardWrite && len(cs) > 0 && eq(cs[len(cs)-1], gitDir, fold) {
		return protection{path: strings.Join(cs, "/")}, "", true
	}
	// NAME.lock beside a protected NAME is git's lock of it (git config
	// --global's .gitconfig.lock, git init --bare's NAME.git/config.lock):
	// git renames it onto NAME when done, so writing one is changing NAME.
	if n := len(cs); mode != guardRemove && n > 0 {
		if name, ok := lockOf(cs[n-1], fold); ok {
			if _, ok := r.match.protectedAs(append(slices.Clip(cs[:n-1]), name), fold, true); ok {
				return protection{path: strings.Join(cs, "/")}, "", true
			}
		}
	}
	if mode == guardRename {
		if pr, ok := r.match.ancestor(cs, fold); ok {
			return pr, "", true
		}
	}
	return r.gitLayout(cs, mode == guardRename, mode != guardRemove, fold)
}

// lockOf is the name c is git's lock of (NAME for NAME.lock). fold: c is
// in a directory that folds case, where NAME.LOCK (or a KELVIN SIGN for
// the k) is the file git opens as NAME.lock; NAME is then returned
// folded, which matches as the unfolded name does.
func lockOf(c string, fold bool) (string, bool) {
	if fold {
		c = foldKey(c)
	}
	name, ok := strings.CutSuffix(c, ".lock")
	return name, ok && name != ""
}

// gitLayout is what protects the path with components cs because of a
// git directory known by what it holds (gitLayouts) rather than by its
// name: one lies above it (or, for a move, is it), or making the path
// would complete one (made: that directory; only when makes, which a
// removal does not: a delete of a refs that is not there asked whether
// to make a repository). The file system is looked
// at, beneath the root as every operation looks; the kernel folds names
// where a directory does, and only the name made is compared here.
func (r *Root) gitLayout(cs []string, moves, makes, fold bool) (pr protection, made string, ok bool) {
	if len(cs) == 0 && !moves {
		return protection{}, "", false // "." is made or changed by nothing
	}
	// Each directory of the path is opened once, beneath the one above
	// it: opening each by its whole path from the root resolved depth²/2
	// names, close to a second for a path of MaxPath bytes ("a/a/…").
	fd, err := r.open("look", ".", ".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return protection{}, "", false
	}
	defer func() { unix.Close(fd) }()
	completes := "" // the directory the path's last name would make a git directory of
	for g := 0; ; g++ {
		if gitLayoutAt(fd) {
			dir := "."
			if g > 0 {
				dir = strings.Join(cs[:g], "/")
			}
			if moves {
				return protection{path: strings.Join(cs[:min(g+1, len(cs))], "/"), layout: dir}, "", true
			}
			pr, ok := gitBeneath(cs, g, fold, makes)
			pr.layout = dir
			return pr, "", ok
		}
		if makes && g == len(cs)-1 && completesLayout(fd, cs[g], fold) {
			completes = "."
			if g > 0 {
				completes = strings.Join(cs[:g], "/")
			}
		}
		// A move looks at the path itself too (it may be a git directory).
		if g == len(cs) || g == len(cs)-1 && !moves {
			break
		}
		// A directory that cannot be opened is not one (the operation
		// resolving the same path fails as well), nor is what lies below.
		next, err := lookAt(cs[g], fd)
		if err != nil {
			break
		}
		unix.Close(fd)
		fd = next
	}
	if completes != "" {
		return protection{path: strings.Join(cs, "/")}, completes, true
	}
	return protection{}, "", false
}

// completesLayout reports whether making name in the directory dfd would
// complete one of the gitLayouts there.
func completesLayout(dfd int, name string, fold bool) bool {
	for _, set := range gitLayouts {
		i := slices.IndexFunc(set, func(n string) bool { return eq(name, n, fold) })
		if i >= 0 && holds(dfd, slices.Delete(slices.Clone(set), i, i+1)) {
			return true
		}
	}
	return false
}

// lookAt opens the directory name beneath dfd (O_PATH) as every lookup
// resolves; EAGAIN (a rename during the walk) is tried again, as open
// does.
func lookAt(name string, dfd int) (int, error) {
	for range 16 {
		fd, err := openAt("look", name, dfd, name, unix.O_PATH|unix.O_DIRECTORY, 0)
		if !isErrno(err, unix.EAGAIN) {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// layoutNamed reports whether p's last name is one of the gitLayouts',
// in any case (a directory may fold it): making it could complete a git
// directory, so it is made under Root.layout.
func layoutNamed(p string) bool {
	cs := components(p)
	if len(cs) == 0 {
		return false
	}
	for _, set := range gitLayouts {
		if slices.ContainsFunc(set, func(n string) bool { return eq(cs[len(cs)-1], n, true) }) {
			return true
		}
	}
	return false
}

// beginning shows what a write puts in a file, for its question: up to
// three lines or 120 bytes, escaped.
func beginning(data []byte) string {
	if len(data) == 0 {
		return " (empty)"
	}
	b := data[:min(len(data), 120)]
	lines := 0
	for i, c := range b {
		if c == '\n' {
			if lines++; lines == 3 {
				b = b[:i]
				break
			}
		}
	}
	more := ""
	if len(b) < len(data) {
		more = " …"
	}
	return ", beginning " + strconv.QuoteToASCII(string(b)) + more
}

// quoteForQuestion is p as the person reads it in a question: quoted,
// with anything unprintable escaped (a path may hold any byte but NUL and
// "/", and the question must show exactly what would change).
func quoteForQuestion(p string) string { return strconv.QuoteToASCII(p) }
