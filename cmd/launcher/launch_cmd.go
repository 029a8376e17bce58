package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/gateway"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

const launchHelp = `Usage:
  launcher --policy-sha256 HASH --policy FILE [--quiet | --verbose] -- AGENT [ARGS...]
  launcher --full-access -- AGENT [ARGS...]

Starts AGENT confined by the policy in FILE, but only if FILE's bytes hash
to HASH (64 hex digits, optionally "sha256:"-prefixed; compute it yourself
with sha256sum). The file is read once: the bytes hashed are the bytes
parsed. The launcher's exit status is the agent's (128+N if a signal N
killed it), or one of the codes below if the agent never ran.

  --quiet        no summary line at start
  --verbose      details: every note about the plan
  --vault FILE, --key-file FILE
                 components mode with [[secrets]]: the vault to unseal
                 (default ~/.config/pinfold/vault) and its key file
                 (else the passphrase is asked on the terminal)
  --approval-timeout DURATION
                 components mode: how long a question to you waits on the
                 terminal before it counts as no (default 2m)
  --full-access  run AGENT unconfined, with the launcher's environment and
                 every descriptor it inherited, as a plain exec would.
                 Never chosen automatically, printed on every run, and
                 refused together with a policy.

` + exitCodesHelp

func (e env) launch(args []string) error {
	fset := flags("launch")
	pin := fset.String("policy-sha256", "", "")
	file := fset.String("policy", "", "")
	quiet := fset.Bool("quiet", false, "")
	verbose := fset.Bool("verbose", false, "")
	full := fset.Bool("full-access", false, "")
	vault := fset.String("vault", "", "")
	approvalTimeout := fset.Duration("approval-timeout", approve.DefaultTimeout, "")
	keyFile := fset.String("key-file", "", "")
	if err := fset.Parse(args); errors.Is(err, flag.ErrHelp) || fset.Lookup("help").Value.String() == "true" {
		fmt.Fprint(e.stdout, launchHelp)
		return nil
	} else if err != nil {
		return fail(exitUsage, "run `launcher --help`", "%v", flagErr(err, args))
	}
	if name := repeatedFlag(fset, args[:len(args)-len(fset.Args())]); name != "" {
		return fail(exitUsage, "give each flag once", "%s is given more than once (which one was meant?)", name)
	}
	argv := fset.Args()
	if len(argv) == 0 || !dashDashBefore(args, len(argv)) {
		return fail(exitUsage, "put the agent after --: launcher --policy-sha256 HASH --policy FILE -- AGENT [ARGS...]", "no agent command after --")
	}
	if argv[0] == "" {
		return fail(exitUsage, "name the agent's program after --", "the agent's command is an empty string")
	}
	if *full {
		if *pin != "" || *file != "" {
			return fail(exitUsage, "drop --full-access to run confined, or drop the policy to run unconfined", "--full-access cannot be combined with a policy: a policy is never downgraded to an unconfined run")
		}
		return e.fullAccess(argv)
	}
	if *pin == "" || *file == "" {
		return fail(exitUsage, "compute the hash yourself (sha256sum FILE) and pass both", "a launch needs --policy-sha256 HASH and --policy FILE")
	}
	if *quiet && *verbose {
		return fail(exitUsage, "", "--quiet and --verbose exclude each other")
	}
	p, _, _, err := e.loadPinned(*pin, *file)
	if err != nil {
		return err
	}
	opts := launcher.LaunchOptions{
		Policy: p, Argv: argv, Quiet: *quiet, Verbose: *verbose,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: e.stderr,
	}
	wrapper := p.Mode != policy.ModeComponents
	var protectedBefore []string
	if wrapper {
		opts.ReadOnly, protectedBefore, opts.Uncovered = fs.ProtectedMounts(writeDirs(p), fs.MaxProtectedWalk, launcher.MaxReadOnly)
		opts.Uncovered = shownAll(opts.Uncovered) // names a previous agent may have made
		// The summary line says these; --quiet drops it, but the agent
		// may rewrite them and the person's programs run them: said on
		// every run, as what the agent made is when it ends.
		if *quiet && len(opts.Uncovered) > 0 {
			fmt.Fprintf(e.stderr, "launcher: warning: not read-only for the agent, though your own programs run them: %s (SR-51)\n", strings.Join(opts.Uncovered, ", "))
		}
		if opts.Mask, err = wrapperOwnFiles(); err != nil {
			return err
		}
	}
	ctx := context.Background()
	// The policy key's own promise: said on every run, --quiet or not.
	for _, c := range p.Network.UnsafeAllowPrivate {
		if p.Network.Mode == policy.NetProxy {
			fmt.Fprintf(e.stderr, "launcher: warning: SSRF protection is off for %s (network.unsafe_allow_private): the agent may reach those addresses through net\n", c)
		}
	}
	if p.Mode == policy.ModeComponents {
		sess, sctx, err := e.componentSession(p, *file, *vault, *keyFile, *approvalTimeout)
		if err != nil {
			return err
		}
		defer func() {
			if err := sess.Stop(); err != nil {
				fmt.Fprintf(e.stderr, "launcher: warning: %v\n", err)
			}
			if !*quiet {
				fmt.Fprintln(e.stderr, "launcher: "+sess.Summary())
			}
		}()
		ctx, opts.Beside, opts.Mask = sctx, sess, sess.OwnFiles()
	} else if *vault != "" || *keyFile != "" {
		return fail(exitUsage, "drop --vault and --key-file", "the vault is opened only in components mode")
	} else if p.Network.Mode == policy.NetProxy {
		// The net component beside a wrapper-mode agent.
		wn, nctx, err := newWrapperNet(p, *verbose, e.stderr)
		if err != nil {
			return err
		}
		defer wn.stop(*quiet)
		ctx, opts.Beside = nctx, wn
	}
	code, err := launcher.Launch(ctx, opts)
	var refused *launcher.RefusedError
	var failed *launcher.StepFailedError
	if wrapper && !errors.As(err, &refused) && !errors.As(err, &failed) { // the agent ran
		// What the agent made is not covered (SD-27): said on every run,
		// --quiet too, since the person's programs will run it. Said
		// however the launch ended: an error after the agent started
		// (net exiting, which kills it) leaves what it made as well.
		made, unseen := fs.ProtectedMade(writeDirs(p), protectedBefore, fs.MaxProtectedWalk)
		made, unseen = shownAll(made), shownAll(unseen) // names the agent chose
		if len(made) > 0 {
			fmt.Fprintf(e.stderr, "launcher: warning: the agent made %s, which your own programs run (git runs a repository's hooks and config): look at them before you use the workspace (SD-27)\n", strings.Join(made, ", "))
		}
		// The agent shaped the tree: what the walk could not look
		// through may hold a repository or hooks it made.
		if len(unseen) > 0 {
			fmt.Fprintf(e.stderr, "launcher: warning: what the agent made was not all looked for (%s): a repository, hooks or config it made there, which your own programs would run, is not named; look at the workspace before you use it (SD-27)\n", strings.Join(unseen, "; "))
		}
	}
	switch {
	case errors.As(err, &refused):
		ended := "nothing was started"
		if !wrapper {
			// The session's components ran before the agent's own
			// assessment (it needs them); the deferred Stop ends them.
			ended = "the agent was not started; the session's components were stopped"
		}
		return &cliError{code: exitRefused, err: fmt.Errorf("refused: %s: %s", refused.Error(), ended), hint: refused.Hint}
	case errors.As(err, &failed):
		code := exitFailure
		if failed.Status == exitCannotRun || failed.Status == exitNotFound {
			code = failed.Status
		}
		return &cliError{code: code, err: fmt.Errorf("%s: the agent was not started", failed.Error()), hint: failed.Hint}
	case errors.Is(err, exec.ErrNotFound):
		return &cliError{code: exitNotFound, err: err, hint: "list the agent's directory in [env] PATH (pass or set) and in [files] exec"}
	case err != nil:
		return fail(exitFailure, "", "%v", err)
	}
	return silentExit(code)
}

// wrapperOwnFiles are the files a wrapper-mode agent must not read
// wherever its policy's paths reach them (launcher.LaunchOptions.Mask):
// the vault and its lock at their default place (no vault is opened in
// wrapper mode, but a policy that reads the config directory would hand
// over its ciphertext, to guess the passphrase offline), the gateway's
// token store and its lock at their default place (the same directory:
// with them named, a directory holding only these is covered whole, so
// that a vault or store replaced by rename stays covered), and whatever
// the launcher's caller names in EnvSelfFiles. The policy file is not
// among them: it holds no secret, a change to it fails the next launch's
// pin, and it often lies in the workspace, where the agent's tools
// expect to read it.
func wrapperOwnFiles() ([]string, error) {
	own, err := selfFiles(os.Getenv(EnvSelfFiles))
	if err != nil {
		return nil, fail(exitUsage, `write it as a JSON list of absolute paths, e.g. ["/etc/ssl/private/gw.key"]`, "%s: %v: nothing was started", EnvSelfFiles, err)
	}
	if vault, err := kms.DefaultPath(); err == nil {
		own = append(own, vault, vault+".lock")
	}
	if store, err := gateway.DefaultStorePath(); err == nil {
		own = append(own, store, store+".lock")
	}
	return pathForms(own...), nil
}

// dashDashBefore reports whether the n trailing arguments follow a "--".
func dashDashBefore(args []string, n int) bool {
	i := len(args) - n - 1
	return i >= 0 && args[i] == "--"
}

// fullAccess runs the agent with no confinement at all, saying so.
func (e env) fullAccess(argv []string) error {
	fmt.Fprintln(e.stderr, "launcher: warning: UNCONFINED: --full-access runs the agent with all of your authority; no policy applies")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, e.stderr
	// The launcher lives as long as its agent and passes on what is sent
	// to it alone: a Ctrl-C ended the launcher (Go's default) while an
	// agent that catches SIGINT to interrupt its work ran on, orphaned,
	// and a SIGTERM to the launcher left the agent running.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, fullAccessSignals...)
	defer signal.Stop(sigs)
	err := cmd.Start()
	if err == nil {
		done := make(chan struct{})
		go func() {
			for {
				select {
				case sig := <-sigs:
					if fromTerminal(sig) {
						continue // the terminal sent it to the agent too
					}
					cmd.Process.Signal(sig)
				case <-done:
					return
				}
			}
		}()
		err = cmd.Wait()
		close(done)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if st := ee.ExitCode(); st >= 0 {
			return silentExit(st)
		}
		// Killed by a signal: 128+N, as a confined launch and a shell say.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return silentExit(128 + int(ws.Signal()))
		}
		return silentExit(128 + 9)
	case err != nil:
		return fail(startCode(err), "", "full access: %v", err)
	}
	return nil
}

// startCode is the exit status for an agent that could not be started
// unconfined, as env(1) gives it: 127 not found, 126 found but not run.
func startCode(err error) int {
	var pe *os.PathError
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOENT):
		return exitNotFound
	case errors.As(err, &pe) && pe.Op == "fork/exec":
		return exitCannotRun
	}
	return exitFailure
}

// fullAccessSignals are the signals a --full-access launcher passes on,
// as a confined launch does (WINCH needs no passing: the agent shares
// the launcher's terminal).
var fullAccessSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// fromTerminal reports whether sig is one the terminal sends to its
// whole foreground process group, the unconfined agent with it: a
// Ctrl-C or Ctrl-\ while the launcher is in the foreground of the
// terminal on its stdin. Passing those on would deliver them twice. (A
// SIGINT sent to the launcher alone then is not passed on.)
func fromTerminal(sig os.Signal) bool {
	if sig != syscall.SIGINT && sig != syscall.SIGQUIT {
		return false
	}
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// loadPinned reads the policy file once and hashes those bytes against
// the pin before anything else: nothing is decoded, created or started
// before they match. Then it parses the same bytes and checks them
// against the live filesystem.
func (e env) loadPinned(pin, file string) (*policy.Policy, []byte, policy.Digest, error) {
	want, err := policy.ParseDigest(pin)
	if err != nil {
		return nil, nil, want, fail(exitUsage, "", "--policy-sha256: %v", err)
	}
	data, err := readPolicy(file)
	if err != nil {
		return nil, nil, want, err
	}
	if err := policy.Verify(data, want); err != nil {
		return nil, nil, want, fail(exitMismatch, fmt.Sprintf("compute the hash of %s yourself (sha256sum) and compare it with the one you pinned; if the file changed, review it before pinning again", file),
			"policy %s does not match the pinned sha256: nothing was started", file)
	}
	p, err := policy.Parse(file, data)
	if err == nil {
		err = p.CheckLive()
	}
	if err != nil {
		return nil, nil, want, e.invalid(file, err)
	}
	return p, data, want, nil
}

// writeDirs are the policy's write paths. In wrapper mode the agent
// may write them whole, but not what fs protects in them, each run by the
// person's own programs, unconfined, when they next use the workspace
// (git status runs what .git/config's core.fsmonitor names): a
// repository's hooks and config, shell start-up files, .ssh, editor and
// agent configuration. Those that exist are mounted read-only over the
// write paths (fs.ProtectedMounts), what could not be covered is said on
// every run, and what the agent made is said when it ends. files.protected
// stays the components' (a path made later is asked about there; here
// nothing would cover it).
func writeDirs(p *policy.Policy) []string {
	var dirs []string
	for _, w := range p.Files.Write {
		dirs = append(dirs, string(w))
	}
	return dirs
}
