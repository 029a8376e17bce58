package site

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An --evidence FIFO with no writer blocked site build forever; a device
// was read. Both are refused at once, by name.
func TestReadBoundedRefusesOtherFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "evidence.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a FIFO", "/dev/null": "a character device"} {
		done := make(chan error, 1)
		go func() { _, err := ReadBounded(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path+" is "+kind) {
				t.Errorf("ReadBounded(%s): %v, want it refused as %s", path, err, kind)
			}
		case <-time.After(5 * time.Second):
			// Unblock the reader so that the test ends.
			if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
			t.Errorf("ReadBounded(%s) still waits after 5 s", path)
		}
	}
}
