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
// none exactly. At most 64 (the tables give 12 at most: npm install).
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
		if len(v) > 1 {
			for _, g := range resourceAliases[tool] {
				if slices.Contains(g, strings.ToLower(v[1])) {
					for _, o := range g {
						add(append([]string{v[0], o}, v[2:]...))
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

// optionSynonyms are, per program (or program and subcommand), the
// options it reads as one whose short letter does not start its long
// name (optionLiteral's rule covers those that do): each group's
// spellings are each other. From each program's --help here (GNU tar
// 1.34, curl 7.88, git 2.39, kubectl 1.32, coreutils 9.1 cp).
var optionSynonyms = map[string][][]string{
	"tar": {
		{"-A", "--catenate", "--concatenate"}, {"-d", "--diff", "--compare"}, {"-r", "--append"}, {"-t", "--list"},
		{"-x", "--extract", "--get"}, {"-g", "--listed-incremental"}, {"-G", "--incremental"}, {"-C", "--directory"},
		{"-T", "--files-from"}, {"-X", "--exclude-from"}, {"-W", "--verify"}, {"-O", "--to-stdout"}, {"-m", "--touch"},
		{"-p", "--preserve-permissions", "--same-permissions"}, {"-s", "--preserve-order", "--same-order"},
		{"-F", "--info-script", "--new-volume-script"}, {"-I", "--use-compress-program"}, {"-j", "--bzip2"},
		{"-J", "--xz"}, {"-z", "--gzip", "--gunzip", "--ungzip"}, {"-Z", "--compress", "--uncompress"},
		{"-h", "--dereference"}, {"-K", "--starting-file"}, {"-N", "--newer", "--after-date"},
		{"-P", "--absolute-names"}, {"-w", "--interactive", "--confirmation"}, {"-k", "--keep-old-files"},
		{"-U", "--unlink-first"},
	},
	"curl": {
		{"-E", "--cert"}, {"-K", "--config"}, {"-b", "--cookie"}, {"-I", "--head"}, {"-k", "--insecure"},
		{"-x", "--proxy"}, {"-U", "--proxy-user"}, {"-e", "--referer"}, {"-O", "--remote-name"},
		{"-X", "--request"}, {"-T", "--upload-file"}, {"-Z", "--parallel"},
	},
	"cp":           {{"-L", "--dereference"}, {"-P", "--no-dereference"}, {"-T", "--no-target-directory"}, {"-x", "--one-file-system"}},
	"kubectl":      {{"-l", "--selector"}},
	"git push":     {{"-n", "--dry-run"}, {"-u", "--set-upstream"}, {"-o", "--push-option"}},
	"git switch":   {{"-C", "--force-create"}},
	"git rebase":   {{"-x", "--exec"}, {"-X", "--strategy-option"}, {"-S", "--gpg-sign"}},
	"git commit":   {{"-c", "--reedit-message"}, {"-C", "--reuse-message"}, {"-S", "--gpg-sign"}},
	"git branch":   {{"-u", "--set-upstream-to"}},
	"git checkout": {{"-2", "--ours"}, {"-3", "--theirs"}},
	"git clean":    {{"-n", "--dry-run"}},
}

// optionImplies are, per program or program and subcommand, options
// that are several at once (git branch -D is --delete --force; cp -a is
// -dR --preserve=all).
var optionImplies = map[string]map[string][]string{
	"git branch": {"-D": {"--delete", "--force"}, "-M": {"--move", "--force"}, "-C": {"--copy", "--force"}},
	"cp":         {"-a": {"-R", "-d", "-p"}, "--archive": {"-R", "-d", "-p"}},
}

// bundlesFirst are the programs that read a first word without '-' as a
// group of short options (tar xzf a.tgz is tar -xzf a.tgz).
var bundlesFirst = map[string]bool{"tar": true}

// synonymArgs are the options the literal options of as are also, by
// the tables of tool and of tool and its subcommand sub (optionSynonyms,
// optionImplies, bundlesFirst), for optionLiteral to find beside them.
func synonymArgs(as []arg, tool, sub string) []arg {
	keys := []string{tool}
	if sub != "" {
		keys = append(keys, tool+" "+sub)
	}
	var out []arg
	add := func(s string) { out = append(out, arg{text: s, known: true, syn: true}) }
	for i, a := range as {
		t := a.text
		if !a.known || t == "--" {
			continue
		}
		if i == 0 && bundlesFirst[tool] && t != "" && t[0] != '-' {
			t = "-" + t
			add(t)
		}
		if len(t) < 2 || t[0] != '-' {
			continue
		}
		names := []string{t}
		if t[1] != '-' && len(t) > 2 {
			for j := 1; j < len(t); j++ {
				names = append(names, "-"+t[j:j+1])
			}
		}
		for _, k := range keys {
			for _, n := range names {
				for _, g := range optionSynonyms[k] {
					if slices.ContainsFunc(g, func(s string) bool { return s == n || len(n) > 3 && n[1] == '-' && strings.HasPrefix(s, n) }) {
						for _, s := range g {
							add(s)
						}
					}
				}
				for _, s := range optionImplies[k][n] {
					add(s)
				}
			}
		}
	}
	return out
}

// resourceAliases are, per program, the spellings of a resource type it
// reads as one in the word after its verb (kubectl get po is kubectl get
// pods): singular, plural and short name, from the Kubernetes API's
// short names (kubectl api-resources; no cluster here to ask, so not
// verified on this machine). An approval prefix's word there is matched
// as each spelling of its group.
var resourceAliases = map[string][][]string{
	"kubectl": kubeResources,
	"oc":      kubeResources,
}

var kubeResources = [][]string{
	{"pods", "pod", "po"}, {"services", "service", "svc"}, {"deployments", "deployment", "deploy"},
	{"namespaces", "namespace", "ns"}, {"secrets", "secret"}, {"configmaps", "configmap", "cm"},
	{"nodes", "node", "no"}, {"persistentvolumeclaims", "persistentvolumeclaim", "pvc"},
	{"persistentvolumes", "persistentvolume", "pv"}, {"statefulsets", "statefulset", "sts"},
	{"daemonsets", "daemonset", "ds"}, {"replicasets", "replicaset", "rs"}, {"jobs", "job"},
	{"cronjobs", "cronjob", "cj"}, {"ingresses", "ingress", "ing"}, {"serviceaccounts", "serviceaccount", "sa"},
	{"customresourcedefinitions", "customresourcedefinition", "crd", "crds"},
	{"horizontalpodautoscalers", "horizontalpodautoscaler", "hpa"}, {"networkpolicies", "networkpolicy", "netpol"},
	{"roles", "role"}, {"rolebindings", "rolebinding"}, {"clusterroles", "clusterrole"},
	{"clusterrolebindings", "clusterrolebinding"}, {"events", "event", "ev"}, {"endpoints", "ep"},
	{"replicationcontrollers", "replicationcontroller", "rc"}, {"storageclasses", "storageclass", "sc"},
	{"poddisruptionbudgets", "poddisruptionbudget", "pdb"},
}

// argForms are the ways tool may read the words as of a command, for
// matching against a prefix: as itself, and for a program with resource
// types (resourceAliases) each type of a TYPE/NAME word as TYPE NAME,
// of a list TYPE,TYPE as one TYPE, of TYPE.GROUP as TYPE, in any letter
// case (kubectl get Pods/x is kubectl get pods x). Only the first such
// word is read so; at most 16 forms.
func argForms(tool string, as []arg) [][]arg {
	out := [][]arg{as}
	if resourceAliases[tool] == nil {
		return out
	}
	for i, a := range as {
		if !a.known || a.text == "" || a.text[0] == '-' || !strings.ContainsAny(a.text, "/,.") && strings.ToLower(a.text) == a.text {
			continue
		}
		typ, name, slash := strings.Cut(strings.ToLower(a.text), "/")
		for _, t := range strings.Split(typ, ",") {
			if len(out) >= 16 {
				break
			}
			t, _, _ = strings.Cut(t, ".")
			f := append(slices.Clip(as[:i]), arg{text: t, known: true})
			if slash {
				f = append(f, arg{text: name, known: true})
			}
			out = append(out, append(f, as[i+1:]...))
		}
		break
	}
	return out
}
