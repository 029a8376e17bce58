package probe

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// sockaddr parses IP:PORT or [IPv6]:PORT.
func sockaddr(s string) (int, unix.Sockaddr, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return 0, nil, probeError{fmt.Sprintf("address %q: %v", s, err)}
	}
	if ap.Addr().Is4() {
		return unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, nil
	}
	return unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}, nil
}

// socket opens a socket with send and receive timeouts, so that nothing
// the probe does blocks for long.
func socket(family, typ, proto int) (int, error) {
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, err
	}
	tv := unix.Timeval{Sec: 2}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return fd, nil
}

func tcpConnect(addr string) error { return onTCPSocket(addr, unix.Connect) }

func tcpBind(addr string) error { return onTCPSocket(addr, unix.Bind) }

// tcpListen listens without binding first: the kernel binds an ephemeral
// port, a path Landlock's bind hook does not see.
func tcpListen(network string) error {
	family := unix.AF_INET
	if network == "tcp6" {
		family = unix.AF_INET6
	}
	fd, err := socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return setupErr("socket", err)
	}
	defer unix.Close(fd)
	return unix.Listen(fd, 1)
}

// onTCPSocket opens a TCP socket of addr's family and applies op to it.
// The socket() call is part of the attempt: where no network namespace
// can be made, seccomp refuses it (SR-03's fallback), and that refusal is
// the connection's.
func onTCPSocket(addr string, op func(int, unix.Sockaddr) error) error {
	family, sa, err := sockaddr(addr)
	if err != nil {
		return err
	}
	fd, err := socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return op(fd, sa)
}

// udpSend sends one datagram on a connected socket and waits for the
// echo. On a connected UDP socket an ICMP port-unreachable comes back as
// ECONNREFUSED; no answer within 2 s is EAGAIN. A refused socket() is
// the datagram's refusal, as for TCP: where no network namespace can be
// made, seccomp refuses AF_INET sockets (SR-03), and UDP has no Landlock
// rule behind it.
func udpSend(addr string) error {
	family, sa, err := sockaddr(addr)
	if err != nil {
		return err
	}
	fd, err := socket(family, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return err
	}
	msg := []byte("pinfold-probe")
	if _, err := unix.Write(fd, msg); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return err
	}
	if string(buf[:n]) != string(msg) {
		return probeError{fmt.Sprintf("unexpected echo %q", buf[:n])}
	}
	return nil
}

func mptcpSocket() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// tcpVariants tries the TCP variants Landlock's TCP rules do not check
// (SR-05), in both IP families: nil when any opens, else the first
// error (MPTCP over IPv4's).
func tcpVariants() error {
	var first error
	for _, family := range []int{unix.AF_INET, unix.AF_INET6} {
		for _, proto := range []int{unix.IPPROTO_MPTCP, unix.IPPROTO_SMC} {
			fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
			if err == nil {
				unix.Close(fd)
				return nil
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

func unixSocket() error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// unixAny tries both ways to a Unix socket that can reach a server that
// seccomp's rule covers, so that dropping either shows (the register's
// SR-08): socket(AF_UNIX), and a datagram socketpair, which can sendto
// any path. (A stream socketpair is connected only to itself: allowed.)
func unixAny() error {
	first := unixSocket()
	if first == nil || socketpair("dgram") == nil {
		return nil
	}
	return first
}

// unixConnect connects to a pathname socket, or to an abstract one when
// name starts with "@". The socket() call itself is part of the attempt:
// a refusal there is a refusal of the connection.
func unixConnect(name string) error {
	fd, err := socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: name})
}

func socketpair(kind string) error {
	typ := map[string]int{"stream": unix.SOCK_STREAM, "dgram": unix.SOCK_DGRAM}[kind]
	if typ == 0 {
		return probeError{fmt.Sprintf("socketpair kind %q: want stream or dgram", kind)}
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	return err
}

// tfoConnect connects by TCP Fast Open: the connect happens inside
// sendto, where Landlock's connect hook does not look.
func tfoConnect(addr string) error {
	// sendto and sendmsg, each on a socket of its own: each has a
	// seccomp rule of its own (SR-06), and one that works is the connect.
	// sendmmsg is not tried.
	var first error
	for _, send := range []func(int, unix.Sockaddr) error{
		func(fd int, sa unix.Sockaddr) error { return unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa) },
		func(fd int, sa unix.Sockaddr) error {
			_, err := unix.SendmsgN(fd, []byte("x"), nil, sa, unix.MSG_FASTOPEN)
			return err
		},
	} {
		err := onTCPSocket(addr, send)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// socketOnly creates a socket of the family and closes it.
// vsockSocketpair asks for a pair of vsock sockets: vsock has none, so
// the kernel answers EOPNOTSUPP once the family is reached; a filter that
// refuses the family answers EAFNOSUPPORT before.
func vsockSocketpair() error {
	fds, err := unix.Socketpair(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.Close(fds[0])
	return unix.Close(fds[1])
}

func socketOnly(family, typ int) error {
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
