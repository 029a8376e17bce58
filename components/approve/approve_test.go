package approve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The child side of the tests: a process whose controlling terminal is
// the test's pty slave (on stdin) asks one question and writes the
// answer, then the terminal's state, on descriptor 3. It waits for a byte
// on descriptor 4 before asking, so the parent can type ahead first.
const childEnv = "PINFOLD_APPROVE_TEST_CHILD"

// hostileEnv makes the child's "agent" set hostile control characters.
const hostileEnv = "PINFOLD_APPROVE_TEST_HOSTILE"

// bgEnv makes the child start another process group, the terminal's
// foreground, before it asks (the person's shell after Ctrl-Z and bg).
const bgEnv = "PINFOLD_APPROVE_TEST_BACKGROUND"

// testSettle is the question's standing time in the tests.
const testSettle = 300 * time.Millisecond

// testCode is the code every question asks for in the child.
const testCode = "4821"

func TestMain(m *testing.M) {
	if kind := os.Getenv(childEnv); kind != "" {
		os.Exit(child(kind))
	}
	os.Exit(m.Run())
}

func child(kind string) int {
	out := os.NewFile(3, "out")
	go4 := os.NewFile(4, "go")
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	agent, _ := unix.IoctlGetTermios(0, unix.TCGETS)
	if os.Getenv(hostileEnv) != "" {
		// The agent chose its control characters to turn keys and
		// replies into an answer: kill '$', interrupt 'n', reprint 'o',
		// in canonical mode with IEXTEN and NOFLSH.
		agent.Lflag |= unix.ICANON | unix.ISIG | unix.IEXTEN | unix.NOFLSH | unix.ECHO
		agent.Cc[unix.VKILL], agent.Cc[unix.VINTR], agent.Cc[unix.VREPRINT] = '$', 'n', 'o'
	} else {
		// The "agent" had the terminal raw, as a full-screen program does.
		agent.Lflag &^= unix.ICANON | unix.ECHO
	}
	unix.IoctlSetTermios(0, unix.TCSETS, agent)
	var b [1]byte
	go4.Read(b[:])
	other := 0
	if os.Getenv(bgEnv) != "" {
		sh := exec.Command("/bin/sleep", "10")
		sh.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: int(tty.Fd())}
		if err := sh.Start(); err != nil {
			fmt.Fprintf(out, "error %v\n", err)
			return 1
		}
		defer func() { sh.Process.Kill(); sh.Wait() }()
		other = sh.Process.Pid
	}
	k, _ := strconv.Atoi(kind)
	t := &Terminal{TTY: tty, Timeout: 3 * time.Second, settle: testSettle, fixedCode: testCode}
	// The pause records when it was taken and given back: resumed must
	// still be 0 when the question is put, and 1 after.
	var paused, resumedAtPause, resumed int
	t.SetPause(func(context.Context) (func(), error) {
		paused++
		resumedAtPause = resumed
		return func() { resumed++ }, nil
	})
	a := t.Ask(context.Background(), Request{From: "fs", Action: "delete build/ and all it holds", Detail: "rule builtin.recursive-delete", Kind: Kind(k)})
	after, _ := unix.IoctlGetTermios(0, unix.TCGETS)
	fg, _ := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	same := after.Lflag == agent.Lflag && after.Iflag == agent.Iflag && after.Cc == agent.Cc
	if other != 0 {
		fmt.Fprintf(out, "yes=%v reason=%q restored=%v fg-is-other=%v\n", a.Yes, a.Reason, same, fg == other)
		return 0
	}
	fmt.Fprintf(out, "yes=%v reason=%q restored=%v fg-is-self=%v pause=%d/%d/%d\n", a.Yes, a.Reason, same, fg == unix.Getpgrp(), paused, resumedAtPause, resumed)
	return 0
}

// openPTY is a new pseudo-terminal's master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// exchange is what the tests do around one question: keys typed before
// it (typeahead), keys typed as soon as it shows (early: within its
// settle time), the answer typed after, and what the agent writes to the
// terminal meanwhile (alsoSlave); hostile gives the agent's terminal the
// control characters of an attack.
type exchange struct {
	kind                              Kind
	typeahead, early, answer, alsoOut string
	hostile                           bool
}

// session runs the child on a fresh pty as its controlling terminal and
// plays e. It returns the child's line.
func session(t *testing.T, e exchange) string {
	t.Helper()
	env := []string{childEnv + "=" + strconv.Itoa(int(e.kind))}
	if e.hostile {
		env = append(env, hostileEnv+"=1")
	}
	c := startChild(t, env...)
	defer c.done()
	master, slave, outR, goW, shown := c.master, c.slave, c.out, c.goW, c.shown
	time.Sleep(100 * time.Millisecond) // the child has set its terminal
	if e.typeahead != "" {
		master.WriteString(e.typeahead)
		time.Sleep(100 * time.Millisecond)
	}
	goW.Write([]byte{1})
	var screen strings.Builder
	deadline := time.After(5 * time.Second)
	for !strings.Contains(screen.String(), "to allow") {
		select {
		case s := <-shown:
			screen.WriteString(s)
		case <-deadline:
			t.Fatalf("no question on the terminal: %q", screen.String())
		}
	}
	if e.early != "" {
		master.WriteString(e.early)
	}
	// While the question waits, a background writer is stopped (TOSTOP),
	// and the question began by resetting the terminal's state.
	if tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS); err != nil || tio.Lflag&unix.TOSTOP == 0 || tio.Lflag&(unix.ICANON|unix.ISIG|unix.IEXTEN) != 0 {
		t.Errorf("while the question waits: lflag %#o (%v), want TOSTOP and no ICANON, ISIG or IEXTEN", tio.Lflag, err)
	}
	if !strings.Contains(screen.String(), questionReset+"\x1b[9999;1H\r\r\n\x1b[J\x1b[2K"+lineStart+"[pinfold] fs asks:") { // ONLCR: \r\r\n
		t.Errorf("the question does not start with the reset at the foot of the screen: %q", screen.String())
	}
	if !strings.HasPrefix(questionReset, "\x18\x1b\\") {
		t.Errorf("the reset does not first end an open sequence or string: %q", questionReset)
	}
	if want := fmt.Sprintf("Type %q to allow, anything else cancels (3s): ", e.kind.word()+" "+testCode); !strings.HasSuffix(screen.String(), want) {
		t.Errorf("the question does not end asking for %q: %q", want, screen.String())
	}
	if e.alsoOut != "" {
		slave.WriteString(e.alsoOut) // the agent writing to its terminal
	}
	if e.answer != "" {
		time.Sleep(testSettle + 200*time.Millisecond)
		master.WriteString(e.answer)
	}
	line, err := outR.ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v (terminal %q)", err, screen.String())
	}
	return strings.TrimSpace(line)
}

// childProc is the test's side of a child started on a fresh pty (its
// controlling terminal): the pty, the child's answer line, the byte that
// lets it ask, and everything the terminal shows, read as it comes.
type childProc struct {
	master, slave, goW *os.File
	out                *bufio.Reader
	shown              chan string
	done               func()
}

// startChild starts the test binary as the child side, with env added.
func startChild(t *testing.T, env ...string) childProc {
	t.Helper()
	master, slave := openPTY(t)
	outR, outW, _ := os.Pipe()
	goR, goW, _ := os.Pipe()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.ExtraFiles = []*os.File{outW, goR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	goR.Close()
	shown := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				shown <- string(buf[:n])
			}
			if err != nil {
				close(shown)
				return
			}
		}
	}()
	return childProc{master: master, slave: slave, goW: goW, out: bufio.NewReader(outR), shown: shown,
		done: func() { goW.Close(); outR.Close(); cmd.Wait() }}
}

const restoredOK = ` restored=true fg-is-self=true pause=1/0/1`

// The person's word approves, typed after the question stands, with the
// line edited as the person types it; the answer restores the agent's
// terminal settings (raw, or hostile) and gives the foreground back.
func TestAskApproved(t *testing.T) {
	for _, e := range []exchange{
		{kind: Approve, answer: "yes 4821\n"},
		{kind: Approve, answer: "YES 4821\r"},
		{kind: Approve, answer: "  yes   4821 \n"},
		{kind: Approve, answer: "yez\x7fs 4821\n"},
		{kind: Approve, answer: "no\x15yes 4821\n"},
		{kind: Approve, answer: "yes 4821\n", hostile: true},
		{kind: ConfirmDelete, answer: "delete 4821\n"},
		{kind: Irreversible, answer: "irreversible 4821\n"},
		{kind: Evict, answer: "evict 4821\n"},
	} {
		if got := session(t, e); got != `yes=true reason="approved"`+restoredOK {
			t.Errorf("%+v: %s", e, got)
		}
	}
}

// Anything but the word and the question's code cancels: the word
// alone (what a prompt of the agent's asks for), another code, "y", the
// word of another kind, an empty line, Ctrl-C and Ctrl-D.
func TestAskDeclined(t *testing.T) {
	for _, e := range []exchange{
		{kind: Approve, answer: "yes\n"},
		{kind: Approve, answer: "yes 4822\n"},
		{kind: Approve, answer: "yes 48215\n"},
		{kind: Approve, answer: "4821\n"},
		{kind: Approve, answer: "y\n"},
		{kind: ConfirmDelete, answer: "yes 4821\n"},
		{kind: ConfirmDelete, answer: "delete\n"},
		{kind: Irreversible, answer: "delete 4821\n"},
		{kind: Evict, answer: "delete 4821\n"},
		{kind: Evict, answer: "irreversible 4821\n"},
		{kind: Approve, answer: "\n"},
		{kind: Approve, answer: "no\n"},
		{kind: Approve, answer: "yes 48\x0321\n"},
		{kind: Approve, answer: "\x04"},
	} {
		if got := session(t, e); !strings.HasPrefix(got, `yes=false reason="declined"`) {
			t.Errorf("%+v: %s", e, got)
		}
	}
}

// What the agent can do with the terminal does not answer: keys typed
// before the question, or as soon as it shows (in the rhythm of the
// agent's own prompts), are discarded, and the agent's own writes to the
// terminal are output, not input; the question then times out as no. The
// control is TestAskApproved: the same word typed once it stands.
func TestAskAgentCannotAnswer(t *testing.T) {
	for _, e := range []exchange{
		{kind: Approve, typeahead: "yes 4821\n", alsoOut: "yes 4821\n"},
		{kind: Approve, early: "yes 4821\n"},
		{kind: Approve, early: "yes 4821\n", hostile: true},
	} {
		if got := session(t, e); !strings.HasPrefix(got, `yes=false reason="no answer in time"`) {
			t.Errorf("%+v: %s", e, got)
		}
	}
}

// Each question draws its own code: four digits, not the same for long,
// shown only in the question.
func TestAskCodes(t *testing.T) {
	var term Terminal
	seen := map[string]bool{}
	for range 50 {
		c := term.code()
		if len(c) != 4 || strings.Trim(c, "0123456789") != "" {
			t.Fatalf("code %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 40 {
		t.Errorf("50 questions drew %d codes", len(seen))
	}
}

// A question that would not fit one screen is not asked: its first
// lines, which name the action, would be above it. Too many bytes, or
// too many rows for the window's size.
func TestAskFitsTheScreen(t *testing.T) {
	master, slave := openPTY(t)
	term := &Terminal{TTY: slave}
	long := Request{From: "bash", Action: "run " + strings.Repeat("x", MaxQuestion), Kind: Approve}
	if a := term.Ask(context.Background(), long); a.Yes || !strings.Contains(a.Reason, "too long to show whole") {
		t.Errorf("too long: %+v", a)
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 6, Col: 40}); err != nil {
		t.Fatal(err)
	}
	tall := Request{From: "bash", Action: "run " + strings.Repeat("y", 200), Detail: "rule x", Kind: Approve}
	if a := term.Ask(context.Background(), tall); a.Yes || !strings.Contains(a.Reason, "rows and the terminal shows 6") {
		t.Errorf("too tall: %+v", a)
	}
	if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(master.Fd()), Events: unix.POLLIN}}, 200); n > 0 {
		t.Errorf("a question that was not asked wrote to the terminal")
	}
}

// A reply the terminal sends (to a query the agent made before it was
// frozen) is not keys: it voids the answer, whatever control characters
// the agent had chosen to cut it into a "y" (the hunt's attack: kill '$'
// leaves "y" of "\x1b[?25;1$y", and the person's "n" is the interrupt
// character). The person typing "no" after it is declined, as is a
// function key.
func TestAskTerminalReplyVoids(t *testing.T) {
	for _, e := range []exchange{
		{kind: Approve, answer: "\x1b[?25;1$yno\n", hostile: true},
		{kind: Approve, answer: "\x1b[?25;1$y\n", hostile: true},
		{kind: Approve, answer: "\x1b[?1;2cyes 4821\n"},
		{kind: Approve, answer: "ye\x1bOPs 4821\n"},
		{kind: Approve, answer: "\x1byes 4821\n"},
		{kind: Approve, answer: "y\x00es 4821\n"},
		{kind: Approve, answer: "y\xc3\xa9s 4821\n"},
	} {
		got := session(t, e)
		if !strings.HasPrefix(got, `yes=false reason="declined`) || !strings.HasSuffix(got, restoredOK) {
			t.Errorf("%q (hostile %v): %s", e.answer, e.hostile, got)
		}
	}
}

// A question whose pause fails is not put: nothing reaches the terminal,
// and the answer is no. (The pause that works is in every session above:
// the child reports it taken before the question and given back after.)
func TestAskPauseFails(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	term := &Terminal{TTY: w}
	term.SetPause(func(context.Context) (func(), error) { return nil, errors.New("no freezer") })
	a := term.Ask(context.Background(), Request{From: "bash", Action: "run make", Kind: Approve})
	w.Close()
	shown, _ := io.ReadAll(r)
	if a.Yes || a.Reason != "the agent could not be paused for the question: no freezer" || len(shown) != 0 {
		t.Errorf("%+v; terminal %q", a, shown)
	}
}

// Without a terminal the answer is no, at once.
func TestAskNoTerminal(t *testing.T) {
	a := (&Terminal{}).Ask(context.Background(), Request{From: "bash", Action: "run git push", Kind: Approve})
	if a.Yes || a.Reason != "no terminal to ask on" {
		t.Errorf("%+v", a)
	}
	var zero Terminal
	for _, action := range []string{"x\x1b[2J", "a\rb", "a\nb", "a\x00b", "a\u009b2Jb", "a\u202eb", "a\xffb"} {
		if a := zero.Ask(context.Background(), Request{From: "fs", Action: action, Kind: Approve}); a.Yes || a.Reason != "malformed request" {
			t.Errorf("%q: %+v", action, a)
		}
	}
	// A character split between the action and the detail is valid only
	// joined: drawn, it is two stray bytes on two lines, "\x9b" a C1 CSI
	// to a terminal that takes 8-bit controls.
	if a := zero.Ask(context.Background(), Request{From: "fs", Action: "x\xe2\x80", Detail: "\x9b2J", Kind: Approve}); a.Reason != "malformed request" {
		t.Errorf("a character split between action and detail: %+v", a)
	}
	if a := zero.Ask(context.Background(), Request{From: "fs", Action: "x", Kind: 99}); a.Reason != "malformed request" {
		t.Errorf("unknown kind: %+v", a)
	}
}

// The channel carries the question to the launcher's terminal and the
// answer back; the launcher names who asked; a broken channel or a
// garbled line is no.
func TestChannel(t *testing.T) {
	a, b := net.Pipe()
	var logs strings.Builder
	term := &Terminal{Log: slog.New(slog.NewTextHandler(&logs, nil))} // no terminal: every answer is no
	done := make(chan struct{})
	go func() { Serve(a, term, "fs"); close(done) }()
	c := NewClient(b)
	if ans := c.Ask("write .git/hooks/pre-commit", "rule fs.protected", Approve); ans.Yes || ans.Reason != "no terminal to ask on" {
		t.Errorf("answer %+v", ans)
	}
	if !strings.Contains(logs.String(), "from=fs") || !strings.Contains(logs.String(), "yes=false") {
		t.Errorf("the question was not logged with who asked: %s", logs.String())
	}
	b.Write([]byte("{not json\n"))
	line, _ := bufio.NewReader(b).ReadString('\n')
	if !strings.Contains(line, `"yes":false`) || !strings.Contains(line, "malformed") {
		t.Errorf("garbled line answered %q", line)
	}
	b.Close()
	<-done
	if ans := c.Ask("x", "", Approve); ans.Yes {
		t.Errorf("a closed channel answered yes: %+v", ans)
	}
	var none *Client
	if ans := none.Ask("x", "", Approve); ans.Yes {
		t.Errorf("no channel answered yes")
	}
}

// Tell escapes what the terminal would not show as written, instead of
// dropping the line: a path with a control character or bytes that are
// not UTF-8 still reaches the person.
func TestTellEscapes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	term := &Terminal{TTY: w}
	term.Tell("moved /ws/\x01\x1b[2J/\u202e/\xff/é/.git/commondir")
	w.Close()
	got, _ := io.ReadAll(r)
	want := cancelSequences + resetAttrs + "\r\n[pinfold] moved /ws/\\x01\\x1b[2J/\\u202e/\\xff/é/.git/commondir\r\n"
	if string(got) != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A question is not asked from the background: another process group
// holds the terminal (the person's shell, after Ctrl-Z and bg), and
// taking it from there (SIGTTOU ignored) made the shell's next read fail,
// so that it exited, and the lines typed to it became the answer (a
// re-test). The answer is no, nothing is drawn, and the other group
// keeps the terminal.
func TestAskNotFromTheBackground(t *testing.T) {
	c := startChild(t, childEnv+"="+strconv.Itoa(int(Approve)), bgEnv+"=1")
	defer c.done()
	goW, shown := c.goW, c.shown
	goW.Write([]byte{1})
	line, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "yes=false ") || !strings.Contains(line, "foreground") || !strings.HasSuffix(line, "restored=true fg-is-other=true") {
		t.Fatalf("child: %s", line)
	}
	var screen strings.Builder
	for more := true; more; {
		select {
		case s, ok := <-shown:
			screen.WriteString(s)
			more = ok
		default:
			more = false
		}
	}
	if strings.Contains(screen.String(), "to allow") {
		t.Fatalf("a question was drawn from the background: %q", screen.String())
	}
}

// An answer longer than the client's buffer breaks the channel for good:
// the rest of that line was read as the next question's answer, and from
// then on each question got the answer to the one before it — a yes the
// person gave to one action taken for the next (a hunt, 2026-12-03).
func TestClientNoAnswerForAnother(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	// The launcher's end: it reads each question and queues its answer,
	// written in order by another goroutine (net.Pipe does not buffer).
	answers := make(chan string, 4)
	go func() {
		defer close(answers)
		r := bufio.NewReader(b)
		for _, answer := range []string{
			`{"yes":true,"reason":"read","notes":["` + strings.Repeat("x", maxAnswerLine) + `"]}`,
			`{"yes":true,"reason":"approved"}`, // the person's yes to the first question
			`{"yes":false,"reason":"declined"}`,
			`{"yes":false,"reason":"declined"}`,
		} {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			answers <- answer
		}
	}()
	go func() {
		defer b.Close()
		for answer := range answers {
			if _, err := io.WriteString(b, answer+"\n"); err != nil {
				return
			}
		}
	}()
	c := NewClient(a)
	if _, _, err := c.Refresh(); err == nil {
		t.Fatal("an answer longer than the buffer was taken")
	}
	for _, action := range []string{"delete src", "run git push"} {
		if got := c.Ask(action, "", Approve); got.Yes {
			t.Errorf("%s: %+v, the answer to another question", action, got)
		}
	}
}
