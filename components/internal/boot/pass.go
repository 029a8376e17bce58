package boot

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// The launcher hands a component descriptors it made (a Code Mode
// worker's channel, a connection to net) over a socketpair: one byte
// with one descriptor each.

// SendFile passes f over c with one byte (SCM_RIGHTS).
func SendFile(c *net.UnixConn, f *os.File) error {
	_, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(int(f.Fd())), nil)
	return err
}

// ReceiveFile takes one descriptor SendFile passed; anything else is an
// error (and any descriptors that came with it are closed).
func ReceiveFile(c *net.UnixConn) (*os.File, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
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
	if err != nil || n != 1 || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("the passing channel: not one descriptor")
	}
	unix.CloseOnExec(fds[0])
	return os.NewFile(uintptr(fds[0]), "passed"), nil
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
