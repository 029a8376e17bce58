package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/gateway"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// sessionRoot is where component sessions live: each gets a directory
// (0711) with the components' sockets, the agent's credential and the
// components' logs, which outlive the session.
const sessionRoot = "/run/pinfold"

// componentSession starts the session a components-mode launch runs
// beside: it unseals the vault (only when the policy has [[secrets]]),
// starts kms with the secrets the rules name, and returns the session and
// a context that ends, with the reason, when any component exits.
func (e env) componentSession(p *policy.Policy, policyFile, vaultPath, keyFile string, approvalTimeout time.Duration) (*session.Session, context.Context, error) {
	if os.Geteuid() != 0 {
		return nil, nil, &cliError{code: exitRefused, err: errors.New("refused: components mode needs root, because each component runs under its own uid: nothing was started"),
			hint: `run the launcher as root, or use mode = "wrapper"`}
	}
	secrets, err := e.unseal(p, vaultPath, keyFile)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		for _, s := range secrets {
			clear(s.Value)
		}
	}()
	exe, err := sharedExecutable()
	if err != nil {
		return nil, nil, err
	}
	self, err := selfListeners(os.Getenv(EnvSelfListeners))
	if err != nil {
		return nil, nil, fail(exitUsage, "write it as IP:PORT[,IP:PORT...]", "%s: %v: nothing was started", EnvSelfListeners, err)
	}
	own, err := selfFiles(os.Getenv(EnvSelfFiles))
	if err != nil {
		return nil, nil, fail(exitUsage, `write it as a JSON list of absolute paths, e.g. ["/etc/ssl/private/gw.key"]`, "%s: %v: nothing was started", EnvSelfFiles, err)
	}
	protected := make([]string, len(p.Files.Protected))
	for i, pr := range p.Files.Protected {
		protected[i] = string(pr)
	}
	// What the workspace's git configs name there (a core.hooksPath, a
	// core.fsmonitor program, an included file) is protected as the
	// policy's own paths are: the person's git runs it (SR-51's reading,
	// for fs and the command workers). The session reads them again
	// before each command and after each protected change fs makes with
	// the person's approval (SR-46).
	named, notRead := fs.GitConfigNamedIn([]string{string(p.Workspace.Path)}, fs.MaxProtectedWalk)
	protected = append(protected, named...)
	for _, n := range notRead {
		fmt.Fprintf(e.stderr, "launcher: warning: not covered: %s\n", n)
	}
	// The components' parent-death signal follows the thread that starts
	// them: the launch runs on this same locked thread.
	runtime.LockOSThread()
	// Questions go to the launcher's own controlling terminal; without one
	// nothing that needs the person's approval is allowed.
	var asker *approve.Terminal
	if tty := openTerminal(); tty != nil {
		asker = &approve.Terminal{TTY: tty, Timeout: approvalTimeout}
	}
	s, err := session.Start(session.Config{Launcher: exe, Root: sessionRoot, Rules: p.Secrets, Secrets: secrets,
		Workspace: string(p.Workspace.Path), Protected: protected, Network: p.Network, Asker: asker, BackupQuota: int64(p.Backups.Quota),
		Authority: authorityPaths(policyFile, vaultPath, append([]string{keyFile}, own...)...), Worker: launcher.WorkerPolicy(p), SelfListeners: self})
	if err != nil {
		return nil, nil, fail(exitFailure, "", "components: %v: nothing was started", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		ex, ok := <-s.Exited()
		if ok {
			cancel(fmt.Errorf("%s: the session was stopped and the agent killed; nothing runs without its components", ex))
		}
	}()
	return s, ctx, nil
}

// authorityPaths are the launcher's own files a components-mode agent
// must not reach through fs: the policy file and the vault with its lock
// (the given vault or the default, whether or not it exists yet; its
// temporary files live only while `launcher secrets` writes it), and
// others: the key file when one is given, its caller's (EnvSelfFiles);
// and the gateway's token store with its lock at their default place,
// beside the default vault (so that a directory holding only these is
// covered whole: launcher.CoverDir).
// Each is given in all its forms (pathForms).
func authorityPaths(policyFile, vaultPath string, others ...string) []string {
	paths := append(slices.Clone(others), policyFile)
	if vaultPath == "" {
		vaultPath, _ = kms.DefaultPath()
	}
	if vaultPath != "" {
		paths = append(paths, vaultPath, vaultPath+".lock")
	}
	if store, err := gateway.DefaultStorePath(); err == nil {
		paths = append(paths, store, store+".lock")
	}
	return pathForms(paths...)
}

// pathForms gives each of paths ("" skipped) both as written (made
// absolute) and with its directories' symbolic links resolved, as the
// workspace is: a policy named through a linked current directory, or a
// vault under a $HOME with a link in it, must still be found beneath the
// workspace (a hunt found it was not). Where the name itself is a link,
// the file it points to is kept too.
func pathForms(paths ...string) []string {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil || p == "" {
			continue
		}
		forms := []string{abs, resolveDirs(abs)}
		if target, err := filepath.EvalSymlinks(abs); err == nil {
			forms = append(forms, target)
		}
		for _, f := range forms {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// resolveDirs resolves the links in abs's directories, as far up as they
// exist (a vault's directory may not yet).
func resolveDirs(abs string) string {
	rest := filepath.Base(abs)
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// unseal opens the vault for a policy with [[secrets]] and returns the
// secrets the rules name; every rule's secret must be there.
func (e env) unseal(p *policy.Policy, vaultPath, keyFile string) ([]kms.Secret, error) {
	if len(p.Secrets) == 0 {
		if vaultPath != "" || keyFile != "" {
			return nil, fail(exitUsage, "drop --vault and --key-file", "the policy has no [[secrets]]: the vault is not opened")
		}
		return nil, nil
	}
	// From here the launcher holds the passphrase or key and the values
	// until kms has them: no core dump of it, and no ptrace or
	// /proc/PID/mem by its own uid.
	if err := guardMemory(); err != nil {
		return nil, err
	}
	path := vaultPath
	if path == "" {
		var err error
		if path, err = kms.DefaultPath(); err != nil {
			return nil, err
		}
	}
	data, err := kms.ReadFile(path)
	switch {
	case errors.Is(err, kms.ErrNoVault):
		return nil, fail(exitFailure, "add them with `launcher secrets add NAME`, run as root as this launch is", "the policy's [[secrets]] need the vault: %v", err)
	case err != nil && ownedByAnother(path):
		// A person's own vault, found through their $HOME kept by sudo:
		// "add them" would send them to add what is there.
		return nil, fail(exitFailure, "components mode runs as root and opens only a vault of root's: add the secrets with `launcher secrets add NAME` run as root, or give --vault FILE of root's", "the policy's [[secrets]] need the vault: %v", err)
	case err != nil:
		return nil, fmt.Errorf("the policy's [[secrets]] need the vault: %w", err)
	}
	pass, err := kms.NeedsPassphrase(data)
	if err != nil {
		return nil, err
	}
	if !pass && keyFile == "" {
		return nil, fail(exitUsage, "give --key-file FILE", "the vault %s is sealed with a key file", path)
	}
	tty := openTerminal()
	if tty != nil {
		defer tty.Close()
	}
	key, err := e.vaultKey(keyFile, "--key-file", tty, false)
	if err != nil {
		return nil, err
	}
	v, err := kms.Open(data, key)
	key.Wipe()
	if err != nil {
		return nil, err
	}
	var out []kms.Secret
	for i, r := range p.Secrets {
		j := slices.IndexFunc(v.Secrets, func(s kms.Secret) bool { return s.Name == string(r.Name) })
		if j < 0 {
			for _, s := range v.Secrets {
				clear(s.Value)
			}
			return nil, fail(exitFailure, fmt.Sprintf("add it with `launcher secrets add %s`", r.Name), "secrets[%d] names %q, which is not in the vault %s", i, r.Name, path)
		}
		out = append(out, v.Secrets[j])
	}
	for _, s := range v.Secrets {
		if !slices.ContainsFunc(out, func(o kms.Secret) bool { return o.Name == s.Name }) {
			clear(s.Value)
		}
	}
	return out, nil
}

// ownedByAnother says whether the vault or its directory is there and
// belongs to another uid than this process's.
func ownedByAnother(path string) bool {
	for _, p := range []string{path, filepath.Dir(path)} {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Uid != uint32(os.Geteuid()) {
			return true
		}
	}
	return false
}

// guardMemory makes this process not dumpable and its core size 0: no
// core file, and no ptrace or /proc/PID/mem short of CAP_SYS_PTRACE. The
// hard limit stays: the agent's sandbox sets its core limit to 1, which
// a hard limit of 0 would make impossible (launcher.coreDumpsUncovered).
func guardMemory() error {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_CORE, &l); err != nil {
		return fmt.Errorf("secrets: core size: %w", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: l.Max}); err != nil {
		return fmt.Errorf("secrets: core size 0: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("secrets: not dumpable: %w", err)
	}
	return nil
}

// sharedExecutable is the launcher binary, which every component runs
// under its own uid (and, as root, the idmap holder under uid 0): others
// must be able to execute it, and none but root may change it or any
// directory on its way (else a user could swap it between the launch's
// checks and a component's start, and run as root).
func sharedExecutable() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("the launcher's own binary: %w", err)
	}
	refuse := func(format string, a ...any) (string, error) {
		return "", fail(exitRefused, "install the launcher where all may run it and only root may change it (e.g. /usr/local/bin, root's, mode 0755)",
			"refused: the components run the launcher binary %s under their own uids: %s: nothing was started", exe, fmt.Sprintf(format, a...))
	}
	root := os.Geteuid() == 0
	for p := exe; ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return refuse("%s: %v", p, err)
		}
		switch {
		case p == exe && st.Mode&0o005 != 0o005:
			return refuse("others may not read and execute it")
		case p != exe && st.Mode&0o001 == 0:
			return refuse("%s does not let others search it", p)
		case root && st.Uid != 0:
			return refuse("%s belongs to uid %d, not root", p, st.Uid)
		case root && st.Mode&0o022 != 0 && !(p != exe && st.Mode&unix.S_ISVTX != 0 && p != filepath.Dir(exe)):
			return refuse("%s may be written by others than root", p)
		}
		if p == "/" {
			break
		}
	}
	return exe, nil
}

// EnvSelfListeners names listeners of whoever starts the launcher (the
// gateway puts its own there) that net, in components or wrapper mode,
// must never connect to, whatever the policy's unsafe_allow_private
// says. It only adds refusals; the agent cannot set the launcher's
// environment.
const EnvSelfListeners = "PINFOLD_SELF_LISTENERS"

// EnvSelfFiles names files and directories of whoever starts the
// launcher (the gateway puts its TLS key, token store and session logs
// there) that components mode keeps from the agent as it keeps its own
// (authorityPaths): fs hides those in the workspace, bash refuses a
// command that names one, and the sandboxes of the agent and of each
// command cover those the policy's paths reach (launcher.MaskPlan). A
// JSON list of absolute paths (any character
// may be in a path); like EnvSelfListeners it only adds refusals.
const EnvSelfFiles = "PINFOLD_SELF_FILES"

// selfFiles parses EnvSelfFiles' value. Anything malformed is an error,
// never ignored: a typo would silently drop a refusal.
func selfFiles(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var paths []string
	if err := json.Unmarshal([]byte(v), &paths); err != nil {
		return nil, fmt.Errorf("not a JSON list of paths: %v", err)
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("%q is not an absolute, clean path", p)
		}
	}
	return paths, nil
}

// selfListeners parses EnvSelfListeners' value: IP:PORT, comma-separated.
// Anything malformed is an error, never ignored: a typo would silently
// drop a refusal.
func selfListeners(v string) ([]netip.AddrPort, error) {
	if v == "" {
		return nil, nil
	}
	var out []netip.AddrPort
	for _, f := range strings.Split(v, ",") {
		ap, err := netip.ParseAddrPort(f)
		if err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}
