package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// DNS rebinding: a page on evil.example, whose name its owner points at
// the gateway's address, is served by the gateway as its own origin, and
// so the browser lets it read the answers. A name is what such a page
// cannot change: every request must name the gateway as it is served —
// the address the connection came to (what a client that dials an
// address sends), any loopback name on loopback, or one of
// Config.Hosts — in its Host and, when a browser sends one, its Origin.
// A request that names anything else is refused before anything else
// is done with it.

// hostOf is the host of a Host header's or an Origin's authority, without
// its port or brackets, lower-case, without a final dot.
func hostOf(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// CheckHost says why name cannot be one the gateway is served as
// (Config.Hosts): it must be a DNS name (letters, digits, '-' and '.')
// or an IP address, without a port or a scheme.
func CheckHost(name string) error {
	if _, err := netip.ParseAddr(name); err == nil {
		return nil
	}
	if name == "" || len(name) > 253 {
		return errors.New("a host name is 1 to 253 characters")
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("not a DNS name (nor an IP address): a label is empty, too long, or starts or ends with '-'")
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return fmt.Errorf("has %q: give a bare host name or IP address, without a scheme or a port", c)
			}
		}
	}
	return nil
}

// servedAs says whether hostport names the gateway on a connection that
// came to local: local itself, a loopback name when local is loopback,
// or one of its Hosts. An unknown local address (a request not from a
// net/http server) matches only Hosts.
func (g *Gateway) servedAs(hostport string, local netip.Addr) bool {
	host := hostOf(hostport)
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil && local.IsValid() && a.Unmap() == local {
		return true
	}
	if local.IsLoopback() && isLoopback(host) {
		return true
	}
	for _, h := range g.cfg.Hosts {
		if hostOf(h) == host || sameAddr(hostOf(h), host) {
			return true
		}
	}
	return false
}

// sameAddr says whether a and b are both IP addresses and the same one,
// however each is spelled (zeros written out, IPv4 mapped into IPv6): a
// client may write an allowed address otherwise than the operator did.
func sameAddr(a, b string) bool {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	return errA == nil && errB == nil && x.Unmap() == y.Unmap()
}

// checkHost refuses, with 403, a request whose Host or Origin does not
// name the gateway (servedAs), before next sees it.
func (g *Gateway) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var local netip.Addr
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ap, err := netip.ParseAddrPort(a.String()); err == nil {
				local = ap.Addr().Unmap()
			}
		}
		if !g.servedAs(r.Host, local) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("Host %.100q is not a name this gateway is served as (DNS rebinding?): use its address, or ask its operator to allow the name (launcher serve --allow-host)", r.Host))
			return
		}
		if vs := r.Header.Values("Origin"); len(vs) > 0 {
			u, err := url.Parse(vs[0])
			if len(vs) > 1 || err != nil || u.Scheme != "http" && u.Scheme != "https" || !g.servedAs(u.Host, local) {
				httpError(w, http.StatusForbidden, fmt.Sprintf("Origin %.100q is not this gateway's: a page of another site cannot use it", strings.Join(vs, ", ")))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
