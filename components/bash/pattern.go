package bash

import (
	"path"
	"strconv"
	"strings"
)

// A word that is not a literal names whatever bash expands it to: a
// glob, a brace expansion or a $'…' in a path's component can name a
// protected one the text does not spell (a ninth hunt: >> .gi?/config,
// cp pre-commit .gi[t]/hooks/, tee -a .{git,x}/config and >>
// $'\x2egit/config' each wrote .git, where classify saw no .git). The
// analyzer reads no directory, so it asks what the pattern could match,
// not what it does.

// maxPatternPaths bounds the paths one word's pattern is read as, and
// maxPatternLen the length of a path-like part of it that is read (brace
// matching is quadratic in it); a word beyond either is taken as naming
// a protected path.
const (
	maxPatternPaths = 256
	maxPatternLen   = 1024
)

// classifyPattern is classify for a word that is not a literal: each
// path its pattern (Word.pattern) may expand to, braces expanded and
// each glob component that could match a protected name taken as that
// name. dotglob: the line may make * ? and [ ] match a leading dot.
func classifyPattern(w Word, dotglob bool, o Options) (rule, what string) {
	if w.Literal {
		return "", ""
	}
	var toks []string
	for _, tok := range patternTokens(w.pattern) {
		toks = append(toks, attached(tok)...)
	}
	for _, tok := range toks {
		if len(tok) > maxPatternLen && strings.ContainsAny(tok, "{*?[(") {
			return "structural.protected-path", "whatever the pattern " + quotedWord(tok[:64]+"…") + " matches, which is too long to read"
		}
		words, ok := expandBraces(tok, maxPatternPaths)
		if !ok {
			return "structural.protected-path", "whatever the brace expansion " + quotedWord(tok) + " makes, which is too much to read"
		}
		for _, p := range words {
			paths, ok := globPaths(p, dotglob, o)
			if !ok {
				return "structural.protected-path", "whatever the pattern " + quotedWord(p) + " matches, which may be a protected path"
			}
			for _, q := range paths {
				if rule, what := classify(q, o); rule != "" {
					return rule, what + ", which the pattern " + quotedWord(p) + " may match"
				}
			}
		}
	}
	return "", ""
}

// patternTokens splits a pattern as pathTokens splits a word, keeping
// the characters of globs, extended globs and brace expansions.
func patternTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/~+@%-*?[]{},!^()|:", r))
	})
}

// globPaths are the paths p is read as: p itself, and p with each
// component that is a glob replaced by each protected name it could
// match; false when there would be more than maxPatternPaths.
func globPaths(p string, dotglob bool, o Options) ([]string, bool) {
	names := protectedCandidates(o)
	paths := []string{""}
	for i, c := range strings.Split(p, "/") {
		var alts []string // the names first: .git/hoo*/x is the hooks
		if strings.ContainsAny(c, "*?[(") {
			for _, n := range names {
				if globMatch(c, n, dotglob) {
					alts = append(alts, n)
				}
			}
		}
		alts = append(alts, c)
		if len(paths)*len(alts) > maxPatternPaths {
			return nil, false
		}
		var next []string
		for _, q := range paths {
			for _, a := range alts {
				if i > 0 {
					a = q + "/" + a
				}
				next = append(next, a)
			}
		}
		paths = next
	}
	return paths, true
}

// protectedCandidates are the names a glob component is tried against:
// the protected names, .git and what is protected beneath it, .config
// and git, and each component of the policy's protected paths.
func protectedCandidates(o Options) []string {
	names := append([]string{".git", "hooks", ".config", "git"}, protectedNames()...)
	names = append(names, gitProtected()...)
	for _, tc := range toolConfigs {
		// Not rust-toolchain and rust-toolchain.toml: dist/* would match
		// them, as it matches any name without a leading dot.
		if strings.HasPrefix(tc[0], ".") {
			names = append(names, tc...)
		}
	}
	for _, base := range []string{".lefthook", ".lefthook-local"} {
		for _, ext := range []string{"yml", "yaml", "json", "jsonc", "toml"} {
			names = append(names, base+"."+ext)
		}
	}
	for _, e := range o.Protected {
		names = append(names, components(e)...)
	}
	return names
}

// globMatch reports whether the glob component pat could match name, as
// bash matches file names, erring towards a match: any case (nocaseglob
// may be set), any extended glob (@(.git), +(.)git), a pattern bash
// would take literally. A leading dot must be matched by a dot (.gi?,
// not ?git, * or [.]git) unless dotglob may be set.
func globMatch(pat, name string, dotglob bool) bool {
	ext := strings.Contains(pat, "(")
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") && !dotglob && !(ext && strings.Contains(pat, ".")) {
		return false
	}
	if ext {
		return true
	}
	pat = strings.ReplaceAll(pat, "[!", "[^")
	ok, err := path.Match(strings.ToLower(classesAsAny(pat)), strings.ToLower(name))
	return ok || err != nil
}

// classesAsAny turns each bracket expression holding a character class
// ([:alpha:]), a collating symbol ([.t.]) or an equivalence class
// ([=t=]) into ?, which path.Match knows: it knows none of them, and
// took .gi[[:alpha:]]/config for a pattern matching no .git (an
// eleventh hunt: it wrote .git/config). Any character, not the class's,
// so a class need not be read: a match the more, never one the fewer.
func classesAsAny(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		end := bracketEnd(pat, i)
		if end < 0 {
			b.WriteByte(pat[i])
			continue
		}
		in := pat[i : end+1]
		if strings.Contains(in, "[:") || strings.Contains(in, "[.") || strings.Contains(in, "[=") {
			in = "?"
		}
		b.WriteString(in)
		i = end
	}
	return b.String()
}

// bracketEnd is where the bracket expression opening at pat[i] closes,
// as bash reads one: a ] first (after ! or ^) is a member, and a [: [.
// or [= runs to its :] .] or =]; -1 when pat[i] opens none.
func bracketEnd(pat string, i int) int {
	if pat[i] != '[' {
		return -1
	}
	j := i + 1
	if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
		j++
	}
	if j < len(pat) && pat[j] == ']' {
		j++
	}
	for ; j < len(pat); j++ {
		switch {
		case pat[j] == ']':
			return j
		case pat[j] == '[' && j+1 < len(pat) && strings.IndexByte(":.=", pat[j+1]) >= 0:
			if k := strings.Index(pat[j+2:], string(pat[j+1])+"]"); k >= 0 {
				j += 2 + k + 1
			}
		}
	}
	return -1
}

// expandBraces expands s's brace expansions as bash does ({a,b},
// {1..3}, {a..e}, nested), up to limit words; false beyond it.
func expandBraces(s string, limit int) ([]string, bool) {
	open, end, alts := firstBrace(s)
	if open < 0 {
		return []string{s}, true
	}
	var out []string
	for _, a := range alts {
		more, ok := expandBraces(s[:open]+a+s[end+1:], limit-len(out))
		if !ok || len(out)+len(more) > limit {
			return nil, false
		}
		out = append(out, more...)
	}
	return out, true
}

// firstBrace finds the first brace expansion in s: where it opens and
// closes and its alternatives; open is -1 when there is none.
func firstBrace(s string) (open, end int, alts []string) {
	for open = strings.IndexByte(s, '{'); open >= 0; {
		depth, last := 0, open+1
		var parts []string
		for i := open; i < len(s); i++ {
			switch s[i] {
			case '{':
				depth++
			case ',':
				if depth == 1 {
					parts = append(parts, s[last:i])
					last = i + 1
				}
			case '}':
				if depth--; depth > 0 {
					continue
				}
				if parts != nil {
					return open, i, append(parts, s[last:i])
				}
				if seq := braceSequence(s[open+1 : i]); seq != nil {
					return open, i, seq
				}
				i = len(s) // not an expansion: look from the next {
			}
		}
		next := strings.IndexByte(s[open+1:], '{')
		if next < 0 {
			break
		}
		open += 1 + next
	}
	return -1, -1, nil
}

// braceSequence expands the inside of {X..Y} or {X..Y..N} (integers, or
// single characters), or is nil when it is not one. A sequence longer
// than maxPatternPaths is cut there: expandBraces then has too much.
func braceSequence(in string) []string {
	f := strings.Split(in, "..")
	if len(f) != 2 && len(f) != 3 {
		return nil
	}
	step := 1
	if len(f) == 3 {
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil
		}
		step = max(abs(n), 1)
	}
	a, errA := strconv.Atoi(f[0])
	b, errB := strconv.Atoi(f[1])
	isChars := errA != nil || errB != nil
	if isChars {
		if len(f[0]) != 1 || len(f[1]) != 1 {
			return nil
		}
		a, b = int(f[0][0]), int(f[1][0])
	}
	dir := 1
	if b < a {
		dir = -1
	}
	var out []string
	for v := a; dir*(b-v) >= 0 && len(out) <= maxPatternPaths; v += dir * step {
		if isChars {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, strconv.Itoa(v))
		}
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
