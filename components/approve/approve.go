// Package approve asks the person — on the launcher's controlling
// terminal, a channel the agent cannot write to — whether a component may
// do what the agent asked (DESIGN.md §5, Approvals). No terminal, no
// answer in time, or anything but the exact word means no.
//
// The agent's output reaches that terminal (the launcher relays a
// pseudo-terminal of the agent's own to it, or the agent writes to it
// directly), so asking takes these precautions:
//
//   - The agent's whole tree is frozen (its cgroup, see SetPause) before
//     the question is written and thawed after the answer: it can write
//     nothing over the question, however it handles signals. When it
//     cannot be frozen the question is not asked, and the answer is no.
//   - The question is asked only while the launcher's process group is
//     the terminal's foreground job, which it is while the agent runs:
//     from the background (after Ctrl-Z and bg) it would take the
//     terminal from the person's shell, and the answer is no instead.
//     The relay copies neither keys nor output meanwhile (the pause);
//     TOSTOP is set too, which stops a background writer that does not
//     ignore SIGTTOU (the only guard where no pause is set: a Terminal
//     of its own in tests).
//   - The terminal's settings are the launcher's own for the question,
//     not the agent's with a few flags changed: no canonical mode, no
//     echo, no signals, no flow control. The answer is read key by key
//     and edited here (backspace, Ctrl-U; Ctrl-C or Ctrl-D cancels), so
//     control characters the agent chose (a kill or interrupt character
//     that turns a terminal's reply into "y") mean nothing.
//   - The answer is the word ("yes", "delete", "irreversible") and four
//     digits drawn for that question, shown only in it: "yes 4821". A
//     person answering a prompt the agent drew in the question's style,
//     in the rhythm of its prompts, over a link slow enough that the
//     question was not yet drawn, or behind a multiplexer the agent made
//     hide it, does not type the code; nothing the terminal sends by
//     itself holds it. Typeahead is discarded, and so is what comes in
//     the first moment (settle) after the question is written. Anything
//     but plain keys after that (an escape sequence: a reply, a function
//     key) voids the answer.
//   - The question starts by undoing what the agent could have left set
//     to hide, move or cut it: a sequence or string left open (which
//     would take the question as its data), a soft reset, the scrolling
//     region, origin and insert modes, line wrapping, the cursor's
//     visibility, mouse, focus and paste reporting, the palette and the
//     default colours, the character attributes and sets, and each line's
//     width. It is drawn at the foot of the screen, on new lines, with
//     everything below erased and each line cleared and drawn in explicit
//     colours; it is asked only when it fits the screen whole.
//
// The agent cannot type into the terminal: TIOCSTI and TIOCLINUX are
// refused by its seccomp filter (SR-17). What it printed before the
// question stays on the screen above it, and may imitate a question: the
// real one is always the last thing on the screen, directly before the
// cursor; a fake one cannot show the code.
//
// # Limitations
//
//   - The question is drawn on the screen the terminal shows. An agent in
//     the alternate screen (a full-screen program, or one that switched
//     to hide the trace) gets it there, and leaving that screen erases
//     it; the launcher's log keeps every decision.
//   - Tell's lines (notes between questions, such as a protected path a
//     command made and that was moved aside) start the same way, but the
//     agent is not frozen for them: it can draw over them at once.
//   - Behind a terminal multiplexer the launcher talks to the multiplexer.
//     With passthrough on (tmux's allow-passthrough), the agent can reach
//     the terminal outside it and keep a question from being seen; it
//     still cannot answer it (the code).
//   - A refresh's answer is at most 1 MiB (maxAnswerLine): past it the
//     watch's names become WatchAll (every event concerns a config) and
//     the protected paths the directories that hold them, which protects
//     more than the configs name (said in the notes). Paths too many for
//     it even as top-level names are a refusal: fs keeps what it had,
//     and a recheck refuses the change.
//
// Every decision is logged: who asked, what, the answer and when.
package approve

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"slices"
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
	// Approve: a change the policy leaves to the person; the word "yes"
	// (and the question's code, as for every kind).
	Approve Kind = iota + 1
	// ConfirmDelete: a recursive delete, backed up first; the word
	// "delete". The default is Cancel.
	ConfirmDelete
	// Irreversible: a recursive delete that no backup can hold; the word
	// "irreversible".
	Irreversible
	// Evict: older backups deleted for good to make room for a new one;
	// the word "evict".
	Evict
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
	case Evict:
		return "evict"
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

	mu        sync.Mutex // one question at a time
	pause     func(ctx context.Context) (resume func(), err error)
	settle    time.Duration // tests: the question's standing time (0: settle)
	fixedCode string        // tests: the code every question asks for
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
	io.WriteString(t.TTY, cancelSequences+resetAttrs+"\r\n[pinfold] "+shown(msg)+"\r\n")
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

// MaxQuestion bounds what a question shows (who asks, the action and
// the detail): about fifteen rows of an 80-column terminal, with the
// prompt line.
const MaxQuestion = 1200

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
	// Each field on its own: each is drawn on a line of its own, so a
	// character split between two (valid only joined) reaches the
	// terminal as two stray bytes, the second of which a terminal that
	// takes 8-bit controls reads as C1 (0x9b: CSI).
	if r.Kind.word() == "" || !printable(r.From) || !printable(r.Action) || !printable(r.Detail) {
		return Answer{Reason: "malformed request"}
	}
	// One screen's worth: a question longer than that would have its first
	// lines, which name the action, above the screen (the window size the
	// terminal reports is the agent's to change).
	if n := len(r.From) + len(r.Action) + len(r.Detail); n > MaxQuestion {
		return Answer{Reason: fmt.Sprintf("the question is too long to show whole (%d bytes, at most %d): it was not asked", n, MaxQuestion)}
	}
	if t.TTY == nil {
		return Answer{Reason: "no terminal to ask on"}
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// The answer is the word and a code drawn for this question: a
	// person answering a prompt of the agent's, or a question they do
	// not see, cannot give it.
	want := r.Kind.word() + " " + t.code()
	lines := []string{fmt.Sprintf("[pinfold] %s asks: %s", r.From, r.Action)}
	if r.Detail != "" {
		lines = append(lines, "[pinfold] "+r.Detail)
	}
	last := ""
	switch r.Kind {
	case ConfirmDelete:
		last = "[pinfold] This may be irreversible (a backup is kept). "
	case Irreversible:
		last = "[pinfold] NO BACKUP can be kept: this cannot be undone. "
	case Evict:
		last = "[pinfold] The backups named above go for good: this cannot be undone. "
	}
	last += fmt.Sprintf("Type %q to allow, anything else cancels (%s): ", want, timeout.Round(time.Second))
	lines = append(lines, last)
	// A question is asked only when it fits the screen whole: otherwise
	// its first lines, which name the action, would be above the screen.
	if ws, err := unix.IoctlGetWinsize(int(t.TTY.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
		if need := rowsFor(lines, int(ws.Col)); need > int(ws.Row)-1 {
			return Answer{Reason: fmt.Sprintf("the question needs %d rows and the terminal shows %d: it was not asked (a taller window, or fewer commands at once)", need, ws.Row)}
		}
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
	// At the foot of the screen, on lines of its own, each cleared before
	// it is drawn: what the agent printed scrolls up above it, and the
	// question ends where the cursor waits.
	question := questionReset + "\x1b[9999;1H\r\n\x1b[J"
	for i, l := range lines {
		question += "\x1b[2K" + lineStart + l
		if i < len(lines)-1 {
			question += "\r\n"
		}
	}
	if _, err := io.WriteString(t.TTY, question); err != nil {
		return Answer{Reason: "the terminal could not be written: " + err.Error()}
	}
	settled := settle
	if t.settle != 0 {
		settled = t.settle
	}
	line, err := readAnswer(ctx, t.TTY, fd, settled, timeout)
	io.WriteString(t.TTY, resetAttrs)
	switch {
	case errors.Is(err, errTimeout):
		io.WriteString(t.TTY, "\r\n[pinfold] no answer: cancelled\r\n")
		return Answer{Reason: "no answer in time"}
	case errors.Is(err, errCancelled):
		io.WriteString(t.TTY, "\r\n[pinfold] cancelled\r\n")
		return Answer{Reason: "declined"}
	case errors.Is(err, errNotKeys):
		io.WriteString(t.TTY, "\r\n[pinfold] the terminal sent something other than keys: cancelled\r\n")
		return Answer{Reason: "declined: the answer held an escape sequence or a control character"}
	case err != nil:
		return Answer{Reason: "the answer could not be read: " + err.Error()}
	case strings.EqualFold(strings.Join(strings.Fields(line), " "), want):
		io.WriteString(t.TTY, "\r\n")
		return Answer{Yes: true, Reason: "approved"}
	}
	io.WriteString(t.TTY, "\r\n[pinfold] cancelled\r\n")
	return Answer{Reason: "declined"}
}

// code is a question's four random digits (the tests may fix them).
func (t *Terminal) code() string {
	if t.fixedCode != "" {
		return t.fixedCode
	}
	n, err := rand.Int(rand.Reader, big.NewInt(10000))
	if err != nil {
		panic("approve: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return fmt.Sprintf("%04d", n.Int64())
}

// rowsFor is how many rows lines take on a screen cols wide (each line is
// ASCII, printable: what ask checked).
func rowsFor(lines []string, cols int) int {
	n := 0
	for _, l := range lines {
		n += max(1, (len(l)+cols-1)/cols)
	}
	return n
}

// resetAttrs undoes what text printed before a line could have set to
// hide or garble it: character attributes (SGR 0: no conceal, default
// colours), and the character set (G0 as ASCII, shifted in).
const resetAttrs = "\x1b[0m\x1b(B\x0f"

// cancelSequences ends whatever sequence the agent's output left open:
// CAN aborts a control sequence, and ST ends a string (DCS, OSC, APC, PM,
// SOS) that would otherwise take the question as its data (tmux keeps
// even ESC inside a DCS until ST).
const cancelSequences = "\x18\x1b\\"

// questionReset undoes, before a question, every terminal state the
// agent's output could have left to hide, move or cut it: any open
// sequence (cancelSequences), a soft reset (DECSTR), origin mode and the
// scrolling region (DECSTBM; both move the cursor, which ask then puts at
// the foot of the screen), insert mode, line wrapping (DECAWM, which
// DECSTR turns off on some terminals), the cursor's visibility,
// screen-wide reverse video, mouse, focus and bracketed-paste reporting
// (whose reports would void the answer), the palette and the default
// foreground, background and cursor colours (OSC 104, 110, 111, 112),
// then resetAttrs. A terminal ignores what it does not know.
const questionReset = cancelSequences + "\x1b[!p\x1b[?6l\x1b[r\x1b[4l\x1b[?7h\x1b[?25h\x1b[?5l" +
	"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?2004l" +
	"\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\\x1b]112\x1b\\" + resetAttrs

// lineStart begins each line of a question: a single-width line (DECSWL:
// the agent may have made the lines below double-height or -width), in
// explicit 24-bit colours, white on black, which no palette or default
// colour the agent set can change.
const lineStart = "\x1b#5\x1b[1;38;2;255;255;255;48;2;0;0;0m"

// settle is how long a question stands before keys are taken as its
// answer (see the package doc).
const settle = 700 * time.Millisecond

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

// takeTerminal checks that the caller's process group is the terminal's
// foreground, discards typeahead and sets the launcher's own settings
// for the question (see the package doc); the returned function gives
// the settings back. It takes the foreground from no one: the launch
// holds it while the agent runs (the agent has a terminal of its own,
// or is in the launch's group), and any other group that holds it is
// the person's shell (the launch was stopped and continued with bg) or
// another job. A question taken from there (SIGTTOU ignored) made the
// shell's next read fail, so that it exited, and the lines typed to it
// became the answer (a re-test).
func takeTerminal(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return nil, err
	}
	if fg != unix.Getpgrp() {
		return nil, errors.New("the launch is not the terminal's foreground job (continued with bg, or another job has the terminal)")
	}
	ask := *old
	ask.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.ISIG | unix.IEXTEN | unix.NOFLSH | unix.XCASE
	ask.Lflag |= unix.TOSTOP
	ask.Iflag &^= unix.IXON | unix.IXOFF | unix.IXANY | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IUCLC
	ask.Oflag |= unix.OPOST | unix.ONLCR
	ask.Cc[unix.VMIN], ask.Cc[unix.VTIME] = 1, 0
	// From the background (a Ctrl-Z and bg since the look) the change
	// stops the launcher with SIGTTOU rather than being made, if SIGTTOU
	// is at its default; the question then waits for fg.
	if err := unix.IoctlSetTermios(fd, unix.TCSETSF, &ask); err != nil {
		return nil, err
	}
	unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}

var (
	errTimeout   = errors.New("timeout")
	errCancelled = errors.New("cancelled")
	errNotKeys   = errors.New("not keys")
)

// maxAnswer bounds an answer: the longest word is 12 letters.
const maxAnswer = 64

// readAnswer waits settle (discarding what comes meanwhile), then reads
// one line of plain keys within timeout, echoing them to w and editing it
// here: printable ASCII is the line, backspace and DEL take a character
// back, Ctrl-U the line, Enter ends it, Ctrl-C and Ctrl-D cancel. An
// escape sequence or any other byte voids it (errNotKeys). It waits with
// poll, so that no goroutine is left reading the terminal after.
func readAnswer(ctx context.Context, w io.Writer, fd int, settle, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	waitFor := func(d time.Duration) (bool, error) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, max(int(d/time.Millisecond), 1))
			if err == unix.EINTR {
				continue
			}
			return n > 0, err
		}
	}
	settled := time.NewTimer(settle)
	defer settled.Stop()
	select {
	case <-ctx.Done():
		return "", errTimeout
	case <-settled.C:
	}
	unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
	buf := make([]byte, 64)
	var line []byte
	for {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return "", errTimeout
		}
		ready, err := waitFor(min(left, 200*time.Millisecond))
		if err != nil {
			return "", err
		}
		if !ready {
			continue
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
		for _, c := range buf[:m] {
			switch {
			case c == '\r' || c == '\n':
				return string(line), nil
			case c == 0x03 || c == 0x04: // Ctrl-C, Ctrl-D
				return "", errCancelled
			case c == 0x7f || c == 0x08:
				if len(line) > 0 {
					line = line[:len(line)-1]
					io.WriteString(w, "\b \b")
				}
			case c == 0x15: // Ctrl-U
				io.WriteString(w, strings.Repeat("\b \b", len(line)))
				line = line[:0]
			case c >= 0x20 && c < 0x7f:
				if len(line) == maxAnswer {
					return "", errNotKeys
				}
				line = append(line, c)
				w.Write([]byte{c})
			default: // ESC (a reply, a function key), other controls, non-ASCII
				return "", errNotKeys
			}
		}
	}
}

// The channel between a component and the launcher: one end of a
// socketpair each holds (the agent holds neither). A request and its
// answer are one JSON line each; one question at a time.

// wireRequest and wireAnswer are the lines on the channel. A request
// with Refresh set is no question: it asks what the workspace's git
// configs name now (ServeRefresh), answered in Protect and Notes.
type wireRequest struct {
	Action  string `json:"action"`
	Detail  string `json:"detail"`
	Kind    Kind   `json:"kind"`
	Refresh bool   `json:"refresh,omitempty"`
	// Recheck: a refresh because the launcher's watch on the git
	// configs has news (ServeChecked); answered as a refresh.
	Recheck bool `json:"recheck,omitempty"`
}

type wireAnswer struct {
	Yes     bool     `json:"yes"`
	Reason  string   `json:"reason"`
	Protect []string `json:"protect,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Watch: the names that lead to a git config in what the launcher
	// watches (ServeChecked's), for the component to tell its events by.
	Watch []string `json:"watch,omitempty"`
}

// maxLine bounds a line on the channel; maxAnswerLine a refresh's answer,
// which lists paths.
const (
	maxLine       = 8 << 10
	maxAnswerLine = 1 << 20
)

// Serve answers the questions a component (from) sends on c with t until
// c ends. The component's name comes from the launcher, not from the
// channel.
func Serve(c io.ReadWriteCloser, t *Terminal, from string) { ServeRefresh(c, t, from, nil) }

// Refresher is what the workspace's git configs name now, as paths
// relative to the workspace, and notes on what it could not read.
type Refresher func() (protect, notes []string)

// ServeRefresh is Serve that also answers a refresh (Client.Refresh)
// with refresh (nil: a refresh is answered with a reason and no paths).
// An answer longer than a line may be is cut as encodeAnswer says.
func ServeRefresh(c io.ReadWriteCloser, t *Terminal, from string, refresh Refresher) {
	var r WatchedRefresher
	if refresh != nil {
		r = func() (protect, notes, watch []string) {
			protect, notes = refresh()
			return protect, notes, nil
		}
	}
	ServeChecked(c, t, from, r, nil)
}

// WatchedRefresher is a Refresher that also says the names that lead to
// a git config in what the launcher watches (the component's watch on
// them: fs.ConfigNews).
type WatchedRefresher func() (protect, notes, watch []string)

// ServeChecked is ServeRefresh that also answers a recheck
// (Client.Recheck: the component found an event of the launcher's
// watch on the git configs to concern one) with recheck, and, with t
// nil, answers each question no: nobody can be asked, but the configs
// are still read.
func ServeChecked(c io.ReadWriteCloser, t *Terminal, from string, refresh, recheck WatchedRefresher) {
	defer c.Close()
	r := bufio.NewReaderSize(c, maxLine)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // ended, or a line too long: the channel is done
		}
		var q wireRequest
		var a wireAnswer
		switch {
		case json.Unmarshal(line, &q) != nil:
			a.Reason = "malformed request"
		case q.Refresh && refresh == nil:
			a.Reason = "this launcher reads no git configs for " + from
		case q.Refresh:
			a.Yes, a.Reason = true, "read"
			a.Protect, a.Notes, a.Watch = refresh()
		case q.Recheck && recheck == nil:
			a.Reason = "this launcher watches no git configs for " + from
		case q.Recheck:
			a.Yes, a.Reason = true, "read"
			a.Protect, a.Notes, a.Watch = recheck()
		case t == nil:
			a.Reason = "this session has no terminal to ask on"
		default:
			ans := t.Ask(context.Background(), Request{From: from, Action: q.Action, Detail: q.Detail, Kind: q.Kind})
			a.Yes, a.Reason = ans.Yes, ans.Reason
		}
		b, err := encodeAnswer(a)
		if err != nil {
			return
		}
		if _, err := c.Write(b); err != nil {
			return
		}
	}
}

// WatchAll in an answer's watch names (fs.WatchedName of any directory
// and no name, which no event has) says every event of the watch
// concerns a config: sent in the names' stead when they are too many
// for one answer (asked more often, never less).
const WatchAll = "*/"

// maxNotes and maxNoteLen bound an answer's notes (a note names a path
// and why it was not read or watched).
const (
	maxNotes   = 20
	maxNoteLen = 1 << 10
)

// encodeAnswer is a's line, cut to fit maxAnswerLine without taking
// protection away, and saying in its notes what was cut: notes to the
// first maxNotes of at most maxNoteLen bytes; then, if it is still too
// long, the watch's names to WatchAll; then the protected paths to the
// directories holding them, a level at a time (everything beneath a
// protected path is protected too). Paths that do not fit even as
// top-level names are no answer but a refusal: the component keeps
// what it protects already, and a recheck fails.
func encodeAnswer(a wireAnswer) ([]byte, error) {
	notes := make([]string, 0, min(len(a.Notes), maxNotes+1))
	for i, n := range a.Notes {
		if i == maxNotes {
			notes = append(notes, fmt.Sprintf("and %d more", len(a.Notes)-maxNotes))
			break
		}
		if len(n) > maxNoteLen {
			n = strings.ToValidUTF8(n[:maxNoteLen], "") + " (cut)"
		}
		notes = append(notes, n)
	}
	a.Notes = notes
	line := func(a wireAnswer) ([]byte, bool, error) {
		b, err := json.Marshal(a)
		return append(b, '\n'), len(b) < maxAnswerLine, err
	}
	if b, ok, err := line(a); ok || err != nil {
		return b, err
	}
	if len(a.Watch) > 0 && !slices.Equal(a.Watch, []string{WatchAll}) {
		a.Notes = append(slices.Clip(a.Notes), fmt.Sprintf("the %d names that lead to a git config were too many for one answer: every event of the watch is taken to concern one", len(a.Watch)))
		a.Watch = []string{WatchAll}
		if b, ok, err := line(a); ok || err != nil {
			return b, err
		}
	}
	depth := 0
	for _, p := range a.Protect {
		depth = max(depth, strings.Count(p, "/")+1)
	}
	for d := depth - 1; d >= 1; d-- {
		cut := a
		cut.Protect = protectAtDepth(a.Protect, d)
		cut.Notes = append(slices.Clip(a.Notes), fmt.Sprintf("the %d paths the git configs name were too many for one answer: sent as the %d directories at most %d deep that hold them, everything beneath those protected", len(a.Protect), len(cut.Protect), d))
		if b, ok, err := line(cut); ok || err != nil {
			return b, err
		}
	}
	refusal := wireAnswer{Reason: fmt.Sprintf("the %d paths the git configs name are too many for one answer, even as the top-level names that hold them: none was sent", len(a.Protect))}
	b, _, err := line(refusal)
	return b, err
}

// protectAtDepth is paths each cut to its first d names (the directory
// holding it, which covers it), each once, and none beneath another.
func protectAtDepth(paths []string, d int) []string {
	var out []string
	for _, p := range paths {
		if parts := strings.SplitAfterN(p, "/", d+1); len(parts) > d {
			p = strings.TrimSuffix(strings.Join(parts[:d], ""), "/")
		}
		out = append(out, p)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	set := make(map[string]bool, len(out))
	for _, p := range out {
		set[p] = true
	}
	kept := out[:0]
	for _, p := range out {
		beneath := false
		for i := strings.IndexByte(p, '/'); i >= 0 && !beneath; i = nextSlash(p, i) {
			beneath = set[p[:i]]
		}
		if !beneath {
			kept = append(kept, p)
		}
	}
	return kept
}

// nextSlash is the index of the slash in p after the one at i, or -1.
func nextSlash(p string, i int) int {
	if j := strings.IndexByte(p[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// Client is a component's end of the channel.
type Client struct {
	mu sync.Mutex
	c  io.ReadWriter
	r  *bufio.Reader
	// broken: a question or an answer went part-way (a write that
	// failed, an answer longer than the buffer), so that the next line
	// read would be the rest of one answer or the answer to another
	// question: every later exchange fails with it.
	broken error
}

// NewClient asks over c.
func NewClient(c io.ReadWriter) *Client {
	return &Client{c: c, r: bufio.NewReaderSize(c, maxAnswerLine)}
}

// Refresh asks the launcher what the workspace's git configs name now
// (ServeRefresh): paths relative to the workspace, and notes on what it
// could not read or send. err when it could not be asked or answered.
func (c *Client) Refresh() (protect, notes []string, err error) {
	protect, notes, _, err = c.read(wireRequest{Refresh: true})
	return protect, notes, err
}

// RefreshWatch is Refresh with the names that lead to a git config in
// what the launcher watches now (ServeChecked).
func (c *Client) RefreshWatch() (protect, notes, watch []string, err error) {
	return c.read(wireRequest{Refresh: true})
}

// Recheck is RefreshWatch after the component found an event of the
// launcher's watch on the git configs to concern one (ServeChecked).
func (c *Client) Recheck() (protect, notes, watch []string, err error) {
	return c.read(wireRequest{Recheck: true})
}

func (c *Client) read(q wireRequest) (protect, notes, watch []string, err error) {
	if c == nil {
		return nil, nil, nil, errors.New("no channel to the launcher")
	}
	a, err := c.exchange(q)
	if err != nil {
		return nil, nil, nil, err
	}
	if !a.Yes {
		return nil, nil, nil, errors.New(a.Reason)
	}
	return a.Protect, a.Notes, a.Watch, nil
}

// exchange sends q and reads its answer, one at a time on the channel.
func (c *Client) exchange(q wireRequest) (wireAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return wireAnswer{}, c.broken
	}
	b, err := json.Marshal(q)
	if err != nil || len(b) >= maxLine {
		return wireAnswer{}, errors.New("the question is too long")
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		c.broken = errors.New("the launcher could not be asked: " + err.Error())
		return wireAnswer{}, c.broken
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		// Past a line too long, the rest of it would be read as the
		// next question's answer, and that question's as the one after.
		c.broken = errors.New("no answer from the launcher: " + err.Error() + " (the channel is not used again)")
		return wireAnswer{}, c.broken
	}
	var a wireAnswer
	if json.Unmarshal(line, &a) != nil {
		return wireAnswer{}, errors.New("a malformed answer from the launcher")
	}
	return a, nil
}

// Ask puts the question to the person through the launcher and waits for
// the answer; any failure of the channel is no.
func (c *Client) Ask(action, detail string, kind Kind) Answer {
	if c == nil {
		return Answer{Reason: "no way to ask the person in this session"}
	}
	a, err := c.exchange(wireRequest{Action: action, Detail: detail, Kind: kind})
	if err != nil {
		return Answer{Reason: err.Error()}
	}
	return Answer{Yes: a.Yes, Reason: a.Reason}
}
