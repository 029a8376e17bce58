package launcher

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pinfold/pinfold/internal/reach"
	"github.com/pinfold/pinfold/policy"
)

// MaskPlan is one of the launcher's own files (or directories) that
// stage 2 covers after the trees are mounted: a file with the host's
// /dev/null mounted read-only and nodev over it, so that opening it fails
// (EACCES) whatever the command line says; a directory with an empty
// read-only tmpfs. Landlock cannot take one file out of a tree the
// policy grants; a mount over it can.
type MaskPlan struct {
	Path string
	Dir  bool
}

// MaxMasks bounds Request.Mask (stage 2 makes one mount for each).
const MaxMasks = 64

// maskList decides which of own (the launcher's own files, absolute)
// stage 2 covers: each as its links resolve now (a certificate's
// "live" link names a new file after a renewal), when it exists and the
// agent could reach it, that is, a files list grants a path at or above
// it and the sandbox shows it there (not beneath the private /tmp,
// /dev/shm or a hidden socket directory, unless a tree brings it back).
// What does not exist is left alone: there is nothing to read, and each
// command of the bash component is a launch of its own, planned afresh.
// A regular file whose directory holds nothing but the launcher's own
// files is covered by covering that directory (CoverDir): a file
// replaced by rename (a vault, a token store) keeps no mount on it, but
// a rename inside a covered directory does not show through its cover.
// It refuses what it cannot cover safely: a path it cannot look at
// (unless the agent could not either: reach.Out), and
// a directory to cover that holds the workspace or a files list's path
// (the agent would start, or a Landlock rule would be opened, inside the
// empty cover).
func maskList(p *policy.Policy, trees []TreePlan, hide, own []string) ([]MaskPlan, error) {
	if len(own) > MaxMasks {
		return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("%d of the launcher's own files to cover, more than the %d one launch mounts", len(own), MaxMasks)}
	}
	granted := slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec)
	covered := append([]string{privateTmp, "/dev/shm"}, hide...)
	var out []MaskPlan
	for _, o := range own {
		real, err := filepath.EvalSymlinks(o)
		if errors.Is(err, fs.ErrNotExist) || reach.Out(o, err) {
			continue
		}
		if err != nil {
			return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("the launcher's own file %s cannot be looked at (%v), so it could not be covered", o, err)}
		}
		rp := policy.Path(real)
		if !slices.ContainsFunc(granted, func(g policy.Path) bool { return g.Contains(rp) }) {
			continue // no rule reaches it: Landlock refuses it already
		}
		hidden := slices.ContainsFunc(covered, func(c string) bool { return policy.Path(c).Contains(rp) })
		if hidden && !slices.ContainsFunc(trees, func(t TreePlan) bool { return policy.Path(t.Path).Contains(rp) }) {
			continue // the sandbox shows nothing there
		}
		st, err := os.Lstat(real)
		if err != nil {
			return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("the launcher's own file %s cannot be looked at (%v), so it could not be covered", real, err)}
		}
		m := MaskPlan{Path: real, Dir: st.IsDir()}
		if d, ok := CoverDir(p, real, own); ok && st.Mode().IsRegular() {
			m = MaskPlan{Path: d, Dir: true}
		}
		if slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	// Outermost first, and nothing beneath a covered directory: it is
	// gone from the sandbox, and stage 2 would not find it to cover it.
	slices.SortStableFunc(out, func(a, b MaskPlan) int { return len(a.Path) - len(b.Path) })
	var kept []MaskPlan
	for _, m := range out {
		if !slices.ContainsFunc(kept, func(k MaskPlan) bool { return k.Dir && policy.Path(k.Path).Contains(policy.Path(m.Path)) }) {
			kept = append(kept, m)
		}
	}
	for _, m := range kept {
		if !m.Dir {
			continue
		}
		for _, l := range append([]policy.Path{p.Workspace.Path}, granted...) {
			if policy.Path(m.Path).Contains(l) && policy.Path(m.Path) != l {
				return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("%s lies in the launcher's own directory %s, which the agent must not read: it would be hidden", l, m.Path),
					Hint: "move it out of that directory, or list another path"}
			}
			if l == p.Workspace.Path && policy.Path(m.Path) == l {
				return nil, &RefusedError{Boundary: "mounts", Detail: fmt.Sprintf("the workspace %s is the launcher's own directory, which the agent must not read", l)}
			}
		}
	}
	return kept, nil
}

// CoverDir is the directory holding file (absolute, links resolved) when
// a stage 2 cover of that directory keeps file out however it is
// replaced: everything in it is one of own (as named or with its
// directory's links resolved) or a temporary file privfile.Replace
// writes beside one of them (".NAME-digits"), and it holds neither the
// workspace nor a path a files list names (those would be hidden, or a
// rule opened in the empty cover; a list naming the directory itself is
// covered with it). A file beside anything else keeps a cover of its
// own, which a replacement by rename undoes for a command still running.
func CoverDir(p *policy.Policy, file string, own []string) (string, bool) {
	dir := filepath.Dir(file)
	if dir == "/" {
		return "", false
	}
	names := map[string]bool{}
	for _, o := range own {
		d := filepath.Dir(o)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if d == dir {
			names[filepath.Base(o)] = true
		}
	}
	if !names[filepath.Base(file)] {
		return "", false
	}
	// Read in batches: a directory such as /etc is given up at its first
	// name that is not the launcher's, not listed whole.
	f, err := os.Open(dir)
	if err != nil {
		return "", false
	}
	defer f.Close()
	for {
		batch, err := f.Readdirnames(64)
		for _, n := range batch {
			if !names[n] && !isReplaceTemp(n, names) {
				return "", false
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false
		}
	}
	dp := policy.Path(dir)
	for _, l := range slices.Concat([]policy.Path{p.Workspace.Path}, p.Files.Read, p.Files.Write, p.Files.Exec) {
		if dp.Contains(l) && (dp != l || l == p.Workspace.Path) {
			return "", false
		}
	}
	return dir, true
}

// isReplaceTemp: name is a temporary file privfile.Replace makes for one
// of names while it writes it (".NAME-" and digits).
func isReplaceTemp(name string, names map[string]bool) bool {
	for n := range names {
		if rest, ok := strings.CutPrefix(name, "."+n+"-"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
