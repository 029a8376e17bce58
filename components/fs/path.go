package fs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxPath bounds a workspace-relative path, in bytes (PATH_MAX).
const MaxPath = 4096

// checkPath validates a workspace-relative path: non-empty, at most
// MaxPath bytes, valid UTF-8, no NUL, relative, already clean (so no
// "a//b", "./a", "a/" or "a/./b"), and no ".." component. "." is the
// workspace itself. Nothing else is done to the string: it is handed to
// openat2 as it is, never joined to a host path.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("the path is empty")
	case len(p) > MaxPath:
		return fmt.Errorf("the path is longer than %d bytes", MaxPath)
	case !utf8.ValidString(p):
		return fmt.Errorf("the path is not valid UTF-8")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("the path contains a NUL byte")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return fmt.Errorf("the path is absolute; paths are relative to the workspace")
	case filepath.Clean(p) != p:
		return fmt.Errorf("the path is not clean (want %q)", filepath.Clean(p))
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return fmt.Errorf("the path has a \"..\" component")
		}
	}
	return nil
}

// components splits a checked path; "." has none.
func components(p string) []string {
	if p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// splitParent splits a checked path other than "." into its parent
// directory ("." for a top-level name) and its final component.
func splitParent(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ".", p
	}
	return p[:i], p[i+1:]
}

// Built-in protected names. They match whole path components at any
// depth (a nested project has its own .vscode and its own .git), case
// sensitively unless the directory is case-insensitive (see casefold).
var (
	// Protected wherever they appear, with everything beneath them.
	protectedNames = []string{
		".ssh", ".vscode", ".mcp.json",
		// Shell start-up files: sh, bash, zsh, csh/tcsh, ksh.
		".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
		// Debian's and Ubuntu's stock .bashrc sources it.
		".bash_aliases",
		".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
		".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc",
		// The person's git configuration (when the workspace is a home):
		// core.fsmonitor, core.pager and aliases run commands.
		".gitconfig",
	}
	// Protected beneath a ".git" component, at any depth below it: the
	// repository's hooks and config, those of submodules
	// (.git/modules/NAME/hooks), config.worktree, which git reads as
	// config when extensions.worktreeConfig is set (also
	// .git/worktrees/NAME/config.worktree), and commondir, which would
	// point git at another directory's config and hooks.
	gitProtected = []string{"hooks", "config", "config.worktree", "commondir"}
)

// A directory is a git directory by what it holds, whatever its name, as
// git's own test (is_git_directory) has it: HEAD with objects and refs
// (a bare repository, NAME.git or any other: git --git-dir, git -C or a
// shell prompt's git status in it reads its config and runs its hooks),
// or HEAD with commondir (a worktree's, which takes its objects, refs,
// config and hooks from the directory commondir names). A directory with
// objects and refs alone is counted too: a commondir may name it. Each
// set is protected like a .git, and making the last name of a set beside
// the others (a refs beside objects) is protected, or a bare repository
// could be made hooks first.
var gitLayouts = [][]string{{"objects", "refs"}, {"HEAD", "commondir"}}

// ProtectedNames are the names protected wherever they appear as a path
// component, and GitProtectedNames those protected beneath a .git
// component (.config/git is protected too): for the bash analyzer, which
// refuses commands naming them as fs refuses requests.
func ProtectedNames() []string    { return slices.Clone(protectedNames) }
func GitProtectedNames() []string { return slices.Clone(gitProtected) }

const (
	gitDir = ".git"
	// xdgDir/xdgGit: git's XDG configuration directory, .config/git.
	xdgDir = ".config"
	xdgGit = "git"
)

// protection is what protects a path: the protected path it is or lies
// beneath, as a string for the denial's detail.
type protection struct {
	path string
	// layout, when set, is the git directory known by what it holds
	// (gitLayouts) that protects path: said with it, since nothing in
	// the path's names tells why.
	layout string
}

// matcher decides which paths are protected: the built-in names and the
// bootstrap's list, each entry of which is a workspace-relative path
// protected with everything beneath it, and what was added to it since
// (add: what the git configs came to name).
type matcher struct {
	mu    sync.RWMutex
	extra [][]string      // the bootstrap's paths and those added, split
	has   map[string]bool // extra's, as paths: add takes each once
}

// add protects the workspace-relative paths ps as the bootstrap's are,
// each once; it drops none already protected. A path that is not one fs
// takes (checked as the bootstrap's) is returned in bad, not added.
func (m *matcher) add(ps []string) (bad []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.has == nil {
		m.has = map[string]bool{}
	}
	for _, p := range ps {
		if err := checkPath(p); err != nil || p == "." {
			bad = append(bad, p)
			continue
		}
		if !m.has[p] {
			m.has[p] = true
			m.extra = append(m.extra, components(p))
		}
	}
	return bad
}

func newMatcher(extra []string) (*matcher, error) {
	m := &matcher{has: map[string]bool{}}
	for _, p := range extra {
		if err := checkPath(p); err != nil {
			return nil, fmt.Errorf("fs: protected path %q: %v", p, err)
		}
		if p == "." {
			return nil, fmt.Errorf("fs: protected path \".\" would protect the whole workspace; leave fs out instead")
		}
		m.extra = append(m.extra, components(p))
		m.has[p] = true
	}
	return m, nil
}

// eq compares two names, exactly or (fold) as a case-insensitive
// directory does.
func eq(a, b string, fold bool) bool {
	if fold {
		return foldEqual(a, b)
	}
	return a == b
}

// foldEqual reports whether a case-insensitive directory (ext4, f2fs or
// tmpfs casefold) takes a and b for the same name. The kernel compares
// names in NFD with the full Unicode case folding (CaseFolding.txt's C
// and F mappings), so "con\ufb01g" (a ligature) is "config" and ".\u00dfh"
// is ".ssh", which strings.EqualFold (simple folding) misses; kernels
// before 6.14 also dropped default-ignorable code points (".s\u200dsh"
// is ".ssh" there). Dropping them always errs towards a match.
func foldEqual(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return strings.EqualFold(a, b)
	}
	return foldKey(a) == foldKey(b)
}

func foldKey(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector) {
			return -1
		}
		return r
	}, s)
	return norm.NFD.String(cases.Fold().String(norm.NFD.String(s)))
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// bareName reports whether c is NAME.git (not .git itself), a bare
// repository's usual name: its hooks, config, config.worktree and
// commondir are protected before it holds a repository, since git init
// --bare NAME.git keeps the hooks and config it finds there. Only those:
// a work tree may be cloned into NAME.git too. Once it holds one (see
// gitLayouts) everything in it is.
func bareName(c string, fold bool) bool {
	if fold {
		c = foldKey(c)
	}
	return len(c) > len(gitDir) && strings.HasSuffix(c, gitDir)
}

// protected reports whether the path with components cs is, or lies
// beneath, a protected path. fold compares case-insensitively. A lock
// file beneath a .git is not one (protectedAs says when it is).
func (m *matcher) protected(cs []string, fold bool) (protection, bool) {
	return m.protectedAs(cs, fold, false)
}

// protectedAs is protected, and with locks a lock file beneath a .git
// too: for a change that would make or replace one (gitBeneath).
func (m *matcher) protectedAs(cs []string, fold, locks bool) (protection, bool) {
	for i, c := range cs {
		for _, n := range protectedNames {
			if eq(c, n, fold) {
				return protection{path: strings.Join(cs[:i+1], "/")}, true
			}
		}
		if eq(c, xdgDir, fold) && i+1 < len(cs) && eq(cs[i+1], xdgGit, fold) {
			return protection{path: strings.Join(cs[:i+2], "/")}, true
		}
		if eq(c, gitDir, fold) {
			if pr, ok := gitBeneath(cs, i+1, fold, locks); ok {
				return pr, true
			}
		}
		if bareName(c, fold) && i+1 < len(cs) && slices.ContainsFunc(gitProtected, func(n string) bool { return eq(cs[i+1], n, fold) }) {
			return protection{path: strings.Join(cs[:i+2], "/")}, true
		}
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, e := range m.extra {
		if len(cs) >= len(e) && prefix(cs, e, fold) {
			return protection{path: strings.Join(cs[:len(e)], "/")}, true
		}
	}
	return protection{}, false
}

// gitBeneath reports whether the path with components cs is protected
// as lying beneath the git directory cs[:g]: a hooks, config,
// config.worktree or commondir at any depth below it, or anything else
// there but a lock file. The rest of a git directory is state git
// resumes from (a rebase's todo list runs its exec lines on git rebase
// --continue), as bash holds it too. A lock file (NAME.lock) is
// protected only with locks, for a change that makes or replaces one:
// removing one (index.lock left by a git that died) lets git work again,
// but git renames a lock it holds onto the file it locks (git commit -a
// holds index.lock while the person writes the message), so a lock
// replaced meanwhile would become that file, unasked.
func gitBeneath(cs []string, g int, fold, locks bool) (protection, bool) {
	for j := g; j < len(cs); j++ {
		for _, n := range gitProtected {
			if eq(cs[j], n, fold) {
				return protection{path: strings.Join(cs[:j+1], "/")}, true
			}
		}
	}
	if g < len(cs) && (locks || !strings.HasSuffix(cs[len(cs)-1], ".lock")) {
		return protection{path: strings.Join(cs[:g+1], "/")}, true
	}
	return protection{}, false
}

// ancestor reports whether something beneath the path with components
// cs could be protected because of cs itself: cs has a ".git" component
// (a "hooks" beneath it would be protected), ends in ".config" (its
// "git") or in a NAME.git, or is a proper prefix of one of the
// bootstrap's paths. Moving such a directory, or moving
// something onto its name, would move protected files or make
// unprotected ones protected; a rename of either end is refused.
func (m *matcher) ancestor(cs []string, fold bool) (protection, bool) {
	for i, c := range cs {
		if eq(c, gitDir, fold) {
			return protection{path: strings.Join(cs[:i+1], "/")}, true
		}
	}
	if len(cs) > 0 && eq(cs[len(cs)-1], xdgDir, fold) {
		return protection{path: strings.Join(append(slices.Clip(cs), xdgGit), "/")}, true
	}
	if len(cs) > 0 && bareName(cs[len(cs)-1], fold) {
		return protection{path: strings.Join(cs, "/")}, true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, e := range m.extra {
		if len(cs) > 0 && len(cs) < len(e) && prefix(e, cs, fold) {
			return protection{path: strings.Join(e, "/")}, true
		}
	}
	return protection{}, false
}

// prefix reports whether p is a prefix of cs.
func prefix(cs, p []string, fold bool) bool {
	for i := range p {
		if !eq(cs[i], p[i], fold) {
			return false
		}
	}
	return true
}
