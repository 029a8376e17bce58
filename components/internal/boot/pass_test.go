package boot

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What SendFiles passes arrives together, and pollable: a read of a
// received pipe whose writer says nothing ends at its deadline (WorkerEnd
// relies on it) rather than holding a thread until the writer closes.
func TestReceiveFilesPollable(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pass")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	send, recv := conn(fds[0]), conn(fds[1])
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := SendFiles(send, r1, r2); err != nil { // Fd: both now blocking
		t.Fatal(err)
	}
	r1.Close()
	r2.Close()
	got, err := ReceiveFiles(recv, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range got {
		defer f.Close()
		if err := f.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatalf("received file %d takes no read deadline: %v", i, err)
		}
		if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("received file %d: a read with nothing written ended with %v, want the deadline", i, err)
		}
	}
	// One message holds one job's descriptors: asking for another number
	// is refused, and what came is closed.
	if err := SendFiles(send, w1); err != nil {
		t.Fatal(err)
	}
	if _, err := ReceiveFiles(recv, 2); err == nil {
		t.Error("one descriptor taken for two")
	}
}
