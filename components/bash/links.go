package bash

import (
	"strings"
	"sync"
)

// makesLinks reports a command that may make a symbolic link in the
// workspace, through which an mv on the same line may leave it: ln; cp
// copying a link as a link (-a, -d, -P, -R, -r, -s and their long
// names: a ninth hunt, cp -d /var/run up && mv src up); rsync -l or
// -a; tar extracting (tar -cf l.tar -C /var lock; tar -xf l.tar; mv src
// lock/); git writing the working tree from a patch or a commit (git
// apply of a patch that adds a link, mode 120000; git bisect, which
// checks out the commits it tries: a tenth hunt); patch, unzip, cpio,
// bsdtar, 7z, pax and the other extractors whatever their options; and
// dpkg-deb and dpkg extracting a package (a tenth hunt: dpkg-deb -x
// l.deb . made up, then mv src up/); python -m tarfile and zipfile -e,
// cmake -E tar x and create_symlink, jar x (an eleventh hunt); npm,
// pnpm, yarn and bun installing or linking (a dependency that is a
// folder, file:/tmp or ../x, is a link in node_modules: a twelfth
// hunt, npm install ../outside; mv src node_modules/outside/ took src
// out), stow, xstow and lndir, gh repo clone.
func makesLinks(c *SimpleCommand) bool {
	ws := c.Words
	switch baseName(c) {
	case "ln", "patch", "unzip", "cpio", "bsdtar", "7z", "7za", "7zr", "7zz",
		"gtar", "bsdcpio", "pax", "unsquashfs", "unar", "unrar", "aunpack", "atool", "stow", "xstow", "lndir":
		return true
	case "npm", "pnpm", "yarn", "bun":
		// Options before the subcommand may take a value: any word that
		// names an install or a link counts, and yarn alone installs.
		if baseName(c) == "yarn" && len(ws) == 1 {
			return true
		}
		for _, w := range ws[1:] {
			if w.Text == "--" {
				break
			}
			if nodeInstalls()[w.Text] || !w.Literal {
				return true
			}
		}
	case "gh":
		return len(ws) > 2 && ws[1].Text == "repo" && ws[2].Text == "clone"
	case "dpkg-deb", "dpkg":
		return anyOption(ws, func(t string) bool {
			name, _, _ := strings.Cut(t, "=")
			return longOpt(name, "--extract", 3) || longOpt(name, "--vextract", 3) || longOpt(name, "--raw-extract", 3) ||
				strings.ContainsFunc("xXR", func(r rune) bool { return shortLetter(t, byte(r), "") })
		})
	case "cp":
		return anyOption(ws, func(t string) bool {
			name, val, _ := strings.Cut(t, "=")
			return longOpt(name, "--archive", 3) || longOpt(name, "--no-dereference", 4) || longOpt(name, "--recursive", 3) ||
				longOpt(name, "--symbolic-link", 3) || longOpt(name, "--preserve", 3) && (strings.Contains(val, "links") || strings.Contains(val, "all")) ||
				strings.ContainsFunc("adPRrs", func(r rune) bool { return shortLetter(t, byte(r), "St") })
		})
	case "rsync":
		return anyOption(ws, func(t string) bool {
			name, _, _ := strings.Cut(t, "=")
			return longOpt(name, "--links", 3) || longOpt(name, "--archive", 3) ||
				shortLetter(t, 'l', rsyncShortValued) || shortLetter(t, 'a', rsyncShortValued)
		})
	case "tar":
		// The first word may be a group of letters without a dash (tar
		// xf l.tar).
		if len(ws) > 1 && ws[1].Literal && !strings.HasPrefix(ws[1].Text, "-") && strings.ContainsRune(ws[1].Text, 'x') {
			return true
		}
		return anyOption(ws, func(t string) bool {
			name, _, _ := strings.Cut(t, "=")
			return longOpt(name, "--extract", 4) || longOpt(name, "--get", 4) || shortLetter(t, 'x', "fCTXbFgHIKLNVs")
		})
	case "cmake":
		// cmake -E tar x… extracts, create_symlink makes one (an eleventh
		// hunt, python -m tarfile -e l.tar . and these).
		return len(ws) > 2 && ws[1].Text == "-E" && (ws[2].Text == "create_symlink" || ws[2].Text == "tar" && len(ws) > 3 && strings.Contains(ws[3].Text, "x"))
	case "jar":
		return len(ws) > 1 && (!strings.HasPrefix(ws[1].Text, "--") && strings.Contains(ws[1].Text, "x") || ws[1].Text == "--extract")
	case "git":
		if len(ws) < 2 {
			return false
		}
		switch ws[1].Text {
		case "apply", "am", "checkout", "switch", "restore", "reset", "merge", "pull", "rebase", "cherry-pick", "revert",
			"stash", "read-tree", "checkout-index", "clone", "submodule", "worktree", "bisect", "sparse-checkout", "subtree":
			return true
		}
	}
	if strings.HasPrefix(baseName(c), "python") {
		// python -m tarfile -e (--extract) and -m zipfile -e extract.
		module := false
		for _, w := range ws[1:] {
			t := w.Text
			module = module || t == "tarfile" || t == "zipfile" || t == "-mtarfile" || t == "-mzipfile"
			if module && (t == "-e" || t == "--extract") {
				return true
			}
		}
	}
	return false
}

// nodeInstalls are the subcommands of npm, pnpm, yarn and bun (and
// npm's aliases of them) that install dependencies or link packages.
var nodeInstalls = sync.OnceValue(func() map[string]bool {
	return set("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"ci", "clean-install", "ic", "install-clean", "isntall-clean", "install-test", "it", "install-ci-test", "cit",
		"link", "ln", "update", "up", "upgrade", "udpate", "rebuild", "rb", "dedupe", "ddp", "prune", "import")
})

// anyOption reports a word before "--" that is an option and holds what
// is looked for; a word that is not a literal and may be an option
// counts.
func anyOption(ws []Word, is func(t string) bool) bool {
	for _, w := range ws[1:] {
		if w.Literal && w.Text == "--" {
			return false
		}
		if w.isOpt() && is(w.Text) || !w.Literal && w.mayBeOption() {
			return true
		}
	}
	return false
}
