package bash

import (
	"context"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/internal/boot"
)

// A worker's start waits for the runner channel while a command holds
// it, but only until its context ends: a script whose caller left (or
// whose deadline passed) is not held to the command's end. The channel
// stays one job at a time (ServeRunner ends it when a second job comes
// before the first one's outcome): the start that gave up sent nothing,
// the command ends well, and a start after it gets its channel.
func TestStartCodeHonoursContext(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	passBash, passLauncher := unixPair(t)
	release := make(chan struct{})
	var inJob atomic.Int32
	go ServeRunner(b, func(_ context.Context, j Job) Outcome {
		inJob.Add(1)
		switch j.Kind {
		case JobShell:
			<-release // a long command
			return Outcome{Stdout: []byte(j.Command)}
		case JobCode:
			f, err := os.Open(os.DevNull)
			if err != nil {
				return Outcome{Error: err.Error()}
			}
			defer f.Close()
			// The worker's channel and the pipe that says how it ended.
			if err := boot.SendFiles(passLauncher, f, f); err != nil {
				return Outcome{Error: err.Error()}
			}
			return Outcome{}
		}
		return Outcome{Error: "unexpected job " + j.Kind}
	})
	rc := NewRunnerClient(a)
	rc.pass = passBash
	ran := make(chan Outcome, 1)
	go func() { ran <- rc.Run(context.Background(), Job{Kind: JobShell, Command: "long", Timeout: time.Hour}) }()
	for i := 0; inJob.Load() == 0; i++ { // the command holds the channel
		if i > 500 {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	started := make(chan error, 1)
	go func() {
		f, end, err := rc.StartCode(ctx, Job{Kind: JobCode, Timeout: time.Second})
		if f != nil {
			f.Close()
			end.Close()
		}
		started <- err
	}()
	select {
	case err := <-started:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("StartCode while a command ran: %v, want the context's end", err)
		}
	case <-time.After(3 * time.Second):
		t.Error("StartCode waited for the command, past its context's end")
		defer func() { <-started }() // it goes on once the command ends
	}

	close(release)
	if o := <-ran; o.Error != "" || string(o.Stdout) != "long" {
		t.Fatalf("the command: %+v", o)
	}
	f, end, err := rc.StartCode(context.Background(), Job{Kind: JobCode, Timeout: time.Second})
	if err != nil {
		t.Fatalf("a start after the command: %v", err)
	}
	f.Close()
	end.Close()
}

// unixPair is a connected pair of Unix stream sockets.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pass")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return conns[0], conns[1]
}
