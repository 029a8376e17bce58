package fs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// linkedWorkspace is a workspace whose protected paths reach others
// through links, as projects have them: a hook linked to the project's
// scripts/pre-commit, a core.hooksPath through a linked directory, a
// hook in the named directory linked to a tool, a hook linked out of
// the workspace, and one linked to a file not made yet.
func linkedWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	gitTestHome(t)
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{".git/hooks", "scripts", "tools/hooks", "sub/.git"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	must(t, os.Mkdir(outside, 0o755))
	for _, f := range []string{"scripts/pc", "scripts/beside", "tools/lint", "../outside/hook"} {
		must(t, os.WriteFile(filepath.Join(ws, f), []byte("#!/bin/sh\n"), 0o755))
	}
	for link, to := range map[string]string{
		".git/hooks/pre-commit":  "../../scripts/pc",
		".git/hooks/post-merge":  filepath.Join(outside, "hook"),
		".git/hooks/pre-push":    "../../scripts/later",
		"link":                   "tools",
		"tools/hooks/commit-msg": "../lint",
	} {
		must(t, os.Symlink(to, filepath.Join(ws, link)))
	}
	must(t, os.WriteFile(filepath.Join(ws, "sub/.git/config"), []byte("[core]\n\thooksPath = ../link/hooks\n"), 0o644))
	return ws, outside
}

// In components mode fs protects by name: what a protected path's links
// lead to in the workspace is protected too, or the agent changes, by
// its real name, what the person's git runs.
func TestGitConfigNamedInLinks(t *testing.T) {
	ws, outside := linkedWorkspace(t)
	named, notes := GitConfigNamedIn([]string{ws}, MaxProtectedWalk)
	if len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	rel := relativeTo(ws, named)
	for _, want := range []string{"link/hooks", "tools/hooks", "scripts/pc", "scripts/later", "tools/lint"} {
		if !slices.Contains(rel, want) {
			t.Errorf("%s is not protected: %q", want, rel)
		}
	}
	if slices.ContainsFunc(named, func(p string) bool { return p == outside || beneathPath(p, outside) }) {
		t.Errorf("a path outside the workspace was named: %q", named)
	}
	root, err := OpenRoot(ws, rel)
	must(t, err)
	defer root.Close()
	for _, p := range []string{"scripts/pc", "tools/hooks/pre-commit", "tools/lint", "scripts/later"} {
		if err := root.Write(p, []byte("echo pwned\n"), false); KindOf(err) != KindProtected {
			t.Errorf("write %s, which the person's git runs through a link: %v", p, err)
		}
	}
	if err := root.Write("scripts/beside", []byte("x"), false); err != nil {
		t.Errorf("control: a write beside the linked hook: %v", err)
	}
}

// A command's worker has the same paths read-only.
func TestProtectedNowLinks(t *testing.T) {
	ws, _ := linkedWorkspace(t)
	mounts, _, _, notes, err := ProtectedNow(ws, nil)
	if err != nil || len(notes) > 0 {
		t.Fatalf("ProtectedNow: %v, notes %q", err, notes)
	}
	for _, want := range []string{"scripts/pc", "tools/hooks", "tools/lint"} {
		if !slices.Contains(mounts, filepath.Join(ws, want)) {
			t.Errorf("%s is not mounted read-only for a command: %q", want, mounts)
		}
	}
	if slices.Contains(mounts, filepath.Join(ws, "scripts/beside")) {
		t.Errorf("control: scripts/beside is mounted: %q", mounts)
	}
}
