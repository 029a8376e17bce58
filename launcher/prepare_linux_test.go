//go:build linux && cgo && amd64

package launcher

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The filter stage 1 compiles follows the network the plan gets: network
// "none" without a network namespace denies every inet socket (DenyInet,
// half of the fallback SR-03 relies on beside Landlock's TCP rules), and
// with a namespace leaves the agent its own loopback; "ports" with no
// bind port denies listen() (SR-07), and says whether listen() is covered
// for the summary. A host without a network namespace cannot be booted
// here, so this is the seam: preparePlan given such a host.
func TestPreparePlanSeccompFollowsNetwork(t *testing.T) {
	none, _ := testPolicy(t, "")
	portsNoBind, _ := testPolicy(t, "[network]\nmode = \"ports\"\nconnect_tcp = [443]\n")
	portsBind, _ := testPolicy(t, "[network]\nmode = \"ports\"\nconnect_tcp = [443]\nbind_tcp = [8080]\n")
	inet := [6]uint64{unix.AF_INET, unix.SOCK_DGRAM}
	inet6 := [6]uint64{unix.AF_INET6, unix.SOCK_STREAM}
	listen := [6]uint64{3, 16}
	for _, tt := range []struct {
		name          string
		o             LaunchOptions
		h             Host
		inet, listen  string
		listenCovered bool
	}{
		{"none without a network namespace", LaunchOptions{Policy: none}, hostWith(7, false), "errno=EPERM", "allow", false},
		{"none with one (control)", LaunchOptions{Policy: none}, hostWith(7, true), "allow", "allow", false},
		{"ports, nothing to bind", LaunchOptions{Policy: portsNoBind}, hostWith(7, true), "allow", "errno=EPERM", true},
		{"ports with a bind port (control)", LaunchOptions{Policy: portsBind}, hostWith(7, true), "allow", "allow", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Argv = []string{"/usr/bin/true"}
			pp := preparePlan(tt.o, tt.h, IdentityPlan{}, "/")
			if pp.err != nil {
				t.Fatal(pp.err)
			}
			for _, c := range []struct {
				what string
				nr   uintptr
				args [6]uint64
				want string
			}{
				{"socket(AF_INET, SOCK_DGRAM)", unix.SYS_SOCKET, inet, tt.inet},
				{"socket(AF_INET6, SOCK_STREAM)", unix.SYS_SOCKET, inet6, tt.inet},
				{"listen", unix.SYS_LISTEN, listen, tt.listen},
			} {
				if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, c.nr, c.args); got != c.want {
					t.Errorf("%s: %s, want %s", c.what, got, c.want)
				}
			}
			if pp.listenCovered != tt.listenCovered {
				t.Errorf("listenCovered = %v, want %v", pp.listenCovered, tt.listenCovered)
			}
		})
	}
}

// kill(0) is refused in the filter stage 1 compiles where the agent's
// group is the launcher's and nothing else keeps its signals in: off a
// terminal (no standard stream here), as the person's uid, below
// Landlock ABI 6. The agent's own pid (2: the pid namespace's) stays
// killable either way.
func TestPreparePlanSeccompGroupKill(t *testing.T) {
	none, _ := testPolicy(t, "")
	for _, tt := range []struct {
		name string
		h    Host
		want string
	}{
		{"unprivileged, ABI 5", fixtureHost(unprivileged, abi(5)), "errno=EPERM"},
		{"unprivileged, ABI 6 (scoped)", fixtureHost(unprivileged, abi(6)), "allow"},
		{"root, ABI 5 (a throwaway uid)", fixtureHost(abi(5)), "allow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pp := preparePlan(LaunchOptions{Policy: none, Argv: []string{"/usr/bin/true"}}, tt.h, IdentityPlan{}, "/")
			if pp.err != nil {
				t.Fatal(pp.err)
			}
			if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, unix.SYS_KILL, [6]uint64{0, uint64(unix.SIGKILL)}); got != tt.want {
				t.Errorf("kill(0, SIGKILL): %s, want %s", got, tt.want)
			}
			if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, unix.SYS_KILL, [6]uint64{2, uint64(unix.SIGKILL)}); got != "allow" {
				t.Errorf("kill(2, SIGKILL): %s, want allow", got)
			}
		})
	}
}

// As root the agent's throwaway uid may send the launcher's group (its
// own, off a terminal) SIGCONT alone, which the kernel allows within a
// session: below Landlock ABI 6 the filter stage 1 compiles refuses
// kill(0, SIGCONT), and nothing else of kill(0).
func TestPreparePlanSeccompGroupCont(t *testing.T) {
	none, _ := testPolicy(t, "")
	for _, tt := range []struct {
		name       string
		h          Host
		cont, term string
	}{
		{"root, ABI 5", fixtureHost(abi(5)), "errno=EPERM", "allow"},
		{"root, ABI 6 (scoped)", fixtureHost(abi(6)), "allow", "allow"},
		{"unprivileged, ABI 5", fixtureHost(unprivileged, abi(5)), "errno=EPERM", "errno=EPERM"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pp := preparePlan(LaunchOptions{Policy: none, Argv: []string{"/usr/bin/true"}}, tt.h, IdentityPlan{}, "/")
			if pp.err != nil {
				t.Fatal(pp.err)
			}
			if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, unix.SYS_KILL, [6]uint64{0, uint64(unix.SIGCONT)}); got != tt.cont {
				t.Errorf("kill(0, SIGCONT): %s, want %s", got, tt.cont)
			}
			if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, unix.SYS_KILL, [6]uint64{0, uint64(unix.SIGTERM)}); got != tt.term {
				t.Errorf("kill(0, SIGTERM): %s, want %s", got, tt.term)
			}
			if got := seccompEmulate(t, pp.prog, unix.AUDIT_ARCH_X86_64, unix.SYS_KILL, [6]uint64{2, uint64(unix.SIGCONT)}); got != "allow" {
				t.Errorf("kill(2, SIGCONT): %s, want allow", got)
			}
		})
	}
}
