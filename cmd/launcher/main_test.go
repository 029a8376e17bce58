package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pinfold/pinfold/components/code"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == code.WorkerEntry {
		os.Exit(code.WorkerMain()) // code run's worker is this binary again
	}
	testscript.Main(m, map[string]func(){
		"launcher": func() { os.Exit(launcherMain()) },
		// readhidden reads a line with echo off from the terminal on fd 3
		// (TestReadHiddenRestoresOnSignal).
		"readhidden": func() {
			tty := os.NewFile(3, "tty")
			_, err := readHidden(tty, tty, "prompt: ")
			if err != nil {
				os.Exit(2)
			}
			os.Exit(0)
		},
	})
}

// TestScripts pins the CLI's stdout, stderr and exit codes. Each script in
// testdata/script runs the real command line.
func TestScripts(t *testing.T) {
	bin := ownCopy(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			return nil
		},
		// [exists:PATH] holds when PATH exists on this host, for what the
		// launcher says only about files a host has.
		Condition: func(cond string) (bool, error) {
			if path, ok := strings.CutPrefix(cond, "exists:"); ok {
				_, err := os.Stat(path)
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// expand FILE... replaces $WORK in each file with the script's
			// work directory, so policies can name real paths.
			"expand": func(ts *testscript.TestScript, neg bool, args []string) {
				for _, f := range args {
					data := strings.ReplaceAll(ts.ReadFile(f), "$WORK", ts.Getenv("WORK"))
					ts.Check(os.WriteFile(ts.MkAbs(f), []byte(data), 0o644))
				}
			},
			// pin FILE VAR sets $VAR to FILE's sha256, computed here with
			// crypto/sha256, independently of the launcher.
			"pin": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: pin FILE VAR")
				}
				sum := sha256.Sum256([]byte(ts.ReadFile(args[0])))
				ts.Setenv(args[1], hex.EncodeToString(sum[:]))
			},
			// status CODE PROG ARGS... runs PROG and requires exit code CODE,
			// keeping stdout and stderr for the commands that follow.
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: status CODE PROG [ARGS...]")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("run %s: %v", args[1], err)
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
		},
	})
}

// An error line quotes what others wrote (a script's exception, a file
// name): it stays one line, cannot steer the terminal, and is bounded.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain error":                  "plain error",
		"two\nlines":                   "two lines",
		"\x1b]0;owned\x07\rfake":       `\u001b]0;owned\u0007\u000dfake`,
		"bidi \u202egnp.exe":           `bidi \u202egnp.exe`,
		"sep\u2028x\u0085y\x7f":        `sep\u2028x\u0085y\u007f`,
		"tab\tkept, unicode kept: é ✓": "tab\tkept, unicode kept: é ✓",
		"  trimmed  ":                  "trimmed",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
	long := oneLine(strings.Repeat("x", 3<<20))
	if len(long) > maxErrorLine+64 || !strings.HasSuffix(long, fmt.Sprintf("(%d more bytes)", 3<<20-maxErrorLine)) {
		t.Errorf("a 3 MiB error is %d bytes, ending %q", len(long), long[len(long)-40:])
	}
}

// What the launcher prints on stdout about names and commands others
// chose is quoted when it would steer the terminal or split a line (a
// hunt's file named evil\x1b[31m… coloured the terminal through
// `policy hash`), and left as it is otherwise.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"policy.toml":        "policy.toml",
		"dir with space/é ✓": "dir with space/é ✓",
		"evil\x1b[31mRED":    `"evil\x1b[31mRED"`,
		"two\nlines":         `"two\nlines"`,
		"bidi\u202etxt":      `"bidi\u202etxt"`,
		"\xff\xfe":           `"\xff\xfe"`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
	dir := t.TempDir()
	name := dir + "/evil\x1b[31mRED.toml"
	if err := os.WriteFile(name, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := run([]string{"policy", "hash", name}, &o, &e); code != 0 || strings.ContainsRune(o.String(), 0x1b) {
		t.Errorf("policy hash: %d %q %q", code, o.String(), e.String())
	}
}

// policy hash prints sha256sum's line, escaped as coreutils escapes a name
// holding a backslash, a newline or a CR, so that sha256sum -c reads it
// back (it printed the backslash raw and quoted a newline, and -c found
// no such file).
func TestPolicyHashReadBySha256sum(t *testing.T) {
	sum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("no sha256sum (coreutils) to read the lines back")
	}
	dir := t.TempDir()
	for _, base := range []string{"plain.toml", `back\slash.toml`, "two\nlines.toml", "cr\rx.toml", `both\` + "\n.toml"} {
		name := filepath.Join(dir, base)
		if err := os.WriteFile(name, []byte("version = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		if code := run([]string{"policy", "hash", name}, &o, &e); code != 0 {
			t.Fatalf("policy hash %q: %d %s", name, code, e.String())
		}
		cmd := exec.Command(sum, "-c", "--strict", "-")
		cmd.Stdin = strings.NewReader(o.String())
		if out, err := cmd.CombinedOutput(); err != nil || !strings.HasSuffix(string(out), ": OK\n") {
			t.Errorf("sha256sum -c on policy hash %q's line %q: %v %q", name, o.String(), err, out)
		}
	}
}

// An empty agent command is a usage error (120), before any policy is
// read, with or without --full-access.
func TestEmptyAgentIsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--policy-sha256", strings.Repeat("0", 64), "--policy", "/nonexistent.toml", "--", ""},
		{"--full-access", "--", ""},
	} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != exitUsage || !strings.Contains(e.String(), "empty string") {
			t.Errorf("%q: %d %s", args, code, e.String())
		}
	}
}

// repeatedFlag reads args as the flag package does: a repeat before "--"
// is found, as typed; the agent's arguments after "--", and a flag's
// value that looks like a flag, are not flags.
func TestRepeatedFlag(t *testing.T) {
	fs := flags("t")
	fs.String("policy", "", "")
	fs.Bool("quiet", false, "")
	var evidence files
	fs.Var(&evidence, "evidence", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "a", "--quiet"}, ""},
		{[]string{"--policy", "a", "--policy=b"}, "--policy"},
		{[]string{"--quiet", "-quiet"}, "-quiet"},
		{[]string{"--policy", "--quiet", "--quiet"}, ""}, // "--quiet" is --policy's value
		{[]string{"--policy", "a", "--", "--policy", "b"}, ""},
		{[]string{"--policy", "a", "pos", "--policy", "b"}, "--policy"},    // flags after a positional (policy check FILE --json)
		{[]string{"--evidence", "a", "--evidence=b", "--policy", "c"}, ""}, // a repeatable flag means each value (site build, serve token add --cap)
		{[]string{"--evidence", "a", "--evidence", "b", "--quiet", "--quiet"}, "--quiet"},
	} {
		if got := repeatedFlag(fs, c.args); got != c.want {
			t.Errorf("repeatedFlag(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// A path flag given an empty value (an unset variable: --vault "$VAULT")
// is a usage error, not the default: it wrote a secret to the person's
// own vault, a token to their own store, and --out "" said the current
// directory "exists", hinting to remove it.
func TestEmptyFlagValue(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	_, key := keyFileDir(t)
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--vault", []string{"secrets", "add", "x", "--vault", "", "--key-file", key}},
		{"--vault", []string{"secrets", "list", "--vault=", "--key-file", key}},
		{"--key-file", []string{"secrets", "list", "--key-file", ""}},
		{"--tokens", []string{"serve", "token", "add", "x", "--tokens", ""}},
		{"--out", []string{"policy", "init", "--workspace", t.TempDir(), "--out", ""}},
		{"--as", []string{"backups", "restore", "20261202T073845.613190070Z-5a53f819", "--workspace", "/ws", "--as", ""}},
	} {
		var o, e bytes.Buffer
		code := run(c.args, &o, &e)
		if code != exitUsage || !strings.Contains(e.String(), c.flag+" is given an empty value") {
			t.Errorf("%q: exit %d\n%s", c.args, code, e.String())
		}
	}
	if ents, _ := os.ReadDir(cfg); len(ents) != 0 {
		t.Errorf("the default config directory holds %v", ents)
	}
}

// ownCopy is a directory holding a copy of this test binary named
// launcher, for the scripts' PATH. testscript puts a hard link to it
// there, and a launch refuses code with a second name (SR-25).
func ownCopy(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // the launches' throwaway uids look it up
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/launcher", data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A command whose standard output does not take what it prints fails
// (125, said on stderr): `launcher policy hash P >/dev/full` exited 0
// with no hash written (a hunt). The control: the same command, written.
func TestStdoutWriteFailure(t *testing.T) {
	name := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(name, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"policy", "hash", name}, {"register", "list"}} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 0 || o.Len() == 0 {
			t.Fatalf("control: %v: %d, %d bytes out; stderr %q", args, code, o.Len(), e.String())
		}
		e.Reset()
		if code := run(args, failingWriter{}, &e); code != exitFailure || !strings.Contains(e.String(), "launcher: error: writing standard output: no space left on device") {
			t.Errorf("%v to a full stdout: %d, stderr %q; want %d and the write's error", args, code, e.String(), exitFailure)
		}
	}
}

// failingWriter fails every write, as /dev/full does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// The top-level usage names every backups subcommand its own help names
// (remove was missing from it).
func TestUsageNamesEveryBackupsVerb(t *testing.T) {
	var line string
	for _, l := range strings.Split(mainHelp, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "launcher backups ") {
			line = l
		}
	}
	for _, l := range strings.Split(backupsHelp, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "launcher" || f[1] != "backups" {
			continue
		}
		if !strings.Contains(line, f[2]) {
			t.Errorf("the usage's backups line %q does not name %q", line, f[2])
		}
	}
	if line == "" {
		t.Fatal("the usage has no backups line")
	}
}

// TestShown: a name the agent chose reaches the person's terminal with
// its controls, format characters and invalid bytes escaped, and
// printable text (spaces, other scripts, U+FFFD itself) as it is.
func TestShown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/ws/.git/hooks", "/ws/.git/hooks"},
		{"/ws/a b/naïve/日本", "/ws/a b/naïve/日本"},
		{"/ws/a\r\x1b[2K\x1b[8m/.git", `/ws/a\r\x1b[2K\x1b[8m/.git`},
		{"/ws/\u202egnp.exe", `/ws/\u202egnp.exe`},
		{"/ws/\x9b31m\u200b", `/ws/\x9b31m\u200b`},
		{"/ws/\xff\t\n", `/ws/\xff\t\n`},
		{"/ws/\ufffd", "/ws/\ufffd"},
	} {
		if got := shown(c.in); got != c.want {
			t.Errorf("shown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
