package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pinfold/pinfold/internal/reach"
	"golang.org/x/sys/unix"
)

// A repository's git configuration names programs and directories that
// the person's own git runs: core.hooksPath (a .githooks beside the
// code), core.fsmonitor, a diff driver's textconv, an alias's
// !command, and files it reads as configuration (include.path). Those
// inside the write paths are protected as the repository's own hooks
// are (ProtectedMounts). What is read here is bounded, and a file that
// cannot be read is said, never taken for one that names nothing.
const (
	maxGitConfigSize  = 1 << 20 // bytes in one config file
	maxGitConfigDepth = 10      // nested includes, as git's own bound
	maxGitConfigFiles = 4096    // config files opened for one walk
	maxGitConfigBytes = 8 << 20 // bytes of them read for one walk
)

// gitVar is one variable of a git config file.
type gitVar struct {
	file         string // the config file it is in
	section, key string // lower-cased: git compares them so
	sub          string // the subsection, as written (compared exactly)
	name         string // section[.sub].key as written, for messages
	value        string
	noValue      bool // "key" alone: boolean true
}

// parseGitConfig reads data in git's config syntax, strictly: what git
// would take differently or refuse is an error, so that a file this
// cannot read is said rather than taken for one naming nothing.
func parseGitConfig(data []byte) ([]gitVar, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // git skips a UTF-8 BOM
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	p := &cfgParser{src: data, line: 1}
	var vars []gitVar
	section, sub, secName := "", "", ""
	for {
		p.start = p.line
		c, ok := p.next()
		switch {
		case !ok:
			return vars, nil
		case c == '\n' || isBlank(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, u, raw, err := p.header()
			if err != nil {
				return nil, err
			}
			section, sub, secName = s, u, raw
		case isAlpha(c):
			if section == "" {
				return nil, p.errorf("a variable before any section")
			}
			key := p.name()
			v := gitVar{section: section, sub: sub, key: strings.ToLower(key), name: secName + "." + key}
			p.skipBlank()
			switch c, ok := p.next(); {
			case !ok || c == '\n':
				v.noValue = true
			case c == '=':
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				// git hands the value on as a C string: it ends at a NUL.
				v.value, _, _ = strings.Cut(val, "\x00")
			default:
				return nil, p.errorf("a variable's name after the name")
			}
			vars = append(vars, v)
		default:
			return nil, p.errorf("unexpected text: neither a section, a variable nor a comment")
		}
	}
}

type cfgParser struct {
	src         []byte
	pos         int
	line, start int // the line read, and the line of what is read
}

func (p *cfgParser) next() (byte, bool) {
	if p.pos >= len(p.src) {
		return 0, false
	}
	c := p.src[p.pos]
	p.pos++
	if c == '\n' {
		p.line++
	}
	return c, true
}

func (p *cfgParser) peek() (byte, bool) {
	if p.pos >= len(p.src) {
		return 0, false
	}
	return p.src[p.pos], true
}

// errorf is an error at the line where what is being read began.
func (p *cfgParser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{p.start}, args...)...)
}

func (p *cfgParser) skipLine() {
	for c, ok := p.peek(); ok && c != '\n'; c, ok = p.peek() {
		p.pos++
	}
}

func (p *cfgParser) skipBlank() {
	for c, ok := p.peek(); ok && (c == ' ' || c == '\t'); c, ok = p.peek() {
		p.pos++
	}
}

// name reads a variable name whose first letter was just read: letters,
// digits, '-'.
func (p *cfgParser) name() string {
	start := p.pos - 1
	for c, ok := p.peek(); ok && (isAlpha(c) || c >= '0' && c <= '9' || c == '-'); c, ok = p.peek() {
		p.pos++
	}
	return string(p.src[start:p.pos])
}

// header reads a section header after its '[': [section],
// [section "subsection"] or the old [section.subsection], whose
// subsection git lower-cases. The rest of its line is read as any other.
func (p *cfgParser) header() (section, sub, raw string, err error) {
	start := p.pos
	for c, ok := p.peek(); ok && (isAlpha(c) || c >= '0' && c <= '9' || c == '-' || c == '.'); c, ok = p.peek() {
		p.pos++
	}
	raw = string(p.src[start:p.pos])
	if raw == "" {
		return "", "", "", p.errorf("a section header with no name")
	}
	section = strings.ToLower(raw)
	c, _ := p.next()
	switch {
	case c == ']':
		if i := strings.IndexByte(section, '.'); i >= 0 {
			section, sub = section[:i], section[i+1:]
		}
		return section, sub, raw, nil
	case (c == ' ' || c == '\t') && !strings.Contains(raw, "."):
		p.skipBlank()
		if c, _ := p.next(); c != '"' {
			return "", "", "", p.errorf("a section header without a quoted subsection")
		}
		var b strings.Builder
		for {
			c, ok := p.next()
			switch {
			case !ok || c == '\n':
				return "", "", "", p.errorf("an unclosed subsection")
			case c == '\\':
				// \" and \\; git drops a backslash before anything else.
				if c, ok = p.next(); !ok || c == '\n' {
					return "", "", "", p.errorf("an unclosed subsection")
				}
				b.WriteByte(c)
			case c == '"':
				if c, _ := p.next(); c != ']' {
					return "", "", "", p.errorf("a subsection not followed by ]")
				}
				return section, b.String(), raw + "." + b.String(), nil
			default:
				b.WriteByte(c)
			}
		}
	}
	return "", "", "", p.errorf("a malformed section header")
}

// value reads a value after its '=', as git does: blanks (isBlank) around it
// dropped, a run of blanks inside it kept as spaces, double quotes
// keeping blanks and comment characters, the escapes \" \\ \n \t \b, and
// a backslash at the end of a line joining the next.
func (p *cfgParser) value() (string, error) {
	var b strings.Builder
	quoted, spaces := false, 0
	for {
		c, ok := p.next()
		switch {
		case !ok || c == '\n':
			if quoted {
				return "", p.errorf("an unclosed quote")
			}
			return b.String(), nil
		case !quoted && isBlank(c):
			if b.Len() > 0 {
				spaces++
			}
			continue
		case !quoted && (c == '#' || c == ';'):
			p.skipLine()
			continue
		}
		for ; spaces > 0; spaces-- {
			b.WriteByte(' ')
		}
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			e, _ := p.next()
			switch e {
			case '\n':
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '"', '\\':
				b.WriteByte(e)
			default:
				return "", p.errorf("an unknown escape")
			}
		default:
			b.WriteByte(c)
		}
	}
}

// isBlank is git's isspace short of the newline: a carriage return that
// is not part of a CRLF is a blank to git, and a value's trailing one is
// dropped (hooksPath = .githooks\r is .githooks).
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// cfgReader reads config files and the files they include, bounded.
type cfgReader struct {
	x     expander // the person's home and the users' (includes' ~)
	files int      // opened, of maxGitConfigFiles
	bytes int      // read, of maxGitConfigBytes
	past  bool     // past either, said once
	vars  []gitVar
	// includes are the files include.path and includeIf.*.path name,
	// each with where it is named; notes say what was not read.
	includes []gitNamed
	notes    []string
	// tried is every file read or looked for, existing or not: what
	// the launcher watches for the person's edits (GitConfigWatched).
	tried []string
}

// read reads the config file path and, recursively, what it includes
// (whatever includeIf's condition: a branch checked out during the
// session can meet it). A file that does not exist is nothing, as to
// git; one that cannot be read is a note.
func (r *cfgReader) read(path string, depth int) {
	notCovered := func(why string) {
		// Once: a repository's worktrees read its config each.
		if n := fmt.Sprintf("%s (%s: the programs and includes it names are not covered)", shortPath(path), why); !slices.Contains(r.notes, n) {
			r.notes = append(r.notes, n)
		}
	}
	if r.past {
		return
	}
	r.tried = append(r.tried, path)
	if depth > maxGitConfigDepth {
		notCovered(fmt.Sprintf("included more than %d deep", maxGitConfigDepth))
		return
	}
	past := func(bound string) {
		if !r.past {
			notCovered("past the " + bound + " read, as any after it")
		}
		r.past = true
	}
	if r.files++; r.files > maxGitConfigFiles {
		past(fmt.Sprintf("%d config files", maxGitConfigFiles))
		return
	}
	data, err := readConfigFile(path)
	if errors.Is(err, os.ErrNotExist) || reach.Out(path, err) {
		return // nothing to git, or beyond the agent's reach as beyond this uid's
	}
	if err != nil {
		notCovered(err.Error())
		return
	}
	// A file including itself many times over is read many times.
	if r.bytes += len(data); r.bytes > maxGitConfigBytes {
		past(fmt.Sprintf("%d bytes of config", maxGitConfigBytes))
		return
	}
	vars, err := parseGitConfig(data)
	if err != nil {
		notCovered("not read: " + err.Error())
		return
	}
	for _, v := range vars {
		if v.noValue || v.value == "" {
			continue // names nothing (kept out: a config may hold millions)
		}
		v.file = path
		r.vars = append(r.vars, v)
		if v.key != "path" || !(v.section == "include" || v.section == "includeif") {
			continue
		}
		why := v.name + " in " + shortPath(path)
		for _, form := range pathForms(v.value) {
			inc, err := r.x.tilde(form)
			if err != nil {
				r.notes = r.x.say(r.notes, fmt.Sprintf("%s names %s (%v: the programs and includes it names are not covered)", why, form, err))
				continue
			}
			if inc == "" {
				continue
			}
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			r.includes = append(r.includes, gitNamed{path: filepath.Clean(inc), why: why})
			r.read(filepath.Clean(inc), depth+1)
		}
	}
}

// readConfigFile reads a regular file of at most maxGitConfigSize bytes.
// The path may be a previous agent's choice (an include.path, a .git
// file's gitdir) and the launcher root, so it is opened first with
// O_PATH, which opens no device (a watchdog or a tape drive acts on
// open) and blocks on no FIFO; only a regular file is then opened for
// reading, through that descriptor. What it holds is never quoted in an
// error (parseGitConfig says where, not what).
func readConfigFile(path string) ([]byte, error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	switch err := unix.Fstat(pfd, &st); {
	case err != nil:
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, errors.New("not a regular file")
	case st.Size > maxGitConfigSize:
		return nil, fmt.Errorf("larger than %d bytes", maxGitConfigSize)
	}
	// The kernel's own files pass for regular ones, and some act on a
	// read (/proc/kmsg takes the messages it gives from the system's
	// log): a config is never one.
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(pfd, &sfs); err != nil {
		return nil, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	if slices.Contains(kernelFS, int64(sfs.Type)) {
		return nil, errors.New("a file of the kernel's (proc, sys, debugfs…), not a config")
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitConfigSize+1))
	if err == nil && len(data) > maxGitConfigSize {
		err = fmt.Errorf("larger than %d bytes", maxGitConfigSize)
	}
	return data, err
}

// kernelFS are the file systems of the kernel's interfaces, whose
// regular files readConfigFile does not read.
var kernelFS = []int64{unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC,
	unix.SECURITYFS_MAGIC, unix.EFIVARFS_MAGIC, unix.BPF_FS_MAGIC}

// passwdFile is the user database ~user is looked up in; a variable for
// tests.
var passwdFile = "/etc/passwd"

// expander expands a leading ~ as git (a pathname value's) and sh (a
// word's) do: ~ and ~/ as home, ~user and ~user/ as that user's home.
// Both ask the system's user database; here /etc/passwd alone is read
// (once: os/user is not imported), so a user it does not hold (one of a
// network directory) is not known, and said, never taken for nothing.
type expander struct {
	home  string
	users map[string]string // name: home, from passwdFile; nil until read
	err   error             // why passwdFile could not be read
	said  map[string]bool   // the notes on homes not known (say)
	more  int               // those past maxNamedSaid, counted
}

// say is notes with n, a note on a home not known, added once, and
// past maxNamedSaid of them counted instead (x.more): a config can
// name millions.
func (x *expander) say(notes []string, n string) []string {
	if x.said[n] {
		return notes
	}
	if x.said == nil {
		x.said = map[string]bool{}
	}
	if x.said[n] = true; len(x.said) > maxNamedSaid {
		x.more++
		return notes
	}
	return append(notes, n)
}

// tilde is p with its leading ~ expanded: "" when p is ~ or ~/… and home
// is not known (git refuses such a value), an error when p names a user
// whose home is not known.
func (x *expander) tilde(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	name, rest, _ := strings.Cut(p[1:], "/")
	if name == "" {
		if x.home == "" {
			return "", nil
		}
		return filepath.Join(x.home, rest), nil
	}
	if x.users == nil {
		x.users, x.err = readPasswd(passwdFile)
	}
	if h, ok := x.users[name]; ok && filepath.IsAbs(h) {
		return filepath.Join(h, rest), nil
	}
	if x.err != nil {
		return "", fmt.Errorf("the home of ~%s is not known: %s not read: %v", name, passwdFile, x.err)
	}
	return "", fmt.Errorf("the home of ~%s is not known: no such user in %s", name, passwdFile)
}

// readPasswd is the names and homes of a passwd(5) file, the first line
// of a name counting, as getpwnam's.
func readPasswd(path string) (map[string]string, error) {
	users := map[string]string{}
	data, err := readConfigFile(path)
	if err != nil {
		return users, err
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), ":")
		if _, seen := users[f[0]]; len(f) == 7 && f[0] != "" && !seen {
			users[f[0]] = f[5]
		}
	}
	return users, nil
}

// gitPrefixes are what a pathname value's leading %(prefix)/ stands for
// (git 2.35 on: its install prefix, in a git built without
// RUNTIME_PREFIX): Debian's git's, /usr (git 2.39.5's git config
// --type=path says /usr/x for %(prefix)/x), and, when another, that of
// the git found on $PATH (its bin directory's parent), the person's
// git being known only to them. A variable for tests.
var gitPrefixes = sync.OnceValue(func() []string {
	out := []string{"/usr"}
	if p, err := exec.LookPath("git"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && filepath.Base(filepath.Dir(real)) == "bin" {
			if pre := filepath.Dir(filepath.Dir(real)); pre != "/usr" {
				out = append(out, pre)
			}
		}
	}
	return out
})

// pathForms are v as git may read it: with a leading %(prefix)/ made
// each of gitPrefixes (the rest kept as written: a program's arguments
// follow it), or v alone. Done on every value, over-reaching: git
// expands it in pathname values only (core.hooksPath, include.path,
// core.fsmonitor…), and sh refuses the parenthesis in any other.
func pathForms(v string) []string {
	rest, ok := strings.CutPrefix(v, "%(prefix)/")
	if !ok {
		return []string{v}
	}
	var out []string
	for _, p := range gitPrefixes() {
		out = append(out, strings.TrimSuffix(p, "/")+"/"+rest)
	}
	return out
}

// gitNamed is a path a git config names: a directory (core.hooksPath)
// or a file git reads or runs, and where it is named (for messages).
type gitNamed struct {
	path string
	dir  bool
	arg  bool // a word given to a program (valuesNamed): mounted only where it is a file
	why  string
}

// notPrograms are the variables (section, key; "*" any key) whose values
// are URLs, refs or paths of the repository's own tree, never a program
// to run (but programsAmong): their slashes are not taken for one.
var notPrograms = [][2]string{
	{"remote", "*"}, {"branch", "*"}, {"url", "*"}, {"submodule", "*"},
	{"core", "worktree"}, {"include", "path"}, {"includeif", "path"},
	{"safe", "directory"}, {"init", "defaultbranch"},
}

// programsAmong are the variables of notPrograms' sections that do name
// a program git runs here: a remote's upload-pack and receive-pack, run
// by the shell from the working tree's root when the remote is a path (a
// fetch from ../upstream), and a submodule's update = !command.
var programsAmong = [][2]string{{"remote", "uploadpack"}, {"remote", "receivepack"}, {"submodule", "update"}}

// gitConfigNamed is what the configs that apply to the repositories of
// found (their git directories: each found git file's parent, and what
// a found .git file names), to the repository each write path of dirs
// lies in, and the person's own configs (git's global and system ones)
// name: the paths of gitNamed, resolved as git resolves them, and notes
// on what could not be read. home is the person's $HOME.
func gitConfigNamed(found []protectedFound, dirs []string, home string) (named []gitNamed, notes []string) {
	named, notes, _ = gitConfigRead(found, dirs, home)
	return named, notes
}

// gitConfigRead is gitConfigNamed, with every file it read or looked
// for (tried): the configs, what they include, the .git, commondir and
// gitdir files that lead to them, and each write path's own
// .git/config, which a git init there would make.
func gitConfigRead(found []protectedFound, dirs []string, home string) (named []gitNamed, notes, tried []string) {
	cfg := &cfgReader{x: expander{home: home}}
	for _, d := range dirs {
		cfg.tried = append(cfg.tried, filepath.Join(d, gitDir, "config"))
	}
	// Each git directory, with its working tree's root where a .git
	// file gives it: a linked worktree's or a submodule's .git names a
	// git directory that may lie outside the write paths, whose config's
	// relative values name paths in this working tree.
	type repo struct{ gitDir, root string }
	var repos []repo
	at := map[repo]int{} // the depth of the .git (or git directory) it was found by
	add := func(f protectedFound) {
		r, dotGit := repo{gitDir: filepath.Dir(f.path)}, filepath.Dir(f.path)
		switch base := strings.ToLower(filepath.Base(f.path)); {
		case slices.Contains(gitProtected, base):
		case base == gitDir && f.mode.IsRegular():
			cfg.tried = append(cfg.tried, f.path)
			b, err := readConfigFile(f.path)
			g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
			if err != nil || !ok || g == "" {
				return // git takes it for no repository either
			}
			if !filepath.IsAbs(g) {
				g = filepath.Join(filepath.Dir(f.path), g)
			}
			r, dotGit = repo{gitDir: filepath.Clean(g), root: filepath.Dir(f.path)}, f.path
		default:
			return
		}
		if !slices.Contains(repos, r) {
			repos = append(repos, r)
			at[r] = strings.Count(dotGit, "/")
		}
	}
	for _, f := range found {
		add(f)
	}
	// A write path inside a repository's working tree (src of a
	// repository whose .git lies outside the write paths): git finds that
	// repository from there, and its config's relative values name paths
	// in the write path.
	for _, d := range dirs {
		for a := filepath.Dir(d); ; a = filepath.Dir(a) {
			if st, err := os.Lstat(filepath.Join(a, gitDir)); err == nil {
				if st.IsDir() {
					add(protectedFound{filepath.Join(a, gitDir, "config"), 0})
				} else {
					add(protectedFound{filepath.Join(a, gitDir), st.Mode().Type()})
				}
				break
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	// The shallowest first (the one a write path lies in, a write path's
	// own), as ProtectedMounts ranks: the bound is on them all, and a
	// previous agent's nested repository with a config of 8 MiB (or one
	// including itself, read at each depth), sorting first by name
	// (!a/.git), would have left the workspace's own config unread.
	slices.SortStableFunc(repos, func(a, b repo) int { return at[a] - at[b] })
	// One reader for all (cfg, above), so that its bound is on them
	// all; its vars and includes are taken from it for each repository.
	for _, g := range globalConfigs(home) {
		cfg.read(g, 0)
	}
	global := cfg.vars
	named = append(named, cfg.includes...)
	// A global value names an absolute path for every repository, and a
	// relative one in each repository's root (below).
	name := func(vars []gitVar, root string) {
		// Each note once (cfg.x.say): the person's configs are read
		// for each repository.
		n, notes := valuesNamed(vars, root, &cfg.x)
		named = append(named, n...)
		cfg.notes = append(cfg.notes, notes...)
	}
	name(global, "")
	var unread []string // repositories past the bound: each is said
	for _, rp := range repos {
		g := rp.gitDir
		if cfg.past {
			// Read no more (cfg.read returns at once); the person's own
			// configs still name paths in its working tree (below).
			unread = append(unread, filepath.Join(g, "config"))
		}
		cfg.vars, cfg.includes = nil, nil
		cfg.read(filepath.Join(g, "config"), 0)
		cfg.read(filepath.Join(g, "config.worktree"), 0)
		// A linked worktree's or a submodule's git directory takes its
		// config from the directory commondir names.
		cfg.tried = append(cfg.tried, filepath.Join(g, "commondir"))
		if c, err := readConfigFile(filepath.Join(g, "commondir")); err == nil {
			if common := strings.TrimSpace(string(c)); common != "" {
				if !filepath.IsAbs(common) {
					common = filepath.Join(g, common)
				}
				cfg.read(filepath.Join(common, "config"), 0)
			}
		}
		root := rp.root
		if root == "" {
			root = gitRoot(g, cfg.vars)
			cfg.tried = append(cfg.tried, filepath.Join(g, "gitdir"))
		}
		named = append(named, cfg.includes...)
		// Together, the person's first: an alias may name another of
		// either, the repository's counting over the person's.
		name(slices.Concat(global, cfg.vars), root)
	}
	// A path named through the person's own links (a ~/src that leads to
	// the disk a write path is on) is the write path's as git opens it.
	// Resolved by directory, once each: a config may name thousands of
	// programs in one directory.
	type parent struct {
		dir    string
		exists bool
	}
	parents := map[string]parent{}
	for i, n := range named {
		up, ok := parents[filepath.Dir(n.path)]
		if !ok {
			_, err := os.Lstat(filepath.Dir(n.path))
			up = parent{throughLinksOutside(filepath.Dir(n.path), dirs), err == nil}
			parents[filepath.Dir(n.path)] = up
		}
		if p := filepath.Join(up.dir, filepath.Base(n.path)); up.dir != filepath.Dir(n.path) {
			named[i].path = p // entered the write paths above it
		} else if !up.exists {
			continue // nothing is there, nor through it
		} else if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
			named[i].path = throughLinksOutside(n.path, dirs) // a link itself
		}
	}
	// A word given to a program that is a directory is none git runs
	// (gofmt -w ./src): protecting it would ask before every change in it.
	named = slices.DeleteFunc(named, func(n gitNamed) bool {
		st, err := os.Stat(n.path)
		return n.arg && err == nil && st.IsDir()
	})
	// Each path once, with where it was first named, as a program before
	// as a word given to one.
	slices.SortStableFunc(named, func(a, b gitNamed) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return cmpBool(a.arg, b.arg)
	})
	named = slices.CompactFunc(named, func(a, b gitNamed) bool { return a.path == b.path && a.dir == b.dir })
	// The note at the bound names the file it was reached in; the
	// repositories whose configs were then not read at all are named too
	// (up to 3, then counted), so that the person sees their own
	// repository's among them.
	if len(unread) > 0 {
		say := unread[:min(len(unread), 3)]
		for i, u := range say {
			say[i] = shortPath(u)
		}
		msg := strings.Join(say, ", ")
		if len(unread) > len(say) {
			msg += fmt.Sprintf(" and %d more", len(unread)-len(say))
		}
		cfg.notes = append(cfg.notes, msg+" (not read: past the bound of config one launch reads; the programs and includes they name are not covered)")
	}
	if cfg.x.more > 0 {
		cfg.notes = append(cfg.notes, fmt.Sprintf("%d more paths git configs name in a ~user's home that is not known (not covered)", cfg.x.more))
	}
	slices.Sort(cfg.tried)
	return named, cfg.notes, slices.Compact(cfg.tried)
}

// maxLinkHops bounds the links throughLinksOutside follows, as the
// kernel's own bound.
const maxLinkHops = 40

// throughLinksOutside is p with the symbolic links on its way that lie
// outside the write paths dirs followed, up to where it enters dirs: a
// config naming /home/p/src/proj/.githooks where /home/p/src leads to
// /data/src and /data/src/proj is a write path names
// /data/src/proj/.githooks. A link inside dirs is the agent's to change
// and is not followed (ProtectedMounts says what is reached through
// one). p as it is when it does not enter dirs, cannot be looked at or
// leads through more than maxLinkHops links.
func throughLinksOutside(p string, dirs []string) string {
	inDirs := func(q string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return q == d || beneathPath(q, d) })
	}
	if inDirs(p) || !filepath.IsAbs(p) {
		return p
	}
	done, rest := "/", strings.Split(strings.TrimPrefix(p, "/"), "/")
	for hops := 0; len(rest) > 0; {
		next := filepath.Join(done, rest[0])
		rest = rest[1:]
		if inDirs(next) {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		st, err := os.Lstat(next)
		if err != nil {
			return p
		}
		if st.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		t, err := os.Readlink(next)
		if hops++; err != nil || hops > maxLinkHops {
			return p
		}
		if filepath.IsAbs(t) {
			done = "/"
		}
		rest = append(strings.FieldsFunc(t, func(r rune) bool { return r == '/' }), rest...)
	}
	return p
}

// aliasConfigs are the variables the aliases of vars set for the command
// they run: an alias that is no !command is split into words as git
// splits it, and git takes its -c key=value options as config (alias.ci =
// -c core.hooksPath=.githooks commit, alias.x = -c core.fsmonitor=tools/m
// status runs tools/m), so they name programs as the file's own do.
func aliasConfigs(vars []gitVar) []gitVar {
	var out []gitVar
	for _, v := range vars {
		if v.section != "alias" || strings.HasPrefix(strings.TrimSpace(v.value), "!") {
			continue
		}
		words := splitCmdline(v.value)
		for i := 0; i+1 < len(words); i++ {
			if words[i] != "-c" {
				continue
			}
			name, value, ok := strings.Cut(words[i+1], "=")
			first, last := strings.IndexByte(name, '.'), strings.LastIndexByte(name, '.')
			if !ok || first <= 0 || last == len(name)-1 {
				continue // a boolean, or no section.key: names nothing
			}
			c := gitVar{file: v.file, name: v.name + " (-c " + name + ")", value: value,
				section: strings.ToLower(name[:first]), key: strings.ToLower(name[last+1:])}
			if first < last {
				c.sub = name[first+1 : last]
			}
			out = append(out, c)
		}
	}
	return out
}

// shellSpecial are the characters for which git runs a command by the
// shell rather than itself (run-command.c's prepare_shell_cmd).
const shellSpecial = "|&;<>()$`\\\"' \t\n*?[#~=%"

// programWords are the words of a value of v that may name what git
// runs: gpg's program is run as named, whole, with no shell
// (gpg.program = tools/my gpg names "tools/my gpg"); any other value as
// git runs a command, which is itself when it holds none of
// shellSpecial, and otherwise sh -c with the value, which runs every
// command in it: each word of each (commandWords), since a command's
// arguments may be what it runs (core.fsmonitor = sh .githooks/mon.sh,
// core.sshCommand = env tools/ssh, core.pager = "less; tools/x": git 2.39
// runs each). An alias's leading ! is dropped; an alias without one is
// git's own command, which no shell runs (aliasWords, aliases the
// others it may name; its -c options are aliasConfigs').
func programWords(v gitVar, aliases map[string]string) []shellWord {
	value := strings.TrimSpace(v.value)
	if v.section == "gpg" && v.key == "program" {
		return []shellWord{{text: value}}
	}
	if v.section == "alias" && !strings.HasPrefix(value, "!") {
		return aliasWords(value, aliases)
	}
	value = strings.TrimSpace(strings.TrimPrefix(value, "!"))
	if !strings.ContainsAny(value, shellSpecial) {
		return []shellWord{{text: value}}
	}
	return commandWords(value)
}

// runOptions are the options of git's own commands whose value git runs
// by the shell (git 2.39 runs each, from the working tree's root but
// for grep's pager and filter-branch's filters): rebase's exec lines,
// difftool's diff program, grep's pager, the upload-pack and
// receive-pack a transport runs for a path remote, and filter-branch's
// filters. Long options as parse-options takes them (--exec tools/x,
// --exec=tools/x, a prefix, --ex), short ones (-x tools/x, -xtools/x,
// last of a cluster, -ix tools/x).
var runOptions = map[string][]string{
	"rebase":        {"-x", "--exec"},
	"difftool":      {"-x", "--extcmd"},
	"grep":          {"-O", "--open-files-in-pager"},
	"fetch":         {"--upload-pack"},
	"pull":          {"--upload-pack"},
	"clone":         {"-u", "--upload-pack"},
	"ls-remote":     {"--upload-pack", "--exec"},
	"archive":       {"--exec"},
	"push":          {"--receive-pack", "--exec"},
	"filter-branch": {"--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"},
}

// elsewhere is where git runs a command's programs when that is not
// (only) the working tree's root (shellWord.where and .in): grep's pager
// in the directory git is run from, a submodule foreach in each
// submodule, filter-branch's filters in its temporary directory (-d's,
// by default .git-rewrite/t, which --tree-filter fills with a commit's
// files).
var elsewhere = map[string][2]string{
	"grep":          {"the directory git grep is run from", ""},
	"filter-branch": {"filter-branch's temporary tree (-d's, or .git-rewrite/t, a commit's files for --tree-filter)", ".git-rewrite/t"},
	"submodule":     {"each submodule's working tree", ""},
}

// aliasWords are the words of an alias that is git's own command, split
// as git splits it: its first word (taken, as it always was), and the
// words of each program git's options or arguments give that command
// to run (git 2.39 runs each: alias.x = rebase --exec tools/x runs
// tools/x from git x HEAD~1): a runOptions value's, read as sh reads it;
// bisect run's command and arguments, which git quotes each for sh;
// submodule foreach's command, read as sh reads it when it is one word,
// or quoted each as bisect's. git's own options before the command (-c
// key=value, -p) are passed over; -c's are aliasConfigs'. A command that
// is another alias of aliases (name: value) without ! is replaced by
// its words, as git does (alias.base = rebase, alias.x = base --exec
// tools/x runs tools/x), up to maxAliasHops.
func aliasWords(value string, aliases map[string]string) []shellWord {
	words := splitCmdline(value)
	if len(words) == 0 {
		return nil
	}
	out := []shellWord{{text: words[0]}}
	i := 0
	for hops := 0; ; hops++ {
		for i < len(words) && strings.HasPrefix(words[i], "-") {
			if words[i] == "-c" || words[i] == "-C" {
				i++ // takes the next word
			}
			i++
		}
		if i >= len(words) {
			return out
		}
		next, ok := aliases[strings.ToLower(words[i])]
		if !ok || hops == maxAliasHops || strings.HasPrefix(strings.TrimSpace(next), "!") {
			break
		}
		words = slices.Concat(words[:i], splitCmdline(next), words[i+1:])
	}
	cmd, rest := words[i], words[i+1:]
	where, in := elsewhere[cmd][0], elsewhere[cmd][1]
	// argv is a command given as words git quotes each for sh.
	argv := func(args []string) {
		for k, a := range args {
			out = append(out, shellWord{text: a, arg: k > 0, where: where, in: in})
		}
	}
	shell := func(s string) {
		for _, w := range commandWords(s) {
			w.where, w.in = where, in
			out = append(out, w)
		}
	}
	switch cmd {
	case "bisect":
		if len(rest) > 1 && rest[0] == "run" {
			argv(rest[1:])
		}
		return out
	case "submodule":
		at := slices.Index(rest, "foreach")
		if at < 0 {
			return out
		}
		rest = rest[at+1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			rest = rest[1:] // --recursive, --quiet
		}
		if len(rest) == 1 {
			shell(rest[0])
		} else {
			argv(rest)
		}
		return out
	}
	for j := 0; j < len(rest); j++ {
		if v, ok := optionValue(rest, &j, runOptions[cmd]); ok {
			shell(v)
		}
	}
	return out
}

// maxAliasHops bounds the aliases aliasWords replaces in one (git
// refuses a loop of them).
const maxAliasHops = 16

// optionValue is the value words[*j] (and the word after it, *j then
// moved past it) gives one of opts, as parse-options reads them:
// --name=value, --name value, a prefix of --name, -x value, -xvalue, x
// anywhere in a cluster of short options. It reads more than git takes
// (a prefix another option shares, a letter another's value holds):
// what it names then is harmless.
func optionValue(words []string, j *int, opts []string) (string, bool) {
	w := words[*j]
	next := func() (string, bool) {
		if *j+1 >= len(words) {
			return "", false
		}
		*j++
		return words[*j], true
	}
	for _, o := range opts {
		if long, ok := strings.CutPrefix(o, "--"); ok {
			name, value, eq := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if !strings.HasPrefix(w, "--") || name == "" || !strings.HasPrefix(long, name) {
				continue
			}
			if eq {
				return value, true
			}
			return next()
		}
		if strings.HasPrefix(w, "--") || !strings.HasPrefix(w, "-") {
			continue
		}
		if k := strings.IndexByte(w[1:], o[1]); k >= 0 {
			if value := w[k+2:]; value != "" {
				return value, true
			}
			return next()
		}
	}
	return "", false
}

// assignment is a shell word that sets a variable for the command after.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellWord is a word of a command sh runs.
type shellWord struct {
	text string
	// arg: not a command's name (its first word past assignments) but an
	// argument, a redirection's file or an assignment's value.
	arg bool
	// where, when not "", says where git runs the command the word is
	// in when that is not (only) the working tree's root, and in is the
	// directory beneath the root it then runs in (where a relative word
	// is named; "" the root): a relative word is also said as not
	// covered (valuesNamed).
	where, in string
}

// reservedWords are sh's words after which a command's name still comes.
var reservedWords = []string{"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until"}

// commandWords are the words of every command sh runs in s, quotes and
// backslashes taken away: each command's (after ;, &, |, a newline, a
// reserved word, a parenthesis), and those in a command substitution,
// $(…) or `…`, quoted or not. A word whose value an expansion or a glob
// makes known only at run time ($HOME/x, tools/*.sh, "$(tools/x)"
// itself) is none; a ~ at a word's start is kept for expander where sh
// expands it, and made ./~ where sh leaves it (tildeAsSh). It reads s
// once, however deep its nesting; an unclosed quote ends it (sh then
// runs nothing of s: what was read is more than it runs).
func commandWords(s string) []shellWord {
	// frame is what a parenthesis or a substitution interrupted.
	type frame struct {
		subst       bool   // $( or `: the word it is in goes on after it
		closer      byte   // ) or `
		text        string // that word so far
		quoted, cmd bool
		redir       bool
	}
	var (
		out                            []shellWord
		stack                          []frame
		w                              strings.Builder
		inWord, unknown, quoted, redir bool
		cmd                            = true // the next word may be a command's name
		// plain is how many of the word's first bytes were written
		// unquoted, up to the first quoted one (mixed): for tildeAsSh.
		plain int
		mixed bool
	)
	// lit writes c, unquoted, to the word.
	lit := func(c byte) {
		w.WriteByte(c)
		if inWord = true; !mixed {
			plain++
		}
	}
	end := func() {
		if !inWord {
			return
		}
		text, known, lead := w.String(), !unknown, plain
		w.Reset()
		inWord, unknown, plain, mixed = false, false, 0, false
		switch {
		case redir:
			redir = false
			if known {
				out = append(out, shellWord{text: tildeAsSh(text, lead), arg: true})
			}
		case cmd && assignment.MatchString(text):
			if known {
				eq := strings.IndexByte(text, '=') + 1
				out = append(out, shellWord{text: tildeAsSh(text[eq:], lead-eq), arg: true})
			}
		case cmd && known && slices.Contains(reservedWords, text):
		case cmd:
			if known {
				out = append(out, shellWord{text: tildeAsSh(text, lead)})
			}
			cmd = false
		case known:
			out = append(out, shellWord{text: tildeAsSh(text, lead), arg: true})
		}
	}
	open := func(closer byte) { // a substitution, in the word read
		stack = append(stack, frame{subst: true, closer: closer, text: w.String(), quoted: quoted, cmd: cmd, redir: redir})
		w.Reset()
		inWord, unknown, quoted, redir, cmd, plain, mixed = false, false, false, false, true, 0, false
	}
	shut := func() {
		end()
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !f.subst {
			cmd = true
			return
		}
		w.WriteString(f.text)
		inWord, unknown, quoted, cmd, redir, mixed = true, true, f.quoted, f.cmd, f.redir, true
	}
	// substitution opens or shuts a command substitution at s[i], quoted
	// or not, and returns where reading goes on; false if none is there.
	substitution := func(i int) (int, bool) {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '(':
			open(')')
			return i + 1, true
		case s[i] == '`' && len(stack) > 0 && stack[len(stack)-1].closer == '`':
			shut()
			return i, true
		case s[i] == '`':
			open('`')
			return i, true
		}
		return i, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var top byte
		if len(stack) > 0 {
			top = stack[len(stack)-1].closer
		}
		if j, ok := substitution(i); ok {
			i = j
			continue
		}
		if quoted {
			switch {
			case c == '"':
				quoted = false
			case c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0:
				if i++; s[i] != '\n' {
					w.WriteByte(s[i])
				}
			case c == '$':
				w.WriteByte(c)
				unknown = true
			default:
				w.WriteByte(c)
			}
			continue
		}
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\n':
			end()
			cmd = true
		case c == '#' && !inWord:
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return out
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord, mixed = true, true
		case c == '"':
			quoted, inWord, mixed = true, true, true
		case c == '\\':
			if i+1 < len(s) {
				if i++; s[i] != '\n' {
					w.WriteByte(s[i])
					inWord, mixed = true, true
				}
			}
		case c == '(':
			end()
			stack = append(stack, frame{closer: ')'})
			cmd = true
		case c == ')' && top == ')':
			shut()
		case strings.IndexByte(";&|)", c) >= 0:
			end()
			cmd, redir = true, false
		case c == '<' || c == '>':
			if inWord && !unknown && strings.Trim(w.String(), "0123456789") == "" {
				w.Reset() // 2>: a descriptor's number, no word
				inWord, plain, mixed = false, 0, false
			}
			end()
			if redir = true; i+1 < len(s) && (s[i+1] == '&' || s[i+1] == '|') {
				i++ // >&1, >|: part of the operator
			}
		case strings.IndexByte("$*?[", c) >= 0:
			lit(c)
			unknown = true
		default:
			lit(c)
		}
	}
	if quoted {
		return out // an unclosed quote: the word is no whole one
	}
	end()
	return out
}

// tildeAsSh is word as sh takes its leading ~, plain being how many of
// its first bytes were unquoted: sh expands a ~ (~, ~/x, ~user/x; and an
// assignment's value's) only when the whole of its prefix, up to the
// first slash and that slash, is unquoted; otherwise ("~/x", '~/x',
// \~/x, ~"/x", dash and git 2.39 alike) the ~ is a name in the working
// directory, ./~/x here, which expander leaves.
func tildeAsSh(word string, plain int) string {
	if !strings.HasPrefix(word, "~") {
		return word
	}
	prefix := len(word)
	if i := strings.IndexByte(word, '/'); i >= 0 {
		prefix = i + 1
	}
	if plain >= prefix {
		return word
	}
	return "./" + word
}

// splitCmdline splits an alias into words as git's split_cmdline does:
// at blanks, single and double quotes keeping them, a backslash outside
// single quotes taking the next character as it is. An unclosed quote
// is nothing git runs.
func splitCmdline(s string) []string {
	var words []string
	var w strings.Builder
	var quote byte
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (isBlank(c) || c == '\n'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case quote == 0 && (c == '\'' || c == '"'):
			quote, inWord = c, true
		case c == quote:
			quote = 0
		default:
			if c == '\\' && quote != '\'' {
				if i++; i == len(s) {
					return nil
				}
				c = s[i]
			}
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// systemGitConfig is git's system-wide config file (Debian's git's
// $(prefix)/etc/gitconfig); a variable for tests.
var systemGitConfig = "/etc/gitconfig"

// globalConfigs are the person's own config files git reads for every
// repository: the system one, the XDG one and ~/.gitconfig.
func globalConfigs(home string) []string {
	out := []string{systemGitConfig}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if home != "" {
		out = append(out, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	return out
}

// gitRoot is where git resolves a repository's relative values: the
// working tree's root (core.worktree's, relative to the git directory
// g; the parent of a .git; a linked worktree's, which its gitdir file
// names), or g itself for a bare repository.
func gitRoot(g string, vars []gitVar) string {
	for _, v := range slices.Backward(vars) {
		if v.section == "core" && v.sub == "" && v.key == "worktree" && v.value != "" {
			if filepath.IsAbs(v.value) {
				return filepath.Clean(v.value)
			}
			return filepath.Join(g, v.value)
		}
	}
	if strings.EqualFold(filepath.Base(g), gitDir) {
		return filepath.Dir(g)
	}
	if b, err := readConfigFile(filepath.Join(g, "gitdir")); err == nil {
		if wt := strings.TrimSpace(string(b)); wt != "" {
			if !filepath.IsAbs(wt) {
				wt = filepath.Join(g, wt)
			}
			return filepath.Dir(wt)
		}
	}
	return g
}

// valuesNamed is what vars name: core.hooksPath's directory, and each
// word of any other value (programWords: gpg.program's whole value, an
// alias's leading ! dropped) that holds a slash and is no URL or ref,
// with notes on what is not known. A word that is a command's name is
// a program (gitNamed.arg false); a word given to one (arg true) may be
// what it runs (sh tools/x) or anything else (git log origin/main..x).
// A value's leading %(prefix)/ and a word's leading ~ are expanded as
// git and sh expand them (pathForms, expander; a ~user x does not know
// is a note). Relative ones are resolved in root (a bare repository's
// git directory, where git runs its hooks); none when root is "". An
// alias without ! naming another of vars' is read through it
// (aliasWords).
func valuesNamed(vars []gitVar, root string, x *expander) (out []gitNamed, notes []string) {
	aliases := map[string]string{} // the last of a name counts, as to git
	for _, v := range vars {
		if v.section == "alias" {
			aliases[v.key] = v.value
		}
	}
	for _, v := range slices.Concat(vars, aliasConfigs(vars)) {
		if slices.ContainsFunc(notPrograms, func(n [2]string) bool {
			return n[0] == v.section && (n[1] == "*" || n[1] == v.key)
		}) && !slices.Contains(programsAmong, [2]string{v.section, v.key}) {
			continue
		}
		hooks := v.section == "core" && v.sub == "" && v.key == "hookspath"
		why := v.name + " in " + shortPath(v.file)
		for _, form := range pathForms(v.value) {
			words := []shellWord{{text: form}}
			if !hooks {
				words = programWords(gitVar{section: v.section, key: v.key, value: form}, aliases)
			}
			for _, w := range words {
				if !hooks && (!strings.Contains(w.text, "/") || strings.HasPrefix(w.text, "refs/") || strings.Contains(w.text, "://")) {
					continue
				}
				if gpg := v.section == "gpg" && v.key == "program"; gpg && strings.HasPrefix(w.text, "~") && root != "" {
					// git 2.39 runs gpg.program as written, ~ and all: a
					// directory ~ in the working tree (and later gits
					// expand it, below).
					out = append(out, gitNamed{path: filepath.Join(root, w.text), why: why})
				}
				p, err := x.tilde(w.text)
				if err != nil {
					notes = x.say(notes, fmt.Sprintf("%s names %s (%v: what it names is not covered)", why, w.text, err))
					continue
				}
				switch {
				case p == "":
					continue
				case filepath.IsAbs(p):
				case root == "":
					continue
				default:
					if w.where != "" {
						// Named at the root (or in) all the same: where
						// git runs it, or harmlessly more.
						notes = x.say(notes, fmt.Sprintf("%s names %s, which git runs in %s (not covered there)", why, w.text, w.where))
					}
					p = filepath.Join(root, w.in, p)
				}
				out = append(out, gitNamed{path: filepath.Clean(p), dir: hooks, arg: w.arg, why: why})
			}
		}
	}
	return out, notes
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
