package gateway

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/internal/userdb"
	"github.com/pinfold/pinfold/policy"
)

// The guest policy keeps the owner's rules for commands, limits and
// domains, but none of the owner's files, homes, the launcher's state or
// the gateway's, no secrets and no private-range exceptions; its only
// write path is its own new workspace; it encodes to text the launcher
// parses back to the same policy.
func TestGuestPolicy(t *testing.T) {
	owner := policy.Default()
	owner.Version = 1
	owner.Mode = policy.ModeComponents
	owner.Workspace.Path = "/srv/project"
	owner.Files = policy.Files{
		Read: []policy.Path{"/", "/usr/share", "/etc/ssl", "/home/alice/.gitconfig", "/srv/project/docs", "/srv", "/var/lib/pinfold/serve/x", "/root",
			"/var/home/alice/.gitconfig", "/var/roothome/.ssh", "/srv/project-b", "/data/customers", "/var/log", "/opt/tool", "/etc/pinfold/x", "/etc"},
		Write:     []policy.Path{"/srv/project"},
		Exec:      []policy.Path{"/usr/bin", "/usr/lib", "/usr/local/bin", "/home/alice/bin", "/var/home/alice/.cargo/bin"},
		Protected: []policy.Path{"/srv/project/.env"},
	}
	owner.Network = policy.Network{Mode: policy.NetProxy, BlockAll: true, Allow: []policy.Domain{"api.example.com"},
		UnsafeAllowPrivate: []policy.CIDR{policy.CIDR(mustPrefix(t, "10.0.0.0/8"))}}
	owner.Secrets = []policy.Secret{{Name: "api", Hosts: []policy.Domain{"api.example.com"}, Header: "x-api-key", Template: "{secret}"}}
	owner.Env = policy.Env{Pass: []policy.EnvName{"PATH", "HOME", "API_TOKEN"}, Set: policy.EnvSet{"HOME": "/home/alice"}}
	owner.Commands.Auto = []policy.Command{"ls", "git status"}

	g, err := guestPolicy(&owner, "/var/lib/pinfold/serve/sessions/ID/workspace", "/var/lib/pinfold/serve", "/usr/local/bin/launcher")
	if err != nil {
		t.Fatal(err)
	}
	if g.Workspace.Path != "/var/lib/pinfold/serve/sessions/ID/workspace" || !slices.Equal(g.Files.Write, []policy.Path{g.Workspace.Path}) {
		t.Errorf("workspace %s, write %v", g.Workspace.Path, g.Files.Write)
	}
	if want := []policy.Path{"/usr/share", "/etc/ssl"}; !slices.Equal(g.Files.Read, want) {
		t.Errorf("read %v, want %v", g.Files.Read, want)
	}
	if want := []policy.Path{"/usr/bin", "/usr/lib", "/usr/local/bin"}; !slices.Equal(g.Files.Exec, want) {
		t.Errorf("exec %v, want %v", g.Files.Exec, want)
	}
	if g.Files.Protected != nil || g.Secrets != nil || g.Network.UnsafeAllowPrivate != nil {
		t.Errorf("protected %v, secrets %v, unsafe %v", g.Files.Protected, g.Secrets, g.Network.UnsafeAllowPrivate)
	}
	if g.Env.Pass != nil || g.Env.Set["HOME"] != "/tmp" || len(g.Env.Set) != 2 {
		t.Errorf("env %+v", g.Env)
	}
	if g.Backups.Quota != guestBackupQuota || owner.Backups.Quota != 3*policy.GiB {
		t.Errorf("backup quota %v for the guest (the owner's %v)", g.Backups.Quota, owner.Backups.Quota)
	}
	// A guest's memory is at most guestMemory, and never unlimited: the
	// owner's "0" gave every guest all of the host's.
	for ownerMem, want := range map[policy.Size]policy.Size{0: guestMemory, 4 * policy.GiB: guestMemory, 256 * policy.MiB: 256 * policy.MiB} {
		o := owner
		o.Limits.Memory = ownerMem
		if g, err := guestPolicy(&o, "/w", "/s", "/l"); err != nil || g.Limits.Memory != want {
			t.Errorf("the owner's memory %v: the guest's %v (%v), want %v", ownerMem, g.Limits.Memory, err, want)
		}
	}
	// And its processes and a Code Mode VM's memory (a cgroup beside the
	// session's): an owner's high limits were every guest's.
	for _, c := range []struct {
		procs, wantProcs policy.Int
		code, wantCode   policy.Size
	}{
		{100000, guestProcesses, 8 * policy.GiB, guestCodeMemory},
		{64, 64, 16 * policy.MiB, 16 * policy.MiB},
	} {
		o := owner
		o.Limits.Processes, o.CodeMode.Memory = c.procs, c.code
		if g, err := guestPolicy(&o, "/w", "/s", "/l"); err != nil || g.Limits.Processes != c.wantProcs || g.CodeMode.Memory != c.wantCode {
			t.Errorf("the owner's processes %v, Code Mode memory %v: the guest's %v, %v (%v), want %v, %v", c.procs, c.code, g.Limits.Processes, g.CodeMode.Memory, err, c.wantProcs, c.wantCode)
		}
	}
	if !slices.Equal(g.Commands.Auto, owner.Commands.Auto) || !slices.Equal(g.Network.Allow, owner.Network.Allow) || !g.Network.BlockAll {
		t.Errorf("the owner's rules were not kept: %+v %+v", g.Commands, g.Network)
	}
	// The owner's policy is untouched.
	if owner.Workspace.Path != "/srv/project" || len(owner.Secrets) != 1 || len(owner.Files.Read) != 16 {
		t.Error("guestPolicy changed the owner's policy")
	}
	// The text the gateway pins parses back to the same policy.
	text := policy.Encode(g)
	back, err := policy.Parse("guest.toml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if string(policy.Encode(back)) != string(text) {
		t.Errorf("the guest policy does not round-trip:\n%s", text)
	}
	for _, leak := range []string{"alice", "/srv", "/var/home", "/var/roothome", "/var/log", "/data", "/opt", "/etc/pinfold", "API_TOKEN", "x-api-key", "10.0.0.0"} {
		if strings.Contains(string(text), leak) {
			t.Errorf("the guest policy mentions %q:\n%s", leak, text)
		}
	}

	// A launcher outside the kept trees is added alone, as a file.
	g, err = guestPolicy(&owner, "/w", "/s", "/var/tmp/it/bin/launcher")
	if err != nil || !slices.Equal(g.Files.Exec, []policy.Path{"/usr/bin", "/usr/lib", "/usr/local/bin", "/var/tmp/it/bin/launcher"}) {
		t.Errorf("exec %v, %v", g.Files.Exec, err)
	}

	wrapper := owner
	wrapper.Mode = policy.ModeWrapper
	if _, err := guestPolicy(&wrapper, "/w", "/s", "/l"); err == nil {
		t.Error("a wrapper-mode policy gave a guest policy")
	}
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1:7480": true, "localhost:7480": true, "LOCALHOST": true, "[::1]:7480": true, "::1": true, "127.9.9.9": true,
		"[::ffff:127.0.0.1]:1": true, "evil.example.com": false, "evil.example.com:7480": false, "10.0.0.1:80": false,
		"localhost.evil.com": false, "": false, "127.0.0.1.nip.io": false,
	} {
		if got := isLoopback(in); got != want {
			t.Errorf("isLoopback(%q) = %v", in, got)
		}
	}
}

// Session logs older than logMaxAge go; newer ones and other files stay.
func TestPruneLogs(t *testing.T) {
	dir := t.TempDir()
	g := &Gateway{logsDir: dir}
	old := time.Now().Add(-logMaxAge - time.Hour)
	for i, name := range []string{"a.log", "b.log", "c.log", "keep.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if i < 2 || name == "keep.txt" {
			os.Chtimes(p, old, old)
		}
	}
	g.pruneLogs()
	if names := namesIn(dir); !slices.Equal(names, []string{"c.log", "keep.txt"}) {
		t.Errorf("left %v", names)
	}
}

// Full access gets the owner's groups from /etc/passwd and /etc/group,
// or only its group: never the gateway's.
func TestOwnerGroups(t *testing.T) {
	if got := groupsOf(userdb.Passwd(), userdb.Group(), 4242424, 77); !slices.Equal(got, []uint32{77}) {
		t.Errorf("a uid with no entry: %v", got)
	}
	if got := groupsOf(userdb.Passwd(), userdb.Group(), 0, 0); len(got) == 0 || got[0] != 0 {
		t.Errorf("root: %v", got)
	}
	dir := t.TempDir()
	write := func(name, text string) []userdb.Entry { return userdbFile(t, dir, name, text) }
	passwd := write("passwd", "root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\nannex:x:1001:1001::/home/annex:/bin/sh\n")
	group := write("group", "root:x:0:\nann:x:1000:\nwheel:x:10:root,ann\ndocker:x:999:annex\naudio:x:29:bob,ann,carol\nbroken:x:oops:ann\nshort:x:30\nann2:x:1000:ann\n")
	for _, c := range []struct {
		uid, gid uint32
		want     []uint32
	}{
		{1000, 1000, []uint32{1000, 10, 29}}, // a name that is a prefix of another's is not it
		{1001, 1001, []uint32{1001, 999}},    // and the longer name is its own
		{0, 0, []uint32{0, 10}},              // root
		{4242, 5, []uint32{5}},               // no entry
	} {
		if got := groupsOf(passwd, group, c.uid, c.gid); !slices.Equal(got, c.want) {
			t.Errorf("uid %d: got %v, want %v", c.uid, got, c.want)
		}
	}
}

// Guests take at most MaxGuests places and one address GuestsPerPeer
// (an IPv6 /64 is one address); owners keep the rest; a place given
// back can be taken again.
func TestReserveGuests(t *testing.T) {
	g := &Gateway{cfg: Config{MaxSessions: 6, MaxGuests: 3, GuestsPerPeer: 2}, sessions: map[string]*session{}, guests: map[netip.Addr]int{}}
	a, a2, b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"), netip.MustParseAddr("192.0.2.7")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.reserve(true, a))
	must(g.reserve(true, a2)) // the same /64
	if err := g.reserve(true, a); err == nil || !strings.Contains(err.Error(), "your address") {
		t.Errorf("a third guest from one /64: %v", err)
	}
	must(g.reserve(true, b))
	if err := g.reserve(true, netip.MustParseAddr("198.51.100.1")); err == nil || !strings.Contains(err.Error(), "guest sessions (3)") {
		t.Errorf("a fourth guest: %v", err)
	}
	must(g.reserve(false, b)) // owners keep their places
	must(g.reserve(false, b))
	must(g.reserve(false, b))
	if err := g.reserve(false, b); err == nil || !strings.Contains(err.Error(), "most sessions (6)") {
		t.Errorf("a seventh session: %v", err)
	}
	g.release(false, b)
	g.release(true, a)
	must(g.reserve(true, a)) // given back, taken again
	if g.starting != 5 || g.guests[limitKey(a)] != 2 || g.guests[limitKey(b)] != 1 {
		t.Errorf("starting %d, guests %v", g.starting, g.guests)
	}
}

// namesIn lists dir's entries by name, in order.
func namesIn(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// userdbFile writes a passwd or group file named name in dir and reads it
// back as the gateway's lookups would.
func userdbFile(t *testing.T, dir, name, text string) []userdb.Entry {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return userdb.Read(path)
}
