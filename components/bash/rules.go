package bash

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pinfold/pinfold/components/fs"
)

// verdict is a structural protection's answer.
type verdict struct {
	action       Action
	rule, reason string
	// readOnly, when set, is the workspace-relative path a redirection
	// (or a program, by a word it only writes: writtenWords) writes that
	// a command's worker has read-only (workerReadOnly): the write fails
	// whatever the person answers. relative: it was named relative to
	// the command's folder.
	readOnly string
	relative bool
}

// ---- structural protections ----

// protectedNames are protected wherever they appear as a path component,
// with everything beneath them, and gitProtected beneath a .git
// component: the fs component's built-in lists.
var protectedNames, gitProtected = sync.OnceValue(fs.ProtectedNames), sync.OnceValue(fs.GitProtectedNames)

// toolConfigs are workspace files (and .mvn, a directory) that a tool
// reads as its configuration whenever it runs there, and that may make
// it run a program (a fourteenth hunt): maven's .mvn (jvm.config's
// -javaagent:, maven.config, extensions.xml, the wrapper's jar and
// properties), cargo's .cargo/config and config.toml (a runner, a
// linker, a rustc wrapper), rustup's rust-toolchain and
// rust-toolchain.toml (a toolchain's path), Mercurial's .hg/hgrc
// (hooks, aliases), yarn's .yarnrc and .yarnrc.yml (yarn-path,
// yarnPath) and npm's .npmrc (script-shell, git). Each is matched as
// whole components at any depth, as protectedNames are, by the bash
// analyzer alone: the fs component's list is shared with its read-only
// mounts and matches one component, and .hg, .cargo and the files
// themselves are written by the tools (hg commit, cargo in a home,
// mvnw's download) as the person works. .cargo and .hg are whole, as
// .mvn is: a command that names the directory may put a configuration
// in it under the name of its source (a fifteenth hunt: cp
// /tmp/c/config.toml .cargo/, mv conf .cargo, ln -s conf .cargo).
// A sixteenth hunt: Gradle's gradle.properties (org.gradle.jvmargs'
// -javaagent:, org.gradle.java.home's java) and the wrapper's
// gradle/wrapper (the distribution gradlew runs, and its jar), sbt's
// .sbtopts and .jvmopts (-J-javaagent:, -javaagent:).
// A seventeenth hunt: the git hook managers' configuration, which runs
// on the person's next git commit as .git/hooks does (husky's .husky,
// which core.hooksPath names; pre-commit's .pre-commit-config.yaml,
// whose local hooks are commands; lefthook's configuration in each of
// its names, and its .lefthook scripts), and Bazel's .bazelrc
// (--run_under, --workspace_status_command) and .bazeliskrc (the Bazel
// it downloads and runs); yarn's .yarn/releases (the yarn that
// .yarnrc.yml's yarnPath runs) and .yarn/plugins, as gradle/wrapper;
// and .tool-versions, whose path: versions asdf and mise run the
// programs of, as rust-toolchain's path; .valgrindrc, whose options
// valgrind takes as its command line's (--log-file where it writes).
// A project's own build scripts (Makefile, package.json, tox.ini,
// justfile) are left out: the person runs them as the project's, as
// the agent does.
var toolConfigs = [][]string{
	{".mvn"}, {".cargo"}, {"rust-toolchain"}, {"rust-toolchain.toml"}, {".hg"}, {".yarnrc"}, {".yarnrc.yml"}, {".npmrc"},
	{"gradle.properties"}, {"gradle", "wrapper"}, {".sbtopts"}, {".jvmopts"},
	{".husky"}, {".pre-commit-config.yaml"}, {".pre-commit-config.yml"}, {".lefthook"}, {".lefthook-local"},
	{".bazelrc"}, {".bazeliskrc"}, {".yarn", "releases"}, {".yarn", "plugins"}, {".tool-versions"},
	{".valgrindrc"},
}

// lefthookConfig reports whether name is one of lefthook's
// configuration files: lefthook and lefthook-local, with or without a
// leading dot, as .yml, .yaml, .json, .jsonc or .toml.
func lefthookConfig(name string) bool {
	base, ext, _ := strings.Cut(strings.TrimPrefix(name, "."), ".")
	return (base == "lefthook" || base == "lefthook-local") && slices.Contains([]string{"yml", "yaml", "json", "jsonc", "toml"}, ext)
}

// execEnv are variables that make programs run code they name, or
// rebind command names: setting one for a command changes what the
// command does beyond what its words say.
var execEnv = sync.OnceValue(func() map[string]bool {
	return set(
		"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "PATH", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL",
		"GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_COMMON_DIR",
		"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
		"NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONSTARTUP", "LESSOPEN", "LESSCLOSE", "BROWSER",
		// Where programs read their start-up files and configuration: git's
		// core.fsmonitor in $XDG_CONFIG_HOME/git/config runs a command, a
		// login shell runs $HOME/.profile, bash's $"…" takes its text from
		// $TEXTDOMAINDIR's catalogues and expands it (a re-test, each).
		"HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "ZDOTDIR", "INPUTRC", "TEXTDOMAIN", "TEXTDOMAINDIR",
		// make reads options from them: --eval=$(shell …) (a hunt), and
		// makefiles from MAKEFILES; man its options from MANOPT (-P PAGER)
		// and groff's from MANROFFOPT (an eighth hunt).
		"MAKEFLAGS", "GNUMAKEFLAGS", "MFLAGS", "MAKEFILES", "MANOPT", "MANROFFOPT",
		// The shell flock -c, script, make and others run; options read
		// from the environment (tar's --to-command, zip's -TT); the program
		// rsync connects through (a hunt, each).
		"SHELL", "TAR_OPTIONS", "ZIPOPT", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "SUDO_ASKPASS", "GCONV_PATH",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		// Info-ZIP reads options from ZIP as from ZIPOPT (a ninth hunt:
		// ZIP=-rm zip deleted what it zipped, ZIP=-TT./s ran s), unzip from
		// UNZIP and UNZIPOPT (-o overwrites, -: extracts past ..); perl
		// loads modules from PERL5LIB and PERLLIB before its own (a ninth
		// hunt: PERL5LIB=. shasum ran a Digest/SHA.pm of the workspace),
		// ruby from RUBYLIB; sudoedit and sudo -e run SUDO_EDITOR.
		// PYTHONPATH and NODE_PATH are left out: they are set for most test
		// runs, and python and node run the workspace's code as they are
		// told anyway. gzip's GZIP, bzip2's BZIP2 and BZIP, xz's XZ_OPT and
		// zstd's ZSTD_CLEVEL give options no more than their words could
		// (none runs a command; gzip -r and the removal of the input are
		// automatic on the command line too).
		"ZIP", "UNZIP", "UNZIPOPT", "PERL5LIB", "PERLLIB", "RUBYLIB", "SUDO_EDITOR",
		// curl and wget read a configuration file from here, which may name
		// where they write (output, -o, --output-dir; wget's output_document).
		"CURL_HOME", "WGETRC",
		// go reads its flags from GOFLAGS (-toolexec=./s ran s: an eleventh
		// hunt) and settings from GOENV's file; GOTOOLCHAIN and GOROOT say
		// which go and compiler run, and a file: GOPROXY where a toolchain
		// go switches to comes from, unchecked (envValueOK). go with cgo, make's recipes and
		// configure scripts run the compiler, preprocessor, archiver and
		// linker these name, with CGO_* flags (-fplugin=, -B); gcc runs its
		// passes from COMPILER_PATH and GCC_EXEC_PREFIX.
		"GOFLAGS", "GOPROXY", "GOENV", "GOTOOLCHAIN", "GOROOT", "CC", "CXX", "CPP", "AR", "LD", "COMPILER_PATH", "GCC_EXEC_PREFIX",
		// Configurations that load code or name programs (an eleventh hunt,
		// each): openssl's (engines' dynamic_path: OPENSSL_CONF=./c openssl
		// version loaded ./x.so) and where it finds engines and providers;
		// kubectl's (users.exec.command: KUBECONFIG=./k kubectl get pods ran
		// s), aws's (credential_process), docker's (credential helpers),
		// gpg's home (agent-program); rustc and cargo's wrappers, linker
		// flags (RUSTFLAGS=-Clinker=./s) and home (its config.toml); the
		// JVM options maven passes (-javaagent:); pkg-config's program.
		"OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "KUBECONFIG", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"DOCKER_CONFIG", "GNUPGHOME", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOC", "RUSTFLAGS",
		"RUSTDOCFLAGS", "RUSTUP_TOOLCHAIN", "RUSTUP_HOME", "MAVEN_OPTS", "PKG_CONFIG",
		// The FIDO library ssh, ssh-keygen and ssh-add load (a twelfth hunt:
		// SSH_SK_PROVIDER=./x.so ssh-keygen -t ecdsa-sk ran its constructor).
		"SSH_SK_PROVIDER",
		// ripgrep reads its options from this file, --pre COMMAND among
		// them (a thirteenth hunt: RIPGREP_CONFIG_PATH=.rgrc rg hello ran
		// the --pre=./tools.sh of .rgrc).
		"RIPGREP_CONFIG_PATH",
		// Where an interpreter's launcher finds it, and its site: mvn (and
		// gradle, ant, sbt) run $JAVA_HOME/bin/java (a thirteenth hunt:
		// JAVA_HOME=./j mvn -v ran ./j/bin/java); python imports its
		// standard library and sitecustomize from PYTHONHOME, and runs the
		// .pth files and usercustomize of PYTHONUSERBASE's site-packages
		// (PYTHONUSERBASE=./u pip --version ran ./u/…/x.pth). PYTHONPATH
		// stays left out (above).
		"JAVA_HOME", "PYTHONHOME", "PYTHONUSERBASE",
		// A fourteenth hunt, each: go runs GOCACHEPROG and GOAUTH's command,
		// gccgo GCCGO; make's recipes the Fortran compiler FC; the JVM the
		// options of GRADLE_OPTS, JAVA_OPTS, ANT_OPTS, SBT_OPTS and
		// MAVEN_DEBUG_OPTS (-javaagent:), mvn the .mvn/jvm.config of
		// MAVEN_BASEDIR, javac and java the annotation processors and
		// classes of CLASSPATH; python imports from PYTHONPLATLIBDIR; less
		// reads options from LESS and a lesskey (which sets LESSOPEN) from
		// LESSKEY and the like; gio loads modules from GIO_EXTRA_MODULES
		// and GIO_MODULE_DIR and desktop files (and their Exec) from
		// XDG_DATA_HOME and XDG_DATA_DIRS; valgrind runs its tools from
		// VALGRIND_LIB; gem and bundle load rubygems_plugin.rb from
		// GEM_HOME and GEM_PATH; R runs R_PROFILE_USER's code and
		// R_ENVIRON_USER's settings; psql runs PSQLRC's commands (\!).
		// LUA_INIT (LUA_INIT_5_4 and kin) and CCACHE_* are execEnvPrefixes'
		// kind (isExecEnv).
		"GOCACHEPROG", "GOAUTH", "GCCGO", "FC", "GRADLE_OPTS", "JAVA_OPTS", "ANT_OPTS", "SBT_OPTS", "MAVEN_DEBUG_OPTS",
		"MAVEN_BASEDIR", "CLASSPATH", "PYTHONPLATLIBDIR", "LESS", "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM",
		"LESSKEY_CONTENT", "GIO_EXTRA_MODULES", "GIO_MODULE_DIR", "XDG_DATA_HOME", "XDG_DATA_DIRS", "VALGRIND_LIB",
		"GEM_HOME", "GEM_PATH", "R_PROFILE_USER", "R_ENVIRON_USER", "PSQLRC",
		// A fifteenth hunt: javac reads its options from JDK_JAVAC_OPTIONS
		// (--system ./j loaded ./j/lib/jrt-fs.jar, -processorpath); psql
		// runs the psqlrc of PGSYSCONFDIR as it does PSQLRC's, and mysql
		// and mariadb read options (--pager, --plugin-dir, --default-auth)
		// from the my.cnf of MYSQL_HOME and MARIADB_HOME, as from
		// --defaults-extra-file.
		"JDK_JAVAC_OPTIONS", "PGSYSCONFDIR", "MYSQL_HOME", "MARIADB_HOME",
		// A sixteenth hunt: mvn (3.9 and later) puts MAVEN_ARGS, and
		// mvnw MAVEN_CONFIG, among its arguments (-Dmaven.ext.class.path=
		// loads a jar, -s a settings file); gradle runs the init scripts
		// of GRADLE_USER_HOME's init.d and the JVM options of its
		// gradle.properties (GRADLE_USER_HOME=./g ./gradlew build was
		// automatic under the table's policy).
		"MAVEN_ARGS", "MAVEN_CONFIG", "GRADLE_USER_HOME",
		// corepack's home is $XDG_CACHE_HOME/node/corepack when
		// COREPACK_HOME is not set (a sixteenth hunt).
		"XDG_CACHE_HOME",
		// gh runs the programs of GH_EDITOR, GH_PAGER and GH_BROWSER, and
		// the aliases and extensions of GH_CONFIG_DIR (a sixteenth hunt).
		"GH_EDITOR", "GH_PAGER", "GH_BROWSER", "GH_CONFIG_DIR",
	)
})

// ccacheEnvOK are the CCACHE_* variables that name no program nor a
// configuration; ccache takes any other as a setting (CCACHE_PREFIX
// and CCACHE_COMPILERCHECK run a command, CCACHE_DIR and
// CCACHE_CONFIGPATH name a ccache.conf that may say so).
var ccacheEnvOK = sync.OnceValue(func() map[string]bool {
	return set("CCACHE_DISABLE", "CCACHE_MAXSIZE", "CCACHE_BASEDIR", "CCACHE_NOHASHDIR", "CCACHE_SLOPPINESS",
		"CCACHE_COMPRESS", "CCACHE_NOCOMPRESS", "CCACHE_RECACHE", "CCACHE_READONLY")
})

// cargoEnvOK are the CARGO_* variables that choose no program; cargo
// takes any other as a setting (CARGO_BUILD_RUSTC_WRAPPER,
// CARGO_TARGET_<triple>_RUNNER and _LINKER, CARGO_HOME run programs).
var cargoEnvOK = sync.OnceValue(func() map[string]bool {
	return set("CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_INCREMENTAL", "CARGO_BUILD_JOBS",
		"CARGO_NET_OFFLINE", "CARGO_TERM_COLOR", "CARGO_TERM_VERBOSE", "CARGO_TERM_QUIET", "CARGO_TERM_PROGRESS_WHEN")
})

// execEnvPrefixes begin the names of variables that a program reads as
// its settings, any of which may run a program: groff runs its
// preprocessors and troff from GROFF_BIN_PATH (a tenth hunt:
// GROFF_BIN_PATH=. groff ran ./troff) and macros from GROFF_TMAC_PATH;
// npm (and pnpm) take npm_config_NAME, in any case, as the setting
// NAME (editor, shell, script-shell, git, node-options: a tenth hunt,
// npm_config_editor=./s npm config edit); yarn takes YARN_NAME
// (yarnPath runs a script). The version managers' shims (pyenv's
// python, pip, pytest; rbenv's, nodenv's, asdf's and mise's) source
// hooks from PYENV_HOOK_PATH and the like and run the version their
// settings name (a twelfth hunt: PYENV_HOOK_PATH=./h pip --version ran
// h/exec/x.bash). corepack runs the package managers of COREPACK_HOME
// and takes others from any URL given COREPACK_ENABLE_UNSAFE_CUSTOM_URLS
// (a sixteenth hunt: COREPACK_HOME=$PWD/h corepack yarn@1.22.99 ran
// h's yarn). Each prefix is matched in any case.
var execEnvPrefixes = []string{"GROFF_", "npm_config_", "pnpm_config_", "YARN_",
	"PYENV_", "RBENV_", "NODENV_", "GOENV_", "PLENV_", "JENV_", "ASDF_", "MISE_", "RTX_", "COREPACK_"}

// gitEnvOK are the GIT_* variables that only label what git records or
// keep it from prompting; any other GIT_* variable needs approval: many
// run a program (GIT_PROXY_COMMAND), allow one (GIT_ALLOW_PROTOCOL=ext,
// a hunt), read other configuration, or move where git works, and new
// ones come with new versions of git.
var gitEnvOK = sync.OnceValue(func() map[string]bool {
	return set("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_MERGE_AUTOEDIT", "GIT_OPTIONAL_LOCKS")
})

func isExecEnv(name string) bool {
	for _, p := range execEnvPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return true
		}
	}
	if strings.HasPrefix(name, "CGO_") && name != "CGO_ENABLED" || strings.HasPrefix(name, "CARGO_") && !cargoEnvOK()[name] {
		return true
	}
	// A pager or an editor by any program's name for it (an H12 hunt:
	// SYSTEMD_PAGER=./x journalctl --help, on a terminal script -c
	// gives, ran x; PSQL_PAGER, AWS_PAGER, BAT_PAGER, DELTA_PAGER,
	// KUBE_EDITOR and the like alike), bat's configuration file (its
	// --pager) and systemd's options for less (+!CMD).
	if u := strings.ToUpper(name); strings.HasSuffix(u, "PAGER") || strings.HasSuffix(u, "EDITOR") || u == "BAT_CONFIG_PATH" || u == "SYSTEMD_LESS" {
		return true
	}
	if strings.HasPrefix(name, "LUA_INIT") || strings.HasPrefix(name, "CCACHE_") && !ccacheEnvOK()[name] {
		return true
	}
	return execEnv()[name] || strings.HasPrefix(name, "GIT_") && !gitEnvOK()[name] || strings.HasPrefix(name, "BASH_FUNC_")
}

// envValueOK reports a literal value of GOFLAGS or GOPROXY that makes go
// run nothing it names, or of LESS that names no lesskey nor command. GOFLAGS: no -toolexec, -exec, -vettool nor
// -ldflags (GOFLAGS=-mod=mod is common). GOPROXY: no file: proxy, the
// one from which go takes a toolchain without the checksum database (a
// twelfth hunt: GOPROXY=file://$PWD/p GOSUMDB=off go build, go.mod
// saying go 1.99.0, ran the p's bin/go; GOPROXY=off and https
// proxies are common).
func envValueOK(name string, v string) bool {
	var bad []string
	switch name {
	case "GOFLAGS":
		bad = []string{"exec", "vettool", "ldflags"}
	case "GOPROXY":
		bad = []string{"file:"}
	case "LESS":
		// Options with no lesskey (-k, --lesskey-*) nor a command
		// (+!CMD, |): LESS=-FRX is common.
		bad = []string{"k", "!", "|"}
	default:
		return false
	}
	for _, f := range bad {
		if strings.Contains(strings.ToLower(v), f) {
			return false
		}
	}
	return true
}

// systemCommands change the system's mounts, root, namespaces or kernel:
// nothing a confined agent has a use for.
var systemCommands = sync.OnceValue(func() map[string]bool {
	return set("mount", "umount", "chroot", "pivot_root", "nsenter", "unshare", "insmod", "rmmod", "modprobe")
})

// readOnly are commands that only read the files their arguments name:
// naming a protected path to them is not a change to it.
var readOnly = sync.OnceValue(func() map[string]bool {
	return set(
		"cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "ack", "ls", "stat", "file", "wc",
		"diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "echo", "printf", "test", "[",
		"realpath", "readlink", "basename", "dirname", "bat", "nl", "od", "hexdump", "strings", "tree", "du",
		"type", "which", "whereis", "column", "jq",
	)
})

var gitReadOnly = sync.OnceValue(func() map[string]bool {
	return set("diff", "show", "log", "status", "blame", "ls-files", "grep", "check-ignore", "rev-parse",
		"cat-file", "shortlog", "describe", "ls-tree", "whatchanged")
})

// structural applies the protections no policy changes. skipReadOnly
// passes over the redirections (and the words programs only write:
// writtenWords) to paths a worker has read-only, to see whether the
// command needs the person for anything else.
func structural(sc *SimpleCommand, o Options, skipReadOnly bool) *verdict {
	if v := authority(sc, o); v != nil {
		return v
	}
	name := baseName(sc)
	switch {
	case name == "chmod":
		for _, w := range sc.Words[1:] {
			if w.Literal && setuidMode(w.Text) {
				return &verdict{action: Refuse, rule: "structural.setuid", reason: "chmod " + quotedWord(w.Text) + " makes a set-user-ID or set-group-ID program"}
			}
		}
	case name == "install":
		for i, w := range sc.Words[1:] {
			m := ""
			switch t := w.Text; {
			case t == "-m" || t == "--mode":
				if i+2 < len(sc.Words) {
					m = sc.Words[i+2].Text
				}
			case strings.HasPrefix(t, "--mode="):
				m = t[len("--mode="):]
			case strings.HasPrefix(t, "-m") && len(t) > 2:
				m = t[2:]
			}
			if setuidMode(m) {
				return &verdict{action: Refuse, rule: "structural.setuid", reason: "install -m " + m + " makes a set-user-ID or set-group-ID program"}
			}
		}
	case name == "setcap" && len(sc.Words) > 1:
		return &verdict{action: Refuse, rule: "structural.setuid", reason: "setcap gives a program capabilities"}
	case systemCommands()[name] && (name != "mount" || len(sc.Words) > 1):
		return &verdict{action: Refuse, rule: "structural.system", reason: name + " changes the system's mounts, root, namespaces or kernel"}
	}
	for _, a := range sc.Assigns {
		if a.Value.Literal && envValueOK(a.Name, a.Value.Text) {
			continue
		}
		if isExecEnv(a.Name) {
			return &verdict{action: Approve, rule: "structural.exec-env", reason: "setting " + a.Name + " changes which code programs run"}
		}
	}
	if v := varWriter(sc); v != nil {
		return v
	}
	if v := gitStructural(sc); v != nil {
		return v
	}
	for _, r := range sc.Redirects {
		if !writes(r) {
			continue
		}
		if rule, what := classifyWord(r.Target, sc.line, o); rule != "" {
			rel, relative, ro := workerReadOnly(r.Target, sc.line, o)
			if ro && skipReadOnly {
				continue
			}
			v := &verdict{action: Approve, rule: rule, reason: "the redirection " + r.Op + " " + quotedWord(r.Target.Text) + " writes to " + what}
			if ro {
				v.readOnly, v.relative = rel, relative
			}
			return v
		}
	}
	for _, a := range sc.Assigns {
		if rule, what := classifyWord(a.Value, sc.line, o); rule != "" {
			return &verdict{action: Approve, rule: rule, reason: a.Name + " is set to a path in " + what}
		}
	}
	if !isReadOnly(sc) {
		skip := codeWords(sc)
		// The arguments known to be written alone (mv's and cp's
		// destination, the files touch, chmod or sed -i change: read as
		// the program reads its words, writtenWords) count as writes
		// the worker may be unable to make, as a redirection's target
		// does. Any other argument may be read or written.
		written := writtenWords(sc)
		facts := sc.line
		if name == "ln" && facts.linkers == 1 && len(sc.Wrappers) == 0 && !sc.repeats {
			// The one link the line makes is ln's own, at the path it
			// writes, made once: no link leads that path elsewhere (run
			// again, in a loop or by find -exec, ln would write through
			// the link it made: ln -s /tmp/o .vscode makes /tmp/o/o).
			facts.links = false
		}
		for i, w := range sc.Words {
			if i == 0 || skip[i] || (name == "rm" || name == "unlink") && gitLock(w) {
				continue
			}
			if rule, what := classifyWord(w, sc.line, o); rule != "" {
				v := &verdict{action: Approve, rule: rule, reason: sc.Words[0].Text + " is given " + quotedWord(w.Text) + ", in " + what}
				if dest, ok := written[i]; ok {
					if rel, relative, ro := workerReadOnly(dest, facts, o); ro {
						if skipReadOnly {
							continue
						}
						v.readOnly, v.relative = rel, relative
					}
				}
				return v
			}
		}
	}
	// What find runs works on the files beneath its starting points:
	// -exec and -ok are given them ({}, or $1 of an sh -c), -execdir and
	// -okdir run in their folders (a hunt: find .git/hooks -exec cp x {}
	// \; overwrote every hook, find .git/hooks/a.sample -execdir cp x
	// pre-commit \; wrote one). A shell whose code was walked writes
	// only through its commands, which are decided on their own.
	walked := shells()[baseName(sc)] && sc.code[1] > 0
	if !isReadOnly(sc) && !walked || slices.ContainsFunc(sc.Redirects, writes) {
		for _, l := range sc.Wrappers {
			if !strings.HasPrefix(l.Name, "find -") {
				continue
			}
			for _, w := range findStartWords(l.Words) {
				if rule, what := classifyWord(w, sc.line, o); rule != "" {
					return &verdict{action: Approve, rule: rule, reason: "find " + quotedWord(w.Text) + " " + strings.TrimPrefix(l.Name, "find ") + " runs a command that may write where it finds files, in " + what}
				}
			}
		}
	}
	// A wrapper's own options may name where it works or writes (a
	// twelfth hunt: env -C .git/hooks cp x pre-commit wrote a hook, and
	// /usr/bin/time -o .git/config ls and strace -o .git/config ls
	// overwrote the configuration), whatever the command it runs reads.
	for i := len(sc.Wrappers) - 1; i >= 0; i-- { // the innermost first: an outer layer's words hold an inner's
		l := sc.Wrappers[i]
		if l.off < 0 {
			continue // a string or a list the command came from: its words are commands'
		}
		for _, w := range l.Words[1:min(l.off, len(l.Words))] {
			if l.Name == "flock" && gitLock(w) {
				continue
			}
			if rule, what := classifyWord(w, sc.line, o); rule != "" {
				return &verdict{action: Approve, rule: rule, reason: l.Name + " is given " + quotedWord(w.Text) + ", in " + what}
			}
		}
	}
	return nil
}

// lessLogs reports a less that may copy its input to a file: -o or -O
// (in a group of short options too), --log-file or --LOG-FILE in any
// prefix less takes, or a word that is not a literal where an option
// may stand (an H12 hunt: with a terminal, script -qc "… | less -F -o
// .git/hooks/pre-commit" /dev/null wrote the hook).
func lessLogs(ws []Word) bool {
	for _, w := range ws[1:] {
		t := w.Text
		if w.Literal && t == "--" {
			return false
		}
		n, _, _ := strings.Cut(t, "=")
		if !w.Literal || shortLetter(t, 'o', "bhjkpPtTxyzD#") || shortLetter(t, 'O', "bhjkpPtTxyzD#") ||
			longOpt(strings.ToLower(n), "--log-file", 3) {
			return true
		}
	}
	return false
}

// gitLock reports a word that is plainly a lock file under a .git
// (.git/index.lock): rm and unlink may remove one a git that died left,
// and flock may lock one, without the person; neither writes it.
func gitLock(w Word) bool {
	cs := components(w.Text)
	return w.Literal && len(cs) >= 2 && strings.HasSuffix(cs[len(cs)-1], ".lock") && len(cs[len(cs)-1]) > len(".lock") &&
		slices.Contains(cs[:len(cs)-1], ".git") && !slices.Contains(cs, "..") && !strings.ContainsAny(w.Text, "*?[{")
}

// varWriter finds a builtin that sets or exports, by a name in its
// words, a variable that makes programs (or bash) run other code: read
// LD_PRELOAD, printf -v PATH, mapfile, export BASH_ENV, declare -x NAME
// (also through builtin or command, which leave them words); a nameref
// (declare -n), through which a later plain assignment sets a variable
// the analyzer cannot see by name; and a target named at run time.
func varWriter(sc *SimpleCommand) *verdict {
	name := baseName(sc)
	if name == "unset" {
		// Unsetting a variable restores its default, but PATH has none:
		// bash and dash then look for a program in the working directory
		// (an H6 hunt: unset PATH; ls ran a workspace script named ls).
		// PATH[0] is PATH. A word not a literal is builtin-args'.
		for _, w := range sc.Words[1:] {
			if id, _, _ := strings.Cut(w.Text, "["); w.Literal && id == "PATH" {
				return &verdict{action: Approve, rule: "structural.exec-env", reason: "unset PATH makes the shell look for programs in the working directory"}
			}
		}
		return nil
	}
	if !varWriters()[name] || name == "let" {
		return nil
	}
	for i, w := range sc.Words[1:] {
		t := w.Text
		if name == "printf" && !strings.HasPrefix(t, "-v") && (i == 0 || sc.Words[i].Text != "-v") {
			continue // printf writes only its -v variable; its format and arguments are text
		}
		if (name == "declare" || name == "typeset" || name == "local") && w.Literal && len(t) > 1 && t[0] == '-' && strings.ContainsRune(t[1:], 'n') {
			return &verdict{action: Approve, rule: "structural.exec-env", reason: name + " " + quotedWord(t) + " makes a nameref: an assignment through it sets a variable the analyzer does not see by name"}
		}
		// printf's -v NAME, and wait's -p NAME, -np NAME, -fp NAME: an
		// option cluster whose last letter takes the next word.
		prev := ""
		if i > 0 && sc.Words[i].Literal {
			prev = sc.Words[i].Text
		}
		named := name == "read" || name == "mapfile" || name == "readarray" || name == "getopts" ||
			name == "printf" && (strings.HasPrefix(t, "-v") || prev == "-v") ||
			name == "wait" && (strings.HasPrefix(t, "-p") || len(prev) > 1 && prev[0] == '-' && strings.HasSuffix(prev, "p") ||
				len(t) > 1 && t[0] == '-' && strings.Contains(t, "p"))
		if !w.Literal && named && (!strings.HasPrefix(t, "-") || len(t) > 2) {
			return &verdict{action: Approve, rule: "structural.exec-env", reason: name + " sets a variable named only at run time (" + quotedWord(t) + ")"}
		}
		for _, cand := range []string{t, strings.TrimPrefix(t, "-v")} {
			id := cand
			if i := strings.IndexFunc(cand, func(r rune) bool {
				return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
			}); i >= 0 {
				id = cand[:i]
			}
			val, set := strings.CutPrefix(cand[len(id):], "=")
			if set && w.Literal && envValueOK(id, val) {
				continue
			}
			if id != "" && isExecEnv(id) && !slices.Contains(evalVars, id) { // evalVars: shellEval's
				return &verdict{action: Approve, rule: "structural.exec-env", reason: name + " sets or exports " + id + ", which changes which code programs run"}
			}
		}
	}
	return nil
}

// authority refuses a command that names one of the launcher's own paths
// anywhere: its words, its wrappers', its assignments, its redirections.
func authority(sc *SimpleCommand, o Options) *verdict {
	if len(o.Authority) == 0 {
		return nil
	}
	check := func(w Word) *verdict {
		for _, tok := range slices.Concat(pathTokens(w.Text), attachedAll(pathTokens(w.Text))) {
			for _, a := range o.Authority {
				if a = path.Clean(a); a == "/" || a == "." {
					continue
				}
				if beneath(cleanTok(tok), a) || o.Workspace != "" && beneath(path.Join(path.Clean(o.Workspace), tok), a) && !path.IsAbs(tok) {
					return &verdict{action: Refuse, rule: "structural.authority", reason: quotedWord(w.Text) + " names " + a + ", which belongs to the launcher"}
				}
			}
		}
		return nil
	}
	var all []Word
	all = append(all, sc.Words...)
	for _, l := range sc.Wrappers {
		all = append(all, l.Words...)
	}
	all = append(all, sc.GitOptions...)
	for _, a := range sc.Assigns {
		all = append(all, a.Value)
	}
	for _, r := range sc.Redirects {
		all = append(all, r.Target)
	}
	for _, w := range all {
		if v := check(w); v != nil {
			return v
		}
	}
	return nil
}

func cleanTok(t string) string {
	if path.IsAbs(t) {
		return path.Clean(t)
	}
	return t
}

func beneath(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// pathTokens splits a word's text into the path-like strings in it: a
// word such as --output=.git/hooks/x or open('.git/config') holds one.
func pathTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/~+@%-", r))
	})
}

func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// classifyWord finds a protected path among the path-like strings of a
// word, or among what it may expand to (classifyPattern): the rule that
// protects it and a description, or "".
func classifyWord(w Word, f lineFacts, o Options) (rule, what string) {
	if rule, what := classifyPattern(w, f.dotglob, o); rule != "" {
		return rule, what
	}
	for _, tok := range pathTokens(w.Text) {
		for _, p := range attached(tok) {
			if rule, what := classify(p, o); rule != "" {
				return rule, what
			}
		}
	}
	return "", ""
}

// attachedAll is what attached gives for each token but the tokens.
func attachedAll(toks []string) []string {
	var out []string
	for _, t := range toks {
		out = append(out, attached(t)[1:]...)
	}
	return out
}

// attached is tok and, when tok is a group of short options (a dash,
// then letters or digits), what follows each letter of it: the value
// an option may take attached (a twelfth hunt: gcc
// -o.git/hooks/pre-commit x.c wrote a hook that git commit ran; 7z x
// -o.git/hooks).
func attached(tok string) []string {
	out := []string{tok}
	if len(tok) < 3 || tok[0] != '-' || tok[1] == '-' {
		return out
	}
	for k := 2; k < len(tok); k++ {
		c := tok[k-1]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			break
		}
		out = append(out, tok[k:])
	}
	return out
}

func classify(p string, o Options) (rule, what string) {
	cs := components(p)
	for i, c := range cs {
		for _, n := range protectedNames() {
			if c == n {
				return "structural.protected-path", "the protected path " + n
			}
		}
		for _, tc := range toolConfigs {
			// A path that ends where one of two names begins (gradle, of
			// gradle/wrapper) is a folder a command may put it in under
			// its source's name (a seventeenth hunt: cp -r x/wrapper
			// gradle/), or rename a folder holding it to.
			if len(cs)-i >= len(tc) && slices.Equal(cs[i:i+len(tc)], tc) || len(cs)-i < len(tc) && slices.Equal(cs[i:], tc[:len(cs)-i]) {
				return "structural.protected-path", "the protected path " + strings.Join(tc, "/") + ", a tool's configuration"
			}
		}
		if lefthookConfig(c) {
			return "structural.protected-path", "the protected path " + c + ", lefthook's configuration"
		}
		if c == ".config" && i+1 < len(cs) && cs[i+1] == "git" {
			return "structural.git-config", "git's configuration (.config/git)"
		}
		if c != ".git" {
			continue
		}
		if i == len(cs)-1 {
			return "structural.git-config", "the repository's .git"
		}
		for _, d := range cs[i+1:] {
			switch {
			case d == "hooks":
				return "structural.git-hooks", "the repository's hooks (.git/hooks)"
			case slices.Contains(gitProtected(), d):
				return "structural.git-config", "the repository's configuration (.git/" + d + ")"
			}
		}
		// The rest of .git is state git resumes from: a rebase's todo
		// list runs its exec lines on git rebase --continue (an eighth
		// hunt: a todo written into .git/rebase-merge ran rm -rf src),
		// and the sequencer's, am's and merge's likewise. A lock file
		// too: git renames a lock it holds onto the file it locks (git
		// commit -a holds index.lock while the person writes the
		// message), so one written meanwhile becomes .git/index. Only
		// removing one, or locking it, is not a write (gitLock).
		return rGitState, "the repository's state (.git/" + strings.Join(cs[i+1:], "/") + "), which git resumes from"
	}
	rel := p
	if path.IsAbs(p) {
		if o.Workspace == "" {
			return "", ""
		}
		ws := path.Clean(o.Workspace)
		if !beneath(path.Clean(p), ws) {
			return "", ""
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(path.Clean(p), ws), "/")
		cs = components(rel)
	}
	for _, e := range o.Protected {
		ec := components(path.Clean(e))
		if len(ec) == 0 || len(cs) < len(ec) {
			continue
		}
		match := true
		for k := range ec {
			if cs[k] != ec[k] {
				match = false
				break
			}
		}
		if match {
			return "structural.protected-path", "the protected path " + e
		}
	}
	return "", ""
}

// workerReadOnly reports whether a command's worker certainly has the
// path w names read-only, so that a redirection to it fails (EROFS), or
// makes it only to have it moved aside when the command ends (SD-17),
// whatever the person answers: a literal path in the workspace (rel,
// relative to it; relative: w was relative to the command's folder)
// under one of the names fs protects and the launcher mounts for every
// command (fs.ProtectedIn): a built-in name at any depth, git's hooks,
// config, config.worktree or commondir beneath a .git (not in its
// objects, which the walk passes over), .config/git, or one of
// Options.Protected. The analyzer's own names (toolConfigs, lefthook's)
// are not mounted read-only: a write there does what the person
// approves. A line that may make a link (through which the write would
// land elsewhere) or a path with ".." is not taken to be read-only.
func workerReadOnly(w Word, f lineFacts, o Options) (rel string, relative, ro bool) {
	p := w.Text
	if !w.Literal || f.links || p == "" || strings.HasPrefix(p, "~") {
		return "", false, false
	}
	if path.IsAbs(p) {
		ws := path.Clean(o.Workspace)
		if o.Workspace == "" || ws == "/" || !beneath(path.Clean(p), ws) {
			return "", false, false
		}
		p = strings.TrimPrefix(strings.TrimPrefix(path.Clean(p), ws), "/")
	} else {
		relative = true
	}
	cs := components(p)
	if slices.Contains(cs, "..") {
		return "", false, false
	}
	rel = strings.Join(cs, "/")
	for i, c := range cs {
		if slices.Contains(protectedNames(), c) || c == ".config" && i+1 < len(cs) && cs[i+1] == "git" {
			return rel, relative, true
		}
		if c != ".git" {
			continue
		}
		for _, d := range cs[i+1:] {
			if d == "objects" {
				break
			}
			if slices.Contains(gitProtected(), d) {
				return rel, relative, true
			}
		}
	}
	for _, e := range o.Protected {
		if ec := components(path.Clean(e)); len(ec) > 0 && len(cs) >= len(ec) && slices.Equal(cs[:len(ec)], ec) {
			return rel, relative, true
		}
	}
	return "", false, false
}

// projectRunners are the programs that run a command by a name they
// look up in the project first (node_modules/.bin, a virtual
// environment's bin, a Gemfile's gems, a version manager's versions).
var projectRunners = sync.OnceValue(func() map[string]bool {
	return set("npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "bun", "bunx", "corepack", "uv", "uvx", "poetry", "pipenv", "pipx",
		"pdm", "hatch", "bundle", "conda", "mamba", "micromamba", "volta", "pyenv", "rbenv", "nodenv", "goenv", "plenv", "jenv",
		"asdf", "rustup")
})

// writes reports whether a redirection writes to a file.
func writes(r Redirect) bool {
	switch r.Op {
	case ">", ">>", ">|", "<>", "&>", "&>>":
		return true
	case ">&":
		t := r.Target.Text
		return !(t == "-" || strings.Trim(t, "0123456789") == "" || strings.Trim(strings.TrimSuffix(t, "-"), "0123456789") == "")
	}
	return false
}

// isReadOnly reports whether a command only reads the paths it is given.
func isReadOnly(sc *SimpleCommand) bool {
	name := baseName(sc)
	for _, l := range sc.Wrappers {
		// A package runner runs the project's program of a name before
		// the system's (a seventeenth hunt: npx cat .git/hooks/x ran
		// node_modules/.bin/cat, which wrote the hook).
		if n, _, _ := strings.Cut(l.Name, " "); projectRunners()[n] {
			return false
		}
	}
	switch {
	case name == "xxd":
		return xxdOperands(sc.Words) < 2
	case name == "tree":
		// tree -o FILE writes its listing there, -o in any group of
		// short options (tree -ao .git/config).
		for _, w := range sc.Words[1:] {
			if !w.Literal || len(w.Text) > 1 && w.Text[0] == '-' && w.Text[1] != '-' && strings.ContainsRune(w.Text, 'o') {
				return false
			}
		}
		return true
	case name == "less" || name == "pager" || name == "more":
		return !lessLogs(sc.Words)
	case readOnly()[name]:
		return true
	case name == "git":
		if len(sc.Words) < 2 || !gitReadOnly()[sc.Words[1].Text] {
			return false
		}
		// git diff, log, show, blame and the others that take diff
		// options write their output to --output's file, which they
		// empty first (a thirteenth hunt: git log -1 --format=…
		// --output=.git/config wrote a core.fsmonitor that git status
		// ran; --output=.git/refs/heads/main moved the branch).
		for _, w := range sc.Words[2:] {
			if w.Text == "--output" || strings.HasPrefix(w.Text, "--output=") {
				return false
			}
		}
		return true
	case name == "find":
		for _, w := range sc.Words {
			switch w.Text {
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		}
		return true
	}
	return false
}

// xxdOperands counts the operands of an xxd command line: xxd INFILE
// OUTFILE writes OUTFILE (a thirteenth hunt: xxd -r cfg.hex .git/config
// wrote a core.fsmonitor that git status ran). The values of -c, -g,
// -l, -o, -s and -n (and their long spellings, -cols and the like) are
// not operands; "-" is one (standard input), every word after "--"
// too, and so is a word that is not a literal.
func xxdOperands(ws []Word) int {
	n := 0
	for k := 1; k < len(ws); k++ {
		w := ws[k]
		switch t := w.Text; {
		case !w.Literal || t == "-" || !strings.HasPrefix(t, "-"):
			n++
		case t == "--":
			return n + len(ws) - k - 1
		case xxdValue()[t]:
			k++
		}
	}
	return n
}

var xxdValue = sync.OnceValue(func() map[string]bool {
	return set("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-n", "-name")
})

// codeWords are the indexes of words whose content was analysed as
// commands of their own (a bash -c string, find's -exec commands): those
// commands are decided on their own.
func codeWords(sc *SimpleCommand) map[int]bool {
	m := map[int]bool{}
	for i := sc.code[0]; i < sc.code[1] && i < len(sc.Words); i++ {
		m[i] = true
	}
	if baseName(sc) == "find" {
		acts, _ := findActions(sc.Words)
		for _, a := range acts {
			for i := a.from; i < a.to; i++ {
				m[i] = true
			}
		}
	}
	return m
}

var symbolicMode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ugoa]*([-+=][rwxXstugo]*)+$`) })

// setuidMode reports whether a chmod mode sets the set-user-ID or
// set-group-ID bit.
func setuidMode(m string) bool {
	if m == "" {
		return false
	}
	if strings.Trim(m, "01234567") == "" {
		v, err := strconv.ParseUint(m, 8, 32)
		return err == nil && v&0o6000 != 0
	}
	for _, cl := range strings.Split(m, ",") {
		if !symbolicMode().MatchString(cl) {
			return false
		}
		op := byte(0)
		for i := 0; i < len(cl); i++ {
			switch c := cl[i]; c {
			case '+', '-', '=':
				op = c
			case 's':
				if op == '+' || op == '=' {
					return true
				}
			}
		}
	}
	return false
}

// gitStructural protects git's hooks and the configuration that makes
// git run programs.
func gitStructural(sc *SimpleCommand) *verdict {
	if baseName(sc) == "scalar" {
		// scalar -c KEY=VALUE sets configuration for the git it runs,
		// as git -c does (a nineteenth hunt).
		for k := 1; k+1 < len(sc.Words) && sc.Words[k].isOpt(); k++ {
			if t := sc.Words[k].Text; t == "-c" {
				k++
				if v := gitKey(sc.Words[k], "scalar -c"); v != nil {
					return v
				}
			} else if strings.HasPrefix(t, "-c") {
				w := sc.Words[k]
				w.Text, w.lead = t[2:], strings.TrimPrefix(w.lead, "-c")
				if v := gitKey(w, "scalar -c"); v != nil {
					return v
				}
			} else if t == "-C" {
				k++
			}
		}
	}
	if name := baseName(sc); name == "git-receive-pack" || name == "git-filter-repo" {
		// Their own programs on PATH, as git receive-pack and git
		// filter-repo (gitRefs).
		return gitRefs(append([]Word{{Text: "git", Literal: true}, {Text: strings.TrimPrefix(name, "git-"), Literal: true}}, sc.Words[1:]...))
	}
	if baseName(sc) != "git" {
		return nil
	}
	g := sc.GitOptions
	for k := 0; k < len(g); k++ {
		t := g[k].Text
		switch {
		case t == "-c" && k+1 < len(g):
			k++
			if v := gitKey(g[k], "git -c"); v != nil {
				return v
			}
		case t == "--config-env" && k+1 < len(g):
			k++
			if v := gitKey(g[k], "git --config-env"); v != nil {
				return v
			}
		case strings.HasPrefix(t, "--config-env="):
			w := g[k]
			w.Text, w.lead = strings.TrimPrefix(t, "--config-env="), strings.TrimPrefix(w.lead, "--config-env=")
			if v := gitKey(w, "git --config-env"); v != nil {
				return v
			}
		case strings.HasPrefix(t, "--exec-path="):
			return &verdict{action: Approve, rule: "structural.git-config", reason: "git --exec-path= makes git run its programs from another directory"}
		case t == "--git-dir" || t == "--work-tree" || strings.HasPrefix(t, "--git-dir=") || strings.HasPrefix(t, "--work-tree="):
			// As GIT_DIR and GIT_WORK_TREE: another repository's
			// configuration, whose core.fsmonitor ran a command (an
			// eighth hunt: a bare repository made on the line). The
			// workspace's own (.git, .) is what git finds anyway.
			name, val, eq := strings.Cut(t, "=")
			if !eq && k+1 < len(g) {
				k++
				val, eq = g[k].Text, g[k].Literal
			}
			if !eq || !(name == "--git-dir" && val == ".git" || name == "--work-tree" && val == ".") {
				return &verdict{action: Approve, rule: "structural.git-config", reason: "git " + name + " " + quotedWord(val) + " makes git read another repository, whose configuration may run programs"}
			}
		case t == "-C" && k+1 < len(g):
			k++
			if why := gitDirElsewhere(g[k], sc.line); why != "" {
				return &verdict{action: Approve, rule: "structural.git-config", reason: "git -C " + quotedWord(g[k].Text) + " " + why}
			}
		}
	}
	if len(sc.Words) < 2 {
		return nil
	}
	ws := sc.Words
	sub := ws[1].Text
	switch {
	case sub == "for-each-repo":
		// It runs a git command line of its own in each repository a
		// key lists, which is not walked (a hunt: for-each-repo
		// --config=x.r clean -fdx).
		return &verdict{action: Approve, rule: "structural.git-config", reason: "git for-each-repo runs a git command in every repository a configuration key lists"}
	case sub == "stash" && len(ws) > 2 && (ws[2].Text == "drop" || ws[2].Text == "clear"):
		return &verdict{action: Approve, rule: "structural.git-stash", reason: "git stash " + ws[2].Text + " throws away stashed changes, which no backup of the workspace holds"}
	}
	if v := gitRefs(ws); v != nil {
		return v
	}
	if t := gitResumes(ws); t != "" {
		return &verdict{action: Approve, rule: rGitState, reason: "git " + sub + " " + t + " goes on from the state in .git, which a command may have written (a rebase's todo list runs exec lines)"}
	}
	// A subcommand's long option may be written as any prefix git finds
	// unambiguous (--upload-pa, --templ, --conf): min is the shortest
	// prefix read as the option here.
	is := func(t, full string, min int) (val string, attached, ok bool) {
		name, val, attached := strings.Cut(t, "=")
		return val, attached, len(name) >= min && strings.HasPrefix(full, name)
	}
	for k := 2; k < len(ws); k++ {
		t := ws[k].Text
		_, _, upload := is(t, "--upload-pack", len("--upl"))
		_, _, receive := is(t, "--receive-pack", len("--rece"))
		_, _, exec := is(t, "--exec", len("--exe"))
		_, _, template := is(t, "--template", len("--te"))
		cval, cattached, config := is(t, "--config", len("--con"))
		if t == "--" || t == "--end-of-options" {
			break
		}
		// --exec names the program to run on the other side for any
		// subcommand but rebase's, whose --exec is walked (git ls-remote
		// and fetch-pack take it too: a hunt); clone's and ls-remote's
		// -u is --upload-pack, in a group of short options as well (-qu).
		uploadShort := (sub == "clone" || sub == "ls-remote") && shortLetter(t, 'u', "objbc")
		// instaweb's --httpd (-d) and --browser (-b) and daemon's
		// --access-hook are run as commands (a hunt: git instaweb
		// --httpd='rm -rf src lighttpd').
		_, _, httpd := is(t, "--httpd", len("--h"))
		_, _, browser := is(t, "--browser", len("--b"))
		_, _, hook := is(t, "--access-hook", len("--a"))
		// send-email runs --to-cmd, --cc-cmd, --header-cmd, --sendmail-cmd,
		// and a --smtp-server that is a path (a hunt).
		name, _, _ := strings.Cut(t, "=")
		mail := sub == "send-email" && strings.HasPrefix(name, "--") && len(name) > 3 &&
			(strings.HasSuffix(name, "-cmd") || strings.HasPrefix("--to-cmd", name) || strings.HasPrefix("--cc-cmd", name) ||
				strings.HasPrefix("--header-cmd", name) || strings.HasPrefix("--sendmail-cmd", name) || strings.HasPrefix("--smtp-server", name))
		runs := sub == "instaweb" && (httpd || browser || shortLetter(t, 'd', "pm") || shortLetter(t, 'b', "pm")) || sub == "daemon" && hook || mail
		switch {
		case upload || receive || exec && sub != "rebase" || uploadShort || runs:
			return &verdict{action: Approve, rule: "structural.git-config", reason: "git " + sub + " " + quotedWord(t) + " runs a program named in an option"}
		case (sub == "clone" || sub == "init") && template:
			return &verdict{action: Approve, rule: "structural.git-hooks", reason: "git " + sub + " --template copies hooks from a template directory"}
		case sub == "clone" && (t == "-c" || config && !cattached) && k+1 < len(ws):
			k++
			if v := gitKey(ws[k], "git clone "+t); v != nil {
				return v
			}
		case sub == "clone" && config && cattached:
			w := ws[k]
			w.Text, w.lead = cval, strings.TrimPrefix(w.lead, t[:len(t)-len(cval)])
			if v := gitKey(w, "git clone --config"); v != nil {
				return v
			}
		}
	}
	if sub == "config" {
		return gitConfig(ws)
	}
	return nil
}

// rGitState: git's state under .git, and the commands that resume from it.
const rGitState = "structural.git-state"

// gitResumes is the option with which git rebase, am, cherry-pick,
// revert or merge goes on from the state under .git (--continue,
// --edit-todo, am's --resolved and -r), or "": a todo list written
// there runs its exec lines (an eighth hunt). --abort and --skip are
// gitOverwrite's.
func gitResumes(ws []Word) string {
	switch ws[1].Text {
	case "rebase", "am", "cherry-pick", "revert", "merge":
	default:
		return ""
	}
	for _, w := range ws[2:] {
		t := w.Text
		if t == "--" {
			break
		}
		if longOpt(t, "--continue", 3) || longOpt(t, "--edit-todo", 3) || ws[1].Text == "am" && (longOpt(t, "--resolved", 4) || shortLetter(t, 'r', "CpS")) {
			return t
		}
	}
	return ""
}

// gitRefs finds git commands that throw away refs, reflogs or the
// objects only they kept, which no backup of the workspace holds (an
// eighth hunt: git update-ref -d refs/stash dropped the stash):
// update-ref -d or --stdin, or of refs/stash; reflog delete and
// expire; gc --prune, prune; repack -d, branch -D, tag -d.
func gitRefs(ws []Word) *verdict {
	sub := ws[1].Text
	found := func(what string) *verdict {
		return &verdict{action: Approve, rule: "structural.git-refs", reason: "git " + sub + " " + what + " throws away refs or history, which no backup of the workspace holds"}
	}
	switch sub {
	case "update-ref":
		for _, w := range ws[2:] {
			if t := w.Text; t == "-d" || t == "--stdin" || t == "refs/stash" || t == "stash" || !w.Literal {
				return found(quotedWord(t))
			}
		}
	case "reflog":
		if len(ws) > 2 && (ws[2].Text == "delete" || ws[2].Text == "expire") {
			return found(ws[2].Text)
		}
	case "gc":
		for _, w := range ws[2:] {
			if name, _, _ := strings.Cut(w.Text, "="); longOpt(name, "--prune", 4) {
				return found(quotedWord(w.Text))
			}
		}
	case "prune":
		return found("")
	case "receive-pack":
		// The receiving end of a push updates and deletes the refs its
		// standard input names, reflogs and all (a nineteenth hunt: a
		// pkt-line of old-id, zeros and refs/heads/x fed to git
		// receive-pack . deleted branch x), as git update-ref --stdin.
		return found("")
	case "filter-repo":
		// It rewrites every branch, then expires every reflog and runs
		// gc --prune=now, unless it only analyses or does a dry run.
		if !slices.ContainsFunc(ws[2:], func(w Word) bool { return w.Text == "--analyze" || w.Text == "--dry-run" }) {
			return found("")
		}
	case "repack":
		// -d deletes the packs it replaced, and the unreachable objects
		// only they held (a ninth hunt).
		if t, ok := gitOpt(ws, func(t string) bool { return shortLetter(t, 'd', "") }); ok {
			return found(quotedWord(t))
		}
	case "branch":
		// -D (--delete --force) drops a branch whose commits nothing else
		// holds, and its reflog (a ninth hunt: git branch -D evil, then
		// gc); -M and -C (or -m, -c with --force) overwrite a branch.
		var del, force bool
		big, _ := gitOpt(ws, func(t string) bool {
			name, _, _ := strings.Cut(t, "=")
			del = del || shortLetter(t, 'd', "u") || shortLetter(t, 'm', "u") || shortLetter(t, 'c', "u") ||
				longOpt(name, "--delete", 4) || longOpt(name, "--move", 3) || longOpt(name, "--copy", 3)
			force = force || shortLetter(t, 'f', "u") || longOpt(name, "--force", 3)
			return shortLetter(t, 'D', "u") || shortLetter(t, 'M', "u") || shortLetter(t, 'C', "u")
		})
		if big != "" || del && force {
			return found("with " + quotedWord(cmp.Or(big, "--force")))
		}
	case "tag":
		if t, ok := gitOpt(ws, func(t string) bool { return shortLetter(t, 'd', "mFu") || longOpt(t, "--delete", 4) }); ok {
			return found(quotedWord(t))
		}
	case "fetch", "pull":
		// --prune (-p) and --prune-tags (-P) delete the local refs a
		// refspec maps to that the remote lacks, and their reflogs: git
		// fetch --prune ./o '+refs/heads/*:refs/heads/*' took every
		// branch, then gc their commits (a tenth hunt).
		if t, ok := gitOpt(ws, func(t string) bool {
			name, _, _ := strings.Cut(t, "=")
			return longOpt(name, "--prune-tags", 4) || shortLetter(t, 'p', "jsXoS") || shortLetter(t, 'P', "jsXoS")
		}); ok {
			return found(quotedWord(t))
		}
		if t := fetchRefspec(ws); t != "" {
			return found("into " + quotedWord(t))
		}
	case "remote":
		// prune and update --prune do as fetch --prune; add --mirror
		// maps the remote's refs over all of the local ones.
		if len(ws) > 2 {
			switch ws[2].Text {
			case "prune":
				return found("prune")
			case "update", "add":
				if t, ok := gitOpt(ws[1:], func(t string) bool {
					name, _, _ := strings.Cut(t, "=")
					return ws[2].Text == "update" && (longOpt(name, "--prune", 4) || shortLetter(t, 'p', "")) ||
						ws[2].Text == "add" && longOpt(name, "--mirror", 3)
				}); ok {
					return found(ws[2].Text + " " + quotedWord(t))
				}
			}
		}
	}
	return nil
}

// fetchValued are git fetch's and pull's options that take the next
// word as their value.
var fetchValued = sync.OnceValue(func() map[string]bool {
	return set("--depth", "--deepen", "--shallow-since", "--shallow-exclude", "--refmap", "-j", "--jobs", "-o",
		"--server-option", "--negotiation-tip", "--filter", "--upload-pack", "-s", "--strategy", "-X", "--strategy-option")
})

// fetchRefspec is the first refspec of git fetch or pull (or --refmap's
// value) that writes a local ref other than a remote-tracking one, or
// "": +refs/heads/*:refs/heads/* forces every branch to the remote's (a
// tenth hunt), x:main a branch (git takes a name as one), x:refs/stash
// the stash. The first word that is not an option is the repository,
// whose URL may hold a colon.
func fetchRefspec(ws []Word) string {
	writes := func(spec string) bool {
		i := strings.LastIndexByte(spec, ':')
		return i >= 0 && i+1 < len(spec) && !strings.HasPrefix(spec[i+1:], "refs/remotes/")
	}
	repo, opts := false, true
	for k := 2; k < len(ws); k++ {
		t := ws[k].Text
		switch {
		case opts && (t == "--" || t == "--end-of-options"):
			opts = false
		case opts && strings.HasPrefix(t, "--refmap="):
			if writes(strings.TrimPrefix(t, "--refmap=")) {
				return t
			}
		case opts && t == "--refmap" && k+1 < len(ws):
			k++
			if writes(ws[k].Text) {
				return t + " " + ws[k].Text
			}
		case opts && fetchValued()[t]:
			k++
		case opts && strings.HasPrefix(t, "-"):
		case !repo:
			repo = true
		case writes(t):
			return t
		}
	}
	return ""
}

// gitOpt is the first of a git subcommand's options (before "--") for
// which is holds, a word that is not a literal counting as one.
func gitOpt(ws []Word, is func(t string) bool) (string, bool) {
	for _, w := range ws[2:] {
		t := w.Text
		if t == "--" || t == "--end-of-options" {
			break
		}
		if strings.HasPrefix(t, "-") && is(t) || !w.Literal && w.mayBeOption() {
			return t, true
		}
	}
	return "", false
}

// gitDirElsewhere says why git -C DIR may not be the workspace's own
// repository, or "": DIR not a literal ("$PWD" aside), absolute,
// climbing (..) or a home (~), or any DIR on a line that makes a
// repository (git init --bare x; a config written in it; git -C x).
func gitDirElsewhere(w Word, f lineFacts) string {
	t := w.Text
	switch {
	case !w.Literal && (t == "$PWD" || t == "${PWD}"):
		return ""
	case !w.Literal:
		return "is known only at run time: git reads that repository's configuration, which may run programs"
	case strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || slices.Contains(strings.Split(t, "/"), ".."):
		return "is out of the workspace, or may be: git reads that repository's configuration, which may run programs"
	case f.repos:
		return "works in a directory on a line that makes a repository, whose configuration the line may write"
	}
	return ""
}

// gitConfig looks at git config: a write of a key that makes git run a
// program, or an edit of the whole file. The values of -f, --file,
// --blob, -t, --type and the like (any prefix git takes: --ty) are not
// the key (a hunt: git config -t path alias.x CMD); after "--" every
// word is the key or a value; and every word that is neither an option
// nor an option's value is looked at as a key.
func gitConfig(ws []Word) *verdict {
	read, write, opts := false, false, true
	var pos []Word
	for k := 2; k < len(ws); k++ {
		t := ws[k].Text
		name, _, eq := strings.Cut(t, "=")
		switch {
		case !opts:
			pos = append(pos, ws[k])
		case t == "--" || t == "--end-of-options":
			opts = false
		case k == 2 && (t == "get" || t == "list"):
			read = true
		case k == 2 && t == "rename-section", longOpt(name, "--rename-section", len("--re")):
			// Every key of the section moves into the one named, which
			// may be alias, core, include or pager: a key written
			// harmless (foo.x = !rm -rf src) becomes one that runs (a
			// fourteenth hunt: git config --rename-section foo alias,
			// then git x). Any prefix git takes (--rename-se).
			return &verdict{action: Approve, rule: "structural.git-config", reason: "git config " + quotedWord(t) + " moves a section's keys into another section, which may be one whose keys make git run a program"}
		case k == 2 && (t == "set" || t == "unset" || t == "remove-section"):
			write = true
		case k == 2 && t == "edit", t == "-e", longOpt(name, "--edit", 2):
			return &verdict{action: Approve, rule: "structural.git-config", reason: "git config --edit opens the configuration in an editor"}
		case t == "--get" || t == "--get-all" || t == "--get-regexp" || t == "--get-urlmatch" || t == "-l" || t == "--list" ||
			t == "--get-color" || t == "--get-colorbool":
			read = true
		case t == "--unset" || t == "--unset-all" || t == "--add" || t == "--replace-all" || t == "--remove-section":
			write = true
		case strings.HasPrefix(t, "--") && !eq && gitConfigValued(name):
			k++
		case len(t) == 2 && (t == "-f" || t == "-t"):
			k++
		case strings.HasPrefix(t, "-") && ws[k].Literal:
		default:
			pos = append(pos, ws[k])
		}
	}
	if read || len(pos) == 0 || !write && len(pos) < 2 {
		return nil
	}
	if !pos[0].Literal {
		return &verdict{action: Approve, rule: "structural.git-config", reason: "git config writes a key that is not a literal"}
	}
	for _, key := range pos {
		if rule, why := gitExecKey(key.Text); rule != "" && key.Literal {
			return &verdict{action: Approve, rule: rule, reason: "git config " + quotedWord(key.Text) + " " + why}
		}
	}
	return nil
}

// gitConfigValued reports a long option of git config's written as a
// prefix (longer than "--") of one that takes a value.
func gitConfigValued(name string) bool {
	for _, o := range []string{"--file", "--blob", "--type", "--default", "--comment", "--value", "--url"} {
		if longOpt(name, o, 2) {
			return true
		}
	}
	return false
}

// shortLetter reports a group of short options (-qu) holding letter c
// before any letter of valued, which takes the rest as its value.
func shortLetter(t string, c byte, valued string) bool {
	if len(t) < 2 || t[0] != '-' || t[1] == '-' {
		return false
	}
	for i := 1; i < len(t); i++ {
		switch {
		case t[i] == c:
			return true
		case strings.IndexByte(valued, t[i]) >= 0:
			return false
		}
	}
	return false
}

// gitKey checks a KEY=VALUE setting given on git's command line.
func gitKey(w Word, how string) *verdict {
	key, _, ok := strings.Cut(w.lead, "=")
	if !ok && !w.Literal {
		return &verdict{action: Approve, rule: "structural.git-config", reason: how + " is given a setting that is not a literal"}
	}
	if w.Literal {
		key, _, _ = strings.Cut(w.Text, "=")
	}
	if rule, why := gitExecKey(key); rule != "" {
		return &verdict{action: Approve, rule: rule, reason: how + " " + key + " " + why}
	}
	return nil
}

var gitExecExact = sync.OnceValue(func() map[string]bool {
	return set(
		"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass", "core.gitproxy",
		"core.alternaterefscommand", "sequence.editor", "diff.external", "credential.helper", "gpg.program",
		"uploadpack.packobjectshook", "include.path", "web.browser", "sendemail.smtpserver", "sendemail.tocmd",
		"sendemail.cccmd", "sendemail.sendmailcmd", "protocol.allow",
		// gpg.ssh.defaultKeyCommand ran a command at commit -S (a re-test);
		// the others name commands too.
		"gpg.ssh.defaultkeycommand", "gpg.ssh.program", "interactive.difffilter", "imap.tunnel",
		"instaweb.httpd", "instaweb.browser", "instaweb.modulepath",
		// A stash and a reset --hard around a rebase, merge or pull (a hunt:
		// rebase.autoStash removed an untracked tree).
		"rebase.autostash", "merge.autostash",
		// gc asks it which objects to keep.
		"gc.recentobjectshook",
		// Where git looks: another work tree, or attributes naming filters.
		"core.worktree", "core.attributesfile",
	)
})

// gitExecKey classifies a git configuration key (case-insensitively):
// core.hooksPath and init.templateDir choose hooks; the others make git
// run a program, include other configuration, or move the work tree.
func gitExecKey(key string) (rule, why string) {
	k := strings.ToLower(key)
	switch {
	case k == "core.hookspath" || k == "init.templatedir":
		return "structural.git-hooks", "chooses the hooks git runs"
	case gitExecExact()[k],
		strings.HasPrefix(k, "alias."), strings.HasPrefix(k, "pager."), strings.HasPrefix(k, "filter."),
		strings.HasPrefix(k, "includeif."), strings.HasPrefix(k, "protocol.") && strings.HasSuffix(k, ".allow"),
		strings.HasSuffix(k, ".textconv"), strings.HasSuffix(k, ".command"), strings.HasSuffix(k, ".driver"),
		strings.HasSuffix(k, ".cmd"), strings.HasSuffix(k, ".helper"), strings.HasSuffix(k, ".program"),
		strings.HasSuffix(k, ".uploadpack"), strings.HasSuffix(k, ".receivepack"), strings.HasSuffix(k, ".sshcommand"),
		// difftool.NAME.path, mergetool.NAME.path, browser.NAME.path,
		// man.NAME.path: the program git runs.
		strings.HasSuffix(k, ".path") && k != "include.path" && !strings.HasPrefix(k, "includeif."),
		// submodule.NAME.update = !CMD runs CMD on git submodule update.
		strings.HasPrefix(k, "submodule.") && strings.HasSuffix(k, ".update"),
		// remote.NAME.vcs = V makes a fetch or push of NAME run the
		// remote helper git-remote-V, by a path from the working
		// directory when V holds a slash (a nineteenth hunt: vcs = x/y
		// ran the workspace's git-remote-x/y at git fetch origin).
		strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".vcs"),
		// send-email's identities (sendemail.NAME.sendmailCmd,
		// .smtpServer, .toCmd) and its headerCmd run commands as the
		// plain keys do.
		strings.HasPrefix(k, "sendemail.") && (strings.HasSuffix(k, "cmd") || strings.HasSuffix(k, ".smtpserver")):
		return "structural.git-config", "makes git run a program, or read other configuration"
	case strings.HasPrefix(k, "gc.") || strings.HasPrefix(k, "maintenance.") || k == "core.logallrefupdates",
		// fetch.prune and a remote's prune, fetch refspec or mirror make
		// a plain git fetch delete or overwrite local branches (a tenth
		// hunt).
		k == "fetch.prune" || k == "fetch.prunetags",
		strings.HasPrefix(k, "remote.") && (strings.HasSuffix(k, ".prune") || strings.HasSuffix(k, ".prunetags") ||
			strings.HasSuffix(k, ".fetch") || strings.HasSuffix(k, ".mirror")):
		// gc.pruneExpire=now and the like make a gc (even the automatic
		// one after a commit, with gc.auto=1) throw away what a branch
		// deleted or a reset left (a ninth hunt).
		return "structural.git-refs", "changes when git throws away refs, reflogs or unreachable commits, which no backup of the workspace holds"
	}
	return "", ""
}

// gitOverwrite: git commands that put another tree's files (a commit's,
// the index's, a stash's) over the working tree, removing what stands in
// the way: an untracked directory where the tree has a file (a re-test:
// after git fast-import made a branch with a file src, git checkout -f x
// deleted the untracked tree src; another: git checkout src, git stash,
// git checkout-index -f src, where the commit tracks a file src the
// person had replaced with a directory of work), and the person's
// uncommitted changes. The whole workspace is kept: reset --hard,
// --merge or --keep; checkout with -f or any operand (a branch and a
// path look alike; git switch takes only branches) or -p (--patch);
// checkout-index; switch -f (--discard-changes); restore to the
// working tree; stash (push, save, pop, apply, branch); read-tree -u;
// submodule deinit -f and update -f. A long option counts in any prefix git would take
// (--h is --hard: a re-test).
func gitOverwrite(ws []Word) *deletion {
	if len(ws) < 2 {
		return nil
	}
	sub := ws[1].Text
	found := func() *deletion {
		return &deletion{"git " + sub + " puts other files over the working tree's, and removes an untracked tree where it puts a file", nil}
	}
	words := ws[2:]
	opt := func(t, full string) bool { // t is full or a prefix git takes, --x at least
		name, _, _ := strings.Cut(t, "=")
		return longOpt(name, full, 2)
	}
	for _, w := range words {
		if !w.Literal && w.mayBeOption() {
			switch sub {
			case "reset", "checkout", "checkout-index", "switch", "restore", "stash", "read-tree", "submodule":
				return found()
			}
		}
	}
	switch sub {
	case "checkout-index":
		return found()
	case "restore":
		// It writes the working tree unless told only --staged (-S),
		// not --worktree (-W) nor a --source.
		staged := false
		for _, w := range words {
			t := w.Text
			if opt(t, "--worktree") || shortLetter(t, 'W', "s") || opt(t, "--source") || shortLetter(t, 's', "") {
				return found()
			}
			staged = staged || opt(t, "--staged") || shortLetter(t, 'S', "s")
		}
		if !staged {
			return found()
		}
		return nil
	case "stash":
		if len(words) == 0 {
			return found() // git stash is git stash push
		}
		switch words[0].Text {
		case "list", "show", "drop", "clear", "create", "store":
			return nil
		}
		return found()
	case "checkout":
		creating := false
		for i := 0; i < len(words); i++ {
			t := words[i].Text
			switch {
			case t == "--", opt(t, "--force"), opt(t, "--pathspec-from-file"), shortLetter(t, 'f', "bBo"):
				return found()
			case opt(t, "--patch"), shortLetter(t, 'p', "bBo"):
				// With no operand, the index's hunks over every file the
				// person says y to (an eleventh hunt: yes | git checkout
				// -p dropped every change), as restore -p does.
				return found()
			case t == "-b" || t == "-B" || opt(t, "--orphan"):
				creating = true
				i++ // the new branch's name
			case opt(t, "--conflict"), opt(t, "--pathspec-from-file"):
				if !strings.Contains(t, "=") {
					i++
				}
			case strings.HasPrefix(t, "-"):
			default:
				// An operand: a path, or a branch git switches to, which
				// git checkout cannot be told from. With -b, the start
				// point of a new branch.
				if !creating {
					return found()
				}
			}
		}
		return nil
	}
	for i, w := range words {
		t := w.Text
		// --abort and --skip put HEAD's (or the original's) files back
		// over the working tree, as reset --merge does (an eighth hunt).
		switch sub {
		case "rebase", "am", "cherry-pick", "revert":
			if opt(t, "--abort") || opt(t, "--skip") {
				return found()
			}
		case "merge":
			if opt(t, "--abort") {
				return found()
			}
		}
		switch sub {
		case "rebase", "merge", "pull":
			// --autostash: a stash, then reset --hard (a hunt: it removed
			// an untracked tree where HEAD has a file).
			if opt(t, "--autostash") {
				return found()
			}
		case "reset":
			if opt(t, "--hard") || opt(t, "--merge") || opt(t, "--keep") {
				return found()
			}
		case "switch":
			if opt(t, "--force") || opt(t, "--discard-changes") || shortLetter(t, 'f', "cC") {
				return found()
			}
		case "read-tree":
			if shortLetter(t, 'u', "") {
				return found()
			}
		case "apply":
			// -R takes the patch's changes out of the working tree's files:
			// git diff | git apply -R drops every uncommitted change (a
			// tenth hunt), as reset --hard does.
			if opt(t, "--reverse") || shortLetter(t, 'R', "pC") {
				return &deletion{"git apply " + quotedWord(t) + " takes a patch's changes out of the working tree's files, which may be the uncommitted ones", nil}
			}
		case "submodule":
			if t == "deinit" || t == "update" {
				for _, v := range words[i+1:] {
					if opt(v.Text, "--force") || shortLetter(v.Text, 'f', "") || opt(v.Text, "--all") {
						return found()
					}
				}
			}
		}
	}
	return nil
}

// mvArgs reads mv's words as GNU getopt does (options anywhere before
// "--", clusters, any prefix of a long option): the operands, in order,
// and the -t (--target-directory) directory, if any. (Which word mv
// only writes is writtenWords'.)
func mvArgs(ws []Word) (operands []Word, target *Word) {
	opts := true
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		t := w.Text
		switch {
		case !opts || t == "-" || !strings.HasPrefix(t, "-"):
			operands = append(operands, w)
		case t == "--":
			opts = false
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t, "=")
			switch {
			// --t is --target-directory already: no other long option
			// of mv starts so (an eighth hunt: mv --t=/tmp/x src).
			case longOpt(name, "--target-directory", 2):
				if eq {
					v := w
					v.Text = val
					target = &v
				} else if i+1 < len(ws) {
					i++
					target = &ws[i]
				}
			case longOpt(name, "--suffix", 3) && !eq:
				i++
			}
		default:
			for k := 1; k < len(t); k++ {
				if t[k] == 't' || t[k] == 'S' {
					var v Word
					if k+1 < len(t) {
						v = w
						v.Text = t[k+1:]
					} else if i+1 < len(ws) {
						i++
						v = ws[i]
					}
					if t[k] == 't' {
						target = &v
					}
					break
				}
			}
		}
	}
	return operands, target
}

// mvOut reports an mv that may take a tree out of the workspace: its
// destination absolute, climbing (..), a home (~) or known only at run
// time (a hunt: mv src /tmp/x, mv src .. and mv src OUT -f each took
// src out, the worker's /tmp going with it); a source so, which may be
// the workspace's own tree named from elsewhere (an eighth hunt: cd
// /tmp && mv /tmp/ws/src x); or any mv on a line that makes a link (ln
// -s /tmp/x up; mv src up/; cp -a, tar -x and the rest of makesLinks)
// or changes directory out (cd .., cd /tmp):
// the analyzer reads no file, so the line is all it knows of where a
// name leads. A link made on an earlier line is not seen.
func mvOut(sc *SimpleCommand) bool {
	if sc.line.links || sc.line.leaves {
		return true
	}
	operands, target := mvArgs(sc.Words)
	dest := target
	if dest == nil {
		if len(operands) < 2 {
			return false
		}
		dest = &operands[len(operands)-1]
		operands = operands[:len(operands)-1]
	}
	return !dest.Literal || outsidePath(*dest) || slices.ContainsFunc(operands, outsidePath)
}

// outsidePath reports a path that may be out of the workspace: absolute,
// a home (~), climbing (..), or holding an expansion ($x, $(…)); a glob
// or a brace alone stays where it is written.
func outsidePath(w Word) bool {
	t := w.Text
	return !w.Literal && strings.ContainsAny(t, "$`") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") ||
		slices.Contains(strings.Split(t, "/"), "..")
}

// ---- recursive deletion ----

type deletion struct {
	reason  string
	targets []string
}

// findTargets are the starting points of find's deletion, or none (the
// whole workspace is kept) when it follows links (-L, -H, -follow): then
// it deletes beneath where a link leads, which a backup of the starting
// points holds only as the link (a re-test: find -L src -delete removed
// a tree src/l led to, and kept nothing of it).
func findTargets(ws []Word) []string {
	for _, w := range ws[1:] {
		if t := w.Text; t == "-L" || t == "-H" || t == "-follow" || !w.Literal && w.mayBeOption() {
			return nil
		}
	}
	return findStarts(ws)
}

// gitRm: git rm -f removes tracked files from the working tree whatever
// their local changes (without -f, git removes only files as they are
// committed, which git checkout brings back), and a pathspec's glob
// reaches into subdirectories ('src/*'), so it is a recursive deletion
// unless --cached (the index only) or -n. Long options may be cut to a
// prefix; --pathspec-from-file names targets known only at run time.
func gitRm(ws []Word) *deletion {
	// The last of --dry-run/-n and --no-dry-run wins, and of --cached and
	// --no-cached (a re-test: -n --no-dry-run deleted); -f counts however
	// often it is cancelled, as --no-force is not an option of git rm.
	force, dry, cached, unknown := false, false, false, false
	targets := gitArgs(ws, func(t string) int {
		switch {
		case longOpt(t, "--no-dry-run", len("--no-")):
			dry = false
		case longOpt(t, "--no-cached", len("--no-")):
			cached = false
		case longOpt(t, "--force", 2):
			force = true
		case longOpt(t, "--cached", 2):
			cached = true
		case longOpt(t, "--dry-run", 2):
			dry = true
		case longOpt(strings.SplitN(t, "=", 2)[0], "--pathspec-from-file", len("--pathspec-f")):
			unknown = true
			if !strings.Contains(t, "=") {
				return 1 // the file is the next word
			}
		case strings.HasPrefix(t, "--"):
		default:
			force = force || strings.ContainsRune(t[1:], 'f')
			dry = dry || strings.ContainsRune(t[1:], 'n')
		}
		return 0
	})
	if !force || dry || cached {
		return nil
	}
	if unknown {
		targets = nil // the whole workspace is kept
	}
	return &deletion{"git rm -f deletes tracked files from the working tree, with their changes not yet committed", targets}
}

// gitArgs walks a git subcommand's words from the third: options (git
// permutes them anywhere before "--") go to opt, which returns how many
// of the following words are its values; the rest are returned.
func gitArgs(ws []Word, opt func(t string) int) []string {
	var rest []string
	opts := true
	for k := 2; k < len(ws); k++ {
		t := ws[k].Text
		switch {
		case !opts:
			rest = append(rest, t)
		case t == "--" || t == "--end-of-options": // git takes both as the end of its options
			opts = false
		case strings.HasPrefix(t, "-") && len(t) > 1:
			k += opt(t)
		default:
			rest = append(rest, t)
		}
	}
	return rest
}

// longOpt says whether t is a prefix of the long option name that git
// takes for it: longer than min characters.
func longOpt(t, name string, min int) bool {
	return len(t) > min && strings.HasPrefix(name, t)
}

func recursiveDelete(sc *SimpleCommand) *deletion {
	ws := sc.Words
	switch baseName(sc) {
	case "rm":
		rec, dir, many, opts := false, false, false, true
		var targets []string
		for _, w := range ws[1:] {
			switch {
			case opts && w.Literal && w.Text == "--":
				opts = false
			case opts && w.isOpt():
				if long, ok := strings.CutPrefix(w.Text, "--"); ok {
					rec = rec || long != "" && strings.HasPrefix("recursive", long)
					dir = dir || long != "" && strings.HasPrefix("dir", long)
				} else {
					rec = rec || strings.ContainsAny(w.Text, "rR")
					dir = dir || strings.ContainsRune(w.Text, 'd')
				}
			default:
				targets = append(targets, w.Text)
				many = many || !w.single
			}
		}
		if f := findLayer(sc); f != nil {
			return &deletion{"find runs rm on every file it matches", findTargets(f.Words)}
		}
		if rec {
			return &deletion{"rm -r deletes whole directory trees", targets}
		}
		// rm -d removes empty directories, and globs that list a tree
		// deepest first empty each before it goes (an eighth hunt: rm -d
		// ./src/*/* ./src/* ./src, src/{*/*,*,} deleted src).
		if dir && many {
			return &deletion{"rm -d given a glob deletes every file and directory it lists, a whole tree when it lists one deepest first", targets}
		}
	case "cmake":
		// cmake -E rm -r (-R, in any group: -rf) and remove_directory
		// delete trees as rm -r does (a fourteenth hunt: cmake -E rm -rf
		// src); a word that is not a literal where an option may stand
		// counts as -r.
		if len(ws) < 3 || ws[1].Text != "-E" {
			break
		}
		switch ws[2].Text {
		case "remove_directory":
			return &deletion{"cmake -E remove_directory deletes whole directory trees", texts(ws[3:])}
		case "rename":
			// cmake -E rename OLD NEW is mv OLD NEW (a fifteenth hunt:
			// cmake -E rename src /tmp/x took src out).
			if len(ws) == 5 && (sc.line.links || sc.line.leaves || !ws[4].Literal || outsidePath(ws[4]) || outsidePath(ws[3])) {
				return &deletion{"cmake -E rename takes a tree out of the workspace, where the worker's files are lost with it", []string{ws[3].Text}}
			}
			if len(ws) != 5 {
				return &deletion{"cmake -E rename is given other than two paths: what it moves, and where, is known only at run time", nil}
			}
		case "rm":
			rec, opts := false, true
			var targets []string
			for _, w := range ws[3:] {
				switch {
				case opts && w.Literal && w.Text == "--":
					opts = false
				case opts && w.isOpt():
					rec = rec || strings.ContainsAny(w.Text, "rR")
				case opts && !w.Literal && w.mayBeOption():
					rec = true
					targets = append(targets, w.Text)
				default:
					targets = append(targets, w.Text)
				}
			}
			if rec {
				return &deletion{"cmake -E rm -r deletes whole directory trees", targets}
			}
		}
	case "rename", "rename.ul", "prename", "file-rename", "perl-rename", "mmv":
		// They move files by a pattern or an expression, out of the
		// workspace too (an eighth hunt: rename.ul src /tmp/x src);
		// which files, and where, is not read: the whole workspace is
		// kept.
		return &deletion{baseName(sc) + " moves the files it is given, perhaps out of the workspace", nil}
	case "unlink", "rmdir", "shred", "srm", "wipe", "trash-put", "trash", "rmtrash", "gvfs-trash", "gio", "kioclient5", "mv":
		name := baseName(sc)
		// One file or empty directory at a time, but every one find
		// matches (a hunt: find src -depth -exec unlink {} \; -o -exec
		// rmdir {} \; removed the tree).
		if f := findLayer(sc); f != nil && (name != "mv" || mvOut(sc)) {
			return &deletion{"find runs " + name + " on every file it matches", findTargets(f.Words)}
		}
		var operands []string
		many := false
		for _, w := range ws[1:] {
			if !w.isOpt() {
				operands = append(operands, w.Text)
				many = many || !w.single
			}
		}
		switch {
		case name == "rmdir" && many:
			// As rm -d: rmdir ./src/* ./src deleted a tree (an eighth hunt).
			return &deletion{"rmdir given a glob deletes every directory it lists, a whole tree when it lists one deepest first", operands}
		case name == "srm" || name == "wipe":
			for _, w := range ws[1:] {
				if w.isOpt() && strings.ContainsAny(strings.TrimLeft(w.Text, "-"), "rR") {
					return &deletion{name + " -r deletes whole directory trees, past recovery", operands}
				}
			}
		case name == "trash-put" || name == "trash" || name == "rmtrash" || name == "gvfs-trash":
			return &deletion{name + " moves trees out of the workspace, to a trash the worker loses", operands}
		case name == "gio" && len(operands) > 0 && (operands[0] == "trash" || operands[0] == "remove"):
			return &deletion{"gio " + operands[0] + " deletes what it is given", operands[1:]}
		case name == "kioclient5" && len(operands) > 0 && operands[0] == "move":
			return &deletion{"kioclient5 move takes trees out of the workspace", operands[1:]}
		case name == "mv" && mvOut(sc):
			// Out of the workspace: the worker's /tmp goes with it (a
			// hunt: mv src /tmp/x lost src). Every operand but the
			// destination is backed up.
			ops, target := mvArgs(ws)
			if target == nil && len(ops) > 0 {
				ops = ops[:len(ops)-1]
			}
			var sources []string
			for _, o := range ops {
				sources = append(sources, o.Text)
			}
			return &deletion{"mv takes trees out of the workspace, where the worker's files are lost with it", sources}
		case name == "gio" && len(operands) > 0 && (operands[0] == "move" || operands[0] == "rename"):
			return &deletion{"gio " + operands[0] + " moves what it is given, perhaps out of the workspace", operands[1:]}
		}
	case "find":
		for _, w := range ws {
			if w.Literal && w.Text == "-delete" {
				return &deletion{"find -delete deletes every file it matches", findTargets(ws)}
			}
		}
	case "git":
		if len(ws) >= 2 && ws[1].Text == "rm" {
			return gitRm(ws)
		}
		if d := gitOverwrite(ws); d != nil {
			return d
		}
		// git worktree remove deletes a linked work tree, its ignored
		// files always and with --force its changes and untracked files
		// (a ninth hunt); move takes it where it is told. Where the tree
		// is, git knows: the whole workspace is kept.
		if len(ws) > 2 && ws[1].Text == "worktree" && (ws[2].Text == "remove" || ws[2].Text == "move" || !ws[2].Literal) {
			return &deletion{"git worktree " + ws[2].Text + " deletes or moves a work tree with the files git does not hold", nil}
		}
		// git sparse-checkout set, add, init and reapply take what falls
		// out of the patterns from the working tree, and with it a
		// directory left holding only ignored files (a thirteenth hunt:
		// git sparse-checkout set keep removed drop/.env, in no commit).
		// Only list, check-rules and disable (which brings files back)
		// leave the tree's files alone; where they are, git knows: the
		// whole workspace is kept.
		if len(ws) > 1 && ws[1].Text == "sparse-checkout" {
			sub := ""
			for _, w := range ws[2:] {
				if !w.Literal || !strings.HasPrefix(w.Text, "-") {
					sub = w.Text
					if !w.Literal {
						sub = "?"
					}
					break
				}
			}
			switch sub {
			case "", "list", "check-rules", "disable":
			default:
				return &deletion{"git sparse-checkout " + sub + " takes files from the working tree, directories of ignored files whole", nil}
			}
		}
		if len(ws) < 2 || ws[1].Text != "clean" {
			return nil
		}
		// Anything but a dry run deletes: git refuses without -f only
		// while clean.requireForce holds, which a -c, GIT_CONFIG_* or a
		// config file can turn off; -i reads its choice from standard
		// input. Options come anywhere before "--" (git permutes them),
		// the last of -n/--dry-run and --no-dry-run wins, and git takes
		// any unambiguous prefix of a long option.
		dry := false
		targets := gitArgs(ws, func(t string) int {
			switch {
			case longOpt(t, "--no-dry-run", len("--no-")):
				dry = false
			case longOpt(t, "--dry-run", len("--")):
				dry = true
			case longOpt(t, "--exclude", 2): // --excl and the like: the pattern is the next word
				return 1
			case t == "-e":
				return 1
			case strings.HasPrefix(t, "--"):
			default:
				for i, c := range t[1:] {
					if c == 'e' { // the pattern: the rest, or the next word
						if i == len(t)-2 {
							return 1
						}
						break
					}
					if c == 'n' {
						dry = true
					}
				}
			}
			return 0
		})
		if !dry {
			if len(targets) == 0 {
				targets = []string{gitDirOf(sc)}
			}
			return &deletion{"git clean deletes untracked files (and with -d, -x, whole directories and ignored files)", targets}
		}
	case "rsync":
		del, src := false, false
		var pos []string
		for k := 1; k < len(ws); k++ {
			w := ws[k]
			t := w.Text
			if t == "--" {
				for _, w := range ws[k+1:] {
					pos = append(pos, w.Text)
				}
				break
			}
			// -M (--remote-option) hands an option to the other rsync,
			// which in a local copy is the receiver that deletes (a
			// ninth hunt: rsync -a -M--delete e/ src/ emptied src).
			if v, n, ok := rsyncRemoteOpt(ws, k); ok {
				d, s := rsyncDeletes(v.Text)
				del, src = del || d || !v.Literal, src || s
				k += n
				continue
			}
			d, s := rsyncDeletes(t)
			del, src = del || d, src || s
			switch {
			case rsyncValue(t):
				k++ // --exclude e: e is the pattern, not the destination (a hunt)
			case w.isOpt():
			default:
				pos = append(pos, t)
			}
		}
		switch {
		case src:
			return &deletion{"rsync --remove-source-files deletes the files it copies", pos}
		case del && len(pos) > 0:
			return &deletion{"rsync --delete (or --force) deletes files in the destination that the source lacks (or replaces)", pos[len(pos)-1:]}
		case del:
			return &deletion{"rsync --delete (or --force) deletes files in the destination that the source lacks (or replaces)", nil}
		}
	case "tar":
		// --recursive-unlink empties a directory the archive replaces (a
		// re-test), --remove-files deletes what it archives (--rem is
		// its shortest prefix; an eighth hunt); where tar works (-C, -T,
		// the archive) is not read here: the whole workspace is kept.
		for _, w := range ws[1:] {
			t, _, _ := strings.Cut(w.Text, "=")
			if longOpt(t, "--recursive-unlink", 4) {
				return &deletion{"tar --recursive-unlink deletes the directories it extracts over", nil}
			}
			if longOpt(t, "--remove-files", 4) {
				return &deletion{"tar --remove-files deletes the files and trees it archives", nil}
			}
		}
	case "7z", "7za", "7zr", "7zz":
		// -sdel deletes what it archives, as zip -m (a ninth hunt); 7-Zip
		// reads its switches in any case, anywhere before "--". Its
		// inputs (wildcards, -r, @lists) are not read.
		for _, w := range ws[1:] {
			if w.Text == "--" {
				break
			}
			if strings.EqualFold(w.Text, "-sdel") || !w.Literal && w.mayBeOption() {
				return &deletion{baseName(sc) + " -sdel deletes the files and trees it archives", nil}
			}
		}
	case "go":
		return goDeletes(ws, sc.line.cacheDirs)
	case "cargo":
		return cargoCleans(sc)
	case "scalar":
		// scalar delete DIR removes the enlistment DIR whole, its
		// repository and work tree (a nineteenth hunt: scalar delete en
		// removed en); after -C the path is another folder's.
		if cs := cands(ws, 1); len(cs) > 0 && ws[cs[len(cs)-1]].Text == "delete" {
			var targets []string
			chdir := slices.ContainsFunc(ws[1:cs[len(cs)-1]], func(w Word) bool { return strings.HasPrefix(w.Text, "-C") })
			for _, w := range ws[cs[len(cs)-1]+1:] {
				if !w.isOpt() {
					if !w.Literal || outsidePath(w) || chdir {
						targets = nil
						break
					}
					targets = append(targets, w.Text)
				}
			}
			return &deletion{"scalar delete removes the enlistment it is given whole, its repository and work tree", targets}
		}
	case "systemd-tmpfiles":
		// Its configuration's lines remove trees (R, D and e with
		// --remove or --clean, L+ and the like with --create), of the
		// files it is given or the system's (a nineteenth hunt:
		// systemd-tmpfiles --remove /ws/x.conf, a line R /ws/victim,
		// removed the tree); the whole workspace is kept.
		for _, w := range ws[1:] {
			if t := w.Text; !w.Literal || t == "--create" || t == "--remove" || t == "--clean" || t == "--purge" {
				return &deletion{"systemd-tmpfiles removes whole trees that its configuration files name", nil}
			}
		}
	case "patch":
		// -R, as git apply -R: git diff | patch -p1 -R drops the
		// uncommitted changes (a tenth hunt's).
		for _, w := range ws[1:] {
			if t := w.Text; t == "--" {
				break
			} else if longOpt(t, "--reverse", 4) || !strings.HasPrefix(t, "--") && shortLetter(t, 'R', "BdDFgioprVYzx") {
				return &deletion{"patch " + quotedWord(t) + " takes a patch's changes out of the files, which may be the uncommitted ones", nil}
			}
		}
	case "zip":
		// -m (--move, in any cluster: -rmq) deletes what it zips (an
		// eighth hunt); where its inputs are (-@, -i, @file) is not read.
		// An m after -TT is its command's.
		for _, w := range ws[1:] {
			t, _, _ := strings.Cut(w.Text, "=")
			if i := strings.Index(t, "TT"); i > 0 {
				t = t[:i]
			}
			if longOpt(t, "--move", 3) || !strings.HasPrefix(t, "--") && shortLetter(t, 'm', "") {
				return &deletion{"zip -m deletes the files and trees it zips", nil}
			}
		}
	}
	return nil
}

// goDeletes: go mod vendor -o DIR and go work vendor -o DIR remove DIR
// whole before they write the vendored packages there (a twelfth hunt:
// go mod vendor -o src removed src, with no dependency to vendor); go
// clean removes from each package directory _obj/ and _test/ whole,
// *.o, *.a, *.so, the file named after the directory and one named
// after each .go file not in the package (a twelfth hunt: go clean ./...
// removed tool/_obj, lib/libfoo.so and lib/gen beside gen.go), unless
// -n, or it is given only cache flags and no package. Go's flags take
// one dash or two, a value after = or as the next word; which package
// directories, the whole workspace is kept. Plain go mod vendor
// rewrites vendor/ from the module cache, as make clean would its
// outputs: it stays automatic.
//
// go clean -modcache, -cache and -fuzzcache remove directories outside
// the workspace, but where the line names the variable that places one
// (cacheDirs: GOMODCACHE or GOPATH, GOCACHE, or GOENV's file) it may be
// the workspace's: GOMODCACHE=$PWD/src go clean -modcache removed src
// whole (a nineteenth hunt), and the whole workspace is kept.
func goDeletes(ws []Word, cacheDirs map[string]bool) *deletion {
	// go -C DIR, first: the subcommand works there (its -o too).
	chdir := false
	if len(ws) > 1 {
		if t := strings.TrimPrefix(ws[1].Text, "-"); t == "C" || t == "-C" {
			ws, chdir = append([]Word{ws[0]}, ws[min(3, len(ws)):]...), true
		} else if strings.HasPrefix(t, "C=") || strings.HasPrefix(t, "-C=") {
			ws, chdir = append([]Word{ws[0]}, ws[2:]...), true
		}
	}
	if len(ws) < 2 {
		return nil
	}
	flags := func(from int) (vals map[string]*Word, args int) {
		vals = map[string]*Word{}
		for i := from; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				return vals, args + len(ws) - i - 1
			}
			if !strings.HasPrefix(t, "-") || t == "-" {
				args++
				continue
			}
			name, val, eq := strings.Cut(strings.TrimPrefix(t[1:], "-"), "=")
			v := ws[i]
			switch {
			case eq:
				v.Text = val
			case name == "o" && i+1 < len(ws):
				i++
				v = ws[i]
			}
			vals[name] = &v
		}
		return vals, args
	}
	switch {
	case (ws[1].Text == "mod" || ws[1].Text == "work") && len(ws) > 2 && ws[2].Text == "vendor":
		vals, _ := flags(3)
		if o := vals["o"]; o != nil {
			var targets []string
			if o.Literal && !outsidePath(*o) && !chdir {
				targets = []string{o.Text}
			}
			return &deletion{"go " + ws[1].Text + " vendor -o removes the directory it is given, whole, before it vendors into it", targets}
		}
	case ws[1].Text == "clean":
		vals, args := flags(2)
		if vals["n"] != nil {
			return nil
		}
		caches := 0
		for _, c := range []string{"cache", "testcache", "modcache", "fuzzcache"} {
			if vals[c] != nil {
				caches++
			}
		}
		moved := cacheDirs["GOENV"] || vals["modcache"] != nil && (cacheDirs["GOMODCACHE"] || cacheDirs["GOPATH"]) ||
			(vals["cache"] != nil || vals["fuzzcache"] != nil) && cacheDirs["GOCACHE"]
		if moved {
			return &deletion{"go clean removes the caches it is given whole, where a variable this line names puts them", nil}
		}
		if caches > 0 && args == 0 {
			return nil
		}
		return &deletion{"go clean deletes build outputs from each package directory: _obj/ and _test/ whole, *.o, *.a, *.so, files named after the directory or a .go file", nil}
	}
	return nil
}

// cargoCleans: cargo clean removes its target directory whole (but -n,
// --dry-run), so one it is pointed at elsewhere is a recursive delete
// (a nineteenth hunt: cargo clean --target-dir src and
// CARGO_TARGET_DIR=src cargo clean removed src): --target-dir DIR, or
// --config and -Z, or a line that names CARGO_TARGET_DIR,
// CARGO_BUILD_TARGET_DIR or CARGO_HOME (whose config.toml may set
// it). DIR is kept when it is a literal in the workspace, or the
// variable this command is given is; otherwise the whole workspace.
// Plain cargo clean removes ./target, the build's output, as make
// clean would: it stays automatic.
func cargoCleans(sc *SimpleCommand) *deletion {
	ws := sc.Words
	if !slices.ContainsFunc(cands(ws, 1), func(i int) bool { return ws[i].Literal && ws[i].Text == "clean" }) {
		return nil
	}
	var dir *Word
	moved := false
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" {
			break
		}
		name, val, eq := strings.Cut(t, "=")
		switch {
		case t == "--dry-run" || !strings.HasPrefix(t, "--") && strings.HasPrefix(t, "-") && strings.Trim(t[1:], "nvqr") == "" && strings.Contains(t, "n"):
			return nil
		case name == "--target-dir":
			moved = true
			if eq {
				w := ws[i]
				w.Text = val
				dir = &w
			} else if i+1 < len(ws) {
				i++
				dir = &ws[i]
			}
		case name == "--config" || strings.HasPrefix(t, "-Z"):
			moved = true
		}
	}
	for _, n := range []string{"CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_HOME"} {
		if sc.line.cacheDirs[n] {
			moved = true
		}
	}
	for _, a := range sc.Assigns {
		if dir == nil && (a.Name == "CARGO_TARGET_DIR" || a.Name == "CARGO_BUILD_TARGET_DIR") {
			dir = &a.Value
		}
	}
	if !moved {
		return nil
	}
	var targets []string
	if dir != nil && dir.Literal && dir.Text != "" && !outsidePath(*dir) && !sc.line.cacheDirs["CARGO_HOME"] {
		targets = []string{dir.Text}
	}
	return &deletion{"cargo clean removes its target directory whole, and this one is not ./target", targets}
}

// rsyncDeletes reports an option of rsync's that deletes in the
// destination (--delete and its kin, --del, --force: a re-test's rsync
// -r --force x/ . removed the tree src, a file replacing it) or the
// source (--remove-source-files).
func rsyncDeletes(t string) (dest, source bool) {
	dest = t == "--del" || strings.HasPrefix(t, "--delete") || longOpt(t, "--force", 4) || strings.HasPrefix(t, "--force-")
	source = strings.HasPrefix(t, "--remove-source-files") || strings.HasPrefix(t, "--remove-sent-files")
	return dest, source
}

// rsyncRemoteOpt is the option that -M (--remote-option) at ws[k]
// passes to the other rsync (attached, -M--delete, -aM=--delete,
// --remote-option=--delete, or the next word) and how many words past
// ws[k] it takes; ok is false when ws[k] is not -M.
func rsyncRemoteOpt(ws []Word, k int) (opt Word, n int, ok bool) {
	t := ws[k].Text
	next := func() (Word, int, bool) {
		if k+1 < len(ws) {
			return ws[k+1], 1, true
		}
		return lit(""), 0, true
	}
	switch {
	case t == "--remote-option":
		return next()
	case strings.HasPrefix(t, "--remote-option="):
		v := ws[k]
		v.Text = strings.TrimPrefix(t, "--remote-option=")
		return v, 0, true
	case len(t) > 1 && t[0] == '-' && t[1] != '-':
		i := strings.IndexAny(t[1:], rsyncShortValued) + 1
		if i == 0 || t[i] != 'M' {
			return Word{}, 0, false
		}
		if rest := t[i+1:]; rest != "" {
			v := ws[k]
			v.Text = strings.TrimPrefix(rest, "=")
			return v, 0, true
		}
		return next()
	}
	return Word{}, 0, false
}

// findLayer is the find that runs sc through -exec, -execdir, -ok or
// -okdir, if any.
func findLayer(sc *SimpleCommand) *Layer {
	for i := len(sc.Wrappers) - 1; i >= 0; i-- {
		if strings.HasPrefix(sc.Wrappers[i].Name, "find -") {
			return &sc.Wrappers[i]
		}
	}
	return nil
}

// findStarts are find's starting points ("." when none is given).
func findStarts(ws []Word) []string {
	return texts(findStartWords(ws))
}

// findStartWords are the words of find's starting points (".", a
// literal, when none is given).
func findStartWords(ws []Word) []Word {
	var out []Word
	i := 1
	for i < len(ws) {
		t := ws[i].Text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
			continue
		}
		if t == "-D" {
			i += 2
			continue
		}
		break
	}
	for ; i < len(ws); i++ {
		t := ws[i].Text
		if ws[i].Literal && (strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ",") {
			break
		}
		out = append(out, ws[i])
	}
	if len(out) == 0 {
		out = []Word{lit(".")}
	}
	return out
}

// gitDirOf is the directory git works in: -C DIR, or ".".
func gitDirOf(sc *SimpleCommand) string {
	dir := "."
	for k := 0; k+1 < len(sc.GitOptions); k++ {
		if sc.GitOptions[k].Text == "-C" {
			dir = path.Join(dir, sc.GitOptions[k+1].Text)
			k++
		}
	}
	return dir
}
