package fs

import (
	"strings"
	"testing"
)

func TestCheckPath(t *testing.T) {
	bad := []string{
		"", strings.Repeat("a", MaxPath+1), "a\xffb", "a\x00b", "\x00",
		"/etc/passwd", "/", "//x",
		"..", "../x", "a/../b", "a/..", "../../etc/passwd",
		"a/", "./a", "a//b", "a/./b", "./", "a/b/",
	}
	for _, p := range bad {
		if err := checkPath(p); err == nil {
			t.Errorf("checkPath(%q) accepted", p)
		}
	}
	good := []string{".", "a", "a/b", "a..b", "..a", "a/.b", "...", "a/...", strings.Repeat("a", 255), "é/ü", ".git"}
	for _, p := range good {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) (control): %v", p, err)
		}
	}
}

func TestProtectedMatch(t *testing.T) {
	m, err := newMatcher([]string{"secrets/prod", "policy.toml"})
	if err != nil {
		t.Fatal(err)
	}
	prot := map[string]string{
		".git/hooks":                        ".git/hooks",
		".git/hooks/pre-commit":             ".git/hooks",
		".git/config":                       ".git/config",
		".git/commondir":                    ".git/commondir",
		".git/modules/sub/hooks/x":          ".git/modules/sub/hooks",
		".git/modules/sub/config":           ".git/modules/sub/config",
		"vendor/lib/.git/hooks/x":           "vendor/lib/.git/hooks",
		".ssh":                              ".ssh",
		".ssh/authorized_keys":              ".ssh",
		"a/.ssh/id_ed25519":                 "a/.ssh",
		".vscode/settings.json":             ".vscode",
		".mcp.json":                         ".mcp.json",
		".bashrc":                           ".bashrc",
		".profile":                          ".profile",
		".zshrc":                            ".zshrc",
		".bash_profile":                     ".bash_profile",
		"home/.zshenv":                      "home/.zshenv",
		"secrets/prod":                      "secrets/prod",
		"secrets/prod/key":                  "secrets/prod",
		"policy.toml":                       "policy.toml",
		".git/modules/a/b/c/commondir":      ".git/modules/a/b/c/commondir",
		".git/config.worktree":              ".git/config.worktree",
		".git/worktrees/w/config.worktree":  ".git/worktrees/w/config.worktree",
		".gitconfig":                        ".gitconfig",
		".git/HEAD":                         ".git/HEAD",
		".git/objects/ab/cd":                ".git/objects",
		".git/rebase-merge/git-rebase-todo": ".git/rebase-merge",
		".git/x.lock/y":                     ".git/x.lock",
		".config/git":                       ".config/git",
		".config/git/config":                ".config/git",
		"home/.config/git/attributes":       "home/.config/git",
	}
	for p, want := range prot {
		pr, ok := m.protected(components(p), false)
		if !ok || pr.path != want {
			t.Errorf("protected(%q) = %q %v, want %q", p, pr.path, ok, want)
		}
	}
	free := []string{
		".", ".git", ".git/index.lock", "sub/.git/HEAD.lock", ".gitignore", ".git-hooks/x", "hooks/config",
		"config", ".bashrc.bak", "x.bashrc", ".sshx", ".vscode-test", "mcp.json",
		"secrets", "secrets/dev", "secrets/production", "sub/secrets/prod", "policy.toml.bak", "sub/policy.toml",
		// Case variants: another name on a case-sensitive file system.
		".GIT/config", ".Git/hooks/x", ".BASHRC", ".SSH/x", ".VSCode/x", ".MCP.json", "Secrets/prod",
		".config", ".config/gitx", ".config/nvim/git", "config.worktree", "git/config", ".gitconfig.bak",
	}
	for _, p := range free {
		if pr, ok := m.protected(components(p), false); ok {
			t.Errorf("protected(%q) = %q, want free", p, pr.path)
		}
	}
	// On a case-insensitive directory, the variants are the same names.
	for _, p := range []string{".GIT/config", ".Git/hooks/x", ".BASHRC", ".SSH/x", "Secrets/prod"} {
		if _, ok := m.protected(components(p), true); !ok {
			t.Errorf("protected(%q, fold) is free", p)
		}
	}
	anc := []string{".git", ".git/modules", "a/.git", "secrets", ".config", "home/.config"}
	for _, p := range anc {
		if _, ok := m.ancestor(components(p), false); !ok {
			t.Errorf("ancestor(%q) is free", p)
		}
	}
	for _, p := range []string{".", "a", "secrets2", "policy", "x/secrets", ".gitx", ".configx", "config"} {
		if pr, ok := m.ancestor(components(p), false); ok {
			t.Errorf("ancestor(%q) = %q, want free", p, pr.path)
		}
	}
	for _, bad := range [][]string{{"/etc"}, {"../x"}, {"."}, {"a/"}, {""}} {
		if _, err := newMatcher(bad); err == nil {
			t.Errorf("newMatcher(%q) accepted", bad)
		}
	}
}

// A case-insensitive directory (ext4, f2fs, tmpfs casefold) compares names
// by NFD and the full Unicode case folding (C+F): "conﬁg" (U+FB01) is
// "config" and ".ßh" is ".ssh" there, which simple folding (EqualFold)
// misses; kernels before 6.14 also dropped default-ignorable code points
// (".s\u200dsh"). Found by a hunt: each name reached the protected file.
func TestProtectedFullFold(t *testing.T) {
	m, err := newMatcher([]string{"secrets/prod"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".git/con\ufb01g", ".\u00dfh/authorized_keys", ".pro\ufb01le", ".git/hoo\u212as/x", ".Git/CON\ufb01G",
		".s\u200dsh/x", ".con\ufb01g/git/x", "\ufb00/.git/Config",
	} {
		if _, ok := m.protected(components(p), true); !ok {
			t.Errorf("protected(%q, fold) is free", p)
		}
	}
	if _, ok := m.ancestor(components("x/.GIT"), true); !ok {
		t.Errorf("ancestor(x/.GIT, fold) is free")
	}
	if _, ok := m.ancestor(components(".con\ufb01g"), true); !ok {
		t.Errorf("ancestor(.con\\ufb01g, fold) is free")
	}
	// Controls: different names stay different, folded or not.
	for _, p := range []string{".sshx", ".profiles", ".pro\ufb02le", "se\u00dfion", "x/config"} {
		if pr, ok := m.protected(components(p), true); ok {
			t.Errorf("protected(%q, fold) = %q, want free", p, pr.path)
		}
	}
	// Exact matching is untouched.
	if _, ok := m.protected(components(".pro\ufb01le"), false); ok {
		t.Errorf("protected(.pro\\ufb01le) without folding is protected")
	}
}

// NAME.git, a bare repository's usual name, protects its hooks, config,
// config.worktree and commondir even before it holds a repository (git
// init --bare keeps what it finds), in any case where the directory
// folds; not the rest of it (a work tree may be cloned into NAME.git).
// Renaming onto or from it is as renaming a .git.
func TestBareRepoNames(t *testing.T) {
	m, err := newMatcher(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"r.git/hooks", "r.git/hooks/post-update", "a/b/r.git/config", "r.git/commondir", "r.git/config.worktree"} {
		if _, ok := m.protected(components(p), false); !ok {
			t.Errorf("protected(%q) is free", p)
		}
	}
	for _, p := range []string{"R.GIT/Config", "r.Git/hoo\u212as/x", "r.gi\u200dt/con\ufb01g"} {
		if _, ok := m.protected(components(p), true); !ok {
			t.Errorf("protected(%q, fold) is free", p)
		}
	}
	for _, p := range []string{"r.git", "r.git/src/config", "r.git/src/hooks/x", "r.gitx/config", "r.git.bak/hooks", "git/config", "R.GIT/config"} {
		if pr, ok := m.protected(components(p), false); ok {
			t.Errorf("protected(%q) = %q, want free", p, pr.path)
		}
	}
	if _, ok := m.ancestor(components("x/r.git"), false); !ok {
		t.Errorf("ancestor(x/r.git) is free")
	}
	if _, ok := m.ancestor(components("x/R.Git"), true); !ok {
		t.Errorf("ancestor(x/R.Git, fold) is free")
	}
	if pr, ok := m.ancestor(components("r.git/src"), false); ok {
		t.Errorf("ancestor(r.git/src) = %q, want free", pr.path)
	}
}
