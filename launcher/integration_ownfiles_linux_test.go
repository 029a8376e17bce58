package launcher

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The launcher's own files (here its caller's, PINFOLD_SELF_FILES, as the
// gateway gives its TLS key and session logs) are unreadable to the agent
// and to the commands bash runs even where the policy reads their
// directory and the command line names them by no word bash could refuse
// (a glob): each is covered in the sandbox, a file so that opening it
// fails, a directory by an empty one. A neighbour in the same directory
// is read (the control), and the files' modes would let anyone read them.
func TestIntegrationComponentsOwnFilesCovered(t *testing.T) {
	s := newSandbox(t)
	// In a system tree, not beneath the sandbox's private /tmp.
	dir, err := os.MkdirTemp("/etc", "pinfold-it-own-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	logs := filepath.Join(dir, "logs")
	must(t, os.Mkdir(logs, 0o755))
	must(t, os.Chmod(dir, 0o755))
	key := s.file(t, filepath.Join(dir, "gw.key"), "KEY-BYTES-3f9a\n")
	s.file(t, filepath.Join(logs, "session.log"), "LOG-BYTES-77c1\n")
	s.file(t, filepath.Join(dir, "public.txt"), "NEIGHBOUR-TEXT\n")
	own, err := json.Marshal([]string{key, logs})
	if err != nil {
		t.Fatal(err)
	}
	p := componentsPol()
	p.read = []string{dir}
	p.extra = "[commands]\nauto = [\"cat\"]\ntimeout = \"20s\"\n"
	read := "cat " + dir + "/* " + dir + "/*/*"
	script := strings.Join([]string{
		"echo agent-begin; " + read + "; echo agent-end",
		itEnv.launcher + " sh 'echo worker-begin; " + read + "; echo worker-end'; echo sh=$?",
	}, "\n")
	r := s.agentSh(t, p, itOpts{env: []string{"PINFOLD_SELF_FILES=" + string(own)}}, script)
	if r.code != 0 {
		t.Fatalf("session: %s", r)
	}
	agent, worker, ok := strings.Cut(r.stdout, "agent-end")
	if !ok || !strings.Contains(worker, "worker-end") {
		t.Fatalf("the commands did not both run: %s", r)
	}
	for name, out := range map[string]string{"the agent": agent, "a command": worker} {
		if !strings.Contains(out, "NEIGHBOUR-TEXT") {
			t.Errorf("control: %s did not read the key's neighbour: %s", name, r)
		}
		for _, secret := range []string{"KEY-BYTES", "LOG-BYTES"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s read the launcher's own file (%s): %s", name, secret, r)
			}
		}
	}
	// The specific refusal: the covered key cannot be opened (twice: the
	// agent's cat and the command's).
	if n := strings.Count(r.stderr, key+": Permission denied"); n != 2 {
		t.Errorf("%d refusals to open %s, want 2: %s", n, key, r)
	}
}

// In wrapper mode too the agent reads neither what its caller names in
// PINFOLD_SELF_FILES nor the vault at its default place (here under
// XDG_CONFIG_HOME), though the policy reads the directory that holds them
// and their modes let anyone read them: each is covered, as root and
// unprivileged (in a user namespace). The neighbour is read (the
// control).
func TestIntegrationWrapperOwnFilesCovered(t *testing.T) {
	t.Run("root", func(t *testing.T) { wrapperOwnFilesCovered(t, newSandbox(t)) })
	t.Run("unprivileged", func(t *testing.T) { wrapperOwnFilesCovered(t, newUnprivSandbox(t, nobody)) })
}

func wrapperOwnFilesCovered(t *testing.T, s *itSandbox) {
	dir, err := os.MkdirTemp("/etc", "pinfold-it-own-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	vaultDir := filepath.Join(dir, "config", "pinfold")
	must(t, os.MkdirAll(vaultDir, 0o755))
	key := s.file(t, filepath.Join(dir, "gw.key"), "KEY-BYTES-3f9a\n")
	vault := s.file(t, filepath.Join(vaultDir, "vault"), "VAULT-BYTES-0b2e\n")
	s.file(t, filepath.Join(dir, "public.txt"), "NEIGHBOUR-TEXT\n")
	own, err := json.Marshal([]string{key})
	if err != nil {
		t.Fatal(err)
	}
	path, hash := s.writePolicy(t, itPol{exec: []string{"/usr/bin", "/usr/lib"}, read: []string{dir}})
	r := s.run(t, itOpts{env: []string{"PINFOLD_SELF_FILES=" + string(own), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}},
		itEnv.launcher, "--quiet", "--policy-sha256", hash, "--policy", path, "--", "/usr/bin/sh", "-c", "cat "+dir+"/* "+vault+"; echo end")
	if !strings.HasSuffix(r.stdout, "end\n") || !strings.Contains(r.stdout, "NEIGHBOUR-TEXT") {
		t.Fatalf("control: the agent did not read the key's neighbour: %s", r)
	}
	for _, secret := range []string{"KEY-BYTES", "VAULT-BYTES"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("the agent read the launcher's own file (%s): %s", secret, r)
		}
	}
	// The key is covered as a file (opening it fails); the vault, alone in
	// the launcher's config directory, by covering the directory (a vault
	// replaced by rename stays covered: launcher.CoverDir).
	for f, refusal := range map[string]string{key: "Permission denied", vault: "No such file or directory"} {
		if !strings.Contains(r.stderr, f+": "+refusal) {
			t.Errorf("no refusal to open %s (%s): %s", f, refusal, r)
		}
	}
}

// A vault or token store is replaced by rename on every change, which
// undoes a mount on the file in a sandbox whose command still runs. Where
// the file's directory holds only the launcher's own files the whole
// directory is covered, and a rename inside it does not show through: a
// command that keeps reading the store and the default vault while both
// are replaced from outside never reads either, old or new. (Only the
// control, a neighbour, is read; the loop saw the replacement happen.)
func TestIntegrationOwnFilesReplacedStayCovered(t *testing.T) {
	t.Run("root", func(t *testing.T) { ownFilesReplacedStayCovered(t, newSandbox(t)) })
	t.Run("unprivileged", func(t *testing.T) { ownFilesReplacedStayCovered(t, newUnprivSandbox(t, nobody)) })
}

func ownFilesReplacedStayCovered(t *testing.T, s *itSandbox) {
	dir, err := os.MkdirTemp("/etc", "pinfold-it-own-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	storeDir, vaultDir := filepath.Join(dir, "gw"), filepath.Join(dir, "config", "pinfold")
	for _, d := range []string{storeDir, vaultDir} {
		must(t, os.MkdirAll(d, 0o755))
	}
	store := s.file(t, filepath.Join(storeDir, "tokens.json"), "OLD-STORE-5d1e\n")
	s.file(t, store+".lock", "")
	vault := s.file(t, filepath.Join(vaultDir, "vault"), "OLD-VAULT-a90c\n")
	s.file(t, filepath.Join(dir, "public.txt"), "NEIGHBOUR-TEXT\n")
	stop := filepath.Join(dir, "stop")
	own, err := json.Marshal([]string{store, store + ".lock"})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Base(dir) + "-loop"
	script := "cat " + dir + "/public.txt; i=0; while [ $i -lt 300 ] && [ ! -e " + stop + " ]; do cat " + store + " " + vault +
		" 2>/dev/null; i=$((i+1)); sleep 0.05; done; [ -e " + stop + " ] && echo saw-stop; echo end # " + marker
	// From outside, once the loop runs: both files replaced by rename
	// (as privfile.Replace does, but readable to anyone), then stop.
	replaced := make(chan error, 1)
	go func() {
		replaced <- func() error {
			if !waitForProcess("sh", marker, 20*time.Second) {
				return errors.New("the loop never started")
			}
			for f, text := range map[string]string{store: "NEW-STORE-77b3\n", vault: "NEW-VAULT-c4e8\n"} {
				tmp := filepath.Join(filepath.Dir(f), "."+filepath.Base(f)+"-12345")
				if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
					return err
				}
				if err := os.Chown(tmp, s.uid, s.uid); err != nil {
					return err
				}
				if err := os.Rename(tmp, f); err != nil {
					return err
				}
			}
			time.Sleep(time.Second) // the loop reads the path many times
			return os.WriteFile(stop, nil, 0o644)
		}()
	}()
	path, hash := s.writePolicy(t, itPol{exec: []string{"/usr/bin", "/usr/lib"}, read: []string{dir}})
	r := s.run(t, itOpts{env: []string{"PINFOLD_SELF_FILES=" + string(own), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}},
		itEnv.launcher, "--quiet", "--policy-sha256", hash, "--policy", path, "--", "/usr/bin/sh", "-c", script)
	if err := <-replaced; err != nil {
		t.Fatalf("replacing the files: %v (%s)", err, r)
	}
	if !strings.Contains(r.stdout, "NEIGHBOUR-TEXT") || !strings.Contains(r.stdout, "saw-stop\nend\n") {
		t.Fatalf("control: the loop did not read the neighbour, or did not run until the files were replaced: %s", r)
	}
	for _, secret := range []string{"OLD-STORE", "NEW-STORE", "OLD-VAULT", "NEW-VAULT"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("the agent read the launcher's own file (%s): %s", secret, r)
		}
	}
}

// waitForProcess waits (at most d) for a process named comm whose command
// line holds marker.
func waitForProcess(comm, marker string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			c, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			if err != nil || strings.TrimSpace(string(c)) != comm {
				continue
			}
			if cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(cl), marker) {
				return true
			}
		}
	}
	return false
}
