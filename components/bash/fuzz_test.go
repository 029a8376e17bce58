package bash

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// FuzzAnalyze: no input panics; any input that analyses decides the
// same way every time, with a known action and a rule.
func FuzzAnalyze(f *testing.F) {
	for _, tc := range table {
		f.Add(tc.cmd)
	}
	for _, s := range []string{
		"", "(", "$(", "`", "'", "\"", "\\", "<<", "x\x00", "${", "$((", "((", "[[", "{", "a=(", "case x in", "f()",
		"bash -c", "eval", "find -exec", "xargs -I", "sudo -u", "env -S", "git -c", "git -C", "$'\\x'",
		strings.Repeat("(", 300), strings.Repeat("${a:-", 70),
	} {
		f.Add(s)
	}
	pol := tablePolicy
	f.Fuzz(func(t *testing.T, src string) {
		a, err := Analyze(src)
		if err != nil {
			if a != nil {
				t.Fatalf("an error (%v) and an analysis", err)
			}
			return
		}
		b, err := Analyze(src)
		if err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("second analysis differs (%v)", err)
		}
		d1 := Decide(a, pol)
		d2 := DecideWith(b, pol, Options{})
		if !reflect.DeepEqual(d1, d2) {
			t.Fatalf("decisions differ: %+v, %+v", d1, d2)
		}
		if d1.Action < Auto || d1.Action > Refuse || d1.Rule == "" || d1.Reason == "" {
			t.Fatalf("decision %+v", d1)
		}
		each := DecideEach(a, policy.Commands{}, Options{Workspace: "/w", Protected: []string{"p"}, Authority: []string{"/a"}})
		if len(each) != len(a.Commands) {
			t.Fatalf("%d decisions for %d commands", len(each), len(a.Commands))
		}
	})
}

// FuzzPrefix: no command line and approval prefix panic the matching of
// the prefix's words in other places and spellings (mayStartWith), and
// the literal words of an auto prefix still decide it.
func FuzzPrefix(f *testing.F) {
	for _, s := range [][2]string{
		{`make all deploy`, "make deploy"}, {`git push -uf`, "git push --force"}, {`cp -Rf a b`, "cp -rf"},
		{`gradle pTML`, "gradle publishToMavenLocal"}, {`sudo -uroot x`, "sudo -u root"}, {`x --=y -=z`, "x --= -= -"},
		{`rake "a[$x]" $y`, "rake a b"}, {`x "$a" -- --f=`, "x --f=y -ab y"},
		{`npm rum deploy`, "npm run deploy"}, {`npm pub`, "npm publish"}, {`docker container rm x`, "docker rm"},
		{`yarn deploy`, "yarn run deploy"}, {`pnpm run-script t`, "pnpm test"}, {`npm runScript x`, "npm pu"},
		{`tar xzf a`, "tar --extract -z"}, {`git branch -D x`, "git branch --delete --force"}, {`cp -a a b`, "cp -rd"},
		{`kubectl get pods,Secret/x.y`, "kubectl get secret"}, {`oc delete ns/a,b`, "oc delete namespace a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, src, prefix string) {
		if w := strings.Fields(prefix); len(w) == 0 || strings.Join(w, " ") != prefix {
			return
		}
		a, err := Analyze(src)
		if err != nil {
			return
		}
		d := Decide(a, policy.Commands{Approval: []policy.Command{policy.Command(prefix)}})
		if d.Rule == "" {
			t.Fatalf("decision %+v", d)
		}
		pw := strings.Fields(prefix)
		opts, operands := splitPrefix(pw[1:])
		for _, c := range a.Commands {
			if startsWith(c.Words, pw) && !mayStartWith(c.Words, pw, nil, false) {
				t.Fatalf("%q starts with %q, yet may not", c.Text, prefix)
			}
			// Each other spelling of the prefix's subcommand, written
			// out, is matched too.
			for _, v := range spellings(pw[0], operands) {
				if len(opts) == 0 && startsWith(c.Words, append(pw[:1:1], v...)) && !mayStartWith(c.Words, pw, nil, false) {
					t.Fatalf("%q starts with %q, a spelling of %q, yet may not", c.Text, strings.Join(v, " "), prefix)
				}
			}
		}
	})
}
