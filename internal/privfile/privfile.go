// Package privfile replaces a private file (a vault, a token store)
// atomically and durably.
package privfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotDurable: the new file is in place, but syncing its directory
// failed, so a crash now might bring back the old one.
var ErrNotDurable = errors.New("the change is made, but its directory could not be synced")

// Replace replaces the file at path with data: a new file (mode 0600) in
// the same directory, written and synced, renamed over the old one, and
// the directory synced. A crash leaves the old file or the new one, never
// half of either. After the rename an error wraps ErrNotDurable: the
// change is made. The caller checks the directory first.
func Replace(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600 already; say so rather than rely on it.
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	renamed = true
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotDurable, err)
	}
	return nil
}
