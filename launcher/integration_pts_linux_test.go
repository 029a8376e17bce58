package launcher

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// The host's /dev/pts is covered in the sandbox (ptsHidden). Landlock
// keeps the agent from opening the person's other terminals, but not
// from watching them: unprivileged the agent is the person's uid, which
// owns them, and an inotify watch on one reported every key typed there
// and every echo, with its time. The other terminal here is a pty of
// the test's, given to nobody as a login would; the control, the same
// watch unconfined as nobody, is set.
func TestIntegrationOtherTerminalsHidden(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	_, other := openPTY(t)
	must(t, os.Chown(other.Name(), nobody, nobody))
	s.denied(t, itPol{}, itOpts{}, "ENOENT", "inotify-watch", other.Name())

	// The agent's own terminal (the relay's pty) is grafted back at its
	// name: ttyname finds it, and stage 2 opens it again through it
	// (reopen_terminals), which would otherwise fail the launch.
	t.Run("own terminal by name", func(t *testing.T) {
		_, slave := openPTY(t)
		must(t, os.Chown(slave.Name(), nobody, nobody))
		o := itOpts{stdin: slave, ctty: true}
		s.allowed(t, itPol{}, o, "tty-name", "0")
		s.control(t, o, "tty-name", "0")
	})
}

// As root the throwaway uid owns no terminal, but the graft must hold
// all the same: the agent's terminal is looked up by its name.
func TestIntegrationOwnTerminalNamedAsRoot(t *testing.T) {
	s := newSandbox(t)
	_, slave := openPTY(t)
	o := itOpts{stdin: slave, ctty: true}
	s.allowed(t, itPol{}, o, "tty-name", "0")
	s.control(t, o, "tty-name", "0")
}

// ptsHidden covers /dev/pts unless a files list reaches it, lies in it,
// or names /dev/ptmx, which needs the devpts beside it.
func TestPtsHidden(t *testing.T) {
	if st, err := os.Lstat(ptsDir); err != nil || !st.IsDir() {
		t.Skipf("no %s here", ptsDir)
	}
	for _, c := range []struct {
		listed []policy.Path
		want   bool
	}{
		{nil, true},
		{[]policy.Path{"/dev/null", "/dev/urandom", "/dev/tty", "/usr"}, true},
		{[]policy.Path{"/dev/pts"}, false},
		{[]policy.Path{"/dev"}, false},
		{[]policy.Path{"/"}, false},
		{[]policy.Path{"/dev/pts/ptmx"}, false},
		{[]policy.Path{"/dev/ptmx"}, false},
		{[]policy.Path{"/dev/ptsx"}, true},
	} {
		if got := ptsHidden(c.listed); got != c.want {
			t.Errorf("ptsHidden(%v) = %v, want %v", c.listed, got, c.want)
		}
	}
}

// /dev/tty is one node for every user's programs: a password prompt
// (sudo, ssh, gpg) reads the keys through it, and an inotify watch on
// it, which needs only read permission (0666), saw each of them, as the
// root launch's throwaway uid too. The sandbox's /dev/tty is another
// node (the host's /dev/null, covered), so a watch there sees nothing
// of the host's terminals; a policy that lists /dev/tty keeps the
// host's, through which the agent opens its own terminal.
func TestIntegrationDevTTYCovered(t *testing.T) {
	var host syscall.Stat_t
	if err := syscall.Lstat(devTTY, &host); err != nil || host.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		requireFeature(t, "a /dev/tty device", false, fmt.Sprint(err))
	}
	hostNode := fmt.Sprintf("node %d %d", host.Dev, host.Ino)
	s := newSandbox(t)
	itExpect(t, "control (unconfined)", s.direct(t, itOpts{}, "node", devTTY), hostNode, 0)
	if r := s.launch(t, itPol{}, itOpts{}, "node", devTTY); r.code != 0 || r.stdout == hostNode+"\n" {
		t.Fatalf("confined: want another node than the host's /dev/tty (%s), got %s", hostNode, r)
	}
	itExpect(t, "confined, /dev/tty listed", s.launch(t, itPol{read: []string{devTTY}}, itOpts{}, "node", devTTY), hostNode, 0)
}
