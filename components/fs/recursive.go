package fs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs/backup"
)

// Recursive is how a Root removes a tree: the person confirms, a backup
// is staged and verified first, and only then is the tree removed. A Root
// without it refuses recursive deletes.
type Recursive struct {
	Store *backup.Store
	// Confirm asks the person: first to delete with a backup kept; then,
	// when its backup fits only by evicting older ones, to evict them;
	// or, when no backup fits, to delete irreversibly.
	Confirm func(action, detail string, q Question) (yes bool, reason string)
}

// Question is what a recursive delete asks the person.
type Question int

const (
	AskDelete       Question = iota + 1 // delete, a backup kept
	AskEvict                            // evict the older backups named, for the new one
	AskIrreversible                     // delete with no backup
)

// maxRemoveDepth bounds the removal's recursion (a tree deeper than this
// is refused half way, after the backup).
const maxRemoveDepth = 2048

// DeletedTree is what a recursive delete did.
type DeletedTree struct {
	Backup       string `json:"backup,omitempty"` // the backup's id; empty when irreversible
	Irreversible bool   `json:"irreversible,omitempty"`
}

// DeleteRecursive removes p and everything beneath it — after the
// person's confirmation (whose default is cancel) and a backup verified
// against the tree; when no backup can fit, only after a second,
// explicit irreversible-delete confirmation. A backup that fails for any
// other reason cancels the delete. A p that is, lies beneath or is named
// as an ancestor of a protected path (.git, a bootstrap path's
// directory) needs that approval first; protected paths deeper in the
// tree (proj/.git/hooks) go with it, in its backup, on the one
// confirmation. What is removed is the tree that was confirmed and backed
// up, by descriptor: another tree renamed onto the name meanwhile is left
// (removeConfirmed), and from the backup to the end fs makes no other
// change, so nothing is moved into the tree between its copy and its
// removal. A command bash runs meanwhile is another process, which this
// does not hold. A removal that fails part way (a name fs cannot remove,
// a tree deeper than maxRemoveDepth) is an error that says the tree is
// partly removed and names the backup holding it (the result names it
// too).
func (r *Root) DeleteRecursive(p string) (DeletedTree, error) {
	const op = "delete-recursive"
	var out DeletedTree
	if r.Recursive == nil {
		if err := checkPath(p); err != nil {
			return out, badRequest(op, p, "%v", err)
		}
		if err := r.checkHidden(op, p, true); err != nil {
			return out, err
		}
		return out, &Error{Op: op, Path: p, Kind: KindNeedsConfirmation,
			Detail: "recursive deletes need the person's confirmation and a backup store, which this session does not have"}
	}
	err := r.inParent(op, p, guardRename, nil, func(par parent) error {
		fd, err := openAt(op, p, par.fd, par.name, unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		src := os.NewFile(uintptr(fd), p)
		defer src.Close()
		shown := quoteForQuestion(p)
		yes, why := r.Recursive.Confirm(fmt.Sprintf("delete %s and everything beneath it (asked by the agent)", shown),
			"a backup is staged and verified first; launcher backups restores it", AskDelete)
		if !yes {
			return &Error{Op: op, Path: p, Kind: KindNeedsConfirmation, Detail: "cancelled: the person did not confirm (" + why + ")"}
		}
		// From the backup to the end no change of fs's runs, so nothing
		// is moved into the tree between its copy and its removal.
		r.changes.Lock()
		defer r.changes.Unlock()
		b, err := r.Recursive.Store.Stage(src, p, time.Now())
		var noRoom *backup.NoRoomError
		if errors.As(err, &noRoom) && len(noRoom.InTheWay) > 0 {
			// Room only by evicting older backups: the person is shown
			// which, and they go only on a yes (an eviction not asked
			// for would let the agent drop the backup of a tree it had
			// deleted before, by deleting junk).
			yes, why := r.Recursive.Confirm(fmt.Sprintf("delete %s and everything beneath it, EVICTING %d older backups to make room for its backup", shown, len(noRoom.InTheWay)),
				"evicted for good: "+inTheWay(noRoom.InTheWay), AskEvict)
			if !yes {
				return &Error{Op: op, Path: p, Kind: KindNeedsConfirmation, Detail: "cancelled: its backup needs older backups evicted, and the person did not confirm (" + why + "); nothing was deleted or evicted"}
			}
			var evict []string
			for _, in := range noRoom.InTheWay {
				evict = append(evict, in.ID)
			}
			if b, err = r.Recursive.Store.StageEvicting(src, p, time.Now(), evict); errors.Is(err, backup.ErrNoRoom) {
				return &Error{Op: op, Path: p, Kind: KindFailed, Detail: "the backup store changed while the person was asked, and the backup needs other evictions now: nothing was deleted or evicted", Err: err}
			}
		}
		switch {
		case errors.As(err, &noRoom):
			yes, why := r.Recursive.Confirm(fmt.Sprintf("delete %s and everything beneath it, WITHOUT a backup", shown),
				fmt.Sprintf("no backup fits (%s)", noRoom.Error()), AskIrreversible)
			if !yes {
				return &Error{Op: op, Path: p, Kind: KindNeedsConfirmation, Detail: "cancelled: no backup fits, and the person did not confirm an irreversible delete (" + why + ")"}
			}
			out.Irreversible = true
		case err != nil:
			return &Error{Op: op, Path: p, Kind: KindFailed, Detail: "the backup failed, so nothing was deleted: " + err.Error(), Err: err}
		default:
			out.Backup = b.ID
		}
		if testHookStaged != nil {
			testHookStaged()
		}
		err = removeConfirmed(op, p, par, src)
		unix.Fsync(par.fd)
		if err != nil {
			return removalFailed(op, p, out, err)
		}
		return nil
	})
	return out, err
}

// inTheWay names the backups an eviction would remove, for the person:
// every one (a question too long for the terminal is not asked, and the
// delete is cancelled: none may go unnamed), each by its id (which
// launcher backups list shows; two labels may read alike once cut), what
// was deleted (the agent's name for it, quoted and cut), when, and its
// size.
func inTheWay(infos []backup.Info) string {
	const maxName = 48
	var parts []string
	for _, in := range infos {
		parts = append(parts, fmt.Sprintf("%s, the backup of %s made %s (%d bytes)", in.ID, quotedCut(in.Label, maxName), in.Created.UTC().Format("2006-01-02 15:04 UTC"), in.Size))
	}
	return strings.Join(parts, "; ")
}

// quotedCut is s quoted to ASCII (quoteForQuestion), cut to about max
// characters of the quoted form (whole escapes only) and "…" when cut.
func quotedCut(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		q := strconv.QuoteToASCII(string(r))
		if b.Len()+len(q)-2 > max {
			return `"` + b.String() + `…"`
		}
		b.WriteString(q[1 : len(q)-1])
	}
	return `"` + b.String() + `"`
}

// testHookStaged, set by a test, runs between a recursive delete's
// backup and its removal.
var testHookStaged func()

// removeConfirmed removes the tree that was confirmed and backed up (src)
// and nothing else: the name may since have been given to another tree
// (a rename while the person was asked). It removes a directory's
// contents through a descriptor checked to be src's, then the emptied
// directory by name, again only while the name is src's; a file or link,
// by name after the same check.
func removeConfirmed(op, p string, par parent, src *os.File) error {
	var want, now unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &want); err != nil {
		return sysErr(op, p, err, false)
	}
	same := func() bool {
		return unix.Fstatat(par.fd, par.name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == want.Dev && now.Ino == want.Ino
	}
	moved := &Error{Op: op, Path: p, Kind: KindFailed,
		Detail: "another file or tree was put at this name after the delete was confirmed: it was left as it is"}
	if want.Mode&unix.S_IFMT != unix.S_IFDIR {
		if !same() {
			return moved
		}
		return removeAllAt(op, p, par.fd, par.name, 0)
	}
	fd, err := openAt(op, p, par.fd, par.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), p)
	defer d.Close()
	if err := unix.Fstat(fd, &now); err != nil || now.Dev != want.Dev || now.Ino != want.Ino {
		return moved
	}
	for {
		names, rerr := d.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(op, p, fd, n, 1); err != nil {
				return err
			}
		}
		if rerr != nil || len(names) == 0 {
			break
		}
	}
	if !same() {
		return &Error{Op: op, Path: p, Kind: KindFailed,
			Detail: "the directory was moved away from this name while it was being removed: its contents were removed, the directory itself and what is now at the name were left"}
	}
	if err := unix.Unlinkat(par.fd, par.name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return sysErr(op, p, err, false)
	}
	return nil
}

// removalFailed is the error of a removal that stopped part way, after
// the backup (if any) was made: the tree is partly removed, so the error
// says so and names the backup that holds all of it and how to restore
// it. The caller's result still has the backup's id too, but an error
// is all the agent is sent.
func removalFailed(op, p string, out DeletedTree, err error) error {
	why, errno := err.Error(), err
	var fe *Error
	if errors.As(err, &fe) {
		why, errno = fe.Detail, fe.Err
	}
	detail := fmt.Sprintf("removal failed after backup %s: %s; the tree is partly removed; restore it with launcher backups restore %s",
		out.Backup, why, out.Backup)
	if out.Backup == "" {
		detail = fmt.Sprintf("removal failed (no backup was kept, as the person confirmed): %s; the tree is partly removed", why)
	}
	return &Error{Op: op, Path: p, Kind: KindFailed, Detail: detail, Err: errno}
}

// Backup stages and verifies a backup of p ("." for the whole workspace)
// without asking anyone and without changing p, and returns its id. It
// is how bash keeps what a recursive deletion by shell command would
// remove, once the person has confirmed it: bash asks, fs keeps. An
// error of KindNoRoom means no backup fits the store beside the backups
// kept (it evicts none: bash asks the person about the deletion alone);
// any other error, that the backup failed.
func (r *Root) Backup(p string) (string, error) {
	const op = "backup"
	if r.Recursive == nil {
		return "", &Error{Op: op, Path: p, Kind: KindNeedsConfirmation, Detail: "this session has no backup store"}
	}
	if err := r.check(op, p); err != nil {
		return "", err
	}
	fd, err := r.open(op, p, p, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	src := os.NewFile(uintptr(fd), p)
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", sysErr(op, p, err, false)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		// A deletion through the link (rm -rf link/) removes what it
		// points at, which a backup of the link would not hold.
		return "", &Error{Op: op, Path: p, Kind: KindEscape, Detail: "a symbolic link: a backup of it would not hold what a deletion through it removes"}
	}
	// The launcher's own files beneath p stay out of the copy: restored,
	// they would lie at a name fs does not hide. (A recursive delete
	// refuses such a p.)
	leave := func(rel string) bool {
		if p != "." {
			rel = p + "/" + rel
		}
		return r.hides(components(rel))
	}
	b, err := r.Recursive.Store.StageLeaving(src, p, time.Now(), leave)
	if err != nil {
		if errors.Is(err, backup.ErrNoRoom) {
			return "", &Error{Op: op, Path: p, Kind: KindNoRoom, Detail: err.Error(), Err: err}
		}
		return "", &Error{Op: op, Path: p, Kind: KindFailed, Detail: "the backup failed: " + err.Error(), Err: err}
	}
	return b.ID, nil
}

// removeAllAt removes name beneath the directory dfd and everything
// beneath it, by descriptor: a symbolic link is removed, never followed;
// a mount point stops the removal (RESOLVE_NO_XDEV).
func removeAllAt(op, p string, dfd int, name string, depth int) error {
	if depth > maxRemoveDepth {
		return &Error{Op: op, Path: p, Kind: KindFailed, Detail: fmt.Sprintf("deeper than %d levels: the rest was left", maxRemoveDepth)}
	}
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return sysErr(op, p, err, false)
	}
	fd, err := openAt(op, p, dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	for {
		names, rerr := d.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(op, p, fd, n, depth+1); err != nil {
				d.Close()
				return err
			}
		}
		if rerr != nil || len(names) == 0 {
			break
		}
	}
	d.Close()
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return sysErr(op, p, err, false)
	}
	return nil
}
