package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// A policy that lists /dev/pts (or /dev, or /) for reading let the agent,
// as the person's uid, open the person's terminal by its path and read
// what was typed there, though it holds no descriptor of it and, off a
// terminal, has no controlling terminal (SR-52). Unprivileged, such a
// launch is refused before anything starts. The control, the same probe
// unconfined from the same shell, reads the line typed after it.
func TestIntegrationTerminalListedRefused(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	path, hash := s.writePolicy(t, itPol{read: []string{"/dev/pts"}})
	term := readyShell(t, s)
	out := filepath.Join(s.dir, "tty-read")
	run := func(label, cmd, stdin string) string {
		t.Helper()
		// The line after the command waits in the terminal's input for
		// whoever reads it next: the probe, or the shell once the launch
		// is refused (a command not found).
		return term.shellRun(label, cmd+" read $(tty) "+stdin, out, "not-for-the-agent\n")
	}
	launch := fmt.Sprintf("%s --policy-sha256 %s --policy %s --quiet -- %s", itEnv.launcher, hash, path, itEnv.probe)
	if got := run("control", itEnv.probe, "</dev/null"); got != "ok\n" {
		t.Fatalf("control: %q, want ok (the probe read the terminal)", got)
	}
	for _, c := range []struct{ name, stdin string }{{"off a terminal", "</dev/null"}, {"relayed", ""}} {
		got := run(strings.ReplaceAll(c.name, " ", "-"), launch, c.stdin)
		if !strings.Contains(got, "launcher: error: refused: terminal: files lists /dev/pts") || !strings.Contains(got, "SR-52") {
			t.Errorf("confined, %s: %q, want the launch refused", c.name, got)
		}
	}
}

// listedTerminal names a listed path that holds a terminal the agent's
// uid may read, and nothing for a terminal of another uid or a list that
// does not reach one.
func TestListedTerminal(t *testing.T) {
	_, slave := openPTY(t)
	uid := os.Geteuid()
	// A virtual console, where the machine has one: its owner's.
	consoleUID := -1
	if st, err := os.Stat("/dev/tty0"); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		consoleUID = int(st.Sys().(*syscall.Stat_t).Uid)
	}
	for _, c := range []struct {
		name string
		read string
		uid  int
		want string // "" for no refusal
		// list is the files list read goes in ("" for read); mode, when
		// set, is this test's terminal's.
		list string
		mode os.FileMode
	}{
		{"/dev/pts listed", `"/dev/pts"`, uid, "files lists /dev/pts, which holds /dev/pts/", "", 0},
		{"/dev listed", `"/dev"`, uid, "files lists /dev, which holds /dev/pts/", "", 0},
		{"the terminal itself", fmt.Sprintf("%q", slave.Name()), uid, "files lists " + slave.Name() + ", which holds " + slave.Name(), "", 0},
		{"devices elsewhere", `"/dev/null", "/dev/urandom"`, uid, "", "", 0},
		{"another uid's terminals", `"/dev/pts"`, 54321, "", "", 0},
		{"a virtual console of the uid", `"/dev/tty0"`, consoleUID, "files lists /dev/tty0, which holds /dev/tty0", "", 0},
		// The write and exec lists give reading too.
		{"the terminal listed for writing", fmt.Sprintf("%q", slave.Name()), uid, "files lists " + slave.Name() + ", which holds " + slave.Name(), "write", 0},
		{"the terminal listed for running", fmt.Sprintf("%q", slave.Name()), uid, "files lists " + slave.Name() + ", which holds " + slave.Name(), "exec", 0},
		// Another uid's terminal that others may read (mesg aside, 0620
		// is usual) is readable by the agent's uid as well.
		{"another uid's world-readable terminal", fmt.Sprintf("%q", slave.Name()), 54321, "files lists " + slave.Name() + ", which holds " + slave.Name(), "", 0o604},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.uid < 0 {
				t.Skip("no virtual console (/dev/tty0) here")
			}
			ws := t.TempDir()
			lists := map[string]string{"read": "", "write": fmt.Sprintf("%q", ws), "exec": ""}
			if c.list == "" {
				c.list = "read"
			}
			lists[c.list] = strings.TrimPrefix(lists[c.list]+", "+c.read, ", ")
			p, err := policy.Parse("test.toml", []byte(fmt.Sprintf("version = 1\n[workspace]\npath = %q\n[files]\nread = [%s]\nwrite = [%s]\nexec = [%s]\n", ws, lists["read"], lists["write"], lists["exec"])))
			if err != nil {
				t.Fatal(err)
			}
			// The terminals of other tests may be world-readable; only
			// this one's is known.
			mode := c.mode
			if mode == 0 && c.uid != uid {
				mode = 0o620
			}
			if mode != 0 {
				if err := os.Chmod(slave.Name(), mode); err != nil {
					t.Fatal(err)
				}
			}
			err = listedTerminal(p, "/dev", c.uid)
			switch {
			case c.want == "" && err != nil && strings.Contains(err.Error(), slave.Name()+","):
				t.Errorf("refused for this test's terminal: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want a refusal saying %q", err, c.want)
			}
		})
	}
}

// A terminal on stdout (or stderr) that is not the launcher's own but
// another session's (setsid launcher … </dev/null, from the person's
// shell) reached the agent, write-only but a terminal still: its modes
// were the agent's to set, and no launcher restored them. The control, a
// program started so without the launcher, turns off the terminal's
// Ctrl-C (stty -isig); the launch is refused.
func TestIntegrationOutputAnotherSessionsTerminal(t *testing.T) {
	for _, c := range []struct {
		name string
		uid  int
	}{{"root", 0}, {"unprivileged", nobody}} {
		t.Run(c.name, func(t *testing.T) {
			s := newUnprivSandbox(t, c.uid)
			path, hash := s.writePolicy(t, itPol{})
			setsid, err := exec.LookPath("setsid")
			if err != nil {
				t.Fatalf("no setsid (util-linux): %v", err)
			}
			term := readyShell(t, s)
			term.send(fmt.Sprintf("%s -w sh -c 'stty -isig <&1' </dev/null; stty -a | tr '\\n' ' ' | grep -q -- ' -isig' && echo modes-$((6*7)); stty isig\n", setsid))
			term.expect("modes-42")
			m := term.mark()
			term.send(fmt.Sprintf("%s -w %s --policy-sha256 %s --policy %s --quiet -- %s noop </dev/null; echo rc-$?\n", setsid, itEnv.launcher, hash, path, itEnv.probe))
			term.expectAfter(m, "rc-")
			term.expectAfter(m, "rc-124")
			term.expectAfter(m, "stdout is the terminal")
			// stderr alone another session's terminal is refused too.
			m = term.mark()
			term.send(fmt.Sprintf("%s -w %s --policy-sha256 %s --policy %s --quiet -- %s noop </dev/null >/dev/null; echo rc-$?\n", setsid, itEnv.launcher, hash, path, itEnv.probe))
			term.expectAfter(m, "rc-")
			term.expectAfter(m, "rc-124")
			term.expectAfter(m, "stderr is the terminal")
		})
	}
}
