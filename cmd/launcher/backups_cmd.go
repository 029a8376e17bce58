package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/components/session"
)

const backupsHelp = `Usage (as root, the person):
  launcher backups list    --workspace DIR [--json]
  launcher backups show ID --workspace DIR [--json]
  launcher backups verify ID --workspace DIR
  launcher backups restore ID --workspace DIR [--as NAME]
  launcher backups remove ID --workspace DIR

The backups fs kept of the trees it deleted recursively in components
mode, one store per workspace (under /var/lib/pinfold/backups). show
lists each entry's type, mode, recorded uid:gid and path. restore
puts the tree back where it was, beneath the workspace, under its old
name or NAME; it never overwrites anything. A backup of the whole
workspace (label ".") needs --as NAME and is restored as DIR/NAME.
Every restored file, directory and link belongs to the owner (user and
group) of the workspace directory DIR, whatever owner the backup
recorded: fs recorded owners as it saw them through its idmapped mount
(the workspace owner's files as its throwaway uid, everyone else's as
65534), so they are only shown by show, never applied. Setuid and
setgid are never restored (mode & 01777); the permission bits, sticky
bit and modification times are. A restore builds the tree under a
temporary name (.pinfold-restore-…) beside where it goes; one killed
outright (kill -9) leaves that, root's, and the next restore into the
same directory removes it.

The store keeps at most [backups] quota (3 GiB by default). A backup that
does not fit evicts older ones only when the person says so: fs asks,
naming them; a deletion bash runs never evicts, and is asked about as
one with no backup. remove deletes a backup for good, to make room.
` + exitCodesHelp

func (e env) backups(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, backupsHelp)
		return silentExit(exitUsage)
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "-help" {
		fmt.Fprint(e.stdout, backupsHelp)
		return nil
	}
	fset := flags("backups " + sub)
	ws := fset.String("workspace", "", "")
	asJSON := fset.Bool("json", false, "")
	as := fset.String("as", "", "")
	nargs := map[string]int{"list": 0, "show": 1, "verify": 1, "restore": 1, "remove": 1}
	n, ok := nargs[sub]
	if !ok {
		return fail(exitUsage, "run `launcher backups --help`", "unknown backups command %q", sub)
	}
	rest, err := e.parse(fset, backupsHelp, args[1:], n)
	if err != nil {
		return err
	}
	if *ws == "" || !filepath.IsAbs(*ws) || filepath.Clean(*ws) != *ws {
		return fail(exitUsage, "give the workspace as the policy names it", "backups: --workspace DIR must be an absolute, clean path")
	}
	if os.Geteuid() != 0 {
		return fail(exitUsage, "run it as root", "backups: the stores are root's")
	}
	// The CLI never makes a store: one that is not there holds nothing
	// (a hunt's `backups list` of any path made root's store for it).
	if _, err := os.Lstat(session.StorePath(*ws)); os.IsNotExist(err) {
		if sub == "list" {
			if *asJSON {
				return e.writeJSON([]backup.Info{})
			}
			// Said, so that a path spelt otherwise than the policy's is
			// not taken for a workspace with nothing kept.
			fmt.Fprintf(e.stderr, "launcher: note: no backups are kept for the workspace %s (the path must be spelt as the policy names it)\n", printable(*ws))
			return nil
		}
		return fail(exitUsage, "give --workspace as the policy names it (`launcher backups list --workspace DIR` lists what is kept)",
			"backups: no backups are kept for the workspace %q", *ws)
	}
	dir, err := session.StoreDir(*ws)
	if err != nil {
		return fail(exitFailure, "", "%v", err)
	}
	store, err := backup.Open(dir, 0)
	if err != nil {
		return fail(exitFailure, "", "backups: %v", err)
	}
	defer store.Close()
	switch sub {
	case "list":
		list, err := store.List()
		if err != nil {
			return fail(exitFailure, "", "backups: %v", err)
		}
		if *asJSON {
			return e.writeJSON(list)
		}
		if len(list) == 0 {
			fmt.Fprintf(e.stderr, "launcher: note: no backups are kept for the workspace %s now\n", printable(*ws))
		}
		for _, b := range list {
			fmt.Fprintf(e.stdout, "%s\t%s\t%d bytes\t%q\n", b.ID, b.Created.Format(time.DateTime), b.Bytes, b.Label)
		}
	case "show":
		info, entries, err := store.Show(rest[0])
		if err != nil {
			return storeFail(err)
		}
		if *asJSON {
			return e.writeJSON(struct {
				Info    backup.Info    `json:"info"`
				Entries []backup.Entry `json:"entries"`
			}{info, entries})
		}
		fmt.Fprintf(e.stdout, "%s  %q  %d entries, %d bytes\n", info.ID, info.Label, len(entries), info.Bytes)
		// Labels, paths and names are printed quoted (%q): an agent
		// names them, and raw they could carry escape sequences to the
		// root person's terminal.
		// Type, mode and owner as fs recorded them (the owner as fs saw it
		// through its idmapped mount: restore does not apply it).
		for _, en := range entries {
			fmt.Fprintf(e.stdout, "  %-7s %04o %d:%d  %q\n", shownType(en.Type), en.Mode, en.UID, en.GID, en.Path)
		}
	case "remove":
		info, _, err := store.Show(rest[0])
		if err != nil {
			return storeFail(err)
		}
		if err := store.Remove(rest[0]); err != nil {
			return storeFail(err)
		}
		fmt.Fprintf(e.stdout, "removed %s (%q, %d bytes)\n", rest[0], info.Label, info.Bytes)
	case "verify":
		if err := store.Verify(rest[0]); err != nil {
			return storeFail(err)
		}
		fmt.Fprintf(e.stdout, "%s: every file matches its hash\n", rest[0])
	case "restore":
		const asHint = "--as names the restored tree within its directory: one name, without /"
		switch {
		case *as == "." || *as == ".." || strings.ContainsRune(*as, '/'):
			return fail(exitUsage, asHint, "backups: --as %q is not a name", *as)
		case len(*as) > 255:
			return fail(exitUsage, asHint, "backups: --as is %d bytes, more than a file name may have (255)", len(*as))
		case strings.ContainsFunc(*as, unicode.IsControl):
			// Surely a slip (a pasted escape sequence, a newline), and a
			// name every later listing of the workspace would print.
			return fail(exitUsage, asHint, "backups: --as %q holds a control character", *as)
		}
		info, _, err := store.Show(rest[0])
		if err != nil {
			return storeFail(err)
		}
		// The label is the workspace-relative path fs deleted: "." when
		// it was the workspace's contents (bash backs up the whole
		// workspace for rm -rf *, a glob or a dynamic path). That tree
		// has no name of its own: it goes back as DIR/NAME, NAME given
		// with --as.
		rel := filepath.Clean(info.Label)
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fail(exitFailure, "", "backups: %s was not a path beneath the workspace (%q)", rest[0], info.Label)
		}
		if rel == "." && *as == "" {
			return fail(exitFailure, "give it a name with --as NAME: it is restored as DIR/NAME",
				"backups: %s is a backup of the whole workspace (label %q): it has no name to restore under", rest[0], info.Label)
		}
		// A label cut at MaxLabel bytes, or one whose bytes were not
		// UTF-8 (replaced), is not the path it was: such a tree, too, goes
		// back only as DIR/NAME.
		if len(info.Label) > backup.MaxLabel-utf8.UTFMax || strings.ContainsRune(info.Label, utf8.RuneError) {
			if *as == "" {
				return fail(exitFailure, "give it a name with --as NAME: it is restored as DIR/NAME",
					"backups: %s was labelled %q, which is not exactly the path it had (cut short, or not UTF-8)", rest[0], info.Label)
			}
			rel = "."
		}
		name := filepath.Base(rel)
		if *as != "" {
			name = *as
		}
		owner, err := workspaceOwner(*ws)
		if err != nil {
			return fail(exitFailure, "", "backups: %v", err)
		}
		// As root, into a tree the agent wrote: the parent is found
		// beneath the workspace by descriptor, through no symbolic link
		// and no mount, or a planted link would send the tree elsewhere.
		parent := filepath.Join(*ws, filepath.Dir(rel))
		d, err := openBeneath(*ws, filepath.Dir(rel))
		switch {
		case errors.Is(err, unix.ENOENT):
			return fail(exitFailure, fmt.Sprintf("make it (as the workspace's owner: mkdir -p %s) and restore again, or restore the backup of a directory above it", shellQuote(parent)),
				"backups: the place to restore to, %q, does not exist (the tree goes back where it was)", parent)
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
			return fail(exitFailure, "",
				"backups: the place to restore to, %q, is or passes through a symbolic link or a mount point: restore goes through neither, which the agent could have pointed anywhere", parent)
		case err != nil:
			return fail(exitFailure, "", "backups: the place to restore to, %q: %v", parent, err)
		}
		defer d.Close()
		// Ctrl-C, a hangup or a TERM stops the restore, which removes
		// what it made: left to end the process, they left a partial
		// tree, root's and 0700, in the workspace under the restore's
		// temporary name, which the workspace's owner cannot remove.
		ctx, stop := signal.NotifyContext(context.Background(), unix.SIGINT, unix.SIGTERM, unix.SIGHUP)
		defer stop()
		if testHookRestoring != nil {
			testHookRestoring(ctx)
		}
		if err := store.RestoreContext(ctx, rest[0], d, name, owner); errors.Is(err, context.Canceled) {
			return fail(exitFailure, "", "backups: the restore of %s was interrupted: nothing was restored, and what it had made is removed", rest[0])
		} else if errors.Is(err, backup.ErrExists) {
			return fail(exitFailure, "give another name with --as NAME", "backups: %v", err)
		} else if errors.Is(err, backup.ErrCorrupt) {
			return fail(exitFailure, "`launcher backups verify "+rest[0]+" --workspace DIR` checks the whole backup", "backups: %v", err)
		} else if err != nil {
			// A full or read-only disk, a directory refused: another
			// name would not help.
			return fail(exitFailure, "", "backups: %v", err)
		}
		fmt.Fprintf(e.stdout, "restored %s to %q\n", rest[0], filepath.Join(parent, name))
	}
	return nil
}

// testHookRestoring, set by a test, runs just before a restore starts,
// with the context a signal cancels.
var testHookRestoring func(ctx context.Context)

// openBeneath opens the directory rel beneath ws (itself reached through
// no symbolic link), refusing links and mounts on the way.
func openBeneath(ws, rel string) (*os.File, error) {
	wfd, err := unix.Openat2(unix.AT_FDCWD, ws, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return nil, err
	}
	defer unix.Close(wfd)
	fd, err := unix.Openat2(wfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(ws, rel)), nil
}

// workspaceOwner is the user and group that own the workspace directory
// ws (not following a link): whom a restored tree is given to.
func workspaceOwner(ws string) (backup.Owner, error) {
	var st unix.Stat_t
	if err := unix.Lstat(ws, &st); err != nil {
		return backup.Owner{}, fmt.Errorf("the workspace %q: %w", ws, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return backup.Owner{}, fmt.Errorf("the workspace %q is not a directory", ws)
	}
	return backup.Owner{UID: int(st.Uid), GID: int(st.Gid)}, nil
}

// shownType is t as show prints it: plain when it is one of the types an
// entry has, quoted otherwise (the manifest is data).
func shownType(t backup.Type) string {
	switch t {
	case backup.TypeFile, backup.TypeDir, backup.TypeSymlink, backup.TypeFIFO, backup.TypeSocket, backup.TypeDevice:
		return string(t)
	}
	return strconv.Quote(string(t))
}

// storeFail is a store's error as the CLI's: an id that is not one is the
// caller's mistake (exit 120, with where the ids are); anything else is a
// failure.
func storeFail(err error) error {
	if errors.Is(err, backup.ErrBadID) {
		return fail(exitUsage, "`launcher backups list --workspace DIR` shows the ids", "backups: %v", err)
	}
	return fail(exitFailure, "", "backups: %v", err)
}
