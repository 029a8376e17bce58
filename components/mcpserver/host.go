package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/rpc"
)

// RuleFullAccess is the rule of every decision the host backends make.
// No policy rule decided (there is no policy): it names the mode, so
// that logs and the register count full-access calls as what they are.
const RuleFullAccess = "full-access"

// HostOptions' defaults, used when a field is zero.
const (
	DefCommandTimeout = 10 * time.Minute
	DefOutputCap      = 1 << 20
)

// pipeGrace is how long a command's output is still read once its shell
// has ended, for background processes that hold the pipes; then they are
// closed.
const pipeGrace = 2 * time.Second

// HostOptions bound the host shell's commands.
type HostOptions struct {
	// CommandTimeout is how long a command may run; then its whole
	// process group is killed (0: DefCommandTimeout).
	CommandTimeout time.Duration
	// OutputCap is how many bytes of stdout, and of stderr, are kept
	// (0: DefOutputCap).
	OutputCap int
}

// HostBackends are Backends that act directly on this host with the
// process's own authority: UNCONFINED. No component is called, no policy
// applies and no one is asked. They are the "Full access" flavour of the
// server, for callers that hold that authority already (`launcher mcp
// --full-access`, and the gateway for owner tokens with host.execute).
//
// workspace must be an absolute, clean path naming an existing
// directory. Relative tool paths resolve against it, ".." included, and
// absolute paths are taken as they are: a path may name any file the
// process can reach, inside the workspace or not, and symbolic links are
// followed wherever they lead (a write through a link replaces the file
// the link names; delete acts on the link itself). The only refusals
// are of malformed requests (an empty path, a NUL byte, a read of
// something other than a regular file) and, for both deletes, of "/",
// the workspace and any directory above it, as named or as what the
// path resolves to (compared by device and inode, so links and bind
// mounts count; a path it cannot look at is refused): a guard against
// mistakes, not a boundary, since
// run_command can do the same.
//
// Files:
//   - Read reads regular files only, at most rpc.MaxData bytes a call,
//     with an end-of-file flag. It looks before it opens, through an
//     O_PATH descriptor that it then reopens, so a device is never opened,
//     even one renamed onto the name meanwhile.
//   - Write is atomic: a temporary file (fs.TempPrefix) in the target's
//     directory, fsynced, renamed onto the name (RENAME_NOREPLACE when
//     create-only, so an existing name is refused as O_EXCL would). A new
//     file is 0644 whatever the umask; an existing one keeps its
//     permission bits (not setuid, setgid or sticky, which a write
//     clears) and, when the process may give files away (root), its
//     owner.
//   - List is sorted, with each entry's name, type and size (of the
//     entry itself), at most fs.MaxList entries (then truncated).
//   - Delete removes a file, a link or an empty directory.
//     DeleteRecursive removes a tree at once with os.RemoveAll: no
//     backup, no confirmation, Irreversible.
//
// Errors come back as fs's decisions do (fs.Decide): a missing path is
// ReasonUnknown, a refusal of the host's file system is ReasonNoRule
// under fs.RulePermission, the rest ReasonBadRequest; the deletes'
// guard is ReasonNoRule under RuleFullAccess.
//
// Shell.Run runs /bin/bash --noprofile --norc -c COMMAND in the
// workspace, in its own process group, stdin /dev/null, with the
// server's own environment (its secrets included: full access) and the
// process's uid. No start-up file is read, except the one BASH_ENV
// names when the server's environment sets it (bash reads it for every
// non-interactive shell). At CommandTimeout the whole group is killed (SIGKILL;
// TimedOut, exit code 137). stdout and stderr are each kept up to
// OutputCap bytes (Truncated). A process the command leaves in the
// background is not killed when the shell ends; its output is read for
// pipeGrace, then the pipes are closed. A process that leaves the group
// (setsid) escapes the timeout's kill.
//
// Shell.Code refuses: Code Mode needs a components session's confined
// worker. execute_code is still listed by New; it answers with that
// refusal. Web is nil: no fetch tool.
func HostBackends(workspace string, opts HostOptions) (Backends, error) {
	if !filepath.IsAbs(workspace) || filepath.Clean(workspace) != workspace {
		return Backends{}, fmt.Errorf("mcpserver: host workspace %q: not an absolute, clean path", workspace)
	}
	st, err := os.Stat(workspace)
	if err != nil {
		return Backends{}, fmt.Errorf("mcpserver: host workspace: %w", err)
	}
	if !st.IsDir() {
		return Backends{}, fmt.Errorf("mcpserver: host workspace %q: not a directory", workspace)
	}
	resolved, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return Backends{}, fmt.Errorf("mcpserver: host workspace: %w", err)
	}
	if opts.CommandTimeout < 0 || opts.OutputCap < 0 {
		return Backends{}, fmt.Errorf("mcpserver: host options: negative timeout (%v) or output cap (%d)", opts.CommandTimeout, opts.OutputCap)
	}
	if opts.CommandTimeout == 0 {
		opts.CommandTimeout = DefCommandTimeout
	}
	if opts.OutputCap == 0 {
		opts.OutputCap = DefOutputCap
	}
	return Backends{
		FullAccess: true,
		Files:      &hostFiles{ws: workspace, wsReal: resolved},
		Shell:      &hostShell{ws: workspace, timeout: opts.CommandTimeout, cap: opts.OutputCap},
	}, nil
}

// fullAccess is every allowed decision of the host backends.
func fullAccess() rpc.Decision {
	return rpc.Decision{Allowed: true, Reason: rpc.ReasonAllowed, Rule: RuleFullAccess, Detail: "full access: no policy applies"}
}

// hostFiles is Files on the host. Paths are joined and opened by name:
// fs's rule (resolve beneath a directory descriptor, follow no link)
// exists to keep a boundary, and full access has none to keep.
type hostFiles struct {
	ws     string // as given
	wsReal string // with its links resolved
}

// refusal is the deletes' guard refusing.
type refusal struct{ detail string }

func (r *refusal) Error() string { return r.detail }

// decide is err as the decision fs would send, or as the error of a
// call that was cancelled.
func decide(err error) (rpc.Decision, error) {
	var r *refusal
	switch {
	case err == nil:
		return fullAccess(), nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return rpc.Decision{}, err
	case errors.As(err, &r):
		return rpc.Deny(rpc.ReasonNoRule, RuleFullAccess, r.detail), nil
	}
	return fs.Decide(err), nil
}

func badRequest(op, p, detail string) error {
	return &fs.Error{Op: op, Path: p, Kind: fs.KindBadRequest, Detail: detail}
}

// hostErr is err, from the host's file system, as fs's Error.
func hostErr(op, p string, err error) *fs.Error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &fs.Error{Op: op, Path: p, Kind: fs.KindFailed, Detail: err.Error(), Err: err}
	}
	e := &fs.Error{Op: op, Path: p, Kind: fs.KindBadRequest, Detail: errno.Error(), Err: errno}
	switch errno {
	case syscall.ENOENT:
		e.Kind = fs.KindNotFound
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		e.Kind = fs.KindPermission
		e.Detail = fmt.Sprintf("the host refused it (%s): full access has the authority of uid %d, no more", errno, os.Geteuid())
	}
	return e
}

// path is p as the host names it: p itself when absolute, else p
// beneath the workspace (".." may leave it); cleaned either way.
func (h *hostFiles) path(ctx context.Context, op, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch {
	case p == "":
		return "", badRequest(op, p, "the path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", badRequest(op, p, "the path holds a NUL byte")
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(h.ws, p), nil
}

func (h *hostFiles) Read(ctx context.Context, p string, offset int64, length int) (fs.ReadResult, rpc.Decision, error) {
	data, eof, err := h.read(ctx, p, offset, length)
	d, err := decide(err)
	if !d.Allowed || err != nil {
		return fs.ReadResult{}, d, err
	}
	return fs.ReadResult{EOF: eof, Data: data}, d, nil
}

func (h *hostFiles) read(ctx context.Context, p string, offset int64, length int) ([]byte, bool, error) {
	const op = fs.OpRead
	p, err := h.path(ctx, op, p)
	if err != nil {
		return nil, false, err
	}
	if offset < 0 {
		return nil, false, badRequest(op, p, "the offset is negative")
	}
	if length < 0 || length > rpc.MaxData {
		return nil, false, badRequest(op, p, fmt.Sprintf("the length is not between 0 and %d", rpc.MaxData))
	}
	if length == 0 {
		length = rpc.MaxData
	}
	// Look before opening: opening a device runs its driver. The look
	// is through an O_PATH descriptor (which opens nothing), and the
	// file read is that descriptor's, reopened: a device renamed onto the
	// name meanwhile is never opened.
	pf, err := os.OpenFile(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, hostErr(op, p, err)
	}
	defer pf.Close()
	st, err := pf.Stat()
	if err != nil {
		return nil, false, hostErr(op, p, err)
	}
	if err := regular(op, p, st); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", pf.Fd()), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false, hostErr(op, p, err)
	}
	defer f.Close()
	// One byte more than asked tells whether the end was reached; the
	// buffer is sized by the file (plus a page, for one that grows), so
	// that a small file does not cost MaxData.
	want := length + 1
	if rest := st.Size() - offset + 4096; rest < int64(want) {
		want = int(max(rest, 1))
	}
	buf := make([]byte, want)
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return nil, false, hostErr(op, p, err)
	}
	data, eof := fs.ReadEnd(buf, n, length)
	return data, eof, nil
}

func regular(op, p string, st os.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return badRequest(op, p, fmt.Sprintf("not a regular file (a %s)", entryType(st.Mode())))
}

func entryType(m os.FileMode) fs.FileType {
	switch {
	case m.IsRegular():
		return fs.TypeFile
	case m&os.ModeDir != 0:
		return fs.TypeDir
	case m&os.ModeSymlink != 0:
		return fs.TypeSymlink
	case m&os.ModeNamedPipe != 0:
		return fs.TypeFIFO
	case m&os.ModeSocket != 0:
		return fs.TypeSocket
	case m&os.ModeDevice != 0:
		return fs.TypeDevice
	}
	return fs.TypeOther
}

func (h *hostFiles) Write(ctx context.Context, p string, data []byte, createOnly bool) (fs.WriteResult, rpc.Decision, error) {
	d, err := decide(h.write(ctx, p, data, createOnly))
	if !d.Allowed || err != nil {
		return fs.WriteResult{}, d, err
	}
	return fs.WriteResult{Size: len(data)}, d, nil
}

func (h *hostFiles) write(ctx context.Context, p string, data []byte, createOnly bool) error {
	const op = fs.OpWrite
	p, err := h.path(ctx, op, p)
	if err != nil {
		return err
	}
	if len(data) > rpc.MaxData {
		return badRequest(op, p, fmt.Sprintf("%d bytes is more than one write stores (%d)", len(data), rpc.MaxData))
	}
	exists := badRequest(op, p, "already exists (create only)")
	// A write through a link replaces the file it names; the link stays.
	target := p
	if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if createOnly {
			return exists
		}
		if target, err = filepath.EvalSymlinks(p); err != nil {
			return badRequest(op, p, "a symbolic link whose target does not resolve: "+err.Error())
		}
	}
	mode, uid, gid := os.FileMode(0o644), -1, -1
	switch st, err := os.Stat(target); {
	case err == nil && createOnly:
		return exists
	case err == nil:
		if err := regular(op, p, st); err != nil {
			return err
		}
		mode = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	case !errors.Is(err, os.ErrNotExist):
		return hostErr(op, p, err)
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, fs.TempPrefix+"*")
	if err != nil {
		return hostErr(op, p, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if uid >= 0 && (uid != os.Geteuid() || gid != os.Getegid()) {
		tmp.Chown(uid, gid) // only root may give a file away: otherwise it is the process's, as any new file
	}
	// Exactly mode, whatever the umask (after the chown, which may clear bits).
	if err := tmp.Chmod(mode); err != nil {
		return hostErr(op, p, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return hostErr(op, p, err)
	}
	if err := tmp.Sync(); err != nil {
		return hostErr(op, p, err)
	}
	if err := tmp.Close(); err != nil {
		return hostErr(op, p, err)
	}
	if createOnly {
		err = unix.Renameat2(unix.AT_FDCWD, tmp.Name(), unix.AT_FDCWD, target, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			return exists
		}
	} else {
		err = os.Rename(tmp.Name(), target)
	}
	if err != nil {
		os.Remove(tmp.Name())
		done = true
		return hostErr(op, p, err)
	}
	done = true
	// The name has the new content: a failure to make the rename durable
	// is not a failure of the write.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (h *hostFiles) List(ctx context.Context, p string) (fs.ListResult, rpc.Decision, error) {
	r, err := h.list(ctx, p)
	d, err := decide(err)
	if !d.Allowed || err != nil {
		return fs.ListResult{}, d, err
	}
	return r, d, nil
}

func (h *hostFiles) list(ctx context.Context, p string) (fs.ListResult, error) {
	const op = fs.OpList
	p, err := h.path(ctx, op, p)
	if err != nil {
		return fs.ListResult{}, err
	}
	// O_DIRECTORY: a FIFO is refused, not opened (which would block).
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return fs.ListResult{}, hostErr(op, p, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(fs.MaxList + 1)
	if err != nil && err != io.EOF {
		return fs.ListResult{}, hostErr(op, p, err)
	}
	var r fs.ListResult
	if len(ents) > fs.MaxList {
		ents, r.Truncated = ents[:fs.MaxList], true
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	r.Entries = make([]fs.Entry, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info() // lstat: a link is described as a link
		if err != nil {
			continue // gone since
		}
		r.Entries = append(r.Entries, fs.Entry{Name: e.Name(), Type: entryType(info.Mode()), Size: info.Size()})
	}
	return r, nil
}

func (h *hostFiles) Delete(ctx context.Context, p string) (rpc.Decision, error) {
	const op = fs.OpDelete
	p, err := h.path(ctx, op, p)
	if err == nil {
		err = h.guard(op, p)
	}
	if err == nil {
		if err = os.Remove(p); err != nil {
			err = hostErr(op, p, err)
		}
	}
	return decide(err)
}

func (h *hostFiles) DeleteRecursive(ctx context.Context, p string) (fs.DeletedTree, rpc.Decision, error) {
	d, err := decide(h.deleteRecursive(ctx, p))
	if !d.Allowed || err != nil {
		return fs.DeletedTree{}, d, err
	}
	d.Detail = "full access: deleted at once, without a backup: irreversible"
	return fs.DeletedTree{Irreversible: true}, d, nil
}

func (h *hostFiles) deleteRecursive(ctx context.Context, p string) error {
	const op = fs.OpDeleteRecursive
	p, err := h.path(ctx, op, p)
	if err != nil {
		return err
	}
	if err := h.guard(op, p); err != nil {
		return err
	}
	if _, err := os.Lstat(p); err != nil {
		return hostErr(op, p, err)
	}
	if err := os.RemoveAll(p); err != nil {
		e := hostErr(op, p, err)
		e.Detail += " (part of the tree may be gone already)"
		return e
	}
	return nil
}

// guard refuses to delete "/", the workspace or a directory above it,
// whether p names one, resolves to one through links, or is one under
// another name (a bind mount): what p resolves to is compared, by device
// and inode, with each of them. When p cannot be looked at (other than
// not being there), it refuses rather than guess.
func (h *hostFiles) guard(op, p string) error {
	refuse := func(what string) error {
		return &refusal{fmt.Sprintf("%s %q: it is or resolves to %s, which is \"/\", the workspace (%s) or holds it: "+
			"full access never deletes those", op, p, what, h.ws)}
	}
	for _, ws := range []string{h.ws, h.wsReal} {
		if p == "/" || p == ws || strings.HasPrefix(ws, p+"/") {
			return refuse(strconv.Quote(p))
		}
	}
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // the delete reports it
	case err != nil:
		return &refusal{fmt.Sprintf("%s %q: cannot tell whether it is the workspace or holds it (%v): full access deletes it only when it can", op, p, err)}
	}
	for dir := h.wsReal; ; dir = filepath.Dir(dir) {
		if d, err := os.Stat(dir); err == nil && os.SameFile(st, d) {
			return refuse(strconv.Quote(dir))
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// hostShell is Shell on the host.
type hostShell struct {
	ws      string
	timeout time.Duration
	cap     int
}

func (s *hostShell) Run(ctx context.Context, command string) (bash.RunResult, rpc.Decision, error) {
	if err := ctx.Err(); err != nil {
		return bash.RunResult{}, rpc.Decision{}, err
	}
	if strings.IndexByte(command, 0) >= 0 {
		return bash.RunResult{}, rpc.Deny(rpc.ReasonBadRequest, "", "the command line holds a NUL byte"), nil
	}
	tctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "/bin/bash", "--noprofile", "--norc", "-c", command)
	cmd.Dir = s.ws // Env nil: the server's own environment; Stdin nil: /dev/null
	g := newShellGroup(cmd)
	defer g.close()
	cmd.WaitDelay = pipeGrace
	stdout, stderr := &capped{max: s.cap}, &capped{max: s.cap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := g.run()
	if err := ctx.Err(); err != nil {
		return bash.RunResult{}, rpc.Decision{}, err // the caller went; the group was killed
	}
	if cmd.ProcessState == nil { // it did not start
		return bash.RunResult{}, rpc.Deny(rpc.ReasonNoRule, bash.RuleWorker, "full access: /bin/bash did not run: "+err.Error()), nil
	}
	// Any other error (an exit status, output still held open at the
	// end of pipeGrace) is told by the state and the output.
	code, killed := cmd.ProcessState.ExitCode(), false
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code, killed = 128+int(ws.Signal()), ws.Signal() == syscall.SIGKILL
	}
	return bash.RunResult{
		ExitCode:  code,
		StdoutLen: len(stdout.b),
		Truncated: stdout.cut || stderr.cut,
		TimedOut:  killed && errors.Is(tctx.Err(), context.DeadlineExceeded),
		Stdout:    stdout.b,
		Stderr:    stderr.b,
	}, fullAccess(), nil
}

// shellGroup is a command in its own process group, killed whole at
// its deadline (cmd.Cancel) and killed too if this server dies (its
// children, in the group, are not: full access). os/exec may call
// Cancel after Wait reaped the shell (a deadline that comes as it
// ends), when its pid, the group's id, may be another process's: a
// kill(-pid) then reached, as root, whatever group got the number next.
type shellGroup struct {
	cmd   *exec.Cmd
	pidfd int // the shell's, or -1: it names the shell, never a pid's next owner
	// mu guards exited: the shell has ended and is about to be reaped.
	// Without the pidfd's group signal (kernels before 6.9) the group
	// is killed by its id only before then.
	mu     sync.Mutex
	exited bool
}

// pidfdGroupSignal is false to test the fallback of kernels before 6.9.
var pidfdGroupSignal = true

func newShellGroup(cmd *exec.Cmd) *shellGroup {
	g := &shellGroup{cmd: cmd, pidfd: -1}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, PidFD: &g.pidfd}
	cmd.Cancel = g.kill
	return g
}

// run is cmd.Run, with the shell's end noted before Wait reaps it.
func (g *shellGroup) run() error {
	if err := g.cmd.Start(); err != nil {
		return err
	}
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, g.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	g.mu.Lock()
	g.exited = true
	g.mu.Unlock()
	return g.cmd.Wait()
}

// kill signals the shell's process group: by its pidfd, the group the
// shell led even once it is reaped (its background children holding
// the output are still killed); else by its id while it has not ended.
func (g *shellGroup) kill() error {
	var err error = unix.EINVAL
	if g.pidfd >= 0 && pidfdGroupSignal {
		err = unix.PidfdSendSignal(g.pidfd, unix.SIGKILL, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
	}
	if err == unix.EINVAL { // no pidfd, or a kernel without the flag
		g.mu.Lock()
		if err = unix.ESRCH; !g.exited {
			err = unix.Kill(-g.cmd.Process.Pid, unix.SIGKILL)
		}
		g.mu.Unlock()
	}
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// close closes the pidfd, once Wait has returned (no Cancel after it).
func (g *shellGroup) close() {
	if g.pidfd >= 0 {
		unix.Close(g.pidfd)
		g.pidfd = -1
	}
}

func (s *hostShell) Code(context.Context, string) (bash.CodeResult, rpc.Decision, error) {
	return bash.CodeResult{}, rpc.Deny(rpc.ReasonCallerRole, RuleFullAccess,
		"Code Mode needs a components-mode session (its scripts run in a confined worker); "+
			"full access does not offer it: use run_command, read_file and write_file directly"), nil
}

// capped keeps the first max bytes written to it and drops the rest, so
// that the command is never blocked on its output.
type capped struct {
	b   []byte
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := max(c.max-len(c.b), 0)
	if len(p) > room {
		c.b, c.cut = append(c.b, p[:room]...), true
	} else {
		c.b = append(c.b, p...)
	}
	return len(p), nil
}
