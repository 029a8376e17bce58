package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckLive checks the policy against the file system as it is now: the
// workspace and every listed path exist, and no component of the workspace
// or a write path is a symlink or otherwise resolves elsewhere (SR-02). It
// returns an *Error, or nil. The launcher runs it when it loads the
// pinned policy; what changes after that is stage 2's to catch: it opens
// every tree and rule path with no symlink followed (RESOLVE_NO_SYMLINKS)
// and refuses one that is no longer what was checked (SR-23).
func (p *Policy) CheckLive() error {
	var ps []Problem
	if p.Workspace.Path != "" {
		if pr, ok := walkNoSymlink("workspace.path", "the workspace", p.Workspace.Path, true, whyWrite); !ok {
			ps = append(ps, pr)
		}
	}
	for _, w := range p.Files.Write {
		if pr, ok := walkNoSymlink("files.write", "write path", w, false, whyWrite); !ok {
			ps = append(ps, pr)
		}
	}
	// Read and exec paths may not pass through symlinks either: a rule
	// binds the real path, so "/lib" would read as one thing and bind
	// another (on merged-/usr systems, /usr/lib), and an exec path linked
	// into a write path would undo SR-01. It also leaves stage 2 nothing to
	// follow when it opens the paths again.
	for _, l := range []struct {
		key, what string
		paths     []Path
	}{{"files.read", "read path", p.Files.Read}, {"files.exec", "exec path", p.Files.Exec}} {
		for _, r := range l.paths {
			if pr, ok := walkNoSymlink(l.key, l.what, r, false, "the rule would bind the link's target, not the path the policy names"); !ok {
				if pr.Risk == "SR-02" {
					pr.Risk = "SR-12"
					if real, err := filepath.EvalSymlinks(string(r)); err == nil {
						pr.Hint = fmt.Sprintf("name the real path: %q", real)
					}
				}
				ps = append(ps, pr)
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return &Error{File: p.name(), Problems: p.place(ps)}
}

const whyWrite = "writes would land somewhere the policy does not name"

// walkNoSymlink checks each component of path with lstat, so that a symlink
// anywhere in it — planted by the agent in a previous run, say — is found
// and named rather than followed.
func walkNoSymlink(key, what string, path Path, wantDir bool, why string) (Problem, bool) {
	pr := Problem{Key: key, Check: "resolves-elsewhere", Risk: "SR-02", elem: -1}
	prefix := ""
	parts := strings.Split(strings.TrimPrefix(string(path), "/"), "/")
	for i, part := range parts {
		if part == "" {
			break // the path is "/"
		}
		prefix += "/" + part
		st, err := os.Lstat(prefix)
		if err != nil {
			pr.Check, pr.Risk = "path-exists", ""
			pr.Msg = fmt.Sprintf("%s %q cannot be used: %s", what, path, errText(err))
			pr.Hint = "create it before launching: rules attach to existing files"
			return pr, false
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(prefix)
			at := ""
			if prefix != string(path) {
				at = fmt.Sprintf(" at %q", prefix)
			}
			pr.Msg = fmt.Sprintf("%s %q passes through a symlink%s (-> %q): %s", what, path, at, target, why)
			pr.Hint = "name the real path, and check who planted the link"
			return pr, false
		}
		if i == len(parts)-1 && wantDir && !st.IsDir() {
			pr.Check, pr.Risk = "workspace-is-dir", ""
			pr.Msg = fmt.Sprintf("%s %q is not a directory", what, path)
			return pr, false
		}
	}
	// Belt and braces: the resolved path must be the path itself.
	if real, err := filepath.EvalSymlinks(string(path)); err != nil || real != string(path) {
		pr.Msg = fmt.Sprintf("%s %q resolves elsewhere (%q)", what, path, real)
		return pr, false
	}
	return pr, true
}

func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (p *Policy) name() string {
	if p.src == nil {
		return "policy"
	}
	return p.src.name
}

func (p *Policy) place(ps []Problem) []Problem {
	if p.src == nil {
		sortProblems(ps)
		return ps
	}
	return p.src.loc.place(ps)
}
