package bash

import (
	"strings"
	"testing"

	"github.com/pinfold/pinfold/policy"
)

// A line that needs the person only for redirections, or words their
// programs only write (writtenWords), to paths a command's worker has
// read-only (fs's protected names, git's hooks and config,
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
		more       bool   // the refusal says another command writes such paths
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
		{cmd: `mkdir -p .cargo && echo x > .vscode/s`, want: P, rule: "structural.protected-path"}, // .cargo: the analyzer's own
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
		// mv's destination, read as mv reads its words (writtenWords):
		// the worker's mv fails (EROFS) and keeps the source.
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
		{cmd: `mv() { echo "$1"; }; mv a .vscode/s`, want: P, rule: "structural.protected-path"}, // mv is the line's function
		{cmd: `mv a .vscode/s -f`, want: P, rule: "structural.protected-path"},                   // POSIXLY_CORRECT: -f the destination
		{cmd: `busybox mv a .vscode/s`, want: P, rule: "structural.protected-path"},
		// The words other programs only write, read as each reads them
		// (writtenWords): cp's, install's and ln's destination, the
		// files tee, touch, mkdir, truncate, chmod, chown and sed -i
		// change, dd's of=.
		{cmd: `cp x .vscode/settings.json`, want: R, rule: "structural.protected-path", path: ".vscode/settings.json"},
		{cmd: `cp -v hook .git/hooks/`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `cp -vt .git/hooks pre-commit`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `cp --target-dir .vscode a b`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `cp -T a .ssh/config`, want: R, rule: "structural.protected-path", path: ".ssh/config"},
		{cmd: `cp -- -x .mcp.json`, want: R, rule: "structural.protected-path", path: ".mcp.json"},
		{cmd: `cp -S .orig a .vscode/s`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `cp --no-c a .vscode/s`, want: R, rule: "structural.protected-path", path: ".vscode/s"}, // --no-clobber alone
		{cmd: `find . -name '*.json' -exec cp -t .vscode {} +`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `tee .git/hooks/pre-commit < x`, want: R, rule: "structural.git-hooks", path: ".git/hooks/pre-commit"},
		{cmd: `echo x | tee -a .vscode/s .mcp.json`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `tee --output-error=warn -- .bashrc < x`, want: R, rule: "structural.protected-path", path: ".bashrc"},
		{cmd: `install -m755 x .git/hooks/x`, want: R, rule: "structural.git-hooks", path: ".git/hooks/x"},
		{cmd: `install -vt .git/hooks x`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `install -D -m 644 x .ssh/config`, want: R, rule: "structural.protected-path", path: ".ssh/config"},
		{cmd: `install -d .vscode`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `touch .ssh/authorized_keys`, want: R, rule: "structural.protected-path", path: ".ssh/authorized_keys"},
		{cmd: `touch -d yesterday -c .ssh/k`, want: R, rule: "structural.protected-path", path: ".ssh/k"},
		{cmd: `mkdir .vscode`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `mkdir -pm 700 .ssh/sub`, want: R, rule: "structural.protected-path", path: ".ssh/sub"},
		{cmd: `mkdir -p .vscode && echo x > .vscode/s`, want: R, rule: "structural.protected-path", path: ".vscode", more: true},
		{cmd: `chmod +x .git/hooks/pre-push`, want: R, rule: "structural.git-hooks", path: ".git/hooks/pre-push"},
		{cmd: `chmod -x .git/hooks/pre-push`, want: R, rule: "structural.git-hooks", path: ".git/hooks/pre-push"},
		{cmd: `chmod -R u+w,g-w .git/hooks`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		{cmd: `chmod --reference=x .git/config`, want: R, rule: "structural.git-config", path: ".git/config"},
		{cmd: `chown me:me .ssh/k`, want: R, rule: "structural.protected-path", path: ".ssh/k"},
		{cmd: `chgrp -R staff .vscode`, want: R, rule: "structural.protected-path", path: ".vscode"},
		{cmd: `sed -i s/a/b/ .bashrc`, want: R, rule: "structural.protected-path", path: ".bashrc"},
		{cmd: `sed -i.bak -e s/a/b/ .git/config`, want: R, rule: "structural.git-config", path: ".git/config"},
		{cmd: `sed --in-place -E s/a/b/ .vscode/s`, want: R, rule: "structural.protected-path", path: ".vscode/s"},
		{cmd: `sed -ni p .mcp.json`, want: R, rule: "structural.protected-path", path: ".mcp.json"},
		{cmd: `sed -in s/a/b/ .bashrc`, want: R, rule: "structural.protected-path", path: ".bashrc"}, // -i with the suffix n
		{cmd: `truncate -s0 .git/config`, want: R, rule: "structural.git-config", path: ".git/config"},
		{cmd: `truncate --size 0 .ssh/k`, want: R, rule: "structural.protected-path", path: ".ssh/k"},
		{cmd: `dd of=.git/config`, want: R, rule: "structural.git-config", path: ".git/config"},
		{cmd: `echo x | dd if=/dev/stdin of=/work/ws/.ssh/k status=none`, want: R, rule: "structural.protected-path", path: ".ssh/k"},
		{cmd: `ln -s x .git/hooks/y`, want: R, rule: "structural.git-hooks", path: ".git/hooks/y"},
		{cmd: `ln -sft .git/hooks ../../tools/pre-commit`, want: R, rule: "structural.git-hooks", path: ".git/hooks"},
		// Not only written, or not certainly: asked as before.
		{cmd: `cp .git/config x`, want: P, rule: "structural.git-config"}, // only read
		{cmd: `cp .vscode/a .vscode/b`, want: P, rule: "structural.protected-path"},
		{cmd: `cp -S .vscode/s a b`, want: P, rule: "structural.protected-path"},
		{cmd: `cp -t.vscode a`, want: P, rule: "structural.protected-path"},
		{cmd: `cp --target-directory=.vscode a`, want: P, rule: "structural.protected-path"},
		{cmd: `cp a .vscode/s -f`, want: P, rule: "structural.protected-path"}, // POSIXLY_CORRECT: -f the destination
		{cmd: `cp a b -t .vscode`, want: P, rule: "structural.protected-path"},
		{cmd: `cp $o a .vscode/s`, want: P, rule: "structural.protected-path"}, // $o may be -t DIR
		{cmd: `cp -T a b .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp -Q a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp --help a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp --no a .vscode/s`, want: P, rule: "structural.protected-path"}, // several long options: refused by cp
		{cmd: `cp -r src .vscode`, want: P, rule: "structural.protected-path"},   // may make links
		{cmd: `find . -name x -exec cp {} .vscode/ \;`, want: P, rule: "structural.protected-path"},
		{cmd: `ls | xargs cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `xargs -I@ cp -t .vscode/@ a < list`, want: P, rule: "structural.protected-path"}, // @ may hold ..
		{cmd: `./cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `busybox cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `npx touch .ssh/k`, want: P, rule: "structural.protected-path"}, // node_modules/.bin/touch first
		{cmd: `npx mv a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp() { echo; }; cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp a .cargo/config.toml`, want: P, rule: "structural.protected-path"},
		{cmd: `cp a .git/info/exclude`, want: P, rule: "structural.git-state"},
		{cmd: `cd sub && cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp a sub/../.vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `cp a .vscode/s; git push`, want: P, rule: "structural.protected-path"},
		{cmd: `tee .vscode/s .cargo/config.toml < x`, want: P, rule: "structural.protected-path"},
		{cmd: `install -s --strip-program=./p x .git/hooks/x`, want: P, rule: "structural.git-hooks"},
		{cmd: `install -m755 .git/hooks/x y`, want: P, rule: "structural.git-hooks"},
		{cmd: `install -d -t .vscode`, want: P, rule: "structural.protected-path"},
		{cmd: `touch -r .git/config x`, want: P, rule: "structural.git-config"},
		{cmd: `touch .ssh/k -c`, want: P, rule: "structural.protected-path"},
		{cmd: `mkdir $opts .vscode`, want: P, rule: "structural.protected-path"}, // $opts may be -m
		{cmd: `chmod .git/config x`, want: P, rule: "structural.git-config"},     // the mode
		{cmd: `chmod --reference=.git/config x`, want: P, rule: "structural.git-config"},
		{cmd: `chmod -Rx .git/hooks`, want: P, rule: "structural.git-hooks"},
		{cmd: `chmod "$m" .git/hooks/x`, want: P, rule: "structural.git-hooks"},
		{cmd: `chown --reference=.ssh/k x`, want: P, rule: "structural.protected-path"},
		{cmd: `chown -RL me .vscode`, want: P, rule: "structural.protected-path"}, // follows links out
		{cmd: `chown .git/config x`, want: P, rule: "structural.git-config"},
		{cmd: `sed s/a/b/ .bashrc`, want: P, rule: "structural.protected-path"},
		{cmd: `sed s/a/b/ -i .bashrc`, want: P, rule: "structural.protected-path"},
		{cmd: `sed -i .bashrc x`, want: P, rule: "structural.protected-path"}, // the script
		{cmd: `sed -i -f .git/hooks/x y`, want: P, rule: "structural.git-hooks"},
		{cmd: `sed -ibak/ s/a/b/ .bashrc`, want: P, rule: "structural.protected-path"},
		{cmd: `truncate -r .git/config x`, want: P, rule: "structural.git-config"},
		{cmd: `dd if=.git/config of=x`, want: P, rule: "structural.git-config"},
		{cmd: `dd of=.git/config of=x`, want: P, rule: "structural.git-config"}, // the last of= is written
		{cmd: `dd of=.git/config count=$n`, want: P, rule: "structural.git-config"},
		{cmd: `ln -s .git/hooks/pre-commit x`, want: P, rule: "structural.git-hooks"},
		{cmd: `ln -s .git/hooks/pre-commit`, want: P, rule: "structural.git-hooks"},
		{cmd: `ln -s /tmp/o .vscode; cp a .vscode/s`, want: P, rule: "structural.protected-path"},
		{cmd: `tar xf a.tar; ln -s x .git/hooks/y`, want: P, rule: "structural.git-hooks"},
		{cmd: `for i in 1 2; do ln -s /tmp/o .vscode; done`, want: P, rule: "structural.protected-path"}, // the second run writes /tmp/o/o
		{cmd: `while :; do ln -s /tmp/o .vscode; done`, want: P, rule: "structural.protected-path"},
		{cmd: `f() { ln -s /tmp/o .vscode; }; f; f`, want: P, rule: "structural.protected-path"},
		{cmd: `find . -exec ln -s /tmp/o .vscode \;`, want: P, rule: "structural.protected-path"},
		{cmd: `sh -c 'ln -s /tmp/o .vscode'`, want: P, rule: "structural.protected-path"},
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
		if (tc.more || strings.Count(tc.cmd, " > ")+strings.Count(tc.cmd, "mv ") > 1) && !strings.Contains(d.Reason, "1 more command(s) on the line write such paths too") {
			t.Errorf("%q: the reason does not say the line's other such write: %s", tc.cmd, d.Reason)
		}
		for _, want := range []string{"read-only", "the person is not asked", "launcher fs write " + quotedWord(tc.path), "outside the session"} {
			if !strings.Contains(d.Reason, want) {
				t.Errorf("%q: the reason lacks %q: %s", tc.cmd, want, d.Reason)
			}
		}
	}
}
