package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The launcher's files are found beneath a workspace whose path has no
// links even when they are named through links: a linked current
// directory, a $HOME behind a link, a vault whose directory does not
// exist yet, a policy file that is itself a link.
func TestAuthorityPathsResolveLinks(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "policy.toml"), []byte("version = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("policy.toml", filepath.Join(real, "p-link.toml")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(link)
	got := authorityPaths("p-link.toml", filepath.Join(link, ".config/pinfold/vault"), "key")
	for _, want := range []string{
		filepath.Join(real, "key"),
		filepath.Join(real, "p-link.toml"),
		filepath.Join(real, "policy.toml"), // the file the link names
		filepath.Join(real, ".config/pinfold/vault"),
		filepath.Join(real, ".config/pinfold/vault.lock"),
		filepath.Join(link, "key"), // as written, too
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is missing from %q", want, got)
		}
	}
}

// policy init's file is written whole beside its name and linked to it:
// the name is never there half-written (a hunt's interrupted init left
// an empty policy that blocked the retry), and no temporary file stays.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.toml")
	if err := writeNew(p, []byte("version = 1\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "version = 1\n" {
		t.Errorf("content %q, %v", b, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	err := writeNew(p, []byte("other"))
	if err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "version = 1\n" {
		t.Errorf("the existing file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the directory: %v", ents)
	}
}
