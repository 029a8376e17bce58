package policy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// liveDir returns a fresh directory with no symlink in its path, so that the
// only links a test sees are the ones it makes.
func liveDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Each testdata/live file has the same two header lines as testdata/invalid
// (see corpus_test.go), naming the first problem CheckLive reports, with
// @DIR@ standing for the test's directory throughout.
//
// liveCase sets up the file system for one testdata/live file. Every case
// starts from ws/, real/ and real/out/ beneath the test's directory. In the
// control run, links, files and missing entries are all real directories
// instead, and the same policy must pass.
type liveCase struct {
	links    map[string]string // name -> target
	files    []string
	missing  []string
	problems int // how many problems CheckLive reports
}

var liveCases = map[string]liveCase{
	"write-link":            {links: map[string]string{"ws/out": "../real"}, problems: 1},
	"write-link-parent":     {links: map[string]string{"ws/link": "../real"}, missing: []string{"ws/link/out"}, problems: 1},
	"write-link-dangling":   {links: map[string]string{"ws/dangling": "../gone"}, problems: 1},
	"write-link-absolute":   {links: map[string]string{"ws/etc": "/etc"}, problems: 1},
	"workspace-link":        {links: map[string]string{"wslink": "ws"}, problems: 1},
	"workspace-link-parent": {links: map[string]string{"up": "real"}, missing: []string{"up/ws"}, problems: 1},
	"write-missing":         {missing: []string{"ws/missing"}, problems: 1},
	"read-missing":          {missing: []string{"nope"}, problems: 1},
	"exec-missing":          {missing: []string{"tools/bin"}, problems: 1},
	"read-link":             {links: map[string]string{"lib": "real"}, problems: 1},
	"exec-link":             {links: map[string]string{"bin": "ws"}, problems: 1}, // an exec path linked into the workspace would undo SR-01
	"workspace-file":        {files: []string{"file"}, problems: 1},
	"workspace-missing":     {missing: []string{"gone"}, problems: 1},
	"two-problems":          {links: map[string]string{"wslink": "ws", "ws/out": "../real"}, missing: []string{"nope"}, problems: 3},
}

func (c liveCase) setup(t *testing.T, dir string, control bool) {
	t.Helper()
	mkdir := func(name string) {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"ws", "real/out"} {
		mkdir(d)
	}
	for name, target := range c.links {
		if control {
			mkdir(name)
		} else if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range c.files {
		if control {
			mkdir(name)
		} else if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range c.missing {
		if control {
			mkdir(name)
		}
	}
}

func TestCheckLive(t *testing.T) {
	files, _ := filepath.Glob("testdata/live/*.toml")
	if len(files) != len(liveCases) {
		t.Errorf("%d files in testdata/live, %d cases in liveCases", len(files), len(liveCases))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".toml")
		c, ok := liveCases[name]
		if !ok {
			t.Errorf("%s has no liveCases entry", file)
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, control := range []bool{false, true} {
				dir := liveDir(t)
				c.setup(t, dir, control)
				data := []byte(strings.ReplaceAll(string(raw), "@DIR@", dir))
				p, err := Parse(name, data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				err = p.CheckLive()
				if control {
					if err != nil {
						t.Errorf("control (real directories): CheckLive = %v", err)
					}
					continue
				}
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("CheckLive = %v, want *Error", err)
				}
				first := pe.Problems[0]
				got := header{first.Check, strings.ReplaceAll(first.String(), dir, "@DIR@")}
				if *update {
					if err := os.WriteFile(file, writeHeader(raw, got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := readHeader(raw)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("first problem:\n got  %s: %s\n want %s: %s", got.check, got.want, want.check, want.want)
				}
				if len(pe.Problems) != c.problems {
					t.Errorf("%d problems, want %d:\n%s", len(pe.Problems), c.problems, strings.Join(pe.Lines(), "\n"))
				}
				if pe.File != name {
					t.Errorf("Error.File = %q, want %q", pe.File, name)
				}
				// SR-02 problems carry the risk and name the link itself.
				for _, pr := range pe.Problems {
					if pr.Check != "resolves-elsewhere" {
						continue
					}
					wantRisk := "SR-02" // write paths and the workspace
					if pr.Key == "files.read" || pr.Key == "files.exec" {
						wantRisk = "SR-12" // the text must read as it binds
					}
					if pr.Risk != wantRisk {
						t.Errorf("%s: Risk %q, want %s", pr, pr.Risk, wantRisk)
					}
					named := false
					for link := range c.links {
						named = named || strings.Contains(pr.Msg, strconv.Quote(filepath.Join(dir, link)))
					}
					if !named {
						t.Errorf("%s does not name a link path", pr)
					}
				}
			}
		})
	}
}

// A policy built in code has no source: CheckLive still reports, without lines.
func TestCheckLiveWithoutSource(t *testing.T) {
	dir := liveDir(t)
	p := Default()
	p.Workspace.Path = Path(dir)
	p.Files.Write = []Path{Path(dir)}
	p.Files.Read = []Path{Path(dir + "/nope")}
	err := p.CheckLive()
	want := `policy: files.read: read path "` + dir + `/nope" cannot be used: it does not exist`
	if err == nil || err.Error() != want {
		t.Errorf("CheckLive = %v, want %s", err, want)
	}
	p.Files.Read = nil
	if err := p.CheckLive(); err != nil {
		t.Errorf("control: CheckLive = %v", err)
	}
}

func TestStarterPolicy(t *testing.T) {
	ws := liveDir(t)
	wantNet := map[string]func(n Network) bool{
		"offline": func(n Network) bool { return n.Mode == NetNone },
		"ports": func(n Network) bool {
			return n.Mode == NetPorts && len(n.ConnectTCP) == 1 && n.ConnectTCP[0] == 443
		},
	}
	eq(t, "TemplateNames", TemplateNames(), []string{"offline", "ports"})
	for _, name := range TemplateNames() {
		t.Run(name, func(t *testing.T) {
			data, err := StarterPolicy(name, ws)
			if err != nil {
				t.Fatalf("StarterPolicy: %v", err)
			}
			p, err := Parse(name+".toml", data)
			if err != nil {
				t.Fatalf("Parse:\n%s\n%v", data, err)
			}
			if err := p.CheckLive(); err != nil {
				t.Errorf("CheckLive: %v", err)
			}
			eq(t, "Mode", p.Mode, ModeWrapper)
			eq(t, "Workspace.Path", p.Workspace.Path, Path(ws))
			eq(t, "Files.Write[0]", p.Files.Write[0], Path(ws))
			if len(p.Files.Exec) == 0 {
				t.Error("no exec paths: the agent could run nothing")
			}
			if !wantNet[name](p.Network) {
				t.Errorf("Network = %+v", p.Network)
			}
			for _, a := range p.Advice() {
				if a.Check == "workspace-not-writable" {
					t.Errorf("advice on a starter policy: %s", a)
				}
			}
		})
	}
	q := regexp.QuoteMeta
	pathHolder, fakeHome := liveDir(t), liveDir(t)
	for _, d := range []string{pathHolder + "/go/bin/x", fakeHome + "/bin", pathHolder + "/src"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", pathHolder+"/go/bin:/usr/bin:/bin")
	t.Setenv("HOME", fakeHome)
	// The control: a project beside the PATH directory.
	if _, err := StarterPolicy("offline", pathHolder+"/src"); err != nil {
		t.Errorf("control, a project beside a PATH directory: %v", err)
	}
	tests := []struct{ name, ws, re string }{
		{"bogus", ws, q(`unknown template "bogus": known templates are offline, ports`)},
		{"", ws, q(`unknown template "": known templates are offline, ports`)},
		{"Offline", ws, q(`unknown template "Offline": known templates are offline, ports`)},
		{"offline", "rel/dir", q(`workspace: path "rel/dir" is not absolute: a relative path binds to whatever directory the launcher starts in`)},
		{"offline", ws + "/", q(`workspace: path "` + ws + `/" is not clean (write it as "` + ws + `"): the text must read as it binds (SR-12)`)},
		{"offline", ws + "/missing", q(`template "offline" for workspace "` + ws + `/missing" does not fit this host: ` +
			`template offline:7: workspace.path: the workspace "` + ws + `/missing" cannot be used: it does not exist (and 1 more)`)},
		// Workspaces whose being writable whole hands the agent the host,
		// or that the sandbox replaces: refused before anything is built.
		{"offline", "/", q(`the workspace "/" is the root of the file system: a starter policy makes its workspace writable whole`)},
		{"offline", "/root", q(`the workspace "/root" is a home directory: `) + `.*\.bashrc.*`},
		{"offline", "/home/someone", q(`the workspace "/home/someone" is a home directory: `) + `.*`},
		{"offline", "/home", q(`the workspace "/home" holds other people's or the system's files: a starter policy makes its workspace writable whole`)},
		{"offline", "/etc/nginx", q(`the workspace "/etc/nginx" is in /etc, one of the system's own trees: a starter policy makes its workspace writable whole`)},
		{"offline", "/usr/local/src", q(`the workspace "/usr/local/src" is in /usr, one of the system's own trees: `) + `.*`},
		{"offline", "/proc", q(`the workspace "/proc" `) + `.*`},
		{"offline", "/tmp", q(`the workspace "/tmp" is replaced by a private one in the sandbox: `) + `.*`},
		{"offline", "/var/tmp", q(`the workspace "/var/tmp" is shared with every user of the machine: `) + `.*`},
		{"offline", "/var/spool", q(`the workspace "/var/spool" is in /var, one of the system's own trees: `) + `.*`},
		{"offline", "/var/cache/apt", q(`the workspace "/var/cache/apt" is in /var, one of the system's own trees: `) + `.*`},
		{"offline", "/root/.config", q(`the workspace "/root/.config" is in /root, a home directory's own settings: `) + `.*`},
		{"offline", "/opt/wheels", q(`the workspace "/opt/wheels" is in /opt, one of the system's own trees: `) + `.*`},
		// Where the shell finds programs (a re-test: /root/go, which
		// holds /root/go/bin from PATH, was accepted).
		{"offline", pathHolder, q(`the workspace "`+pathHolder+`" is, holds or is in `+pathHolder+`/go/bin, where your shell finds programs`) + `.*`},
		{"offline", pathHolder + "/go/bin/x", q(`the workspace "`+pathHolder+`/go/bin/x" is, holds or is in `+pathHolder+`/go/bin, where your shell finds programs`) + `.*`},
		{"offline", fakeHome + "/bin", q(`the workspace "`+fakeHome+`/bin" is, holds or is in `+fakeHome+`/bin, where your shell finds programs`) + `.*`},
	}
	for _, tt := range tests {
		data, err := StarterPolicy(tt.name, tt.ws)
		if err == nil || !regexp.MustCompile("^"+tt.re+"$").MatchString(err.Error()) {
			t.Errorf("StarterPolicy(%q, %q) = %q, %v\nwant error matching %s", tt.name, tt.ws, data, err, tt.re)
		}
	}
}

// A write path holding a file with another name (a hard link) is
// advised on, naming how many and one; one without is not; a link out
// of the write path is not followed.
func TestHardLinked(t *testing.T) {
	ws, other := liveDir(t), liveDir(t)
	p := &Policy{Files: Files{Write: []Path{Path(ws)}}}
	if err := os.WriteFile(filepath.Join(other, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(ws, "to-other")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "own"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(other, "f"), filepath.Join(other, "f2")); err != nil {
		t.Fatal(err)
	}
	if ps := p.HardLinked(); len(ps) != 0 {
		t.Fatalf("control, no hard link in the write path: %v", ps)
	}
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(other, "f"), filepath.Join(ws, "sub", "linked")); err != nil {
		t.Fatal(err)
	}
	ps := p.HardLinked()
	if len(ps) != 1 || ps[0].Check != "hard-linked" || ps[0].Risk != "SD-22" ||
		!strings.HasPrefix(ps[0].Msg, fmt.Sprintf("%q holds 1 files with more than one name (hard links), such as %q", ws, filepath.Join(ws, "sub", "linked"))) {
		t.Fatalf("advice: %v", ps)
	}
}

// A home directory is known by what it is, not how it is spelt: a bind
// mount of one elsewhere is refused as the home itself; so is a
// directory holding a home /etc/passwd names. The control: a project
// directory beside them.
func TestStarterPolicyHomeByInode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a bind mount in a mount namespace of the test's own")
	}
	base := liveDir(t)
	bind, project, sys := filepath.Join(base, "bind"), filepath.Join(base, "project"), filepath.Join(base, "sys")
	for _, d := range []string{bind, project, sys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "/" {
		t.Skipf("no home directory to bind (%q, %v)", home, err)
	}
	// In a mount namespace of its own, so nothing shows outside the test.
	script := fmt.Sprintf("mount --bind %s %s && mount --bind /var/lib %s && exec %s -test.run='^TestStarterPolicyHomeByInodeChild$'", home, bind, sys, os.Args[0])
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "PINFOLD_BIND_CHILD="+bind, "PINFOLD_PROJECT_CHILD="+project, "PINFOLD_SYS_CHILD="+sys)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestStarterPolicyHomeByInodeChild(t *testing.T) {
	bind, project := os.Getenv("PINFOLD_BIND_CHILD"), os.Getenv("PINFOLD_PROJECT_CHILD")
	if bind == "" {
		t.Skip("run by TestStarterPolicyHomeByInode")
	}
	var ue *UnfitWorkspaceError
	if _, err := StarterPolicy("offline", bind); !errors.As(err, &ue) || ue.Why != homeWhy {
		t.Errorf("a bind mount of the home directory: %v", err)
	}
	// A bind of a system subtree (not its root) is found by its mount.
	sys := os.Getenv("PINFOLD_SYS_CHILD")
	if _, err := StarterPolicy("offline", sys); !errors.As(err, &ue) || !strings.Contains(ue.Why, "is /var/lib by a bind mount") {
		t.Errorf("a bind mount of /var/lib: %v", err)
	}
	if _, err := StarterPolicy("offline", filepath.Dir(sys)); !errors.As(err, &ue) || !strings.Contains(ue.Why, "holds a bind mount of ") {
		t.Errorf("a directory holding a bind mount of /var/lib: %v", err)
	}
	if _, err := StarterPolicy("offline", project); err != nil {
		t.Errorf("control, a project directory: %v", err)
	}
}

// git stops on a system file it may not read: advised when git is
// executable and the file exists outside every path; not when the file
// is listed (or reached through a symlink to a listed file), missing,
// or git is not executable.
func TestGitUnreadable(t *testing.T) {
	dir := liveDir(t)
	bin, etc, alt := filepath.Join(dir, "bin"), filepath.Join(dir, "etc"), filepath.Join(dir, "alt")
	for _, d := range []string{bin, etc, alt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git, conf, attrs := filepath.Join(bin, "git"), filepath.Join(etc, "gitconfig"), filepath.Join(etc, "gitattributes")
	for _, f := range []string{git, conf, filepath.Join(alt, "gitattributes")} {
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(alt, "gitattributes"), attrs); err != nil {
		t.Fatal(err)
	}
	programs, files := []string{git}, []string{conf, attrs, filepath.Join(etc, "missing")}
	checks := func(p *Policy) []string {
		var got []string
		for _, pr := range p.gitUnreadable(programs, files) {
			if pr.Check != "git-system-file" || pr.Key != "files.read" || !strings.Contains(pr.Hint, "files.read") {
				t.Errorf("advice: %+v", pr)
			}
			got = append(got, pr.Msg[:strings.Index(pr.Msg, " exists")])
		}
		return got
	}
	for _, c := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"git runs, neither listed", Policy{Files: Files{Exec: []Path{Path(bin)}}}, []string{strconv.Quote(conf), strconv.Quote(attrs)}},
		{"gitconfig listed, the link's target not", Policy{Files: Files{Exec: []Path{Path(bin)}, Read: []Path{Path(conf), Path(etc)}}}, []string{strconv.Quote(attrs)}},
		{"both reached", Policy{Files: Files{Exec: []Path{Path(bin)}, Read: []Path{Path(conf), Path(alt)}}}, nil},
		{"through a write path", Policy{Files: Files{Exec: []Path{Path(bin)}, Write: []Path{Path(dir)}}}, nil},
		{"git only readable", Policy{Files: Files{Read: []Path{Path(bin)}}}, nil},
	} {
		if got := checks(&c.p); !slices.Equal(got, c.want) {
			t.Errorf("%s: advised on %q, want %q", c.name, got, c.want)
		}
	}
}
