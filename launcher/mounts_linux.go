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

// setupMounts shapes the mount namespace stage 2 was cloned into:
//
//  1. private propagation, so nothing mounted here reaches the host;
//  2. the plan's trees are opened without following symlinks and cloned,
//     each with its own flags (write trees noexec, nosuid, nodev and, as
//     root, idmapped onto the throwaway uid; read and exec trees read-only);
//  3. every host mount becomes read-only and set-uid-free: chmod, utimes or
//     a new file anywhere the policy does not grant writing fail with
//     EROFS, whatever the agent's uid owns (Landlock before ABI 8 does not
//     mediate metadata changes);
//  4. socket directories are covered, /tmp and /dev/shm replaced by private
//     tmpfs, /proc replaced by this pid namespace's;
//  5. the trees are mounted again, in place or on fresh mount points in
//     the covering tmpfs, which then become read-only too.
func setupMounts(p *Plan) error {
	m := p.Mounts
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	userns := -1
	if slices.ContainsFunc(m.Trees, func(t TreePlan) bool { return t.Idmap }) {
		f := os.NewFile(fdUserns, "userns")
		defer f.Close()
		userns = int(f.Fd())
	}
	var trees []detached
	defer func() {
		for _, t := range trees {
			t.close()
		}
	}()
	for _, t := range m.Trees {
		d, err := detach(t, p.Identity.Owner, userns)
		if err != nil {
			return err
		}
		trees = append(trees, d)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return fmt.Errorf("make the host's mounts read-only: %w", err)
	}
	// Directories that hold Unix sockets (the session bus, docker.sock,
	// X11) disappear under an empty tmpfs (SR-08), read-only once any
	// listed path beneath them is grafted back.
	for _, d := range m.Hide {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	size := "size=" + strconv.FormatInt(m.TmpSize, 10) + ",mode=1777"
	for _, d := range []string{"/tmp", "/dev/shm"} {
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) && d == "/dev/shm" {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, size); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
	}
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
	for _, t := range trees {
		if err := t.attach(m.Hide); err != nil {
			return err
		}
	}
	for _, d := range m.Hide {
		if err := unix.MountSetattr(unix.AT_FDCWD, d, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("hide %s: read-only: %w", d, err)
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

// detached is a clone of a tree, not attached anywhere yet, and the
// no-follow handle of where it came from.
type detached struct {
	TreePlan
	tree, origin int
	dir          bool
}

func (d detached) close() {
	unix.Close(d.tree)
	unix.Close(d.origin)
}

// detach opens the tree refusing symlinks, checks it still has the owner
// stage 1 saw, and clones it with its flags.
func detach(t TreePlan, owner, userns int) (detached, error) {
	origin, err := openNoFollow(t.Path)
	if err != nil {
		return detached{}, fmt.Errorf("tree %s: %w", t.Path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(origin, &st); err != nil {
		unix.Close(origin)
		return detached{}, fmt.Errorf("tree %s: %w", t.Path, err)
	}
	if int(st.Uid) != t.Owner || t.Idmap && int(st.Uid) != owner {
		unix.Close(origin)
		return detached{}, fmt.Errorf("tree %s changed owner since the policy was checked (uid %d, was %d): refusing it", t.Path, st.Uid, t.Owner)
	}
	tree, err := unix.OpenTree(origin, "", unix.AT_EMPTY_PATH|unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		unix.Close(origin)
		return detached{}, fmt.Errorf("tree %s: open_tree: %w", t.Path, err)
	}
	d := detached{TreePlan: t, tree: tree, origin: origin, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if !t.Write {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if !t.Exec {
		attr.Attr_set |= unix.MOUNT_ATTR_NOEXEC
	}
	if t.Idmap {
		attr.Attr_set |= unix.MOUNT_ATTR_IDMAP
		attr.Userns_fd = uint64(userns)
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		d.close()
		hint := ""
		if t.Idmap {
			hint = " (the file system may not support idmapped mounts; launch as the owner instead of root)"
		}
		return detached{}, fmt.Errorf("tree %s: mount_setattr: %w%s", t.Path, err, hint)
	}
	return d, nil
}

// attach mounts the clone again: onto its origin, or, when a private tmpfs
// or a hidden directory now covers it, onto a mount point made fresh in
// that tmpfs (which only stage 2 has touched).
func (d detached) attach(hide []string) error {
	covered := slices.ContainsFunc(append([]string{"/tmp", "/dev/shm"}, hide...), func(c string) bool {
		return policy.Path(c).Contains(policy.Path(d.Path)) && c != d.Path
	})
	if !covered {
		if err := unix.MoveMount(d.tree, "", d.origin, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("tree %s: move_mount: %w", d.Path, err)
		}
		return nil
	}
	if d.dir {
		if err := os.MkdirAll(d.Path, 0o755); err != nil {
			return fmt.Errorf("tree %s: %w", d.Path, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(d.Path), 0o755); err != nil {
			return fmt.Errorf("tree %s: %w", d.Path, err)
		}
		if err := os.WriteFile(d.Path, nil, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("tree %s: %w", d.Path, err)
		}
	}
	if err := unix.MoveMount(d.tree, "", unix.AT_FDCWD, d.Path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("tree %s: move_mount: %w", d.Path, err)
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
