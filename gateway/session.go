package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	csession "github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/internal/userdb"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// Mode is what a session may do.
type Mode string

const (
	// Safe: a components-mode session under the pinned policy (the
	// owner's) or the guest policy derived from it.
	Safe Mode = "safe"
	// Full: `launcher mcp --full-access`, unconfined, with the authority
	// of the workspace's owner; only for an owner token that carries
	// host.execute.
	Full Mode = "full"
)

// session is one MCP session: a child that serves MCP on its stdio (a
// components-mode launch of `launcher mcp`, or `launcher mcp
// --full-access`), the client the gateway holds to it, and the server
// the HTTP side talks to, which forwards every tool call.
type session struct {
	ID        string
	Principal string // "guest" or "token:NAME"
	Asked     Mode   // the mode the caller asked for
	Mode      Mode   // the mode in effect (always Asked: never converted)
	Peer      netip.Addr
	Created   time.Time

	dir    string // the session's own state (policy, guest workspace); removed at the end
	guest  bool
	tmpfs  string // a guest's workspace mount, unmounted at the end
	log    *slog.Logger
	logf   *os.File
	child  *mcp.ClientSession
	cmd    *exec.Cmd // the child, once started
	server *mcp.Server

	// cg holds a full-access child and everything its commands start,
	// so that they end with the session (cgroup.kill).
	cg *launcher.Cgroup

	mu sync.Mutex
	ss *mcp.ServerSession // the HTTP side's session, once initialize went through

	ctx    context.Context // ends when the session does: its calls in flight are cancelled
	cancel context.CancelFunc
	over   bool // ended (under the gateway's mu)

	endOnce sync.Once
	ended   chan struct{}
	why     string

	// inflight holds a place for each of the session's requests being
	// served: with each body up to MaxBody, their number is what bounds
	// the gateway's memory.
	inflight chan struct{}

	// writers are the session's requests being answered: when it ends,
	// their writes are cut (cutWrites), so that its cleanup does not
	// wait on a client that does not read.
	wmu     sync.Mutex
	writers map[*http.ResponseController]bool
	cut     bool
}

// track notes a request being answered until the returned func.
func (s *session) track(rc *http.ResponseController) func() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.cut {
		rc.SetWriteDeadline(time.Now())
	}
	if s.writers == nil {
		s.writers = map[*http.ResponseController]bool{}
	}
	s.writers[rc] = true
	return func() {
		s.wmu.Lock()
		delete(s.writers, rc)
		s.wmu.Unlock()
	}
}

// cutWrites makes every write to the session's clients, now and later,
// fail at once.
func (s *session) cutWrites() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.cut = true
	for rc := range s.writers {
		rc.SetWriteDeadline(time.Now())
	}
}

// Requests one session may have in flight at once (a guest's bodies are
// also at most guestMaxBody).
const (
	// maxPids is a full-access session's pids.max: the kernel's most,
	// full access is not limited (its group is only to end it).
	maxPids = 1 << 22
	// cgroupKind names a full-access session's cgroup (s-PID-KIND-…),
	// by which a later gateway finds those of one killed outright.
	cgroupKind    = "gateway"
	ownerInFlight = 8
	guestInFlight = 2
	// guestInodes is how many files a guest's workspace may hold.
	guestInodes  = 16384
	guestMaxBody = 1 << 20
)

// newID is a session id: 128 random bits, base32 (crypto/rand.Text),
// never reused.
func newID() string { return rand.Text() }

// startSession makes the session's directory, its policy (guests) and
// starts its child, then builds the forwarding server from the tools the
// child lists. On any failure nothing of it is left.
func (g *Gateway) startSession(ctx context.Context, id, principal string, mode Mode, peer netip.Addr) (_ *session, err error) {
	s := &session{ID: id, Principal: principal, Asked: mode, Mode: mode, Peer: peer, Created: time.Now().UTC(),
		guest: principal == guestPrincipal, ended: make(chan struct{})}
	s.inflight = make(chan struct{}, ownerInFlight)
	if s.guest {
		s.inflight = make(chan struct{}, guestInFlight)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	// Named by another random value: the directory's name shows in the
	// child's command line (the guest policy's path), which every local
	// user can read; the id, which reaches the session, must not.
	s.dir = filepath.Join(g.sessionsDir, newID())
	// 0711: the guest's sandbox passes through to its workspace; the
	// policy file beside it is 0600.
	if err := os.Mkdir(s.dir, 0o711); err != nil {
		return nil, fmt.Errorf("session directory: %w", err)
	}
	logPath := filepath.Join(g.logsDir, id+".log")
	s.logf, s.log, err = g.openSessionLog(id)
	if err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	defer func() {
		if err != nil {
			s.cancel()
			s.stop() // a child that started and then failed (or whose client left) goes too
			err = fmt.Errorf("%w; its log ends: %s", err, tail(logPath, 600))
			s.log.Error("session not started", "err", err.Error())
			s.cleanup(g)
		}
	}()
	s.log.Info("session starting", "principal", display(principal), "mode_asked", string(s.Asked), "mode", string(s.Mode), "peer", peer.String())

	cmd, err := g.childCommand(s)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = s.logf
	cctx, cancel := context.WithTimeout(ctx, g.cfg.StartTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "pinfold-gateway", Version: Version}, nil)
	s.cmd = cmd
	var transport mcp.Transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}
	if s.guest {
		transport = idleTransport{transport.(*mcp.CommandTransport), g.noIdleGroup}
	}
	s.child, err = client.Connect(cctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("the session's sandbox did not start: %w", err)
	}
	if s.cg != nil {
		// Cloned into the v2 group already; this adds the v1 groups
		// (hybrid), before any tool call can start a command.
		if err := s.cg.Add(cmd.Process.Pid); err != nil {
			return nil, fmt.Errorf("full access: %w", err)
		}
	}
	tools, err := s.child.ListTools(cctx, nil)
	if err != nil {
		return nil, fmt.Errorf("the session's server did not list its tools: %w", err)
	}
	instr := "A pinfold gateway session (" + string(s.Mode) + " mode"
	if s.guest {
		instr += ", guest: a new empty workspace, no secrets"
	}
	instr += "). "
	if r := s.child.InitializeResult(); r != nil {
		instr += r.Instructions
	}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "pinfold-gateway", Version: Version}, &mcp.ServerOptions{
		Instructions: instr,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		GetSessionID: func() string { return id },
	})
	for _, t := range tools.Tools {
		s.server.AddTool(t, s.forward(t.Name))
	}
	// The child ending ends the session: its sandbox is gone, and nothing
	// is retried, least of all outside it.
	go func() {
		err := s.child.Wait()
		g.end(s, fmt.Sprintf("the session's sandbox ended (%v)", err))
	}()
	s.log.Info("session started", "tools", len(tools.Tools))
	return s, nil
}

// sessionLogMax bounds what the gateway writes to one session's log: a
// line per tool call, and a guest makes thousands of calls a second for
// as long as it likes. (The child's stderr, which goes to the same file,
// is the launcher's, not the caller's.)
const sessionLogMax = 8 << 20

// openSessionLog creates the log of session id and its logger, which
// writes at most sessionLogMax bytes to it.
func (g *Gateway) openSessionLog(id string) (*os.File, *slog.Logger, error) {
	f, err := os.OpenFile(filepath.Join(g.logsDir, id+".log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("session log: %w", err)
	}
	w := &cappedWriter{w: f, max: sessionLogMax}
	return f, slog.New(slog.NewJSONHandler(w, nil)).With("session", id), nil
}

// cappedWriter passes whole writes (slog writes a record in one) until
// max bytes have gone, then writes one line that says so and drops
// everything after it.
type cappedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	max  int64
	n    int64
	full bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full {
		return len(p), nil
	}
	if c.n+int64(len(p)) > c.max {
		c.full = true
		fmt.Fprintf(c.w, `{"time":%q,"level":"WARN","msg":"session log full: its later lines are dropped","max_bytes":%d}`+"\n", time.Now().UTC().Format(time.RFC3339Nano), c.max)
		return len(p), nil
	}
	c.n += int64(len(p))
	return c.w.Write(p)
}

// forward is a tool handler that passes the call to the child as it came
// and its answer back as it went.
func (s *session) forward(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The call ends with its request or with the session.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		start := time.Now()
		r, err := s.child.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		attrs := []any{"tool", name, "ms", time.Since(start).Milliseconds()}
		switch {
		case err != nil:
			s.log.Warn("tool call failed", append(attrs, "err", err.Error())...)
		case r.IsError:
			s.log.Info("tool call refused or failed", attrs...)
		default:
			s.log.Info("tool call", attrs...)
		}
		return r, err
	}
}

// childCommand is the session's child: for Safe, the launcher under the
// owner's pinned policy or the guest's derived one, with `launcher mcp`
// as its agent; for Full, `launcher mcp --full-access` in the owner's
// workspace as its owner. The child has no terminal (its own session),
// so a question for the person is answered no at once; it is killed if
// the gateway dies.
func (g *Gateway) childCommand(s *session) (*exec.Cmd, error) {
	bin := g.cfg.Launcher
	var cmd *exec.Cmd
	switch {
	case s.Mode == Full:
		ws := string(g.cfg.Policy.Workspace.Path)
		sys, err := workspaceOwner(ws)
		if err != nil {
			return nil, err
		}
		cred, err := ownerCredential(userdb.Passwd(), userdb.Group(), sys.Uid, sys.Gid)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(bin, "mcp", "--full-access", "--workspace", ws)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = ws
		// A group of its own, which ends with the session: a command's
		// background process (cmd &, nohup, setsid) outlived the session,
		// its token's revocation included. Without one, no full access.
		if s.cg, err = launcher.CreateCgroup(launcher.ProbeForLaunch().Cgroup, launcher.CgroupSpec{
			Session: fmt.Sprintf("s-%d-%s-%s", os.Getpid(), cgroupKind, strings.ToLower(rand.Text()[:16])), Pids: maxPids}); err != nil {
			return nil, fmt.Errorf("full access: a cgroup to end its processes with the session: %w", err)
		}
		if fd, ok := s.cg.CgroupFD(); ok {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		}
	case s.guest:
		ws := filepath.Join(s.dir, "workspace")
		// Root's and 0700 (the tmpfs's root too): the sandbox reaches it
		// through the launcher's idmapped mount, where it is the fs uid's;
		// no one else enters it. At 0711 its files, 0644, were every local
		// user's to read: its name is in the mount table, which anyone
		// reads, and in the child's command line.
		if err := os.Mkdir(ws, 0o700); err != nil {
			return nil, fmt.Errorf("guest workspace: %w", err)
		}
		if size := g.cfg.GuestWorkspace; size > 0 {
			// A file system of its own, so a guest fills only that. (The
			// launcher maps it onto the fs uid: idmapped tmpfs, Linux 6.3.)
			opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", size, guestInodes)
			if err := unix.Mount("tmpfs", ws, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
				return nil, fmt.Errorf("guest workspace: a tmpfs of %d bytes: %w", size, err)
			}
			s.tmpfs = ws
		}
		gp, err := guestPolicy(g.cfg.Policy, ws, g.cfg.StateDir, bin, g.private()...)
		if err != nil {
			return nil, err
		}
		data := policy.Encode(gp)
		path := filepath.Join(s.dir, "guest-policy.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("guest policy: %w", err)
		}
		cmd = exec.Command(bin, "--quiet", "--policy-sha256", policy.Hash(data).String(), "--policy", path, "--", bin, "mcp")
		cmd.Dir = s.dir
	default:
		cmd = exec.Command(bin, "--quiet", "--policy-sha256", g.cfg.PolicyHash.String(), "--policy", g.policyCopy, "--", bin, "mcp")
		cmd.Dir = s.dir
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Setsid: no controlling terminal, so no question can be answered
	// by anyone; Pdeathsig: a gateway that dies takes its children.
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	if len(g.cfg.Listeners) > 0 {
		addrs := make([]string, len(g.cfg.Listeners))
		for i, a := range g.cfg.Listeners {
			addrs[i] = a.String()
		}
		cmd.Env = append(cmd.Env, "PINFOLD_SELF_LISTENERS="+strings.Join(addrs, ","))
	}
	own := g.private()
	if !s.guest {
		// And the other sessions' directories, guests' workspaces among
		// them: an owner's sandbox is made while they are mounted, so its
		// mount table names them (their names are random, not secret
		// from it), and a policy that reads the state directory (read =
		// ["/"]) read a guest's files by those names. A guest's policy
		// leaves the state directory out; its own workspace is in it.
		own = append(own, withResolved(g.sessionsDir)...)
	}
	ownJSON, err := json.Marshal(own)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, "PINFOLD_SELF_FILES="+string(ownJSON))
	return cmd, nil
}

// private are the gateway's own files no session may reach
// (Config.Private) and its session logs.
func (g *Gateway) private() []string {
	return append(slices.Clone(g.cfg.Private), withResolved(g.logsDir)...)
}

// withResolved is path, and path with its links resolved when that
// differs.
func withResolved(path string) []string {
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		return []string{path, real}
	}
	return []string{path}
}

// workspaceOwner is the owner of the workspace, which full access runs
// as; root is refused: a remote caller is never given root.
func workspaceOwner(ws string) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(ws, &st); err != nil {
		return nil, fmt.Errorf("full access: workspace: %w", err)
	}
	if st.Uid == 0 {
		return nil, errors.New("full access runs as the workspace's owner, and the workspace belongs to root: refused (a remote caller is never given root)")
	}
	return &st, nil
}

// fullAccessAllowed says why full access cannot be given, if it cannot.
func (g *Gateway) fullAccessAllowed() error {
	st, err := workspaceOwner(string(g.cfg.Policy.Workspace.Path))
	if err != nil {
		return err
	}
	_, err = ownerCredential(userdb.Passwd(), userdb.Group(), st.Uid, st.Gid)
	return err
}

// ownerCredential is whom full access runs as: uid, the workspace's
// owner, with the primary group its /etc/passwd entry names — not the
// workspace's group, which need not be the user's (a project chowned to
// its user keeps root's group) — or, without an entry, the workspace's
// group; and the user's groups (groupsOf). Root's group is refused as
// root is.
func ownerCredential(passwd, group []userdb.Entry, uid, dirGid uint32) (*syscall.Credential, error) {
	gid := dirGid
	for _, e := range passwd {
		if e.Field(0) != "" && e.Field(2) == strconv.FormatUint(uint64(uid), 10) {
			if n, err := strconv.ParseUint(e.Field(3), 10, 32); err == nil {
				gid = uint32(n)
			}
			break
		}
	}
	if gid == 0 {
		return nil, fmt.Errorf("full access runs as the workspace's owner (uid %d), whose group would be root's group (gid 0): refused (a remote caller is never given root)", uid)
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: groupsOf(passwd, group, uid, gid)}, nil
}

// groupsOf are uid's groups from the entries of /etc/passwd and
// /etc/group (userdb: groups only a directory service knows are not
// given), never the gateway's own: gid first, then every group whose
// member list names uid's user, each once; only gid when uid has no
// entry.
func groupsOf(passwd, group []userdb.Entry, uid, gid uint32) []uint32 {
	groups := []uint32{gid}
	name := ""
	for _, e := range passwd {
		if e.Field(0) != "" && e.Field(2) == strconv.FormatUint(uint64(uid), 10) {
			name = e.Field(0)
			break
		}
	}
	if name == "" {
		return groups
	}
	for _, e := range group {
		if len(e) < 4 || !slices.Contains(strings.Split(e.Field(3), ","), name) {
			continue
		}
		n, err := strconv.ParseUint(e.Field(2), 10, 32)
		if err == nil && !slices.Contains(groups, uint32(n)) {
			groups = append(groups, uint32(n))
		}
	}
	return groups
}

// stop ends the child: stdin closed, then SIGTERM, then SIGKILL (the
// transport's own sequence), and waits for it.
func (s *session) stop() {
	if s.cg != nil {
		// Then every process its commands left (full access), which the
		// child's end does not take with it.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.cg.Kill(ctx); err != nil {
				s.log.Warn("full access: processes left in its cgroup", "err", err.Error())
				return // a group with processes cannot be removed
			}
			if err := s.cg.Remove(); err != nil {
				s.log.Warn("full access: cgroup not removed", "err", err.Error())
			}
		}()
	}
	// SIGTERM first: the child's launcher passes it to its MCP server,
	// which ends even with a call in flight. Closing its stdin alone
	// lets that server finish the calls it has read (as it must for a
	// client that closes its input and reads on), and the transport
	// would wait 10 s for it before signalling.
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	if s.child != nil {
		s.child.Close()
	}
}

// cleanup removes what the session made: a guest's whole directory
// (workspace included) and its backup store; an owner session's
// directory holds only transient files and goes too. The log stays.
func (s *session) cleanup(g *Gateway) {
	if s.logf != nil {
		defer s.logf.Close()
	}
	if s.guest {
		os.RemoveAll(csession.StorePath(filepath.Join(s.dir, "workspace")))
	}
	if s.tmpfs != "" {
		// Detached: a sandbox's mount namespace made while it was
		// mounted holds its own copy until that sandbox ends.
		if err := unix.Unmount(s.tmpfs, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
			// RemoveAll would empty it and then fail: it stays whole
			// for the next start's sweep.
			g.log.Warn("guest workspace not unmounted", "session", s.ID, "err", err.Error())
			return
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		g.log.Warn("session directory not removed", "session", s.ID, "err", err.Error())
	}
}

// tail is the last n bytes of the file at path, on one line.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	n2, _ := f.ReadAt(b, off)
	return strings.Join(strings.Fields(string(b[:n2])), " ")
}

func (s *session) setServerSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	s.ss = ss
	s.mu.Unlock()
}

func (s *session) serverSession() *mcp.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ss
}

// age is the session's age in whole seconds, for logs.
func (s *session) age() string { return strconv.Itoa(int(time.Since(s.Created).Seconds())) + "s" }
