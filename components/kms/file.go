package kms

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/privfile"
)

// DefaultPath is where the person's vault lives:
// $XDG_CONFIG_HOME/pinfold/vault, else ~/.config/pinfold/vault.
func DefaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("vault: no config directory: %w (give --vault PATH)", err)
	}
	return filepath.Join(dir, "pinfold", "vault"), nil
}

// ErrNoVault: the vault file does not exist yet.
var ErrNoVault = errors.New("vault: no vault yet")

// ReadFile reads a vault file. It refuses a symlink, anything but a
// regular file, a file others may read or write, more than a vault can
// hold, and a directory that is not the caller's or that others may
// write (as WriteFile does: they could put back an older vault), or above
// which a directory others may write (without the sticky bit) lies.
func ReadFile(path string) ([]byte, error) {
	if err := privfile.CheckDir(filepath.Dir(path), "vault"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vault: %w", err)
	}
	// And the directories above: one others may write lets them swap
	// the vault's directory for another sealed under the same key.
	if err := privfile.CheckAncestors(filepath.Dir(path), "vault"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vault: %w", err)
	}
	b, err := readPrivate(path, maxVaultSize, "vault")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s (`launcher secrets add NAME` makes one)", ErrNoVault, path)
	}
	return b, err
}

// ReadKeyFile reads a key file, with the same refusals as ReadFile.
func ReadKeyFile(path string) (Key, error) {
	b, err := readPrivate(path, 4096, "key file")
	if err != nil {
		return Key{}, err
	}
	defer clear(b)
	return KeyFile(b)
}

func readPrivate(path string, limit int64, what string) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted at the path must not block the open
	// before the checks below refuse it.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		if strings.HasPrefix(path, "/dev/fd/") || strings.HasPrefix(path, "/proc/self/fd/") {
			// Process substitution, <(cmd): a pipe, not a file others
			// are kept out of.
			return nil, fmt.Errorf("%s %s is a descriptor (a pipe, as <(cmd) gives), not a file: refusing it (keep the key in a file of mode 0600)", what, path)
		}
		return nil, fmt.Errorf("%s %s is a symlink: refusing it", what, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s %s is not a regular file", what, path)
	case st.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()):
		return nil, fmt.Errorf("%s %s belongs to uid %d, not to you (uid %d): refusing it", what, path, st.Sys().(*syscall.Stat_t).Uid, os.Geteuid())
	case st.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s %s has mode %04o: others may read or change it (chmod 600 %s)", what, path, st.Mode().Perm(), path)
	case st.Size() > limit:
		return nil, fmt.Errorf("%s %s is %d bytes, more than %d", what, path, st.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// ErrNotDurable: the new vault is in place, but syncing its directory
// failed, so a crash now might bring back the old one.
var ErrNotDurable = errors.New("vault: the change is made, but the directory could not be synced")

// WriteFile replaces the vault file with data, atomically: a new file in
// the same directory, written and synced, renamed over the old one, and
// the directory synced. A crash leaves the old vault or the new one,
// never half of either. The directory is made 0700 if missing; one others
// may write is refused (they could put back an older vault). After the
// rename an error is ErrNotDurable: the change is made.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return err
	}
	err = privfile.Replace(path, data)
	if errors.Is(err, privfile.ErrNotDurable) {
		return fmt.Errorf("%w: %v", ErrNotDurable, err)
	}
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

// privateDir makes dir (0700) if missing, and refuses one that is not a
// directory, not the caller's, or writable by others.
func privateDir(dir string) error {
	if err := privfile.Dir(dir, "vault"); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

// Lock takes the vault's lock (a file beside it, flock'ed), so that two
// changes at once cannot lose one another's secrets. It waits for a
// holder, calling waiting first (when not nil), since the holder may be
// at a prompt for as long as its person likes; the returned function
// releases it.
func Lock(path string, waiting func()) (func(), error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vault: lock: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		if waiting != nil {
			waiting()
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vault: lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}
