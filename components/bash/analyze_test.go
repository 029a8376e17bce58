package bash

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/policy"
)

func analyze(t *testing.T, src string) *Analysis {
	t.Helper()
	a, err := Analyze(src)
	if err != nil {
		t.Fatalf("Analyze(%q): %v", src, err)
	}
	return a
}

func names(a *Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		out = append(out, joinWords(c.Words))
	}
	return out
}

func TestAnalyzeFindsEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`a | b && c || d; e & f`, []string{"a", "b", "c", "d", "e", "f"}},
		{`(a; { b; }) | c`, []string{"a", "b", "c"}},
		{`x=$(a) y=` + "`b`" + ` c "$(d)" > "$(e)"`, []string{"e", "a", "b", "d", "c $(d)"}},
		{`if a; then b; elif c; then d; else e; fi`, []string{"a", "b", "c", "d", "e"}},
		{`while a; do b; done; until c; do d; done`, []string{"a", "b", "c", "d"}},
		{`for i in $(a); do b; done; for ((i=$(c); i<2; i++)); do d; done`, []string{"a", "b", "c", "d"}},
		{`case $(a) in x) b;; y|z) c;; esac`, []string{"a", "b", "c"}},
		{`f() { a; }; function g { b | c; }`, []string{"a", "b", "c"}},
		{`a <(b) >(c)`, []string{"b", "c", "a <(b) >(c)"}},
		{`echo ${v:-$(a)} ${w/$(b)/$(c)} $(( $(d) + 1 ))`, []string{"a", "b", "c", "d", "echo ${v:-$(a)} ${w/$(b)/$(c)} $(( $(d) + 1 ))"}},
		{`[[ $(a) == x ]] && (( $(b) ))`, []string{"a", "b"}},
		{`export X=$(a); local Y=$(b); declare -a Z=($(c))`, []string{"a", "export", "b", "local", "c", "declare -a"}},
		{`bash -c 'a; b' && sh -c "c | d"`, []string{"a", "b", "bash -c a; b", "c", "d", "sh -c c | d"}},
		{`sudo -u x env A=1 nice -n 3 timeout 5 a b`, []string{"a b"}},
		{`taskset -c 1 setarch x86_64 -R prlimit -n1 strace -o f a b`, []string{"a b"}},
		// getopt permutes su's, runuser's and script's options: -m is
		// runuser's, and -c after "--" is the command's.
		{`runuser -u x b -m -- -c d`, []string{"b -c d"}},
		{`su x -c 'a; b'`, []string{"a", "b", "su x -c a; b"}},
		{`su x -- -c a`, []string{"a", "sh -c a"}},
		{`su -s /bin/zsh x`, []string{"/bin/zsh"}},
		{`script -q log -c a`, []string{"a", "script -q log -c a"}},
		{`sg g 'a | b' c`, []string{"a", "b", "sg g a | b c"}},
		{`find . -exec a {} \; -execdir b {} +`, []string{"find . -exec a {} ; -execdir b {} +", "a {}", "b {}"}},
		{"cat <<EOF\n$(a)\nEOF", []string{"a", "cat"}},
		{`time a; ! b; coproc c`, []string{"a", "b", "c"}},
		{`eval 'a; b'`, []string{"a", "b", "eval a; b"}},
		{`trap 'a' EXIT`, []string{"a", "trap a EXIT"}},
		{`> out; < in`, []string{"", ""}},
	} {
		got := names(analyze(t, tc.src))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}

func TestAnalyzeUnwraps(t *testing.T) {
	a := analyze(t, `sudo -u bob env X=1 git -C repo -c a=b push origin`)
	if len(a.Commands) != 1 {
		t.Fatalf("%d commands", len(a.Commands))
	}
	c := a.Commands[0]
	if got := joinWords(c.Words); got != "git push origin" || c.Name != "git" {
		t.Errorf("words %q, name %q", got, c.Name)
	}
	var layers []string
	for _, l := range c.Wrappers {
		layers = append(layers, l.Name)
	}
	if !slices.Equal(layers, []string{"sudo", "env"}) {
		t.Errorf("wrappers %q", layers)
	}
	if len(c.Assigns) != 1 || c.Assigns[0].Name != "X" || c.Assigns[0].Value.Text != "1" {
		t.Errorf("assigns %+v", c.Assigns)
	}
	if got := joinWords(c.GitOptions); got != "-C repo -c a=b" {
		t.Errorf("git options %q", got)
	}
	if c.Text != `sudo -u bob env X=1 git -C repo -c a=b push origin` {
		t.Errorf("text %q", c.Text)
	}

	a = analyze(t, "echo a\n  git push > log")
	c = a.Commands[1]
	if c.Pos != (Pos{Offset: 9, Line: 2, Col: 3}) || c.Text != "git push > log" {
		t.Errorf("pos %v text %q", c.Pos, c.Text)
	}
	if len(c.Redirects) != 1 || c.Redirects[0].Op != ">" || c.Redirects[0].Target.Text != "log" {
		t.Errorf("redirects %+v", c.Redirects)
	}

	a = analyze(t, "echo a; bash -c 'git push'")
	c = a.Commands[1]
	if joinWords(c.Words) != "git push" || c.Pos.Col != 9 || c.Text != "git push" || c.Wrappers[0].Name != "bash -c" {
		t.Errorf("nested command %+v", c)
	}

	for src, want := range map[string]string{
		`$CMD x`:         "dynamic",
		`bash -c "$X"`:   "dynamic",
		`bash script.sh`: "script",
		`./run`:          "script",
		`curl x | sh`:    "script",
		`xargs git`:      "appended",
		`git push`:       "",
	} {
		a := analyze(t, src)
		c := a.Commands[len(a.Commands)-1]
		got := ""
		switch {
		case c.Dynamic != nil:
			got = "dynamic"
		case c.Script != nil:
			got = "script"
		case c.Appended:
			got = "appended"
		}
		if got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}

	// Words: literal values, and renderings of the rest.
	a = analyze(t, `x 'a b' "c\"d" e\ f $HOME/g "$(h)" ~/i j* {k,l}`)
	var lits []bool
	for _, w := range a.Commands[1].Words {
		lits = append(lits, w.Literal)
	}
	if got := texts(a.Commands[1].Words); !slices.Equal(got, []string{"x", "a b", `c"d`, "e f", "$HOME/g", "$(h)", "~/i", "j*", "{k,l}"}) {
		t.Errorf("texts %q", got)
	}
	if !slices.Equal(lits, []bool{true, true, true, true, false, false, false, false, false}) {
		t.Errorf("literal %v", lits)
	}
}

func TestBadInput(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	for _, tc := range []struct {
		name string
		src  string
		err  error
	}{
		{"unterminated quote", `echo "abc`, ErrSyntax},
		{"unterminated subshell", `(echo`, ErrSyntax},
		{"stray fi", `fi`, ErrSyntax},
		{"bad redirect", `echo >`, ErrSyntax},
		{"unclosed here-document", "cat <<EOF\nx", ErrSyntax},
		// bash joins EO\ and F before it looks for the delimiter, and
		// runs what follows (a hunt, 2026-12-01).
		{"a here-document ended by joined lines", "cat <<EOF >/dev/null\nnotes\nEO\\\nF\nrm -rf src\nEOF\n", ErrSyntax},
		// Inside $( ), bash 5.2 ends a here-document at a line that
		// starts with its delimiter ("E)"), and runs what follows (a
		// hunt: this deleted src).
		{"a here-document in $( ) ended by its delimiter and a )", "x=$(cat <<E\nE)\nrm -rf src\nE\n)", ErrSyntax},
		{"the same with a quoted delimiter", "x=$(cat <<'E'\nE)\nrm -rf src\nE\n)", ErrSyntax},
		{"the same in a <<- here-document", "x=$(cat <<-E\n\tE)\nrm -rf src\nE\n)", ErrSyntax},
		{"the same in <( )", "cat <(cat <<E\nE)\nrm -rf src\nE\n)", ErrSyntax},
		// bash ends a comment at the end of its line, a backslash there
		// or not; the parser joined the next line to it (an eighth hunt:
		// each ran rm).
		{"a comment ending in a backslash", "echo a # x \\\nrm -rf src", ErrSyntax},
		{"the same, the comment alone", "ls #\\\nrm -rf src", ErrSyntax},
		{"the same in $( )", "echo $(ls #\\\nrm -rf src\n)", ErrSyntax},
		{"the same in backquotes", "echo `ls #\\\nrm -rf src`", ErrSyntax},
		{"the same in a function", "f() { ls #\\\nrm -rf src\n}; f", ErrSyntax},
		{"the same in an if", "if true; then ls #\\\nrm -rf src\nfi", ErrSyntax},
		{"the same after a pipe", "ls | #\\\nrm -rf src", ErrSyntax},
		{"the same before a CR LF", "ls #\\\r\nrm -rf src", ErrSyntax},
		{"the same in case", "case x in #\\\nx) rm -rf src;; esac", ErrSyntax},
		// bash reads a # right after an array assignment's ) as part of
		// the word (x is "(a)#x") and runs the rest; the parser took it as
		// a comment (a ninth hunt: each ran rm).
		{"a # after an array assignment", "x=(a)#x rm -rf src", ErrSyntax},
		{"the same, an empty array", "x=()#x; rm -rf src", ErrSyntax},
		{"the same, appended", "x+=()#x; rm -rf src", ErrSyntax},
		{"the same in declare", "declare x=()#x; rm -rf src", ErrSyntax},
		{"the same in export", "export x=()#x; rm -rf src", ErrSyntax},
		{"the same, the # on a joined line", "x=(a)\\\n#x; rm -rf src", ErrSyntax},
		{"a # after a carriage return, not a blank to bash", "ls\r#x; rm -rf src", ErrSyntax},
		{"a # after a subshell's ), refused alike", "(ls)#x", ErrSyntax},
		{"1 MB", strings.Repeat("a", 1<<20), ErrTooLarge},
		{"just over the limit", strings.Repeat("a", MaxSize+1), ErrTooLarge},
		{"NUL", "echo a\x00b", ErrNUL},
		{"10000 subshells", deep("(", "a", ")", 10000), ErrTooDeep},
		{"10000 substitutions", deep("$(", "a", ")", 10000), ErrTooDeep},
		{"10000 blocks", deep("{ ", "a", "; }", 10000), ErrTooDeep},
		{"100 ifs", deep("if a; then ", "b", "; fi", 100), ErrTooDeep},
		{"100 substitutions", deep("$(", "a", ")", 100), ErrTooDeep},
		{"100 parameter defaults", deep("${a:-", "b", "}", 100), ErrTooDeep},
		{"100 evals", strings.Repeat("eval ", 100) + "git push", ErrTooDeep},
		{"20000 commands", strings.Repeat("a;", 20000), ErrTooMany},
		{"100 wrappers", strings.Repeat("sudo -u x nice ", 100) + "git push", ErrTooDeep},
		{"10000 xargs", strings.Repeat("xargs ", 10000) + "git push", ErrTooDeep},
	} {
		a, err := Analyze(tc.src)
		if !errors.Is(err, tc.err) || a != nil {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	// Deep but within the bound, and long lists that are not deep.
	for _, src := range []string{
		deep("( ", "git push", " )", 30),
		deep("$(", "git push", ")", 30),
		strings.Repeat("a && ", 3000) + "git push",
		strings.Repeat("a | ", 3000) + "git push",
		"echo $((" + strings.Repeat("1+", 3000) + "1))",
		"eval " + strings.Repeat("x ", 30000) + "; git push",
		strings.Repeat("sudo ", 60) + "git push",
	} {
		a, err := Analyze(src)
		if err != nil {
			t.Errorf("%.40q...: %v", src, err)
			continue
		}
		if d := Decide(a, policy.Commands{}); d.Rule != "builtin.git-push" && !strings.HasPrefix(src, "echo") {
			t.Errorf("%.40q...: %s %s", src, d.Action, d.Rule)
		}
	}
	if d := Decide(nil, policy.Commands{}); d.Action != Refuse {
		t.Errorf("nil analysis: %s", d.Action)
	}
}

// shellQuote quotes s for a shell, in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestNestedStrings(t *testing.T) {
	src := "git push"
	for range 6 {
		src = "bash -c " + shellQuote(src)
	}
	a := analyze(t, src)
	if d := Decide(a, policy.Commands{}); d.Rule != "builtin.git-push" || d.Command != "git push" {
		t.Errorf("%q: %+v", src, d)
	}
	if c := a.Commands[0]; len(c.Wrappers) != 6 {
		t.Errorf("%d layers", len(c.Wrappers))
	}
}

func TestPolicyPrecedence(t *testing.T) {
	for _, tc := range []struct {
		auto, approval []policy.Command
		cmd            string
		want           Action
		rule           string
	}{
		// The most specific prefix wins; approval on a tie.
		{[]policy.Command{"git status"}, []policy.Command{"git"}, `git status`, A, "commands.auto[0]"},
		{[]policy.Command{"git status"}, []policy.Command{"git"}, `git log`, P, "commands.approval[0]"},
		{[]policy.Command{"git"}, []policy.Command{"git log"}, `git log`, P, "commands.approval[0]"},
		{[]policy.Command{"git"}, nil, `git log`, A, "commands.auto[0]"},
		// An auto prefix covers a built-in finding only if it names its word.
		{[]policy.Command{"git"}, nil, `git push`, P, "builtin.git-push"},
		{[]policy.Command{"git push"}, nil, `git push`, A, "commands.auto[0]"},
		{[]policy.Command{"git push"}, nil, `git -C x push --force`, A, "commands.auto[0]"},
		{[]policy.Command{"npm"}, nil, `npm publish`, P, "builtin.publish"},
		{[]policy.Command{"kubectl apply"}, nil, `kubectl apply -f x`, A, "commands.auto[0]"},
		{[]policy.Command{"bash"}, nil, `bash x.sh`, P, "builtin.script"},
		{[]policy.Command{"bash x.sh"}, nil, `bash x.sh`, A, "commands.auto[0]"},
		{[]policy.Command{"./x.sh"}, nil, `./x.sh a`, A, "commands.auto[0]"},
		{[]policy.Command{"git"}, nil, `xargs git`, P, "builtin.dynamic"},
		{[]policy.Command{"grep"}, nil, `xargs grep x`, A, "commands.auto[0]"},
		// Recursive deletion and structural protections are above policy.
		{[]policy.Command{"rm"}, nil, `rm -rf x`, D, "builtin.recursive-delete"},
		{[]policy.Command{"rm -rf x"}, nil, `rm -rf x`, D, "builtin.recursive-delete"},
		{nil, []policy.Command{"rm"}, `rm -rf x`, D, "builtin.recursive-delete"},
		{[]policy.Command{"chmod"}, nil, `chmod u+s x`, R, "structural.setuid"},
		{[]policy.Command{"git config"}, nil, `git config core.hooksPath x`, P, "structural.git-hooks"},
		{[]policy.Command{"ls"}, nil, `LD_PRELOAD=x ls`, P, "structural.exec-env"},
		// Approval of a wrapper; auto through a wrapper.
		{[]policy.Command{"git status"}, []policy.Command{"sudo"}, `sudo git status`, P, "commands.approval[0]"},
		{[]policy.Command{"git status"}, nil, `sudo git status`, A, "commands.auto[0]"},
		{[]policy.Command{"sudo git status"}, nil, `sudo git status`, A, "commands.auto[0]"},
		{[]policy.Command{"npx prettier"}, nil, `npx prettier --write .`, A, "commands.auto[0]"},
		{[]policy.Command{"sudo"}, nil, `sudo git push`, P, "builtin.git-push"},
		{nil, []policy.Command{"bash"}, `bash -c 'ls'`, P, "commands.approval[0]"},
		{nil, []policy.Command{"find"}, `find . -exec ls {} \;`, P, "commands.approval[0]"},
		// A thirteenth hunt: curl -K reads options from a file, which
		// may say where to write (curl -sK fetch.cfg wrote .git/config);
		// an auto "curl" does not cover it.
		{[]policy.Command{"curl"}, nil, `curl -sK fetch.cfg`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl --config fetch.cfg`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl --conf=fetch.cfg`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl -Kfetch.cfg`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl -fsSL -o out.tar.gz https://example.com/x.tar.gz`, A, "commands.auto[0]"},
		{[]policy.Command{"curl"}, nil, `curl -H 'Accept: text/plain' https://example.com/`, A, "commands.auto[0]"},
		// A fourteenth hunt: curl --engine loads a shared object (any
		// prefix, = or the next word); an auto "curl" does not cover it.
		{[]policy.Command{"curl"}, nil, `curl --engine /ws/x.so https://x`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl -s --eng=/ws/x.so https://x`, P, "builtin.exec-option"},
		{[]policy.Command{"curl"}, nil, `curl -sSf https://x`, A, "commands.auto[0]"},
		// Prefixes are matched on words, not text.
		{[]policy.Command{"go test"}, nil, `go testx`, A, "default"},
		{[]policy.Command{"go test"}, nil, `"go test"`, A, "default"},
		{nil, []policy.Command{"make deploy"}, `make "deploy"`, P, "commands.approval[0]"},
		// Was Auto: with T=deploy it ran make deploy unasked (a review).
		{nil, []policy.Command{"make deploy"}, `make $T`, P, "commands.approval[0]"},
		// The table's row of a seventeenth hunt, without the approval
		// prefix that now decides it there.
		{nil, nil, `xargs nice make < args`, P, "builtin.dynamic"},
		{nil, []policy.Command{"make deploy"}, `make deplo\y`, P, "commands.approval[0]"},
	} {
		a := analyze(t, tc.cmd)
		d := Decide(a, policy.Commands{Auto: tc.auto, Approval: tc.approval})
		if d.Action != tc.want || d.Rule != tc.rule {
			t.Errorf("auto %q approval %q: %q: %s %s (%s), want %s %s", tc.auto, tc.approval, tc.cmd, d.Action, d.Rule, d.Reason, tc.want, tc.rule)
		}
	}
}

func TestOptions(t *testing.T) {
	o := Options{
		Workspace: "/work/ws",
		Protected: []string{"secrets", "deploy/keys"},
		Authority: []string{"/run/pinfold", "/work/ws/.pinfold-backups"},
	}
	for _, tc := range []struct {
		cmd  string
		want Action
		rule string
	}{
		{`cat /run/pinfold/vault`, R, "structural.authority"},
		{`ls /run/pinfold`, R, "structural.authority"},
		{`ls /run/pinfold2`, A, "default"},
		{`echo x > /run/pinfold/x`, R, "structural.authority"},
		{`cp --target-directory=/run/pinfold/s x`, R, "structural.authority"},
		{`bash -c 'cat /run/pinfold/vault'`, R, "structural.authority"},
		{`ls .pinfold-backups`, R, "structural.authority"},
		{`rm -rf /work/ws/.pinfold-backups`, R, "structural.authority"},
		{`echo x > secrets/k`, R, "structural.protected-path"},          // read-only to the worker: readonly_test.go
		{`cp a ./secrets/`, R, "structural.protected-path"},             // cp's destination: likewise
		{`cp a /work/ws/deploy/keys/k`, R, "structural.protected-path"}, // likewise
		{`cp a deploy/other`, A, "default"},
		{`cat secrets/k`, A, "default"},
		{`rm -rf secrets`, D, "builtin.recursive-delete"},
		// A pattern that may match a protected path (a ninth hunt).
		{`echo x > secre?s/k`, P, "structural.protected-path"},
		{`cp a deploy/{keys,x}/`, P, "structural.protected-path"},
		{`cp a /work/ws/dep*/k[e]ys/`, P, "structural.protected-path"},
		{`echo x > secre[[:alpha:]]s/k`, P, "structural.protected-path"}, // an eleventh hunt
		{`cp a deploy/*.txt`, A, "default"},
		// Attached to a short option, or a wrapper's (a twelfth hunt).
		{`cp -t/run/pinfold/s x`, R, "structural.authority"},
		{`gcc -osecrets/k x.c`, P, "structural.protected-path"},
		{`env -C deploy/keys cp /tmp/k k`, P, "structural.protected-path"},
		{`env -C deploy make`, A, "default"},
		// What find runs works beneath its starting points (an
		// eighteenth hunt).
		{`find secrets -exec cp /tmp/k {} \;`, P, "structural.protected-path"},
		{`find /work/ws/deploy/keys/a -execdir cp /tmp/k k \;`, P, "structural.protected-path"},
		{`find /work/ws/.git/hooks -exec cp /tmp/k {} \;`, P, "structural.git-hooks"},
		{`find /work/ws/src -exec cp /tmp/k {} \;`, A, "default"},
		{`find secrets -exec cat {} \;`, A, "default"},
	} {
		d := DecideWith(analyze(t, tc.cmd), policy.Commands{}, o)
		if d.Action != tc.want || d.Rule != tc.rule {
			t.Errorf("%q: %s %s (%s), want %s %s", tc.cmd, d.Action, d.Rule, d.Reason, tc.want, tc.rule)
		}
	}
}

func TestTargets(t *testing.T) {
	for src, want := range map[string][]string{
		`rm -rf a b`:                                      {"a", "b"},
		`rm -r -- -x`:                                     {"-x"},
		`rm -rf "$D"`:                                     {"$D"},
		`find x y -name z -delete`:                        {"x", "y"},
		`find -delete`:                                    {"."},
		`find src -exec rm {} \;`:                         {"src"},
		`find -files0-from list -delete`:                  {"."},
		`git clean -fdx`:                                  {"."},
		`git -C sub clean -fd`:                            {"sub"},
		`git clean -fd build`:                             {"build"},
		`rsync -a --delete a/ b/`:                         {"b/"},
		`rsync --remove-source-files a b`:                 {"a", "b"},
		`rsync -a -M--delete e/ src/`:                     {"src/"},
		`rsync -a -M --delete e/ src/`:                    {"src/"},
		`go mod vendor -o src`:                            {"src"},
		`go mod vendor -o=../x`:                           nil,
		`go -C sub mod vendor -o src`:                     nil,
		`go clean`:                                        nil,
		`cargo clean --target-dir src`:                    {"src"},
		`CARGO_TARGET_DIR=src cargo clean`:                {"src"},
		`cargo clean --target-dir ../x`:                   nil,
		`CARGO_TARGET_DIR=src cargo clean --target-dir b`: {"b"},
		`export CARGO_TARGET_DIR=src; cargo clean`:        nil,
		`GOMODCACHE=$PWD/src go clean -modcache`:          nil,
		`scalar delete en`:                                {"en"},
		`scalar -C x delete en`:                           nil,
	} {
		d := Decide(analyze(t, src), policy.Commands{})
		if d.Action != ConfirmDelete || !slices.Equal(d.Targets, want) {
			t.Errorf("%q: %s targets %q, want %q", src, d.Action, d.Targets, want)
		}
	}
}

func TestDecideEach(t *testing.T) {
	a := analyze(t, `ls; git push && rm -rf build; npm publish`)
	each := DecideEach(a, policy.Commands{}, Options{})
	var got []string
	for _, d := range each {
		got = append(got, d.Action.String()+" "+d.Rule)
	}
	want := []string{"auto default", "approve builtin.git-push", "confirm-delete builtin.recursive-delete", "approve builtin.publish"}
	if !slices.Equal(got, want) {
		t.Errorf("each: %q", got)
	}
	d := Decide(a, policy.Commands{})
	if d.Action != ConfirmDelete || d.Command != "rm -rf build" || !strings.Contains(d.Reason, "2 more command(s)") {
		t.Errorf("overall %+v", d)
	}
	if d := Decide(analyze(t, "  "), policy.Commands{}); d.Action != Auto || d.Rule != "default" {
		t.Errorf("empty: %+v", d)
	}
}

func TestDecisionJSON(t *testing.T) {
	d := Decide(analyze(t, `rm -rf build`), policy.Commands{})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"action":"confirm-delete","rule":"builtin.recursive-delete","reason":"rm -r deletes whole directory trees","command":"rm -rf build","targets":["build"]}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
	var back Decision
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Errorf("round trip: %v %+v", err, back)
	}
	for _, a := range []Action{Auto, Approve, ConfirmDelete, Refuse} {
		var x Action
		if b, err := a.MarshalText(); err != nil || x.UnmarshalText(b) != nil || x != a {
			t.Errorf("%v does not round-trip", a)
		}
	}
	if _, err := Action(9).MarshalText(); err == nil {
		t.Error("Action(9) marshals")
	}
}

// TestWorkBounded: a line whose commands each carry the words of the
// wrappers and strings they run under is refused when those words add up
// past MaxWords, before they are decided, and so is one whose strings run
// as code add up past maxParsed bytes to parse (an H6 hunt: eval given 9000
// commands, whose every one carried eval's 18000 words, took 33 s to
// analyse and decide, and 60 evals before 30000 words 37 s of the bash
// component's CPU). A long line of commands
// that carry few is still analysed.
func TestWorkBounded(t *testing.T) {
	for _, src := range []string{
		"eval " + strings.Repeat("a \\; ", 9000),
		strings.Repeat("eval ", 60) + "echo " + strings.Repeat("x ", 30000),
		strings.Repeat("builtin eval ", 30) + "echo " + strings.Repeat("x ", 30000),
		strings.Repeat("nice ", 60) + "echo " + strings.Repeat("x ", 30000),
	} {
		start := time.Now()
		a, err := Analyze(src)
		if !errors.Is(err, ErrTooMany) && !errors.Is(err, ErrTooLarge) || a != nil {
			t.Errorf("%.40q...: %v, want %v or %v", src, err, ErrTooMany, ErrTooLarge)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%.40q...: refused after %v", src, d)
		}
	}
	for _, src := range []string{
		"bash -c " + strings.Repeat("a\\;", 9000) + "git\\ push",
		"echo " + strings.Repeat("x ", 30000) + "; git push",
		strings.Repeat("a x y z; ", 7000) + "git push",
	} {
		a, err := Analyze(src)
		if err != nil {
			t.Errorf("%.40q...: %v", src, err)
			continue
		}
		if d := Decide(a, policy.Commands{}); d.Rule != "builtin.git-push" {
			t.Errorf("%.40q...: %s %s", src, d.Action, d.Rule)
		}
	}
}
