package privfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Replace writes the whole new content, mode 0600, over the old file and
// leaves no temporary file; a directory that is not there fails and
// leaves nothing.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vault")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, []byte("new content")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new content" {
		t.Fatalf("%q, %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := Replace(filepath.Join(dir, "missing", "vault"), []byte("x")); err == nil {
		t.Error("a missing directory was written")
	}
	// A directory in the way: the rename fails, the temporary file goes.
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adir", "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(filepath.Join(dir, "adir"), []byte("x")); err == nil {
		t.Error("replaced a non-empty directory")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind after a failure: %v", ents)
	}
}
