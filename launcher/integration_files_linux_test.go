package launcher

// Integration tests, files and the launch itself: see
// integration_linux_test.go for the harness.

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/pinfold/pinfold/internal/mountinfo"
	"github.com/pinfold/pinfold/policy"
	"golang.org/x/sys/unix"
)

// A file in no list cannot be read; a file in the read list can.
func TestIntegrationReadOutsideLists(t *testing.T) {
	s := newSandbox(t)
	secret := s.file(t, filepath.Join(s.outside, "secret"), "s3cret\n")
	listed := s.file(t, filepath.Join(s.dir, "listed"), "public\n")
	p := itPol{read: []string{listed}}
	s.allowed(t, p, itOpts{}, "read", listed)
	s.denied(t, p, itOpts{}, "EACCES", "read", secret)
}

// The agent writes its workspace, and what it creates is owned by the
// workspace's owner on the host (the idmapped mount), not by the
// throwaway uid.
func TestIntegrationWriteWorkspace(t *testing.T) {
	s := newSandbox(t)
	target := filepath.Join(s.ws, "made-inside")
	s.allowed(t, itPol{}, itOpts{}, "write", target)
	st := mustExist(t, target)
	if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != s.uid {
		t.Errorf("%s is owned by uid %d on the host, want the workspace owner %d", target, uid, s.uid)
	}
	if b, _ := os.ReadFile(target); string(b) != "written by probe\n" {
		t.Errorf("%s holds %q", target, b)
	}
}

func TestIntegrationWriteOutsideWorkspace(t *testing.T) {
	s := newSandbox(t)
	target := filepath.Join(s.outside, "x")
	r := s.launch(t, itPol{}, itOpts{}, "write", target)
	// The host's mounts are read-only in the sandbox: EROFS answers before
	// Landlock would (TestIntegrationLandlockBehindReadOnlyMounts shows
	// Landlock refusing where a mount would allow).
	itExpect(t, "confined write outside", r, "denied EROFS", 1)
	mustNotExist(t, target, "a refused write must not create the file")
	s.control(t, itOpts{}, "write", target)
	mustExist(t, target)
}

// A documented limit (SD-22): a file with a second name in a write path
// is writable through that name, though its first name is in a read
// path only: Landlock and the mounts go by path, and a hard link is the
// same file. The control: the write through the read path's name is
// refused. (policy check advises on such files: policy.TestHardLinked.)
func TestIntegrationHardLinkLimit(t *testing.T) {
	s := newSandbox(t)
	ro := filepath.Join(s.outside, "ro")
	must(t, os.Mkdir(ro, 0o755))
	f := filepath.Join(ro, "f")
	s.file(t, f, "original\n")
	must(t, os.Link(f, filepath.Join(s.ws, "linked")))
	p := itPol{read: []string{ro}}
	if r := s.launch(t, p, itOpts{}, "write", f); !strings.HasPrefix(r.stdout, "denied ") {
		t.Fatalf("a write by the read path's name: %s", r)
	}
	if b, _ := os.ReadFile(f); string(b) != "original\n" {
		t.Fatalf("the refused write changed the file: %q", b)
	}
	r := s.launch(t, p, itOpts{}, "write", filepath.Join(s.ws, "linked"))
	if r.code != 0 {
		t.Fatalf("the write by the workspace's name: %s", r)
	}
	if b, _ := os.ReadFile(f); string(b) == "original\n" {
		t.Errorf("the limit SD-22 describes no longer holds (update the register): the file in the read path is unchanged")
	}
}

// Write-xor-execute: a program the agent has just written in its
// workspace does not run (SR-01).
func TestIntegrationExecWrittenFile(t *testing.T) {
	s := newSandbox(t)
	prog := filepath.Join(s.ws, "prog")
	s.denied(t, itPol{}, itOpts{}, "EACCES", "write-exec", prog)
	// The copy was written (the probe reports a failed write as error,
	// never as denied): only the exec was refused.
	if st := mustExist(t, prog); st.Size() == 0 || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("%s: mode %v, %d bytes: the probe's copy was not written whole", prog, st.Mode(), st.Size())
	}
	// Landlock refuses the execve above by itself; an executable mapping
	// of a written file (what ld.so does for a library) only the write
	// tree's noexec mount refuses (SR-01).
	s.denied(t, itPol{}, itOpts{}, "EPERM", "write-map-exec", filepath.Join(s.ws, "lib"))
}

// A symlink planted in the workspace does not carry a write outside it,
// whether its target exists or not.
func TestIntegrationSymlinkWriteOut(t *testing.T) {
	s := newSandbox(t)
	t.Run("new target", func(t *testing.T) {
		target := filepath.Join(s.outside, "created-through-link")
		link := filepath.Join(s.ws, "escape")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		r := s.launch(t, itPol{}, itOpts{}, "symlink-write", link)
		itExpect(t, "confined symlink-write", r, "denied EROFS", 1) // the link leads onto the read-only host mount
		mustNotExist(t, target, "the write went through the symlink")
		s.control(t, itOpts{}, "symlink-write", link)
		mustExist(t, target)
	})
	t.Run("existing target", func(t *testing.T) {
		target := s.file(t, filepath.Join(s.outside, "existing"), "original\n")
		link := filepath.Join(s.ws, "escape-existing")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		r := s.launch(t, itPol{}, itOpts{}, "symlink-write", link)
		itExpect(t, "confined symlink-write", r, "denied EROFS", 1) // the link leads onto the read-only host mount
		if b, _ := os.ReadFile(target); string(b) != "original\n" {
			t.Fatalf("%s now holds %q: the write went through the symlink", target, b)
		}
		s.control(t, itOpts{}, "symlink-write", link)
	})
}

// Hard links and renames cannot move a workspace file out of the
// workspace. As root the workspace is an idmapped mount of its own, so
// the kernel answers EXDEV before Landlock is asked; the second case uses
// a second write path on the outside directory's mount, where Landlock
// itself refuses (EACCES). Both directories and the file are open to
// everyone there, so that ordinary permissions (the agent's throwaway uid
// owns nothing outside the idmapped workspace; protected_hardlinks) do
// not answer first.
func TestIntegrationLinkRenameOut(t *testing.T) {
	s := newSandbox(t)
	t.Run("from the workspace", func(t *testing.T) {
		src := s.file(t, filepath.Join(s.ws, "f"), "data\n")
		linkDst, renameDst := filepath.Join(s.outside, "linked"), filepath.Join(s.outside, "renamed")
		itExpect(t, "confined link", s.launch(t, itPol{}, itOpts{}, "link", src, linkDst), "denied EROFS", 1)
		itExpect(t, "confined rename", s.launch(t, itPol{}, itOpts{}, "rename", src, renameDst), "denied EXDEV", 1)
		mustNotExist(t, linkDst, "hard link out of the workspace")
		mustNotExist(t, renameDst, "rename out of the workspace")
		mustExist(t, src)
		s.control(t, itOpts{}, "link", src, linkDst)
		s.control(t, itOpts{}, "rename", src, renameDst)
	})
	t.Run("from a write path on the same mount", func(t *testing.T) {
		w2 := filepath.Join(s.dir, "w2")
		if err := os.Mkdir(w2, 0o755); err != nil {
			t.Fatal(err)
		}
		p := itPol{write: []string{w2}}
		src := s.file(t, filepath.Join(w2, "g"), "data\n")
		for _, f := range []string{w2, s.outside, src} {
			if err := os.Chmod(f, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		linkDst, renameDst := filepath.Join(s.outside, "linked2"), filepath.Join(s.outside, "renamed2")
		itExpect(t, "confined link", s.launch(t, p, itOpts{}, "link", src, linkDst), "denied EROFS", 1)
		itExpect(t, "confined rename", s.launch(t, p, itOpts{}, "rename", src, renameDst), "denied EXDEV", 1)
		mustNotExist(t, linkDst, "hard link out of a write path")
		mustNotExist(t, renameDst, "rename out of a write path")
		s.control(t, itOpts{}, "link", src, linkDst)
		s.control(t, itOpts{}, "rename", src, renameDst)
	})
}

// Hash first: with a mismatching pin nothing starts, so a probe that
// would create a file does not, and the launcher exits 123.
func TestIntegrationHashMismatch(t *testing.T) {
	s := newSandbox(t)
	target := filepath.Join(s.ws, "should-not-exist")
	other := sha256.Sum256([]byte(s.policyText(itPol{}) + "# edited\n"))
	r := s.launch(t, itPol{}, itOpts{hash: hex.EncodeToString(other[:])}, "write", target)
	if r.code != 123 || r.stdout != "" || !strings.Contains(r.stderr, "does not match the pinned sha256") {
		t.Fatalf("want exit 123, no output and a mismatch error, got %s", r)
	}
	mustNotExist(t, target, "the agent ran despite the hash mismatch")
	// Control: with the right pin the same launch creates the file.
	s.allowed(t, itPol{}, itOpts{}, "write", target)
	mustExist(t, target)
}

// The policy file is read once: the bytes hashed are the bytes parsed
// (SR-32). A launcher that opened it again after the hash matched would
// parse whatever is there by then. Every open of the file is counted
// with inotify while a launch runs; the control is the same watch
// counting two opens of our own.
func TestIntegrationPolicyReadOnce(t *testing.T) {
	s := newSandbox(t)
	path, hash := s.writePolicy(t, itPol{})
	opens := func(run func()) int {
		t.Helper()
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			t.Fatalf("inotify: %v", err)
		}
		defer unix.Close(fd)
		// Reads and closes are watched too, though not counted: inotify
		// merges an event into an identical one still queued, so two
		// opens count as two only with another event between them.
		if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_ACCESS|unix.IN_CLOSE); err != nil {
			t.Fatalf("inotify watch %s: %v", path, err)
		}
		run()
		n := 0
		buf := make([]byte, 64<<10)
		for {
			got, err := unix.Read(fd, buf)
			if err == unix.EAGAIN || got <= 0 {
				return n
			}
			if err != nil {
				t.Fatalf("inotify read: %v", err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= got; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&unix.IN_OPEN != 0 {
					n++
				}
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
	control := opens(func() {
		for range 2 {
			if _, err := os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
		}
	})
	if control != 2 {
		t.Fatalf("control: two reads of the policy counted %d opens, want 2", control)
	}
	var r itResult
	n := opens(func() {
		r = s.run(t, itOpts{}, itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--quiet", "--", itEnv.probe, "noop")
	})
	if r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("launch: want ok and exit 0, got %s", r)
	}
	if n != 1 {
		t.Errorf("the launch opened the policy file %d times, want once: the bytes parsed must be the bytes hashed", n)
	}
}

// The launcher's exit status is the agent's, and 128+N when signal N
// killed it.
func TestIntegrationExitStatus(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"exit", "0"}, 0},
		{[]string{"exit", "3"}, 3},
		{[]string{"exit", "200"}, 200},
		{[]string{"kill-self", "9"}, 137},
		{[]string{"kill-self", "15"}, 143},
	} {
		if r := s.direct(t, itOpts{}, c.args...); r.code != c.code || r.stdout != "" {
			t.Fatalf("control %v: want exit %d and no output, got %s", c.args, c.code, r)
		}
		if r := s.launch(t, itPol{}, itOpts{}, c.args...); r.code != c.code || r.stdout != "" {
			t.Errorf("confined %v: want exit %d and no output, got %s", c.args, c.code, r)
		}
	}
}

// An inherited descriptor does not reach the agent (SR-10): the launcher
// runs with a pipe at fds 3 to 9; stage 2's own pipes take 3 to 6.
func TestIntegrationInheritedFD(t *testing.T) {
	s := newSandbox(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	o := itOpts{extraFiles: []*os.File{w, w, w, w, w, w, w}}
	// 4 and 5 are also stage 2's own pipes to stage 1 (its reports and
	// stage 1's signals), which stage 2 keeps open while the agent runs.
	for _, fd := range []string{"3", "4", "5", "6", "9"} {
		s.denied(t, itPol{}, o, "EBADF", "fd", fd)
	}
}

// Descriptors the launcher inherited without close-on-exec reach no
// process under it: not the agent (TestIntegrationInheritedFD), and not
// stage 2 either, which lives as long as the agent and whose descriptors
// are one /proc lookup from being the agent's. A file handed on fds 3 to
// 9 is looked for among the open files of every process under the
// launcher once the agent runs; the control is the launcher itself,
// which holds it.
func TestIntegrationStage2InheritsNoFD(t *testing.T) {
	s := newSandbox(t)
	path := s.file(t, filepath.Join(s.dir, "inherited"), "")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	holds := func(pid int) bool {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, e := range ents {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && l == path {
				return true
			}
		}
		return false
	}
	marker := uniqueName("pinfold-it-marker")
	var launcherHolds, seen bool
	var holders []string
	looked := make(chan struct{})
	o := itOpts{extraFiles: []*os.File{f, f, f, f, f, f, f}, onStart: func(launcher int) {
		go func() {
			defer close(looked)
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				under := descendants(launcher)
				for _, pid := range under {
					cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
					seen = seen || bytes.HasPrefix(cmd, []byte(itEnv.probe+"\x00")) && bytes.Contains(cmd, []byte(marker))
				}
				if !seen {
					continue
				}
				launcherHolds = holds(launcher)
				for _, pid := range under {
					if holds(pid) {
						cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
						holders = append(holders, fmt.Sprintf("pid %d (%s)", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
					}
				}
				return
			}
		}()
	}}
	r := s.launch(t, itPol{}, o, "sleep", "2", marker)
	<-looked
	if r.code != 0 {
		t.Fatalf("launch: want exit 0, got %s", r)
	}
	if !seen || !launcherHolds {
		t.Fatalf("control: agent seen %v, the launcher holds the inherited file %v: want both", seen, launcherHolds)
	}
	if len(holders) > 0 {
		t.Errorf("the inherited file is open in %s, under the launcher", strings.Join(holders, ", "))
	}
}

// A variable of the launcher's environment that the policy does not pass
// is absent; one the policy sets is present.
func TestIntegrationEnvSecret(t *testing.T) {
	s := newSandbox(t)
	o := itOpts{env: []string{"SECRET_TOKEN=hunter2"}}
	p := itPol{set: map[string]string{"PINFOLD_IT": "1"}}
	itExpect(t, "confined env SECRET_TOKEN", s.launch(t, p, o, "env", "SECRET_TOKEN"), "absent", 0)
	itExpect(t, "control env SECRET_TOKEN", s.direct(t, o, "env", "SECRET_TOKEN"), "present", 1)
	itExpect(t, "confined env PINFOLD_IT", s.launch(t, p, o, "env", "PINFOLD_IT"), "present", 1)
}

// The agent's environment is exactly what the policy builds (SR-11):
// PATH, which it passes, what it sets, and HOME, the sandbox's private
// home (the host's HOME is not in the list here, since its name would
// show either way). The launcher's own environment holds the
// variables a person's session carries, credentials and sockets among
// them, none of which the agent gets; the control sees them all.
func TestIntegrationEnvExact(t *testing.T) {
	s := newSandbox(t)
	var host []string
	for _, n := range []string{"USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR", "PWD", "SSH_AUTH_SOCK",
		"SSH_CONNECTION", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS",
		"GPG_AGENT_INFO", "LD_PRELOAD", "LD_LIBRARY_PATH", "GIT_ASKPASS", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"GITHUB_TOKEN", "KUBECONFIG", "DOCKER_HOST", "HTTPS_PROXY", "http_proxy", "NO_PROXY"} {
		host = append(host, n+"=x")
	}
	o := itOpts{env: host}
	p := itPol{set: map[string]string{"PINFOLD_IT": "1"}}
	itExpect(t, "confined env-names", s.launch(t, p, o, "env-names"), "names HOME PATH PINFOLD_IT", 0)
	if r := s.direct(t, o, "env-names"); r.code != 0 || strings.Count(r.stdout, " ") != len(host)+1 {
		t.Fatalf("control env-names (unconfined): want PATH and the %d variables set, got %s", len(host), r)
	}
}

// A setuid-root program gains nothing under the launcher (no_new_privs);
// the control runs it as nobody, where it does gain euid 0, so the file
// system honours the setuid bit.
func TestIntegrationSetuidNoNewPrivs(t *testing.T) {
	s := newSandbox(t)
	r := s.launch(t, itPol{}, itOpts{}, "setuid-exec", itEnv.suidProbe)
	var euid, uid int
	if _, err := fmt.Sscanf(r.stdout, "euid %d uid %d\n", &euid, &uid); err != nil || r.code != 0 {
		t.Fatalf("confined setuid-exec: want `euid N uid N`, got %s", r)
	}
	if euid == 0 || euid != uid {
		t.Fatalf("confined setuid-exec: the setuid-root program ran with euid %d (uid %d): privilege gained", euid, uid)
	}
	nobody := &itSandbox{dir: s.dir, uid: 65534}
	itExpect(t, "control setuid-exec as nobody", nobody.direct(t, itOpts{}, "setuid-exec", itEnv.suidProbe), "euid 0 uid 65534", 0)
}

// Mounting, unsharing namespaces and rewriting sysctls are refused.
func TestIntegrationKernelInterfaces(t *testing.T) {
	s := newSandbox(t)
	mnt := filepath.Join(s.ws, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		errno string
		args  []string
	}{
		{"EPERM", []string{"mount-tmpfs", mnt}},
		{"EPERM", []string{"unshare-user"}},
		{"EPERM", []string{"unshare-mount"}},
		// vm.memfd_noexec is the sandbox's own (per pid namespace, set to
		// 2 by stage 2); the agent must not lower it.
		{"EACCES", []string{"write-proc-sys", "vm/memfd_noexec"}},
		// Fileless execution: memfd_create without MFD_NOEXEC_SEAL, and
		// with MFD_EXEC, are both refused.
		{"EACCES", []string{"memfd-exec"}},
		{"EACCES", []string{"memfd-exec", "exec"}},
	} {
		name := c.args[0]
		if c.args[0] == "memfd-exec" {
			name = strings.Join(c.args, " ")
		}
		t.Run(name, func(t *testing.T) {
			s.denied(t, itPol{}, itOpts{}, c.errno, c.args...)
		})
	}
}

// As root, a write path beside the workspace (same owner) is writable: it
// is a writable clone idmapped onto the throwaway uid, like the workspace.
func TestIntegrationWritePathBesideWorkspace(t *testing.T) {
	s := newSandbox(t)
	w2 := filepath.Join(s.dir, "w2")
	if err := os.Mkdir(w2, 0o755); err != nil {
		t.Fatal(err)
	}
	s.allowed(t, itPol{write: []string{w2}}, itOpts{}, "write", filepath.Join(w2, "x"))
}

// Behind the read-only host mounts, Landlock still refuses on its own:
// /dev/shm is a private, writable tmpfs that no rule grants (EACCES),
// while the private /tmp, which the launcher grants, takes the write.
func TestIntegrationLandlockBehindReadOnlyMounts(t *testing.T) {
	s := newSandbox(t)
	s.denied(t, itPol{}, itOpts{}, "EACCES", "write", "/dev/shm/x")
	s.allowed(t, itPol{}, itOpts{}, "write", "/tmp/x")
}

// A read path beneath the host's /tmp is grafted into the sandbox's
// private /tmp as a read-only clone, so the write rule the launcher gives
// its own /tmp does not reach it, even where the file's mode would allow
// the write.
func TestIntegrationReadPathUnderTmpStaysReadOnly(t *testing.T) {
	s := newSandbox(t)
	dir, err := os.MkdirTemp("/tmp", "pinfold-it-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "doc")
	if err := os.WriteFile(doc, []byte("read me\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(doc, 0o666); err != nil {
		t.Fatal(err)
	}
	p := itPol{read: []string{dir}}
	s.allowed(t, p, itOpts{}, "read", doc)
	itExpect(t, "confined write into a read path under /tmp", s.launch(t, p, itOpts{}, "write", doc), "denied EROFS", 1)
	if b, _ := os.ReadFile(doc); string(b) != "read me\n" {
		t.Errorf("%s was changed: %q", doc, b)
	}
	s.control(t, itOpts{}, "write", doc)
}

// Listing a path beneath a hidden socket directory grafts that path back
// alone: the rest of /run stays hidden (SR-08).
func TestIntegrationHiddenDirGraftsOnlyTheListedPath(t *testing.T) {
	s := newSandbox(t)
	if st, err := os.Stat("/run"); err != nil || !st.IsDir() {
		requireFeature(t, "a /run directory to hide", false, fmt.Sprint(err))
	}
	base, err := os.MkdirTemp("/run", "pinfold-it-graft-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	listed, other := filepath.Join(base, "listed"), filepath.Join(base, "other")
	for _, d := range []string{base, listed, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shown, hidden := s.file(t, filepath.Join(listed, "a"), "a\n"), s.file(t, filepath.Join(other, "b"), "b\n")
	p := itPol{read: []string{listed}}
	s.allowed(t, p, itOpts{}, "read", shown)
	itExpect(t, "confined read of an unlisted path under /run", s.launch(t, p, itOpts{}, "read", hidden), "denied ENOENT", 1)
	s.control(t, itOpts{}, "read", hidden)
}

// Metadata changes outside write paths fail too, even on a file the agent's
// uid owns (unprivileged, the person's own files): Landlock before ABI 8
// does not mediate chmod, and the read-only host mounts do.
func TestIntegrationChmodOutsideWritePaths(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	target := s.file(t, filepath.Join(s.outside, "mine"), "x\n")
	itExpect(t, "confined chmod of an owned file outside the write paths", s.launch(t, itPol{}, itOpts{}, "chmod", target), "denied EROFS", 1)
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() == 0o777 {
		t.Errorf("%s mode changed: %v %v", target, st.Mode(), err)
	}
	s.control(t, itOpts{}, "chmod", target)
}

// A write path inside the workspace is mounted on top of the workspace's
// clone, not beneath it: as root, a directory of another owner (so not
// idmapped with the workspace) that all may write stays writable.
func TestIntegrationNestedWritePath(t *testing.T) {
	s := newSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("the nested tree differs from the workspace's only as root (idmap)")
	}
	sub := filepath.Join(s.ws, "sub")
	must(t, os.Mkdir(sub, 0o777))
	must(t, os.Chmod(sub, 0o777))
	must(t, os.Chown(sub, 1000, 1000))
	s.allowed(t, itPol{write: []string{sub}}, itOpts{}, "write", filepath.Join(sub, "made"))
}

// Components mode never runs as wrapper mode: the agent itself holds no
// write authority (fs does), and a policy that would hand it the network
// or Unix sockets directly, or a write path fs does not serve, is refused
// as an invalid policy (exit 122) before anything starts: no vault is
// unsealed and no component runs (kms did, before these were policy
// checks, and the launch said "nothing was started"). The control: the
// same write in wrapper mode succeeds.
func TestIntegrationComponentsModeNoDirectAuthority(t *testing.T) {
	s := newSandbox(t)
	target := filepath.Join(s.ws, "written")
	r := s.launch(t, itPol{mode: "components"}, itOpts{}, "write", target)
	itExpect(t, "components mode, direct write", r, "denied EROFS", 1) // the host's mounts are read-only to it
	mustNotExist(t, target, "the agent wrote the workspace directly in components mode")
	for _, c := range []struct {
		pol  itPol
		want string
	}{
		{itPol{mode: "components", network: "ports", connectTCP: []int{443}}, `network mode "ports" would give the agent the network directly`},
		{itPol{mode: "components", unixSockets: true}, "the agent never opens a Unix socket"},
		{itPol{mode: "components", write: []string{s.outside}}, "serves the workspace only"},
	} {
		r := s.launch(t, c.pol, itOpts{verbose: true}, "write", target)
		if r.code != 122 || r.stdout != "" || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "(SR-37)") {
			t.Errorf("%+v: want exit 122 and %q, got %s", c.pol, c.want, r)
		}
		// Verbose: a session that started would say what its components did.
		if strings.Contains(r.stderr, "components:") || strings.Contains(r.stderr, "kms") {
			t.Errorf("%+v: a component started for a refused policy: %s", c.pol, r.stderr)
		}
	}
	mustNotExist(t, target, "the agent ran under a refused policy")
	s.allowed(t, itPol{}, itOpts{}, "write", target)
}

// The launcher binary is static (cmd/launcher/static_linux.go): it names
// no interpreter and needs no library, so no file outside it is its code
// (SR-25) and the dynamic loader, which reads LD_PRELOAD, never runs. The
// control: a dynamic build of the probe, which this test's reader must
// see as dynamic.
func TestIntegrationLauncherStatic(t *testing.T) {
	newSandbox(t)
	interp := func(path string) (string, []string) {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var in string
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b, _ := io.ReadAll(p.Open())
				in = strings.TrimRight(string(b), "\x00")
			}
		}
		libs, _ := f.ImportedLibraries()
		return in, libs
	}
	if in, libs := interp(itEnv.launcher); in != "" || len(libs) > 0 {
		t.Errorf("the launcher is linked dynamically: interpreter %q, libraries %q", in, libs)
	}
	if in, libs := interp("/usr/bin/true"); in == "" || len(libs) == 0 {
		t.Fatalf("control: /usr/bin/true reads as static: interpreter %q, libraries %q", in, libs)
	}
}

// A launcher that maps libraries (a dynamic build; this test binary is
// one) counts each as its code, and a policy that lets the agent write
// one is refused before anything starts. The control: the same policy
// without that write path.
func TestLauncherLibraryWritable(t *testing.T) {
	var libc string
	code, err := launcherCode()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range code {
		if strings.HasPrefix(filepath.Base(f), "libc.") || strings.HasPrefix(filepath.Base(f), "libc-") {
			libc = f
		}
	}
	if libc == "" {
		t.Fatalf("no C library among the files this binary maps: %q", code)
	}
	dir := filepath.Dir(libc)
	ws := t.TempDir()
	p := &policy.Policy{Workspace: policy.Workspace{Path: policy.Path(ws)}, Files: policy.Files{Write: []policy.Path{policy.Path(dir)}}}
	err = writableCode(p, code)
	if err == nil || !strings.Contains(err.Error(), "the launcher's "+libc+" is beneath "+dir) {
		t.Fatalf("a writable %s: %v", dir, err)
	}
	p.Files.Write = nil
	if err := writableCode(p, code); err != nil {
		t.Fatalf("control: %v", err)
	}
}

// Run by a name that is a symbolic link in the workspace leading to the
// real launcher outside, the launch is refused like a launcher in the
// workspace: the agent could replace the link, and the person's next
// launch by that name would run its program unconfined (SR-25). The
// control: the same launch by the launcher's own path.
func TestIntegrationLauncherLinkWritable(t *testing.T) {
	s := newSandbox(t)
	must(t, os.Mkdir(filepath.Join(s.ws, "bin"), 0o755))
	link := filepath.Join(s.ws, "bin", "launcher")
	must(t, os.Symlink(itEnv.launcher, link))
	path, hash := s.writePolicy(t, itPol{})
	r := s.run(t, itOpts{}, link, "--policy-sha256", hash, "--policy", path, "--", itEnv.probe, "noop")
	if r.code != 124 || !strings.Contains(r.stderr, "the launcher's "+link+" is beneath "+s.ws) {
		t.Fatalf("launched by a link in the workspace: %s", r)
	}
	if c := s.run(t, itOpts{}, itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--", itEnv.probe, "noop"); c.code != 0 {
		t.Fatalf("control, by the launcher's own path: %s", c)
	}
}

// The launcher run from a directory that is a bind mount of one in the
// workspace is refused: by its path it is outside, but it is the file
// the agent can replace (a re-test: /opt/pf bound from ws/tools). The
// control: the same launch from a bind of a directory outside.
func TestIntegrationLauncherBoundFromWorkspace(t *testing.T) {
	s := newSandbox(t)
	tools := filepath.Join(s.ws, "tools")
	outsideTools := filepath.Join(s.outside, "tools")
	opt := filepath.Join(s.outside, "opt")
	data, err := os.ReadFile(itEnv.launcher)
	must(t, err)
	for _, d := range []string{tools, outsideTools, opt} {
		must(t, os.Mkdir(d, 0o755))
		if d != opt {
			must(t, os.WriteFile(filepath.Join(d, "launcher"), data, 0o755))
		}
	}
	path, hash := s.writePolicy(t, itPol{})
	launch := func(bound string) itResult {
		// In a mount namespace of its own, so the bind shows nowhere else.
		script := fmt.Sprintf("mount --bind %s %s && exec %s/launcher --policy-sha256 %s --policy %s --quiet -- %s noop",
			bound, opt, opt, hash, path, itEnv.probe)
		return s.run(t, itOpts{}, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	}
	r := launch(tools)
	if r.code != 124 || !strings.Contains(r.stderr, "the launcher's "+filepath.Join(opt, "launcher")+" is the same file as one beneath "+s.ws) {
		t.Fatalf("the launcher run from a bind of a workspace directory: %s", r)
	}
	if c := launch(outsideTools); c.code != 0 {
		t.Fatalf("control, a bind of a directory outside: %s", c)
	}
}

// A launcher on a file system that keeps its files in the workspace is
// the agent's to change: an overlay whose lower (or upper) layer is there
// (a re-test rewrote the running launcher's lower file, and stage 1 ran
// it), or a loop device whose image file is. Refused by where the file
// system keeps it; the controls: the same with the layer, or the image,
// outside.
func TestIntegrationLauncherBacking(t *testing.T) {
	s := newSandbox(t)
	data, err := os.ReadFile(itEnv.launcher)
	must(t, err)
	path, hash := s.writePolicy(t, itPol{})
	mnt := filepath.Join(s.outside, "mnt")
	must(t, os.Mkdir(mnt, 0o755))
	// In a mount namespace of its own, so the mount shows nowhere else.
	launch := func(mount string) itResult {
		script := fmt.Sprintf("%s && exec %s/launcher --policy-sha256 %s --policy %s --quiet -- %s noop", mount, mnt, hash, path, itEnv.probe)
		return s.run(t, itOpts{}, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	}
	layers := func(in string) (lower, upper, work string) {
		lower, upper, work = filepath.Join(in, "lower"), filepath.Join(in, "upper"), filepath.Join(in, "work")
		for _, d := range []string{lower, upper, work} {
			must(t, os.MkdirAll(d, 0o755))
		}
		must(t, os.WriteFile(filepath.Join(lower, "launcher"), data, 0o755))
		return
	}
	overlay := func(lower, upper, work string) string {
		return fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s", lower, upper, work, mnt)
	}
	// The new mount API's lowerdir+, which mountinfo lists one layer each
	// (a re-test's overlay was not checked so).
	overlayPlus := func(lower, upper, work string) string {
		return fmt.Sprintf("%s mount-overlay-plus %s %s %s %s", itEnv.probe, lower, upper, work, mnt)
	}
	wl, wu, ww := layers(filepath.Join(s.ws, "ov"))
	ol, ou, ow := layers(filepath.Join(s.outside, "ov"))
	ol2, _, _ := layers(filepath.Join(s.outside, "ov2"))
	for _, c := range []struct{ name, mount, beneath string }{
		{"lower layer in the workspace", overlay(wl, ou, ow), filepath.Join(wl, "launcher")},
		{"upper layer in the workspace", overlay(ol, wu, ww), wu},
		{"lowerdir+ in the workspace", overlayPlus(ol2+":"+wl, ou, ow), filepath.Join(wl, "launcher")},
	} {
		if r := launch(c.mount); r.code != 124 || !strings.Contains(r.stderr, c.beneath) || !strings.Contains(r.stderr, "beneath "+s.ws) {
			t.Errorf("%s: %s", c.name, r)
		}
	}
	if r := launch(overlay(ol, ou, ow)); r.code != 0 {
		t.Errorf("control, an overlay whose layers are outside: %s", r)
	}
	if r := launch(overlayPlus(ol2+":"+ol, ou, ow)); r.code != 0 {
		t.Errorf("control, lowerdir+ layers outside: %s", r)
	}
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Skip("no mkfs.ext4 for the loop device's image (e2fsprogs)")
	}
	image := func(dir string) string {
		img := filepath.Join(dir, "tools.img")
		must(t, os.WriteFile(img, nil, 0o644))
		must(t, os.Truncate(img, 64<<20))
		if r := s.run(t, itOpts{}, mkfs, "-q", "-F", "-d", ol, img); r.code != 0 {
			t.Fatalf("mkfs.ext4: %s", r)
		}
		return img
	}
	loop := func(img string) string { return fmt.Sprintf("mount -o loop,ro %s %s", img, mnt) }
	inWS := image(s.ws)
	if r := launch(loop(inWS)); r.code != 124 || !strings.Contains(r.stderr, inWS) {
		t.Errorf("a loop device whose image is in the workspace: %s", r)
	}
	outImg := image(s.outside)
	if r := launch(loop(outImg)); r.code != 0 {
		t.Errorf("control, a loop device whose image is outside: %s", r)
	}
	// A loop device over another, whose image is in the workspace (a
	// re-test). losetup -d of a device in use detaches it once unused.
	losetup, err := exec.LookPath("losetup")
	if err != nil {
		t.Fatalf("no losetup (util-linux's mount package): %v", err)
	}
	loopOverLoop := func(img string) string {
		return fmt.Sprintf("L0=$(%[1]s -f --show %[2]s) && mount -o loop,ro $L0 %[3]s && %[1]s -d $L0", losetup, img, mnt)
	}
	if r := launch(loopOverLoop(inWS)); r.code != 124 || !strings.Contains(r.stderr, inWS) {
		t.Errorf("a loop device over a loop device whose image is in the workspace: %s", r)
	}
	if r := launch(loopOverLoop(outImg)); r.code != 0 {
		t.Errorf("control, a loop over a loop whose image is outside: %s", r)
	}
	// An ext4 whose external journal is a loop device over a file in the
	// workspace: replayed after a crash, the agent's journal rewrites the
	// launcher's blocks (a re-test). Neither mountinfo nor sysfs names the
	// journal; the superblock does. The control: the journal outside.
	withJournal := func(dir string) string {
		jimg := filepath.Join(dir, "journal.img")
		must(t, os.WriteFile(jimg, nil, 0o644))
		must(t, os.Truncate(jimg, 8<<20))
		fsimg := filepath.Join(s.outside, "fs-"+filepath.Base(dir)+".img")
		must(t, os.WriteFile(fsimg, nil, 0o644))
		must(t, os.Truncate(fsimg, 64<<20))
		lfile := filepath.Join(t.TempDir(), "journal-loop")
		t.Cleanup(func() {
			if dev, err := os.ReadFile(lfile); err == nil {
				exec.Command(losetup, "-d", strings.TrimSpace(string(dev))).Run() // gone already once unused
			}
		})
		return fmt.Sprintf("LJ=$(%[1]s -f --show %[2]s) && echo $LJ > %[3]s && %[4]s -q -F -O journal_dev -b 4096 $LJ && %[4]s -q -F -b 4096 -d %[5]s -J device=$LJ %[6]s && mount -o loop,ro %[6]s %[7]s && %[1]s -d $LJ",
			losetup, jimg, lfile, mkfs, ol, fsimg, mnt)
	}
	if r := launch(withJournal(s.ws)); r.code != 124 || !strings.Contains(r.stderr, filepath.Join(s.ws, "journal.img")) {
		t.Errorf("an ext4 whose external journal's image is in the workspace: %s", r)
	}
	if r := launch(withJournal(s.outside)); r.code != 0 {
		t.Errorf("control, an ext4 whose external journal's image is outside: %s", r)
	}
	// A loop device set up through a bind mount unmounted since: sysfs
	// names a path that is not its file (a re-test patched the image in
	// the workspace so). Refused wherever the image is, as it cannot be
	// told; the control is the same image named where it is.
	bound := filepath.Join(s.outside, "bound")
	must(t, os.Mkdir(bound, 0o755))
	detached := fmt.Sprintf("mount --bind %s %s && mount -o loop,ro %s/%s %s && umount -l %s", s.outside, bound, bound, filepath.Base(outImg), mnt, bound)
	if r := launch(detached); r.code != 124 || !strings.Contains(r.stderr, "loop device") {
		t.Errorf("a loop device whose file sysfs misnames: %s", r)
	}
	// Set up in another mount namespace, where the outside directory is
	// the workspace: while that namespace lives, sysfs names the outside
	// image, a file that is there, but the device holds the workspace's
	// (a re-test). The identity check tells them apart. The namespace's
	// sh ends by itself after 5 s.
	lfile := filepath.Join(t.TempDir(), "loopdev") // outside what the namespace binds over
	t.Cleanup(func() {
		if dev, err := os.ReadFile(lfile); err == nil {
			exec.Command(losetup, "-d", strings.TrimSpace(string(dev))).Run() // gone already once unused
		}
	})
	elsewhere := fmt.Sprintf("(unshare -m --propagation private sh -c 'mount --bind %[1]s %[2]s && %[3]s -f --show %[4]s > %[5]s.new && mv %[5]s.new %[5]s && sleep 5' &) && "+
		"i=0; while [ ! -s %[5]s ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; L=$(cat %[5]s) && mount -o ro $L %[6]s && %[3]s -d $L",
		s.ws, s.outside, losetup, outImg, lfile, mnt)
	if r := launch(elsewhere); r.code != 124 || !strings.Contains(r.stderr, "is not the file it holds") {
		t.Errorf("a loop device whose file sysfs names as another that is there: %s", r)
	}
}

// A launcher with a second name (a hard link) is refused: the agent owns
// a link in the workspace through the idmap, and made the launcher
// world-writable through it (a re-test). The control: the same copy
// with one name.
func TestIntegrationLauncherHardLinked(t *testing.T) {
	s := newSandbox(t)
	data, err := os.ReadFile(itEnv.launcher)
	must(t, err)
	bin := filepath.Join(s.outside, "hl")
	must(t, os.Mkdir(bin, 0o755))
	copyPath := filepath.Join(bin, "launcher")
	must(t, os.WriteFile(copyPath, data, 0o755))
	path, hash := s.writePolicy(t, itPol{})
	launch := func() itResult {
		return s.run(t, itOpts{}, copyPath, "--policy-sha256", hash, "--policy", path, "--quiet", "--", itEnv.probe, "noop")
	}
	link := filepath.Join(s.ws, "launcher-link")
	if err := os.Link(copyPath, link); err != nil {
		t.Fatalf("the workspace and %s must be on one file system: %v", bin, err)
	}
	if r := launch(); r.code != 124 || !strings.Contains(r.stderr, "has 2 names") {
		t.Errorf("a launcher hard-linked into the workspace: %s", r)
	}
	must(t, os.Remove(link))
	if r := launch(); r.code != 0 {
		t.Errorf("control, the same launcher with one name: %s", r)
	}
}

// Run by its name, the launcher is refused when a PATH directory
// searched before its own is beneath the workspace: a program named
// launcher the agent put there would run instead next time (a re-test:
// a virtualenv's bin first in PATH). The control: the same launch with
// the launcher's directory first.
func TestIntegrationLauncherShadowed(t *testing.T) {
	s := newSandbox(t)
	venv := filepath.Join(s.ws, ".venv", "bin")
	must(t, os.MkdirAll(venv, 0o755))
	path, hash := s.writePolicy(t, itPol{})
	byName := func(pathEnv string) itResult {
		return s.run(t, itOpts{env: []string{"PATH=" + pathEnv}}, "/bin/sh", "-c", `exec launcher --policy-sha256 "$1" --policy "$2" --quiet -- "$3" noop`,
			"sh", hash, path, itEnv.probe)
	}
	own := filepath.Dir(itEnv.launcher)
	r := byName(venv + ":" + own + ":/usr/bin:/bin")
	if r.code != 124 || !strings.Contains(r.stderr, "the launcher's "+filepath.Join(venv, "launcher")+" is beneath "+s.ws) {
		t.Fatalf("a workspace directory first in PATH: %s", r)
	}
	if c := byName(own + ":" + venv + ":/usr/bin:/bin"); c.code != 0 {
		t.Fatalf("control, the launcher's own directory first: %s", c)
	}
}

// invokedAs follows the name the person ran through every link, as the
// kernel does, keeping each link's own path and the file it leads to; a
// name without a slash is looked up in PATH, a relative entry too, and
// then the working directory it was found from counts as well.
func TestInvokedAs(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "real"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "ws", "bin"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "elsewhere", "deep"), 0o755))
	real := filepath.Join(dir, "real", "launcher")
	must(t, os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink("real", filepath.Join(dir, "hop"))) // a relative link
	link := filepath.Join(dir, "ws", "bin", "launcher")
	must(t, os.Symlink(filepath.Join(dir, "hop", "launcher"), link))
	want := []string{link, filepath.Join(dir, "hop"), real}
	covers := func(got, want []string, not ...string) bool {
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		for _, n := range not {
			if slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, n) }) {
				return false
			}
		}
		return true
	}
	way := func(argv0 string) []string {
		t.Helper()
		got, err := invokedAs(argv0, real)
		if err != nil {
			t.Fatalf("invokedAs(%s): %v", argv0, err)
		}
		return got
	}
	refused := func(argv0, why string) {
		t.Helper()
		var re *RefusedError
		if got, err := invokedAs(argv0, real); !errors.As(err, &re) || !strings.Contains(err.Error(), why) {
			t.Errorf("PATH %q, invokedAs(%s) = %q, %v; want a refusal saying %q", os.Getenv("PATH"), argv0, got, err, why)
		}
	}
	// The path as run: every link, every directory looked up, the file.
	if got := way(link); !covers(got, append(want, filepath.Join(dir, "ws"), filepath.Join(dir, "ws", "bin"))) {
		t.Errorf("invokedAs(link) = %q, want %q and the directories passed", got, want)
	}
	if got := way(real); !covers(got, []string{real, filepath.Join(dir, "real")}, filepath.Join(dir, "ws")) {
		t.Errorf("invokedAs(the file itself) = %q", got)
	}
	// Through PATH, the entries searched up to the launcher's count too,
	// each with the directories the lookup passes through.
	t.Setenv("PATH", filepath.Join(dir, "ws", "bin")+":/usr/bin")
	if got := way("launcher"); !covers(got, want, "/usr/bin") {
		t.Errorf("invokedAs(launcher) through PATH = %q, want %q and nothing of /usr/bin", got, want)
	}
	// A relative argv[0]: the working directory counts.
	t.Chdir(filepath.Join(dir, "ws"))
	if got := way("./bin/launcher"); !covers(got, append([]string{filepath.Join(dir, "ws")}, want...)) {
		t.Errorf("invokedAs(./bin/launcher) = %q", got)
	}
	// A relative or empty PATH entry searched before the launcher's names
	// wherever the next launch starts, the workspace perhaps: refused
	// whatever the working directory is now (a re-test launched from /
	// with ":" first in PATH; the next launch, from the workspace, ran
	// the agent's ./launcher). After the launcher's own it is not searched.
	for _, path := range []string{"bin:/usr/bin", ":" + filepath.Join(dir, "real"), ".:" + filepath.Join(dir, "real"), "sub/../bin"} {
		t.Setenv("PATH", path)
		refused("launcher", "is relative")
	}
	t.Setenv("PATH", filepath.Join(dir, "real")+"::.")
	if got := way("launcher"); !covers(got, []string{real}, filepath.Join(dir, "ws")) {
		t.Errorf("relative entries after the launcher's = %q", got)
	}
	// A name PATH does not lead to this launcher: how it was started
	// cannot be told (a wrapper, a changed PATH). Refused too: a leading ~
	// with HOME unset, where Go's own lookup failing had left the check
	// undone (a re-test).
	t.Setenv("PATH", "/usr/bin")
	refused("launcher", "no PATH entry leads that name to this launcher")
	other := filepath.Join(dir, "other", "launcher")
	must(t, os.MkdirAll(filepath.Dir(other), 0o755))
	must(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", filepath.Dir(other)+":"+filepath.Join(dir, "real"))
	refused("launcher", "another program than this launcher")
	t.Setenv("HOME", "")
	t.Setenv("PATH", "~/bin:"+filepath.Join(dir, "real"))
	refused("launcher", "starts with ~")
	// A PATH directory searched before the launcher's: a program of the
	// same name there would run instead (as spelt, and as it resolves),
	// and one missing could be made where its lookup stops.
	must(t, os.Mkdir(filepath.Join(dir, "ws", "empty"), 0o755))
	must(t, os.Symlink(filepath.Join(dir, "ws", "empty"), filepath.Join(dir, "venv")))
	t.Setenv("PATH", filepath.Join(dir, "ws", "first")+":"+filepath.Join(dir, "venv")+":"+filepath.Join(dir, "real")+":"+filepath.Join(dir, "after"))
	wantPath := []string{filepath.Join(dir, "ws", "first", "launcher"), filepath.Join(dir, "venv", "launcher"), filepath.Join(dir, "venv"), filepath.Join(dir, "ws", "empty"), real}
	if got := way("launcher"); !covers(got, wantPath, filepath.Join(dir, "after")) {
		t.Errorf("invokedAs(launcher) after other PATH entries = %q, want %q and nothing of after", got, wantPath)
	}
	// An entry spelt through a link and "..": a shell takes the ".." where
	// the link leads (a re-test: out/lnk/../bin, lnk leading into the
	// workspace, was checked as out/bin); its bin need not exist yet.
	must(t, os.MkdirAll(filepath.Join(dir, "ws", "sub", "deeper"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "out"), 0o755))
	must(t, os.Symlink(filepath.Join(dir, "ws", "sub", "deeper"), filepath.Join(dir, "out", "lnk2")))
	t.Setenv("PATH", dir+"/out/lnk2/../bin:"+filepath.Join(dir, "real"))
	got := way("launcher")
	if !covers(got, []string{filepath.Join(dir, "out", "lnk2"), filepath.Join(dir, "ws", "sub")}) {
		t.Errorf("invokedAs(launcher) after out/lnk2/../bin = %q, want the link and ws/sub", got)
	}
	ws := policy.Path(filepath.Join(dir, "ws"))
	if err := writableCode(&policy.Policy{Workspace: policy.Workspace{Path: ws}}, got); err == nil {
		t.Error("a PATH entry through the workspace by a link and '..' was not refused")
	}
	// A leading ~, which bash expands in a PATH entry and env, sudo and
	// dash do not: they look in ./~/… (a re-test ran the agent's
	// ./~/bin/launcher through env). Refused as a relative entry is,
	// before the launcher's own entry and as that entry.
	t.Setenv("HOME", dir)
	for _, p := range []string{"~/ws/tbin:" + filepath.Join(dir, "real"), "~/real"} {
		t.Setenv("PATH", p)
		if _, err := invokedAs("launcher", real); err == nil || !strings.Contains(err.Error(), "starts with ~") {
			t.Errorf("PATH=%s: %v, want a refusal naming the ~ entry", p, err)
		}
	}
	t.Setenv("PATH", filepath.Join(dir, "real")+":~/ws/tbin")
	if _, err := invokedAs("launcher", real); err != nil {
		t.Errorf("control, a ~ entry after the launcher's own: %v", err)
	}
	// ".." after a link is taken where the link leads, not by the text.
	must(t, os.Symlink(filepath.Join(dir, "elsewhere", "deep"), filepath.Join(dir, "ws", "lnk")))
	must(t, os.Symlink(real, filepath.Join(dir, "elsewhere", "launcher")))
	if got, want := way(dir+"/ws/lnk/../launcher"), []string{filepath.Join(dir, "ws", "lnk"), filepath.Join(dir, "elsewhere", "launcher"), real}; !covers(got, want) {
		t.Errorf("invokedAs(ws/lnk/../launcher) = %q, want %q", got, want)
	}
	// And a directory of the workspace passed before a ".." takes the
	// path back out: the agent could make it a link (a re-test: a link
	// outside to ws/d/../../real/launcher; the agent replaced d).
	must(t, os.Mkdir(filepath.Join(dir, "ws", "d"), 0o755))
	must(t, os.Symlink(dir+"/ws/d/../../real/launcher", filepath.Join(dir, "out", "pf")))
	got = way(filepath.Join(dir, "out", "pf"))
	if !covers(got, []string{filepath.Join(dir, "ws"), real}) {
		t.Errorf("invokedAs(out/pf -> ws/d/../../real/launcher) = %q, want ws (where d is looked up) and the launcher", got)
	}
	if err := writableCode(&policy.Policy{Workspace: policy.Workspace{Path: ws}}, got); err == nil {
		t.Error("a link through a workspace directory and '..' was not refused")
	}
}

// withBacking adds where an overlay keeps a file (each layer, as the
// kernel would look it up there), and refuses a file on FUSE, whose
// keeping cannot be told; other file systems add nothing. Layers are
// directories under r, as mountinfo would name them: a layer no longer
// at its path is refused (below).
func TestWithBacking(t *testing.T) {
	r := t.TempDir()
	for _, d := range []string{"srv/ws/lo:w", "data", "up", "wk", "srv/ws/lower", "base", "dd", "srv/my ws/lower", "u", "w"} {
		must(t, os.MkdirAll(filepath.Join(r, d), 0o755))
	}
	ms := []mountinfo.Mount{
		{Dev: "8:1", Root: "/", Point: "/", Type: "ext4", Source: "/dev/sda1"},
		{Dev: "0:39", Root: "/", Point: "/opt/ov", Type: "overlay", Source: "overlay", Super: "rw,lowerdir=" + r + `/srv/ws/lo\:w::` + r + "/data,upperdir=" + r + "/up,workdir=" + r + "/wk"},
		{Dev: "0:50", Root: "/", Point: "/mnt/remote", Type: "fuse.sshfs", Source: "host:/x"},
	}
	got, err := withBacking(ms, []string{"/opt/ov/bin/launcher"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/opt/ov/bin/launcher", r + "/srv/ws/lo:w/bin/launcher", r + "/data/bin/launcher", r + "/up/bin/launcher", r + "/wk/bin/launcher"} {
		if !slices.Contains(got, want) {
			t.Errorf("withBacking = %q, lacks %s", got, want)
		}
	}
	if got, err := withBacking(ms, []string{"/usr/bin/launcher"}); err != nil || !slices.Equal(got, []string{"/usr/bin/launcher"}) {
		t.Errorf("on ext4: %q, %v", got, err)
	}
	var re *RefusedError
	if _, err := withBacking(ms, []string{"/mnt/remote/launcher"}); !errors.As(err, &re) || !strings.Contains(err.Error(), "FUSE") {
		t.Errorf("on FUSE: %v", err)
	}
	// The new mount API's layers (lowerdir+) count too (a re-test).
	ms = append(ms, mountinfo.Mount{Dev: "0:60", Root: "/", Point: "/opt/plus", Type: "overlay", Source: "overlay",
		Super: "ro,lowerdir+=" + r + "/srv/ws/lower,lowerdir+=" + r + "/base,datadir+=" + r + "/dd"})
	got, err = withBacking(ms, []string{"/opt/plus/launcher"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{r + "/srv/ws/lower/launcher", r + "/base/launcher", r + "/dd/launcher"} {
		if !slices.Contains(got, want) {
			t.Errorf("withBacking = %q, lacks %s", got, want)
		}
	}
	// Where that cannot be told, refused (a re-test of each): a relative
	// layer (taken from where the person mounted it); a layer no longer
	// at the path mountinfo gives (moved since the mount); an erofs
	// mounted from a file (relative, missing, or there: unlike a loop
	// device's, its identity with the file the kernel holds cannot be
	// checked), or with a device= that is a file; an overlay with
	// metacopy, whose data a lower layer keeps at a path the upper file's
	// extended attributes name (a re-test). A layer named with a
	// space, as mountinfo spells it (\040), is read as its name.
	img := filepath.Join(r, "tools.erofs")
	must(t, os.WriteFile(img, nil, 0o644))
	ms = append(ms,
		mountinfo.Mount{Dev: "0:62", Root: "/", Point: "/opt/rel", Type: "overlay", Source: "overlay", Super: "rw,lowerdir=ov/lower,upperdir=" + r + "/u,workdir=" + r + "/w"},
		mountinfo.Mount{Dev: "0:66", Root: "/", Point: "/opt/moved", Type: "overlay", Source: "overlay", Super: "rw,lowerdir=" + r + "/was-here,upperdir=" + r + "/u,workdir=" + r + "/w"},
		mountinfo.Mount{Dev: "0:61", Root: "/", Point: "/opt/erofs", Type: "erofs", Source: img},
		mountinfo.Mount{Dev: "0:63", Root: "/", Point: "/opt/erel", Type: "erofs", Source: "tools.erofs"},
		mountinfo.Mount{Dev: "0:64", Root: "/", Point: "/opt/egone", Type: "erofs", Source: "/no/such/tools.erofs"},
		mountinfo.Mount{Dev: "0:67", Root: "/", Point: "/opt/eblob", Type: "erofs", Source: "/dev/null", Super: "ro,device=" + img},
		mountinfo.Mount{Dev: "0:68", Root: "/", Point: "/opt/meta", Type: "overlay", Source: "overlay", Super: "rw,lowerdir=" + r + "/base,upperdir=" + r + "/u,workdir=" + r + "/w,redirect_dir=on,metacopy=on"},
		mountinfo.Mount{Dev: "0:65", Root: "/", Point: "/opt/space", Type: "overlay", Source: "overlay", Super: "rw,lowerdir=" + r + `/srv/my\040ws/lower,upperdir=` + r + "/u,workdir=" + r + "/w"})
	for c, want := range map[string]string{
		"/opt/rel/launcher":   "is a relative path",
		"/opt/moved/launcher": "no longer a directory at that path",
		"/opt/erofs/launcher": "cannot be checked",
		"/opt/erel/launcher":  "not an absolute path",
		"/opt/egone/launcher": "not an absolute path",
		"/opt/eblob/launcher": "cannot be checked",
		"/opt/meta/launcher":  "metacopy=on",
	} {
		if _, err := withBacking(ms, []string{c}); !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal saying %q", c, err, want)
		}
	}
	if got, err := withBacking(ms, []string{"/opt/space/launcher"}); err != nil || !slices.Contains(got, r+"/srv/my ws/lower/launcher") {
		t.Errorf("a layer with a space: %q, %v", got, err)
	}
}

// A bind mount of the launcher's own directory in the workspace is the
// launcher's directory, writable: refused by what it is, though no path
// of the launcher's is beneath the workspace (a re-test replaced the
// launcher through one). The control: the same launch with an empty
// directory bound there instead.
func TestIntegrationLauncherBindWritable(t *testing.T) {
	s := newSandbox(t)
	tools := filepath.Join(s.ws, "tools")
	must(t, os.Mkdir(tools, 0o755))
	empty := filepath.Join(s.outside, "empty")
	must(t, os.Mkdir(empty, 0o755))
	path, hash := s.writePolicy(t, itPol{})
	launch := func(bound string) itResult {
		// In a mount namespace of its own, so the bind shows nowhere else.
		script := fmt.Sprintf("mount --bind %s %s && exec %s --policy-sha256 %s --policy %s --quiet -- %s noop",
			bound, tools, itEnv.launcher, hash, path, itEnv.probe)
		return s.run(t, itOpts{}, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	}
	r := launch(filepath.Dir(itEnv.launcher))
	if r.code != 124 || !strings.Contains(r.stderr, "is reachable for writing as "+tools+" (a bind mount)") {
		t.Fatalf("the launcher's directory bound in the workspace: %s", r)
	}
	if c := launch(empty); c.code != 0 {
		t.Fatalf("control, an empty directory bound there: %s", c)
	}
}
