package fs

import (
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
)

// ConfigNews is fs's end of the launcher's inotify watch on the git
// configs (package session's configWatch; fs's fd 10): Root.Stale and
// the reading of Root.Refresh's and Root.Recheck's answers. fs alone
// reads the events. One concerns a config when it is about a watched
// file or directory itself (no name: an edit, a removal, a move) or
// about a name the launcher said leads to a config in that watched
// directory (WatchedName: config in a .git, .git in a working tree's
// root, .gitconfig in the home directory, an included file's name);
// others (a file made beside a config, git's lock files, fs's own
// writes in a watched workspace root, config written where only .git
// leads to one) are read and dropped without asking the launcher, which
// would walk the whole workspace again for each.
type ConfigNews struct {
	fd      int
	mu      sync.Mutex
	names   map[string]bool
	pending bool // an event that concerns a config was read: read them again
	buf     []byte
}

// maxNewsReads bounds the reads of one Stale; past it, the configs are
// read again.
const maxNewsReads = 64

// NewConfigNews is the watch on inotify descriptor fd, names the
// launcher's first (each a WatchedName).
func NewConfigNews(fd int, names []string) *ConfigNews {
	n := &ConfigNews{fd: fd, buf: make([]byte, 16<<10)}
	n.setNames(names)
	return n
}

func (n *ConfigNews) setNames(names []string) {
	n.names = make(map[string]bool, len(names))
	for _, s := range names {
		n.names[s] = true
	}
}

// Stale reports whether an event read since the configs were last read
// concerns one: an ioctl (FIONREAD, which TIOCINQ is) when no event
// waits, and a read of those that do. A descriptor that cannot be asked
// or read has news: fs has the configs read rather than guess.
func (n *ConfigNews) Stale() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for range maxNewsReads {
		if n.pending {
			return true
		}
		waiting, err := unix.IoctlGetInt(n.fd, unix.TIOCINQ)
		if err != nil {
			n.pending = true
			return true
		}
		if waiting == 0 {
			return false
		}
		m, err := unix.Read(n.fd, n.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			n.pending = true
			return true
		}
		n.pending = n.concerns(n.buf[:m])
	}
	n.pending = true
	return true
}

// WatchedName is how the launcher tells fs that name, in the directory
// it watches with watch descriptor wd, leads to a git config: "wd/name"
// (no name holds a slash). With wd AnyWatch, the name in any directory
// watched: the launcher says so when one per directory would be too
// many for its answer (asked more often, never less).
func WatchedName(wd int32, name string) string {
	if wd == AnyWatch {
		return "*/" + name
	}
	return strconv.Itoa(int(wd)) + "/" + name
}

// AnyWatch is WatchedName's every directory watched (no descriptor is
// below 1).
const AnyWatch int32 = -1

// concerns reports whether an event of the inotify events b concerns a
// config.
func (n *ConfigNews) concerns(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		// approve.WatchAll: the names were too many for the launcher's
		// answer, and every event is taken to concern a config.
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 || len(name) == 0 || n.names[approve.WatchAll] || n.names[WatchedName(ev.Wd, string(name))] || n.names[WatchedName(AnyWatch, string(name))] {
			return true
		}
		b = b[end:]
	}
	return len(b) > 0
}

// Read has the configs read again through ask (the approval channel's
// Client.RefreshWatch or Recheck), and takes the names its answer says
// lead to a config. Events read after Read begins count for the next
// Stale; a read that failed leaves the news pending.
func (n *ConfigNews) Read(ask func() (paths, notes, names []string, err error)) (paths, notes []string, err error) {
	n.mu.Lock()
	n.pending = false
	n.mu.Unlock()
	paths, notes, names, err := ask()
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		n.pending = true
		return nil, nil, err
	}
	n.setNames(names)
	return paths, notes, nil
}
