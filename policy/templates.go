package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pinfold/pinfold/internal/mountinfo"
	"github.com/pinfold/pinfold/internal/userdb"
)

// templateNames names the starter policies `launcher policy init` writes.
// (No proxy template until the net component exists: a starter policy
// must launch as written.)
var templateNames = []string{"offline", "ports"}

// TemplateNames returns the names StarterPolicy accepts.
func TemplateNames() []string { return slices.Clone(templateNames) }

// System paths a coding agent commonly needs. A template lists only those
// that exist on this host as real directories or files (not symlinks), so
// the policy it writes passes CheckLive here and reads as it binds.
var (
	templateExec = []string{
		"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/libexec",
		"/usr/local/bin", "/usr/local/lib", "/bin", "/sbin", "/lib", "/lib64",
	}
	templateRead = []string{
		"/usr/share", "/usr/include", "/usr/local/share", "/etc/alternatives",
		"/etc/ssl", "/etc/ca-certificates", "/etc/ld.so.cache", "/etc/ld.so.conf",
		"/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group",
		"/etc/nsswitch.conf", "/etc/hosts", "/dev/zero", "/dev/urandom", "/dev/random",
		// git reads the system's configuration and attributes, and stops
		// on one it may not read (EACCES is not "absent"): every git
		// command failed under a starter policy where they exist.
		"/etc/gitconfig", "/etc/gitattributes",
	}
	templateWriteDev = []string{"/dev/null"}
	templateNetRead  = []string{"/etc/resolv.conf", "/etc/gai.conf"}
)

// StarterPolicy returns a starter policy for workspace. The result is parsed and
// checked against this host before it is returned; a template that would
// not launch here is an error, not a file.
func StarterPolicy(name string, workspace string) ([]byte, error) {
	var ws Path
	if err := ws.UnmarshalTOML(workspace); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if why := unfitWorkspace(ws); why != "" {
		return nil, &UnfitWorkspaceError{Workspace: workspace, Why: why}
	}
	if why := unfitMounts(ws); why != "" {
		return nil, &UnfitWorkspaceError{Workspace: workspace, Why: why}
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# pinfold policy, template %q. Pin it by its sha256 and launch with\n", name)
	w("#   launcher --policy-sha256 HASH --policy THIS_FILE -- AGENT ARGS...\n")
	w("version = 1\nmode = \"wrapper\"\n\n[workspace]\npath = %s\n\n", strconv.Quote(workspace))
	read := existing(templateRead)
	switch name {
	case "offline":
	case "ports":
		read = append(read, existing(templateNetRead)...)
	default:
		return nil, fmt.Errorf("unknown template %q: known templates are %s", name, strings.Join(templateNames, ", "))
	}
	w("[files]\n")
	w("read = %s\n", tomlList(read))
	w("write = %s\n", tomlList(append([]string{workspace}, existing(templateWriteDev)...)))
	w("exec = %s\n\n", tomlList(existing(templateExec)))
	switch name {
	case "offline":
		w("[network]\nmode = \"none\"\n\n")
	case "ports":
		w("[network]\nmode = \"ports\"\nconnect_tcp = [443]   # HTTPS to any host: ports, not hosts (SD-03)\n\n")
	}
	w("[limits]\nmemory = \"4GiB\"\nprocesses = 512\nopen_files = 4096\nfile_size = \"2GiB\"\n\n")
	w("[env]\npass = [\"PATH\", \"LANG\", \"TERM\"]\n")
	out := []byte(b.String())
	p, err := Parse("template "+name, out)
	if err != nil {
		return nil, fmt.Errorf("template %q for workspace %q: %w", name, workspace, err)
	}
	if err := p.CheckLive(); err != nil {
		return nil, fmt.Errorf("template %q for workspace %q does not fit this host: %w", name, workspace, err)
	}
	return out, nil
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.Mode().Type()&os.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}

func tomlList(xs []string) string {
	if len(xs) == 0 {
		return "[]"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "  " + strconv.Quote(x) + ","
	}
	return "[\n" + strings.Join(q, "\n") + "\n]"
}

// UnfitWorkspaceError is a starter policy refused for its workspace: one
// whose being writable whole would hand the agent the host (a home
// directory, with its shell start-up files; a system tree), or that the
// sandbox replaces (/proc, /dev, /sys, /tmp).
type UnfitWorkspaceError struct{ Workspace, Why string }

func (e *UnfitWorkspaceError) Error() string {
	return fmt.Sprintf("the workspace %q %s: a starter policy makes its workspace writable whole", e.Workspace, e.Why)
}

// systemTrees are the system's own directories: no workspace belongs in
// them. /var is the system's but for what is beneath /var/tmp.
var systemTrees = []Path{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc", "/sys", "/dev", "/run", "/var",
	"/opt", "/snap"} // installed software (a re-test: /opt/wheels was accepted)

// unfitWorkspace says why ws should not be a starter policy's workspace,
// or "".
func unfitWorkspace(ws Path) string {
	switch {
	case ws == "/":
		return "is the root of the file system"
	case ws == "/root" || isHome(ws):
		return homeWhy
	case ws == "/tmp" || ws == "/dev/shm":
		return "is replaced by a private one in the sandbox"
	case ws == "/var/tmp":
		return "is shared with every user of the machine"
	case broad(ws):
		return "holds other people's or the system's files"
	}
	for _, t := range systemTrees {
		if t.Contains(ws) && !(t == "/var" && Path("/var/tmp").Contains(ws)) {
			return fmt.Sprintf("is in %s, one of the system's own trees", t)
		}
	}
	homes := passwdHomes()
	if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, h)
	}
	// By what it is, not how it is spelt: a bind mount of a home, or of
	// a system tree, elsewhere.
	var st unix.Stat_t
	haveStat := unix.Stat(string(ws), &st) == nil
	sameFile := func(p string) bool {
		var o unix.Stat_t
		return haveStat && unix.Stat(p, &o) == nil && st.Dev == o.Dev && st.Ino == o.Ino
	}
	for _, h := range homes {
		home := Path(filepath.Clean(h))
		if !filepath.IsAbs(h) || home == "/" {
			continue
		}
		switch {
		case home == ws || sameFile(h):
			return homeWhy
		case ws.Contains(home):
			return fmt.Sprintf("holds the home directory %s", home)
		case home.Contains(ws):
			// A project in a home is fine; its dot-directories (.config,
			// .ssh, .local) are the home's own settings and keys.
			if rel := strings.TrimPrefix(string(ws), string(home)+"/"); strings.HasPrefix(rel, ".") {
				return fmt.Sprintf("is in %s, a home directory's own settings", home)
			}
		}
	}
	for _, t := range append([]Path{"/"}, systemTrees...) {
		if sameFile(string(t)) {
			return fmt.Sprintf("is %s, by another name (a bind mount or a link)", t)
		}
	}
	// Where the person's shell finds programs: PATH's directories, and
	// each home's bin, which Debian's and Ubuntu's .profile put in PATH
	// at the next login when it exists. A program the agent put there
	// under a common name (git, ls) would run unconfined when typed (a
	// re-test: /root/go, holding /root/go/bin from PATH, was accepted).
	dirs := filepath.SplitList(os.Getenv("PATH"))
	for _, h := range homes {
		if filepath.IsAbs(h) {
			dirs = append(dirs, filepath.Join(h, "bin"))
		}
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			continue // a relative entry is wherever the shell is, not a place
		}
		dir := Path(filepath.Clean(d))
		if dir == ws || ws.Contains(dir) || dir.Contains(ws) || sameFile(d) {
			return fmt.Sprintf("is, holds or is in %s, where your shell finds programs (PATH, or a home's bin at the next login): a program the agent put there under a common name would run unconfined when you type it", dir)
		}
	}
	return ""
}

// homeWhy is why a home directory is no starter workspace.
const homeWhy = "is a home directory: the agent could rewrite its shell start-up files (.bashrc, .profile), which run unconfined at the next login, and its keys"

// passwdHomes are the home directories /etc/passwd names.
func passwdHomes() []string {
	var homes []string
	for _, e := range userdb.Passwd() {
		if len(e) >= 7 && e.Field(5) != "" {
			homes = append(homes, e.Field(5))
		}
	}
	return homes
}

// unfitMounts applies unfitWorkspace to what ws really is when a bind
// mount put a tree of another place there (at ws, above it, or beneath
// it): a bind of /root/.ssh, /var/lib or /etc is that directory,
// whatever its path here says (a re-test, 2026-12-01). The place is
// found from the device's mount whose root is the file system's own.
func unfitMounts(ws Path) string {
	ms := mountinfo.Read()
	origin := func(m mountinfo.Mount, rel string) (Path, bool) {
		if m.Root == "/" {
			return "", false // the file system's own root: not a bind of a subtree
		}
		for _, main := range ms {
			if main.Dev == m.Dev && main.Root == "/" {
				return Path(filepath.Join(main.Point, m.Root, rel)), true
			}
		}
		return "", false
	}
	// The mount ws is in: the longest mount point above or at it.
	var in *mountinfo.Mount
	for i, m := range ms {
		if Path(m.Point).Contains(ws) && (in == nil || len(m.Point) > len(in.Point)) {
			in = &ms[i]
		}
	}
	if in != nil {
		rel := strings.TrimPrefix(strings.TrimPrefix(string(ws), in.Point), "/")
		if o, ok := origin(*in, rel); ok && o != ws {
			if why := unfitWorkspace(o); why != "" {
				return fmt.Sprintf("is %s by a bind mount, and that %s", o, why)
			}
		}
	}
	for _, m := range ms {
		if p := Path(m.Point); p != ws && ws.Contains(p) {
			if o, ok := origin(m, ""); ok {
				if why := unfitWorkspace(o); why != "" {
					return fmt.Sprintf("holds a bind mount of %s at %s, and that %s", o, p, why)
				}
			}
		}
	}
	return ""
}
