package launcher

// Integration tests, unprivileged: the launcher run as nobody (uid 65534)
// builds the sandbox in a user namespace, without cgroups or throwaway
// uids. The test itself is root, to hand the directories to nobody.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const nobody = 65534

func TestIntegrationUnprivileged(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	secret := s.file(t, filepath.Join(s.outside, "secret"), "s3cret\n")

	// Unprivileged, stage 2 never changes credentials, so only
	// PR_SET_DUMPABLE keeps the agent out of /proc/1.
	t.Run("stage 2 not readable", func(t *testing.T) {
		itExpect(t, "confined read of /proc/1/environ", s.launch(t, itPol{}, itOpts{}, "read-environ", "1"), "denied EACCES", 1)
		s.control(t, itOpts{}, "read-environ", "self")
	})
	// The person's keyrings (the agent is their uid) are not listed.
	t.Run("key lists covered", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "empty", "key-lists")
	})
	// Stage 2 holds every capability of its user namespace until it
	// drops them; the agent holds none. nobody, unconfined, still has
	// the whole bounding set.
	t.Run("no capabilities", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "none", "caps")
	})
	// Without a cgroup, the rlimits are what bounds processes and memory
	// (SR-04, SR-36): the policy's defaults, 512 processes and 4 GiB.
	t.Run("process and memory limits", func(t *testing.T) {
		for _, r := range []struct{ name, want string }{
			{"NPROC", "soft 512 hard 512"},
			{"AS", "soft 4294967296 hard 4294967296"},
		} {
			itExpect(t, "confined rlimit "+r.name, s.launch(t, itPol{}, itOpts{}, "rlimit", r.name), r.want, 0)
			if c := s.direct(t, itOpts{}, "rlimit", r.name); c.code != 0 || c.stdout == r.want+"\n" {
				t.Fatalf("control rlimit %s (unconfined): want another limit than the policy's, got %s", r.name, c)
			}
		}
	})
	// Fileless execution: unprivileged there is no vm.memfd_noexec=2 in
	// the sandbox, and seccomp alone refuses a memfd not sealed
	// non-executable (SR-19).
	t.Run("memfd exec", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "EACCES", "memfd-exec")
	})
	// Off a terminal of its own the agent shares the launcher's process
	// group, and unprivileged it is the person's uid: kill(0, SIG)
	// would reach every process of that group, the launcher and the
	// person's pipeline beside it, though the pid namespace hides them.
	// Landlock's signal scope keeps the signal in the sandbox. The
	// witness, outside, leads the group the launcher joins.
	t.Run("process group signal", func(t *testing.T) {
		requireFeature(t, "Landlock ABI >= 6 (scopes)", ProbeForLaunch().Landlock.ABI >= floorScopes, "")
		reached := func(run func(pgid int)) bool {
			w := exec.Command(itEnv.probe, "sleep", "20")
			w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
				Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			must(t, w.Start())
			done := make(chan *os.ProcessState, 1)
			go func() { w.Wait(); done <- w.ProcessState }()
			run(w.Process.Pid)
			select {
			case st := <-done:
				ws := st.Sys().(syscall.WaitStatus)
				return ws.Signaled() && ws.Signal() == syscall.SIGTERM
			case <-time.After(time.Second):
				w.Process.Kill()
				<-done
				return false
			}
		}
		if reached(func(pgid int) { s.launch(t, itPol{}, itOpts{pgid: pgid}, "kill-group", "15") }) {
			t.Fatal("the confined agent's kill(0, SIGTERM) reached a process outside the sandbox in the launcher's group")
		}
		if !reached(func(pgid int) {
			itExpect(t, "control kill-group", s.direct(t, itOpts{pgid: pgid}, "kill-group", "15"), "ok", 0)
		}) {
			t.Fatal("control: kill(0, SIGTERM) unconfined did not reach the witness in its group, so the refusal proves nothing (SR-09)")
		}
	})
	t.Run("read outside", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "EACCES", "read", secret)
	})
	// The launcher's own files (the vault under HOME's .config) behind a
	// directory another user owns and this uid may not search: the agent,
	// of this uid or less, cannot reach them either, so there is nothing
	// to cover (it was refused: "cannot be looked at"). Behind a directory
	// of this uid's own the agent could chmod its way in, so that launch
	// stays refused.
	t.Run("own files out of reach", func(t *testing.T) {
		locked := filepath.Join(s.dir, "locked")
		must(t, os.Mkdir(locked, 0o700))
		r := s.launch(t, itPol{}, itOpts{env: []string{"HOME=" + filepath.Join(locked, "home")}}, "noop")
		itExpect(t, "confined noop, HOME out of reach", r, "ok", 0)
		// Nor are the git configs there said to be left writable (SR-51).
		if strings.Contains(r.stderr, "warning") {
			t.Fatalf("HOME out of reach: want no warning, got %s", r)
		}
		mine := filepath.Join(s.dir, "mine")
		must(t, os.Mkdir(mine, 0))
		must(t, os.Chown(mine, nobody, nobody))
		r = s.launch(t, itPol{}, itOpts{env: []string{"HOME=" + filepath.Join(mine, "home")}}, "noop")
		if r.code != 124 || !strings.Contains(r.stderr, "cannot be looked at") {
			t.Fatalf("own files behind a directory of the launcher's uid, mode 0: want refused (124, cannot be looked at), got %s", r)
		}
	})
	// Stage 2 is of the agent's uid here too: its limits and scheduling
	// are refused to the agent by seccomp (a hunt blinded its Ctrl-Z
	// watch through them), the agent's own are not.
	t.Run("stage 2 not steered", func(t *testing.T) {
		itExpect(t, "confined steer of pid 1", s.launch(t, itPol{}, itOpts{}, "steer", "1"), "denied EPERM", 1)
		s.control(t, itOpts{}, "steer", "self")
		s.allowed(t, itPol{}, itOpts{}, "steer", "self")
	})
	t.Run("write workspace", func(t *testing.T) {
		target := filepath.Join(s.ws, "made-inside")
		s.allowed(t, itPol{}, itOpts{}, "write", target)
		if uid := mustExist(t, target).Sys().(*syscall.Stat_t).Uid; uid != nobody {
			t.Fatalf("%s is owned by uid %d, want %d", target, uid, nobody)
		}
	})
	// A read path owned by another user (root, here) under /tmp, which the
	// sandbox covers with its own and mounts read paths back onto: stage 2
	// sees the owner as the overflow uid, which is what stage 1 must expect.
	t.Run("read a tree another user owns", func(t *testing.T) {
		dir, err := os.MkdirTemp("/tmp", "pinfold-rootowned-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		must(t, os.Chmod(dir, 0o755))
		file := s.file(t, filepath.Join(dir, "data"), "shared\n")
		must(t, os.Chown(file, 0, 0))
		s.allowed(t, itPol{read: []string{dir}}, itOpts{}, "read", file)
		s.control(t, itOpts{}, "read", file)
	})
	// The person's terminal (a pty the launcher's user owns) is the agent's
	// stdin: the agent cannot change its mode through that descriptor,
	// which stage 2 opened again through the read-only /dev. Unconfined,
	// the same fchmod (to the mode it has) works.
	t.Run("terminal metadata", func(t *testing.T) {
		_, slave := openPTY(t)
		must(t, os.Chown(slave.Name(), nobody, nobody))
		s.denied(t, itPol{}, itOpts{stdin: slave, ctty: true}, "EROFS", "fchmod-fd", "0")
	})
	t.Run("write outside", func(t *testing.T) {
		target := filepath.Join(s.outside, "x")
		itExpect(t, "confined write outside", s.launch(t, itPol{}, itOpts{}, "write", target), "denied EROFS", 1)
		mustNotExist(t, target, "a refused write must not create the file")
		s.control(t, itOpts{}, "write", target)
	})
	t.Run("exec written", func(t *testing.T) {
		s.denied(t, itPol{}, itOpts{}, "EACCES", "write-exec", filepath.Join(s.ws, "prog"))
	})
	// The workspace is its own writable clone; the outside directory is on
	// the read-only host mount.
	t.Run("link and rename out", func(t *testing.T) {
		src := s.file(t, filepath.Join(s.ws, "f"), "data\n")
		linkDst, renameDst := filepath.Join(s.outside, "linked"), filepath.Join(s.outside, "renamed")
		itExpect(t, "confined link", s.launch(t, itPol{}, itOpts{}, "link", src, linkDst), "denied EROFS", 1)
		itExpect(t, "confined rename", s.launch(t, itPol{}, itOpts{}, "rename", src, renameDst), "denied EXDEV", 1)
		mustNotExist(t, linkDst, "hard link out of the workspace")
		mustNotExist(t, renameDst, "rename out of the workspace")
		s.control(t, itOpts{}, "link", src, linkDst)
		s.control(t, itOpts{}, "rename", src, renameDst)
	})
	t.Run("network none", func(t *testing.T) {
		l := listen(t, "tcp4", "127.0.0.1:0")
		itExpect(t, "confined tcp-connect", s.launch(t, itPol{}, itOpts{}, "tcp-connect", l.addr()), "denied ECONNREFUSED", 1)
		l.noneReached(t)
		s.control(t, itOpts{}, "tcp-connect", l.addr())
	})
	t.Run("unix socket", func(t *testing.T) {
		path := filepath.Join(s.dir, "listener.sock")
		l := listen(t, "unix", path)
		if err := os.Chmod(path, 0o777); err != nil {
			t.Fatal(err)
		}
		s.denied(t, itPol{}, itOpts{}, "EPERM", "unix-socket")
		itExpect(t, "confined unix-connect", s.launch(t, itPol{}, itOpts{}, "unix-connect", path), "denied EPERM", 1)
		l.noneReached(t)
		s.control(t, itOpts{}, "unix-connect", path)
	})
}

// TestIntegrationUnprivilegedWithoutUserNamespaces: on a host where the
// person may make no user namespace, the launch is refused as a
// Boundary this host cannot enforce (exit 124), with the reason and the
// hint hello gives, and nothing runs; it exited 125 with the clone's
// bare "fork/exec /proc/self/exe: no space left on device". The host is
// a user namespace of the test's own (ids mapped as they are) whose
// user.max_user_namespaces is 0, in which nobody runs the launcher.
func TestIntegrationUnprivilegedWithoutUserNamespaces(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	setpriv, err := exec.LookPath("setpriv")
	requireFeature(t, "setpriv (util-linux)", err == nil, fmt.Sprint(err))
	path, hash := s.writePolicy(t, itPol{})
	marker := filepath.Join(s.ws, "ran")
	run := func(sysctl string) itResult {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		script := `echo ` + sysctl + ` > /proc/sys/user/max_user_namespaces && exec "$@"`
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script, "sh",
			setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
			itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--", itEnv.probe, "write", marker)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent"}
		cmd.Dir = s.dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids,
			GidMappingsEnableSetgroups: true, Pdeathsig: syscall.SIGKILL}
		err := cmd.Run()
		r := itResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		var ee *exec.ExitError
		if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
			t.Fatalf("launch in a user namespace: %v: %s", err, r)
		}
		return r
	}
	// The control: the same launch where nobody may make user namespaces.
	if r := run("100"); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("control (user.max_user_namespaces 100): want ok and exit 0, got %s", r)
	}
	must(t, os.Remove(marker))
	r := run("0")
	if r.code != 124 || !strings.Contains(r.stderr, "user namespace") || !strings.Contains(r.stderr, "max_user_namespaces") {
		t.Fatalf("without user namespaces: want exit 124 naming the user namespace and the sysctl's hint, got %s", r)
	}
	mustNotExist(t, marker, "nothing may run when the sandbox cannot be made")
}

// TestIntegrationUnprivilegedFscryptKeyStays: a file system's encryption
// keyring (fscrypt) is a keyring keyctl's refusal does not reach, and
// removing a key needs only a descriptor on that file system. Unprivileged,
// the agent is the person's uid and holds the person's claim to the key of
// their encrypted home: with a descriptor of its workspace it removed the
// key, and the person's files outside every list read "Required key not
// available" until the person unlocked them again. The host here is an
// ext4 image with encryption on, the person's home an encrypted directory
// on it and the workspace another directory of it (bound onto the
// sandbox's workspace). Seccomp refuses the removal (SR-30).
func TestIntegrationUnprivilegedFscryptKeyStays(t *testing.T) {
	s := newUnprivSandbox(t, nobody)
	mkfs, err := exec.LookPath("mkfs.ext4")
	requireFeature(t, "mkfs.ext4 (e2fsprogs)", err == nil, fmt.Sprint(err))
	_, err = os.Stat("/sys/fs/ext4/features/encryption")
	requireFeature(t, "ext4 encryption in the kernel", err == nil, fmt.Sprint(err))
	img, mnt := filepath.Join(s.dir, "fs.img"), filepath.Join(s.dir, "fs")
	must(t, os.WriteFile(img, nil, 0o600))
	must(t, os.Truncate(img, 64<<20))
	if out, err := exec.Command(mkfs, "-q", "-F", "-O", "encrypt", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	must(t, os.Mkdir(mnt, 0o755))
	out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput()
	requireFeature(t, "loop mounts", err == nil, fmt.Sprintf("%v: %s", err, out))
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	home, work := filepath.Join(mnt, "home"), filepath.Join(mnt, "work")
	for _, d := range []string{home, work} {
		must(t, os.Mkdir(d, 0o755))
		must(t, os.Chown(d, nobody, nobody))
	}
	must(t, syscall.Mount(work, s.ws, "", syscall.MS_BIND, ""))
	t.Cleanup(func() { syscall.Unmount(s.ws, syscall.MNT_DETACH) })

	r := s.direct(t, itOpts{}, "fscrypt-add", home)
	id, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), "id ")
	if r.code != 0 || !ok {
		t.Fatalf("the person's key (fscrypt-add as nobody): %s", r)
	}
	private := s.file(t, filepath.Join(home, "private"), "person's\n")

	itExpect(t, "confined fscrypt-remove", s.launch(t, itPol{}, itOpts{}, "fscrypt-remove", s.ws, id), "denied EPERM", 1)
	if b, err := os.ReadFile(private); err != nil || string(b) != "person's\n" {
		t.Fatalf("the person's encrypted file after the agent's try: %q, %v", b, err)
	}
	s.control(t, itOpts{}, "fscrypt-remove", s.ws, id)
}
