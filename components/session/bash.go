package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// AgentBashAddr is bash's listener in the agent's namespace; EnvBash names
// it in the agent's environment.
const (
	AgentBashAddr = "127.0.0.1:7403"
	EnvBash       = "PINFOLD_BASH"
)

// startBash starts bash under a throwaway uid of its own: its listener in
// the agent's namespace, the runner channel whose launcher end runs its
// jobs in workers (runWorker), fsEnd (bash's end of its channel to fs)
// and, when someone can be asked, an approval channel.
func (s *Session) startBash(ns netns.NsHandle, fsEnd *os.File) error {
	if s.cfg.Worker == nil {
		return errors.New("session: bash needs the workers' policy (Config.Worker)")
	}
	lf, err := listenerFile(ns, AgentBashAddr, pki.Bash)
	if err != nil {
		return err
	}
	defer lf.Close()
	rc, bashEnd, err := channel("runner channel")
	if err != nil {
		return err
	}
	defer bashEnd.Close()
	// The passing channel: the launcher hands bash each Code Mode
	// worker's channel on it.
	pc, passBash, err := channel("passing channel")
	if err != nil {
		rc.Close()
		return err
	}
	defer passBash.Close()
	s.pass = pc
	// The starting channel: Code Mode workers' starts and connections to
	// net, served beside the commands, not behind one.
	sc, startBash, err := channel("starting channel")
	if err != nil {
		rc.Close()
		pc.Close()
		return err
	}
	defer startBash.Close()
	go bash.ServeRunner(rc, s.runCommand)
	go bash.ServeRunner(sc, s.runStart)
	extra := []*os.File{lf, bashEnd, fsEnd, passBash, startBash}
	if s.cfg.Asker != nil {
		end, err := s.approvals(pki.Bash)
		if err != nil {
			return err
		}
		defer end.Close()
		extra = append(extra, end)
	}
	protected := make([]string, 0, len(s.cfg.Protected))
	for _, p := range s.cfg.Protected {
		rel, err := filepath.Rel(s.cfg.Workspace, p)
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		protected = append(protected, rel)
	}
	uid, claim, err := launcher.ClaimThrowawayID()
	if err != nil {
		return err
	}
	leaf, keyPEM, err := s.issue(pki.Bash)
	if err != nil {
		claim.Close()
		return err
	}
	b, err := json.Marshal(bash.Bootstrap{Credential: credential(leaf, keyPEM), Commands: s.cfg.Worker.Commands,
		Options: bash.Options{Workspace: s.cfg.Workspace, Protected: protected, Authority: s.authority()},
		Code:    codeLimits(s.cfg.Worker.CodeMode), Net: s.net != nil, TrustPEM: s.trustPEM()})
	clear(keyPEM)
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %w", err)
	}
	defer clear(b)
	return s.start(pki.Bash, uid, claim, b, extra)
}

// authority is every path the launcher keeps for itself: the policy,
// the vault (Config.Authority), the sessions' and backups' directories
// and the launcher binary.
func (s *Session) authority() []string {
	return append([]string{s.cfg.Root, BackupRoot, s.cfg.Launcher}, s.cfg.Authority...)
}

// runCommand runs a job of bash's runner channel: a command only
// (runWorker).
func (s *Session) runCommand(ctx context.Context, j bash.Job) bash.Outcome {
	if j.Kind != bash.JobShell {
		return bash.Outcome{Error: fmt.Sprintf("no job kind %q on the runner channel", j.Kind)}
	}
	return s.runWorker(ctx, j)
}

// runStart runs a job of bash's starting channel: the start of a Code
// Mode worker (startCode) or a connection to net (connectNet), never a
// command.
func (s *Session) runStart(_ context.Context, j bash.Job) bash.Outcome {
	switch j.Kind {
	case bash.JobCode:
		return s.startCode(j)
	case bash.JobNet:
		return s.connectNet()
	}
	return bash.Outcome{Error: fmt.Sprintf("no job kind %q on the starting channel", j.Kind)}
}

// startCode starts a Code Mode worker (code.StartWorker: its own network
// namespace, a throwaway uid, a cgroup of its own bounding its memory and
// processes, confined by itself before it reads the script) whose one
// channel is a socket, hands bash the other end on the
// passing channel and then a pipe that says how the worker ended
// (code.WriteEnd), and kills the worker at the job's timeout (the
// script's deadline and the grace) or when the session stops. bash serves
// it; the launcher only makes and ends it.
func (s *Session) startCode(j bash.Job) bash.Outcome {
	// The launcher, not bash, sets the worker's limits and its life: the
	// policy's [code_mode], written into the channel before bash gets it.
	lim := codeLimits(s.cfg.Worker.CodeMode)
	if s.codeWorkers.Add(1) > maxCodeWorkers {
		s.codeWorkers.Add(-1)
		return bash.Outcome{Error: fmt.Sprintf("%d scripts are running already, the most a session runs at once", maxCodeWorkers)}
	}
	if !s.workers.TryRLock() {
		s.codeWorkers.Add(-1)
		return bash.Outcome{Error: "the session is stopping"}
	}
	release := func() {
		s.codeWorkers.Add(-1)
		s.workers.RUnlock()
	}
	workerEnd, bashEnd, err := socketpair()
	if err != nil {
		release()
		return bash.Outcome{Error: err.Error()}
	}
	defer bashEnd.Close()
	// How the worker ended goes to bash on a pipe beside its channel:
	// bash sees the channel close, only the launcher the worker's cgroup
	// (code.WriteEnd).
	endR, endW, err := os.Pipe()
	if err != nil {
		workerEnd.Close()
		release()
		return bash.Outcome{Error: err.Error()}
	}
	defer endR.Close()
	w, err := code.StartWorker([]string{s.cfg.Launcher, code.WorkerEntry}, lim, workerEnd, workerEnd)
	workerEnd.Close()
	if err != nil {
		endW.Close()
		release()
		return bash.Outcome{Error: err.Error()}
	}
	go func() {
		w.WriteEnd(endW) // bash may have gone: nothing to do then
		endW.Close()
	}()
	go func() {
		defer release()
		select {
		case <-w.Done():
		case <-time.After(lim.Deadline + code.WorkerGrace):
			w.Kill()
		case <-s.workersCtx.Done():
			w.Kill()
		}
	}()
	if err := code.WriteLimits(bashEnd, lim); err != nil {
		w.Kill()
		return bash.Outcome{Error: "the worker's limits: " + err.Error()}
	}
	if err := boot.SendFiles(s.pass, bashEnd, endR); err != nil {
		w.Kill()
		return bash.Outcome{Error: "the passing channel: " + err.Error()}
	}
	return bash.Outcome{}
}

// connectNet makes a connection from bash to net's proxy (a socketpair,
// an end passed to each): Code Mode's fetch goes where the agent's
// requests go, under the same decisions.
func (s *Session) connectNet() bash.Outcome {
	if s.netPass == nil {
		return bash.Outcome{Error: `this session has no net component (network.mode is not "proxy")`}
	}
	netEnd, bashEnd, err := socketpair()
	if err != nil {
		return bash.Outcome{Error: err.Error()}
	}
	defer netEnd.Close()
	defer bashEnd.Close()
	if err := boot.SendFile(s.netPass, netEnd); err != nil {
		return bash.Outcome{Error: "net's passing channel: " + err.Error()}
	}
	if err := boot.SendFile(s.pass, bashEnd); err != nil {
		return bash.Outcome{Error: "the passing channel: " + err.Error()}
	}
	return bash.Outcome{}
}

// trustPEM is the interception CA's certificate, when net injects.
func (s *Session) trustPEM() []byte {
	if s.inject == nil {
		return nil
	}
	return s.inject.CertPEM()
}

// maxCodeWorkers bounds the Code Mode workers a session runs at once.
const maxCodeWorkers = 4

// codeLimits is the policy's [code_mode] as a worker's limits.
func codeLimits(cm policy.CodeMode) code.Limits {
	return code.Limits{Memory: int64(cm.Memory), Stack: int64(cm.Stack), Deadline: time.Duration(cm.Deadline),
		ToolCalls: int(cm.ToolCalls), Output: int(cm.Output), ScriptSize: int(cm.ScriptSize)}
}

// errTimeout is a worker's context cause when its command ran out of time.
var errTimeout = errors.New("the command's time ran out")

// runWorker runs one of bash's jobs: bash -c COMMAND in a worker the
// launcher confines like an agent, under WorkerPolicy, with the
// workspace's protected paths and the launcher's own files beneath it
// mounted read-only, the launcher's own files elsewhere that the policy's
// paths reach covered (LaunchOptions.Mask: a command reads them by no
// name, whatever bash's rules let through), stdin empty, stdout and stderr kept up to the job's
// cap, and killed at its timeout or when its caller leaves (jobCtx
// ends). Any failure to confine is an error: the command is never run
// any other way.
func (s *Session) runWorker(jobCtx context.Context, j bash.Job) bash.Outcome {
	if j.Timeout <= 0 || j.Output < 0 {
		return bash.Outcome{Error: "a job without a timeout or with a negative output cap"}
	}
	// While the command runs no question is put (fs's approved protected
	// changes wait for its end). Taken before the workers' lock, so that
	// Stop never waits for a question's answer.
	if s.cfg.Asker != nil {
		defer s.cfg.Asker.Hold()()
	}
	if !s.workers.TryRLock() {
		return bash.Outcome{Error: "the session is stopping"}
	}
	defer s.workers.RUnlock()
	// The launcher's own files are never readable: a worker that could
	// read the workspace would read them there.
	for _, a := range s.cfg.Authority {
		if filepath.Clean(a) != filepath.Clean(s.cfg.Workspace) && policy.Path(s.cfg.Workspace).Contains(policy.Path(a)) {
			if _, err := os.Lstat(a); err == nil {
				return bash.Outcome{Error: fmt.Sprintf("the launcher's own file %s lies in the workspace, where a command would read it: move it out of the workspace to run commands", a)}
			}
		}
	}
	if s.commandsOff.Load() {
		return bash.Outcome{Error: "commands are off for this session: the workspace could not be checked after an earlier command"}
	}
	// What the git configs name now (changed since the start: a config
	// fs changed with the person's approval, or the person's own edit)
	// is read-only for the command, or moved aside if it makes it; read
	// in the same walk, and kept.
	before, names, named, notes, err := fs.ProtectedNow(s.cfg.Workspace, slices.Concat(s.protected(), s.authority()))
	if err != nil {
		return bash.Outcome{Error: err.Error()}
	}
	s.addNamed(named, notes)
	// Each protected file is held open (O_PATH) until the check after the
	// command: an inode number cannot be given to a new file while its
	// old file lives, so "the same device and inode" means the same file.
	existed := map[[2]uint64]bool{}
	for _, p := range names {
		fd, err := syscall.Open(p, unix.O_PATH|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return bash.Outcome{Error: fmt.Sprintf("hold the protected path %s: %v", p, err)}
		}
		defer syscall.Close(fd)
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return bash.Outcome{Error: fmt.Sprintf("hold the protected path %s: %v", p, err)}
		}
		existed[[2]uint64{uint64(st.Dev), st.Ino}] = true
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return bash.Outcome{Error: err.Error()}
	}
	defer devNull.Close()
	cap := &outputCap{left: min(j.Output, rpc.MaxData)}
	outR, outW, err := os.Pipe()
	if err != nil {
		return bash.Outcome{Error: err.Error()}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return bash.Outcome{Error: err.Error()}
	}
	var stdout, stderr []byte
	var wg sync.WaitGroup
	wg.Go(func() { stdout = cap.drain(outR) })
	wg.Go(func() { stderr = cap.drain(errR) })
	ctx, cancel := context.WithTimeoutCause(s.workersCtx, j.Timeout, errTimeout)
	defer cancel()
	// The caller leaving (bash.ErrCancelled) ends the command too.
	ctx, cancelJob := context.WithCancelCause(ctx)
	defer cancelJob(nil)
	defer context.AfterFunc(jobCtx, func() { cancelJob(context.Cause(jobCtx)) })()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	// Its own goroutine: Launch locks its thread (the worker's parent-death
	// signal follows it) and the thread ends with the goroutine.
	go func() {
		code, err := launcher.Launch(ctx, launcher.LaunchOptions{Policy: s.cfg.Worker, Quiet: true,
			Argv:  []string{"bash", "--noprofile", "--norc", "-c", j.Command},
			Stdin: devNull, Stdout: outW, Stderr: errW, ReadOnly: before, Mask: s.authority()})
		done <- result{code, err}
	}()
	r := <-done
	outW.Close()
	errW.Close()
	wg.Wait()
	o := bash.Outcome{ExitCode: r.code, Stdout: stdout, Stderr: stderr, Truncated: cap.cut}
	switch {
	case r.err != nil && errors.Is(r.err, errTimeout):
		o.TimedOut, o.ExitCode = true, -1
	case r.err != nil && errors.Is(r.err, bash.ErrCancelled):
		o.Error, o.ExitCode = "stopped: "+r.err.Error(), -1
	case r.err != nil:
		o.Error = r.err.Error()
	}
	var stamp string
	// fs is frozen while the tree is checked, so that the check sees one
	// state of it: the agent's fs could otherwise move what the command
	// made from a part not yet walked to a part already walked (a hunt
	// did, three times in three). A move fs makes after the thaw moves
	// what the check has already dealt with.
	thaw := s.freezeFS()
	o.Created, stamp, err = s.removeCreated(existed)
	thaw()
	if err != nil {
		// Fail closed: protected paths the command made may remain.
		s.commandsOff.Store(true)
		if o.Error != "" {
			o.Error += "; and "
		}
		o.Error += err.Error() + "; commands are off for the rest of the session"
	}
	if s.cfg.Asker != nil && (len(o.Created) > 0 || err != nil) {
		go s.tellCreated(o.Created, stamp, err) // after Hold is released
	}
	return o
}

// freezeFS stops the fs component (its whole group, after any system
// call in progress has finished) until the returned thaw. Where the
// group cannot be frozen (no freezer), nothing is stopped, and the check
// after a command races the agent's fs, as before.
func (s *Session) freezeFS() (thaw func()) {
	s.mu.Lock()
	var cg *launcher.Cgroup
	for _, p := range s.procs {
		if p.role == pki.FS {
			cg = p.cg
		}
	}
	s.mu.Unlock()
	if cg == nil {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	thaw, err := cg.Freeze(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "launcher: warning: fs could not be frozen for the check after a command (%v): the agent's fs may move what the command made while it is checked\n", err)
		return func() {}
	}
	return thaw
}

// tellCreated tells the person what removeCreated moved aside, or that it
// could not look or move (the agent is told in its answer).
func (s *Session) tellCreated(moved []string, stamp string, err error) {
	for _, p := range moved {
		s.cfg.Asker.Tell("bash: the protected path " + p + " appeared or changed while a command ran (the command's doing, or yours): moved aside to " + p + heldSuffix + stamp + "; look at it before you put it back")
	}
	if err != nil {
		s.cfg.Asker.Tell("bash: " + err.Error() + ": look through the workspace for protected paths (.git/commondir, .git/config, hooks) before you run git in it")
	}
}

// heldSuffix is added to the name of a protected path removeCreated moves
// aside, with the time (in its own directory: nothing is lost, and
// nothing reads it).
const heldSuffix = ".pinfold-held-"

// removeCreated moves aside the protected paths a command made: only
// those that existed could be mounted read-only, so the others were
// writable to it, and fs would have refused to make them (a .git/commondir
// or a new repository's config runs the agent's code in the person's next
// git). A path counts as made when the file it now names was not at a
// protected name before (existed: device and inode, each held open
// meanwhile), so a tree the agent moved through fs is not taken for new;
// a file the person replaced meanwhile (git config renames a new file over
// .git/config, which also ends the worker's read-only mount of the old
// one) is, and is moved aside, not deleted: the person is told. Names of
// any type count (links, FIFOs), and one that cannot even be looked at.
// The worker's tree is gone, so nothing of the command makes more; the
// renames go through an os.Root of the workspace, which no link leads out
// of. It returns what was moved, and an error when part of the workspace
// could not be looked through (what was found is moved all the same) or
// something could not be moved.
func (s *Session) removeCreated(existed map[[2]uint64]bool) (moved []string, stamp string, err error) {
	after, problem := fs.ProtectedNamesIn(s.cfg.Workspace, slices.Concat(s.protected(), s.authority()))
	var made []string
	for _, p := range after {
		if id, ok := launcher.FileID(p); !ok || !existed[id] {
			made = append(made, p)
		}
	}
	if problem != nil {
		problem = fmt.Errorf("after the command: %w", problem)
	}
	if len(made) == 0 {
		return nil, "", problem
	}
	root, err := os.OpenRoot(s.cfg.Workspace)
	if err != nil {
		return nil, "", fmt.Errorf("move aside the protected paths the command made: %w", err)
	}
	defer root.Close()
	var errs []error
	stamp = time.Now().UTC().Format("20060102T150405.000000000")
	for _, p := range made {
		rel, err := filepath.Rel(s.cfg.Workspace, p)
		held := rel + heldSuffix + stamp
		if err == nil {
			if _, err = root.Lstat(held); err == nil {
				err = fmt.Errorf("%s exists", held)
			} else {
				err = root.Rename(rel, held)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("move aside the protected path %s: %w", p, err))
			continue
		}
		moved = append(moved, p)
	}
	return moved, stamp, errors.Join(append(errs, problem)...)
}

// outputCap keeps at most left bytes of two streams together and drains
// the rest (a worker blocked on a full pipe would only wait for its
// timeout).
type outputCap struct {
	mu   sync.Mutex
	left int
	cut  bool
}

func (c *outputCap) drain(r io.ReadCloser) []byte {
	defer r.Close()
	var out []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		c.mu.Lock()
		keep := min(n, c.left)
		c.left -= keep
		if keep < n {
			c.cut = true
		}
		c.mu.Unlock()
		out = append(out, buf[:keep]...)
		if err != nil {
			return out
		}
	}
}
