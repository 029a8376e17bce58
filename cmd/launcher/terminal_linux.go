package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// openTerminal opens the controlling terminal, or returns nil when there
// is none.
func openTerminal() *os.File {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	return f
}

// isTerminal reports whether f is a terminal (a character device such as
// /dev/null is not).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// maxTerminalLine is the longest line a terminal in canonical mode hands
// a reader whole: the kernel's line buffer holds 4096 bytes, the newline
// among them, and drops what is typed past it without a word. A line of
// this length may have been cut.
const maxTerminalLine = 4095

// readHidden prompts on out and reads one line from the terminal tty with
// echo off,
// restoring the terminal's settings afterwards, also when a signal (Ctrl-C)
// ends the program during the read: the signal is caught, the settings
// restored, and the signal raised again.
func readHidden(tty *os.File, out io.Writer, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ECHONL
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
	done := make(chan struct{})
	defer func() {
		signal.Stop(sigs)
		close(done)
	}()
	go func() {
		select {
		case sig := <-sigs:
			unix.IoctlSetTermios(fd, unix.TCSETS, old)
			signal.Reset(sig)
			unix.Kill(os.Getpid(), sig.(unix.Signal))
		case <-done:
		}
	}()
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprint(out, prompt)
	// Read into one buffer that is cleared after, not through a bufio
	// reader whose buffer kept a copy of the passphrase in the
	// launcher's heap for the whole session. A terminal in canonical
	// mode hands over at most one line (maxTerminalLine and its newline)
	// a read.
	buf := make([]byte, maxTerminalLine+1)
	defer clear(buf)
	n := 0
	for n < len(buf) && bytes.IndexByte(buf[:n], '\n') < 0 {
		m, err := tty.Read(buf[n:])
		n += m
		if err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		if m == 0 {
			return nil, fmt.Errorf("terminal: %w", io.ErrUnexpectedEOF)
		}
	}
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return bytes.Clone(bytes.TrimSuffix(line, []byte("\r"))), nil
}
