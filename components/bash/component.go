package bash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// The descriptors the launcher hands the bash process beyond the
// bootstrap (3) and the Unix listener (4) every component gets.
const (
	fdAgentListener = 5  // the TCP listener in the agent's network namespace
	fdRunner        = 6  // the launcher's end runs the commands' workers (socketpair)
	fdFS            = 7  // fs, for backups before a confirmed deletion (socketpair)
	fdPass          = 8  // the launcher passes Code Mode workers' and net's channels here (socketpair)
	fdStarts        = 9  // the launcher's end starts Code Mode workers and connects to net (socketpair)
	fdApprove       = 10 // optional: the approval channel to the launcher
)

// OpRun is the bash component's one operation: decide a command line and,
// when it may, run it in a confined worker.
const OpRun = "run"

// maxBootstrap bounds what bash reads from its bootstrap pipe.
const maxBootstrap = 1 << 20

// Bootstrap is everything the launcher hands bash over its pipe.
type Bootstrap struct {
	boot.Credential
	Commands policy.Commands `json:"commands"`
	Options  Options         `json:"options"`
	Code     code.Limits     `json:"code"`
	// Net: the session has net (proxy mode); TrustPEM is its interception
	// CA, trusted beside the system's roots for scripts' fetches.
	Net      bool   `json:"net,omitempty"`
	TrustPEM []byte `json:"trust_pem,omitempty"`
}

// Main is the bash process: it reads its bootstrap, takes its listeners
// and channels, confines itself (no files at all, no new sockets, no
// exec: it parses, asks and forwards) and serves until it is killed.
func Main() int {
	return boot.Run(pki.Bash, serve)
}

func serve(log *slog.Logger) error {
	// Looked at first: the Go runtime takes free descriptors for itself.
	if !boot.IsListening(fdAgentListener) || !boot.IsSocket(fdRunner) || !boot.IsSocket(fdFS) || !boot.IsSocket(fdPass) || !boot.IsSocket(fdStarts) {
		return errors.New("bash runs only as a component the launcher starts (no agent listener, runner, fs, passing and starting channels on descriptors 5-9)")
	}
	hasApprove := boot.IsSocket(fdApprove)
	var b Bootstrap
	ln, err := boot.Start(pki.Bash, maxBootstrap, &b)
	if err != nil {
		return err
	}
	leaf, err := b.Leaf(pki.Bash)
	if err != nil {
		return err
	}
	srv := b.ServerFor(leaf, log)
	conn := func(fd int, name string) (net.Conn, error) {
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return c, nil
	}
	rc, err := conn(fdRunner, "runner channel")
	if err != nil {
		return err
	}
	fc, err := conn(fdFS, "fs channel")
	if err != nil {
		return err
	}
	fsc, err := rpc.NewClientConn(leaf, pki.FS, fc, nil)
	if err != nil {
		return err
	}
	pc, err := conn(fdPass, "passing channel")
	if err != nil {
		return err
	}
	sc, err := conn(fdStarts, "starting channel")
	if err != nil {
		return err
	}
	// Commands and starts each have a channel: a command holds its own
	// to its end (a build, a dev server), and a script, or a script's
	// fetch, is not held behind it.
	runner, starter := NewRunnerClient(rc), NewRunnerClient(sc)
	starter.pass = pc.(*net.UnixConn)
	files := fs.NewClient(fsc)
	broker := &Broker{Commands: b.Commands, Options: b.Options, Log: log,
		Run: runner.Run, Backup: FSBackup(files), Files: files, CodeLimits: b.Code, StartCode: starter.StartCode}
	if b.Net {
		// The roots are read now: confined, bash reads no file.
		if broker.Fetch, err = fetchClient(starter, b.TrustPEM); err != nil {
			return err
		}
	}
	if hasApprove {
		ac, err := conn(fdApprove, "approval channel")
		if err != nil {
			return err
		}
		broker.Ask = approve.NewClient(ac).Ask
	}
	af := os.NewFile(fdAgentListener, "agent listener")
	agentLn, err := net.FileListener(af)
	af.Close()
	if err != nil {
		return fmt.Errorf("agent listener: %w", err)
	}
	// From here bash reads no file, makes no socket and runs no program:
	// the commands it allows run in workers the launcher makes.
	if err := launcher.ConfineComponent(launcher.ComponentConfinement{}); err != nil {
		return err
	}
	Register(srv, broker)
	log.Info("serving", "approvals", hasApprove)
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(agentLn) }()
	go func() { errs <- srv.Serve(ln) }()
	return <-errs
}

// Register adds bash's operations to srv, run and code: the agent's
// alone (Code Mode's tool calls come from the workers bash serves, not
// through the listener).
func Register(srv *rpc.Server, b *Broker) {
	srv.Handle(OpCode, func(ctx context.Context, caller pki.Role, args json.RawMessage) (rpc.Decision, any) {
		if caller != pki.Agent {
			return rpc.Deny(rpc.ReasonCallerRole, "", "only the agent runs scripts, not "+string(caller)), nil
		}
		var a CodeArgs
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return rpc.Deny(rpc.ReasonBadRequest, "", "code takes {\"script\": …}"), nil
		}
		d, res := b.Code(ctx, a.Script)
		if res == nil {
			return d, nil
		}
		return d, res
	})
	srv.HandleData(OpRun, func(ctx context.Context, caller pki.Role, args json.RawMessage, data []byte) (rpc.Decision, any, []byte) {
		if caller != pki.Agent {
			return rpc.Deny(rpc.ReasonCallerRole, "", "only the agent runs commands, not "+string(caller)), nil, nil
		}
		var a RunArgs
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil || len(data) > 0 {
			return rpc.Deny(rpc.ReasonBadRequest, "", "run takes {\"command\": …} and no data"), nil, nil
		}
		d, res := b.Handle(ctx, a.Command)
		if res == nil {
			return d, nil, nil
		}
		return d, res, append(res.Stdout, res.Stderr...)
	})
}

// FSBackup is Broker.Backup through fs.
func FSBackup(c *fs.Client) func(ctx context.Context, path string) (string, error) {
	return func(ctx context.Context, path string) (string, error) {
		r, d, err := c.Backup(ctx, path)
		switch {
		case err != nil:
			return "", err
		case d.Allowed:
			return r.ID, nil
		case d.Rule == fs.RuleNoRoom:
			return "", fmt.Errorf("%w: %s", ErrNoRoom, d.Detail)
		case d.Reason == rpc.ReasonUnknown:
			return "", ErrAbsent
		}
		return "", fmt.Errorf("fs refused (%s): %s", d.Rule, d.Detail)
	}
}

// Client is bash as the agent calls it.
type Client struct{ c *rpc.Client }

// NewClient wraps c, an rpc client for the bash component.
func NewClient(c *rpc.Client) *Client { return &Client{c: c} }

// Run asks bash to run command.
func (c *Client) Run(ctx context.Context, command string) (RunResult, rpc.Decision, error) {
	var r RunResult
	d, data, err := c.c.CallData(ctx, OpRun, RunArgs{Command: command}, nil, &r)
	if err == nil && d.Allowed {
		if r.StdoutLen < 0 || r.StdoutLen > len(data) {
			return r, d, errors.New("bash: a malformed answer (output lengths)")
		}
		r.Stdout, r.Stderr = data[:r.StdoutLen], data[r.StdoutLen:]
	}
	return r, d, err
}

// Code asks bash to check and run a Code Mode script. A script that ran
// is allowed whatever its end (r.Error says how it failed).
func (c *Client) Code(ctx context.Context, script string) (CodeResult, rpc.Decision, error) {
	var r CodeResult
	d, err := c.c.Call(ctx, OpCode, CodeArgs{Script: script}, &r)
	return r, d, err
}

// The runner channel: bash's end sends a Job per line and reads an
// Outcome per line; the launcher's end (ServeRunner) runs them, one at a
// time, in workers. The starting channel is another such channel, for
// the starts of Code Mode workers and connections to net (StartCode),
// quick jobs that must not wait for a command's end.

// maxRunnerLine bounds a line on the runner channel: an outcome carries
// at most rpc.MaxData bytes of output, base64 in JSON.
const maxRunnerLine = 4 << 20

// RunnerClient is bash's end of the runner channel, and of the passing
// channel on which the launcher hands it Code Mode workers' channels.
type RunnerClient struct {
	// turn is the channel's lock (a token in a one-slot channel, so that
	// waiting for it can end with the caller's context): the launcher
	// runs one job at a time and ends the channel when a second comes
	// before the first one's outcome. A command holds it to its end.
	turn chan struct{}
	c    io.ReadWriter
	r    *bufio.Reader
	pass *net.UnixConn
}

// StartCode has the launcher start a Code Mode worker (j.Kind JobCode)
// or connect bash to net (JobNet) and returns bash's end of the channel
// and, for a worker, the pipe on which the launcher says how it ended
// (code.WorkerEnd; nil for net).
// It waits for the channel while a command holds it, until ctx ends: a
// script or a fetch whose caller has left, or whose deadline has passed,
// does not wait on for the command's end. Once the job is sent its
// answer is awaited (a start is quick), or the channel would be out of
// step.
func (rc *RunnerClient) StartCode(ctx context.Context, j Job) (conn, end *os.File, err error) {
	if err := rc.lock(ctx); err != nil {
		return nil, nil, fmt.Errorf("not started: the request ended while a command held the launcher's runner (%w)", err)
	}
	defer rc.unlock()
	if rc.pass == nil {
		return nil, nil, errors.New("no passing channel")
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, nil, err
	}
	if _, err := rc.c.Write(append(b, '\n')); err != nil {
		return nil, nil, fmt.Errorf("the launcher's runner: %w", err)
	}
	if o := rc.readOutcome(); o.Error != "" {
		return nil, nil, errors.New(o.Error)
	}
	if j.Kind != JobCode {
		conn, err := boot.ReceiveFile(rc.pass)
		return conn, nil, err
	}
	fs, err := boot.ReceiveFiles(rc.pass, 2)
	if err != nil {
		return nil, nil, err
	}
	return fs[0], fs[1], nil
}

// NewRunnerClient runs jobs over c.
func NewRunnerClient(c io.ReadWriter) *RunnerClient {
	return &RunnerClient{turn: make(chan struct{}, 1), c: c, r: bufio.NewReaderSize(c, maxRunnerLine)}
}

// lock takes the channel, or returns ctx's error if ctx ends first (or
// had ended).
func (rc *RunnerClient) lock(ctx context.Context) error {
	select {
	case rc.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil { // both were ready, and select chose the lock
		rc.unlock()
		return err
	}
	return nil
}

func (rc *RunnerClient) unlock() { <-rc.turn }

// Run sends j and waits for its outcome; a broken channel is an outcome
// with Error set (the command may not have run; it is not retried). A
// ctx that ends while another job holds the channel ends the wait: j is
// not run. If
// ctx ends while the job runs, the launcher is told to end it
// (JobCancel), and Run returns its outcome once it has ended: a command
// whose caller left does not run on to its timeout, holding the channel.
func (rc *RunnerClient) Run(ctx context.Context, j Job) Outcome {
	if err := rc.lock(ctx); err != nil {
		return Outcome{Error: "not run: the request ended while it waited (" + err.Error() + ")"}
	}
	defer rc.unlock()
	b, err := json.Marshal(j)
	if err != nil {
		return Outcome{Error: err.Error()}
	}
	if _, err := rc.c.Write(append(b, '\n')); err != nil {
		return Outcome{Error: "the launcher's runner: " + err.Error()}
	}
	// The cancel is written, if at all, before Run returns: after this
	// job's line and before the next one's.
	answered := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			rc.c.Write([]byte(`{"kind":"` + JobCancel + `"}` + "\n"))
		case <-answered:
		}
	})
	o := rc.readOutcome()
	close(answered)
	wg.Wait()
	return o
}

func (rc *RunnerClient) readOutcome() Outcome {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return Outcome{Error: "the launcher's runner: " + err.Error()}
	}
	var o Outcome
	if err := json.Unmarshal(line, &o); err != nil {
		return Outcome{Error: "the launcher's runner: a malformed outcome"}
	}
	return o
}

// ServeRunner is the launcher's end: each Job read from c is run by run
// (a confined worker) and its Outcome written back, until c ends. Jobs
// run one at a time; a JobCancel read while one runs ends its context
// with ErrCancelled, and the end of c ends it too.
func ServeRunner(c io.ReadWriteCloser, run func(context.Context, Job) Outcome) {
	defer c.Close()
	lines, quit := make(chan runnerLine), make(chan struct{})
	defer close(quit)
	go readJobs(c, lines, quit)
	enc := json.NewEncoder(c)
	for l := range lines {
		var o Outcome
		if l.bad != nil {
			o = *l.bad
		} else {
			if l.job.Kind == JobCancel {
				continue // its job has ended already
			}
			var ok bool
			if o, ok = runJob(run, l.job, lines); !ok {
				return
			}
		}
		if enc.Encode(o) != nil {
			return
		}
	}
}

// runnerLine is a line of the runner channel: a job, or the answer to a
// line that is not one.
type runnerLine struct {
	job Job
	bad *Outcome
}

// readJobs reads c's lines into lines until c ends or quit is closed,
// then closes lines.
func readJobs(c io.Reader, lines chan<- runnerLine, quit <-chan struct{}) {
	defer close(lines)
	// A command is at most MaxSize bytes; JSON spells <, > and & in six.
	r := bufio.NewReaderSize(c, 6*MaxSize+4096)
	for {
		line, err := r.ReadSlice('\n')
		var l runnerLine
		switch {
		case err == bufio.ErrBufferFull:
			// Answered, and the rest of the line skipped: one bad job
			// does not end the channel for the session.
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			if err != nil {
				return
			}
			l.bad = &Outcome{Error: "a job too large"}
		case err != nil:
			return // the channel ended
		case json.Unmarshal(line, &l.job) != nil:
			l.bad = &Outcome{Error: "malformed job"}
		}
		select {
		case lines <- l:
		case <-quit:
			return
		}
	}
}

// runJob runs j while reading lines for its cancel. ok is false when the
// channel must end: it ended while j ran (j is ended too), or a line
// other than a cancel came before j's outcome (bash sends one job at a
// time).
func runJob(run func(context.Context, Job) Outcome, j Job, lines <-chan runnerLine) (o Outcome, ok bool) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan Outcome, 1)
	go func() { done <- run(ctx, j) }()
	ok = true
	for {
		select {
		case o := <-done:
			return o, ok
		case l, open := <-lines:
			switch {
			case open && l.bad == nil && l.job.Kind == JobCancel:
				cancel(ErrCancelled)
			case !open:
				lines = nil // a nil channel: the select waits for done
				cancel(ErrCancelled)
				ok = false
			default:
				cancel(errors.New("a second job came before the first one's outcome"))
				ok = false
			}
		}
	}
}
