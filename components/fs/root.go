package fs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/rpc"
)

// MaxData bounds the bytes one read returns and one write stores: the
// data a single request or answer carries.
const MaxData = rpc.MaxData

// MaxList bounds the entries one list returns.
const MaxList = 10000

// resolve is how every path is looked up: beneath the root, no symbolic
// link (so no magic link either) anywhere, no mount point crossed.
const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// fsCaseFoldFL is FS_CASEFOLD_FL (linux/fs.h), which golang.org/x/sys
// does not define: the directory's names compare case-insensitively.
const fsCaseFoldFL = 0x40000000

// Kind is why an operation was refused.
type Kind int

// Kinds. The rpc layer turns each into a decision's reason and rule.
const (
	// KindBadRequest: the path or an argument is invalid, or the request
	// does not fit what is there (not a regular file, not empty, exists).
	KindBadRequest Kind = iota + 1
	// KindNotFound: the path, or one of its directories, does not exist.
	KindNotFound
	// KindEscape: resolving the path would leave the workspace: a
	// symbolic link (fs follows none), a mount point, "..".
	KindEscape
	// KindProtected: a mutation of a protected path.
	KindProtected
	// KindNeedsConfirmation: an operation this build does not offer
	// because it needs the person's confirmation (delete-recursive).
	KindNeedsConfirmation
	// KindPermission: the file system refused (EACCES, EPERM, EROFS).
	KindPermission
	// KindFailed: the file system failed (ENOSPC, EIO, ...).
	KindFailed
	// KindAuthority: the launcher's own authority (its policy file, the
	// vault, the session and backup directories) lies there: not even
	// read.
	KindAuthority
	// KindNoRoom: no backup of the tree fits the store (Backup).
	KindNoRoom
)

var kindNames = map[Kind]string{
	KindBadRequest:        "bad request",
	KindNotFound:          "not found",
	KindEscape:            "escapes the workspace",
	KindProtected:         "protected",
	KindNeedsConfirmation: "needs confirmation",
	KindPermission:        "permission denied",
	KindFailed:            "failed",
	KindAuthority:         "the launcher's authority",
	KindNoRoom:            "no room for a backup",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Error is every refusal of a Root operation. Detail is a short sentence
// for the caller: it names the path and the cause, never file contents.
type Error struct {
	Op     string
	Path   string
	Kind   Kind
	Detail string
	Err    error // the errno, when the kernel refused
}

func (e *Error) Error() string {
	return "fs: " + e.Op + " " + strconv.Quote(e.Path) + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf is err's Kind, or 0 when err is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func badRequest(op, p string, format string, args ...any) *Error {
	return &Error{Op: op, Path: p, Kind: KindBadRequest, Detail: fmt.Sprintf(format, args...)}
}

// sysErr classifies an errno. During resolves (openat2) ELOOP and EXDEV
// mean an escape: a symbolic link, a mount point or "..".
func sysErr(op, p string, err error, resolving bool) *Error {
	e := &Error{Op: op, Path: p, Err: err}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		e.Kind, e.Detail = KindFailed, err.Error()
		return e
	}
	switch {
	case resolving && errno == unix.ELOOP:
		e.Kind, e.Detail = KindEscape, "the path is or passes through a symbolic link; fs follows none"
	case resolving && errno == unix.EXDEV:
		e.Kind, e.Detail = KindEscape, "the path leaves the workspace (a mount point, or beneath the root)"
	case resolving && errno == unix.ENOSYS:
		e.Kind, e.Detail = KindFailed, "openat2 is not available (a kernel before 5.6, or a seccomp filter denies it)"
	case errno == unix.ENOENT:
		e.Kind, e.Detail = KindNotFound, "no such file or directory"
	case errno == unix.ENOTDIR:
		e.Kind, e.Detail = KindBadRequest, "a directory in the path is not a directory"
	case errno == unix.EISDIR:
		e.Kind, e.Detail = KindBadRequest, "is a directory"
	case errno == unix.EEXIST:
		e.Kind, e.Detail = KindBadRequest, "already exists"
	case errno == unix.ENOTEMPTY:
		e.Kind, e.Detail = KindBadRequest, "the directory is not empty (delete removes only empty directories)"
	case errno == unix.EBUSY:
		e.Kind, e.Detail = KindBadRequest, "busy (a mount point?)"
	case errno == unix.EINVAL:
		e.Kind, e.Detail = KindBadRequest, "invalid (a directory into itself?)"
	case errno == unix.ENAMETOOLONG:
		e.Kind, e.Detail = KindBadRequest, "a name is too long"
	case errno == unix.EACCES || errno == unix.EPERM || errno == unix.EROFS:
		e.Kind, e.Detail = KindPermission, "the file system refused: "+unix.ErrnoName(errno)
	default:
		e.Kind, e.Detail = KindFailed, "the file system failed: "+errnoName(errno)
	}
	return e
}

func errnoName(e unix.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}

// Root is the workspace, as a directory descriptor: every path is
// resolved beneath it by openat2, and every mutation is a *at system call
// on a directory descriptor resolved the same way.
type Root struct {
	fd    int
	match *matcher
	// nodev: the root's mount refuses to open devices (MS_NODEV), and no
	// lookup leaves that mount (RESOLVE_NO_XDEV), so Read need not look
	// before it opens (the fs component's root is mounted so).
	nodev bool
	// Approve, when set, asks the person whether a mutation of a
	// protected path may go ahead (the launcher's terminal, through the
	// session's approval channel); nil: such a mutation is refused.
	Approve func(action, detail string) (yes bool, reason string)
	// Recursive, when set, lets recursive deletes go ahead (confirmed and
	// backed up); nil: they are refused.
	Recursive *Recursive
	// Refresh, when set, is called after each change of a protected path
	// the person approved (a .git/config, an included file, a repository
	// made): what the workspace's git configs name now (a core.hooksPath,
	// an included file, a program), workspace-relative, which fs
	// protects from then on as the bootstrap's paths; it drops none held
	// already, and says itself what it could not read.
	Refresh func() []string
	// Stale, when set with Recheck, reports whether a git config the
	// last read found (or looked for) may have changed since: the
	// launcher's watch on them has news (the person edited one by hand,
	// made one, renamed one into place). Every change but a removal asks
	// it first, holding the gate shared; when it says so, Recheck is
	// called holding the gate exclusively (Root.recheck), and the change
	// is checked against what the configs name then. It must be cheap:
	// it runs for every write (main.go's is one ioctl).
	Stale func() bool
	// Recheck reads the git configs again when Stale says so: what they
	// name now, as Refresh's; an error when they could not be read, and
	// then the change that asked is refused.
	Recheck func() ([]string, error)

	hidden [][]string // the launcher's authority paths in the workspace (Hide)
	// changes is held shared by every change and exclusively by a
	// recursive delete from its backup to its end, so that nothing fs
	// does moves a tree into the one being removed meanwhile.
	changes *sync.RWMutex
	// layout is held by a change that could complete a git directory's
	// layout (gitLayouts), from guard's look at the directory to the
	// change itself: two such changes at once each saw the other's name
	// missing (objects and refs made together, neither asked).
	layout *sync.Mutex
	// gate is held, with Refresh set, by every change but a removal:
	// shared from its check to its end, and exclusively by a change of
	// a protected path from its question through Refresh after it, so
	// that no change checked against the protected paths before (a
	// write of the core.hooksPath an approved config names) lands after
	// them. gateHeld: this call holds it exclusively; approved: the
	// person approved a change in it.
	gate     *sync.RWMutex
	gateHeld bool
	approved bool
}

// forCall is r for one call whose caller may leave (ctx ends, when the
// connection closes): an approval or confirmation the person gives after
// that is taken as no, so nothing is done for a call nobody waits for.
func (r *Root) forCall(ctx context.Context) *Root {
	if r.Approve == nil && r.Recursive == nil {
		return r
	}
	c := *r
	// The person is asked only after the caller is watched: its leaving
	// then ends ctx, and a yes after that is no.
	left := func(yes bool, why string) (bool, string) {
		if yes && ctx.Err() != nil {
			return false, "the caller left before the answer"
		}
		return yes, why
	}
	if r.Approve != nil {
		c.Approve = func(action, detail string) (bool, string) {
			rpc.Watch(ctx)
			return left(r.Approve(action, detail))
		}
	}
	if r.Recursive != nil {
		rc := *r.Recursive
		rc.Confirm = func(action, detail string, q Question) (bool, string) {
			rpc.Watch(ctx)
			return left(r.Recursive.Confirm(action, detail, q))
		}
		c.Recursive = &rc
	}
	return &c
}

// Hide makes the workspace-relative paths (and everything beneath them)
// unreachable for every operation, reads and listings included: where the
// launcher's own authority lies inside the workspace (its policy file, the
// vault, the session and backup directories). Call it before serving.
func (r *Root) Hide(paths []string) error {
	for _, p := range paths {
		if err := checkPath(p); err != nil || p == "." {
			return fmt.Errorf("fs: hidden path %q: not a path beneath the workspace (%v)", p, err)
		}
		r.hidden = append(r.hidden, components(p))
	}
	return nil
}

// hides reports whether the path of components cs is, or is beneath, a
// hidden path.
func (r *Root) hides(cs []string) bool {
	within, _ := r.hiddenAt(cs)
	return within
}

// hiddenAt reports whether the path of components cs is, or is beneath, a
// hidden path (within), and whether a hidden path lies beneath it
// (above): moving or removing such a directory would take the hidden
// path out of the name fs knows it by. Names compare ignoring case, as a
// case-insensitive directory would (anywhere on the path, before or
// after fs opens it): hiding a case variant of the launcher's file as
// well costs nothing.
func (r *Root) hiddenAt(cs []string) (within, above bool) {
	for _, h := range r.hidden {
		n := min(len(cs), len(h))
		same := true
		for i := range n {
			if !eq(cs[i], h[i], true) {
				same = false
				break
			}
		}
		if same {
			within = within || len(cs) >= len(h)
			above = above || len(cs) < len(h)
		}
	}
	return within, above
}

// checkHidden refuses op on p where a hidden path is p, lies above p or,
// when moves is set (a rename, a removal), lies beneath p.
func (r *Root) checkHidden(op, p string, moves bool) error {
	within, above := r.hiddenAt(components(p))
	switch {
	case within:
		return &Error{Op: op, Path: p, Kind: KindAuthority, Detail: "the launcher's own authority lies there (its policy, vault, session or backups): fs neither reads nor changes it"}
	case moves && above:
		return &Error{Op: op, Path: p, Kind: KindAuthority, Detail: "the launcher's own authority (its policy, vault, session or backups) lies beneath it: fs neither moves nor removes it"}
	}
	return nil
}

// NewRoot takes fd, a descriptor of the workspace directory (O_PATH is
// enough), and the workspace-relative paths protected in addition to the
// built-in ones. The Root owns fd from then on, also when NewRoot fails.
func NewRoot(fd int, protected []string) (*Root, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fs: root descriptor %d: %w", fd, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return nil, fmt.Errorf("fs: root descriptor %d is not a directory", fd)
	}
	m, err := newMatcher(protected)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// A mount's flags are its own: the launcher's detached clone keeps
	// nodev whatever is done to the mount it was cloned from.
	var sfs unix.Statfs_t
	nodev := unix.Fstatfs(fd, &sfs) == nil && sfs.Flags&unix.ST_NODEV != 0
	return &Root{fd: fd, match: m, nodev: nodev, changes: new(sync.RWMutex), layout: new(sync.Mutex), gate: new(sync.RWMutex)}, nil
}

// OpenRoot opens dir (a host path, followed as it is: the caller chooses
// it) as a Root.
func OpenRoot(dir string, protected []string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: %w", dir, err)
	}
	return NewRoot(fd, protected)
}

// Close closes the root descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// open resolves a checked path beneath the root. EAGAIN is the kernel
// noticing a rename or mount during the walk: the walk is tried again.
// shown is the path the caller asked about, for the error.
func (r *Root) open(op, shown, p string, flags uint64, mode uint64) (int, error) {
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolve}
	for range 16 {
		if testHookResolve != nil {
			testHookResolve(p)
		}
		fd, err := unix.Openat2(r.fd, p, &how)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, sysErr(op, shown, err, true)
		}
		return fd, nil
	}
	return -1, &Error{Op: op, Path: shown, Kind: KindFailed, Detail: "the path kept changing during its lookup", Err: unix.EAGAIN}
}

// testHookResolve sees, in tests, each path given to openat2.
var testHookResolve func(p string)

// openAt resolves name, a single component, beneath the directory dfd,
// with the same rules.
func openAt(op, p string, dfd int, name string, flags uint64, mode uint64) (int, error) {
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolve}
	for {
		if testHookResolve != nil {
			testHookResolve(name)
		}
		fd, err := unix.Openat2(dfd, name, &how)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, sysErr(op, p, err, true)
		}
		return fd, nil
	}
}

// parent is a checked path's directory, open for reading (so it can be
// fsynced), and its final component.
type parent struct {
	fd   int
	name string
	fold bool // the directory compares names case-insensitively
}

func (r *Root) openParent(op, p string) (parent, error) {
	if p == "." {
		return parent{}, badRequest(op, p, "the workspace itself cannot be %s", opVerb(op))
	}
	dir, name := splitParent(p)
	// No O_NOFOLLOW: with it a final link fails O_DIRECTORY (ENOTDIR);
	// without it RESOLVE_NO_SYMLINKS refuses the link (ELOOP), which says
	// what happened.
	fd, err := r.open(op, p, dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return parent{}, err
	}
	return parent{fd: fd, name: name, fold: caseFolded(fd)}, nil
}

func opVerb(op string) string {
	switch op {
	case "write":
		return "written"
	case "mkdir":
		return "made"
	case "rename":
		return "renamed"
	default:
		return "deleted"
	}
}

// caseFolded reports whether the directory fd looks names up
// case-insensitively (ext4, f2fs or tmpfs with casefold, chattr +F). An
// error (a file system without the flags) is "no". A variable: a test,
// on a kernel without casefold, says which directories fold.
var caseFolded = func(fd int) bool {
	f, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	return err == nil && f&fsCaseFoldFL != 0
}
