// Package approve asks the person — on the launcher's controlling
// terminal, a channel the agent cannot write to — whether a component may
// do what the agent asked (DESIGN.md §5, Approvals). No terminal, no
// answer in time, or anything but the exact word means no.
//
// The agent usually shares that terminal (it is its stdin and stdout), so
// asking takes these precautions:
//
//   - The agent's whole tree is frozen (its cgroup, see SetPause) before
//     the question is written and thawed after the answer: it can write
//     nothing over the question, however it handles signals. When it
//     cannot be frozen the question is not asked, and the answer is no.
//   - The launcher makes its own process group the terminal's foreground
//     for the question, so the agent's reads stop and it cannot swallow
//     the answer; TOSTOP is set too, which stops a background writer that
//     does not ignore SIGTTOU (the only guard where no pause is set: a
//     Terminal of its own in tests).
//   - Typeahead is discarded first (keys typed for the agent are not an
//     answer), and the line is read in canonical mode with echo,
//     restoring the agent's settings after.
//   - The question starts by resetting the character attributes and
//     sets (SGR 0, ASCII in G0 and shifted in), so text the agent printed
//     before cannot make it invisible or unreadable.
//
// The agent cannot type into the terminal: TIOCSTI and TIOCLINUX are
// refused by its seccomp filter (SR-17). What it printed before the
// question stays on the screen above it.
//
// Every decision is logged: who asked, what, the answer and when.
package approve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Kind is what an answer must say.
type Kind int

const (
	// Approve: a change the policy leaves to the person; "y" or "yes".
	Approve Kind = iota + 1
	// ConfirmDelete: a recursive delete, backed up first; the word
	// "delete". The default is Cancel.
	ConfirmDelete
	// Irreversible: a recursive delete that no backup can hold; the word
	// "irreversible".
	Irreversible
)

// word is what the person must type for kind.
func (k Kind) word() string {
	switch k {
	case Approve:
		return "yes"
	case ConfirmDelete:
		return "delete"
	case Irreversible:
		return "irreversible"
	}
	return ""
}

// Request is one question.
type Request struct {
	From   string // the component asking (fs, bash)
	Action string // what would happen, in a line: "delete build/ and all it holds"
	Detail string // why it needs asking (the rule), shown below
	Kind   Kind
}

// Answer is the person's decision and why.
type Answer struct {
	Yes    bool
	Reason string // "approved", "declined", "timeout", "no terminal", …
}

// Terminal asks on a terminal; the zero value has none and says no.
type Terminal struct {
	TTY     *os.File // the launcher's controlling terminal (nil: none)
	Timeout time.Duration
	Log     *slog.Logger

	mu    sync.Mutex // one question at a time
	pause func(ctx context.Context) (resume func(), err error)
}

// SetPause makes every later question freeze the agent first (pause) and
// thaw it after the answer (resume); a pause that fails means the
// question is not asked.
func (t *Terminal) SetPause(pause func(ctx context.Context) (resume func(), err error)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pause = pause
}

// Hold keeps every question waiting until release is called (the
// launcher holds them while a command runs: a protected change the person
// approves then is made after the command, not in the middle of it).
func (t *Terminal) Hold() (release func()) {
	t.mu.Lock()
	return t.mu.Unlock
}

// Tell writes a line for the person on the terminal, between questions,
// with anything the terminal would not show as written (control and bidi
// characters, bytes that are not UTF-8) escaped, never dropped.
func (t *Terminal) Tell(msg string) {
	if t.TTY == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.TTY, resetAttrs+"\r\n[pinfold] "+shown(msg)+"\r\n")
}

// shown is s with what printable refuses escaped, Go-style.
func shown(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// DefaultTimeout is how long a question waits for its answer.
const DefaultTimeout = 2 * time.Minute

// Ask puts r to the person and returns the answer; it never returns yes
// without the person's typed word.
func (t *Terminal) Ask(ctx context.Context, r Request) Answer {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.ask(ctx, r)
	if t.Log != nil {
		t.Log.Info("approval", "from", r.From, "action", r.Action, "kind", r.Kind.word(), "yes", a.Yes, "reason", a.Reason, "time", time.Now().UTC().Format(time.RFC3339))
	}
	return a
}

func (t *Terminal) ask(ctx context.Context, r Request) Answer {
	// A question the terminal would not show as written (an escape
	// sequence could redraw it) is not asked.
	if r.Kind.word() == "" || !printable(r.From+r.Action+r.Detail) {
		return Answer{Reason: "malformed request"}
	}
	if t.TTY == nil {
		return Answer{Reason: "no terminal to ask on"}
	}
	if t.pause != nil {
		resume, err := t.pause(ctx)
		if err != nil {
			return Answer{Reason: "the agent could not be paused for the question: " + err.Error()}
		}
		defer resume()
	}
	fd := int(t.TTY.Fd())
	restore, err := takeTerminal(fd)
	if err != nil {
		return Answer{Reason: "the terminal could not be taken: " + err.Error()}
	}
	defer restore()
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	word := r.Kind.word()
	question := fmt.Sprintf(resetAttrs+"\r\n[pinfold] %s asks: %s\r\n", r.From, r.Action)
	if r.Detail != "" {
		question += "[pinfold] " + r.Detail + "\r\n"
	}
	switch r.Kind {
	case ConfirmDelete:
		question += "[pinfold] This may be irreversible (a backup is kept). "
	case Irreversible:
		question += "[pinfold] NO BACKUP can be kept: this cannot be undone. "
	}
	question += fmt.Sprintf("Type %q to allow, anything else cancels (%s): ", word, timeout.Round(time.Second))
	if _, err := io.WriteString(t.TTY, question); err != nil {
		return Answer{Reason: "the terminal could not be written: " + err.Error()}
	}
	line, err := readLine(ctx, fd, timeout)
	switch {
	case errors.Is(err, errTimeout):
		io.WriteString(t.TTY, "\r\n[pinfold] no answer: cancelled\r\n")
		return Answer{Reason: "no answer in time"}
	case err != nil:
		return Answer{Reason: "the answer could not be read: " + err.Error()}
	case strings.TrimSpace(strings.ToLower(line)) == word || (r.Kind == Approve && strings.TrimSpace(strings.ToLower(line)) == "y"):
		return Answer{Yes: true, Reason: "approved"}
	}
	io.WriteString(t.TTY, "[pinfold] cancelled\r\n")
	return Answer{Reason: "declined"}
}

// resetAttrs undoes what text printed before the question could have set
// to hide or garble it: character attributes (SGR 0: no conceal, default
// colours), and the character set (G0 as ASCII, shifted in).
const resetAttrs = "\x1b[0m\x1b(B\x0f"

// printable reports whether s is valid UTF-8 without control characters
// (C0, C1: escape sequences and carriage returns could redraw the
// question) or bidi controls (which could reorder it).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

// takeTerminal makes the caller's process group the terminal's
// foreground, discards typeahead and sets canonical mode with echo; the
// returned function gives everything back.
func takeTerminal(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return nil, err
	}
	// A background group changing the foreground gets SIGTTOU: ignored
	// for the moment it takes.
	signal.Ignore(unix.SIGTTOU)
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()); err != nil {
		signal.Reset(unix.SIGTTOU)
		return nil, err
	}
	unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
	ask := *old
	ask.Lflag |= unix.ICANON | unix.ECHO | unix.ECHONL | unix.ISIG | unix.TOSTOP
	ask.Iflag |= unix.ICRNL
	ask.Oflag |= unix.OPOST | unix.ONLCR
	unix.IoctlSetTermios(fd, unix.TCSETS, &ask)
	return func() {
		unix.IoctlSetTermios(fd, unix.TCSETS, old)
		unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, fg)
		signal.Reset(unix.SIGTTOU)
	}, nil
}

var errTimeout = errors.New("timeout")

// readLine reads one line (at most 256 bytes) within timeout, waiting
// with poll so that no goroutine is left reading the terminal after.
func readLine(ctx context.Context, fd int, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	var b strings.Builder
	buf := make([]byte, 64)
	for b.Len() < 256 {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return "", errTimeout
		}
		ms := int(min(left, 200*time.Millisecond) / time.Millisecond)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, max(ms, 1))
		if err == unix.EINTR || n == 0 {
			continue
		}
		if err != nil {
			return "", err
		}
		m, err := unix.Read(fd, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return "", err
		}
		if m == 0 {
			return "", io.EOF
		}
		b.Write(buf[:m])
		if i := strings.IndexByte(b.String(), '\n'); i >= 0 {
			return b.String()[:i], nil
		}
	}
	return b.String(), nil
}

// The channel between a component and the launcher: one end of a
// socketpair each holds (the agent holds neither). A request and its
// answer are one JSON line each; one question at a time.

// wireRequest and wireAnswer are the lines on the channel.
type wireRequest struct {
	Action string `json:"action"`
	Detail string `json:"detail"`
	Kind   Kind   `json:"kind"`
}

type wireAnswer struct {
	Yes    bool   `json:"yes"`
	Reason string `json:"reason"`
}

// maxLine bounds a line on the channel.
const maxLine = 8 << 10

// Serve answers the questions a component (from) sends on c with t until
// c ends. The component's name comes from the launcher, not from the
// channel.
func Serve(c io.ReadWriteCloser, t *Terminal, from string) {
	defer c.Close()
	r := bufio.NewReaderSize(c, maxLine)
	enc := json.NewEncoder(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // ended, or a line too long: the channel is done
		}
		var q wireRequest
		var a Answer
		if json.Unmarshal(line, &q) != nil {
			a = Answer{Reason: "malformed request"}
		} else {
			a = t.Ask(context.Background(), Request{From: from, Action: q.Action, Detail: q.Detail, Kind: q.Kind})
		}
		if enc.Encode(wireAnswer{a.Yes, a.Reason}) != nil {
			return
		}
	}
}

// Client is a component's end of the channel.
type Client struct {
	mu sync.Mutex
	c  io.ReadWriter
	r  *bufio.Reader
}

// NewClient asks over c.
func NewClient(c io.ReadWriter) *Client { return &Client{c: c, r: bufio.NewReaderSize(c, maxLine)} }

// Ask puts the question to the person through the launcher and waits for
// the answer; any failure of the channel is no.
func (c *Client) Ask(action, detail string, kind Kind) Answer {
	if c == nil {
		return Answer{Reason: "no way to ask the person in this session"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(wireRequest{action, detail, kind})
	if err != nil || len(b) >= maxLine {
		return Answer{Reason: "the question is too long"}
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return Answer{Reason: "the launcher could not be asked: " + err.Error()}
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return Answer{Reason: "no answer from the launcher: " + err.Error()}
	}
	var a wireAnswer
	if json.Unmarshal(line, &a) != nil {
		return Answer{Reason: "a malformed answer from the launcher"}
	}
	return Answer{Yes: a.Yes, Reason: a.Reason}
}
