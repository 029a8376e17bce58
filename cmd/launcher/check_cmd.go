package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/bash"
	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/policy"
)

const checkHelp = `Usage:
  launcher check url --policy FILE [--resolve HOST=IP]... [--json] URL
  launcher check command --policy FILE [--json] 'COMMAND LINE'
  launcher check script [--json] SCRIPT|-   (see launcher code --help)

check command prints what the bash component would decide for a shell
command line under the policy's [commands] table (and its built-in
protections): auto, approve, confirm-delete or refuse, the rule that
decided and the simple command it was about. Nothing is run. It exits 0
for auto, 119 for anything else.

Prints the decision the net component's proxy would make for URL under
the policy's [network] table: the host's rule (allow, deny, block_all),
then each address the host resolves to with its class (public, private,
loopback, metadata, …) and whether the proxy may dial it. Nothing is sent
to the URL's host. --resolve gives the addresses of a name (repeat it for
several); a name without one is looked up with this machine's resolver,
which the proxy will do again, itself, at request time.

Exits 0 when the proxy would allow the request and 119 when it would
refuse it; 125 when the name is allowed but this machine's resolver
failed, so its addresses could not be checked (give them with --resolve).
` + exitCodesHelp

// resolveFlags collects --resolve HOST=IP.
type resolveFlags map[string][]netip.Addr

func (r resolveFlags) String() string { return "" }

// repeatable: a name may resolve to several addresses, as the help says,
// and the proxy classifies each.
func (r resolveFlags) repeatable() {}

func (r resolveFlags) Set(v string) error {
	host, ip, ok := strings.Cut(v, "=")
	a, err := netip.ParseAddr(ip)
	if !ok || host == "" || err != nil {
		return fmt.Errorf("--resolve %q: want HOST=IP", v)
	}
	// Normalised as the URL's host is (IDNA, case, trailing dot), so
	// that the name is found whichever way it is spelt: one passed over
	// would be looked up with this machine's resolver instead.
	h, err := netc.NormalizeHost(host)
	if err != nil {
		return fmt.Errorf("--resolve %q: want HOST=IP: %v", v, err)
	}
	if h.IsIP() {
		return fmt.Errorf("--resolve %q: want HOST=IP with HOST a name (an address is its own)", v)
	}
	r[h.Name] = append(r[h.Name], a.Unmap())
	return nil
}

func (e env) check(args []string) error {
	if len(args) > 0 && args[0] == "command" {
		return e.checkCommand(args[1:])
	}
	if len(args) > 0 && args[0] == "script" {
		return e.checkScript(args[1:])
	}
	if len(args) == 0 || args[0] != "url" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(e.stdout, checkHelp)
			return nil
		}
		return fail(exitUsage, "run `launcher check --help`", "check: want `check url ...`, `check command ...` or `check script ...`")
	}
	fset := flags("check url")
	file := fset.String("policy", "", "")
	asJSON := fset.Bool("json", false, "")
	resolve := resolveFlags{}
	fset.Var(resolve, "resolve", "")
	rest, err := e.parse(fset, checkHelp, args[1:], 1)
	if err != nil {
		return err
	}
	p, err := e.checkedPolicy("check url", *file)
	if err != nil {
		return err
	}
	if p.Network.Mode != policy.NetProxy {
		return fail(exitUsage, `set [network] mode = "proxy"`, "check url: the policy's network mode is %q: no proxy decides its requests", p.Network.Mode)
	}
	u, err := url.Parse(rest[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(exitUsage, "", "check url: %q is not an http or https URL", rest[0])
	}
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	h, port, err := netc.SplitHostPort(u.Host, port)
	if err != nil {
		return fail(exitUsage, "", "check url: %v", err)
	}
	eg, err := netc.NewEgress(p.Network, nil)
	if err != nil {
		return fail(exitFailure, "", "check url: %v", err)
	}
	hostAddrs, err := netc.InterfaceAddrs() // as net does, on this machine
	if err != nil {
		return fail(exitFailure, "", "check url: %v", err)
	}
	eg.SetHostAddrs(hostAddrs)
	addrs, how := resolve[h.Name], "--resolve"
	var lookupErr error
	if !h.IsIP() && addrs == nil {
		how = "this machine's resolver"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		addrs, lookupErr = checkLookup(ctx, h.Name)
		cancel()
		if lookupErr != nil {
			how = "this machine's resolver, which failed: " + lookupErr.Error()
		}
	}
	v, per := eg.Explain(h, port, addrs)
	if *asJSON {
		type addr struct {
			Addr    string `json:"addr"`
			Class   string `json:"class"`
			Allowed bool   `json:"allowed"`
			Rule    string `json:"rule"`
			Detail  string `json:"detail"`
		}
		out := struct {
			URL      string `json:"url"`
			Host     string `json:"host"`
			Port     uint16 `json:"port"`
			Allowed  bool   `json:"allowed"`
			Rule     string `json:"rule"`
			Detail   string `json:"detail"`
			Resolved string `json:"resolved_by,omitempty"`
			Addrs    []addr `json:"addresses"`
		}{URL: rest[0], Host: h.String(), Port: port, Allowed: v.Allowed, Rule: v.Rule, Detail: v.Detail, Addrs: []addr{}}
		if !h.IsIP() {
			out.Resolved = how
		}
		for _, a := range per {
			out.Addrs = append(out.Addrs, addr{a.Addr.String(), string(a.Class), a.Allowed, a.Rule, a.Detail})
		}
		if err := e.writeJSON(out); err != nil {
			return err
		}
	} else {
		verdict := "allowed"
		if !v.Allowed {
			verdict = "refused"
		}
		fmt.Fprintf(e.stdout, "%s %s: %s by %s: %s\n", rest[0], net.JoinHostPort(h.String(), fmt.Sprint(port)), verdict, v.Rule, v.Detail)
		if !h.IsIP() {
			fmt.Fprintf(e.stdout, "addresses (from %s):\n", how)
		}
		for _, a := range per {
			ok := "may be dialled"
			if !a.Allowed {
				ok = "refused by " + a.Rule
			}
			fmt.Fprintf(e.stdout, "  %-40s %-14s %s\n", a.Addr, a.Class, ok)
		}
	}
	if !v.Allowed && lookupErr != nil && eg.DecideHost(h, port).Allowed {
		// The name is allowed and its addresses are unknown here: no rule
		// refuses it (net would look the name up itself, and fail only if
		// its own lookup did, 502 resolve-failed), so it is no "would refuse".
		return fail(exitFailure, "give the name's addresses with --resolve HOST=IP",
			"check url: %s is allowed by name (%s), but its addresses could not be checked: this machine's resolver failed: %v", h, eg.DecideHost(h, port).Rule, lookupErr)
	}
	if !v.Allowed {
		return silentExit(exitDenied)
	}
	return nil
}

// checkLookup looks a name up for check url (a variable for the tests,
// which send no query).
var checkLookup = func(ctx context.Context, name string) ([]netip.Addr, error) {
	return (&net.Resolver{PreferGo: true}).LookupNetIP(ctx, "ip", name)
}

// checkCommand is `launcher check command`.
func (e env) checkCommand(args []string) error {
	fset := flags("check command")
	file := fset.String("policy", "", "")
	asJSON := fset.Bool("json", false, "")
	rest, err := e.parse(fset, checkHelp, args, 1)
	if err != nil {
		return err
	}
	p, err := e.checkedPolicy("check command", *file)
	if err != nil {
		return err
	}
	a, err := bash.Analyze(rest[0])
	if err != nil {
		return fail(exitUsage, "", "check command: %v", err)
	}
	protected := make([]string, 0, len(p.Files.Protected))
	for _, pr := range p.Files.Protected {
		if rel, err := filepath.Rel(string(p.Workspace.Path), string(pr)); err == nil {
			protected = append(protected, rel)
		}
	}
	d := bash.DecideWith(a, p.Commands, bash.Options{Workspace: string(p.Workspace.Path), Protected: protected,
		Authority: authorityPaths(*file, "")})
	if *asJSON {
		if err := e.writeJSON(d); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "%s by %s: %s\n", d.Action, d.Rule, printable(d.Reason))
		if d.Command != "" {
			fmt.Fprintf(e.stdout, "  command: %s\n", printable(d.Command))
		}
		for _, t := range d.Targets {
			fmt.Fprintf(e.stdout, "  would delete: %s\n", printable(t))
		}
	}
	if d.Action != bash.Auto {
		return silentExit(exitDenied)
	}
	return nil
}

// checkedPolicy reads and parses the policy a check command names (no
// pin: nothing is launched).
func (e env) checkedPolicy(what, file string) (*policy.Policy, error) {
	if file == "" {
		return nil, fail(exitUsage, "run `launcher check --help`", "%s: --policy FILE is required", what)
	}
	data, err := readPolicy(file)
	if err != nil {
		return nil, err
	}
	p, err := policy.Parse(file, data)
	if err != nil {
		return nil, e.invalid(file, err)
	}
	return p, nil
}
