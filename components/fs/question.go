package fs

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pinfold/pinfold/internal/clip"
)

// configSays is, for a write of data to p where p is named as a git
// config (a repository's config or config.worktree, a .gitconfig, a
// NAME.gitconfig an include names), what of it git runs or reads, for
// the person's question: the question shows a write's first lines only,
// and a core.hooksPath or an alias's !command further down a long
// config is what the person says yes to. "" for any other file, or a
// config that sets nothing of the kind.
func configSays(p string, data []byte) string {
	base, dir := path.Base(p), path.Base(path.Dir(p))
	isConfig := (base == "config" || base == "config.worktree") && (dir == ".git" || strings.HasSuffix(dir, ".git") || strings.Contains(p, ".git/")) ||
		base == ".gitconfig" || strings.HasSuffix(base, ".gitconfig")
	if !isConfig {
		return ""
	}
	vars, err := parseGitConfig(data)
	if err != nil {
		return fmt.Sprintf("; git would not read it as a config (%v)", err)
	}
	const most = 8
	var said []string
	n := 0
	for _, v := range vars {
		if !worthSaying(v) {
			continue
		}
		if n++; n <= most {
			said = append(said, v.name+" = "+strconv.QuoteToASCII(clip.Bytes(v.value, 200)))
		}
	}
	if n == 0 {
		return ""
	}
	if n > most {
		said = append(said, fmt.Sprintf("and %d more", n-most))
	}
	return "; among what git runs or reads, it sets " + strings.Join(said, ", ")
}

// quietSections are the config sections that name no program, path or
// file for git to run or read; quietCore the same of core's keys.
var (
	quietSections = []string{"user", "color", "i18n", "advice", "column", "init", "branch", "pull", "push", "fetch", "log", "status", "gc", "pack", "index", "feature", "maintenance", "rerere"}
	quietCore     = []string{"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "abbrev", "compression", "quotepath", "checkstat", "trustctime", "untrackedcache", "splitindex", "preloadindex"}
	plainValue    = regexp.MustCompile(`(?i)^(true|false|yes|no|on|off|auto|always|never|-?[0-9]+[kmg]?)$`)
)

// worthSaying reports whether v may make git run or read something the
// agent wrote: an include, a hooks directory, a program, a remote's URL
// or a driver; not a name, a colour or a number.
func worthSaying(v gitVar) bool {
	switch {
	case v.noValue, plainValue.MatchString(strings.TrimSpace(v.value)):
		return false
	case v.section == "core":
		return !slices.Contains(quietCore, v.key)
	case v.section == "remote":
		return !slices.Contains([]string{"fetch", "push", "tagopt", "prune", "mirror"}, v.key) // a URL that is a path, an upload-pack
	case v.section == "submodule", v.section == "url":
		return true // an update !command, a URL rewritten
	}
	return !slices.Contains(quietSections, v.section)
}
