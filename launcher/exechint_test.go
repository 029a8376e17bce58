package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

func TestExecHint(t *testing.T) {
	dir := t.TempDir()
	ws, bin := filepath.Join(dir, "ws"), filepath.Join(dir, "bin")
	for _, d := range []string{ws, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(path, text string) string {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	file(filepath.Join(bin, "interp"), "#!/bin/sh\n")
	outsideInterp := file(filepath.Join(dir, "interp"), "#!/bin/sh\n")
	// Landlock sees the file a link leads to: a link outside the exec
	// list to one in it is runnable, and one in it leading out is not.
	for link, to := range map[string]string{filepath.Join(dir, "in"): filepath.Join(bin, "interp"), filepath.Join(bin, "out"): outsideInterp} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	trueELF, err := filepath.EvalSymlinks("/usr/bin/true")
	if err != nil {
		t.Skipf("no /usr/bin/true to read an ELF loader from: %v", err)
	}
	p := &policy.Policy{Workspace: policy.Workspace{Path: policy.Path(ws)}}
	p.Files.Exec = []policy.Path{policy.Path(bin), "/usr/bin", "/usr/lib", "/lib64", "/bin"}
	noLoader := *p
	noLoader.Files.Exec = []policy.Path{"/usr/bin", policy.Path(bin)}
	for _, c := range []struct {
		name, path string
		p          *policy.Policy
		want       string // a part of the hint; "" for none
	}{
		{"missing interpreter", file(filepath.Join(bin, "a"), "#!/nonexistent/sh -e\necho\n"), p, "names the interpreter /nonexistent/sh, which does not exist"},
		{"interpreter outside exec", file(filepath.Join(bin, "b"), "#! "+outsideInterp+"\n"), p, "names the interpreter " + outsideInterp + ", which is not in [files] exec"},
		{"interpreter linked into exec", file(filepath.Join(bin, "c"), "#!"+filepath.Join(dir, "in")+"\n"), p, ""},
		{"interpreter linked out of exec", file(filepath.Join(bin, "c2"), "#!"+filepath.Join(bin, "out")+"\n"), p, "list " + outsideInterp + " or its directory"},
		{"interpreter in exec", file(filepath.Join(bin, "d"), "#!/bin/sh\n"), p, ""},
		{"in the workspace", file(filepath.Join(ws, "e"), "#!/bin/sh\n"), p, "is in a write path"},
		{"not listed", outsideInterp, p, outsideInterp + " is not in [files] exec"},
		{"no magic", file(filepath.Join(bin, "f"), "echo hi\n"), p, "starts with neither #! nor an ELF header"},
		{"empty #! line", file(filepath.Join(bin, "g"), "#!\n"), p, ""},
		{"missing program", filepath.Join(bin, "none"), p, ""},
		{"ELF with its loader", trueELF, p, ""},
		{"ELF loader outside exec", trueELF, &noLoader, "its ELF header names the interpreter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := execHint(c.path, c.p)
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Fatalf("execHint(%s) = %q, want one holding %q", c.path, got, c.want)
			}
		})
	}
}
