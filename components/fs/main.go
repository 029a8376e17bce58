package fs

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/launcher"
)

// The descriptors the launcher hands the fs process beyond the bootstrap
// (3) and the Unix listener (4) every component gets.
const (
	fdRoot = 5 // the workspace: an O_PATH directory descriptor (a detached idmapped clone)
	// Optional: a second listening socket, the TCP listener the launcher
	// made in the agent's network namespace. fs serves it the same way.
	fdAgentListener = 6
	// Optional: fs's end of the approval channel to the launcher, which
	// asks the person on its terminal.
	fdApprove = 7
	// Optional: the backup store for recursive deletes, a directory
	// (a detached clone the launcher idmapped onto fs's uid).
	fdStore = 8
	// Optional: fs's end of a socketpair whose other end bash holds
	// (backups before a confirmed deletion by shell command).
	fdBash = 9
	// Optional: the launcher's inotify watch on the workspace's git
	// configs (package session's configWatch): the launcher adds the
	// watches, fs reads the events (ConfigNews).
	fdWatch = 10
)

// maxBootstrap bounds what fs reads from its bootstrap pipe.
const maxBootstrap = 1 << 20

// landlockRoot is the path of the Landlock rule that lets fs write
// beneath its root descriptor. The trailing "/." matters: the launcher
// opens a rule's path with O_NOFOLLOW, and "/proc/self/fd/5" opened so
// is the magic link itself (a procfs symlink inode), whose rule grants
// nothing beneath the workspace; "/proc/self/fd/5/." follows the link in
// the middle of the path and ends on the directory.
var landlockRoot = "/proc/self/fd/" + strconv.Itoa(fdRoot) + "/."

// storePath names the backup store's descriptor the same way.
var storePath = "/proc/self/fd/" + strconv.Itoa(fdStore) + "/."

// Bootstrap is everything the launcher hands fs, over a pipe: its
// credential and the session CA, the uids that may connect, and the
// workspace-relative paths protected beyond the built-in ones.
type Bootstrap struct {
	boot.Credential
	// Protected are workspace-relative paths (the policy file, the vault,
	// the session directory, the backup store when they lie inside the
	// workspace, and the policy's own): no mutation touches them or what
	// is beneath them.
	Protected []string `json:"protected"`
	// Hidden are workspace-relative paths where the launcher's own
	// authority lies (Root.Hide).
	Hidden []string `json:"hidden,omitempty"`
	// BackupQuota is the backup store's size (the policy's
	// backups.quota; 0: the store's default).
	BackupQuota int64 `json:"backup_quota"`
	// Watch is the names that lead to a git config in what the
	// launcher's watch on them (fd 10) watches (ConfigNews).
	Watch []string `json:"watch,omitempty"`
	// Ask: the launcher can put questions to the person over the
	// approval channel. Without it the channel serves only the reading
	// of the git configs again, and every protected change is refused.
	Ask bool `json:"ask,omitempty"`
}

// Main is the fs process. It reads its bootstrap, takes its listener and
// its root descriptor, confines itself (files beneath the root only, no
// new sockets, no exec) and serves until it is killed. It returns an
// exit status only when it could not start.
func Main() int {
	return boot.Run(pki.FS, serve)
}

func serve(log *slog.Logger) error {
	// Looked at first, before the bootstrap is waited for and before the
	// Go runtime takes free descriptors for itself.
	if !boot.IsDir(fdRoot) {
		return errors.New("fs runs only as a component the launcher starts (no workspace directory on descriptor 5)")
	}
	hasAgentLn, hasApprove, hasStore, hasBash := boot.IsListening(fdAgentListener), boot.IsSocket(fdApprove), boot.IsDir(fdStore), boot.IsSocket(fdBash)
	hasWatch := isInotify(fdWatch)
	var b Bootstrap
	ln, err := boot.Start(pki.FS, maxBootstrap, &b)
	if err != nil {
		return err
	}
	srv, err := b.Server(pki.FS, log)
	if err != nil {
		return err
	}
	root, err := NewRoot(fdRoot, b.Protected)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Hide(b.Hidden); err != nil {
		return err
	}
	if hasApprove {
		f := os.NewFile(fdApprove, "approvals")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("approval channel: %w", err)
		}
		ask := approve.NewClient(c)
		if b.Ask {
			root.Approve = func(action, detail string) (bool, string) {
				a := ask.Ask(action, detail, approve.Approve)
				return a.Yes, a.Reason
			}
		}
		// After a protected change the person approved, the launcher
		// reads the workspace's git configs again (fs cannot: the
		// person's own configs and their absolute paths lie outside
		// its root); what they name now is protected from then on.
		// What could not be read is said here, and nothing protected
		// already is dropped.
		root.Refresh = refreshOver(ask.Refresh, log)
		// The person may edit a config themselves (a core.hooksPath
		// added by hand): before each change, fs reads the events of
		// the launcher's watch on the configs, and if one concerns a
		// config has the launcher read them again first. Each reading
		// says the names the events are told by from then on.
		if hasWatch {
			news := NewConfigNews(fdWatch, b.Watch)
			root.Refresh = refreshOver(func() ([]string, []string, error) { return news.Read(ask.RefreshWatch) }, log)
			root.Stale = news.Stale
			root.Recheck = recheckOver(func() ([]string, []string, error) { return news.Read(ask.Recheck) }, log)
		}
		// Recursive deletes need both the person and a store.
		if hasStore && b.Ask {
			store, err := backup.Open(storePath, b.BackupQuota)
			if err != nil {
				return fmt.Errorf("backup store: %w", err)
			}
			defer store.Close()
			root.Recursive = &Recursive{Store: store, Confirm: func(action, detail string, q Question) (bool, string) {
				kind := approve.ConfirmDelete
				switch q {
				case AskEvict:
					kind = approve.Evict
				case AskIrreversible:
					kind = approve.Irreversible
				}
				a := ask.Ask(action, detail, kind)
				return a.Yes, a.Reason
			}}
		}
	}
	var agentLn net.Listener
	if hasAgentLn {
		af := os.NewFile(fdAgentListener, "agent listener")
		agentLn, err = net.FileListener(af)
		af.Close()
		if err != nil {
			return fmt.Errorf("agent listener: %w", err)
		}
	}
	var bashConn net.Conn
	if hasBash {
		f := os.NewFile(fdBash, "bash")
		bashConn, err = net.FileConn(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("bash's connection: %w", err)
		}
	}
	// From here fs reaches files beneath its root only, makes no socket
	// and runs no program.
	writable := []string{landlockRoot}
	if root.Recursive != nil {
		writable = append(writable, storePath)
	}
	if err := launcher.ConfineComponent(confinement(writable...)); err != nil {
		return err
	}
	// A confinement that leaves fs unable to resolve paths would answer
	// every request with a denial: refuse to start instead.
	if _, err := root.Stat("."); err != nil {
		return fmt.Errorf("confined, fs cannot resolve its root: %w", err)
	}
	Register(srv, root)
	if bashConn != nil {
		if err := srv.ServeConn(bashConn); err != nil {
			return err
		}
	}
	log.Info("serving", "protected", len(b.Protected), "agent_listener", agentLn != nil, "approvals", root.Approve != nil, "config_watch", root.Stale != nil, "recursive_deletes", root.Recursive != nil, "bash", hasBash)
	if agentLn == nil {
		return srv.Serve(ln)
	}
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(agentLn) }()
	go func() { errs <- srv.Serve(ln) }()
	return <-errs
}

// confinement is fs's: files beneath its root and its backup store
// (named by paths), no sockets, no programs, and openat2 kept for its
// resolution.
func confinement(paths ...string) launcher.ComponentConfinement {
	return launcher.ComponentConfinement{Write: paths, Openat2: true}
}

// refreshOver is Root.Refresh through ask (the approval channel's
// Client.Refresh): the paths the launcher found the git configs to name,
// those fs does not take left out. What was not read, not sent or not
// taken is said in log, and a refresh that failed adds nothing: what fs
// protects already stays protected either way.
func refreshOver(ask func() (paths, notes []string, err error), log *slog.Logger) func() []string {
	return func() []string {
		paths, notes, err := ask()
		if err != nil {
			log.Warn("the git configs were not read again after an approved change: what they name now is not protected", "error", err)
			return nil
		}
		return taken(paths, notes, "after an approved change", log)
	}
}

// taken is what of paths fs takes, notes and the rest said in log.
func taken(paths, notes []string, when string, log *slog.Logger) []string {
	for _, n := range notes {
		log.Warn("not covered "+when, "note", n)
	}
	var ok []string
	for _, p := range paths {
		if err := checkPath(p); err != nil || p == "." {
			log.Warn("a path the git configs name is not protected: not one fs takes", "path", p)
			continue
		}
		ok = append(ok, p)
	}
	log.Info("git configs read again "+when, "protected", len(ok))
	return ok
}

// isInotify reports whether fd is an inotify descriptor (the launcher's
// watch on the git configs), looked at before fs confines itself.
func isInotify(fd int) bool {
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return err == nil && link == "anon_inode:inotify"
}

// recheckOver is Root.Recheck through ask (the approval channel's
// Client.Recheck): as refreshOver, but a read that failed is an error
// for the change waiting on it.
func recheckOver(ask func() (paths, notes []string, err error), log *slog.Logger) func() ([]string, error) {
	return func() ([]string, error) {
		paths, notes, err := ask()
		if err != nil {
			log.Warn("the git configs changed and were not read again: changes wait until they are", "error", err)
			return nil, err
		}
		return taken(paths, notes, "after the watch on them had news", log), nil
	}
}
