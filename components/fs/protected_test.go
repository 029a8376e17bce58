package fs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ProtectedIn finds the built-in names at any depth and git's files
// beneath any .git (submodules' too), the policy's own paths that exist,
// never through a symbolic link, and keeps only the outermost.
func TestProtectedIn(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{".bashrc", "src/.vscode/settings.json", ".git/hooks/pre-commit", ".git/config",
		".git/modules/lib/hooks/post-checkout", ".git/modules/lib/config", ".git/objects/ab/hooks",
		"sub/.git/config", "sub/.ssh/id", "src/main.go", "docs/.env", "notes/config"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, ".ssh"), 0o755)
	os.Symlink(outside, filepath.Join(ws, "link"))
	os.Symlink(filepath.Join(outside, ".ssh"), filepath.Join(ws, "src", ".ssh"))
	got, err := ProtectedIn(ws, []string{filepath.Join(ws, "docs/.env"), filepath.Join(ws, "absent"), filepath.Join(ws, ".git/hooks/x")})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, g := range got {
		r, _ := filepath.Rel(ws, g)
		rel = append(rel, r)
	}
	want := []string{".bashrc", ".git/config", ".git/hooks", ".git/modules/lib/config", ".git/modules/lib/hooks", "docs/.env", "src/.vscode", "sub/.git/config", "sub/.ssh"}
	if !slices.Equal(rel, want) {
		t.Errorf("got %q\nwant %q", rel, want)
	}
}

// A tree too large to walk is an error, not a partial answer.
func TestProtectedInTooLarge(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "many")
	os.Mkdir(dir, 0o755)
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, strings.Repeat("f", 1+i%50)+string(rune('a'+i%26))+string(rune('a'+i/26))), nil, 0o644)
	}
	if _, err := protectedInLimit(ws, nil, 100); err == nil || !strings.Contains(err.Error(), "more than 100 entries") {
		t.Fatalf("%v", err)
	}
	if _, err := protectedInLimit(ws, nil, 1000); err != nil {
		t.Fatal(err)
	}
}
