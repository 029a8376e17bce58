package launcher

import (
	"os"
	"strings"
	"testing"
	"time"
)

// readFor collects what f gives within d.
func readFor(f *os.File, d time.Duration) string { return readUntil(f, "", d) }

// readUntil reads f until what it gave holds want (until d has passed,
// for want ""), bounded by d.
func readUntil(f *os.File, want string, d time.Duration) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	f.SetReadDeadline(time.Now().Add(d))
	for want == "" || !strings.Contains(b.String(), want) {
		n, err := f.Read(buf)
		b.Write(buf[:max(n, 0)])
		if err != nil {
			break
		}
	}
	return b.String()
}

// While the relay is held (a question is asked, or the agent is stopped),
// nothing the agent wrote reaches the person's terminal: a question is
// drawn with nothing after it (SR-43), and output the agent wrote before
// it was frozen, still in its terminal's buffer, came after the question.
// Released, the held output follows.
func TestRelayHoldHoldsOutput(t *testing.T) {
	personM, slave, r := relayOnPTY(t)
	defer slave.Close()
	defer r.finish()
	slave.WriteString("before\n")
	if got := readUntil(personM, "before", 5*time.Second); !strings.Contains(got, "before") {
		t.Fatalf("control: the agent's output was not relayed: %q", got)
	}
	release := r.hold()
	slave.WriteString("during\n")
	if got := readFor(personM, 500*time.Millisecond); strings.Contains(got, "during") {
		t.Fatalf("output written while held reached the person's terminal: %q", got)
	}
	release()
	if got := readUntil(personM, "during", 5*time.Second); !strings.Contains(got, "during") {
		t.Fatalf("the held output did not follow the release: %q", got)
	}
}

// The agent's end leaves no reporting mode on in the person's terminal:
// an agent that turned on mouse, focus or bracketed-paste reports and
// ended (or was killed) left the terminal sending them to the person's
// shell as typed input. What the agent wrote comes first; the relay's
// reset follows it.
func TestRelayEndResetsReports(t *testing.T) {
	personM, slave, r := relayOnPTY(t)
	slave.WriteString("\x1b[?1000h\x1b[?1004h\x1b[?2004hlast words\n")
	if got := readUntil(personM, "last words", 5*time.Second); !strings.Contains(got, "last words") {
		t.Fatalf("control: the agent's output was not relayed: %q", got)
	}
	slave.Close() // the agent's tree is gone
	r.finish()
	r.finish() // cleanup may end it again: one reset
	got := readFor(personM, 500*time.Millisecond)
	for _, off := range []string{"\x1b[?1000l", "\x1b[?1003l", "\x1b[?1004l", "\x1b[?2004l", "\x1b[?25h"} {
		if strings.Count(got, off) != 1 {
			t.Errorf("after the agent's end the terminal got %q, want %q once", got, off)
		}
	}
}

// relayOnPTY is a relay of an agent's pty (its slave) to a person's
// terminal, a pty pair whose master (personM, pollable, so that reads
// have deadlines) the test reads; keys are not copied.
func relayOnPTY(t *testing.T) (personM, slave *os.File, r *ptyRelay) {
	t.Helper()
	personM, personS, err := newPTY(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { personM.Close(); personS.Close() })
	master, slave, err := newPTY(int(personS.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if r, err = newRelay(int(personS.Fd()), master, personS, false); err != nil {
		t.Fatal(err)
	}
	return personM, slave, r
}
