package bash

import (
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// A line that needs the person only for redirections to paths a command's
// worker has read-only (fs's protected names, git's hooks and config,
// the policy's files.protected) is refused at once: a yes could not make
// the write. Its rule is the one that would have asked, its reason names
// the path and says how it can be changed. Anything else the line needs
// the person for, a write the worker can make (a tool's configuration,
// the analyzer's alone), a path known only at run time or out of the
// workspace, a line that changes folder or may make a link, and reads,
// are decided as before.
func TestReadOnlyWriteRefused(t *testing.T) {
	o := Options{Workspace: "/work/ws", Protected: []string{"secrets", "deploy/keys"}, Authority: []string{"/run/pinfold"}}
	for _, tc := range []struct {
		cmd        string
		auto, appr []policy.Command
		want       Action
		rule, path string // path: what the refusal names
	}{
		{cmd: `echo x > .git/hooks/pre-commit`, want: R, rule: "structural.git-hooks", path: ".git/hooks/pre-commit"},
		{cmd: `echo x >> .git/config`, want: R, rule: "structural.git-config", path: ".git/config"},
		{cmd: `echo x > sub/.git/modules/m/hooks/post-merge`, want: R, rule: "structural.git-hooks", path: "sub/.git/modules/m/hooks/post-merge"},
		{cmd: `printf '{}' > ./.vscode/settings.json`, want: R, rule: "structural.protected-path", path: ".vscode/settings.json"},
		{cmd: `echo x &>> .bashrc`, want: R, rule: "structural.protected-path", path: ".bashrc"},
		{cmd: `echo x > /work/ws/.ssh/authorized_keys`, want: R, rule: "structural.protected-path", path: ".ssh/authorized_keys"},
		{cmd: `echo x > .config/git/config`, want: R, rule: "structural.git-config", path: ".config/git/config"},
		{cmd: `echo x > secrets/k`, want: R, rule: "structural.protected-path", path: "secrets/k"},
		{cmd: `echo a > .mcp.json; echo b > .vscode/x; ls`, want: R, rule: "structural.protected-path", path: ".mcp.json"},
		{cmd: `echo x > .vscode/s && echo y > .vscode/t`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `cd /tmp && echo x > /work/ws/.vscode/s`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		// An auto prefix does not make it run: the write still cannot happen.
		{cmd: `echo x > .vscode/s`, auto: []policy.Command{"echo"}, want: R, rule: "structural.protected-path", path: ".vscode/s"},

		// Something else on the line needs the person: asked, as before.
		{cmd: `echo x > .vscode/s; git push`, want: P, rule: "structural.protected-path"},
		{cmd: `git push; echo x > .vscode/s`, want: P, rule: "builtin.git-push"},
		{cmd: `touch a > .mcp.json`, appr: []policy.Command{"touch"}, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > .vscode/s > .cargo/config.toml`, want: P, rule: "structural.protected-path"},
		{cmd: `rm -rf build > .vscode/log`, want: D, rule: "builtin.recursive-delete"},
		{cmd: `echo x > .vscode/s; cat /run/pinfold/vault`, want: R, rule: "structural.authority"},
		{cmd: `mkdir -p .vscode && echo x > .vscode/s`, want: P, rule: "structural.protected-path"},
		// Writes the worker can make: the analyzer's own names.
		{cmd: `echo x > .cargo/config.toml`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > lefthook.yml`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > .husky/pre-commit`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > .git/info/exclude`, want: P, rule: "structural.git-state"},
		{cmd: `echo x > .git/objects/hooks`, want: P, rule: "structural.git-hooks"},
		// Not certainly the workspace's protected path.
		{cmd: `echo x > .vs?ode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > "$d/.vscode/s"`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x >> ~/.bashrc`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > /tmp/p/.vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `echo x > sub/../.vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cd sub && echo x > .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `env -C sub sh -c 'echo x > .vscode/s'`, want: P, rule: "structural.protected-path"},
		{cmd: `find /tmp -execdir sh -c 'echo x > .vscode/s' \;`, want: P, rule: "structural.protected-path"},
		{cmd: `find . -exec sh -c 'echo x > .vscode/s' \;`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `ln -s ../o .vscode; echo x > .vscode/s`, want: P, rule: "structural.protected-path"},
		// mv's destination, read as mv reads its words (mvArgs): the
		// worker's mv fails (EROFS) and keeps the source.
		{cmd: `mv hook .vscode/settings.json`, want: R, rule: "structural.protected-path", path: ".vscode/settings.json"},
		{cmd: `mv -f a b .git/hooks`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `mv -t .git/hooks pre-commit`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `mv --target-dir .vscode a`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `mv -- -x .ssh/config`, want: R, rule: "structural.protected-path", path: ".ssh/config"},
		{cmd: `mv a .vscode/s && mv b .vscode/t`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `find . -name '*.json' -exec mv -t .vscode {} +`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `sh -c 'mv a .git/hooks/pre-commit'`, want: R, rule: "structural.git-hooks", path: ".git/hooks/pre-commit"},
		// Not only mv's destination, or not certainly it: asked as before.
		{cmd: `mv .vscode/settings.json x`, want: P, rule: "structural.protected-path"}, // the worker's mv copies it
		{cmd: `mv .vscode/a .vscode/b`, want: P, rule: "structural.protected-path"},
		{cmd: `mv -S .vscode/s a b`, want: P, rule: "structural.protected-path"},
		{cmd: `mv -t.vscode a`, want: P, rule: "structural.protected-path"},
		{cmd: `ls | xargs mv a .vscode/s`, want: P, rule: "structural.protected-path"}, // the words xargs adds come last
		{cmd: `git mv a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `mv a .vscode/s; git push`, want: P, rule: "structural.protected-path"},
		{cmd: `cd sub && mv a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `ln -s /tmp o; mv a .vscode/s`, want: D, rule: "builtin.recursive-delete"}, // mvOut
		{cmd: `mv a /work/ws/.vscode/s`, want: D, rule: "builtin.recursive-delete"},
		{cmd: `mv a .cargo/config.toml`, want: P, rule: "structural.protected-path"},
		{cmd: `mv a "$d/.vscode/s"`, want: D, rule: "builtin.recursive-delete"},
		{cmd: `mv a .vscode/s`, appr: []policy.Command{"mv"}, want: P, rule: "structural.protected-path"},
		// A write named otherwise: which argument is written is not read
		// (cp, tee, install, touch, mkdir, sed -i, …), so asked as before.
		{cmd: `cp x .vscode/settings.json`, want: P, rule: "structural.protected-path"},
		{cmd: `tee .git/hooks/pre-commit < x`, want: P, rule: "structural.git-hooks"},
		// Reads.
		{cmd: `cat .git/config .vscode/settings.json`, want: A, rule: "default"},
		{cmd: `grep x < .git/config > out.txt`, want: A, rule: "default"},
		{cmd: `cp .vscode/settings.json /tmp/s`, want: P, rule: "structural.protected-path"},
	} {
		d := DecideWith(analyze(t, tc.cmd), policy.Commands{Auto: tc.auto, Approval: tc.appr}, o)
		if d.Action != tc.want || d.Rule != tc.rule {
			t.Errorf("%q: %s %s (%s), want %s %s", tc.cmd, d.Action, d.Rule, d.Reason, tc.want, tc.rule)
			continue
		}
		if tc.path == "" {
			if strings.Contains(d.Reason, "launcher fs write") {
				t.Errorf("%q: %s", tc.cmd, d.Reason)
			}
			continue
		}
		if strings.Count(tc.cmd, " > ")+strings.Count(tc.cmd, "mv ") > 1 && !strings.Contains(d.Reason, "1 more command(s) on the line write such paths too") {
			t.Errorf("%q: the reason does not say the line's other such write: %s", tc.cmd, d.Reason)
		}
		for _, want := range []string{"read-only", "the person is not asked", "launcher fs write " + quotedWord(tc.path), "outside the session"} {
			if !strings.Contains(d.Reason, want) {
				t.Errorf("%q: the reason lacks %q: %s", tc.cmd, want, d.Reason)
			}
		}
	}
}
