package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/policy"
)

// setupMounts shapes the mount namespace stage 2 was cloned into.
func setupMounts(p *Plan) error {
	m := p.Mounts
	// Nothing mounted here may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// What must survive the private /tmp and /dev/shm (listed paths
	// beneath them) and what is idmapped (root launches: the workspace and
	// write paths) is cloned into detached mounts first and attached again
	// afterwards.
	userns := -1
	if len(m.Idmap) > 0 {
		f := os.NewFile(fdUserns, "userns")
		defer f.Close()
		userns = int(f.Fd())
	}
	var kept []detached
	defer func() {
		for _, k := range kept {
			unix.Close(k.fd)
		}
	}()
	for _, t := range mountTargets(m.Keep, m.Idmap) {
		k, err := detach(t.path, t.idmap, userns)
		if err != nil {
			return err
		}
		kept = append(kept, k)
	}
	// Directories that hold Unix sockets (the session bus, docker.sock,
	// X11) disappear under an empty read-only tmpfs (SR-08).
	for _, d := range m.Hide {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	// A private, size-limited /tmp and /dev/shm; nothing written there can
	// be executed.
	size := "size=" + strconv.FormatInt(m.TmpSize, 10) + ",mode=1777"
	for _, d := range []string{"/tmp", "/dev/shm"} {
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) && d == "/dev/shm" {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, size); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
	}
	// A /proc that shows only this pid namespace.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("fresh /proc: %w", err)
	}
	// Fileless execution: memfds in this pid namespace can never be made
	// executable (Linux 6.3+; seccomp refuses MFD_EXEC as well). Only root
	// may set it; elsewhere seccomp refuses every memfd not sealed
	// non-executable.
	if m.Memfd {
		if err := os.WriteFile("/proc/sys/vm/memfd_noexec", []byte("2"), 0); err != nil {
			return fmt.Errorf("vm.memfd_noexec: %w", err)
		}
	}
	for _, k := range kept {
		if err := k.attach(); err != nil {
			return err
		}
	}
	if m.Home != "" {
		if err := os.Mkdir(m.Home, 0o700); err != nil {
			return fmt.Errorf("private home: %w", err)
		}
		if p.Identity.Setuid {
			if err := os.Chown(m.Home, p.Identity.UID, p.Identity.GID); err != nil {
				return fmt.Errorf("private home: %w", err)
			}
		}
	}
	return nil
}

type mountTarget struct {
	path  string
	idmap bool
}

// mountTargets merges the kept and idmapped paths, outermost first. A path
// beneath another target is left out when that target's recursive clone
// already carries it as it must be (idmapped, or not needing it).
func mountTargets(keep, idmap []string) []mountTarget {
	var all []mountTarget
	for _, k := range keep {
		all = append(all, mountTarget{k, slices.Contains(idmap, k)})
	}
	for _, i := range idmap {
		if !slices.Contains(keep, i) {
			all = append(all, mountTarget{i, true})
		}
	}
	slices.SortStableFunc(all, func(a, b mountTarget) int { return len(a.path) - len(b.path) })
	var out []mountTarget
	for _, t := range all {
		covered := slices.ContainsFunc(out, func(o mountTarget) bool {
			return policy.Path(o.path).Contains(policy.Path(t.path)) && (o.idmap || !t.idmap)
		})
		if !covered {
			out = append(out, t)
		}
	}
	return out
}

// detached is a clone of a mount tree, not attached anywhere yet.
type detached struct {
	path string
	fd   int
	dir  bool
}

// detach clones the tree at path; with idmap, through the user namespace,
// so that the agent's throwaway uid reads and writes it as its owner and
// every file it creates is owned by the real owner on disk.
func detach(path string, idmap bool, userns int) (detached, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return detached{}, fmt.Errorf("keep %s: %w", path, err)
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return detached{}, fmt.Errorf("keep %s: open_tree: %w", path, err)
	}
	k := detached{path: path, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
	if idmap {
		attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			unix.Close(fd)
			return detached{}, fmt.Errorf("idmap %s: mount_setattr: %w (the file system may not support idmapped mounts; run as your own user instead of root)", path, err)
		}
	}
	return k, nil
}

// attach mounts the clone at its path again, creating the mount point when
// a fresh tmpfs now covers it.
func (k detached) attach() error {
	if k.dir {
		if err := os.MkdirAll(k.path, 0o755); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
	} else if _, err := os.Lstat(k.path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
		if err := os.WriteFile(k.path, nil, 0o600); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
	}
	if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("keep %s: move_mount: %w", k.path, err)
	}
	return nil
}

// loopbackUp brings up lo in the new network namespace, so the agent can
// talk to itself and to nothing else.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}
