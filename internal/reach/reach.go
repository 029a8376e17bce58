// Package reach says when a path the launcher cannot look at is out of
// the agent's reach as well, so that there is nothing to cover or warn
// about.
//
// The agent holds the launcher's uid and groups or fewer, and no
// capability: a lookup the kernel refuses the launcher it refuses the
// agent. The exception is a directory of the launcher's own uid: its
// owner may chmod it, the agent is that uid, and Landlock does not govern
// chmod. As root, a refused lookup means a file system that does not
// honour root (FUSE, NFS with root squashed), and nothing is concluded.
package reach

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Out says whether err, an unprivileged launcher's failure to look at
// path (absolute), shows that the agent cannot reach path either: a
// directory on the way to it refuses this uid its search permission,
// and that directory's owner is another uid. It holds only where the
// agent is this process's uid or less (an unprivileged launch): a
// component of another uid than the agent's must not ask it.
func Out(path string, err error) bool {
	euid := os.Geteuid()
	if euid == 0 || !errors.Is(err, fs.ErrPermission) || !filepath.IsAbs(path) {
		return false
	}
	// From the root down: the first directory this uid may not search.
	// Each step's search was granted by the one above it, so that
	// directory can be looked at.
	var steps []string
	for d := filepath.Dir(filepath.Clean(path)); ; d = filepath.Dir(d) {
		steps = append(steps, d)
		if d == "/" {
			break
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		err := unix.Faccessat(unix.AT_FDCWD, steps[i], unix.X_OK, unix.AT_EACCESS)
		if err == nil {
			continue
		}
		var st unix.Stat_t
		return err == unix.EACCES && unix.Stat(steps[i], &st) == nil && int(st.Uid) != euid
	}
	return false
}
