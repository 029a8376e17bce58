package main

import (
	"os"
	"path/filepath"
	"slices"
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
