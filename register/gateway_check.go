package register

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// gatewayCase is SR-50's check (see checks): a `launcher serve` on this
// host's loopback, with an owner token in a store of the scratch's, for
// the standard policy in components mode; it is stopped with the scratch.
func (s *scratch) gatewayCase() (probeCase, error) {
	if os.Geteuid() != 0 {
		never := func(Run) bool { return false }
		return probeCase{bare: true, probe: []string{"noop"}, refused: never, ok: never}, nil // skipped (run)
	}
	file := filepath.Join(s.ws, "inside")
	if err := os.WriteFile(file, []byte("the owner's project\n"), 0o644); err != nil {
		return probeCase{}, err
	}
	store := filepath.Join(s.dir, "tokens.json")
	out, err := exec.Command(s.launcher, "serve", "token", "add", "owner", "--tokens", store).Output()
	if err != nil {
		return probeCase{}, fmt.Errorf("launcher serve token add: %w", err)
	}
	tokenFile := filepath.Join(s.dir, "owner.token")
	if err := os.WriteFile(tokenFile, out, 0o600); err != nil {
		return probeCase{}, err
	}
	text := s.componentsText("[commands]\nauto = [\"cat\"]\n")
	policy := filepath.Join(s.dir, "gateway-policy.toml")
	if err := os.WriteFile(policy, []byte(text), 0o644); err != nil {
		return probeCase{}, err
	}
	sum := sha256.Sum256([]byte(text))
	url, err := s.startGateway("serve", "--policy-sha256", hex.EncodeToString(sum[:]), "--policy", policy,
		"--listen", "127.0.0.1:0", "--state", filepath.Join(s.dir, "state"), "--tokens", store)
	if err != nil {
		return probeCase{}, err
	}
	// The guest runs a command for the owner's file by its path: the
	// command worker is confined by the guest's policy, which names
	// nothing of the owner's workspace (a separate workspace alone, as
	// read_file would show, proves less: a guest policy that also read
	// the owner's tree would pass it). The control is the owner's.
	cat := "cat " + file
	return probeCase{bare: true, direct: true,
		probe: []string{"gateway-sh", url, "-", cat}, controlProbe: []string{"gateway-sh", url, tokenFile, cat},
		refused: func(r Run) bool {
			return r.Code == 0 && strings.HasPrefix(r.Line, "exit 1 cat: "+file+": ") &&
				(strings.HasSuffix(r.Line, ": No such file or directory") || strings.HasSuffix(r.Line, ": Permission denied"))
		},
		ok: func(r Run) bool { return r.Line == "exit 0 the owner's project" && r.Code == 0 }}, nil
}

// startGateway runs the launcher with args (a `serve`) and waits, at most
// 30 s, for the line that says where it serves. The gateway is ended
// (SIGTERM, then SIGKILL after a minute) when the scratch closes.
func (s *scratch) startGateway(args ...string) (string, error) {
	cmd := exec.Command(s.launcher, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &limited{w: &stderr, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.closers = append(s.closers, func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		l, _ := r.ReadString('\n')
		line <- l
		io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		if _, url, ok := strings.Cut(strings.TrimSpace(l), "serving MCP on "); ok {
			return url, nil
		}
		<-done
		return "", fmt.Errorf("launcher serve did not start: %q %s", l, lastLine(stderr.String()))
	case <-time.After(30 * time.Second):
		return "", errors.New("launcher serve did not say where it serves within 30 s")
	}
}

// limited writes at most n bytes to w, and discards the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if k := min(len(p), l.n); k > 0 {
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
