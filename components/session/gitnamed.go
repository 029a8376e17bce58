package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pinfold/pinfold/components/fs"
)

// The git configs of the workspace name paths the person's git runs or
// reads (a core.hooksPath, a core.fsmonitor program, an included file):
// the launcher protects what they name at the start (Config.Protected),
// and they can change while the session lives: the person approves fs's
// change of a .git/config, or edits one. So they are read again, with
// the same reader and bound as at the start, before each command (its
// worker's read-only paths) and when fs asks after a change the person
// approved; what they name is protected from then on, and what was
// protected stays protected.

// protected is every path protected beyond the built-in names: the
// configuration's, and what the git configs were found to name since.
func (s *Session) protected() []string {
	s.namedMu.Lock()
	defer s.namedMu.Unlock()
	return slices.Concat(s.cfg.Protected, s.named)
}

// refreshNamed reads the workspace's git configs again and adds what
// they name that is new to the session's protected paths (added). What
// could not be read is said once on the launcher's terminal (as at the
// start) and returned.
func (s *Session) refreshNamed() (added, notes []string) {
	if s.watch == nil {
		named, notes := fs.GitConfigNamedIn([]string{s.cfg.Workspace}, fs.MaxProtectedWalk)
		return s.addNamed(named, notes), notes
	}
	// With the watch, the files read are watched from then on. One
	// watched only after it was read may have changed between: read
	// again, until no new file is watched (bounded: a config made to
	// include a new file at each read is read maxGitConfigRereads times,
	// and the last read's files are watched all the same). The files
	// read last time are watched again first: one replaced by a rename
	// is new to the watch, not to the read.
	s.watch.rearm()
	for i := 0; ; i++ {
		named, notes, files := fs.GitConfigWatched([]string{s.cfg.Workspace}, fs.MaxProtectedWalk)
		fresh, watchNotes := s.watch.arm(files)
		notes = append(notes, watchNotes...)
		added = append(added, s.addNamed(named, notes)...)
		if !fresh || i == maxGitConfigRereads {
			return added, notes
		}
	}
}

// maxGitConfigRereads bounds refreshNamed's reads again.
const maxGitConfigRereads = 4

// addNamed adds to the session's protected paths what the git configs
// were found to name (named) that is new (added), and says once each
// what could not be read (notes), as at the start.
func (s *Session) addNamed(named, notes []string) (added []string) {
	s.namedMu.Lock()
	defer s.namedMu.Unlock()
	// A set: a config may name many thousands, every command.
	if s.namedSeen == nil {
		s.namedSeen, s.notesSaid = map[string]bool{}, map[string]bool{}
		for _, p := range s.cfg.Protected {
			s.namedSeen[p] = true
		}
	}
	for _, p := range named {
		if !s.namedSeen[p] {
			s.namedSeen[p] = true
			s.named = append(s.named, p)
			added = append(added, p)
		}
	}
	for _, n := range notes {
		if !s.notesSaid[n] {
			s.notesSaid[n] = true
			fmt.Fprintf(os.Stderr, "launcher: warning: not covered: %s\n", n)
		}
	}
	return added
}

// refreshForFS is fs's refresh (approve.Refresher): the git configs read
// again, and every path they were found to name since the start,
// relative to the workspace (fs had the start's in its bootstrap). A
// name that is not UTF-8 is none fs can reach, so none it is sent.
//
// What the change made the configs name that exists already is said to
// the person: protected from now on, it holds what was written before,
// perhaps by the agent while nothing named it (a .githooks filled first,
// then a hooksPath asked for), and the question showed the config, not
// that.
//
// It answers fs's recheck too (approve.ServeChecked): fs read an event
// of the watch on the git configs (configWatch) that concerns one. watch
// is the names fs tells the watch's events by from then on.
func (s *Session) refreshForFS() (protect, notes, watch []string) {
	added, notes := s.refreshNamed()
	if s.watch != nil {
		watch = s.watch.watched()
	}
	return s.forFS(added), notes, watch
}

// forFS tells the person of each of added (newly named) that exists
// already, and is every path named since the start, relative to the
// workspace, as fs takes them.
func (s *Session) forFS(added []string) (protect []string) {
	for _, p := range added {
		if _, err := os.Lstat(p); err == nil && s.cfg.Asker != nil {
			// Not waiting for the terminal: a command holds it.
			go s.cfg.Asker.Tell("fs: the git configs now name " + p + ", which exists already: it is protected from now on, but holds what was written before (the agent's, perhaps); look at it before you run git")
		}
	}
	s.namedMu.Lock()
	defer s.namedMu.Unlock()
	for _, p := range s.named {
		rel, err := filepath.Rel(s.cfg.Workspace, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || !utf8.ValidString(rel) {
			continue
		}
		protect = append(protect, rel)
	}
	return protect
}
