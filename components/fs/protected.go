package fs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxProtectedWalk bounds ProtectedIn's walk of a workspace.
const MaxProtectedWalk = 200_000

// ProtectedIn returns the protected paths that exist in the workspace dir
// (absolute): the built-in names at any depth, the git files beneath any
// ".git" or other git directory (gitLayouts: a bare repository), and
// those of extra (absolute paths, the policy's) that exist beneath dir.
// It is how the launcher finds what to mount read-only over a bash
// worker's writable workspace, so it follows no symbolic link, does not
// descend into what it returns, and fails rather than answer from part
// of a tree larger than MaxProtectedWalk entries. A file named ".git" (a
// worktree's or submodule's pointer to its repository) is protected too.
// A symbolic link at a protected name, or at ".git", is an error: nothing
// can be mounted over a link, and what it points at (a hooks directory
// elsewhere in the workspace) would stay writable. Names match as fs
// matches them: folded in a directory that folds case (a .GIT/hooks or
// a .Bashrc is git's and the shell's there).
func ProtectedIn(dir string, extra []string) ([]string, error) {
	mounts, _, err := ProtectedBoth(dir, extra)
	return mounts, err
}

// ProtectedNamesIn lists every protected name in dir, of any type: a
// symbolic link, a FIFO or a socket at a protected name (or at ".git") is
// listed, not followed, where ProtectedIn would refuse or skip it. It is
// what a command may have made, for the launcher to remove, so it does
// not stop at what it cannot look through: a subtree too deep or
// unreadable is skipped and the walk ends after MaxProtectedWalk entries,
// and the error, when not nil, says what was not looked at; the paths
// found are returned either way.
func ProtectedNamesIn(dir string, extra []string) ([]string, error) {
	names, _, problem := scanProtected(dir, extra, 0)
	return outermost(pathsOf(names)), problem
}

// ProtectedBoth is ProtectedIn and ProtectedNamesIn from one walk; any
// part of the tree not looked through is an error.
func ProtectedBoth(dir string, extra []string) (mounts, names []string, err error) {
	return protectedBothLimit(dir, extra, MaxProtectedWalk)
}

func protectedBothLimit(dir string, extra []string, limit int) (mounts, names []string, err error) {
	found, _, problem := scanProtected(dir, extra, limit)
	if problem != nil {
		return nil, nil, problem
	}
	return mountable(found)
}

// ProtectedNow is ProtectedBoth with what the git configs that apply to
// the repositories found name beneath dir (GitConfigNamedIn's paths,
// from the same walk) protected as extra is: a command's worker has them
// read-only, however the configs changed since the session started.
// named is those paths, whether they exist or not, for the caller to
// keep protecting; notes say what could not be read.
func ProtectedNow(dir string, extra []string) (mounts, names, named, notes []string, err error) {
	// The configs are found by the protected names alone, as
	// GitConfigNamedIn finds them: an extra path named hooks or config
	// is no repository's.
	found, _, problem := scanProtected(dir, nil, MaxProtectedWalk)
	if problem != nil {
		return nil, nil, nil, nil, problem
	}
	gn, notes := gitConfigNamed(found, []string{dir}, os.Getenv("HOME"))
	for _, n := range gn {
		if beneathPath(n.path, dir) {
			named = append(named, n.path)
		}
	}
	linked, linkNotes := linkedNames(slices.Concat(pathsOf(found), extra, named), []string{dir}, MaxProtectedWalk)
	named, notes = append(named, linked...), append(notes, linkNotes...)
	mounts, names, err = mountable(withExtra(found, dir, slices.Concat(extra, named)))
	return mounts, names, named, notes, err
}

// mountable is what of found can be mounted read-only (mounts) and every
// name found (names); a name that cannot be is an error.
func mountable(found []protectedFound) (mounts, names []string, err error) {
	var keep []string
	for _, f := range found {
		switch {
		case f.mode&os.ModeSymlink != 0:
			return nil, nil, fmt.Errorf("fs: %s is a symbolic link at a protected name: it cannot be made read-only for a command (make it a real directory or file)", shortPath(f.path))
		case f.mode.IsRegular():
			// A second name would let a command change it (the read-only
			// mount is over this name only), with no new inode to see.
			if st, err := os.Lstat(f.path); err == nil {
				if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
					return nil, nil, fmt.Errorf("fs: %s has %d names (hard links): a command could change it through another, so it cannot be protected (give it one name: copy it over itself)", shortPath(f.path), sys.Nlink)
				}
			}
			keep = append(keep, f.path)
		case f.mode.IsDir():
			keep = append(keep, f.path)
		}
	}
	return outermost(keep), outermost(pathsOf(found)), nil
}

// ProtectedMounts is what a wrapper-mode launch mounts read-only over
// its write paths, dirs: ProtectedIn's paths beneath each directory of
// dirs, looked for through at most limit entries in all and kept to the
// most paths (the shallowest repositories' and names' first: rank).
// Where ProtectedIn fails, it goes on and says what it could not cover
// (uncovered): a symbolic link, a FIFO, a socket or a hard-linked file
// at a protected name, a part of a tree not looked through, the paths
// past most. An agent runs for a long time with the
// whole tree writable, so an unprotected name is worth saying, and a
// launch the person asked for is not refused for a repository's layout.
// names is every protected name found, of any type (ProtectedMade's
// before). What the git configs of the repositories found, of the
// repository a write path lies in, and the person's own name inside dirs
// (gitConfigNamed: a core.hooksPath, an included file, a program) is
// mounted too, ranked after the names themselves, or said when it cannot
// be (it does not exist yet, it is a link, the config was not read).
func ProtectedMounts(dirs []string, limit, most int) (mounts, names, uncovered []string) {
	found, uncovered := scanDirs(dirs, limit)
	var keep []string
	for _, f := range found {
		switch {
		case f.mode&os.ModeSymlink != 0:
			uncovered = append(uncovered, shortPath(f.path)+" (a symbolic link at a protected name: nothing can be mounted over it)")
		case f.mode.IsRegular():
			if st, err := os.Lstat(f.path); err == nil {
				if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
					uncovered = append(uncovered, fmt.Sprintf("%s (%d names: writable by another)", shortPath(f.path), sys.Nlink))
					continue
				}
			}
			keep = append(keep, f.path)
		case f.mode.IsDir():
			keep = append(keep, f.path)
		default:
			// A FIFO or a socket (a previous agent's): nothing is mounted
			// over it, and the agent may put a directory in its place,
			// which the end-of-launch walk counts as there before.
			uncovered = append(uncovered, shortPath(f.path)+" (a FIFO or socket at a protected name: nothing is mounted over it)")
		}
	}
	// What the repositories' configs name (a core.hooksPath, a
	// core.fsmonitor program, an included file), ranked after the
	// protected names themselves.
	named, namedThere, notes, notRead := gitConfigMounts(found, dirs)
	uncovered = append(append(uncovered, notRead...), notes...)
	keep = append(keep, named...)
	slices.Sort(keep)
	keep = outermost(keep)
	isNamed := make(map[string]bool, len(named))
	for _, p := range named {
		isNamed[p] = true
	}
	ranks := make(map[string]rank, len(keep)) // each once: keep may be long
	for _, p := range keep {
		ranks[p] = mountRank(dirs, p)
		if isNamed[p] {
			ranks[p] = rank{owner: ranks[p].owner, class: 2, depth: ranks[p].depth}
		}
	}
	slices.SortStableFunc(keep, func(a, b string) int { return ranks[a].compare(ranks[b]) })
	// A protected directory mounted read-only keeps its names, not what a
	// link in it leads to nor a file's other names: a hook that is a link
	// to the project's tools/pre-commit runs what the agent writes there.
	// A link to a file in the write paths by a path with no other link
	// has that file mounted read-only after the directory (the
	// directories between pinned, so no step of the path can change);
	// the rest is said.
	budget := limit
	var expanded []string
	for _, p := range keep {
		expanded = append(expanded, p)
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			targets, notes := linkedFrom(p, dirs, &budget)
			expanded = append(expanded, targets...)
			uncovered = append(uncovered, notes...)
		}
	}
	keep = expanded
	// Each directory between a write path and a read-only path is
	// mounted too (pinned on itself, so it cannot be renamed), and counts.
	mounts = nil
	pinned := map[string]bool{}
	for i, p := range keep {
		if slices.ContainsFunc(mounts, func(m string) bool { return m == p || beneathPath(p, m) }) {
			continue // a link's target mounted already, or inside a mount
		}
		var more []string
		if i := slices.IndexFunc(dirs, func(d string) bool { return beneathPath(p, d) }); i >= 0 {
			for d := filepath.Dir(p); d != dirs[i] && beneathPath(d, dirs[i]); d = filepath.Dir(d) {
				if !pinned[d] && !slices.Contains(more, d) {
					more = append(more, d)
				}
			}
		}
		if len(mounts)+len(pinned)+1+len(more) > most {
			uncovered = append(uncovered, fmt.Sprintf("%d protected paths past the %d mounts one launch makes inside the write paths, from %s", len(keep)-i, most, shortPath(p)))
			break
		}
		mounts = append(mounts, p)
		for _, d := range more {
			pinned[d] = true
		}
	}
	return mounts, append(pathsOf(found), namedThere...), uncovered
}

// gitConfigMounts sorts what the git configs that apply to found's
// repositories name (gitConfigNamed) inside the write paths dirs: what
// can be mounted read-only (a real directory for core.hooksPath, a real
// file with one name for the rest), every one of them that exists
// (there), what cannot be covered, with why (uncovered), and the configs
// not read (notRead). A path outside dirs is not the agent's to change,
// and a directory named as a program is none git can run.
func gitConfigMounts(found []protectedFound, dirs []string) (mounts, there, uncovered, notRead []string) {
	named, notRead := gitConfigNamed(found, dirs, os.Getenv("HOME"))
	for _, n := range named {
		if !slices.ContainsFunc(dirs, func(d string) bool { return n.path == d || beneathPath(n.path, d) || beneathPath(d, n.path) }) {
			continue
		}
		st, err := os.Lstat(n.path)
		if err == nil && st.IsDir() && !n.dir {
			continue // no program git can run (an init.templateDir)
		}
		if n.arg && errors.Is(err, os.ErrNotExist) {
			// A word given to a program (an alias's git log
			// origin/main..x) is mostly none git runs: one not there
			// is not said, lest the summary fill with them; one made
			// during the launch is (ProtectedMade's there).
			continue
		}
		// A write path or one above it is no name the agent made: as
		// ProtectedMade's before, it would hide all beneath it.
		if err == nil && slices.ContainsFunc(dirs, func(d string) bool { return beneathPath(n.path, d) }) {
			there = append(there, n.path)
		}
		if why := notMountable(n.path, n.dir, dirs); why != "" {
			uncovered = append(uncovered, fmt.Sprintf("%s names %s, which %s", n.why, shortPath(n.path), why))
			continue
		}
		mounts = append(mounts, n.path)
	}
	// Each is said on the summary line: a config naming thousands (a
	// previous agent's) is said in bounded length.
	if len(uncovered) > maxNamedSaid {
		uncovered = append(uncovered[:maxNamedSaid], fmt.Sprintf("%d more paths git configs name that cannot be made read-only", len(uncovered)-maxNamedSaid))
	}
	return mounts, there, uncovered, notRead
}

// GitConfigNamedIn is, for components mode, what the git configs that
// apply to the repositories in dirs (found as ProtectedMounts finds them,
// within limit entries), to the repository each lies in, and the
// person's own name strictly inside dirs, whether it exists yet or not:
// protected as the policy's files.protected is, fs asks before changing
// one, a command's worker has it read-only, and one a command makes is
// moved aside. notRead says what could not be looked through or read.
//
// It adds what links at those paths, and at the protected names found,
// or inside them, lead to in dirs (linkedNames): a hook linked to the
// project's scripts/pre-commit, a core.hooksPath reached through a
// linked directory.
func GitConfigNamedIn(dirs []string, limit int) (paths, notRead []string) {
	paths, notRead, _ = GitConfigWatched(dirs, limit)
	return paths, notRead
}

// GitConfigWatched is GitConfigNamedIn with the files it read or looked
// for (absolute, existing or not: a config, an included file, a .git
// file, each write path's own .git/config), for the launcher to watch:
// a change of one, or one made, can name new paths (package
// session's configWatch).
func GitConfigWatched(dirs []string, limit int) (paths, notRead, files []string) {
	found, notRead := scanDirs(dirs, limit)
	named, notes, files := gitConfigRead(found, dirs, os.Getenv("HOME"))
	for _, n := range named {
		if slices.ContainsFunc(dirs, func(d string) bool { return beneathPath(n.path, d) }) &&
			!slices.ContainsFunc(dirs, func(d string) bool { return beneathPath(d, n.path) }) {
			paths = append(paths, n.path)
		}
	}
	linked, linkNotes := linkedNames(slices.Concat(pathsOf(found), paths), dirs, limit)
	return append(paths, linked...), slices.Concat(notRead, notes, linkNotes), files
}

// linkedNames is, for components mode, what the person's programs reach
// in dirs through links from the protected paths ps: where a path is
// reached through a linked directory, the path it resolves to; and for
// each link at a path or inside a protected directory (at most limit
// entries looked through in all), its destination as written and as
// resolved. git runs a hook linked to scripts/pre-commit, and fs and the
// commands' workers protect by name, so the destination is protected
// too; as written, the links on its way are its ancestors, which fs
// does not change without asking either. What could not be looked
// through is said (notes).
func linkedNames(ps, dirs []string, limit int) (more, notes []string) {
	inDirs := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return beneathPath(p, d) })
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p] = true
	}
	add := func(p string) {
		if !seen[p] && inDirs(p) {
			seen[p] = true
			more = append(more, p)
		}
	}
	addLink := func(link string) {
		dest, err := os.Readlink(link)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s (a link that cannot be read: %v)", shortPath(link), unwrapPath(err)))
			return
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(link), dest)
		}
		add(dest)
		add(resolvedPath(dest))
	}
	left := limit
	for _, p := range ps {
		real := resolvedPath(p)
		add(real)
		st, err := os.Lstat(real)
		switch {
		case !inDirs(p) && !inDirs(real):
			continue // the launcher's own files, outside
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			addLink(real) // a link that leads nowhere yet, or in a loop
			continue
		case !st.IsDir():
			continue
		}
		filepath.WalkDir(real, func(q string, d os.DirEntry, err error) error {
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s (not looked through for links: %v)", shortPath(q), unwrapPath(err)))
				return nil
			}
			if left--; left < 0 {
				notes = append(notes, fmt.Sprintf("%s (not looked through for links: past the walk's bound)", shortPath(real)))
				return filepath.SkipAll
			}
			if d.Type()&os.ModeSymlink != 0 {
				addLink(q)
			}
			return nil
		})
		if left < 0 {
			break
		}
	}
	return more, notes
}

// resolvedPath is p with the links on the way to it followed as far as
// they lead to something that exists, and the rest of p after that.
func resolvedPath(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}

// maxNamedSaid bounds the paths git configs name that ProtectedMounts
// says one by one.
const maxNamedSaid = 20

// notMountable says why p cannot be mounted read-only over the write
// paths dirs as a directory (dir) or a file by its own path: "" when it
// can. A step of the path that is a link could be changed by the agent
// to lead elsewhere, and a file's other name would stay writable.
func notMountable(p string, dir bool, dirs []string) string {
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "does not exist: the agent may make it"
	case err != nil:
		return fmt.Sprintf("cannot be looked at (%v)", unwrapPath(err))
	case slices.ContainsFunc(dirs, func(d string) bool { return d == p || beneathPath(d, p) }):
		return "is a write path or holds one: it cannot be made read-only inside them"
	case st.Mode()&os.ModeSymlink != 0:
		return "is a symbolic link: nothing can be mounted over it"
	}
	if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
		return "is reached through a symbolic link the agent may change"
	}
	switch {
	case dir && !st.IsDir():
		return "is not a directory"
	case !dir && !st.Mode().IsRegular():
		return "is not a regular file"
	case !dir && nlink(st) > 1:
		return fmt.Sprintf("has %d names: writable by another", nlink(st))
	}
	return ""
}

// linkedFrom looks through the protected directory top (at most budget
// entries, shared) for what its read-only mount would not hold: the
// files its links lead to in the write paths dirs (targets, to mount as
// well) and what cannot be made read-only that way (notes).
func linkedFrom(top string, dirs []string, budget *int) (targets, notes []string) {
	inWrite := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return p == d || beneathPath(p, d) })
	}
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s (not looked through for links: %v)", shortPath(p), unwrapPath(err)))
			return nil
		}
		if *budget--; *budget < 0 {
			notes = append(notes, fmt.Sprintf("%s (not looked through for links: past the walk's bound)", shortPath(top)))
			return filepath.SkipAll
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			dest, err := os.Readlink(p)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s (a link that cannot be read: %v)", shortPath(p), unwrapPath(err)))
				return nil
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(p), dest) // the directories above are real: .. is lexical
			}
			if !inWrite(dest) {
				return nil // no step of it is the agent's to change
			}
			if why := notMountable(dest, false, dirs); why != "" {
				notes = append(notes, fmt.Sprintf("%s (a link to %s in the write paths, which %s)", shortPath(p), shortPath(dest), why))
			} else {
				targets = append(targets, dest)
			}
		case d.Type().IsRegular():
			if st, err := d.Info(); err == nil && nlink(st) > 1 {
				notes = append(notes, fmt.Sprintf("%s (%d names: writable by another)", shortPath(p), nlink(st)))
			}
		}
		return nil
	})
	return targets, notes
}

// nlink is how many names the file st describes has (1 when unknown).
func nlink(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

// rank orders the paths ProtectedMounts keeps when not all fit: by the
// depth of the directory that holds the protected name (a write path's
// own .git, .vscode or .bashrc first), those under a fixed name (.git,
// .config, a built-in name) before a git directory known by what it
// holds or by a NAME.git, then the shallowest. By the depth of the path
// alone, ties went by name, and a previous agent's decoys
// (!1/.vscode … !128/.vscode, as deep as .git/hooks and sorting before
// it) left the workspace's own repository writable.
type rank struct{ owner, class, depth int }

func (r rank) compare(o rank) int {
	if r.owner != o.owner {
		return r.owner - o.owner
	}
	if r.class != o.class {
		return r.class - o.class
	}
	return r.depth - o.depth
}

func mountRank(dirs []string, p string) rank {
	base := ""
	for _, d := range dirs {
		if beneathPath(p, d) && (base == "" || len(d) < len(base)) { // the outermost, as the walk
			base = d
		}
	}
	rel, err := filepath.Rel(base, p)
	if base == "" || err != nil {
		return rank{owner: strings.Count(p, "/"), class: 1, depth: strings.Count(p, "/")}
	}
	cs := strings.Split(rel, "/")
	for i, c := range cs {
		if k := strings.ToLower(c); k == gitDir || k == xdgDir || slices.Contains(protectedNames, k) {
			return rank{owner: i, class: 0, depth: len(cs)}
		}
	}
	// A git directory by layout or by name: its git files are its
	// children, so it is the next to last name.
	return rank{owner: max(len(cs)-2, 0), class: 1, depth: len(cs)}
}

// ProtectedMade is what a wrapper-mode launch's agent made: the protected
// names of any type beneath dirs now (looked for as ProtectedMounts
// does), and the paths the git configs name there, that are not in
// before, nor beneath one of them. Nothing
// covered them (SD-27), and the person's programs will run them.
// unseen says what the walk did not look through (a tree past limit,
// too deep or unreadable): the agent shapes the tree, so a name it made
// there is not in made, and that must be said as well as made.
func ProtectedMade(dirs, before []string, limit int) (made, unseen []string) {
	found, unseen := scanDirs(dirs, limit)
	// A path a repository's config names (a core.hooksPath, a program)
	// that was not there at the start was not covered either.
	_, there, _, notRead := gitConfigMounts(found, dirs)
	unseen = append(unseen, notRead...)
	now := append(pathsOf(found), there...)
	slices.Sort(now)
	for _, p := range slices.Compact(now) {
		if !slices.ContainsFunc(before, func(b string) bool { return b == p || beneathPath(p, b) }) {
			made = append(made, p)
		}
	}
	return made, unseen
}

// scanDirs is scanProtected over each directory of dirs that is not
// inside another, sharing one budget of limit entries; problems says
// what was not looked through.
func scanDirs(dirs []string, limit int) (found []protectedFound, problems []string) {
	left := limit
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() || slices.ContainsFunc(dirs, func(d string) bool { return d != dir && beneathPath(dir, d) }) {
			continue // a file, gone (the launch says so), or inside another
		}
		if left <= 0 {
			problems = append(problems, fmt.Sprintf("protected names in %s (not looked for: more than %d entries in the write paths)", shortPath(dir), limit))
			continue
		}
		f, seen, problem := scanProtected(dir, nil, left)
		left -= seen
		if problem != nil {
			problems = append(problems, strings.TrimPrefix(problem.Error(), "fs: "))
		}
		found = append(found, f...)
	}
	return found, problems
}

type protectedFound struct {
	path string
	mode os.FileMode // the type bits alone
}

func pathsOf(found []protectedFound) []string {
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.path
	}
	return out
}

// scanProtected walks dir for protected names of every type, following
// no link and not descending into what it lists. It walks by descriptor
// (openat), so no path length stops it, reads each directory in batches,
// and takes a directory's own names, then its .git, before its other
// subdirectories, so that no sibling tree delays them. It goes on past
// what it cannot look through (a subtree deeper than maxRemoveDepth, a
// directory it cannot open) and, when limit is above 0, stops after limit
// entries; seen is how many it looked at (past limit by one when it
// stopped), and problem says what was not looked at.
func scanProtected(dir string, extra []string, limit int) (found []protectedFound, seen int, problem error) {
	skipped := 0
	var first []string
	note := func(format string, args ...any) {
		if skipped++; len(first) < 3 {
			first = append(first, fmt.Sprintf(format, args...))
		}
	}
	// gitRoot: the directory is a .git itself. upFold: its parent folds
	// case, so its own name is matched folded.
	var walk func(f *os.File, path string, inGit, gitRoot, upFold bool, depth int) bool // false: stop
	walk = func(f *os.File, path string, inGit, gitRoot, upFold bool, depth int) bool {
		defer f.Close()
		// A git directory by what it holds (a bare repository) is a .git
		// by another name.
		if !inGit && gitLayoutAt(int(f.Fd())) {
			inGit, gitRoot = true, true
		}
		// Names match as fs's matcher has them: folded where this
		// directory folds case, since git and the shell find a .GIT or a
		// .Bashrc there under their own spelling.
		fold := caseFolded(int(f.Fd()))
		base := filepath.Base(path)
		inXDG := depth > 0 && scanKey(base, upFold) == xdgDir
		inBare := depth > 0 && bareName(base, upFold)
		var subdirs []string
		for {
			ents, err := f.ReadDir(512)
			for _, e := range ents {
				if seen++; limit > 0 && seen > limit {
					note("the workspace %s has more than %d entries to look through", dir, limit)
					return false
				}
				name, t := e.Name(), e.Type()
				k := scanKey(name, fold)
				named := slices.Contains(protectedNames, k) || inGit && slices.Contains(gitProtected, k) || k == gitDir && !t.IsDir() ||
					inXDG && k == xdgGit || inBare && slices.Contains(gitProtected, k)
				// A link where a name decides protection beneath it (.git,
				// any directory inside one such as .git/modules, .config)
				// would put unprotected files under protected names: it is
				// found as such, never followed.
				link := t&os.ModeSymlink != 0 && (k == gitDir || inGit || k == xdgDir)
				if named || link {
					found = append(found, protectedFound{path + "/" + name, t})
					continue
				}
				// A repository's objects are many and hold nothing protected;
				// only .git/objects itself is skipped (a submodule named
				// objects has its git directory at .git/modules/objects).
				if t.IsDir() && !(gitRoot && k == "objects") {
					subdirs = append(subdirs, name)
				}
			}
			if err == io.EOF || err == nil && len(ents) == 0 {
				break
			}
			if err != nil {
				note("%s: %v", shortPath(path), unwrapPath(err))
				break
			}
		}
		isGit := func(n string) bool { return scanKey(n, fold) == gitDir }
		if i := slices.IndexFunc(subdirs, isGit); i > 0 {
			subdirs[0], subdirs[i] = subdirs[i], subdirs[0]
		}
		for _, name := range subdirs {
			sub := path + "/" + name
			if depth+1 > maxRemoveDepth {
				note("%s: deeper than %d levels", shortPath(sub), maxRemoveDepth)
				continue
			}
			fd, err := unix.Openat(int(f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				note("%s: %v", shortPath(sub), err)
				continue
			}
			if !walk(os.NewFile(uintptr(fd), sub), sub, inGit || isGit(name), isGit(name), fold, depth+1) {
				return false
			}
		}
		return true
	}
	if top, err := os.Open(dir); err != nil {
		note("%s: %v", dir, unwrapPath(err))
	} else {
		walk(top, filepath.Clean(dir), false, false, false, 0)
	}
	found = withExtra(found, dir, extra)
	if skipped > 0 {
		msg := strings.Join(first, "; ")
		if skipped > len(first) {
			msg += fmt.Sprintf("; and %d more", skipped-len(first))
		}
		problem = fmt.Errorf("fs: looking for protected paths, not looked through: %s", msg)
	}
	return found, seen, problem
}

// withExtra is found with each path of extra beneath dir that exists
// and is not beneath one found, of any type, sorted.
func withExtra(found []protectedFound, dir string, extra []string) []protectedFound {
	for _, x := range extra {
		if !beneathPath(x, dir) {
			continue
		}
		if st, err := os.Lstat(x); err == nil && !slices.ContainsFunc(found, func(f protectedFound) bool { return f.path == x || beneathPath(x, f.path) }) {
			found = append(found, protectedFound{x, st.Mode().Type()})
		}
	}
	slices.SortFunc(found, func(a, b protectedFound) int { return strings.Compare(a.path, b.path) })
	return found
}

// scanKey is name as a directory compares it, folded where it folds
// case (fold), to compare with the built-in names, which are folded
// already (lower-case ASCII): foldEqual's matching, with each name
// folded once however many it is compared with.
func scanKey(name string, fold bool) string {
	switch {
	case !fold:
		return name
	case isASCII(name):
		return strings.ToLower(name)
	}
	return foldKey(name)
}

// gitLayoutAt reports whether the directory dfd holds one of the
// gitLayouts (a name of any type counts: a link or a file errs towards
// protection).
func gitLayoutAt(dfd int) bool {
	return slices.ContainsFunc(gitLayouts, func(set []string) bool { return holds(dfd, set) })
}

// holds reports whether every one of names is in the directory dfd.
func holds(dfd int, names []string) bool {
	var st unix.Stat_t
	for _, n := range names {
		if unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false
		}
	}
	return true
}

// outermost drops, from sorted paths, what lies beneath another: the
// outer mount covers it.
func outermost(paths []string) []string {
	var kept []string
	for _, p := range paths {
		if !slices.ContainsFunc(kept, func(k string) bool { return k == p || beneathPath(p, k) }) {
			kept = append(kept, p)
		}
	}
	return kept
}

// shortPath is p, its middle elided past 120 bytes, for a message.
func shortPath(p string) string {
	r := []rune(p)
	if len(r) <= 120 {
		return p
	}
	return string(r[:60]) + "…" + string(r[len(r)-60:])
}

// unwrapPath is err without the *PathError's path, which shortPath says.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// beneathPath reports whether p lies strictly beneath dir.
func beneathPath(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "../")
}
