package bash

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/approve"
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/policy"
)

// fakeWorld records what a Broker asked, backed up and ran.
type fakeWorld struct {
	answers  []bool // the person's answers, in order; none left: no
	asked    []string
	kinds    []approve.Kind
	backedUp []string
	backup   func(path string) (string, error)
	ran      []Job
}

func (w *fakeWorld) broker(c policy.Commands) *Broker {
	return &Broker{
		Commands: c,
		Options:  Options{Workspace: "/ws"},
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ask: func(action, detail string, kind approve.Kind) approve.Answer {
			w.asked = append(w.asked, action+" | "+detail)
			w.kinds = append(w.kinds, kind)
			if len(w.answers) == 0 {
				return approve.Answer{Reason: "no answer"}
			}
			a := w.answers[0]
			w.answers = w.answers[1:]
			return approve.Answer{Yes: a, Reason: map[bool]string{true: "approved", false: "declined"}[a]}
		},
		Backup: func(_ context.Context, p string) (string, error) {
			w.backedUp = append(w.backedUp, p)
			if w.backup != nil {
				return w.backup(p)
			}
			return "id-" + p, nil
		},
		Run: func(_ context.Context, j Job) Outcome {
			w.ran = append(w.ran, j)
			return Outcome{ExitCode: 7, Stdout: []byte("out"), Stderr: []byte("err")}
		},
	}
}

func TestBrokerAutoRuns(t *testing.T) {
	w := &fakeWorld{}
	d, r := w.broker(policy.Commands{Timeout: policy.Duration(time.Minute), Output: 5 << 20}).Handle(context.Background(), "ls -la")
	if !d.Allowed || r == nil || r.ExitCode != 7 || string(r.Stdout) != "out" || string(r.Stderr) != "err" {
		t.Fatalf("%+v %+v", d, r)
	}
	if len(w.asked) != 0 || len(w.ran) != 1 {
		t.Fatalf("asked %q, ran %+v", w.asked, w.ran)
	}
	// The cap is at most what one answer carries; the timeout is the policy's.
	if j := w.ran[0]; j.Command != "ls -la" || j.Timeout != time.Minute || j.Output != rpc.MaxData {
		t.Errorf("job %+v", j)
	}
	w2 := &fakeWorld{}
	w2.broker(policy.Commands{}).Handle(context.Background(), "true")
	if j := w2.ran[0]; j.Timeout != time.Duration(policy.Default().Commands.Timeout) || j.Output != 0 {
		t.Errorf("unset limits: %+v", j)
	}
}

func TestBrokerRefusedAndInvalid(t *testing.T) {
	for _, c := range []struct{ cmd, rule string }{
		{"mount /dev/sda1 /mnt", "structural."},
		{"echo 'unterminated", RuleParse},
		{"echo a\x00b", RuleParse},
		{strings.Repeat("x", MaxSize+1), RuleParse},
	} {
		w := &fakeWorld{answers: []bool{true, true}}
		d, r := w.broker(policy.Commands{}).Handle(context.Background(), c.cmd)
		if d.Allowed || r != nil || !strings.HasPrefix(d.Rule, c.rule) {
			t.Errorf("%.40q: %+v", c.cmd, d)
		}
		if len(w.ran) != 0 || len(w.asked) != 0 {
			t.Errorf("%.40q: ran %d, asked %q", c.cmd, len(w.ran), w.asked)
		}
	}
}

// A line that needs the person only for a write its worker cannot make
// (a protected path, read-only to commands) is refused without a
// question, naming the path and fs's way to change it; the same write
// beside a command that needs approval is still asked about.
func TestBrokerReadOnlyWriteNotAsked(t *testing.T) {
	w := &fakeWorld{answers: []bool{true}}
	d, r := w.broker(policy.Commands{}).Handle(context.Background(), "echo x > .git/hooks/pre-commit")
	if d.Allowed || r != nil || d.Rule != "structural.git-hooks" || !strings.Contains(d.Detail, `launcher fs write ".git/hooks/pre-commit"`) {
		t.Errorf("%+v", d)
	}
	if len(w.ran) != 0 || len(w.asked) != 0 {
		t.Errorf("ran %d, asked %q", len(w.ran), w.asked)
	}
	w = &fakeWorld{answers: []bool{true}}
	d, _ = w.broker(policy.Commands{Approval: []policy.Command{"touch"}}).Handle(context.Background(), "touch a; echo x > .git/hooks/pre-commit")
	if !d.Allowed || len(w.asked) != 1 || len(w.ran) != 1 || !strings.Contains(w.asked[0], "structural.git-hooks") {
		t.Errorf("with another reason: %+v, asked %q, ran %d", d, w.asked, len(w.ran))
	}
}

// Approval: the person sees the whole command (quoted, so a newline or
// an escape cannot hide a part) and the rule; only yes runs it; nobody to
// ask is no; a command too long to show is not put to them.
func TestBrokerApproval(t *testing.T) {
	c := policy.Commands{Approval: []policy.Command{"touch"}}
	for _, yes := range []bool{true, false} {
		w := &fakeWorld{answers: []bool{yes}}
		d, _ := w.broker(c).Handle(context.Background(), "touch a\necho b")
		if d.Allowed != yes || len(w.ran) != map[bool]int{true: 1, false: 0}[yes] {
			t.Errorf("answer %v: %+v, ran %d", yes, d, len(w.ran))
		}
		if len(w.asked) != 1 || !strings.Contains(w.asked[0], `"touch a\necho b"`) || !strings.Contains(w.asked[0], "commands.approval[0]") || w.kinds[0] != approve.Approve {
			t.Errorf("question %q %v", w.asked, w.kinds)
		}
	}
	b := (&fakeWorld{}).broker(c)
	b.Ask = nil
	if d, _ := b.Handle(context.Background(), "touch x"); d.Allowed || d.Rule != RuleDeclined {
		t.Errorf("nobody to ask: %+v", d)
	}
	w := &fakeWorld{answers: []bool{true}}
	if d, _ := w.broker(c).Handle(context.Background(), "touch "+strings.Repeat("a", maxQuestionCmd)); d.Allowed || d.Rule != RuleTooLong || len(w.asked) != 0 {
		t.Errorf("too long: %+v, asked %d", d, len(w.asked))
	}
}

// A recursive deletion: confirmed (ConfirmDelete), each root backed up
// before anything runs; declined, nothing is backed up or run; a backup
// that fails runs nothing; no room needs the irreversible confirmation;
// a root that is not there is nothing to keep.
func TestBrokerRecursiveDelete(t *testing.T) {
	ctx := context.Background()
	w := &fakeWorld{answers: []bool{true}}
	d, r := w.broker(policy.Commands{}).Handle(ctx, "rm -rf build dist/x build/y")
	if !d.Allowed || !slices.Equal(w.backedUp, []string{"build", "dist/x"}) || !slices.Equal(r.Backups, []string{"id-build", "id-dist/x"}) || len(w.ran) != 1 {
		t.Fatalf("%+v %+v backed up %q", d, r, w.backedUp)
	}
	if w.kinds[0] != approve.ConfirmDelete || !strings.Contains(w.asked[0], "deletes recursively") || !strings.Contains(w.asked[0], `backed up first: "build", "dist/x"`) {
		t.Errorf("question %q", w.asked)
	}

	w = &fakeWorld{answers: []bool{false}}
	if d, _ := w.broker(policy.Commands{}).Handle(ctx, "rm -rf build"); d.Allowed || len(w.backedUp) != 0 || len(w.ran) != 0 {
		t.Errorf("declined: %+v backed up %q ran %d", d, w.backedUp, len(w.ran))
	}

	w = &fakeWorld{answers: []bool{true}, backup: func(string) (string, error) { return "", errors.New("disk on fire") }}
	if d, _ := w.broker(policy.Commands{}).Handle(ctx, "rm -rf build"); d.Allowed || d.Rule != RuleBackup || len(w.ran) != 0 {
		t.Errorf("backup failed: %+v ran %d", d, len(w.ran))
	}

	for _, second := range []bool{false, true} {
		w = &fakeWorld{answers: []bool{true, second}, backup: func(string) (string, error) { return "", ErrNoRoom }}
		d, r := w.broker(policy.Commands{}).Handle(ctx, "rm -rf build")
		if d.Allowed != second || len(w.ran) != map[bool]int{true: 1, false: 0}[second] || len(w.kinds) != 2 || w.kinds[1] != approve.Irreversible {
			t.Errorf("no room, irreversible %v: %+v ran %d kinds %v", second, d, len(w.ran), w.kinds)
		}
		if second && len(r.Backups) != 0 {
			t.Errorf("irreversible delete reports backups %q", r.Backups)
		}
	}

	// A root that is not there (something else makes or moves it)
	// widens the backup to the whole workspace.
	w = &fakeWorld{answers: []bool{true}, backup: func(p string) (string, error) {
		if p == "gone" {
			return "", ErrAbsent
		}
		return "id-" + p, nil
	}}
	if d, r := w.broker(policy.Commands{}).Handle(ctx, "rm -rf build/x gone"); !d.Allowed || len(w.ran) != 1 || !slices.Equal(w.backedUp, []string{"build/x", "gone", "."}) || !slices.Equal(r.Backups, []string{"id-."}) {
		t.Errorf("absent target: %+v ran %d backed up %q", d, len(w.ran), w.backedUp)
	}

	// Every deletion on the line is backed up, and shown.
	w = &fakeWorld{answers: []bool{true}}
	w.broker(policy.Commands{}).Handle(ctx, "rm -rf build; find src -delete")
	if !slices.Equal(w.backedUp, []string{"build", "src"}) || !strings.Contains(w.asked[0], "find src -delete") {
		t.Errorf("two deletions: backed up %q, asked %q", w.backedUp, w.asked)
	}

	// A line that runs anything beside its deletions keeps all of it:
	// the backups are of the names before the line runs, and the other
	// commands can change what they name (a hunt: a decoy kept, then
	// swapped; a link made, then deleted through).
	for _, line := range []string{"rm -rf build; mv precious build; rm -rf build", "mkdir -p sub && ln -s ../precious/deep sub/link && rm -rf sub/link/x",
		"echo hi; rm -rf build", "rm -rf build & mv src build"} {
		w = &fakeWorld{answers: []bool{true}}
		w.broker(policy.Commands{}).Handle(ctx, line)
		if !slices.Equal(w.backedUp, []string{"."}) {
			t.Errorf("%s: backed up %q", line, w.backedUp)
		}
	}

	// When relative targets may not be the workspace's (a cd, env -C,
	// git -C, eval, a script, a dynamic command word) or the targets are
	// unknown (xargs), all of it is kept.
	for _, line := range []string{"cd sub && rm -rf build", "env -C src rm -rf lib", "env --chdir=src rm -rf lib", "git -C src clean -fdx",
		"x='cd src'; eval \"$x\"; rm -rf lib", ". ./setup.sh; rm -rf lib", "echo src | xargs rm -rf", "$CMD; rm -rf lib",
		// find following links deletes where they lead (a re-test).
		"find -L src -delete", "find src -follow -delete", "find -H src -exec rm -rf {} +",
		// cmake -E chdir DIR CMD runs CMD in DIR (a fourteenth hunt).
		"cmake -E chdir sub rm -rf lib"} {
		w = &fakeWorld{answers: []bool{true}}
		w.broker(policy.Commands{}).Handle(ctx, line)
		if !slices.Equal(w.backedUp, []string{"."}) {
			t.Errorf("%s: backed up %q", line, w.backedUp)
		}
	}
}

func TestBackupRoots(t *testing.T) {
	for _, c := range []struct {
		targets []string
		want    []string
	}{
		{[]string{"build"}, []string{"build"}},
		{[]string{"./build/"}, []string{"build"}},
		{[]string{"/ws/build"}, []string{"build"}},
		{[]string{"build/*.o"}, []string{"build"}},
		{[]string{"*"}, []string{"."}},
		{[]string{"sr[[:alpha:]]"}, []string{"."}}, // an eleventh hunt's class
		{[]string{"."}, []string{"."}},
		{[]string{"$HOME/x"}, []string{"."}},
		{[]string{"~/x"}, []string{"."}},
		{[]string{"a/$(echo b)/c"}, []string{"a"}},
		{[]string{"../ws/build"}, []string{"build"}},
		{[]string{"../other"}, []string{"."}},
		// A name in /tmp or /dev/shm may be a link back in (a hunt:
		// rsync --delete into /tmp/x, a link to keep/, emptied keep/).
		{[]string{"/tmp/x"}, []string{"."}},
		{[]string{"/dev/shm/x"}, []string{"."}},
		{[]string{"/proc/self/cwd/src"}, []string{"."}},
		{[]string{"/"}, []string{"."}},
		{[]string{"/w"}, []string{"."}},
		{[]string{"/wsx/a"}, []string{"."}},
		{[]string{"+(src)"}, []string{"."}},
		{[]string{":/"}, []string{"."}},
		{[]string{":(top)"}, []string{"."}},
		{[]string{"a/b", "a"}, []string{"a"}},
		{[]string{"a", "a/b", "b", "."}, []string{"."}},
		{[]string{`a\ b/c`}, []string{"."}},
		// A ".." after a name may follow a link (a hunt: sub/link/../x
		// kept a decoy sub/x, and the person's tree went).
		{[]string{"sub/link/../x"}, []string{"."}},
		{[]string{"./sub/../x"}, []string{"."}},
		{[]string{"/ws/a/../b"}, []string{"."}},
		{[]string{"../../ws/b"}, []string{"b"}},
		// Deeper in /tmp may be a link back in (a hunt: ln -s "$PWD"
		// /tmp/w; rm -rf /tmp/w/precious kept nothing).
		{[]string{"/tmp/w/precious"}, []string{"."}},
		{[]string{"/tmp/w/"}, []string{"."}},
		{[]string{"/dev/shm/w/x"}, []string{"."}},
	} {
		if got := BackupRoots(c.targets, "/ws"); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.targets, got, c.want)
		}
	}
}

// A deletion git runs elsewhere (GIT_WORK_TREE, GIT_DIR: a hunt, git
// clean deleted other/src and kept src), or one in /tmp or /dev/shm
// (a hunt: rsync --delete into a link there emptied keep/, which no
// backup held), keeps the whole workspace.
func TestBackupRootsElsewhere(t *testing.T) {
	b := &Broker{Options: Options{Workspace: "/ws"}}
	for _, line := range []string{
		"GIT_WORK_TREE=other git clean -fdxq src",
		"GIT_DIR=other/.git git clean -fdx src",
		"env GIT_WORK_TREE=other git rm -rf src",
		"GIT_WORK_TREE=other git clean -fdx src; rm -rf build",
		"GIT_COMMON_DIR=x git clean -fd src",
		"rm -rf build; rsync -a --delete lnk /tmp/hbx-x; rsync -a --delete empty/ /tmp/hbx-x",
		"rm -rf build /tmp/x",
		"rm -rf build; rsync -a --delete empty/ /dev/shm/x",
		// The third hunt: env's -C in a group of short options, and a
		// git option that changes what a pathspec names.
		"env -iCsub rm -rf src",
		"env -vCsub rm -rf src",
		"git --icase-pathspecs clean -fdx SRC",
		"git -c core.worktree=other clean -fdx src",
		// The eighth hunt: where tar and zip find their inputs (-C, -T,
		// @file) is not read.
		"tar cf /tmp/x.tar --remove-files src",
		"zip -rmq /tmp/x.zip src",
		// The sixteenth hunt: yarn workspace NAME runs its command in
		// NAME's folder.
		"yarn workspace web exec rm -rf src",
		// The sixteenth hunt: a runner's option that runs its command in
		// another folder (npm exec -w a -- rm -rf src deleted a/src).
		"npm exec -w a -- rm -rf src",
		"npm exec --workspace=a -- rm -rf src",
		"npm x --ws -- rm -rf src",
		"npx -w a rm -rf src",
		"npm exec --prefix a -- rm -rf src",
		"uv run --directory a rm -rf src",
		"uvx --directory=a rm -rf src",
		"poetry run --directory a rm -rf src",
		"sudo -D a rm -rf src",
		"sudo -EDa rm -rf src",
		"systemd-run --working-directory=a rm -rf src",
		// The seventeenth hunt: xargs adds the words it reads to the
		// deletion (xargs rm -rf src <<< lib deleted lib, which the
		// backup of src did not hold); sudo -i and pkexec run their
		// command in the user's home, firejail --private-cwd in its.
		"xargs rm -rf src <<< lib",
		"xargs rm -rf src < list",
		"xargs -a list rm -rf src",
		"sudo -i rm -rf src",
		"sudo -Ei rm -rf src",
		"sudo --login rm -rf src",
		"pkexec rm -rf src",
		"firejail --private-cwd=a rm -rf src",
	} {
		a, err := Analyze(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got := b.backupRoots(a); !slices.Equal(got, []string{"."}) {
			t.Errorf("%s: backs up %q, want the whole workspace", line, got)
		}
	}
	// rsync's option values are not its destination (the third hunt:
	// --exclude e after the destination backed up e, and src went).
	// The eighth hunt: -@ 1, --compress-threads 1 and the other values
	// rsync takes were backed up in src's place.
	for _, line := range []string{"rsync -a --delete e/ src/ --exclude e", "rsync -a --delete --filter '- x' e/ src/ --include y",
		"rsync -a --delete empty/ src -@ 1", "rsync -a --delete empty/ src --compress-threads 1", "rsync -a --delete empty/ src --zt 1",
		"rsync -a --delete empty/ src --log-format x", "rsync -a --delete empty/ src --stderr e", "rsync -a --delete empty/ src --confine-root x",
		"rsync -a --delete empty/ src -aT x", "rsync -a --delete empty/ src -v@ 1"} {
		a, err := Analyze(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.backupRoots(a); !slices.Equal(got, []string{"src"}) {
			t.Errorf("%s: backs up %q, want src", line, got)
		}
	}
	// Options that leave the folder alone keep the targets.
	for _, line := range []string{"npm exec -y -- rm -rf src", "sudo -u me rm -rf src", "sudo -uDx rm -rf src", "uv run --project a rm -rf src",
		"sudo -ui rm -rf src", "pkexec --keep-cwd rm -rf src"} {
		a, err := Analyze(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.backupRoots(a); !slices.Equal(got, []string{"src"}) {
			t.Errorf("%s: backs up %q, want src", line, got)
		}
	}
	// The control: the same deletions in the workspace keep their roots.
	a, err := Analyze("git clean -fdxq src; rm -rf build")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.backupRoots(a); !slices.Equal(got, []string{"src", "build"}) {
		t.Errorf("control: %q", got)
	}
}

// The runner channel: jobs and outcomes in order, a malformed job
// answered as such, and a broken channel an outcome with Error set.
func TestRunnerChannel(t *testing.T) {
	a, b := net.Pipe()
	go ServeRunner(b, func(_ context.Context, j Job) Outcome {
		return Outcome{ExitCode: len(j.Command), Stdout: []byte(j.Command), Stderr: []byte{0, 1, 2}}
	})
	rc := NewRunnerClient(a)
	for _, cmd := range []string{"echo hi", "", strings.Repeat("z", MaxSize)} {
		o := rc.Run(context.Background(), Job{Command: cmd, Timeout: time.Second})
		if o.Error != "" || o.ExitCode != len(cmd) || string(o.Stdout) != cmd || string(o.Stderr) != "\x00\x01\x02" {
			t.Fatalf("%.20q: %+v", cmd, o)
		}
	}
	// The largest command, spelled at its longest in JSON, still fits.
	worst := strings.Repeat("<", MaxSize)
	if o := rc.Run(context.Background(), Job{Command: worst, Timeout: time.Second}); o.Error != "" || o.ExitCode != MaxSize {
		t.Fatalf("worst-case escaping: %+v", o.Error)
	}
	// A line too large is answered, and the channel goes on.
	go a.Write(append([]byte(`{"command":"`+strings.Repeat("z", 7*MaxSize)+`"}`), '\n'))
	if o := rc.readOutcome(); o.Error != "a job too large" {
		t.Fatalf("oversized: %+v", o)
	}
	if o := rc.Run(context.Background(), Job{Command: "after", Timeout: time.Second}); o.Error != "" || string(o.Stdout) != "after" {
		t.Fatalf("after an oversized job: %+v", o)
	}
	a.Write([]byte("{not json\n"))
	line := make([]byte, 256)
	n, _ := a.Read(line)
	if !strings.Contains(string(line[:n]), "malformed job") {
		t.Errorf("malformed: %q", line[:n])
	}
	a.Close()
	if o := rc.Run(context.Background(), Job{Command: "x"}); o.Error == "" {
		t.Errorf("closed channel: %+v", o)
	}
}

// A job whose caller leaves is ended (its context ends with
// ErrCancelled) and answered, and the channel goes on: the next job runs
// to its own end, not cut short by the cancel that came after the first
// one's outcome. The end of the channel ends a running job.
func TestRunnerCancel(t *testing.T) {
	a, b := net.Pipe()
	ended := make(chan error, 4)
	served := make(chan struct{})
	go func() {
		defer close(served)
		ServeRunner(b, func(ctx context.Context, j Job) Outcome {
			select {
			case <-ctx.Done():
				ended <- context.Cause(ctx)
				return Outcome{Error: "stopped: " + context.Cause(ctx).Error()}
			case <-time.After(j.Timeout):
				ended <- nil
				return Outcome{Stdout: []byte(j.Command)}
			}
		})
	}()
	rc := NewRunnerClient(a)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	o := rc.Run(ctx, Job{Command: "first", Timeout: time.Minute})
	if err := <-ended; !errors.Is(err, ErrCancelled) || !strings.Contains(o.Error, ErrCancelled.Error()) {
		t.Fatalf("the first job ended with %v, answered %+v", err, o)
	}
	// A cancel after its job's end (the caller left as the outcome came)
	// is not taken for the next job's.
	if _, err := a.Write([]byte(`{"kind":"cancel"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if o := rc.Run(context.Background(), Job{Command: "second", Timeout: 200 * time.Millisecond}); o.Error != "" || string(o.Stdout) != "second" || <-ended != nil {
		t.Fatalf("the second job: %+v", o)
	}
	// The channel's end ends the job that runs.
	go rc.Run(context.Background(), Job{Command: "third", Timeout: time.Minute})
	time.Sleep(50 * time.Millisecond)
	a.Close()
	if err := <-ended; !errors.Is(err, ErrCancelled) {
		t.Fatalf("the third job, after the channel's end: %v", err)
	}
	<-served
}

// A Code Mode script's calls that come after its end (queued behind the
// deadline) run nothing; its commands that need the person are refused,
// not asked.
func TestCodeToolsAfterEndAndQuestions(t *testing.T) {
	w := &fakeWorld{answers: []bool{true, true}}
	b := w.broker(policy.Commands{Approval: []policy.Command{"touch"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.tool(ctx, "run_command", json.RawMessage(`{"command":"ls"}`)); err == nil || len(w.ran) != 0 {
		t.Errorf("after the end: %v, ran %d", err, len(w.ran))
	}
	_, err := b.tool(context.Background(), "run_command", json.RawMessage(`{"command":"touch x"}`))
	if err == nil || !strings.Contains(err.Error(), RuleNeedsPerson) || len(w.asked) != 0 || len(w.ran) != 0 {
		t.Errorf("needs the person: %v, asked %q, ran %d", err, w.asked, len(w.ran))
	}
	if _, err := b.tool(context.Background(), "run_command", json.RawMessage(`{"command":"rm -rf build"}`)); err == nil || len(w.asked) != 0 {
		t.Errorf("a deletion from a script: %v, asked %q", err, w.asked)
	}
	if out, err := b.tool(context.Background(), "run_command", json.RawMessage(`{"command":"ls"}`)); err != nil || !strings.Contains(string(out), `"exit_code":7`) {
		t.Errorf("control: %s %v", out, err)
	}
}

// A caller that leaves while the person is asked (its call's context
// ends) gets nothing run, even if the person says yes afterwards: an
// approved command, a confirmed recursive deletion.
func TestBrokerCallerLeft(t *testing.T) {
	c := policy.Commands{Approval: []policy.Command{"touch"}}
	for _, cmd := range []string{"touch a", "rm -rf build"} {
		w := &fakeWorld{answers: []bool{true, true}}
		ctx, cancel := context.WithCancel(context.Background())
		b := w.broker(c)
		ask := b.Ask
		b.Ask = func(action, detail string, kind approve.Kind) approve.Answer {
			cancel() // the caller leaves while the question is open
			return ask(action, detail, kind)
		}
		d, r := b.Handle(ctx, cmd)
		if d.Allowed || r != nil || len(w.ran) != 0 || len(w.backedUp) != 0 || !strings.Contains(d.Detail, "left before the answer") {
			t.Errorf("%s: %+v, ran %d, backed up %v", cmd, d, len(w.ran), w.backedUp)
		}
		// The control: the same yes with the caller still there runs it.
		w = &fakeWorld{answers: []bool{true, true}}
		if d, _ := w.broker(c).Handle(context.Background(), cmd); !d.Allowed || len(w.ran) != 1 {
			t.Errorf("control %s: %+v", cmd, d)
		}
	}
}

// What a question shows of a command is escaped to ASCII everywhere in
// it, the command line and each command needing attention: a zero-width
// space, a filler that draws as nothing, a homoglyph are seen for what
// they are.
func TestBrokerQuestionEscapesInvisibles(t *testing.T) {
	w := &fakeWorld{answers: []bool{false}}
	w.broker(policy.Commands{Approval: []policy.Command{"touch"}}).Handle(context.Background(), "touch \u200bnotes \u3164 \u0430pp")
	if len(w.asked) != 1 {
		t.Fatalf("questions %q", w.asked)
	}
	q := w.asked[0]
	for _, r := range []rune{'\u200b', '\u3164', '\u0430'} {
		if strings.ContainsRune(q, r) {
			t.Errorf("the question shows %U as itself: %q", r, q)
		}
	}
	for _, esc := range []string{`\u200b`, `\u3164`, `\u0430`} {
		if strings.Count(q, esc) != 2 {
			t.Errorf("%s not escaped in both the command line and the detail: %q", esc, q)
		}
	}
}

// A word of the line inside a reason is quoted: it cannot read as the
// analyser's prose, and its invisible characters show escaped.
func TestBrokerReasonQuotesWords(t *testing.T) {
	w := &fakeWorld{answers: []bool{false}}
	line := "unbuffer -x\u3164\u3164\") for the notes file only; nothing in .git is read\" touch notes.txt"
	w.broker(policy.Commands{}).Handle(context.Background(), line)
	if len(w.asked) != 1 {
		t.Fatalf("questions %q", w.asked)
	}
	_, detail, _ := strings.Cut(w.asked[0], " | ")
	if strings.ContainsRune(detail, '\u3164') || !strings.Contains(detail, `\u3164`) {
		t.Errorf("the detail shows U+3164 as itself: %q", detail)
	}
	if !strings.Contains(detail, `\") for the notes file only`) {
		t.Errorf("the word is not quoted in the reason: %q", detail)
	}
}

// A script that fails after tool calls is answered with its error and
// the calls it made, which had their effects, and its logs: not
// "tool_calls": 0.
func TestCodeFailureCountsToolCalls(t *testing.T) {
	b := (&fakeWorld{}).broker(policy.Commands{})
	b.CodeLimits = code.Limits{Memory: 64 << 20, Stack: 1 << 20, Deadline: 5 * time.Second, ToolCalls: 5, Output: 1 << 20, ScriptSize: 1 << 10}
	// A worker that reads the script, makes two calls, waits for their
	// answers and fails.
	b.StartCode = fakeCodeWorker(func(worker *os.File) {
		r := bufio.NewReader(worker)
		r.ReadString('\n')
		fmt.Fprintf(worker, `{"call":{"id":1,"name":"nope","args":null}}`+"\n"+`{"call":{"id":2,"name":"nope","args":null}}`+"\n")
		r.ReadString('\n')
		r.ReadString('\n')
		fmt.Fprintf(worker, `{"done":{"script":{"Message":"Error: boom"},"result":{"value":null,"logs":["\"wrote\""],"tool_calls":2}}}`+"\n")
	})
	d, r := b.Code(context.Background(), "return 1")
	if !d.Allowed || r == nil || !strings.Contains(r.Error, "boom") || r.ToolCalls != 2 || len(r.Logs) != 1 || r.Logs[0] != `"wrote"` || r.Value != nil {
		t.Errorf("%+v, %+v: want the error, 2 tool calls, the log and no value", d, r)
	}
}

// A script's result within its output cap that the answer to the agent
// cannot carry (JSON spells "<" in six bytes) ends as the output limit,
// in an answer that fits, not as an answer rpc refuses whole.
func TestCodeAnswerFits(t *testing.T) {
	for _, c := range []struct {
		value string
		limit string
	}{
		{`"` + strings.Repeat("<", 300_000) + `"`, "output"},
		{`"` + strings.Repeat("x", 300_000) + `"`, ""}, // the control: it fits
	} {
		b := (&fakeWorld{}).broker(policy.Commands{})
		b.CodeLimits = code.Limits{Memory: 64 << 20, Stack: 1 << 20, Deadline: 5 * time.Second, ToolCalls: 1, Output: 1 << 20, ScriptSize: 1 << 10}
		// A worker that reads the script and returns the value.
		b.StartCode = fakeCodeWorker(func(worker *os.File) {
			bufio.NewReader(worker).ReadString('\n')
			fmt.Fprintf(worker, `{"done":{"result":{"value":%s,"logs":[],"tool_calls":0}}}`+"\n", c.value)
		})
		d, r := b.Code(context.Background(), "return 1")
		if r == nil {
			t.Fatalf("no result: %+v", d)
		}
		answer, err := json.Marshal(r)
		if !d.Allowed || err != nil || len(answer) > rpc.MaxBody || r.Limit != c.limit {
			t.Errorf("a value of %d bytes: %+v, limit %q, error %.200q, answer of %d bytes (%v); want limit %q within %d bytes",
				len(c.value), d, r.Limit, r.Error, len(answer), err, c.limit, rpc.MaxBody)
		}
	}
}

// fakeCodeWorker is a StartCode whose worker, the other end of a socket
// pair, is run in a goroutine of its own and closed when run returns.
func fakeCodeWorker(run func(worker *os.File)) func(context.Context, Job) (*os.File, *os.File, error) {
	return func(context.Context, Job) (*os.File, *os.File, error) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		worker := os.NewFile(uintptr(fds[1]), "worker")
		go func() {
			defer worker.Close()
			run(worker)
		}()
		return os.NewFile(uintptr(fds[0]), "bash"), nil, nil
	}
}
