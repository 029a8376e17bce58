package bash

import (
	"slices"
	"strings"
)

// subcommandAliases are, per program, the spellings it reads as one
// subcommand, each group's canonical spelling first; a spelling of
// several words is a subcommand of a subcommand (docker container rm).
// An approval prefix whose operands start with one spelling of a group
// is matched as each of them (spellings), so "npm run deploy" covers npm
// rum deploy and "docker container rm" covers docker rm, and the other
// way round. Only the subcommand's place is rewritten: npm run i is the
// script i, not install.
//
// Where they come from: npm's lib/utils/cmd-list.js (npm 11.19, its
// aliases and typos; npm <cmd> --help says the same), cargo --list
// (1.95), docker's --help "Aliases" (28.2). pnpm and bun were not
// installed here (pnpm's package is a native binary): theirs are from
// their documentation, not verified on this machine; podman and nerdctl
// read docker's spellings as the same commands (their documentation;
// not installed here either). Yarn 1.22 (lib/cli.js) has no short
// aliases: it runs a script for any word that is not its command, as
// pnpm and bun do (scriptRunners).
var subcommandAliases = map[string][][]string{
	"npm": {
		{"run", "run-script", "rum", "urn"},
		{"install", "add", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall"},
		{"uninstall", "unlink", "remove", "rm", "r", "un"},
		{"update", "u", "up", "upgrade", "udpate"},
		{"ci", "clean-install", "ic", "install-clean", "isntall-clean"},
		{"install-test", "it"},
		{"install-ci-test", "cit", "clean-install-test", "sit"},
		{"test", "tst", "t", "run test"}, // npm test runs the script test
		{"start", "run start"},
		{"stop", "run stop"},
		{"restart", "run restart"},
		{"exec", "x"},
		{"link", "ln"},
		{"rebuild", "rb"},
		{"dedupe", "ddp"},
		{"config", "c"},
		{"view", "info", "show", "v"},
		{"owner", "author"},
		{"dist-tag", "dist-tags"},
		{"adduser", "add-user"},
		{"init", "create", "innit"},
		{"version", "verison"},
		{"publish"}, {"unpublish"}, {"deprecate"}, {"access"}, {"token"}, // abbreviated (npm pub)
	},
	"pnpm": {
		{"run", "run-script"},
		{"install", "i"},
		{"remove", "rm", "uninstall", "un"},
		{"update", "up", "upgrade"},
		{"test", "t", "tst", "run test"},
		{"link", "ln"},
	},
	"bun": {
		{"install", "i"},
		{"add", "a"},
		{"remove", "rm"},
		{"x", "bunx"},
	},
	"cargo": {
		{"build", "b"}, {"check", "c"}, {"doc", "d"}, {"run", "r"}, {"test", "t"}, {"remove", "rm"},
	},
	"docker":  dockerAliases,
	"podman":  dockerAliases,
	"nerdctl": dockerAliases,
}

var dockerAliases = [][]string{
	{"container rm", "container remove", "rm"},
	{"container run", "run"},
	{"container exec", "exec"},
	{"container kill", "kill"},
	{"container stop", "stop"},
	{"container start", "start"},
	{"container restart", "restart"},
	{"container create", "create"},
	{"container commit", "commit"},
	{"container cp", "cp"},
	{"container export", "export"},
	{"container update", "update"},
	{"container rename", "rename"},
	{"container attach", "attach"},
	{"container ls", "container list", "container ps", "ps"},
	{"image rm", "image remove", "rmi"},
	{"image push", "push"},
	{"image pull", "pull"},
	{"image build", "build", "builder build"},
	{"image tag", "tag"},
	{"image save", "save"},
	{"image load", "load"},
	{"image import", "import"},
	{"volume rm", "volume remove"},
	{"network rm", "network remove"},
	{"context rm", "context remove"},
	{"plugin rm", "plugin remove"},
	{"secret rm", "secret remove"},
	{"config rm", "config remove"},
	{"service rm", "service remove"},
	{"node rm", "node remove"},
	{"stack rm", "stack remove", "stack down"},
}

// scriptRunners run a package script for a subcommand that is none of
// theirs: yarn deploy is yarn run deploy.
var scriptRunners = map[string]bool{"yarn": true, "pnpm": true, "bun": true}

// abbreviating programs also take any unique start of a subcommand's
// name or alias (npm pub is npm publish; npm's deref), and a camel-case
// spelling of a hyphenated one (npm runScript).
var abbreviating = map[string]bool{"npm": true}

// spellings are the operand lists the program tool reads as ops (ops
// first): each group's spelling of the subcommand in ops's place,
// with or without a script runner's run. An abbreviation in the
// prefix (npm pub) is each spelling it may be the start of where it is
// none exactly.
func spellings(tool string, ops []string) [][]string {
	out := [][]string{ops}
	seen := map[string]bool{strings.Join(ops, " "): true}
	add := func(v []string) {
		if k := strings.Join(v, " "); !seen[k] && len(out) < 64 {
			seen[k] = true
			out = append(out, v)
		}
	}
	groups := subcommandAliases[tool]
	for i := 0; i < len(out); i++ {
		v := out[i]
		if len(v) == 0 {
			continue
		}
		exact := false
		for _, g := range groups {
			for _, s := range g {
				if sw := strings.Fields(s); len(sw) <= len(v) && slices.Equal(sw, v[:len(sw)]) {
					exact = true
					for _, o := range g {
						add(append(strings.Fields(o), v[len(sw):]...))
					}
				}
			}
		}
		if !exact && abbreviating[tool] && !strings.HasPrefix(v[0], "-") {
			for _, g := range groups {
				if slices.ContainsFunc(g, func(s string) bool { return isAbbrev(v[0], s) }) {
					for _, o := range g {
						add(append(strings.Fields(o), v[1:]...))
					}
				}
			}
		}
		if scriptRunners[tool] {
			if v[0] == "run" && len(v) > 1 {
				add(v[1:])
			} else if v[0] != "run" && v[0] != "run-script" {
				add(append([]string{"run"}, v...))
			}
		}
	}
	return out
}

// abbreviates reports whether tool abbreviates and reads w as the
// subcommand spelled s: w is a start of s (or its camel case) and no
// spelling of any subcommand in tool's table.
func abbreviates(tool, w, s string) bool {
	if !abbreviating[tool] || !isAbbrev(w, s) {
		return false
	}
	for _, g := range subcommandAliases[tool] {
		if slices.Contains(g, w) {
			return false
		}
	}
	return true
}

// isAbbrev reports whether w (in camel case or not) is a start of the
// one-word name s, as an abbreviating program reads it.
func isAbbrev(w, s string) bool {
	w = kebab(w)
	return w != "" && !strings.Contains(s, " ") && strings.HasPrefix(s, w)
}

// kebab spells a camel-case word as npm reads it: installTest is
// install-test.
func kebab(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'A' && c <= 'Z' {
			b.WriteByte('-')
			b.WriteByte(c | 0x20)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// canonicalSub is the canonical spelling of the one-word subcommand t
// of tool, for the built-in rules (npm pub is npm publish), or t.
func canonicalSub(tool, t string) string {
	for _, g := range subcommandAliases[tool] {
		if slices.Contains(g, t) {
			return g[0]
		}
	}
	if abbreviating[tool] {
		for _, g := range subcommandAliases[tool] {
			if slices.ContainsFunc(g, func(s string) bool { return isAbbrev(t, s) }) {
				return g[0]
			}
		}
	}
	return t
}
