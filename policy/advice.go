package policy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Advice returns warnings that do not block a launch: what the policy
// grants that a careful person may not have meant, and what no Boundary
// covers. It reads the file system only to report symlinks in read and exec
// paths; everything else is pure.
func (p *Policy) Advice() []Problem {
	var ps []Problem
	add := func(key, check, risk, msg string) {
		ps = append(ps, Problem{Key: key, Check: check, Risk: risk, Msg: msg, elem: -1})
	}
	lists := []struct {
		key, verb string
		paths     []Path
	}{
		{"files.read", "readable", p.Files.Read},
		{"files.write", "writable", p.Files.Write},
		{"files.exec", "executable", p.Files.Exec},
	}
	for _, l := range lists {
		for _, path := range l.paths {
			if broad(path) {
				add(l.key, "listed-whole", "SD-08", fmt.Sprintf("%q is %s whole: everything beneath it, including files created later", path, l.verb))
			}
			if shared := sharedDir(path); shared != "" {
				add(l.key, "shared-tmp", "", fmt.Sprintf("%q is in %s, which is shared with other users: another user's process can plant or read files there", path, shared))
			}
			if c := credentialStore(path); c != "" {
				what := fmt.Sprintf("includes %s, a credential store", c)
				switch {
				case Path(c) == path:
					what = "is a credential store"
				case Path(c).Contains(path):
					what = fmt.Sprintf("is in %s, a credential store", c)
				}
				add(l.key, "credential-store", "", fmt.Sprintf("%q %s: the agent could read keys or tokens", path, what))
			}
		}
	}
	if ws := p.Workspace.Path; ws != "" {
		if shared := sharedDir(ws); shared != "" {
			add("workspace.path", "shared-tmp", "", fmt.Sprintf("the workspace %q is in %s, which is shared with other users", ws, shared))
		}
		if !slices.ContainsFunc(p.Files.Write, func(w Path) bool { return w.Contains(ws) }) {
			add("workspace.path", "workspace-not-writable", "", fmt.Sprintf("the workspace %q is not beneath any write path: the agent cannot change it", ws))
		}
	}
	switch p.Network.Mode {
	case NetPorts:
		add("network.mode", "udp-uncovered", "SD-04", `UDP is not covered without a network namespace: in "ports" mode the agent can send UDP (DNS included) anywhere`)
		add("network.mode", "ports-not-hosts", "SD-03", `"ports" mode restricts ports, not hosts: an allowed port is reachable on every host, loopback included`)
	case NetProxy:
		if !p.Network.BlockAll {
			add("network.block_all", "public-allowed", "", "block_all = false: every public host not denied is reachable")
		}
		for _, c := range p.Network.UnsafeAllowPrivate {
			add("network.unsafe_allow_private", "unsafe", "", fmt.Sprintf("SSRF protection is off for %s", c))
		}
		if p.Network.AllowECH {
			add("network.allow_ech", "ech-allowed", "", "allow_ech = true: a client can reach any name behind an allowed host's front-end that accepts encrypted_client_hello")
		}
	}
	if p.Network.UnixSockets {
		add("network.unix_sockets", "unix-sockets", "SR-08", "Unix sockets are allowed: a pathname socket the agent can reach (through a listed path) connects it to that socket's server")
	}
	if p.Limits.Memory == 0 {
		add("limits.memory", "unlimited", "", "memory is unlimited")
	}
	if p.Limits.FileSize == 0 {
		add("limits.file_size", "unlimited", "", "file size is unlimited")
	}
	for _, n := range p.Env.Pass {
		if credentialName().MatchString(string(n)) {
			add("env.pass", "credential-env", "SR-11", fmt.Sprintf("%q looks like a credential and is passed to the agent", n))
		}
	}
	return p.place(ps)
}

var credentialName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|PRIVATE|CREDENTIAL|_KEY$|^AWS_|AUTH)`)
})

// broad reports whether granting path whole is unlikely to be meant.
func broad(path Path) bool {
	switch path {
	case "/", "/home", "/root", "/etc", "/var", "/run", "/proc", "/sys", "/dev", "/tmp", "/mnt", "/media", "/srv", "/opt":
		return true
	}
	return isHome(path)
}

func isHome(path Path) bool {
	if h, err := os.UserHomeDir(); err == nil && h != "/" && Path(h) == path {
		return true
	}
	dir, _ := filepath.Split(string(path))
	return dir == "/home/"
}

func sharedDir(path Path) string {
	for _, d := range []Path{"/tmp", "/var/tmp", "/dev/shm"} {
		if d.Contains(path) {
			return string(d)
		}
	}
	return ""
}

// credentialStores are places that commonly hold keys and tokens, relative
// to a home directory.
var credentialStores = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc",
	".git-credentials", ".npmrc", ".pypirc", ".vault-token", ".password-store",
	".config/gcloud", ".config/gh", ".local/share/keyrings", ".config/pinfold",
}

// credentialStore names a credential store that path equals, contains, or
// lies within, or "".
func credentialStore(path Path) string {
	for _, sys := range []Path{"/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers"} {
		if path.Contains(sys) || sys.Contains(path) {
			return string(sys)
		}
	}
	if path == "/" || path == "/home" {
		return "every home directory's ~/.ssh"
	}
	if path == "/root" || isHome(path) {
		return fmt.Sprintf("%s/.ssh", path)
	}
	s := string(path)
	for _, c := range credentialStores {
		if i := strings.Index(s, "/"+c); i >= 0 {
			rest := s[i+1+len(c):]
			if rest == "" || rest[0] == '/' {
				return s[:i+1+len(c)]
			}
		}
	}
	// A directory that holds a store: "~/.config" holds "~/.config/gh".
	for _, c := range credentialStores {
		for j := range len(c) {
			if c[j] == '/' && strings.HasSuffix(s, "/"+c[:j]) {
				return s + c[j:]
			}
		}
	}
	return ""
}

// maxLinkWalk bounds the entries HardLinked looks at in one write path.
const maxLinkWalk = 1_000_000

// HardLinked walks each write path (not following links, not leaving its
// file system) for regular files with more than one name, and advises
// on each path that has them (SD-22): a write path makes the file
// writable, and so changeable through every other name it has,
// whichever list that name is in (git clone of a local repository and
// pnpm's store make such links). It reads the live file system, so
// `policy check` runs it, and a launch does not (the walk is as long as
// the workspace is large).
func (p *Policy) HardLinked() []Problem {
	var ps []Problem
	for _, w := range p.Files.Write {
		var top unix.Stat_t
		if err := unix.Lstat(string(w), &top); err != nil || top.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		n, seen, first := 0, 0, ""
		filepath.WalkDir(string(w), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if seen++; seen > maxLinkWalk {
				return filepath.SkipAll
			}
			var st unix.Stat_t
			if unix.Lstat(path, &st) != nil {
				return nil
			}
			if d.IsDir() && st.Dev != top.Dev {
				return filepath.SkipDir // another file system mounted here
			}
			if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
				if n++; first == "" {
					first = path
				}
			}
			return nil
		})
		if n > 0 {
			msg := fmt.Sprintf("%q holds %d files with more than one name (hard links), such as %q: writable here, each is changed through its every other name too, in a read or exec path or anywhere", w, n, first)
			if seen > maxLinkWalk {
				msg += fmt.Sprintf(" (only the first %d entries were looked at)", maxLinkWalk)
			}
			ps = append(ps, Problem{Key: "files.write", Check: "hard-linked", Risk: "SD-22", Msg: msg,
				Hint: "give such files one name (cp them over themselves, or git clone --no-hardlinks), or keep the other names out of reach", elem: -1})
		}
	}
	return p.place(ps)
}

// Files git reads on every run, where it runs: one that is missing is
// skipped, but one that exists and may not be read stops it (EACCES is
// not "absent"; git says "unable to access '/etc/gitconfig': Permission
// denied"). policy init's templates list those that exist; a policy
// written by hand often does not.
var (
	gitSystemFiles = []string{"/etc/gitconfig", "/etc/gitattributes"}
	gitPrograms    = []string{"/usr/bin/git", "/usr/local/bin/git", "/bin/git"}
)

// GitUnreadable advises on each of git's system files that exists on
// this host but is in none of the policy's paths, when the policy lets
// the agent run git. It reads the live file system, so `policy check`
// runs it; a launch does not.
func (p *Policy) GitUnreadable() []Problem {
	return p.gitUnreadable(gitPrograms, gitSystemFiles)
}

func (p *Policy) gitUnreadable(programs, files []string) []Problem {
	reached := func(list []Path, name string) bool {
		// As Landlock sees it: the file a symlink names, not the link.
		real, err := filepath.EvalSymlinks(name)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(list, func(d Path) bool { return d.Contains(Path(real)) })
	}
	all := slices.Concat(p.Files.Read, p.Files.Write, p.Files.Exec)
	if !slices.ContainsFunc(programs, func(g string) bool { return reached(p.Files.Exec, g) }) {
		return nil
	}
	var ps []Problem
	for _, f := range files {
		if _, err := os.Stat(f); err != nil || reached(all, f) {
			continue
		}
		ps = append(ps, Problem{Key: "files.read", Check: "git-system-file",
			Msg:  fmt.Sprintf("%q exists on this host and is in none of the policy's paths: git, which the agent may run, stops on a system file it may not read (\"unable to access %s: Permission denied\")", f, f),
			Hint: fmt.Sprintf("add %q to files.read (policy init's templates list it where it exists)", f), elem: -1})
	}
	return p.place(ps)
}
