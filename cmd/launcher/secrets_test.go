package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/kms"
	"github.com/pinfold/pinfold/policy"
)

// Without a key file and without a terminal to ask on, there is no key:
// a usage error that says what to give, not a prompt nobody can answer.
func TestVaultKeyNeedsTerminal(t *testing.T) {
	e := env{stdout: io.Discard, stderr: io.Discard}
	_, err := e.vaultKey("", "--key-file", nil, false)
	var ce *cliError
	if !errors.As(err, &ce) || ce.code != exitUsage || !strings.Contains(err.Error(), "no terminal") || !strings.Contains(ce.hint, "--key-file") {
		t.Fatalf("no key file, no terminal: %v", err)
	}
}

// Changes at once do not lose one another: eight concurrent adds leave
// eight secrets (the vault's lock serialises read, change and write).
func TestSecretsConcurrentAdds(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	add := func(name string) error {
		cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", name, "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("value-" + name)}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("add %s: %v\n%s", name, err, out)
		}
		return nil
	}
	if err := add("first"); err != nil { // makes the vault
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- add(fmt.Sprintf("s%d", i)) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	out, err := (&exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "list", "--vault", vault, "--key-file", key}}).Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "\n"); n != 9 {
		t.Errorf("%d secrets after 1+8 adds:\n%s", n, out)
	}
}

// While the launcher holds a passphrase, a key or values, it leaves no
// core file and is not dumpable (no ptrace or /proc/PID/mem by its own
// uid). The control: the test process starts dumpable, with a core size
// it may have.
func TestGuardMemory(t *testing.T) {
	if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 1 {
		t.Skipf("control: this test process is not dumpable to begin with (%d)", d)
	}
	var r unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_CORE, &r)
	if r.Max > 0 {
		unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: r.Max, Max: r.Max})
	}
	if err := guardMemory(); err != nil {
		t.Fatal(err)
	}
	if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 0 {
		t.Errorf("dumpable %d after guardMemory", d)
	}
	unix.Getrlimit(unix.RLIMIT_CORE, &r)
	if r.Cur != 0 || r.Max != 0 {
		t.Errorf("core size %d/%d after guardMemory", r.Cur, r.Max)
	}
}

// A name no secret can have is refused first (exit 120), before the
// vault is locked or the value read; list reads without the lock, so it
// writes nothing beside the vault (a hunt's list left a .lock beside a
// FIFO, a directory and an empty file, and failed on a read-only one).
func TestSecretsBadNameFirstListWritesNothing(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	var o, e bytes.Buffer
	code := run([]string{"secrets", "add", "Bad_NAME", "--vault", vault, "--key-file", key}, &o, &e)
	if code != exitUsage || !strings.Contains(e.String(), "upper-case") {
		t.Errorf("a bad name: %d %s", code, e.String())
	}
	if _, err := os.Lstat(filepath.Join(dir, "cfg")); !os.IsNotExist(err) {
		t.Errorf("a bad name made the vault's directory or lock: %v", err)
	}
	// list of a vault that is not there: an error, and nothing made.
	o.Reset()
	e.Reset()
	run([]string{"secrets", "list", "--vault", filepath.Join(dir, "v2"), "--key-file", key}, &o, &e)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("list left %v", ents)
	}
}

// rm and rekey of a vault that is not there (a mistyped --vault) say so
// and make nothing: not its directory, not a .lock file; nor does an add
// whose key file is refused, nor a change of a vault that is a FIFO or a
// directory (no .lock beside it).
func TestSecretsChangeMissingVaultMakesNothing(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "typo", "vault")
	for _, step := range []error{
		os.Mkdir(filepath.Join(dir, "fifo"), 0o700),
		unix.Mkfifo(filepath.Join(dir, "fifo", "vault"), 0o600),
		os.MkdirAll(filepath.Join(dir, "dir", "vault"), 0o700),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets", "rm", "x", "--vault", vault, "--key-file", key}, "no vault yet at " + vault},
		{[]string{"secrets", "rekey", "--vault", vault, "--key-file", key, "--new-key-file", key}, "no vault yet at " + vault},
		// The first add, with a key file that is refused.
		{[]string{"secrets", "add", "x", "--vault", vault, "--key-file", key + ".typo"}, "key file: open " + key + ".typo: no such file"},
		// A vault that is a FIFO or a directory: no .lock beside it.
		{[]string{"secrets", "add", "x", "--vault", filepath.Join(dir, "fifo", "vault"), "--key-file", key}, "fifo/vault is not a regular file"},
		{[]string{"secrets", "add", "x", "--vault", filepath.Join(dir, "dir", "vault"), "--key-file", key}, "dir/vault is not a regular file"},
	} {
		args := c.args
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != exitFailure || !strings.Contains(e.String(), c.want) {
			t.Errorf("%s: exit %d\n%s", args[1], code, e.String())
		}
		if _, err := os.Lstat(filepath.Join(dir, "typo")); !os.IsNotExist(err) {
			t.Fatalf("%s of a missing vault made its directory: %v", args[1], err)
		}
	}
	for _, d := range []string{"fifo", "dir"} {
		if ents, _ := os.ReadDir(filepath.Join(dir, d)); len(ents) != 1 {
			t.Errorf("beside a %s vault: %v", d, ents)
		}
	}
}

// A change that has to wait for the vault's lock says so: its holder may
// be at a passphrase or value prompt for as long as its person likes,
// and the second command hung without a word. Once the lock is free it
// goes on, and both changes are kept.
func TestSecretsSaysItWaitsForTheLock(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	unlock, err := kms.Lock(vault, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "second", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("v")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stderr).ReadString('\n')
		said <- line
		io.Copy(io.Discard, stderr)
	}()
	select {
	case line := <-said:
		if !strings.HasPrefix(line, "launcher: waiting for the lock of the vault "+vault) {
			t.Errorf("while the lock was held it said %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Error("said nothing in 10 s while the lock was held")
	}
	unlock()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("add once the lock was free: %v", err)
	}
	out, err := (&exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "list", "--vault", vault, "--key-file", key}}).Output()
	if err != nil || !strings.HasPrefix(string(out), "second\t") {
		t.Errorf("list: %q %v", out, err)
	}
}

// A name far too long (a value pasted in its place) is said to be too
// long, within the error line: it was quoted whole, and the line was cut
// before the reason.
func TestSecretsLongNameSaysWhy(t *testing.T) {
	var o, e bytes.Buffer
	code := run([]string{"secrets", "add", strings.Repeat("a", 10000), "--vault", filepath.Join(t.TempDir(), "vault")}, &o, &e)
	// The hint names every character a name may have, '-' too.
	if code != exitUsage || !strings.Contains(e.String(), "(10000 bytes) is longer than 64 characters") || len(e.String()) > 1000 ||
		!strings.Contains(e.String(), "launcher: hint: a secret's name is a lower-case letter, then lower-case letters, digits, '_' or '-', at most 64") {
		t.Errorf("exit %d, %d bytes on stderr:\n%.300s", code, len(e.String()), e.String())
	}
}

// A key file that is not the one the vault was sealed with says so with
// a hint at the likeliest cause, a final newline an editor added (a
// hunt: the same error as a wrong passphrase, no hint). The control: the
// key file as it was opens the vault.
func TestSecretsKeyFileNewlineHint(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	add := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("v")}
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	var o, e bytes.Buffer
	if code := run([]string{"secrets", "list", "--vault", vault, "--key-file", key}, &o, &e); code != 0 {
		t.Fatalf("control: list with the key file as it was: %d %s", code, e.String())
	}
	edited := filepath.Join(dir, "key-edited")
	if err := os.WriteFile(edited, []byte(strings.Repeat("k", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	code := run([]string{"secrets", "list", "--vault", vault, "--key-file", edited}, &o, &e)
	if code != exitFailure || !strings.Contains(e.String(), "wrong passphrase or key") || !strings.Contains(e.String(), "launcher: hint: the key file must be the very bytes") {
		t.Errorf("an edited key file: %d %q; want %d, the error and the hint", code, e.String(), exitFailure)
	}
}

// A value from stdin loses one line end, LF or CR LF, and nothing else:
// a CR without an LF was dropped too, against the help's "one trailing
// newline"; it is the value's own, and refused as a control character. A stdin longer than any value is
// said to be longer than the most a secret holds (it was said to be
// 1048576 bytes, the size it was cut at, whatever its length); one of
// the longest value and CR LF is taken.
func TestSecretsValueFromStdin(t *testing.T) {
	dir, keyPath := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	add := func(name, value string) (string, error) {
		cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", name, "--vault", vault, "--key-file", keyPath}, Stdin: strings.NewReader(value)}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	longest := strings.Repeat("v", kms.MaxValueSize)
	want := map[string]string{}
	for name, c := range map[string][2]string{
		"lf":      {"abc\n", "abc"},
		"crlf":    {"abc\r\n", "abc"},
		"none":    {"abc", "abc"},
		"longest": {longest + "\r\n", longest},
	} {
		if out, err := add(name, c[0]); err != nil {
			t.Fatalf("add %s: %v\n%s", name, err, out)
		}
		want[name] = c[1]
	}
	before, err := os.ReadFile(vault)
	if err != nil {
		t.Fatal(err)
	}
	out, err := add("huge", strings.Repeat("x", 2_000_000))
	if err == nil || !strings.Contains(out, `launcher: error: secrets: the value of "huge" on stdin is more than 65536 bytes`) || strings.Contains(out, "1048576") {
		t.Errorf("a 2,000,000-byte stdin: %v\n%s", err, out)
	}
	// What is left after the one line end is the value, and a control
	// character in it is refused (no header carries one).
	for name, v := range map[string]string{"cr": "abc\r", "twolf": "abc\n\n"} {
		if out, err := add(name, v); err == nil || !strings.Contains(out, fmt.Sprintf("the value of %q holds the control character", name)) {
			t.Errorf("add %s (%q): %v\n%s", name, v, err, out)
		}
	}
	out, err = add("over", longest+"v\n")
	if err == nil || !strings.Contains(out, `the value of "over" is 65537 bytes, more than 65536`) {
		t.Errorf("a value one byte too long: %v\n%s", err, out)
	}
	data, err := os.ReadFile(vault)
	if err != nil || !bytes.Equal(data, before) {
		t.Fatalf("the refused adds changed the vault: %v", err)
	}
	contents, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	key, err := kms.KeyFile(contents)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kms.Open(data, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Secrets) != len(want) {
		t.Errorf("%d secrets, want %d", len(v.Secrets), len(want))
	}
	for _, s := range v.Secrets {
		if string(s.Value) != want[s.Name] {
			t.Errorf("%s: value %.20q (%d bytes), want %.20q (%d bytes)", s.Name, s.Value, len(s.Value), want[s.Name], len(want[s.Name]))
		}
	}
}

// A launch (as root) whose vault is a person's own, found through the
// $HOME sudo kept, is told the vault must be root's: the hint was "add
// them with `launcher secrets add NAME`", which sent the person to add
// secrets that were there. The controls: a vault not there keeps that
// hint; one of root's with a loose mode gets neither (its error says
// chmod).
func TestUnsealVaultOfAnotherSaysRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the vault must belong to another uid")
	}
	// unseal makes this process not dumpable, with core size 0: undone
	// after, for TestGuardMemory's control.
	var core unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_CORE, &core)
	t.Cleanup(func() {
		unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		unix.Setrlimit(unix.RLIMIT_CORE, &core)
	})
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	add := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("v")}
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	loose := filepath.Join(dir, "loose")
	data, err := os.ReadFile(vault)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(loose, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{vault, filepath.Dir(vault)} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	e := env{stdout: io.Discard, stderr: io.Discard}
	p := &policy.Policy{Secrets: []policy.Secret{{Name: "first"}}}
	for _, c := range []struct{ vault, err, hint string }{
		{vault, "belongs to uid 65534", "components mode runs as root and opens only a vault of root's"},
		{filepath.Join(dir, "none", "vault"), "no vault yet", "add them with `launcher secrets add NAME`"},
		{loose, "has mode 0644", ""},
	} {
		_, err := e.unseal(p, c.vault, key)
		var ce *cliError
		hint := ""
		if errors.As(err, &ce) {
			hint = ce.hint
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || (c.hint == "") != (hint == "") || !strings.Contains(hint, c.hint) {
			t.Errorf("%s: %v; hint %q, want %q", c.vault, err, hint, c.hint)
		}
	}
}

// With the right key file, a vault cut short or with a byte changed
// fails the tag as a wrong key does, and the hint said only that the key
// file was edited: it names the vault's damage too.
func TestSecretsDamagedVaultHint(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	add := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("value")}
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	data, err := os.ReadFile(vault)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)-20] ^= 1
	for name, b := range map[string][]byte{"cut": data[:len(data)-1], "flipped": flipped} {
		if err := os.WriteFile(vault, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := run([]string{"secrets", "list", "--vault", vault, "--key-file", key}, &o, &e)
		if code != exitFailure || !strings.Contains(e.String(), "wrong passphrase or key, or the vault was altered") || !strings.Contains(e.String(), "if it is, the vault was changed or cut short") {
			t.Errorf("%s: %d %q", name, code, e.String())
		}
	}
}

// A taken name is said before the value is read: with stdin left open
// (a person about to paste the value, or a pipe still writing) the add
// waited for the value and only then said the name was taken. The
// control: a new name waits for the value, and takes it once stdin ends.
func TestSecretsTakenNameBeforeValue(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	first := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("v")}
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	add := func(name string) (*exec.Cmd, *os.File, chan error, *bytes.Buffer) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", name, "--vault", vault, "--key-file", key}, Stdin: r, Stdout: &out, Stderr: &out}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, w, done, &out
	}
	cmd, w, done, out := add("first")
	defer w.Close()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(out.String(), `vault: "first" is already there`) {
			t.Errorf("a taken name: %v, exit %d\n%s", err, code, out)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("a taken name waited 10 s for a value it cannot take:\n%s", out)
	}
	cmd, w2, done, out := add("second")
	select {
	case err := <-done:
		t.Fatalf("control: a new name ended before its value: %v\n%s", err, out)
	case <-time.After(300 * time.Millisecond):
	}
	w2.WriteString("value")
	w2.Close()
	if err := <-done; err != nil {
		t.Errorf("control: a new name with its value: %v\n%s", err, out)
	}
}

// keyFileDir is a new directory holding a key file, "key" (32 bytes,
// mode 0600), for the tests' vaults: the directory and the file's path.
func keyFileDir(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, key
}

// rekey --new-key-file naming the vault itself (as named, by a link or
// by another hard link) sealed the vault under its own old bytes, which
// the new vault then replaced: every secret was lost, and rekey said it
// succeeded. It is refused, and the vault is left as it was; the
// control: a new key file elsewhere rekeys it.
func TestSecretsRekeyNewKeyIsTheVault(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault")
	var o, e bytes.Buffer
	add := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("value")}
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	before, err := os.ReadFile(vault)
	if err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "cfg", "hard")
	if err := os.Link(vault, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft")
	if err := os.Symlink(vault, soft); err != nil {
		t.Fatal(err)
	}
	for _, newKey := range []string{vault, hard, filepath.Join(dir, "cfg", ".", "vault")} {
		o.Reset()
		e.Reset()
		code := run([]string{"secrets", "rekey", "--vault", vault, "--key-file", key, "--new-key-file", newKey}, &o, &e)
		if code != exitUsage || !strings.Contains(e.String(), "the vault itself") {
			t.Errorf("--new-key-file %s: exit %d, %q; want a refusal", newKey, code, e.String())
		}
		if after, _ := os.ReadFile(vault); !bytes.Equal(after, before) {
			t.Fatalf("--new-key-file %s: the vault was rewritten", newKey)
		}
	}
	// A link to the vault is refused as a key file already (a symlink).
	if code := run([]string{"secrets", "rekey", "--vault", vault, "--key-file", key, "--new-key-file", soft}, &o, &e); code == 0 {
		t.Errorf("--new-key-file through a symlink to the vault: exit 0")
	}
	// Control: another key file rekeys, and the vault opens with it.
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, bytes.Repeat([]byte("o"), 32), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"secrets", "rekey", "--vault", vault, "--key-file", key, "--new-key-file", other}, &o, &e); code != 0 {
		t.Fatalf("control: rekey to another key file: exit %d, %s", code, e.String())
	}
	o.Reset()
	if code := run([]string{"secrets", "list", "--vault", vault, "--key-file", other}, &o, &e); code != 0 || !strings.Contains(o.String(), "first") {
		t.Errorf("control: list with the new key: exit %d, %q %s", code, o.String(), e.String())
	}
}

// A --vault ending in '/' names a directory, never a vault file: the
// first add made that directory (for the lock beside the vault it took
// the path's last name for), then refused it as not a regular file,
// leaving the directory behind. It is refused before anything is made.
func TestSecretsVaultPathDirectoryMakesNothing(t *testing.T) {
	dir, key := keyFileDir(t)
	vault := filepath.Join(dir, "cfg", "vault") + "/"
	cmd := &exec.Cmd{Path: os.Args[0], Args: []string{"launcher", "secrets", "add", "first", "--vault", vault, "--key-file", key}, Stdin: strings.NewReader("value")}
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(out), "names a directory") {
		t.Errorf("--vault %s: %v\n%s", vault, err, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "cfg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--vault %s made %s (%v)", vault, filepath.Join(dir, "cfg"), err)
	}
}
