package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxProtectedWalk bounds ProtectedIn's walk of a workspace.
const MaxProtectedWalk = 200_000

// ProtectedIn returns the protected paths that exist in the workspace dir
// (absolute): the built-in names at any depth, the git files beneath any
// ".git", and those of extra (absolute paths, the policy's) that exist beneath
// dir.
// It is how the launcher finds what to mount read-only over a bash
// worker's writable workspace, so it follows no symbolic link, does not
// descend into what it returns, and fails rather than answer from part
// of a tree larger than MaxProtectedWalk entries. A file named ".git" (a
// worktree's or submodule's pointer to its repository) is protected too.
// A symbolic link at a protected name, or at ".git", is an error: nothing
// can be mounted over a link, and what it points at (a hooks directory
// elsewhere in the workspace) would stay writable.
func ProtectedIn(dir string, extra []string) ([]string, error) {
	return protectedInLimit(dir, extra, MaxProtectedWalk, false)
}

// ProtectedNamesIn is ProtectedIn, except that a symbolic link at a
// protected name or at ".git" is listed (not followed) instead of being
// an error: what a command may have made there, for the launcher to
// remove.
func ProtectedNamesIn(dir string, extra []string) ([]string, error) {
	return protectedInLimit(dir, extra, MaxProtectedWalk, true)
}

func protectedInLimit(dir string, extra []string, limit int, links bool) ([]string, error) {
	var out []string
	seen := 0
	var walk func(path string, inGit bool, depth int) error
	walk = func(path string, inGit bool, depth int) error {
		if depth > maxRemoveDepth {
			return fmt.Errorf("fs: %s: deeper than %d levels", path, maxRemoveDepth)
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return fmt.Errorf("fs: looking for protected paths: %w", err)
		}
		for _, e := range ents {
			if seen++; seen > limit {
				return fmt.Errorf("fs: the workspace %s has more than %d entries to look through for protected paths", dir, limit)
			}
			p := filepath.Join(path, e.Name())
			t := e.Type()
			named := slices.Contains(protectedNames, e.Name()) || inGit && slices.Contains(gitProtected, e.Name()) || e.Name() == gitDir && !t.IsDir()
			if t&os.ModeSymlink != 0 {
				if (named || e.Name() == gitDir) && links {
					out = append(out, p)
					continue
				}
				if named || e.Name() == gitDir {
					return fmt.Errorf("fs: %s is a symbolic link at a protected name: it cannot be made read-only for a command (make it a real directory or file)", p)
				}
				continue
			}
			if named {
				if t.IsDir() || t.IsRegular() {
					out = append(out, p)
				}
				continue
			}
			// A repository's objects are many and hold nothing protected.
			if !t.IsDir() || inGit && e.Name() == "objects" {
				continue
			}
			if err := walk(p, inGit || e.Name() == gitDir, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(dir, false, 0); err != nil {
		return nil, err
	}
	for _, x := range extra {
		if !beneathPath(x, dir) {
			continue
		}
		if st, err := os.Lstat(x); err == nil && (st.IsDir() || st.Mode().IsRegular() || links && st.Mode()&os.ModeSymlink != 0) &&
			!slices.ContainsFunc(out, func(o string) bool { return o == x || beneathPath(x, o) }) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	// Drop what lies beneath another: the outer mount covers it.
	var kept []string
	for _, p := range out {
		if !slices.ContainsFunc(kept, func(k string) bool { return k == p || beneathPath(p, k) }) {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// beneathPath reports whether p lies strictly beneath dir.
func beneathPath(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "../")
}
