package proxy

import (
	"errors"
	"net"
	"net/netip"
	"testing"
)

// TestInterfaceAddrsFailsClosed: when the machine's addresses cannot be
// read, net must not start with none (its public addresses would pass
// the SSRF check as anyone's): InterfaceAddrs says so. What it reads is
// unmapped, whatever form the list gives.
func TestInterfaceAddrsFailsClosed(t *testing.T) {
	saved := interfaceAddrs
	t.Cleanup(func() { interfaceAddrs = saved })

	interfaceAddrs = func() ([]net.Addr, error) { return nil, errors.New("netlink: permission denied") }
	if as, err := InterfaceAddrs(); err == nil {
		t.Errorf("a failed read gave %v and no error: the host's public addresses would pass as public", as)
	}

	interfaceAddrs = func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("203.0.114.7"), Mask: net.CIDRMask(24, 32)}, &net.IPAddr{IP: net.ParseIP("2001:4860::1")}}, nil
	}
	as, err := InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("203.0.114.7"), netip.MustParseAddr("2001:4860::1")}
	if len(as) != len(want) || as[0] != want[0] || as[1] != want[1] {
		t.Errorf("read %v, want %v", as, want)
	}

	interfaceAddrs = func() ([]net.Addr, error) { return []net.Addr{&net.UnixAddr{Name: "x"}}, nil }
	if as, err := InterfaceAddrs(); err == nil {
		t.Errorf("an entry that is no address gave %v and no error", as)
	}

	// The real list reads, here as in net.
	interfaceAddrs = saved
	if as, err := InterfaceAddrs(); err != nil || len(as) == 0 {
		t.Errorf("this machine's addresses: %v, %v", as, err)
	}
}
