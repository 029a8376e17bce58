package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pinfold/pinfold/gateway"
)

// serveTokenRun runs `launcher serve token ARGS...` in-process.
func serveTokenRun(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = env{stdout: &out, stderr: &errOut}.serveToken(args)
	return out.String(), errOut.String(), err
}

// wantServeTokenFail checks the exit code, message and hint of a refusal.
func wantServeTokenFail(t *testing.T, err error, code int, msg, hint string) {
	t.Helper()
	var ce *cliError
	if !errors.As(err, &ce) || ce.code != code || !strings.Contains(err.Error(), msg) || !strings.Contains(ce.hint, hint) {
		t.Errorf("got %v (%#v)\nwant exit %d, error containing %q, hint containing %q", err, ce, code, msg, hint)
	}
}

// failWriter is a stdout that takes nothing (a full disk, a closed pipe).
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A secret that cannot be written to stdout is lost: the token is revoked
// again and the command fails, rather than exiting 0 with a token in the
// store that nobody can present (launcher serve token add ci >/dev/full).
func TestServeTokenAddStdoutFails(t *testing.T) {
	store := filepath.Join(t.TempDir(), "cfg", "serve-tokens.json")
	var errOut bytes.Buffer
	code := run([]string{"serve", "token", "add", "ci", "--tokens", store}, failWriter{}, &errOut)
	if code != exitFailure || !strings.Contains(errOut.String(), `the secret could not be written to stdout (no space left on device): the token "ci" was revoked again`) || strings.Contains(errOut.String(), "pft_") {
		t.Errorf("add with a failing stdout: exit %d\n%s", code, errOut.String())
	}
	if toks, err := (gateway.Store{Path: store}).List(); err != nil || len(toks) != 0 {
		t.Errorf("the store holds %v (%v) after the secret was lost", toks, err)
	}
}

// revoke of a store that is not there (a mistyped --tokens) says so and
// makes nothing: not its directory, not a .lock file.
func TestServeTokenRevokeMissingStoreMakesNothing(t *testing.T) {
	dir := t.TempDir()
	_, _, err := serveTokenRun("revoke", "ci", "--tokens", filepath.Join(dir, "typo", "serve-tokens.json"))
	wantServeTokenFail(t, err, exitUsage, `revoke "ci": no such token: there is no store at `, "`launcher serve token list` shows the names")
	if _, err := os.Lstat(filepath.Join(dir, "typo")); !os.IsNotExist(err) {
		t.Errorf("revoke of a missing store made its directory: %v", err)
	}
	// Nor does a change of a store that is a directory or a FIFO leave a
	// .lock beside it.
	for _, step := range []error{os.Mkdir(filepath.Join(dir, "d"), 0o700), os.Mkdir(filepath.Join(dir, "d", "store"), 0o700),
		os.Mkdir(filepath.Join(dir, "p"), 0o700), syscall.Mkfifo(filepath.Join(dir, "p", "store"), 0o600)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	for _, d := range []string{"d", "p"} {
		for _, args := range [][]string{{"add", "ci"}, {"revoke", "ci"}} {
			_, _, err := serveTokenRun(append(args, "--tokens", filepath.Join(dir, d, "store"))...)
			wantServeTokenFail(t, err, exitFailure, "store is not a regular file", "")
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, d)); len(ents) != 1 {
			t.Errorf("beside the store: %v", ents)
		}
	}
}

func TestServeTokenAddListRevoke(t *testing.T) {
	store := filepath.Join(t.TempDir(), "cfg", "serve-tokens.json")
	stdout, stderr, err := serveTokenRun("add", "ci", "--cap", "host.execute", "--tokens", store)
	if err != nil {
		t.Fatal(err)
	}
	// The secret, alone, on stdout; the notice on stderr.
	if !regexp.MustCompile(`^pft_[A-Za-z0-9_-]{43}\n$`).MatchString(stdout) {
		t.Fatalf("add printed %q on stdout", stdout)
	}
	secret := strings.TrimSpace(stdout)
	if !strings.HasPrefix(stderr, `launcher: token "ci" added to `+store) || !strings.Contains(stderr, "will not be shown again") || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, secret) {
		t.Errorf("add said %q on stderr", stderr)
	}
	if _, _, err := serveTokenRun("add", "laptop", "--tokens", store); err != nil {
		t.Fatal(err)
	}

	stdout, _, err = serveTokenRun("list", "--tokens", store)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^ci\tcaps host\.execute\tcreated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\nlaptop\tcaps none\tcreated `).MatchString(stdout) {
		t.Errorf("list:\n%s", stdout)
	}
	toks, _ := gateway.Store{Path: store}.List()
	for _, s := range []string{secret, toks[0].Hash} {
		if strings.Contains(stdout, s) {
			t.Errorf("list shows %q:\n%s", s, stdout)
		}
	}

	stdout, _, err = serveTokenRun("list", "--json", "--tokens", store)
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0]["name"] != "ci" || len(list[0]) != 3 || list[0]["created"] == "" {
		t.Errorf("list --json:\n%s", stdout)
	}
	if strings.Contains(stdout, toks[0].Hash) || strings.Contains(stdout, secret) {
		t.Errorf("list --json shows a hash or secret:\n%s", stdout)
	}

	if tok, ok := (gateway.Store{Path: store}).Verify(secret); !ok || tok.Name != "ci" || !tok.Has(gateway.CapHostExecute) {
		t.Fatalf("the printed secret verifies as %v, %v", tok, ok)
	}
	if _, stderr, err = serveTokenRun("revoke", "ci", "--tokens", store); err != nil {
		t.Fatal(err)
	}
	if stderr != `launcher: token "ci" revoked from `+store+"\n" {
		t.Errorf("revoke said %q", stderr)
	}
	if _, ok := (gateway.Store{Path: store}).Verify(secret); ok {
		t.Error("the secret verifies after revoke")
	}
	if stdout, _, _ = serveTokenRun("list", "--tokens", store); strings.Contains(stdout, "ci") {
		t.Errorf("list after revoke:\n%s", stdout)
	}

	// An empty store lists as nothing, and as [] in JSON.
	empty := filepath.Join(t.TempDir(), "none.json")
	if stdout, _, err = serveTokenRun("list", "--tokens", empty); err != nil || stdout != "" {
		t.Errorf("empty list: %q, %v", stdout, err)
	}
	if stdout, _, err = serveTokenRun("list", "--json", "--tokens", empty); err != nil || stdout != "[]\n" {
		t.Errorf("empty list --json: %q, %v", stdout, err)
	}
}

func TestServeTokenDefaultStore(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	stdout, _, err := serveTokenRun("add", "default")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pinfold", "serve-tokens.json")
	if _, ok := (gateway.Store{Path: path}).Verify(strings.TrimSpace(stdout)); !ok {
		t.Errorf("the token is not in %s", path)
	}
}

func TestServeTokenBadInput(t *testing.T) {
	store := filepath.Join(t.TempDir(), "serve-tokens.json")
	if _, _, err := serveTokenRun("add", "ci", "--tokens", store); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		code      int
		msg, hint string
	}{
		{[]string{"add", "x", "--cap", "root"}, exitUsage, `unknown capability "root" (known: host.execute)`, "give --cap host.execute"},
		// --cap is repeatable: each value is checked, not refused as given twice.
		{[]string{"add", "x", "--cap", "host.execute", "--cap", "root"}, exitUsage, `unknown capability "root"`, "give --cap host.execute"},
		{[]string{"add", "Bad"}, exitUsage, `token name "Bad" starts with 'B'`, "1-64 of a-z"},
		{[]string{"add", "a b"}, exitUsage, `token name "a b" has ' '`, "1-64 of a-z"},
		{[]string{"add", "ci"}, exitUsage, `tokens: "ci": a token by that name exists in ` + store, "revoke the old token first"},
		{[]string{"revoke", "nope"}, exitUsage, `tokens: revoke "nope": no such token in ` + store, "`launcher serve token list` shows the names"},
		{[]string{"revoke", "-x"}, exitUsage, "serve token revoke: unknown flag -x", "launcher serve token revoke --help"},
		{[]string{"revoke", "Nope"}, exitUsage, `token name "Nope"`, "1-64 of a-z"},
		{[]string{"add"}, exitUsage, "serve token add: want 1 argument(s), got 0", "run `launcher serve token add --help`"},
		{[]string{"list", "extra"}, exitUsage, "want 0 argument(s), got 1", ""},
		{[]string{"list", "--cap", "host.execute"}, exitUsage, "serve token list: unknown flag --cap", ""},
		{[]string{"rm", "ci"}, exitUsage, `unknown serve token command "rm"`, "launcher serve token --help"},
	} {
		args := tc.args
		if tc.args[0] != "rm" {
			args = append(args, "--tokens", store)
		}
		_, _, err := serveTokenRun(args...)
		wantServeTokenFail(t, err, tc.code, tc.msg, tc.hint)
	}
	// None of them changed the store.
	if toks, err := (gateway.Store{Path: store}).List(); err != nil || len(toks) != 1 {
		t.Errorf("after the refusals: %v, %v", toks, err)
	}
}

func TestServeTokenRefusesBadStore(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "serve-tokens.json")
	if _, _, err := serveTokenRun("add", "ci", "--tokens", store); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o644); err != nil {
		t.Fatal(err)
	}
	const hint = "mode 0600, in a directory only you can write"
	for _, args := range [][]string{{"list"}, {"add", "two"}, {"revoke", "ci"}} {
		_, _, err := serveTokenRun(append(args, "--tokens", store)...)
		wantServeTokenFail(t, err, exitFailure, "tokens: bad store: "+store+" has mode 0644: others may read or change it (chmod 600 "+store+")", hint)
	}
	if err := os.Chmod(store, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := serveTokenRun("list", "--tokens", store); err != nil {
		t.Errorf("control: %v", err)
	}

	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	_, _, err := serveTokenRun("list", "--tokens", link)
	wantServeTokenFail(t, err, exitFailure, link+" is a symlink: refusing it", hint)

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"tokens":[],"secret":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = serveTokenRun("add", "x", "--tokens", bad)
	wantServeTokenFail(t, err, exitFailure, `tokens: bad store: `+bad+`: not a token store: json: unknown field "secret"`, hint)

	// A store from a newer launcher is not one to move aside and make
	// again (its tokens would be lost): the hint is to upgrade.
	newer := filepath.Join(dir, "newer.json")
	if err := os.WriteFile(newer, []byte(`{"version":2,"tokens":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"add", "two"}} {
		_, _, err = serveTokenRun(append(args, "--tokens", newer)...)
		wantServeTokenFail(t, err, exitFailure, "tokens: bad store: "+newer+": version 2: this launcher reads version 1 (written by a newer launcher)", "upgrade the launcher")
		if err != nil && strings.Contains(err.(*cliError).hint, "move it aside") {
			t.Errorf("%s: a newer store hinted %q", args[0], err.(*cliError).hint)
		}
	}
}

// Twenty processes adding at once lose none of one another's tokens (the
// store's flock serialises read, change and write across processes).
func TestServeTokenConcurrentProcesses(t *testing.T) {
	store := filepath.Join(t.TempDir(), "cfg", "serve-tokens.json")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("p%02d", i)
			cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "serve", "token", "add", name, "--tokens", store}}
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("add %s: %v", name, err)
				return
			}
			if tok, ok := (gateway.Store{Path: store}).Verify(strings.TrimSpace(string(out))); !ok || tok.Name != name {
				errs <- fmt.Errorf("add %s printed a secret that verifies as %v, %v", name, tok, ok)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if toks, err := (gateway.Store{Path: store}).List(); err != nil || len(toks) != n {
		t.Errorf("%d tokens after %d concurrent adds (%v)", len(toks), n, err)
	}
}

func TestServeTokenHelp(t *testing.T) {
	stdout, _, err := serveTokenRun("--help")
	if err != nil || stdout != serveTokenHelp {
		t.Errorf("--help: %v\n%s", err, stdout)
	}
	stdout, _, err = serveTokenRun("add", "--help")
	if !errors.Is(err, silentExit(exitOK)) || stdout != serveTokenHelp {
		t.Errorf("add --help: %v\n%s", err, stdout)
	}
	_, stderr, err := serveTokenRun()
	if !errors.Is(err, silentExit(exitUsage)) || stderr != serveTokenHelp {
		t.Errorf("no arguments: %v\n%s", err, stderr)
	}
	for _, want := range []string{"serve token add NAME [--cap host.execute]... [--tokens FILE]", "list [--json]", "revoke NAME", "will not be shown again", "120", "125"} {
		if !strings.Contains(serveTokenHelp, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
