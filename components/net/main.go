package proxy

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"

	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// The descriptors net gets beyond the bootstrap (3) and the Unix listener
// (4) every component gets.
const (
	fdAgentListener = 5 // the proxy's listener in the agent's network namespace (TCP, 127.0.0.1)
	fdKMS           = 6 // with injection: net's end of a socketpair whose other end kms serves
	// In components mode: the launcher passes net connections whose
	// other ends bash holds (Code Mode's fetch) over this socketpair.
	fdPass = 7
)

// maxBootstrap bounds what net reads from its bootstrap pipe.
const maxBootstrap = 1 << 20

// Bootstrap is everything the launcher hands net: its credential, the
// policy's [network] table, its [[secrets]] rules and, when there are
// rules, the interception CA.
type Bootstrap struct {
	boot.Credential
	Network       policy.Network  `json:"network"`
	Secrets       []policy.Secret `json:"secrets"`
	InjectCertPEM []byte          `json:"inject_cert_pem,omitempty"`
	InjectKeyPEM  []byte          `json:"inject_key_pem,omitempty"`
	// SelfListeners are addresses net must never connect to whatever
	// the policy allows (a gateway's listener): see NewEgress.
	SelfListeners []netip.AddrPort `json:"self_listeners,omitempty"`
}

// resolverFiles are what Go's own resolver reads; net may read them and
// nothing else.
var resolverFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"}

// Main is the net process: the agent's only way to the network. It reads
// its bootstrap, takes its listeners (and its connection to kms when it
// injects secrets), loads the system's roots, confines itself (the
// resolver's files only, no exec, no binding, no Unix sockets) and
// serves the proxy on the agent's listener until it is killed. It returns
// an exit status only when it could not start.
func Main() int {
	return boot.Run(pki.Net, serve)
}

func serve(log *slog.Logger) error {
	// Looked at first: the Go runtime takes free descriptors for itself.
	if !boot.IsListening(fdAgentListener) {
		return errors.New("net runs only as a component the launcher starts (no agent listener on descriptor 5)")
	}
	hasKMS, hasPass := boot.IsSocket(fdKMS), boot.IsSocket(fdPass)
	// In components mode net has a session socket (fd 4) and a
	// credential; beside a wrapper-mode agent it has neither, and no
	// secrets to inject.
	var b Bootstrap
	if boot.IsListening(boot.FDListener) {
		ln, err := boot.Start(pki.Net, maxBootstrap, &b)
		if err != nil {
			return err
		}
		ln.Close() // nothing calls net over the session socket yet (bash will)
	} else if err := boot.Read(pki.Net, maxBootstrap, &b); err != nil {
		return err
	}
	var leaf *pki.Leaf
	if len(b.CertPEM) > 0 {
		var err error
		leaf, err = pki.ParseLeaf(b.CAPEM, b.CertPEM, b.KeyPEM, pki.Net)
		clear(b.KeyPEM)
		if err != nil {
			return err
		}
	}
	agentLn, err := fileListener(fdAgentListener, "agent listener")
	if err != nil {
		return err
	}
	eg, err := NewEgress(b.Network, b.SelfListeners)
	if err != nil {
		return err
	}
	// The machine's own addresses, read now (net cannot after
	// confinement): one reached by its public address is still the host.
	hostAddrs, err := InterfaceAddrs()
	if err != nil {
		return err
	}
	eg.SetHostAddrs(hostAddrs)
	p := &Proxy{
		Decider:  eg,
		Resolver: &net.Resolver{PreferGo: true}, // never a libc module or nscd's socket
		Parse:    SplitHostPort,
		Log:      log,
		AllowECH: b.Network.AllowECH,
	}
	if len(b.Secrets) > 0 {
		if !hasKMS || leaf == nil {
			return errors.New("net runs only as a component the launcher starts (no connection to kms on descriptor 6)")
		}
		in, err := injector(b, leaf, log)
		if err != nil {
			return err
		}
		// A rule's host is intercepted: TLS ends here, the header is set,
		// and the request goes on over TLS verified for the host. Every
		// other host is a byte tunnel.
		in.CheckRedirect = p.CheckRedirect
		p.Intercept = func(h Host, _ uint16) bool { return !h.IsIP() && in.Rule(h.Name) >= 0 }
		p.InterceptTLS = func(ctx context.Context, client net.Conn, h Host, port uint16, upstream net.Conn) error {
			return in.Serve(ctx, client, h.Name, port, in.Rule(h.Name), upstream)
		}
	}
	var passed *net.UnixConn
	if hasPass {
		f := os.NewFile(fdPass, "passing channel")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("passing channel: %w", err)
		}
		passed = c.(*net.UnixConn)
	}
	var read []string
	for _, f := range resolverFiles {
		if _, err := os.Stat(f); err == nil {
			read = append(read, f)
		}
	}
	if err := launcher.ConfineComponent(launcher.ComponentConfinement{Read: read, Connect: true}); err != nil {
		return err
	}
	log.Info("serving", "allow", len(b.Network.Allow), "deny", len(b.Network.Deny), "block_all", b.Network.BlockAll, "allow_ech", b.Network.AllowECH, "secrets", len(b.Secrets), "bash", hasPass)
	if passed != nil {
		// bash's connections get the agent's decisions: the same proxy.
		go p.Serve(boot.PassedListener{C: passed})
	}
	return p.Serve(agentLn)
}

// injector is net's secret injection: the interception CA, the system's
// roots (read now, before confinement) and kms over the connection the
// launcher made.
func injector(b Bootstrap, leaf *pki.Leaf, log *slog.Logger) (*Injector, error) {
	ca, err := ParseInjectCA(b.InjectCertPEM, b.InjectKeyPEM)
	clear(b.InjectKeyPEM)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		return nil, fmt.Errorf("the system's roots: %w", err)
	}
	f := os.NewFile(fdKMS, "kms")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("the connection to kms: %w", err)
	}
	kc, err := rpc.NewClientConn(leaf, pki.KMS, c, nil)
	if err != nil {
		return nil, err
	}
	return &Injector{CA: ca, Rules: b.Secrets, Roots: roots, Log: log,
		Release: func(ctx context.Context, name, host string) ([]byte, error) {
			var r kms.ReleaseResult
			d, err := kc.Call(ctx, "release", kms.ReleaseRequest{Name: name, Host: host}, &r)
			if err != nil {
				return nil, err
			}
			if !d.Allowed {
				return nil, fmt.Errorf("kms refused: %s (%s)", d.Reason, d.Detail)
			}
			return r.Value, nil
		}}, nil
}

// interfaceAddrs is net.InterfaceAddrs (a variable for the tests).
var interfaceAddrs = net.InterfaceAddrs

// InterfaceAddrs are the addresses of this network namespace's
// interfaces. Not reading them is an error, not an empty list: a public
// address of the machine's own would then pass the SSRF check as any
// public address does, and hand the agent every service bound to it.
func InterfaceAddrs() ([]netip.Addr, error) {
	as, err := interfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("cannot read this machine's addresses, which the SSRF check refuses: %w", err)
	}
	var out []netip.Addr
	for _, a := range as {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		na, ok := netip.AddrFromSlice(ip)
		if !ok {
			return nil, fmt.Errorf("cannot read this machine's addresses, which the SSRF check refuses: %q is not an address", a)
		}
		out = append(out, na.Unmap())
	}
	return out, nil
}

func fileListener(fd int, name string) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ln, nil
}
