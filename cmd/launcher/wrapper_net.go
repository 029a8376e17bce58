package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// wrapperNet is the net component beside a wrapper-mode agent in "proxy"
// mode: the launcher binary again, serving the listener stage 2 made in
// the agent's namespace, confined before it serves; under a throwaway
// uid of its own as root, under the person's uid otherwise. It has no
// session (no PKI, no kms): wrapper mode has no [[secrets]].
type wrapperNet struct {
	exe     string
	network policy.Network
	self    []netip.AddrPort // EnvSelfListeners: net refuses them whatever the policy opens
	verbose bool
	stderr  io.Writer
	cancel  context.CancelCauseFunc

	cmd     *exec.Cmd
	claim   io.Closer
	cg      *launcher.Cgroup // as root: net's own group, killed whole by stop
	done    chan struct{}
	refused atomic.Int64
}

func (w *wrapperNet) AgentDir() string              { return "" }
func (w *wrapperNet) AgentEnv() []string            { return session.ProxyEnv() }
func (w *wrapperNet) ProxyPort() uint16             { return session.AgentNetPort }
func (w *wrapperNet) Attach(string, int, int) error { return nil }

// AgentPause: nothing beside a wrapper-mode agent asks the person.
func (w *wrapperNet) AgentPause(func(context.Context) (func(), error)) {}

// AttachProxy starts net on the listener stage 2 made.
func (w *wrapperNet) AttachProxy(ln *os.File) error {
	boot, err := json.Marshal(netc.Bootstrap{Network: w.network, SelfListeners: w.self})
	if err != nil {
		return err
	}
	br, bw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer br.Close()
	defer bw.Close()
	logR, logW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer logW.Close()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if os.Geteuid() == 0 {
		uid, claim, err := launcher.ClaimThrowawayID()
		if err != nil {
			logR.Close()
			return err
		}
		w.claim = claim
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
		// Bounded like a session's components: the agent must not make
		// net use what the agent's own limits deny it.
		var tag [6]byte
		rand.Read(tag[:])
		w.cg, err = launcher.CreateCgroup(launcher.ProbeForLaunch().Cgroup, launcher.CgroupSpec{
			Session: fmt.Sprintf("s-%d-net-%x", os.Getpid(), tag), Pids: session.ComponentPids, Memory: session.NetMemory})
		if err != nil {
			logR.Close()
			return fmt.Errorf("net's cgroup: %w", err)
		}
		if fd, ok := w.cg.CgroupFD(); ok {
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		}
	}
	w.cmd = &exec.Cmd{
		Path: w.exe, Args: []string{"launcher", session.ComponentEntry, string(pki.Net)},
		Env: session.ComponentEnv(pki.Net), Dir: "/", Stderr: logW,
		ExtraFiles:  []*os.File{br, nil, ln}, // fds 3 and 5; no session socket on 4
		SysProcAttr: attr,
	}
	launcher.PreparePidfd()
	if err := w.cmd.Start(); err != nil {
		logR.Close()
		return fmt.Errorf("start net: %w", err)
	}
	w.done = make(chan struct{})
	go w.readLog(logR)
	// Waited for from here on, so that stop, which kills it, always
	// returns, whatever fails below.
	go func() {
		err := w.cmd.Wait()
		close(w.done)
		w.cancel(fmt.Errorf("component net exited (%v): the agent was killed; nothing runs without its proxy", err))
	}()
	if w.cg != nil {
		// v1: joined before it reads its bootstrap, so before it does anything.
		if err := w.cg.Add(w.cmd.Process.Pid); err != nil {
			return fmt.Errorf("net's cgroup: %w", err)
		}
	}
	_, err = bw.Write(boot)
	return err
}

// readLog counts net's refusals and, with --verbose, passes its lines on.
func (w *wrapperNet) readLog(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, " msg=refused ") {
			w.refused.Add(1)
		}
		if w.verbose {
			fmt.Fprintln(w.stderr, "launcher: net: "+line)
		}
	}
}

// stop ends net (by the pid it started) and prints what it refused.
func (w *wrapperNet) stop(quiet bool) {
	if w.cmd != nil && w.cmd.Process != nil {
		select {
		case <-w.done:
		default:
			w.cmd.Process.Kill()
			<-w.done
		}
	}
	if w.cg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.cg.Kill(ctx); err != nil {
			fmt.Fprintf(w.stderr, "launcher: warning: %v\n", err)
		}
		cancel()
		if err := w.cg.Remove(); err != nil {
			fmt.Fprintf(w.stderr, "launcher: warning: %v\n", err)
		}
	}
	if w.claim != nil {
		w.claim.Close()
	}
	if !quiet && w.cmd != nil {
		fmt.Fprintf(w.stderr, "launcher: net: %d requests refused\n", w.refused.Load())
	}
}

// newWrapperNet is the net component a wrapper-mode "proxy" launch runs
// beside the agent, and a context that ends when it does.
func newWrapperNet(p *policy.Policy, verbose bool, stderr io.Writer) (*wrapperNet, context.Context, error) {
	self, err := selfListeners(os.Getenv(EnvSelfListeners))
	if err != nil {
		return nil, nil, fail(exitUsage, "write it as IP:PORT[,IP:PORT...]", "%s: %v: nothing was started", EnvSelfListeners, err)
	}
	exe, err := sharedExecutable()
	if err != nil && os.Geteuid() == 0 {
		return nil, nil, err // as root net runs under its own uid, which must run the binary
	}
	if err != nil {
		if exe, err = os.Executable(); err != nil {
			return nil, nil, errors.New("the launcher's own binary cannot be found")
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &wrapperNet{exe: exe, network: p.Network, self: self, verbose: verbose, stderr: stderr, cancel: cancel}, ctx, nil
}
