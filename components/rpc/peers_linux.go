package rpc

import (
	"log/slog"
	"net"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// peerFilter is a listener that closes, before any TLS, every Unix-socket
// connection whose process (SO_PEERCRED, as the kernel recorded it at
// connect) runs under a uid not in uids: file modes and mutual TLS are
// then the second and third layers, not the only ones.
type peerFilter struct {
	net.Listener
	uids []uint32
	log  *slog.Logger
	// Refusals are logged at most once a second, with the number not
	// logged since: any local user may connect, and a line for each
	// would let one fill the component's log and silence it.
	last    time.Time
	skipped int
}

func (p *peerFilter) Accept() (net.Conn, error) {
	for {
		c, err := p.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			return c, nil // not a Unix socket: nothing to ask the kernel
		}
		uid, ok := peerUID(uc)
		if ok && slices.Contains(p.uids, uid) {
			return c, nil
		}
		// Logged before the close, which its caller may see at once.
		if now := time.Now(); now.Sub(p.last) >= time.Second {
			p.log.Warn("refused", "caller", "uid "+uidString(uid, ok), "reason", "peer_uid", "more_not_logged", p.skipped)
			p.last, p.skipped = now, 0
		} else {
			p.skipped++
		}
		c.Close()
	}
}

func peerUID(c *net.UnixConn) (uint32, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return 0, false
	}
	return cred.Uid, true
}

func uidString(uid uint32, ok bool) string {
	if !ok {
		return "unknown"
	}
	return strconv.FormatUint(uint64(uid), 10)
}
