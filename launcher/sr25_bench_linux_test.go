package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// BenchmarkSR25 is the launch's SR-25 checks (launcherChecks)
// for a launcher run by its bare name through a PATH of a dozen entries,
// under a policy with a workspace and three write paths. It allows.
func BenchmarkSR25(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	path := []string{"/usr/local/go/bin", "/root/go/bin", "/root/.cargo/bin", "/root/.pyenv/shims",
		"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", filepath.Dir(exe)}
	b.Setenv("PATH", strings.Join(path, ":"))
	argv0 := os.Args[0]
	os.Args[0] = filepath.Base(exe)
	b.Cleanup(func() { os.Args[0] = argv0 })
	ws := b.TempDir()
	p := &policy.Policy{Workspace: policy.Workspace{Path: policy.Path(ws)},
		Files: policy.Files{Write: []policy.Path{policy.Path(b.TempDir()), policy.Path(b.TempDir()), policy.Path(b.TempDir())}}}
	for b.Loop() {
		if err := launcherChecks(p); err != nil {
			b.Fatal(err)
		}
	}
}
