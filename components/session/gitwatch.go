package session

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs"
)

// configWatch is the launcher's inotify watch on the git config files
// the last read of the workspace's configs read or looked for
// (fs.GitConfigWatched): each file that exists, and the directory each
// lies in (or, for one that does not exist yet, the nearest directory
// above it that does). fs holds the same inotify descriptor (fd 10) and
// alone reads its events (fs.ConfigNews): before each change it serves,
// it asks the kernel whether an event waits (one ioctl, FIONREAD), and
// reads those that do. The kernel queues the event within the system
// call that edits, makes, renames or removes the file, so a change fs
// serves after the edit finds it. One that concerns a config (a watched
// file's own, or one about a name of names in the directory watched
// for it) has
// fs ask the launcher over the approval channel to read the configs
// again (recheck) before the change is checked.
type configWatch struct {
	mu   sync.Mutex
	fd   int            // the inotify descriptor; fs has a copy of it (File)
	seen map[int32]bool // every watch descriptor armed so far
	last []string       // the files last armed
	// names are the names on the way to a config in each directory
	// watched (fs.WatchedName: its watch descriptor and the name), for
	// fs to tell the events by. Per directory: a name of one directory's
	// config (config in a .git) is none in another (the workspace's
	// root, watched for a .git to be), where the agent may write it.
	names map[string]bool
	// byName is each name of names, in any directory watched: sent in
	// their stead when they are more than maxWatchedNames.
	byName map[string]bool
}

// maxWatchedNames bounds the names the launcher sends fs per directory
// (some 30 bytes each, in answers of at most 1 MiB, beside the paths
// the configs name): past it, fs is sent each name for every directory
// watched, as one per repository's .git would be too many. Names are up
// to 255 bytes: where those still do not fit, approve's answer says
// every event concerns a config (approve.WatchAll).
var maxWatchedNames = 8192 // a variable for tests

// Events that concern a watched config file, and a directory on the way
// to one (IN_ONLYDIR: a directory named so is watched only if it is
// one). IN_MODIFY comes with each write, so an edit in place is seen
// before it is closed. Each is added to what the inode is watched for
// already (IN_MASK_ADD): a watch stays until its file is removed, its
// events concerning a config fs no longer reads costing a recheck.
const (
	fileEvents = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF
	dirEvents  = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR
)

func newConfigWatch() (*configWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("session: a watch on the git configs (inotify): %w", err)
	}
	return &configWatch{fd: fd, seen: map[int32]bool{}}, nil
}

// File is a copy of the descriptor, for fs. Passing it on may clear
// O_NONBLOCK (os/exec takes it blocking): fs reads only what FIONREAD
// says waits.
func (w *configWatch) File() (*os.File, error) {
	fd, err := unix.Dup(w.fd)
	if err != nil {
		return nil, fmt.Errorf("session: the git config watch for fs: %w", err)
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "git config watch"), nil
}

// Close closes the launcher's descriptor (fs keeps its own); an arm
// after it watches nothing.
func (w *configWatch) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return nil
	}
	err := unix.Close(w.fd)
	w.fd = -1
	return err
}

// arm watches files (absolute) from now on, in place of those armed
// before (whose watches stay, their events concerning nothing).
// fresh: a watch was armed on something not watched before, so what
// it covers may have changed before it was armed (the caller reads the
// configs again); notes say what could not be watched.
func (w *configWatch) arm(files []string) (fresh bool, notes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names, w.byName, w.last = map[string]bool{}, map[string]bool{}, files
	fd := w.fd
	if fd < 0 {
		return false, []string{"the git configs (not watched: the session is stopping)"}
	}
	add := func(p string, mask uint32) (int32, error) {
		wd, err := unix.InotifyAddWatch(fd, p, mask|unix.IN_MASK_ADD)
		if err == nil && !w.seen[int32(wd)] {
			w.seen[int32(wd)], fresh = true, true
		}
		return int32(wd), err
	}
	watchDir := func(f string) {
		// The nearest directory that exists, and the name in it on the
		// way to f: a .git/config of a repository not made yet is
		// watched as ".git" in the working tree's root.
		dir, name := filepath.Dir(f), filepath.Base(f)
		for range 256 {
			if wd, err := add(dir, dirEvents); err == nil {
				w.names[fs.WatchedName(wd, name)] = true
				w.byName[fs.WatchedName(fs.AnyWatch, name)] = true
				return
			} else if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) || dir == filepath.Dir(dir) {
				notes = append(notes, fmt.Sprintf("%s (not watched for the person's edits: %v)", f, err))
				return
			}
			dir, name = filepath.Dir(dir), filepath.Base(dir)
		}
	}
	for _, f := range files {
		watchDir(f)
		// A config that is a link (a ~/.gitconfig kept with dotfiles) is
		// edited where it leads: that directory is watched too.
		if real, err := filepath.EvalSymlinks(f); err == nil && real != f {
			watchDir(real)
		}
		if _, err := add(f, fileEvents); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
			notes = append(notes, fmt.Sprintf("%s (not watched for the person's edits: %v)", f, err))
		}
	}
	return fresh, notes
}

// rearm arms the files last armed again, before they are read: a file
// replaced since (git config renames a new config into place) is
// watched at its path again, so the read after need not be repeated.
func (w *configWatch) rearm() {
	w.mu.Lock()
	last := w.last
	w.mu.Unlock()
	w.arm(last)
}

// watched is the names on the way to a config in the directories the
// last arm watches, each with its directory's watch (fs.ConfigNews's).
func (w *configWatch) watched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.names) > maxWatchedNames {
		return slices.Sorted(maps.Keys(w.byName))
	}
	return slices.Sorted(maps.Keys(w.names))
}
