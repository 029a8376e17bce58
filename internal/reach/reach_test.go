package reach

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const nobody = 65534

// TestMain: as the child the test starts as nobody, say for each path
// on the command line whether it is out of reach, judged by the error
// looking at it gives.
func TestMain(m *testing.M) {
	if os.Getenv("REACH_CHILD") == "" {
		os.Exit(m.Run())
	}
	for _, p := range os.Args[1:] {
		_, err := os.Lstat(p)
		var e string
		if err != nil {
			e = "error"
		}
		os.Stdout.WriteString(p + " " + e + " " + map[bool]string{true: "out", false: "reachable"}[Out(p, err)] + "\n")
	}
	os.Exit(0)
}

func TestOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (runs its check as nobody beside directories root owns)")
	}
	dir, err := os.MkdirTemp("", "pinfold-reach-") // t.TempDir's parent is root's, 0700
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(dir, name)
		must(t, os.Mkdir(p, 0o700))
		must(t, os.Chown(p, uid, uid))
		must(t, os.Chmod(p, mode))
		return p
	}
	locked := mk("locked", 0o700, 0) // another's, not searchable: out of reach
	mine := mk("mine", 0, nobody)    // nobody's own: it may chmod it
	open := mk("open", 0o755, 0)     // searchable
	deep := filepath.Join(mk("outer", 0o755, 0), "inner")
	must(t, os.Mkdir(deep, 0o700)) // the second step refuses
	file := filepath.Join(open, "file")
	must(t, os.WriteFile(file, nil, 0)) // the file's own mode refuses, not a directory
	want := map[string]string{
		filepath.Join(locked, "home", ".config", "vault"): "error out",
		filepath.Join(deep, "a", "b"):                     "error out",
		filepath.Join(mine, "home", "vault"):              "error reachable",
		filepath.Join(open, "missing", "x"):               "error reachable",
		filepath.Join(file, "x"):                          "error reachable",
		open:                                              " reachable",
	}
	var args []string
	for p := range want {
		args = append(args, p)
	}
	// The test binary, where nobody may run it (go test's directory is
	// root's own).
	self, err := os.ReadFile(os.Args[0])
	must(t, err)
	bin := filepath.Join(open, "reach.test")
	must(t, os.WriteFile(bin, self, 0o755))
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"REACH_CHILD=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the check as nobody: %v", err)
	}
	got := 0
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); got++ {
		p, rest, _ := strings.Cut(sc.Text(), " ")
		if rest != want[p] {
			t.Errorf("%s as nobody: got %q, want %q", p, rest, want[p])
		}
	}
	if got != len(want) {
		t.Fatalf("the check as nobody said %d lines, want %d: %q", got, len(want), out)
	}
	// As root nothing is concluded.
	if Out(filepath.Join(locked, "x"), os.ErrPermission) {
		t.Error("as root: a refused lookup was taken as out of reach")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
