package report

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A --bench FIFO with no writer blocked site build forever: refused at
// once, by name.
func TestReadRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "bench.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo+" is a FIFO") {
			t.Errorf("Read(FIFO): %v, want it refused as a FIFO", err)
		}
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Error("Read(FIFO) still waits after 5 s")
	}
}
