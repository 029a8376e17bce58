package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/components/fs/backup"
	"github.com/pinfold/pinfold/components/session"
)

// backupsWorld is a workspace owned by wsUID:wsGID and its real backup
// store (under /var/lib/pinfold/backups, removed when the test ends).
type backupsWorld struct {
	ws    string
	store string
}

const wsUID, wsGID = 4242, 4343

func newBackupsWorld(t *testing.T) *backupsWorld {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
			t.Fatalf("requires root (the backup stores are root's), found euid %d (PINFOLD_REQUIRE_ALL_FEATURES=1 turns this skip into a failure)", os.Geteuid())
		}
		t.Skipf("requires root (the backup stores are root's), found euid %d", os.Geteuid())
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, wsUID, wsGID); err != nil {
		t.Fatal(err)
	}
	dir, err := session.StoreDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &backupsWorld{ws: ws, store: dir}
}

// stage backs up rel (beneath the workspace) with label, as fs would,
// deletes it, and returns the backup's id.
func (w *backupsWorld) stage(t *testing.T, rel, label string) string {
	t.Helper()
	s, err := backup.Open(w.store, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := filepath.Join(w.ws, rel)
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	src := os.NewFile(uintptr(fd), p)
	defer src.Close()
	b, err := s.Stage(src, label, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rel == "." {
		es, _ := os.ReadDir(w.ws)
		for _, e := range es {
			os.RemoveAll(filepath.Join(w.ws, e.Name()))
		}
	} else if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// backupsRun runs `launcher backups ARGS... --workspace WS`.
func (w *backupsWorld) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append(append([]string{"backups"}, args...), "--workspace", w.ws), &o, &e)
	return code, o.String(), e.String()
}

// restore gives the restored tree to the workspace's owner, whatever the
// backup recorded, and drops setuid and setgid.
func TestBackupsRestoreGivesWorkspaceOwner(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "d")
	for _, step := range []error{
		os.Mkdir(d, 0o755),
		os.WriteFile(filepath.Join(d, "tool"), []byte("#!/bin/sh\n"), 0o755),
		os.Symlink("tool", filepath.Join(d, "link")),
		os.Lchown(filepath.Join(d, "tool"), 1907603510, 65534),
		os.Chmod(filepath.Join(d, "tool"), 0o755|os.ModeSetuid|os.ModeSetgid),
		os.Lchown(filepath.Join(d, "link"), 1907603510, 65534),
		os.Lchown(d, 65534, 65534),
		os.Chmod(d, 0o755|os.ModeSetgid),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	id := w.stage(t, "d", "d")
	code, out, errs := w.run(t, "restore", id)
	if code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, errs)
	}
	for _, p := range []string{d, filepath.Join(d, "tool"), filepath.Join(d, "link")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != wsUID || st.Gid != wsGID {
			t.Errorf("%s: restored as %d:%d, want the workspace's %d:%d", p, st.Uid, st.Gid, wsUID, wsGID)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK && st.Mode&07777 != 0o755 {
			t.Errorf("%s: restored with mode %#o, want 0755", p, st.Mode&07777)
		}
	}
	// show still says what fs recorded.
	code, out, _ = w.run(t, "show", id)
	if code != 0 || !strings.Contains(out, "file    6755 1907603510:65534") {
		t.Errorf("show: %d\n%s", code, out)
	}
}

// hostile is a name an agent can give a directory: an OSC title, a bell,
// a clear screen, an 8-bit CSI and a right-to-left override.
const hostile = "e\x1b]0;TITLE\x07\x1b[2J\u009b2J\u202egnp.x"

// noControls fails when s holds what a terminal would act on.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s prints %q raw:\n%q", what, bad, s)
		}
	}
}

// Labels, paths and names reach the terminal escaped: list, show,
// restore and its errors; --json stays JSON.
func TestBackupsEscapeNames(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, hostile)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, hostile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, hostile, hostile)
	quoted := strconv.Quote(hostile)

	code, out, errs := w.run(t, "list")
	noControls(t, "list", out+errs)
	if code != 0 || !strings.Contains(out, quoted) {
		t.Errorf("list: %d\n%s%s", code, out, errs)
	}
	code, out, errs = w.run(t, "show", id)
	noControls(t, "show", out+errs)
	if code != 0 || strings.Count(out, quoted) != 2 {
		t.Errorf("show: %d\n%s%s", code, out, errs)
	}
	code, out, errs = w.run(t, "restore", id)
	noControls(t, "restore", out+errs)
	if code != 0 || !strings.Contains(out, strconv.Quote(d)) {
		t.Errorf("restore: %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(d, hostile)); err != nil || string(b) != "x" {
		t.Errorf("restored file: %q %v", b, err)
	}
	code, out, errs = w.run(t, "restore", id) // the name exists now
	noControls(t, "restore's error", out+errs)
	if code != exitFailure || !strings.Contains(errs, quoted) {
		t.Errorf("second restore: %d\n%s%s", code, out, errs)
	}
	code, out, _ = w.run(t, "list", "--json")
	noControls(t, "list --json", out)
	var list []backup.Info
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0].Label != hostile {
		t.Errorf("list --json: %d %v\n%s", code, err, out)
	}
	code, out, _ = w.run(t, "show", id, "--json")
	noControls(t, "show --json", out)
	var shown struct {
		Info    backup.Info    `json:"info"`
		Entries []backup.Entry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || shown.Info.Label != hostile || len(shown.Entries) != 2 || shown.Entries[1].Path != hostile {
		t.Errorf("show --json: %d %v\n%s", code, err, out)
	}
}

// remove deletes one backup for good, saying which; an id that is not
// one is a usage error, one that is not kept a failure.
func TestBackupsRemove(t *testing.T) {
	w := newBackupsWorld(t)
	for _, name := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(w.ws, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, b := w.stage(t, "a", "a"), w.stage(t, "b", "b")
	code, out, errs := w.run(t, "remove", a)
	if code != 0 || !strings.HasPrefix(out, "removed "+a+` ("a", `) {
		t.Fatalf("remove: %d\n%s%s", code, out, errs)
	}
	code, out, _ = w.run(t, "list")
	if code != 0 || strings.Contains(out, a) || !strings.Contains(out, b) {
		t.Errorf("list after remove: %d\n%s", code, out)
	}
	if code, out, errs = w.run(t, "remove", a); code != exitFailure || !strings.Contains(errs, "no such backup") {
		t.Errorf("remove again: %d\n%s%s", code, out, errs)
	}
	if code, out, errs = w.run(t, "remove", "../x"); code != exitUsage {
		t.Errorf("remove of a bad id: %d\n%s%s", code, out, errs)
	}
}

// A backup of the whole workspace (label ".", what bash stages for
// rm -rf *) is restored with --as NAME as DIR/NAME; without --as the
// error says so.
func TestBackupsRestoreWholeWorkspace(t *testing.T) {
	w := newBackupsWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, "src", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.ws, "src", "pkg", "a.go"), []byte("package pkg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, ".", ".")

	code, out, errs := w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, "whole workspace") || !strings.Contains(errs, "launcher: hint: give it a name with --as NAME") {
		t.Fatalf("restore without --as: %d\n%s%s", code, out, errs)
	}
	code, out, errs = w.run(t, "restore", id, "--as", "before-rm")
	if code != 0 {
		t.Fatalf("restore --as: %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(w.ws, "before-rm", "src", "pkg", "a.go")); err != nil || string(b) != "package pkg\n" {
		t.Fatalf("restored as DIR/NAME: %q %v", b, err)
	}
	if want := strconv.Quote(filepath.Join(w.ws, "before-rm")); !strings.Contains(out, want) {
		t.Errorf("restore says %q, want it to name %s", out, want)
	}
}

// Ctrl-C during a restore stops it and removes what it made: by default
// it ended the process and left a partial tree, root's and 0700, under
// the restore's temporary name in the workspace. The test catches SIGINT
// itself too, so that a restore that does not would not end the test.
func TestBackupsRestoreInterrupted(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "d")
	if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "sub", "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "d", "d")
	safety := make(chan os.Signal, 1)
	signal.Notify(safety, unix.SIGINT)
	defer signal.Stop(safety)
	testHookRestoring = func(ctx context.Context) {
		unix.Kill(os.Getpid(), unix.SIGINT)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Error("SIGINT did not stop the restore")
		}
	}
	defer func() { testHookRestoring = nil }()
	code, out, errs := w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, "launcher: error: backups: the restore of "+id+" was interrupted: nothing was restored") {
		t.Fatalf("interrupted restore: %d\n%s%s", code, out, errs)
	}
	if es, _ := os.ReadDir(w.ws); len(es) != 0 {
		t.Errorf("an interrupted restore left %v in the workspace", es)
	}
}

// A restore's hint fits its failure: another name with --as only when
// the name is taken; verify for a damaged backup, not another name.
func TestBackupsRestoreHints(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "d", "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, "already exists") || !strings.Contains(errs, "launcher: hint: give another name with --as NAME") {
		t.Errorf("restore onto an existing name: %d\n%s%s", code, out, errs)
	}
	if err := os.WriteFile(filepath.Join(w.store, id, "data", "f"), []byte("DATA"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = w.run(t, "restore", id, "--as", "d2")
	if code != exitFailure || !strings.Contains(errs, "does not match its manifest") || strings.Contains(errs, "--as") || !strings.Contains(errs, "launcher: hint: `launcher backups verify "+id) {
		t.Errorf("restore of a damaged backup: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(w.ws, "d2")); !os.IsNotExist(err) {
		t.Errorf("a damaged backup was restored: %v", err)
	}
}

// A place to restore to that is gone, or is now a symbolic link, is said
// in words, not as ENOENT's or ELOOP's, with what to do when it is gone.
func TestBackupsRestorePlaceRefused(t *testing.T) {
	w := newBackupsWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "a/b", "a/b")
	if err := os.Rename(filepath.Join(w.ws, "a"), filepath.Join(w.ws, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(w.ws, "a")
	code, out, errs := w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, fmt.Sprintf("the place to restore to, %q, does not exist", a)) || !strings.Contains(errs, "launcher: hint: make it (as the workspace's owner: mkdir -p "+a+")") {
		t.Errorf("restore into a directory that is gone: %d\n%s%s", code, out, errs)
	}
	if err := os.Symlink("elsewhere", a); err != nil {
		t.Fatal(err)
	}
	code, out, errs = w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, "is or passes through a symbolic link or a mount point") {
		t.Errorf("restore through a symbolic link: %d\n%s%s", code, out, errs)
	}
	if es, _ := os.ReadDir(filepath.Join(w.ws, "elsewhere")); len(es) != 0 {
		t.Errorf("restored through the link: %v", es)
	}
}

// A --workspace that is not a directory is refused for restore.
func TestBackupsRestoreRefusesWorkspaceNotADirectory(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "d", "d")
	// The workspace itself replaced by a link to a directory.
	real := w.ws + ".real"
	if err := os.Rename(w.ws, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, w.ws); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(w.ws)
	code, _, errs := w.run(t, "restore", id)
	if code != exitFailure || !strings.Contains(errs, "is not a directory") {
		t.Fatalf("restore into a linked workspace: %d %s", code, errs)
	}
	if _, err := os.Lstat(filepath.Join(real, "d")); err == nil {
		t.Fatal("restored through the link")
	}
}

// A label that is not exactly the path the tree had (cut at MaxLabel
// bytes, or with bytes that were not UTF-8 replaced) is no place to
// restore to: refused without --as, and with it the tree goes back as
// DIR/NAME, never under the shortened or altered name.
func TestBackupsRestoreUntrustedLabel(t *testing.T) {
	w := newBackupsWorld(t)
	for i, label := range []string{strings.Repeat("d", backup.MaxLabel+100), "bad\xffname"} {
		rel := fmt.Sprintf("t%d", i)
		if err := os.MkdirAll(filepath.Join(w.ws, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.ws, rel, "f"), []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		id := w.stage(t, rel, label)
		code, out, errs := w.run(t, "restore", id)
		if code != exitFailure || !strings.Contains(errs, "not exactly the path") || !strings.Contains(errs, "--as NAME") {
			t.Errorf("%d: restore without --as: %d\n%s%s", i, code, out, errs)
		}
		if es, _ := os.ReadDir(w.ws); len(es) != 0 {
			t.Errorf("%d: something was restored: %v", i, es)
		}
		as := fmt.Sprintf("back%d", i)
		if code, out, errs = w.run(t, "restore", id, "--as", as); code != 0 {
			t.Fatalf("%d: restore --as: %d\n%s%s", i, code, out, errs)
		}
		if b, err := os.ReadFile(filepath.Join(w.ws, as, "f")); err != nil || string(b) != "data" {
			t.Errorf("%d: restored as DIR/NAME: %q %v", i, b, err)
		}
		os.RemoveAll(filepath.Join(w.ws, as))
	}
}

// list, show, verify and restore never make a store: one that is not
// there holds nothing (a hunt's `backups list --workspace` of any path,
// even one that did not exist, made root's store for it).
func TestBackupsNeverMakeAStore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the stores are root's")
	}
	ws := filepath.Join(t.TempDir(), "never-backed-up")
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"show", "x"}, {"verify", "x"}, {"restore", "x"}} {
		var o, e bytes.Buffer
		code := run(append(append([]string{"backups"}, args...), "--workspace", ws), &o, &e)
		want := exitUsage
		if args[0] == "list" {
			want = exitOK
		}
		if code != want {
			t.Errorf("%v: exit %d (%s), want %d", args, code, e.String(), want)
		}
		// An empty list says so on stderr (a path spelt otherwise than the
		// policy's is not silently a workspace with nothing kept); stdout
		// stays the list: nothing, or [] for --json.
		switch strings.Join(args, " ") {
		case "list":
			if o.Len() != 0 || !strings.Contains(e.String(), "launcher: note: no backups are kept for the workspace "+ws) {
				t.Errorf("list: stdout %q, stderr %q", o.String(), e.String())
			}
		case "list --json":
			if strings.TrimSpace(o.String()) != "[]" {
				t.Errorf("list --json: stdout %q", o.String())
			}
		}
	}
	if _, err := os.Lstat(session.StorePath(ws)); !os.IsNotExist(err) {
		t.Errorf("a store was made for %s: %v", ws, err)
		os.RemoveAll(session.StorePath(ws))
	}
}

// An id that is not one, and an --as that is not one name, are the
// caller's mistakes: exit 120 with a hint, not a failure (125).
func TestBackupsBadInputIsUsage(t *testing.T) {
	w := newBackupsWorld(t)
	d := filepath.Join(w.ws, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	id := w.stage(t, "d", "d")
	for _, args := range [][]string{{"show", "nope"}, {"verify", "nope"}, {"restore", "nope"}, {"restore", id, "--as", "a/b"}, {"restore", id, "--as", ".."},
		// Too long for a file name; a control character (a paste's
		// escape sequence) that would be in the workspace for good.
		{"restore", id, "--as", strings.Repeat("a", 256)}, {"restore", id, "--as", "x\x1b[2J"}, {"restore", id, "--as", "x\n"}} {
		code, _, errs := w.run(t, args...)
		if code != exitUsage || !strings.Contains(errs, "launcher: hint:") {
			t.Errorf("%q: %d %s", args, code, errs)
		}
	}
	if es, _ := os.ReadDir(w.ws); len(es) != 0 {
		t.Errorf("refused restores left %v", es)
	}
}
