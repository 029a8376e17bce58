package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/internal/memscan"
)

// Ctrl-C at a hidden prompt ends the program with the terminal's echo
// back on, not left off for the person's shell.
func TestReadHiddenRestoresOnSignal(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	echo := func() bool {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ECHO != 0
	}
	if !echo() {
		t.Fatal("a fresh terminal has echo off")
	}
	cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"readhidden"}, ExtraFiles: []*os.File{slave}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for echo() { // the child is at its prompt once echo is off
		if time.Now().After(deadline) {
			t.Fatal("the child never turned echo off")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("the child did not end by SIGINT: %v", err)
	}
	if !echo() {
		t.Error("echo is still off after Ctrl-C at the prompt")
	}
}

// openPTY is a pseudo-terminal pair (master, slave), closed with the
// test; the master's output is read and dropped, so that echo never
// blocks the slave's side.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	go io.Copy(io.Discard, master) // ends when the master closes
	return master, slave
}

// A line longer than the terminal's canonical buffer is cut there by
// the kernel (4095 bytes, then the newline), silently: a long token
// typed or pasted at `secrets add`'s prompt was stored cut short, and a
// new passphrase counted for its first 4095 bytes alone. A value or a new
// passphrase that fills the buffer is refused, with the way round it; a
// shorter value is read whole, and the passphrase of a vault there is
// read as before (cut as it was when the vault was sealed, so it opens).
func TestSecretsTerminalLineCut(t *testing.T) {
	valueAt := func(tty *os.File) ([]byte, error) {
		stdin := os.Stdin
		os.Stdin = tty
		defer func() { os.Stdin = stdin }()
		return readValue("tok")
	}
	// The passphrase read is seen by what it opens: a vault sealed under
	// 4095 bytes of it (what the terminal gave when that vault was made).
	cut, err := kms.Passphrase(bytes.Repeat([]byte("a"), 4095))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := kms.New(cut).Seal()
	if err != nil {
		t.Fatal(err)
	}
	passAt := func(isNew bool) func(*os.File) ([]byte, error) {
		return func(tty *os.File) ([]byte, error) {
			k, err := env{stdout: io.Discard, stderr: io.Discard}.vaultKey("", "--key-file", tty, isNew)
			if err != nil {
				return nil, err
			}
			if _, err := kms.Open(sealed, k); err != nil {
				return nil, err
			}
			return make([]byte, 4095), nil
		}
	}
	for _, c := range []struct {
		what string
		read func(*os.File) ([]byte, error)
		n    int
		want int    // bytes read, when not refused
		hint string // in the refusal
	}{
		{"value", valueAt, 4094, 4094, ""},
		{"value", valueAt, 4095, 0, "stdin"},
		{"value", valueAt, 5000, 0, "stdin"},
		{"new passphrase", passAt(true), 4095, 0, "--key-file"},
		{"new passphrase", passAt(true), 5000, 0, "--key-file"},
		{"passphrase", passAt(false), 5000, 4095, ""},
	} {
		master, slave := openPTY(t)
		type result struct {
			line []byte
			err  error
		}
		done := make(chan result, 1)
		go func() {
			line, err := c.read(slave)
			done <- result{line, err}
		}()
		// Written once echo is off, as a person would at the prompt.
		deadline := time.Now().Add(10 * time.Second)
		for {
			tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if tio.Lflag&unix.ECHO == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("echo was never turned off")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := master.Write(append(bytes.Repeat([]byte("a"), c.n), '\n')); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			switch {
			case c.hint == "" && (r.err != nil || len(r.line) != c.want):
				t.Errorf("%s of %d bytes: got %d bytes, %v; want %d", c.what, c.n, len(r.line), r.err, c.want)
			case c.hint != "" && (r.err == nil || !strings.Contains(r.err.Error(), "4095") || !strings.Contains(hintOf(r.err), c.hint)):
				t.Errorf("%s of %d bytes: got %d bytes, %v; want a refusal saying 4095 and %s", c.what, c.n, len(r.line), r.err, c.hint)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s of %d bytes: the read did not return", c.what, c.n)
		}
	}
}

// hintOf is the hint a cliError carries, or "".
func hintOf(err error) string {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.hint
	}
	return ""
}

// What readHidden read (a passphrase the launcher holds for a whole
// session, a value) is left nowhere in the process's memory once the
// caller has cleared the line it returned: a buffered reader's buffer
// kept a copy, never cleared. The needle is written in two halves, each
// cleared once written, so that only readHidden's copies can hold it.
func TestReadHiddenLeavesNoCopy(t *testing.T) {
	master, slave := openPTY(t)
	random := make([]byte, 24)
	rand.Read(random)
	phrase := make([]byte, base64.StdEncoding.EncodedLen(len(random))) // 32 bytes, no newline
	base64.StdEncoding.Encode(phrase, random)
	clear(random)
	apart := func(p []byte) []byte { return append(make([]byte, 0, 4*len(p)), p...) }
	a, b := apart(phrase[:16]), apart(phrase[16:])
	clear(phrase)
	done := make(chan []byte, 1)
	go func() {
		line, err := readHidden(slave, io.Discard, "passphrase: ")
		if err != nil {
			t.Error(err)
		}
		done <- line
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("echo was never turned off")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, p := range [][]byte{a, b, []byte("\n")} {
		w := bytes.Clone(p)
		if _, err := master.Write(w); err != nil {
			t.Fatal(err)
		}
		clear(w)
	}
	var line []byte
	select {
	case line = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("readHidden did not return")
	}
	if len(line) != len(a)+len(b) || !bytes.Equal(line[:len(a)], a) || !bytes.Equal(line[len(a):], b) {
		t.Fatalf("read %d bytes, not the line written", len(line))
	}
	// No GC first: a collection frees the garbage, and the scan's own
	// buffers, of the same size class, then overwrite a copy left there
	// (it was found one run in three so). A copy is a copy, collected or
	// not: freed memory keeps its bytes until reused.
	clear(line)
	if where, err := memscan.Find(a, b); err != nil || where != "" {
		t.Errorf("a copy of the line read is left at %s (%v)", where, err)
	}
	// Control: the scan finds a copy that is there.
	there := append(apart(a), b...)
	if where, err := memscan.Find(a, b); err != nil || where == "" {
		t.Fatalf("control: the scan does not find a copy in memory (%v)", err)
	}
	runtime.KeepAlive(there)
}
