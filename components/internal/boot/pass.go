package boot

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// The launcher hands a component descriptors it made (a Code Mode
// worker's channel and the pipe that says how it ended, a connection to
// net) over a socketpair: one byte with the descriptors of one job each,
// so that a job's descriptors arrive together or not at all.

// SendFile passes f over c with one byte (SCM_RIGHTS).
func SendFile(c *net.UnixConn, f *os.File) error { return SendFiles(c, f) }

// SendFiles passes fs over c in one message: one byte and their
// descriptors.
func SendFiles(c *net.UnixConn, fs ...*os.File) error {
	fds := make([]int, len(fs))
	for i, f := range fs {
		fds[i] = int(f.Fd())
	}
	_, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(fds...), nil)
	return err
}

// ReceiveFile takes one descriptor SendFile passed; anything else is an
// error (and any descriptors that came with it are closed).
func ReceiveFile(c *net.UnixConn) (*os.File, error) {
	fs, err := ReceiveFiles(c, 1)
	if err != nil {
		return nil, err
	}
	return fs[0], nil
}

// ReceiveFiles takes the n descriptors (at most 4) SendFiles passed in one
// message; any other number is an error (and those that came are closed).
func ReceiveFiles(c *net.UnixConn, n int) ([]*os.File, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	got, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("the passing channel: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	if err != nil || got != 1 || len(fds) != n {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if n == 1 {
			return nil, errors.New("the passing channel: not one descriptor")
		}
		return nil, fmt.Errorf("the passing channel: not %d descriptors", n)
	}
	fs := make([]*os.File, n)
	for i, fd := range fds {
		unix.CloseOnExec(fd)
		// Non-blocking, so that the file is the runtime poller's: reads
		// take deadlines and end at Close, holding no thread meanwhile
		// (code.WorkerEnd's wait, a worker's channel at a run's end).
		unix.SetNonblock(fd, true)
		fs[i] = os.NewFile(uintptr(fd), "passed")
	}
	return fs, nil
}

// PassedListener is a listener whose connections are the descriptors
// passed over c (net serves bash's fetches on it).
type PassedListener struct{ C *net.UnixConn }

// Accept takes the next passed connection.
func (l PassedListener) Accept() (net.Conn, error) {
	f, err := ReceiveFile(l.C)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileConn(f)
}

// Close closes the channel.
func (l PassedListener) Close() error { return l.C.Close() }

// Addr is the channel's.
func (l PassedListener) Addr() net.Addr { return l.C.LocalAddr() }
