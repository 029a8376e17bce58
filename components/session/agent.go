package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/bridge"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/internal/boot"
	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// Where the agent finds the components: listeners on fixed addresses in
// its own network namespace (nothing else listens there), named in its
// environment.
const (
	AgentFSAddr  = "127.0.0.1:7401"
	AgentNetPort = 7402
	AgentNetAddr = "127.0.0.1:7402" // net's HTTP proxy

	EnvSession     = "PINFOLD_SESSION"     // the session's id
	EnvCredentials = "PINFOLD_CREDENTIALS" // the agent's credential directory
	EnvFS          = "PINFOLD_FS"          // fs's address in the agent's namespace
	EnvNet         = "PINFOLD_NET"         // net's proxy address, in "proxy" mode
)

// The agent's credential files, in AgentDir.
const (
	CAFile   = "ca.pem"
	CertFile = "agent.pem"
	KeyFile  = "agent-key.pem"
	// With secret injection: the interception CA, and the system's
	// bundle with it appended (what SSL_CERT_FILE and the like name).
	InjectCAFile = "inject-ca.pem"
	BundleFile   = "ca-bundle.pem"
)

// AgentDir is the agent's credential directory: root's, mode 0711, with
// the CA and the agent's certificate (readable by all) and its key (the
// agent's uid's alone, 0400).
func (s *Session) AgentDir() string { return filepath.Join(s.Dir, "agent") }

// OwnFiles are the launcher's own files (its policy, the vault and its
// lock, the key file, its caller's: Config.Authority) that the launcher
// covers in the agent's sandbox where its paths reach them
// (launcher.LaunchOptions.Mask): the agent reads them by no name.
func (s *Session) OwnFiles() []string { return slices.Clone(s.cfg.Authority) }

// AgentEnv is what the agent's environment says about the session.
func (s *Session) AgentEnv() []string {
	env := []string{EnvSession + "=" + s.ID, EnvCredentials + "=" + s.AgentDir(), EnvFS + "=" + AgentFSAddr, EnvBash + "=" + AgentBashAddr}
	if s.cfg.Network.Mode == policy.NetProxy {
		env = append(env, ProxyEnv()...)
	}
	if s.inject != nil {
		bundle := filepath.Join(s.AgentDir(), BundleFile)
		for _, k := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"} {
			env = append(env, k+"="+bundle)
		}
		// Node adds these to its own roots.
		env = append(env, "NODE_EXTRA_CA_CERTS="+filepath.Join(s.AgentDir(), InjectCAFile))
	}
	return env
}

// ProxyEnv is what tells the agent's tools to use net: every spelling
// they read, and the agent's own loopback (where fs listens) not proxied.
func ProxyEnv() []string {
	proxy := "http://" + AgentNetAddr
	env := []string{EnvNet + "=" + AgentNetAddr}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		env = append(env, k+"="+proxy)
	}
	return append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}

// injectValidity is the interception CA's lifetime: longer than any
// session is expected to last (it is name-constrained, and its key lives
// in net's memory alone).
const injectValidity = 30 * 24 * time.Hour

// systemBundles are where distributions keep their CA bundle; the first
// that exists goes into the agent's.
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"}

// writeTrust puts the interception CA in the agent's directory, alone
// and appended to a copy of the system's bundle.
func (s *Session) writeTrust() error {
	ca := s.inject.CertPEM()
	if err := writeNew(filepath.Join(s.AgentDir(), InjectCAFile), ca, 0o444, 0); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	var bundle []byte
	for _, b := range systemBundles {
		if data, err := os.ReadFile(b); err == nil {
			bundle = append(data, '\n')
			break
		}
	}
	if err := writeNew(filepath.Join(s.AgentDir(), BundleFile), append(bundle, ca...), 0o444, 0); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// socketpair is a connected pair of Unix stream sockets, as files.
func socketpair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "kms-end"), os.NewFile(uintptr(fds[1]), "net-end"), nil
}

// channel is a socketpair as a channel to a component: the launcher's
// end as a connection, the component's as the file it is handed.
func channel(name string) (*net.UnixConn, *os.File, error) {
	launcherEnd, end, err := socketpair()
	if err != nil {
		return nil, nil, err
	}
	c, err := net.FileConn(launcherEnd)
	launcherEnd.Close()
	if err != nil {
		end.Close()
		return nil, nil, fmt.Errorf("session: %s: %w", name, err)
	}
	return c.(*net.UnixConn), end, nil
}

// ProxyPort is 0: the session makes its listeners in the agent's
// namespace itself (it runs as root), net's among them.
func (s *Session) ProxyPort() uint16 { return 0 }

// AttachProxy is never called for a session (ProxyPort is 0).
func (s *Session) AttachProxy(*os.File) error {
	return errors.New("session: the session makes net's listener itself")
}

// AgentPause lets the person's questions freeze the agent while they are
// on the terminal (approve.Terminal.SetPause).
func (s *Session) AgentPause(pause func(ctx context.Context) (resume func(), err error)) {
	if s.cfg.Asker != nil {
		s.cfg.Asker.SetPause(pause)
	}
}

// Attach writes the agent's credential for uid and gid and starts fs,
// serving the agent on a listener made in the agent's network namespace
// (netnsPath) and the session on its Unix socket, with the workspace
// idmapped onto its own uid.
func (s *Session) Attach(netnsPath string, uid, gid int) error {
	if a, in := insideAuthority(s.cfg.Workspace, append([]string{s.cfg.Root, BackupRoot}, s.cfg.Authority...)); in {
		return fmt.Errorf("session: the workspace %s lies in %s, the launcher's own: fs would serve it", s.cfg.Workspace, a)
	}
	if err := s.writeAgentCredential(uid); err != nil {
		return err
	}
	ns, err := netns.GetFromPath(netnsPath)
	if err != nil {
		return fmt.Errorf("session: the agent's network namespace: %w", err)
	}
	defer ns.Close()
	alf, err := listenerFile(ns, AgentFSAddr, pki.FS)
	if err != nil {
		return err
	}
	defer alf.Close() // fs holds its own copy
	fsUID, claim, err := launcher.ClaimThrowawayID()
	if err != nil {
		return err
	}
	root, err := idmappedTree(s.cfg.Launcher, s.cfg.Workspace, fsUID)
	if err != nil {
		claim.Close()
		return err
	}
	defer root.Close()
	leaf, keyPEM, err := s.issue(pki.FS)
	if err != nil {
		claim.Close()
		return err
	}
	// The git configs are watched from now on, for fs to see the
	// person's edits (configWatch), and read again once watched: what
	// they name is fs's from its start.
	watch, err := newConfigWatch()
	if err != nil {
		claim.Close()
		return err
	}
	s.watch = watch
	named, _ := s.refreshNamed()
	watchFile, err := watch.File()
	if err != nil {
		claim.Close()
		return err
	}
	defer watchFile.Close()
	protected := make([]string, 0, len(s.cfg.Protected)+len(named))
	for _, p := range slices.Concat(s.cfg.Protected, named) {
		rel, err := filepath.Rel(s.cfg.Workspace, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			claim.Close()
			return fmt.Errorf("session: protected path %s is not beneath the workspace %s", p, s.cfg.Workspace)
		}
		protected = append(protected, rel)
	}
	boot, err := json.Marshal(fs.Bootstrap{Credential: credential(leaf, keyPEM), Protected: protected, BackupQuota: s.cfg.BackupQuota, Ask: s.cfg.Asker != nil, Watch: watch.watched(),
		Hidden: beneath(s.cfg.Workspace, append([]string{s.cfg.Root, BackupRoot}, s.cfg.Authority...))})
	clear(keyPEM)
	if err != nil {
		claim.Close()
		return fmt.Errorf("session: %w", err)
	}
	defer clear(boot)
	// bash reaches fs over a socketpair of their own (bash opens no
	// sockets; fs's Unix socket admits root alone).
	fsBash, bashFS, err := socketpair()
	if err != nil {
		claim.Close()
		return err
	}
	defer fsBash.Close()
	defer bashFS.Close()
	// fds 5-10: the root, the agent's listener, the approval channel,
	// the backup store (nil when nobody can confirm), bash's channel,
	// the watch on the git configs. The channel is fs's also when
	// nobody can be asked: fs asks over it for the configs to be read
	// again when the watch has news.
	fsEnd, err := s.approvals(pki.FS)
	if err != nil {
		claim.Close()
		return err
	}
	defer fsEnd.Close()
	extra := []*os.File{root, alf, fsEnd, nil, fsBash, watchFile}
	if s.cfg.Asker != nil {
		// With someone to confirm them, recursive deletes are backed up in
		// the workspace's store, which fs reaches as its own (idmapped).
		dir, err := StoreDir(s.cfg.Workspace)
		if err != nil {
			claim.Close()
			return err
		}
		store, err := idmappedTree(s.cfg.Launcher, dir, fsUID)
		if err != nil {
			claim.Close()
			return err
		}
		defer store.Close()
		extra[3] = store
	}
	if err := s.start(pki.FS, fsUID, claim, boot, extra); err != nil {
		return err
	}
	if err := s.startBash(ns, bashFS); err != nil {
		return err
	}
	if s.net != nil {
		return s.startNet(ns)
	}
	return nil
}

// approvals is a new approval channel for role: the launcher's end
// served here (questions put to the person on the launcher's terminal),
// the component's end returned.
func (s *Session) approvals(role pki.Role) (*os.File, error) {
	c, end, err := channel("approval channel")
	if err != nil {
		return nil, err
	}
	if role == pki.FS {
		// fs asks for the git configs to be read again after a change
		// the person approved (fs.Root.Refresh), and when an event of
		// the watch on them concerns one (fs.Root.Recheck).
		go approve.ServeChecked(c, s.cfg.Asker, string(role), s.refreshForFS, s.refreshForFS)
	} else {
		go approve.Serve(c, s.cfg.Asker, string(role))
	}
	return end, nil
}

// startNet starts net, the agent's HTTP proxy, under the uid claimed for
// it at Start, with its listener in the agent's namespace.
func (s *Session) startNet(ns netns.NsHandle) error {
	lf, err := listenerFile(ns, AgentNetAddr, pki.Net)
	if err != nil {
		return err
	}
	defer lf.Close() // net holds its own copy
	leaf, keyPEM, err := s.issue(pki.Net)
	if err != nil {
		return err
	}
	b := netc.Bootstrap{Credential: credential(leaf, keyPEM), Network: s.cfg.Network, Secrets: s.cfg.Rules, SelfListeners: s.cfg.SelfListeners}
	// fds 5-7: the agent's listener, kms (nil without injection), the
	// passing channel for bash's connections.
	pc, netPass, err := channel("net's passing channel")
	if err != nil {
		return err
	}
	defer netPass.Close()
	s.netPass = pc
	extra := []*os.File{lf, nil, netPass}
	c := s.net
	if s.inject != nil {
		b.InjectCertPEM = s.inject.CertPEM()
		if b.InjectKeyPEM, err = s.inject.KeyPEM(); err != nil {
			return err
		}
		extra[1] = c.kms
	}
	boot, err := json.Marshal(b)
	clear(keyPEM)
	clear(b.InjectKeyPEM)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer clear(boot)
	s.net = &claimed{uid: c.uid} // the claim passes to the process
	if c.kms != nil {
		defer c.kms.Close() // net holds its own copy once started
	}
	return s.start(pki.Net, c.uid, c.claim, boot, extra)
}

// beneath returns, relative to ws, those of paths that lie in it (a path
// that contains the workspace hides all of it: the workspace itself).
func beneath(ws string, paths []string) []string {
	var out []string
	for _, p := range paths {
		rel, err := filepath.Rel(ws, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue
		}
		if rel == "." {
			continue // refused by Attach (insideAuthority)
		}
		out = append(out, rel)
	}
	return out
}

// insideAuthority returns the authority path that is, or contains, the
// workspace: fs would then serve the launcher's own files.
func insideAuthority(ws string, paths []string) (string, bool) {
	for _, p := range paths {
		p = filepath.Clean(p)
		if p == ws || strings.HasPrefix(ws, p+"/") || p == "/" {
			return p, true
		}
	}
	return "", false
}

// BackupRoot is where the workspaces' backup stores live, root's alone.
const BackupRoot = "/var/lib/pinfold/backups"

// StorePath is where workspace's backup store is (or would be).
func StorePath(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(BackupRoot, hex.EncodeToString(sum[:8]))
}

// StoreDir is workspace's backup store (made root's, 0700, when missing):
// one per workspace, named by its path's hash, outlasting sessions.
func StoreDir(workspace string) (string, error) {
	dir := StorePath(workspace)
	for _, d := range []string{"/var/lib/pinfold", BackupRoot, dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("session: backup store: %w", err)
		}
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != 0 || st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("session: backup store: %s must be a directory of root's that no one else can use (mode 0700)", d)
		}
	}
	return dir, nil
}

// listenerFile is a listener on addr in the agent's namespace ns, for
// role, as a file to hand the component.
func listenerFile(ns netns.NsHandle, addr string, role pki.Role) (*os.File, error) {
	ln, err := bridge.ListenIn(ns, addr)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, fmt.Errorf("session: %s's listener: %w", role, err)
	}
	return f, nil
}

// issue is role's leaf of the session and its key, PEM (the caller
// clears it once sent).
func (s *Session) issue(role pki.Role) (*pki.Leaf, []byte, error) {
	leaf, err := s.PKI.Issue(role)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := leaf.KeyPEM()
	if err != nil {
		return nil, nil, err
	}
	return leaf, keyPEM, nil
}

// credential is a component's bootstrap credential. Who may connect to
// its Unix socket at all: root (the launcher) for now; the uids of the
// components that call it join when they exist. Mutual TLS then decides
// who is served.
func credential(leaf *pki.Leaf, keyPEM []byte) boot.Credential {
	return boot.Credential{CAPEM: leaf.CAPEM(), CertPEM: leaf.CertPEM(), KeyPEM: keyPEM, Peers: []uint32{0}}
}

// writeAgentCredential puts the CA, the agent's certificate and its key
// in AgentDir; the key is made, with O_EXCL, the agent's uid's only.
func (s *Session) writeAgentCredential(uid int) error {
	leaf, keyPEM, err := s.issue(pki.Agent)
	if err != nil {
		return err
	}
	defer clear(keyPEM)
	for _, f := range []struct {
		name  string
		data  []byte
		mode  os.FileMode
		owner int
	}{{CAFile, leaf.CAPEM(), 0o444, 0}, {CertFile, leaf.CertPEM(), 0o444, 0}, {KeyFile, keyPEM, 0o400, uid}} {
		if err := writeNew(filepath.Join(s.AgentDir(), f.name), f.data, f.mode, f.owner); err != nil {
			return fmt.Errorf("session: the agent's credential: %w", err)
		}
	}
	return nil
}

// writeNew creates path (never an existing one, never through a
// symlink), owned by owner with mode, holding data.
func writeNew(path string, data []byte, mode os.FileMode, owner int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chown(owner, owner); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}

// idmappedTree is a detached clone of the mount at dir (not its
// submounts), idmapped so that dir's owner is uid there: fs, running as
// uid, reads and writes the owner's files through it, and what it creates
// belongs to the owner on disk. Nothing in the tree is executable,
// set-uid or a device.
func idmappedTree(launcherPath, dir string, uid int) (*os.File, error) {
	fail := func(err error) (*os.File, error) {
		return nil, fmt.Errorf("session: the workspace for fs: %w", err)
	}
	dfd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return fail(err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return fail(err)
	}
	userns, err := launcher.IdmapUserNS(launcherPath, int(st.Uid), int(st.Gid), uid, uid)
	if err != nil {
		return fail(err)
	}
	defer userns.Close()
	tree, err := unix.OpenTree(dfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return fail(fmt.Errorf("open_tree: %w", err))
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC, Userns_fd: uint64(userns.Fd())}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
		unix.Close(tree)
		return fail(fmt.Errorf("idmap (the file system may not support idmapped mounts): %w", err))
	}
	return os.NewFile(uintptr(tree), dir), nil
}

// lockDir takes the session's lock: a later session sweeps this
// directory only once the lock is free (its launcher is gone).
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: lock: %w", err)
	}
	return f, nil
}

var sessionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })

// How long, how much and how many finished sessions' logs stay
// (pruneLogs).
const (
	keepLogs        = 7 * 24 * time.Hour
	keepLogBytes    = 256 << 20
	keepLogSessions = 1000
)

// sweep tidies the directories of sessions whose launcher died (SIGKILL
// leaves no process, but leaves its files): their lock is free.
func sweep(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !sessionID().MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue // tidied already, or not a session's
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			tidy(dir)
		}
		f.Close()
	}
	pruneLogs(root, entries)
}

// pruneLogs removes the logs of sessions that are over (their directory
// holds no lock) once they are older than keepLogs, or beyond the newest
// keepLogBytes of them, or beyond the newest keepLogSessions: /run is
// memory, and a gateway starts sessions for anyone (each may write
// boot.MaxLog per component).
func pruneLogs(root string, entries []os.DirEntry) {
	type over struct {
		dir  string
		when time.Time
		size int64
	}
	var done []over
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() || !sessionID().MatchString(e.Name()) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, "lock")); !os.IsNotExist(err) {
			continue // running, or not tidied yet
		}
		o := over{dir: dir, when: st.ModTime()}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if info, err := f.Info(); err == nil {
				o.size += info.Size()
			}
		}
		done = append(done, o)
	}
	slices.SortFunc(done, func(a, b over) int { return b.when.Compare(a.when) }) // newest first
	var kept int64
	for i, o := range done {
		kept += o.size
		if i >= keepLogSessions || kept > keepLogBytes || time.Since(o.when) > keepLogs {
			os.RemoveAll(o.dir)
		}
	}
}

// tidy removes what a session leaves that matters (the agent's key, the
// sockets, the lock) and keeps the components' logs.
func tidy(dir string) error {
	var errs []error
	if err := os.RemoveAll(filepath.Join(dir, "agent")); err != nil {
		errs = append(errs, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") && e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("session: tidy %s: %w", dir, errors.Join(errs...))
	}
	return nil
}

// Summary is one line on what the components did, read from their logs:
// requests answered and denied, connections refused, and where the logs
// are.
func (s *Session) Summary() string {
	s.mu.Lock()
	procs := slices.Clone(s.procs)
	s.mu.Unlock()
	var parts []string
	for _, p := range procs {
		b, err := os.ReadFile(filepath.Join(s.Dir, string(p.role)+".log"))
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s: no log (%v)", p.role, err))
			continue
		}
		// Each line is read field by field as slog wrote it, a quoted
		// value whole: text the agent sends (a certificate's name in
		// caller=) is inside a value and cannot count (a hunt: a name
		// holding " more_not_logged=…" hid the refused connections).
		var requests, denied, refused, errs, skipped int
		cut := false
		for _, line := range strings.Split(string(b), "\n") {
			f := logFields(line)
			switch {
			case strings.HasPrefix(line, "log: over "):
				cut = true
			case f["msg"] == "request":
				requests++
				if f["allowed"] == "false" {
					denied++
				}
			// net's proxy logs each HTTP request it decides: "allowed",
			// or "refused" with its method (not a refused connection).
			case f["msg"] == "allowed" && f["method"] != "":
				requests++
			// A tunnel closed for its first message (another host's
			// server_name, plain HTTP): its CONNECT was counted when
			// allowed, and ends denied.
			case f["msg"] == "refused" && strings.HasPrefix(f["rule"], "tunnel."):
				denied++
			case f["msg"] == "refused" && f["method"] != "":
				requests++
				denied++
			case f["msg"] == "refused":
				refused++
				if n, err := strconv.Atoi(f["more_not_logged"]); err == nil && n > 0 && n < 1<<30 {
					skipped = min(skipped+n, 1<<30)
				}
			case f["level"] == "ERROR":
				errs++
			}
		}
		refused += skipped
		part := fmt.Sprintf("%s %d requests, %d denied", p.role, requests, denied)
		if refused > 0 {
			part += fmt.Sprintf(", %d connections refused", refused)
		}
		if errs > 0 {
			part += fmt.Sprintf(", %d errors", errs)
		}
		if cut {
			part += fmt.Sprintf(", LOG CUT at %d bytes: these count only what it kept", boot.MaxLog)
		}
		parts = append(parts, part)
	}
	return "components: " + strings.Join(parts, "; ") + " (logs in " + s.Dir + ")"
}

// logFields reads a line of slog's text format: key=value fields, a
// value quoted ("…", Go's escapes) or bare up to the next space. The
// first of a key counts; a line that does not read so gives what came
// before.
func logFields(line string) map[string]string {
	f := map[string]string{}
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		key, rest, ok := strings.Cut(line, "=")
		if !ok || key == "" || strings.ContainsAny(key, " \"") {
			break
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
			rest = " " + rest
		}
		if _, seen := f[key]; !seen {
			f[key] = v
		}
		line = rest
	}
	return f
}

// ErrNoSession: the agent-side verbs were run where the launcher set no
// session's variables (not inside an agent it started in components mode).
var ErrNoSession = errors.New("not inside a components-mode session")

// AgentClient is the agent's client for the component role, from inside
// the sandbox: its credential from the directory and the address from
// the variables the launcher put in its environment.
//
// Outside a session its error wraps ErrNoSession.
func AgentClient(role pki.Role) (*rpc.Client, error) {
	dir, addr := os.Getenv(EnvCredentials), ""
	switch role {
	case pki.FS:
		addr = os.Getenv(EnvFS)
	case pki.Bash:
		addr = os.Getenv(EnvBash)
	default:
		return nil, fmt.Errorf("the agent has no client for %s in this version", role)
	}
	if dir == "" || addr == "" {
		return nil, fmt.Errorf("%w: %s and the component's address are not set (the launcher sets them for the agent)", ErrNoSession, EnvCredentials)
	}
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("the agent's credential: %w", err)
		}
		return b, nil
	}
	ca, err := read(CAFile)
	if err != nil {
		return nil, err
	}
	cert, err := read(CertFile)
	if err != nil {
		return nil, err
	}
	key, err := read(KeyFile)
	if err != nil {
		return nil, err
	}
	leaf, err := pki.ParseLeaf(ca, cert, key, pki.Agent)
	clear(key)
	if err != nil {
		return nil, err
	}
	return rpc.NewClient(leaf, role, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		d.SetMultipathTCP(false) // the agent's seccomp refuses MPTCP
		return d.DialContext(ctx, "tcp4", addr)
	}, nil)
}
