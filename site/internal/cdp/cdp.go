// Package cdp drives a headless Chromium through the Chrome DevTools
// Protocol for browser tests of the static site.
//
// The browser is started with --remote-debugging-pipe: Chromium reads
// commands from its file descriptor 3 and writes responses and events to
// its file descriptor 4. Every message is one JSON object followed by a NUL
// byte. No network port, websocket or download is involved.
//
// A Browser owns one page target. Commands are sent on that page's
// flattened session (the sessionId field of each message), which keeps the
// whole conversation on the single pipe.
package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// maxMessage bounds one protocol message. Screenshots of long pages
	// are the biggest messages we expect; anything larger is a bug.
	maxMessage = 64 << 20

	// stderrKeep is how much of Chromium's stderr (and stdout) is kept.
	stderrKeep = 64 << 10

	// stderrShow is how much of the kept output goes into an error.
	stderrShow = 4 << 10

	// closeGrace is how long Close lets Chromium shut down by itself
	// after Browser.close before it kills the process group.
	closeGrace = 3 * time.Second

	// maxConsole bounds the messages kept for Console.
	maxConsole = 10000
)

// envBinary names the environment variable that overrides Find.
const envBinary = "PINFOLD_CHROMIUM"

// Find returns the Chromium binary to use: the file named by
// $PINFOLD_CHROMIUM if that is set, else /usr/bin/chromium or
// /usr/bin/chromium-browser. The error says how to install Chromium.
func Find() (string, error) {
	if p := os.Getenv(envBinary); p != "" {
		if err := isExecutable(p); err != nil {
			return "", fmt.Errorf("cdp: $%s=%q is not usable: %w", envBinary, p, err)
		}
		return p, nil
	}
	candidates := []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"}
	for _, p := range candidates {
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("cdp: chromium not found (looked at %s); install it with `apt-get install -y chromium` or set $%s",
		strings.Join(candidates, ", "), envBinary)
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not an executable file")
	}
	return nil
}

// Browser is a running headless Chromium with one page target.
// Its methods may be called from several goroutines.
type Browser struct {
	cmd     *exec.Cmd
	pid     int // also the process group id
	profile string
	session atomic.Pointer[string] // flattened session id of the page target

	toChrome   *os.File // our end of Chromium's fd 3
	fromChrome *os.File // our end of Chromium's fd 4
	writeMu    sync.Mutex

	output     tailBuffer    // Chromium's stderr and stdout
	outputDone chan struct{} // closed when output reaches EOF

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan response
	subs    map[string][]chan json.RawMessage
	console []string

	exited   chan struct{} // closed when the Chromium process has exited (not yet reaped)
	dead     chan struct{} // closed when the connection is unusable
	deadOnce sync.Once
	deadErr  error
	closed   atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// Launch starts a headless Chromium from bin (see Find) and opens one
// blank page. ctx bounds only the start-up; the browser runs until Close,
// which the caller must always call.
func Launch(ctx context.Context, bin string) (*Browser, error) {
	profile, err := os.MkdirTemp("", "pinfold-chromium-")
	if err != nil {
		return nil, fmt.Errorf("cdp: profile dir: %w", err)
	}
	args := []string{
		"--headless=new",
		"--remote-debugging-pipe",
		"--disable-gpu",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-extensions",
		"--disable-background-networking",
		"--disable-sync",
		"--disable-component-update",
		"--user-data-dir=" + profile,
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to start as root with its sandbox on ("Running
		// as root without --no-sandbox is not supported"): the sandbox
		// rests on dropping privileges, which means little for uid 0.
		// Test containers usually run as root, so we switch it off there
		// and only there; the pages we load are our own.
		args = append(args, "--no-sandbox")
	}
	args = append(args, "about:blank")

	// Two pipes: Chromium reads commands from fd 3 and writes to fd 4.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("cdp: pipe: %w", err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		closeAll(cmdR, cmdW)
		os.RemoveAll(profile)
		return nil, fmt.Errorf("cdp: pipe: %w", err)
	}
	// Chromium's stdout and stderr go to a pipe of our own rather than an
	// io.Writer, so that exec does not wait for Chromium's children (who
	// inherit stderr) before it reports the browser's exit.
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(cmdR, cmdW, respR, respW)
		os.RemoveAll(profile)
		return nil, fmt.Errorf("cdp: pipe: %w", err)
	}

	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{cmdR, respW} // fd 3, fd 4
	cmd.Stdout = outW
	cmd.Stderr = outW
	// Keep Chromium's home-directory files (NSS database, caches) inside
	// the temporary profile so that nothing is left behind.
	cmd.Env = append(os.Environ(),
		"HOME="+profile,
		"XDG_CONFIG_HOME="+filepath.Join(profile, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(profile, ".cache"),
	)
	// A process group of its own lets Close kill Chromium together with
	// its renderer, GPU and zygote processes. Should this process die
	// without Close, Chromium sees its fd 3 close and exits by itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	err = cmd.Start()
	closeAll(cmdR, respW, outW) // the child holds its own copies
	if err != nil {
		closeAll(cmdW, respR, outR)
		os.RemoveAll(profile)
		return nil, fmt.Errorf("cdp: start %s: %w", bin, err)
	}

	b := &Browser{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		profile:    profile,
		toChrome:   cmdW,
		fromChrome: respR,
		outputDone: make(chan struct{}),
		pending:    make(map[int64]chan response),
		subs:       make(map[string][]chan json.RawMessage),
		exited:     make(chan struct{}),
		dead:       make(chan struct{}),
	}
	go b.copyOutput(outR)
	go b.watchProcess()
	go b.readLoop()

	if err := b.openPage(ctx); err != nil {
		select {
		case <-b.dead: // the error already carries Chromium's output
		default:
			err = fmt.Errorf("%w%s", err, b.outputTail())
		}
		b.Close()
		return nil, fmt.Errorf("cdp: launching %s: %w", bin, err)
	}
	return b, nil
}

// openPage creates the page target, attaches to it and enables the
// domains whose events the Browser collects.
func (b *Browser) openPage(ctx context.Context) error {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	params := map[string]any{"targetId": target.TargetID, "flatten": true}
	if err := b.call(ctx, "", "Target.attachToTarget", params, &attached); err != nil {
		return err
	}
	b.session.Store(&attached.SessionID)
	for _, method := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.Call(ctx, method, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Close ends the browser: it asks Chromium to close, kills its process
// group after a short grace period, waits for it and removes the
// temporary profile. Close is safe to call more than once; later calls
// return the first call's result.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.shutdown() })
	return b.closeErr
}

func (b *Browser) shutdown() error {
	select {
	case <-b.exited:
	case <-b.dead: // the connection is broken; no point in asking politely
	default:
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		// Chromium may exit before it answers; either way we wait below.
		_ = b.call(ctx, "", "Browser.close", nil, nil)
		cancel()
		select {
		case <-b.exited:
		case <-time.After(closeGrace):
		}
	}
	b.closed.Store(true)

	// The group leader has exited or is still running, but it has not
	// been reaped (see watchProcess), so its pid still names our group
	// and cannot be reused. Kill whatever is left of the group
	// (renderers, zygotes, helpers), wait until it is dead, and only then
	// reap the leader.
	_ = unix.Kill(-b.pid, unix.SIGKILL)
	var errs []error
	if err := b.waitGroupGone(5 * time.Second); err != nil {
		errs = append(errs, err)
	}
	_ = b.cmd.Wait() // the exit status is of no interest once we killed it
	b.fail(errClosed)
	closeAll(b.toChrome, b.fromChrome)
	// The profile's SingletonSocket links to a directory Chromium made in
	// the temporary directory, which it removes only on a clean exit (each
	// CI run had left one): remove it too, when it is one of Chromium's.
	if target, err := os.Readlink(filepath.Join(b.profile, "SingletonSocket")); err == nil {
		if dir := filepath.Dir(target); filepath.Dir(dir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(dir), "org.chromium.Chromium.") {
			os.RemoveAll(dir)
		}
	}
	if err := os.RemoveAll(b.profile); err != nil {
		errs = append(errs, fmt.Errorf("cdp: remove profile: %w", err))
	}
	return errors.Join(errs...)
}

// waitGroupGone waits until no live process of the browser's process
// group is left. Chromium's zygotes are reparented to init when the
// browser exits, and they linger as zombies until init reaps them, which
// can take a second or more; zombies hold nothing, so they do not count.
func (b *Browser) waitGroupGone(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		live := liveGroupMembers(b.pid)
		if len(live) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cdp: processes %v of group %d still alive after kill", live, b.pid)
		}
		_ = unix.Kill(-b.pid, unix.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// liveGroupMembers lists the processes of process group pgid that are not
// zombies, from /proc.
func liveGroupMembers(pgid int) []int {
	if errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		return nil // the common case, without reading /proc
	}
	entries, _ := os.ReadDir("/proc")
	var live []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// The fields after "(comm)" are: state ppid pgrp ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, pid)
		}
	}
	return live
}

var errClosed = errors.New("browser closed")

// fail marks the connection as unusable; every pending and future call
// returns err.
func (b *Browser) fail(err error) {
	b.deadOnce.Do(func() {
		b.deadErr = err
		close(b.dead)
	})
}

// deadError describes why the browser cannot answer, with Chromium's
// recent output when it is not a deliberate Close.
func (b *Browser) deadError(method string) error {
	<-b.dead
	if b.closed.Load() {
		return fmt.Errorf("cdp: %s: %w", method, errClosed)
	}
	return fmt.Errorf("cdp: %s: %w%s", method, b.deadErr, b.outputTail())
}

// watchProcess waits for Chromium to exit without reaping it, so that its
// pid (the process group id) cannot be reused before Close kills the group.
func (b *Browser) watchProcess() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, b.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	close(b.exited)
	// Give the output copier a moment to collect the last words.
	select {
	case <-b.outputDone:
	case <-time.After(250 * time.Millisecond):
	}
	b.fail(errors.New("chromium exited"))
	// Unblock the reader in case a child process still holds fd 4.
	b.fromChrome.SetReadDeadline(time.Now())
}

// copyOutput keeps the tail of Chromium's stdout and stderr.
func (b *Browser) copyOutput(r *os.File) {
	defer close(b.outputDone)
	defer r.Close()
	io.Copy(&b.output, r)
}

// outputTail formats the end of Chromium's output for an error message.
func (b *Browser) outputTail() string {
	tail := b.output.Tail(stderrShow)
	if len(bytes.TrimSpace(tail)) == 0 {
		return ""
	}
	return "\nchromium output (tail):\n" + string(tail)
}
