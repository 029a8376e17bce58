package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/kms"
	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// ComponentEntry is the hidden first argument with which the launcher
// binary runs as a component: `launcher __pinfold_component ROLE`.
const ComponentEntry = "__pinfold_component"

// Config is what a session starts from.
type Config struct {
	Launcher string          // the launcher binary, run again for each component
	Root     string          // the directory sessions live in (made 0711)
	Rules    []policy.Secret // the policy's [[secrets]]
	Secrets  []kms.Secret    // the vault, unsealed (only the ones the rules name reach kms)
	// Workspace is the tree fs serves; Protected adds to fs's built-in
	// protected paths (absolute, beneath Workspace). Attach starts fs.
	Workspace string
	Protected []string
	// Network is the policy's [network]; in "proxy" mode Attach starts
	// net, the agent's proxy, and kms admits net's uid.
	Network policy.Network
	// Asker puts fs's questions to the person (the launcher's terminal);
	// nil: nothing that needs approval is allowed. Its log, when unset,
	// is approvals.log in the session directory.
	Asker *approve.Terminal
	// BackupQuota is the policy's backups.quota (0: the store's default).
	BackupQuota int64
	// Authority are the launcher's own files and directories (absolute:
	// the policy file, the vault): fs hides those in the workspace, and
	// the session's and backups' directories, from the agent.
	Authority []string
	// SelfListeners are listeners of the launcher's caller (a gateway)
	// that net refuses to connect to, unsafe_allow_private or not.
	SelfListeners []netip.AddrPort
	// Worker is the policy bash's command workers run under
	// (launcher.WorkerPolicy); its [commands] is bash's command policy.
	Worker *policy.Policy
}

// Exit is a component process that ended, and how.
type Exit struct {
	Role pki.Role
	Err  error // from Wait: nil for exit status 0
}

func (e Exit) String() string {
	if e.Err == nil {
		return fmt.Sprintf("component %s exited", e.Role)
	}
	return fmt.Sprintf("component %s exited: %v", e.Role, e.Err)
}

// Session is one component-mode session's runtime: its directory, its
// PKI and its component processes, each under a throwaway uid of its own.
type Session struct {
	ID  string
	Dir string
	PKI *pki.Session

	cfg    Config
	net    *claimed // net's uid, claimed before kms starts so kms can admit it
	inject *netc.InjectCA
	// approvalLog is approvals.log, kept open while the session lives.
	approvalLog *os.File
	lock        *os.File // held while the session lives: stale directories are swept by it
	procs       []*proc
	exited      chan Exit
	mu          sync.Mutex
	closed      bool
	// Running workers hold workers for reading; Stop cancels workersCtx
	// (each worker's launch ends, killing its tree) and takes it for
	// writing, so none is left and none starts after.
	workers sync.RWMutex
	// commandsOff is set when the workspace could not be looked through
	// after a command, or what it made could not be removed: no command
	// runs after that (runWorker).
	commandsOff atomic.Bool
	pass        *net.UnixConn // the launcher's end of bash's passing channel
	netPass     *net.UnixConn // the launcher's end of net's (proxy mode)
	codeWorkers atomic.Int32  // Code Mode workers running
	// named is what the workspace's git configs were found to name since
	// the start (refreshNamed), absolute; it only grows. namedSeen: it
	// and Config.Protected, as a set. notesSaid: what could not be read,
	// said once.
	namedMu   sync.Mutex
	named     []string
	namedSeen map[string]bool
	notesSaid map[string]bool
	// watch is the inotify watch on the git configs fs holds a copy of
	// (configWatch); nil before Attach.
	watch       *configWatch
	workersCtx  context.Context
	stopWorkers context.CancelCauseFunc
}

// claimed is a throwaway uid held for a component not yet started, and
// (with injection) its end of the socketpair to kms.
type claimed struct {
	uid   int
	claim io.Closer
	kms   *os.File
}

type proc struct {
	role pki.Role
	cmd  *exec.Cmd
	uid  int
	id   io.Closer        // the uid's claim
	cg   *launcher.Cgroup // the component's own group: its whole tree, bounded
	done chan struct{}
}

// Each component's own cgroup: a tree that cannot grow without bound and
// that Stop kills whole, so nothing a component forks outlives the
// session.
const (
	ComponentPids   = 64
	ComponentMemory = 512 << 20
	// NetMemory is net's: it buffers for every connection it holds (at
	// most net.DefaultMaxConns, each within about 450 KiB at worst), and
	// intercepted answers read whole share 128 MiB more.
	NetMemory = 1 << 30
	// ComponentProcs is each component's GOMAXPROCS, at most: Go runs
	// about a thread per CPU under load, and on a host of many CPUs that
	// passed ComponentPids, whose refusal of a thread aborts a Go program
	// (a hunt, simulating 96 CPUs). Components wait on I/O; a few CPUs
	// are plenty.
	ComponentProcs = 4
)

// Start makes the session: its directory (0711, root's), its PKI, and the
// kms process, started under its own throwaway uid with its credential,
// the rules and the secrets on a pipe and its listener on a Unix socket
// in the directory. On any error everything made is undone.
func Start(c Config) (s *Session, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("session: component mode needs root: each component runs under its own uid")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	s = &Session{ID: hex.EncodeToString(b[:]), exited: make(chan Exit, 8), cfg: c}
	s.workersCtx, s.stopWorkers = context.WithCancelCause(context.Background())
	defer func() {
		if err != nil {
			s.Stop()
			s = nil
		}
	}()
	if err := os.MkdirAll(c.Root, 0o711); err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	if st, err := os.Lstat(c.Root); err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != 0 || st.Mode().Perm()&0o022 != 0 {
		return s, fmt.Errorf("session: %s must be a directory of root's that others cannot write", c.Root)
	}
	// The agent (and each component) must search it to reach its own
	// directory, whoever made it first (the uid claims make it 0700).
	if st, _ := os.Lstat(c.Root); st.Mode().Perm()&0o011 != 0o011 {
		if err := os.Chmod(c.Root, st.Mode().Perm()|0o011); err != nil {
			return s, fmt.Errorf("session: %w", err)
		}
	}
	sweep(c.Root)
	// Made and locked under a name sweep does not look at, then renamed
	// into place: another launcher's sweep never sees it unlocked.
	tmp := filepath.Join(c.Root, "new-"+s.ID)
	if err := os.Mkdir(tmp, 0o711); err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	if err := os.Chmod(tmp, 0o711); err != nil { // whatever the umask
		os.Remove(tmp)
		return s, fmt.Errorf("session: %w", err)
	}
	if s.lock, err = lockDir(tmp); err != nil {
		os.RemoveAll(tmp)
		return s, err
	}
	if err := os.Rename(tmp, filepath.Join(c.Root, s.ID)); err != nil {
		os.RemoveAll(tmp)
		return s, fmt.Errorf("session: %w", err)
	}
	s.Dir = filepath.Join(c.Root, s.ID)
	if c.Asker != nil && c.Asker.Log == nil {
		lf, err := os.OpenFile(filepath.Join(s.Dir, "approvals.log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return s, fmt.Errorf("session: %w", err)
		}
		s.approvalLog = lf
		c.Asker.Log = slog.New(slog.NewTextHandler(lf, nil))
	}
	// The agent's credential directory: root's, searchable, not listable;
	// its key alone becomes the agent's (Attach).
	if err := os.Mkdir(s.AgentDir(), 0o711); err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	if err := os.Chmod(s.AgentDir(), 0o711); err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	if s.PKI, err = pki.NewSession(s.ID, time.Now()); err != nil {
		return s, err
	}
	leaf, keyPEM, err := s.issue(pki.KMS)
	if err != nil {
		return s, err
	}
	cred := credential(leaf, keyPEM)
	if c.Network.Mode == policy.NetProxy {
		uid, claim, err := launcher.ClaimThrowawayID()
		if err != nil {
			return s, err
		}
		// net reaches kms over a socketpair alone (it opens no sockets):
		// kms's own socket still admits root only.
		s.net = &claimed{uid: uid, claim: claim}
	}
	boot, err := kms.Bootstrap{Credential: cred, Rules: c.Rules, Secrets: named(c.Secrets, c.Rules)}.Encode()
	clear(keyPEM)
	if err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	defer clear(boot)
	uid, claim, err := launcher.ClaimThrowawayID()
	if err != nil {
		return s, err
	}
	var extra []*os.File
	if s.net != nil && len(c.Rules) > 0 {
		// net injects secrets: kms serves it over a socketpair (net opens
		// no sockets), and the agent is given the interception CA.
		kmsEnd, netEnd, err := socketpair()
		if err != nil {
			claim.Close()
			return s, err
		}
		defer kmsEnd.Close()
		s.net.kms = netEnd
		extra = append(extra, kmsEnd)
		if s.inject, err = netc.NewInjectCA(c.Rules, time.Now(), injectValidity); err != nil {
			claim.Close()
			return s, err
		}
		if err := s.writeTrust(); err != nil {
			claim.Close()
			return s, err
		}
	}
	return s, s.start(pki.KMS, uid, claim, boot, extra)
}

// named keeps the secrets some rule names: the others never leave the
// launcher.
func named(secrets []kms.Secret, rules []policy.Secret) []kms.Secret {
	var out []kms.Secret
	for _, s := range secrets {
		if slices.ContainsFunc(rules, func(r policy.Secret) bool { return string(r.Name) == s.Name }) {
			out = append(out, s)
		}
	}
	return out
}

// componentMemory is role's memory limit.
func componentMemory(role pki.Role) int64 {
	if role == pki.Net {
		return NetMemory
	}
	return ComponentMemory
}

// ComponentEnv is a component's environment: its Go runtime's bounds,
// and for net, which verifies upstreams against the system's roots, the
// launcher's SSL_CERT_FILE and SSL_CERT_DIR when the person set them (a
// corporate root, say), as every Go and OpenSSL program does. GOMEMLIMIT
// is three quarters of the role's cgroup limit: the collector works
// harder as the heap nears it, rather than the kernel killing the
// component (and so ending the session) while garbage would have freed
// enough (the bridge red team's advice: the agent decides how much a
// component holds at once).
func ComponentEnv(role pki.Role) []string {
	env := []string{"GOMAXPROCS=" + strconv.Itoa(min(runtime.NumCPU(), ComponentProcs)),
		"GOMEMLIMIT=" + strconv.FormatInt(componentMemory(role)/4*3, 10)}
	if role == pki.Net {
		for _, k := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return env
}

// start runs one component under uid (whose claim it keeps until Stop):
// its listener, its log, its cgroup, its bootstrap on fd 3, its listener
// on fd 4 and extra from fd 5.
func (s *Session) start(role pki.Role, uid int, claim io.Closer, boot []byte, extra []*os.File) error {
	sock := filepath.Join(s.Dir, string(role)+".sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %s listener: %w", role, err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // the socket stays for the component's callers
	lf, err := ul.File()
	ln.Close()
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %s listener: %w", role, err)
	}
	defer lf.Close()
	// Any session process may connect; mutual TLS decides who is served.
	if err := os.Chmod(sock, 0o666); err != nil {
		claim.Close()
		return fmt.Errorf("session: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(s.Dir, string(role)+".log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %s log: %w", role, err)
	}
	defer logFile.Close()
	// Named like the agent's groups (s-<launcher pid>-…), so a later
	// launch sweeps them if this launcher is killed.
	cg, err := launcher.CreateCgroup(launcher.ProbeForLaunch().Cgroup, launcher.CgroupSpec{
		Session: fmt.Sprintf("s-%d-%s-%s", os.Getpid(), s.ID, role), Pids: ComponentPids, Memory: componentMemory(role)})
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %s cgroup: %w", role, err)
	}
	br, bw, err := os.Pipe()
	if err != nil {
		claim.Close()
		cg.Remove()
		return err
	}
	defer br.Close()
	defer bw.Close()
	p := &proc{role: role, uid: uid, id: claim, cg: cg, done: make(chan struct{}), cmd: &exec.Cmd{
		Path:       s.cfg.Launcher,
		Args:       []string{"launcher", ComponentEntry, string(role)},
		Env:        ComponentEnv(role),
		Dir:        "/",
		Stderr:     logFile,
		ExtraFiles: append([]*os.File{br, lf}, extra...),
		SysProcAttr: &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}},
			Pdeathsig:  syscall.SIGKILL,
			Setsid:     true, // no terminal, no signals meant for the person's job
		},
	}}
	if fd, ok := cg.CgroupFD(); ok {
		p.cmd.SysProcAttr.UseCgroupFD, p.cmd.SysProcAttr.CgroupFD = true, fd
	}
	launcher.PreparePidfd()
	if err := p.cmd.Start(); err != nil {
		claim.Close()
		cg.Remove()
		return fmt.Errorf("session: start %s: %w", role, err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go func() {
		err := p.cmd.Wait()
		close(p.done)
		s.exited <- Exit{Role: role, Err: err}
	}()
	br.Close()
	// The component reads its bootstrap before anything else, so until it
	// gets it, it has started nothing: the v1 groups are joined now.
	if err := cg.Add(p.cmd.Process.Pid); err != nil {
		return fmt.Errorf("session: %s cgroup: %w", role, err)
	}
	if _, err := bw.Write(boot); err != nil {
		return fmt.Errorf("session: hand %s its bootstrap: %w", role, err)
	}
	return nil
}

// Exited yields each component that ends: the session must stop when one
// does (the caller stops the agent and calls Stop).
func (s *Session) Exited() <-chan Exit { return s.exited }

// Pid is the process id of the component role, or 0.
func (s *Session) Pid(role pki.Role) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.role == role && p.cmd.Process != nil {
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// Stop kills every component still running (by the pid it started),
// waits for each, releases their uids and empties the session directory
// of all but the components' logs.
// It is safe to call more than once.
func (s *Session) Stop() error {
	s.mu.Lock()
	procs := s.procs
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.stopWorkers(errors.New("the session stopped"))
	s.workers.Lock() // every worker's launch has returned
	var errs []error
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				errs = append(errs, fmt.Errorf("session: component %s (pid %d) did not end", p.role, p.cmd.Process.Pid))
				continue
			}
		}
		// Whatever the component forked goes with its group.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := p.cg.Kill(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
		if err := p.cg.Remove(); err != nil {
			errs = append(errs, err)
		}
		p.id.Close()
	}
	if s.Dir != "" {
		if err := tidy(s.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	if s.lock != nil {
		s.lock.Close()
	}
	if s.approvalLog != nil {
		s.approvalLog.Close()
	}
	if s.pass != nil {
		s.pass.Close()
	}
	if s.watch != nil {
		s.watch.Close()
	}
	if s.netPass != nil {
		s.netPass.Close()
	}
	if s.net != nil && s.net.claim != nil {
		s.net.claim.Close() // claimed but never started
	}
	if s.net != nil && s.net.kms != nil {
		s.net.kms.Close()
	}
	return errors.Join(errs...)
}
