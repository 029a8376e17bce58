package register

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// answerOn types the question's word and code once the question has
// stood, and types it again when the launcher discarded it (no echo):
// a launcher slowed down by a loaded machine flushes the terminal's
// input late, and the control's answer was lost (TestRegisterCheck's
// SR-44 control, seen with the machine's load at 5 on 2 CPUs).
func TestAnswerOnTypesAgain(t *testing.T) {
	for _, c := range []struct {
		name    string
		discard int // answers the fake launcher throws away unechoed
	}{{"taken at once", 0}, {"first discarded", 1}} {
		t.Run(c.name, func(t *testing.T) {
			master, slave, err := openPTY()
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			defer slave.Close()
			// The launcher's own settings while it asks: no echo but its own.
			tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			tio.Lflag &^= unix.ECHO
			if err := unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { answerOn(master, "delete", true); close(done) }()
			slave.WriteString("\r\nType \"delete 4821\" to allow, anything else to refuse: ")
			start := time.Now()
			typed := make(chan string)
			go func() {
				lines := bufio.NewReader(slave)
				for {
					line, err := lines.ReadString('\n')
					if err != nil {
						return
					}
					typed <- strings.TrimSpace(line)
				}
			}()
			var got []string
			for len(got) <= c.discard {
				select {
				case line := <-typed:
					got = append(got, line)
				case <-time.After(15 * time.Second):
					t.Fatalf("typed %q, and no answer after that for 15s", got)
				}
			}
			slave.WriteString(got[len(got)-1]) // the echo of the one taken
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("answerOn did not end once its answer was echoed")
			}
			for _, g := range got {
				if g != "delete 4821" {
					t.Errorf("typed %q, want the word and the code", g)
				}
			}
			if took := time.Since(start); took < 900*time.Millisecond {
				t.Errorf("answered after %v, before the question stood a second", took)
			}
		})
	}
}
