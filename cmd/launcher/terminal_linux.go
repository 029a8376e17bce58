package main

import (
	"bufio"
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
	line, err := bufio.NewReaderSize(tty, 4096).ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}
