package bash

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Built-in high-risk rules.
const (
	rPush    = "builtin.git-push"
	rPublish = "builtin.publish"
	rDeploy  = "builtin.deploy"
	rDestroy = "builtin.cloud-destroy"
	rDynamic = "builtin.dynamic"
)

var ruleVerbs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		rPush:    "sends commits to a remote",
		rPublish: "publishes to a package or image registry",
		rDeploy:  "changes a deployment",
		rDestroy: "destroys cloud or database resources",
	}
})

// subRules map a command's subcommand (the first word that is neither an
// option nor, perhaps, an option's value) to a rule. A key of two words
// is a subcommand and the next non-option word; it wins over the
// one-word key, and "" there means no rule (kubectl rollout status). "*"
// is any invocation with an argument.
var subRules = sync.OnceValue(func() map[string]map[string]string {
	return map[string]map[string]string{
		"npm":    {"publish": rPublish, "unpublish": rPublish},
		"yarn":   {"publish": rPublish, "npm publish": rPublish},
		"pnpm":   {"publish": rPublish},
		"bun":    {"publish": rPublish},
		"lerna":  {"publish": rPublish},
		"cargo":  {"publish": rPublish, "yank": rPublish},
		"twine":  {"upload": rPublish},
		"gem":    {"push": rPublish, "yank": rPublish},
		"poetry": {"publish": rPublish},
		"uv":     {"publish": rPublish},
		"hatch":  {"publish": rPublish},
		"flit":   {"publish": rPublish},
		"pdm":    {"publish": rPublish},
		"nuget":  {"push": rPublish, "delete": rPublish},
		"dotnet": {"nuget push": rPublish, "nuget delete": rPublish},
		"vsce":   {"publish": rPublish},
		"ovsx":   {"publish": rPublish},
		"gh": {
			"pr merge": rPush, "release create": rPublish, "release upload": rPublish, "release edit": rPublish,
			"release delete": rPublish, "repo delete": rDestroy,
		},
		"docker":  dockerRules(),
		"podman":  dockerRules(),
		"nerdctl": dockerRules(),
		"helm": {
			"install": rDeploy, "upgrade": rDeploy, "uninstall": rDeploy, "delete": rDeploy, "rollback": rDeploy, "push": rPublish,
		},
		"kubectl":    kubectlRules(),
		"oc":         kubectlRules(),
		"terraform":  terraformRules(),
		"tofu":       terraformRules(),
		"terragrunt": {"apply": rDeploy, "destroy": rDeploy, "run-all apply": rDeploy, "run-all destroy": rDeploy},
		"pulumi":     {"up": rDeploy, "update": rDeploy, "destroy": rDeploy, "stack rm": rDeploy},
		"serverless": {"deploy": rDeploy, "remove": rDeploy},
		"sls":        {"deploy": rDeploy, "remove": rDeploy},
		"fly":        {"deploy": rDeploy, "apps destroy": rDeploy},
		"flyctl":     {"deploy": rDeploy, "apps destroy": rDeploy},
		"netlify":    {"deploy": rDeploy},
		"firebase":   {"deploy": rDeploy},
		"cdk":        {"deploy": rDeploy, "destroy": rDeploy},
		"sam":        {"deploy": rDeploy, "delete": rDeploy},
		"wrangler":   {"deploy": rDeploy, "publish": rDeploy, "delete": rDeploy},
		"eb":         {"deploy": rDeploy, "terminate": rDeploy},
		"railway":    {"up": rDeploy},
		"gsutil":     {"rm": rDestroy, "rb": rDestroy, "mv": rDestroy},
		"dropdb":     {"*": rDestroy},
		"dropuser":   {"*": rDestroy},

		"ansible-playbook": {"*": rDeploy},
		"ansible":          {"*": rDeploy},
	}
})

var dockerRules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"push": rPublish, "image push": rPublish, "manifest push": rPublish, "compose push": rPublish,
		"stack deploy": rDeploy, "service create": rDeploy, "service update": rDeploy, "service rm": rDeploy,
		"service scale": rDeploy, "service rollback": rDeploy,
	}
})

var kubectlRules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"apply": rDeploy, "delete": rDeploy, "create": rDeploy, "replace": rDeploy, "patch": rDeploy,
		"rollout": rDeploy, "rollout status": "", "rollout history": "",
		"scale": rDeploy, "autoscale": rDeploy, "edit": rDeploy, "set": rDeploy, "label": rDeploy, "annotate": rDeploy,
		"drain": rDeploy, "cordon": rDeploy, "uncordon": rDeploy, "taint": rDeploy, "run": rDeploy, "expose": rDeploy,
		"exec": rDeploy, "cp": rDeploy, "debug": rDeploy,
	}
})

var terraformRules = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"apply": rDeploy, "destroy": rDeploy, "import": rDeploy, "taint": rDeploy, "untaint": rDeploy, "force-unlock": rDeploy,
		"state rm": rDeploy, "state mv": rDeploy, "state push": rDeploy, "state replace-provider": rDeploy,
		"workspace delete": rDeploy,
	}
})

// special are commands whose risky forms do not fit subRules.
var special = sync.OnceValue(func() map[string]func(sc *SimpleCommand) *finding {
	return map[string]func(sc *SimpleCommand) *finding{
		"git":     gitRisk,
		"docker":  dockerBuildPush,
		"podman":  dockerBuildPush,
		"nerdctl": dockerBuildPush,
		"mvn":     mavenRisk,
		"mvnw":    mavenRisk,
		"gradle":  gradleRisk,
		"gradlew": gradleRisk,
		"aws":     awsRisk,
		"gcloud":  gcloudRisk,
		"az":      azRisk,
		"psql":    sqlRisk("-c", "--command"),
		"mysql":   sqlRisk("-e", "--execute"),
		"mariadb": sqlRisk("-e", "--execute"),
		"redis-cli": func(sc *SimpleCommand) *finding {
			for i, w := range sc.Words[1:] {
				if t := strings.ToLower(w.Text); t == "flushall" || t == "flushdb" {
					return mkFinding(rDestroy, "redis-cli "+w.Text, i+1)
				}
			}
			return nil
		},
		"vercel": func(sc *SimpleCommand) *finding {
			for i, w := range sc.Words {
				if w.Text == "--prod" {
					return mkFinding(rDeploy, "vercel --prod", i)
				}
			}
			cs := cands(sc.Words, 1)
			if len(cs) == 0 {
				return mkFinding(rDeploy, "vercel", 0)
			}
			switch t := sc.Words[cs[0]].Text; t {
			case "deploy", "remove", "rm", "promote", "rollback", "redeploy":
				return mkFinding(rDeploy, "vercel "+t, cs[0])
			}
			return nil
		},
	}
})

func mkFinding(rule, what string, at int) *finding {
	return &finding{rule, what + " " + ruleVerbs()[rule], at}
}

// highRisk applies the built-in high-risk rules.
func highRisk(sc *SimpleCommand) *finding {
	name := baseName(sc)
	if name == "" {
		return nil
	}
	if f, ok := special()[name]; ok {
		if r := f(sc); r != nil {
			return r
		}
	}
	m, ok := subRules()[name]
	if !ok {
		return nil
	}
	ws := sc.Words
	if r, ok := m["*"]; ok {
		for _, w := range ws[1:] {
			if !w.isOpt() {
				return mkFinding(r, name, 0)
			}
		}
		return nil
	}
	for _, i := range cands(ws, 1) {
		if !ws[i].Literal {
			continue
		}
		t := ws[i].Text
		if n := nextWord(ws, i+1); n >= 0 && ws[n].Literal {
			if r, ok := m[t+" "+ws[n].Text]; ok {
				if r == "" {
					return nil
				}
				return mkFinding(r, name+" "+t+" "+ws[n].Text, n)
			}
		}
		if r := m[t]; r != "" {
			return mkFinding(r, name+" "+t, i)
		}
		if r := m[canonicalSub(name, t)]; r != "" {
			return mkFinding(r, name+" "+t+" ("+name+" reads it as "+canonicalSub(name, t)+")", i)
		}
	}
	return nil
}

// cands are the words that may be a command's subcommand: from `from`
// on, each word that is not an option up to the first one that does not
// follow an option written without '=' (which may be that option's
// value, or a flag's neighbour).
func cands(ws []Word, from int) []int {
	var out []int
	afterOpt := false
	for i := from; i < len(ws); i++ {
		w := ws[i]
		if w.Literal && w.Text == "--" {
			break
		}
		if w.isOpt() {
			afterOpt = !strings.Contains(w.Text, "=")
			continue
		}
		out = append(out, i)
		if !afterOpt {
			break
		}
		afterOpt = false
	}
	return out
}

// nextWord is the index of the first word from i on that is not an
// option, or -1.
func nextWord(ws []Word, i int) int {
	for ; i < len(ws); i++ {
		if !ws[i].isOpt() {
			return i
		}
	}
	return -1
}

// nonOpts are the indexes of the literal words from `from` on that are
// not options.
func nonOpts(ws []Word, from int) []int {
	var out []int
	for i := from; i < len(ws); i++ {
		if ws[i].Literal && !ws[i].isOpt() {
			out = append(out, i)
		}
	}
	return out
}

// gitRisk: git push in any spelling (git's global options are already
// taken out of Words), and the other commands that send to a remote.
func gitRisk(sc *SimpleCommand) *finding {
	ws := sc.Words
	if len(ws) < 2 || !ws[1].Literal {
		return nil
	}
	switch ws[1].Text {
	case "push", "send-pack":
		return mkFinding(rPush, "git "+ws[1].Text, 1)
	case "subtree":
		for i, w := range ws[2:] {
			if w.Text == "push" {
				return mkFinding(rPush, "git subtree push", i+2)
			}
		}
	case "lfs":
		if n := nextWord(ws, 2); n >= 0 && ws[n].Text == "push" {
			return mkFinding(rPush, "git lfs push", n)
		}
	case "svn":
		if n := nextWord(ws, 2); n >= 0 && ws[n].Text == "dcommit" {
			return mkFinding(rPush, "git svn dcommit", n)
		}
	case "p4":
		if n := nextWord(ws, 2); n >= 0 && ws[n].Text == "submit" {
			return mkFinding(rPush, "git p4 submit", n)
		}
	}
	return nil
}

// dockerBuildPush: docker build (buildx build, buildx bake, image build)
// that pushes its result.
func dockerBuildPush(sc *SimpleCommand) *finding {
	ws := sc.Words
	cs := cands(ws, 1)
	if len(cs) == 0 {
		return nil
	}
	first := ws[cs[0]].Text
	if first != "build" && first != "buildx" && first != "image" && first != "builder" {
		return nil
	}
	for i, w := range ws {
		t := w.Text
		if t == "--push" || strings.HasPrefix(t, "--push=") && t != "--push=false" ||
			strings.Contains(t, "type=registry") || strings.Contains(t, "push=true") {
			return mkFinding(rPublish, sc.Words[0].Text+" "+first+" "+t, i)
		}
	}
	return nil
}

func mavenRisk(sc *SimpleCommand) *finding {
	for _, i := range nonOpts(sc.Words, 1) {
		t := sc.Words[i].Text
		if t == "deploy" || strings.HasSuffix(t, ":deploy") || strings.HasPrefix(t, "deploy:") || t == "release:perform" {
			return mkFinding(rPublish, "maven "+t, i)
		}
	}
	return nil
}

func gradleRisk(sc *SimpleCommand) *finding {
	for _, i := range nonOpts(sc.Words, 1) {
		t := sc.Words[i].Text
		task := t[strings.LastIndexByte(t, ':')+1:]
		if strings.HasPrefix(task, "publish") && !strings.HasSuffix(task, "MavenLocal") || task == "uploadArchives" {
			return mkFinding(rPublish, "gradle "+t, i)
		}
	}
	return nil
}

func awsRisk(sc *SimpleCommand) *finding {
	ws := sc.Words
	idx := nonOpts(ws, 1)
	for k, i := range idx {
		t := ws[i].Text
		next := ""
		if k+1 < len(idx) {
			next = ws[idx[k+1]].Text
		}
		switch {
		case strings.HasPrefix(t, "delete-") || strings.HasPrefix(t, "terminate-"):
			return mkFinding(rDestroy, "aws "+t, i)
		case t == "s3" && (next == "rm" || next == "rb" || next == "mv"):
			return mkFinding(rDestroy, "aws s3 "+next, idx[k+1])
		case t == "s3" && next == "sync":
			for j, w := range ws {
				if w.Text == "--delete" {
					return mkFinding(rDestroy, "aws s3 sync --delete", j)
				}
			}
		case t == "deploy" || t == "create-stack" || t == "update-stack" || t == "update-function-code" ||
			t == "update-service" || t == "create-deployment":
			return mkFinding(rDeploy, "aws "+t, i)
		}
	}
	return nil
}

func gcloudRisk(sc *SimpleCommand) *finding {
	ws := sc.Words
	idx := nonOpts(ws, 1)
	for k, i := range idx {
		switch t := ws[i].Text; {
		case t == "delete":
			return mkFinding(rDestroy, "gcloud … delete", i)
		case t == "storage" && k+1 < len(idx) && (ws[idx[k+1]].Text == "rm" || ws[idx[k+1]].Text == "mv"):
			return mkFinding(rDestroy, "gcloud storage "+ws[idx[k+1]].Text, idx[k+1])
		case t == "deploy":
			return mkFinding(rDeploy, "gcloud … deploy", i)
		}
	}
	return nil
}

func azRisk(sc *SimpleCommand) *finding {
	ws := sc.Words
	idx := nonOpts(ws, 1)
	for k, i := range idx {
		switch t := ws[i].Text; {
		case t == "delete" || strings.HasPrefix(t, "delete-"):
			return mkFinding(rDestroy, "az … "+t, i)
		case t == "deploy":
			return mkFinding(rDeploy, "az … deploy", i)
		case t == "deployment" && k+2 < len(idx) && ws[idx[k+2]].Text == "create":
			return mkFinding(rDeploy, "az deployment … create", idx[k+2])
		}
	}
	return nil
}

var destructiveSQL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(drop|truncate|delete)\b`) })

// sqlRisk: a database client given SQL that drops, truncates or deletes.
func sqlRisk(short, long string) func(sc *SimpleCommand) *finding {
	return func(sc *SimpleCommand) *finding {
		ws := sc.Words
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			var sql Word
			at := i
			switch {
			case t == short || t == long:
				if i+1 >= len(ws) {
					continue
				}
				sql, at = ws[i+1], i+1
				i++
			case strings.HasPrefix(t, long+"="):
				sql = ws[i]
				sql.Text = strings.TrimPrefix(t, long+"=")
			case strings.HasPrefix(t, short) && !strings.HasPrefix(t, "--") && len(t) > len(short):
				sql = ws[i]
				sql.Text = t[len(short):]
			default:
				continue
			}
			if m := destructiveSQL().FindString(sql.Text); m != "" {
				return &finding{rDestroy, baseName(sc) + " runs SQL holding " + strings.ToUpper(m) + ", which " + ruleVerbs()[rDestroy], at}
			}
			if !sql.Literal {
				return &finding{rDynamic, "the SQL " + baseName(sc) + " " + quotedWord(t) + " runs is not a literal", at}
			}
		}
		return nil
	}
}

// sensitiveNames are commands whose arguments decide what they run or
// whether they are high-risk: arguments added at run time (xargs) make
// them need approval.
var sensitiveNames = sync.OnceValue(func() map[string]bool {
	m := set("eval", "source", ".", "trap", "su", "watch", "find", "git", "rm", "rsync", "chmod", "install", "setcap",
		"alias", "hash", "enable", "shopt", "xargs", "busybox", "python", "python3", "node", "perl", "ruby", "php",
		// They delete one file each, but every one xargs gives them (a hunt).
		"unlink", "rmdir", "shred", "srm", "wipe", "trash-put", "trash", "rmtrash", "gvfs-trash", "gio", "kioclient5", "mv",
		"rename", "rename.ul", "prename", "file-rename", "perl-rename", "mmv")
	for n := range subRules() {
		m[n] = true
	}
	for n := range special() {
		m[n] = true
	}
	for n := range shells() {
		m[n] = true
	}
	for n := range wrappers() {
		m[n] = true
	}
	for n := range systemCommands() {
		m[n] = true
	}
	for k := range runners() {
		m[k[0]] = true
	}
	return m
})

func sensitive(name string) bool { return sensitiveNames()[name] || isPath(name) }

// dynamicArgs: arguments known only at run time where they decide what
// a command does.
func dynamicArgs(sc *SimpleCommand) *finding {
	ws := sc.Words
	name := baseName(sc)
	dyn := func(at int, why string) *finding { return &finding{rDynamic, why, at} }
	switch {
	case name == "":
		return nil
	case name == "git":
		if len(ws) > 1 && !ws[1].Literal {
			return dyn(1, "git's subcommand "+ws[1].Text+" is not a literal")
		}
		// git rm's -f may hide in a quoted expansion as rm's -r may
		// ("${u:--f}", "--for${u}ce": a hunt); a hidden option of git
		// clean could only make it a dry run.
		if len(ws) > 1 && (ws[1].Text == "clean" || ws[1].Text == "rm") {
			return optionLike(ws, 2, ws[1].Text == "rm", "git "+ws[1].Text)
		}
		return nil
	case name == "rm":
		return optionLike(ws, 1, true, "rm")
	case name == "rsync" || name == "find":
		// A quoted expansion may be an option too: "$x" holding -delete,
		// -exec or --delete (a hunt); an option's value is not one.
		return optionLike(ws, 1, true, name)
	case name == "chmod":
		for i := 1; i < len(ws); i++ {
			if t := ws[i].Text; ws[i].Literal && (t == "-R" || t == "--recursive" || t == "-v" || t == "-c" || t == "-f" ||
				strings.HasPrefix(t, "--")) {
				continue
			}
			if !ws[i].Literal {
				return dyn(i, "the mode chmod is given is not a literal")
			}
			return nil
		}
	case name == "alias":
		for i, w := range ws[1:] {
			if strings.Contains(w.Text, "=") {
				return dyn(i+1, "alias changes what a command name runs")
			}
		}
	case name == "hash" || name == "enable":
		// -p (a path for a name) and enable's -f (a shared object to load)
		// in any cluster or spelling: -rp, -p/usr/bin/rm, -nf (a re-test),
		// or options known only at run time.
		flags := "p"
		if name == "enable" {
			flags = "f"
		}
		for i, w := range ws[1:] {
			t := w.Text
			if t == "--" {
				break
			}
			letters := ""
			if w.Literal && len(t) > 1 && t[0] == '-' {
				letters = t[1:]
				if i := strings.IndexFunc(letters, func(r rune) bool { return r < 'a' || r > 'z' }); i >= 0 {
					letters = letters[:i] // -p/usr/bin/rm: the value starts there
				}
			}
			if !w.Literal && w.mayBeOption() || strings.ContainsAny(letters, flags) {
				return dyn(i+1, name+" "+quotedWord(t)+" changes what a command name runs")
			}
		}
	case name == "shopt":
		for i, w := range ws[1:] {
			if w.Text == "expand_aliases" {
				return dyn(i+1, "shopt expand_aliases lets aliases change what command names run")
			}
		}
	}
	_, sub := subRules()[name]
	_, spec := special()[name]
	if sub || spec {
		if cs := cands(ws, 1); len(cs) > 0 && !ws[cs[len(cs)-1]].Literal {
			i := cs[len(cs)-1]
			return dyn(i, name+"'s subcommand "+ws[i].Text+" is not a literal")
		}
	}
	return nil
}

// optionLike finds a word that is not a literal where an option may
// stand (before "--"): one that may expand to -r, -delete, --delete...
// quoted decides whether a quoted expansion (one field) counts too.
func optionLike(ws []Word, from int, quoted bool, name string) *finding {
	for i := from; i < len(ws); i++ {
		w := ws[i]
		if w.Literal && w.Text == "--" {
			return nil
		}
		if w.Literal && optionValues(name, w.Text) {
			i++ // the option's value, which is not an option
			continue
		}
		if !w.Literal && w.mayBeOption() && (quoted || !w.single) {
			return &finding{rDynamic, name + " is given " + quotedWord(w.Text) + ", which is not a literal and may expand to an option", i}
		}
	}
	return nil
}

// evalVars are variables bash turns into code of its own: aliases and the
// command hash (BASH_ALIASES, BASH_CMDS), the trace and prompt strings it
// expands (PS4 under set -x, PROMPT_COMMAND).
var evalVars = []string{"BASH_ALIASES", "BASH_CMDS", "PS4", "PROMPT_COMMAND"}

// varWriters are builtins that set a variable named by an argument.
var varWriters = sync.OnceValue(func() map[string]bool {
	return set("read", "mapfile", "readarray", "printf", "declare", "typeset", "local", "export", "readonly", "getopts", "let", "unset", "wait")
})

// shellEval finds a command that makes bash run code the analyzer did
// not see: an option that turns aliases on (set -o posix, shopt -s
// expand_aliases, or options not known before run time), a builtin that
// writes one of evalVars by name (read PS4, printf -v BASH_ALIASES[x]),
// and a prompt expansion (${x@P}) anywhere in its words.
func shellEval(sc *SimpleCommand) *finding {
	name := baseName(sc)
	for i, w := range sc.Words {
		if w.prompt {
			return mkFinding("builtin.shell-eval", "${…@P} expands its value as a prompt, running any command substitution in it", i)
		}
	}
	for _, r := range sc.Redirects {
		if r.Target.prompt {
			return mkFinding("builtin.shell-eval", "${…@P} expands its value as a prompt, running any command substitution in it", 0)
		}
	}
	for _, a := range sc.Assigns {
		if a.Value.prompt {
			return mkFinding("builtin.shell-eval", "${…@P} expands its value as a prompt, running any command substitution in it", 0)
		}
		if slices.Contains(evalVars, a.Name) {
			return mkFinding("builtin.shell-eval", "setting "+a.Name+" gives bash code to run", 0)
		}
	}
	switch name {
	case "set", "shopt":
		for i, w := range sc.Words[1:] {
			if !w.Literal {
				return mkFinding("builtin.shell-eval", name+" is given options known only at run time, which may turn on aliases", i+1)
			}
			if t := w.Text; t == "posix" || t == "--posix" || t == "expand_aliases" {
				return mkFinding("builtin.shell-eval", name+" "+t+" turns on aliases, whose definitions can hide commands", i+1)
			}
		}
	}
	if varWriters()[name] {
		for i, w := range sc.Words[1:] {
			for _, v := range evalVars {
				if t := strings.TrimLeft(w.Text, "-v"); strings.HasPrefix(t, v) || strings.Contains(w.Text, v) && !w.Literal {
					return mkFinding("builtin.shell-eval", name+" writes "+v+", which bash runs as code", i+1)
				}
			}
		}
	}
	if f := assignedVars(sc); f != nil {
		return f
	}
	if f := subscriptCode(sc); f != nil {
		return f
	}
	return codeArgs(sc, name)
}

// subscriptCode finds, anywhere in a command (its words, values,
// here-strings and here-documents), quoted text with a command
// substitution in an array subscript or a compound value (Word.sub):
// an integer variable (OPTIND, RANDOM, one declared -i on an earlier
// line) evaluates what it is given as arithmetic, and a subscript's
// substitution runs (a re-test: OPTIND='a[$(rm -rf src)]' was
// automatic, and so were read, printf -v and mapfile giving it so).
func subscriptCode(sc *SimpleCommand) *finding {
	words := slices.Clone(sc.Words)
	for _, a := range sc.Assigns {
		words = append(words, a.Value)
	}
	for _, r := range sc.Redirects {
		words = append(words, r.Target, r.body)
	}
	for _, l := range sc.Wrappers {
		words = append(words, l.Words...)
	}
	for i, w := range words {
		if w.sub {
			return &finding{"builtin.shell-eval", "quoted text with a command substitution in an array subscript or a compound value, which bash runs when it evaluates the text as arithmetic (an integer variable) or assigns it to an array", min(i, len(sc.Words))}
		}
	}
	return nil
}

// assignedVars finds a ${NAME:=…} or ${NAME=…} anywhere in a command
// that sets one of evalVars, or a variable that changes which code
// programs run (BASH_ENV, LD_PRELOAD, PATH): an assignment like any
// other (a hunt: ": ${BASH_CMDS[ls]:=/usr/bin/rm}; ls -rf src" was
// automatic, and deleted src).
func assignedVars(sc *SimpleCommand) *finding {
	words := slices.Clone(sc.Words)
	for _, a := range sc.Assigns {
		words = append(words, a.Value)
	}
	for _, r := range sc.Redirects {
		words = append(words, r.Target)
	}
	for _, l := range sc.Wrappers {
		words = append(words, l.Words...)
	}
	for _, w := range words {
		for _, v := range w.assigns {
			if slices.Contains(evalVars, v) {
				return &finding{"builtin.shell-eval", "${" + v + ":=…} sets " + v + ", which bash runs as code", 0}
			}
			if isExecEnv(v) {
				return &finding{"builtin.shell-eval", "${" + v + ":=…} sets " + v + ", which changes which code programs run", 0}
			}
		}
	}
	return nil
}

// lateEval are builtins that take a word as a variable name (with a
// subscript), a compound value or arithmetic, and so expand what quotes
// kept in it: declare 'a[$(cmd)]=1', printf -v 'a[$(cmd)]', test -v,
// let 'a[$(cmd)]'.
var lateEval = sync.OnceValue(func() map[string]bool {
	return set("declare", "typeset", "local", "readonly", "export", "let", "printf", "read", "getopts", "unset", "wait",
		"test", "[", "mapfile", "readarray", "compgen")
})

// codeArgs finds a builtin that runs one of its arguments as code, or
// expands what quoting kept in one (a hunt: mapfile -C 'rm -rf src;:'
// and declare -a 'a=($(touch x))' were automatic and ran).
func codeArgs(sc *SimpleCommand, name string) *finding {
	if !lateEval()[name] {
		return nil
	}
	for i, w := range sc.Words[1:] {
		t := w.Text
		if w.Literal && len(t) > 1 && t[0] == '-' && t[1] != '-' {
			switch {
			case (name == "mapfile" || name == "readarray") && strings.ContainsRune(t[1:], 'C'):
				return &finding{"builtin.shell-eval", name + " -C runs its callback as shell code", i + 1}
			case name == "compgen" && strings.ContainsAny(t[1:], "CFW"):
				return &finding{"builtin.shell-eval", "compgen -C, -F and -W run or expand their argument as shell code", i + 1}
			}
		}
		// test and [ evaluate only -v's and -R's operand, printf only
		// -v's; compgen's word is a prefix (its -W list is above).
		prev := sc.Words[i].Text // the word before w
		var evaluated bool
		switch name {
		case "test", "[":
			evaluated = i > 0 && (prev == "-v" || prev == "-R")
		case "printf":
			evaluated = i > 0 && prev == "-v" || strings.HasPrefix(t, "-v")
		case "compgen":
		default:
			evaluated = true
		}
		if w.late && evaluated {
			return &finding{"builtin.shell-eval", name + " is given " + quotedWord(t) + ", quoted text that bash expands after all as a name, subscript, value or arithmetic: a command substitution in it runs", i + 1}
		}
	}
	// A value is evaluated again only for an integer, array or nameref
	// variable: declare -i n='a[$(cmd)]', declare -a a='($(cmd))'.
	evaluating := false
	for _, w := range sc.Words[1:] {
		if t := w.Text; w.Literal && len(t) > 1 && (t[0] == '-' || t[0] == '+') && strings.ContainsAny(t[1:], "iaAn") {
			evaluating = true
		}
	}
	for _, a := range sc.Assigns {
		if a.Value.late && evaluating {
			return &finding{"builtin.shell-eval", name + " gives " + a.Name + " " + quotedWord(a.Value.Text) + ", quoted text that bash expands after all for an integer, array or nameref variable", 0}
		}
	}
	return nil
}

// findValued are find's primaries that take one argument, which is not
// an option whatever it holds (find . -name "$pat").
var findValued = sync.OnceValue(func() map[string]bool {
	return set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
		"-ilname", "-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid", "-gid", "-newer", "-anewer", "-cnewer",
		"-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-used", "-links", "-inum", "-samefile", "-maxdepth",
		"-mindepth", "-fstype", "-context", "-regextype", "-printf")
})

// rsyncValued are rsync's options that take a separate value (--opt v;
// --opt=v is one word): the value is not an option, nor a source or the
// destination.
var rsyncValued = sync.OnceValue(func() map[string]bool {
	return set("--exclude", "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from",
		"--link-dest", "--compare-dest", "--copy-dest", "--backup-dir", "--suffix", "--chmod", "--chown", "--timeout",
		"--bwlimit", "--max-size", "--min-size", "--partial-dir", "--temp-dir", "-T", "--log-file", "--password-file",
		"--port", "--out-format", "--log-file-format", "-B", "--block-size", "-M", "--remote-option", "--usermap",
		"--groupmap", "--info", "--debug", "--iconv", "--sockopts", "--protocol", "--checksum-choice", "--cc",
		"--compress-choice", "--zc", "--compress-level", "--zl", "--skip-compress", "--max-delete", "--modify-window",
		"--address", "--contimeout", "--outbuf", "--stop-after", "--stop-at", "--write-batch", "--only-write-batch",
		"--read-batch", "--max-alloc", "--early-input", "--copy-as", "--checksum-seed", "-e", "--rsh", "--rsync-path",
		// Missed until an eighth hunt (rsync --delete empty/ src -@ 1 backed
		// up 1, not src): the rest of rsync 3.x's --help, its deprecated
		// --log-format and the daemon's --config and --dparam.
		"-@", "--compress-threads", "--zt", "--stderr", "--log-format", "--confine-root", "--config", "--dparam")
})

// rsyncShortValued are rsync's short options that take a value: in a
// group (-aT DIR, -v@ 1) the last letter takes the next word, another
// the rest of the word.
const rsyncShortValued = "fTBMe@"

// rsyncValue reports a word of rsync's whose value is the next word:
// one of rsyncValued, or a group of short options ending in a letter
// that takes one.
func rsyncValue(t string) bool {
	if rsyncValued()[t] {
		return true
	}
	if len(t) < 2 || t[0] != '-' || t[1] == '-' {
		return false
	}
	i := strings.IndexAny(t[1:], rsyncShortValued)
	return i == len(t)-2
}

// optionValues reports an option of name's (find, rsync) that takes the
// next word as its value.
func optionValues(name, t string) bool {
	switch name {
	case "find":
		return findValued()[t] || strings.HasPrefix(t, "-newer")
	case "rsync":
		return rsyncValue(t)
	}
	return false
}
