package bash

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// rExecOption: an option (or script) of a program that makes it run a
// command it is given as a string, which the analyzer does not walk.
const rExecOption = "builtin.exec-option"

// execOptionNames are the programs execOption has rules for (each of
// its cases; TestExecOptionNames holds the two lists alike): their
// arguments decide what they run, so arguments xargs adds at run time
// make them need approval (a seventeenth hunt: xargs tar < args, args
// holding --checkpoint-action=exec='rm -rf src', deleted src).
var execOptionNames = sync.OnceValue(func() map[string]bool {
	return set("ack", "ag", "bat", "batcat", "delta", "tar", "rsync", "ssh", "scp", "sftp", "slogin", "make", "gmake", "zip", "split", "sort", "install", "man", "rg",
		"curl", "wget", "sdiff", "diff3", "less", "pager", "javac", "javadoc", "javap", "jar", "jdeps", "jarsigner", "keytool",
		"jlink", "jmod", "jdeprscan", "serialver", "jpackage", "jcmd", "jinfo", "jmap", "jstack", "jstat", "jps", "jfr", "jhsdb",
		"jdb", "jshell", "jstatd", "rmiregistry", "jconsole", "jimage", "jwebserver", "svn", "hg", "chg", "mvn", "mvnd", "mvnw",
		"tox", "just", "pidstat", "bpftrace", "flatpak", "flatpak-builder", "socat", "nc", "netcat", "ncat", "nc.traditional",
		"nc.openbsd", "vipe", "vidir", "aria2c", "psql", "mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlcheck",
		"mysqlimport", "mysqlshow", "mysqlslap", "mysqlbinlog", "mysqlpump", "mysql_upgrade", "mariadb-dump", "mariadb-admin",
		"mariadb-check", "mariadb-import", "mariadb-show", "mariadb-slap", "mariadb-binlog", "mariadb-upgrade", "dc", "duckdb",
		"lftp", "rustup", "systemctl", "crontab", "git", "ed", "red", "sqlite3", "sqlite", "sed", "pnpm", "yarn", "gh", "glab",
		"npm", "gio", "cmake", "ctest", "go", "cc", "c++", "c89", "c99", "openssl", "kubectl", "cargo", "gpg", "gpg2",
		"ssh-keygen", "ssh-add", "sudoedit", "sudo", "gradle", "sbt", "groff", "nroff", "troff", "gtroff", "pic", "gpic",
		"gpg-connect-agent", "prove", "chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable",
		"google-chrome-beta", "google-chrome-unstable", "headless_shell")
})

// execOptionProgram reports a program execOption has rules for.
func execOptionProgram(name string) bool {
	return execOptionNames()[name] || rustupProxies()[name] || editor(name) || pluginTool(name) != "" ||
		strings.Contains(name, "gcc") || strings.Contains(name, "g++") || strings.HasPrefix(name, "clang")
}

// execOption finds an option that makes a program run a command string:
// tar's --checkpoint-action, -I/--use-compress-program, --to-command,
// --info-script, --new-volume-script (-F), --rsh-command; rsync's
// -e/--rsh and --rsync-path; ssh's, scp's and sftp's -o ProxyCommand,
// LocalCommand, KnownHostsCommand and the like, -F (a configuration
// file may hold them), scp and sftp -S, sftp -D; zip's -TT and
// --unzip-command; sed's e command and s///e (or a script it cannot
// read: -f FILE, a script that is not a literal); vim and its kin
// (editors run commands from -c, +CMD, -S, their start-up files and
// modelines, and ex reads commands from standard input).
func execOption(sc *SimpleCommand) *finding {
	name := baseName(sc)
	ws := sc.Words
	found := func(at int, what string) *finding {
		return &finding{rExecOption, name + " " + quotedWord(ws[at].Text) + " " + what + ", which the analyzer does not see", at}
	}
	if rustupProxies()[name] && len(ws) > 1 && strings.HasPrefix(ws[1].lead, "+") && strings.Contains(ws[1].Text, "/") {
		// rustup's proxies take +TOOLCHAIN, and an absolute path is one:
		// the directory's cargo or rustc runs (a sixteenth hunt: cargo
		// +/tmp/t --version ran /tmp/t/bin/cargo).
		return found(1, "makes rustup run the toolchain of a directory")
	}
	switch name {
	case "tar":
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			long, _, _ := strings.Cut(t, "=")
			switch {
			// Any prefix of them counts: tar takes a unique one (--inf is
			// --info-script: a re-test), refuses an ambiguous one.
			case longOpt(long, "--checkpoint-action", 2), longOpt(long, "--use-compress-program", 2),
				longOpt(long, "--to-command", 2), longOpt(long, "--info-script", 2), longOpt(long, "--new-volume-script", 2),
				longOpt(long, "--rsh-command", 2):
				return found(i, "makes tar run a command")
			case i == 1 && !strings.HasPrefix(t, "-") && strings.ContainsAny(t, "IF"), shortLetter(t, 'I', "fCTXbgKLNVH"), shortLetter(t, 'F', "fCTXbgKLNVH"):
				return found(i, "makes tar run a program")
			}
		}
	case "rsync":
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			long, val, eq := strings.Cut(t, "=")
			if longOpt(long, "--rsync-path", 2) && long != "--rsh" || longOpt(long, "--rsh", 2) && long != "--rsh" {
				return found(i, "makes rsync run a command")
			}
			if long == "--rsh" || shortLetter(t, 'e', "fBTM") {
				// The word "ssh" alone, the program rsync runs anyway,
				// is taken without approval (a fourteenth hunt's
				// usability finding: rsync -av -e ssh src/ host:dst/).
				at, v := i, Word{}
				switch {
				case strings.HasPrefix(t, "--") && eq:
					v = ws[i]
					v.Text = val
				case !strings.HasPrefix(t, "--") && !strings.HasSuffix(t, "e"):
					v = ws[i]
					v.Text = t[strings.IndexByte(t, 'e')+1:]
				case i+1 < len(ws):
					at, v = i+1, ws[i+1]
				}
				if !v.Literal || v.Text != "ssh" {
					return found(i, "makes rsync run a command")
				}
				i = at
			}
		}
	case "ssh", "scp", "sftp", "slogin":
		valued := "BbcDEeFIiJLlmOoPpQRSWw"
		host := false
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			if len(t) < 2 || t[0] != '-' {
				// ssh reads options after the host too (a re-test: ssh
				// host -oProxyCommand=…); after the host and a word that
				// is not an option comes the remote command.
				if name == "ssh" && host {
					break
				}
				host = true
				continue
			}
			for k := 1; k < len(t); k++ {
				c := t[k]
				if strings.IndexByte(valued, c) < 0 {
					continue
				}
				v := t[k+1:]
				if v == "" && i+1 < len(ws) {
					i++
					v = ws[i].Text
				}
				switch {
				case c == 'F' || c == 'I', c == 'S' && name != "ssh", c == 'D' && name == "sftp":
					return found(i, "makes "+name+" run a program, or read options that do")
				case c == 'o' && sshCommandOption(v):
					return found(i, "makes "+name+" run a command")
				}
				break
			}
		}
	case "make", "gmake":
		return makeFinding(sc)
	case "zip":
		// -TT in any cluster (-TqTT CMD, -qTTCMD: an eighth hunt), and
		// any prefix of --unzip-command.
		for i, w := range ws {
			name, _, _ := strings.Cut(w.Text, "=")
			if len(name) > 1 && name[0] == '-' && name[1] != '-' && strings.Contains(name, "TT") || longOpt(name, "--unzip-command", 3) {
				return found(i, "makes zip run a command")
			}
		}
	case "split", "sort", "install":
		// split --filter, sort --compress-program and install
		// --strip-program run a command, in any prefix the program takes
		// (an eighth hunt, each).
		opt := map[string]struct {
			name string
			min  int
		}{"split": {"--filter", 2}, "sort": {"--compress-program", 3}, "install": {"--strip-program", 7}}[name]
		for i := 1; i < len(ws); i++ {
			if ws[i].Text == "--" {
				break
			}
			if n, _, _ := strings.Cut(ws[i].Text, "="); longOpt(n, opt.name, opt.min) {
				return found(i, "makes "+name+" run a command")
			}
		}
	case "man":
		// -P and --pager, -H and --html run a program; -C and
		// --config-file read a configuration naming programs (an eighth
		// hunt: man -P 'rm -rf src' ls).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			if longOpt(n, "--pager", 4) || longOpt(n, "--html", 3) || longOpt(n, "--config-file", 3) ||
				shortLetter(t, 'P', "CRLmMerEpSsTXH") || shortLetter(t, 'H', "CRLmMerEpSsTXP") || shortLetter(t, 'C', "RLmMerEpSsTXHP") {
				return found(i, "makes man run a program it names")
			}
		}
	case "rg":
		// --pre COMMAND runs COMMAND on every file searched (a
		// thirteenth hunt: rg --pre ./tools.sh hello ran it); ripgrep
		// takes no prefix of a long option.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			if t == "--pre" || strings.HasPrefix(t, "--pre=") || !ws[i].Literal && strings.HasPrefix(ws[i].lead, "--pre") {
				return found(i, "makes rg run a command on every file it searches")
			}
		}
	case "curl", "wget":
		// curl -K (--config) and wget --config read options from a file,
		// which may say where to write and, for wget, a program to run
		// (a thirteenth hunt: curl -sK fetch.cfg wrote .git/config
		// whose fsmonitor git status ran, wget --config=w.rc likewise;
		// wget --use-askpass=./ask.sh, -e use_askpass=./ask.sh and a
		// configuration saying so ran ask.sh), as CURL_HOME and WGETRC
		// do. Any prefix of a long option, -K in any group of curl's.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			switch {
			case longOpt(n, "--config", 2), name == "curl" && len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t, 'K'):
				return found(i, "makes "+name+" read its options from a file, which may say where it writes or what it runs")
			case name == "curl" && longOpt(n, "--engine", 3):
				// --engine loads a shared object (a fourteenth hunt: curl
				// --engine /ws/x.so ran its constructor); --en and longer.
				return found(i, "makes curl load code, a crypto engine it names")
			case name == "wget" && longOpt(n, "--use-askpass", 2):
				return found(i, "makes wget run a program")
			case name == "wget" && (longOpt(n, "--execute", 2) || len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t, 'e')):
				// -e COMMAND (in a group too: -qe), --execute: a wgetrc
				// command, whose name wget reads in any case, without
				// dashes and underscores.
				v, vw := "", ws[i]
				switch {
				case strings.HasPrefix(t, "--") && n != t:
					v = t[len(n)+1:]
				case !strings.HasPrefix(t, "--") && strings.IndexByte(t, 'e') < len(t)-1:
					v = t[strings.IndexByte(t, 'e')+1:]
				case i+1 < len(ws):
					i++
					v, vw = ws[i].Text, ws[i]
				}
				if c := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(v)); strings.Contains(c, "askpass") || strings.Contains(c, "config") || !vw.Literal {
					return found(i, "makes wget run a program, or read a configuration that may")
				}
			}
		}
	case "sdiff", "diff3":
		// --diff-program runs the program it names in diff's stead (a
		// fourteenth hunt), in any prefix (--diff-p, --d).
		for i := 1; i < len(ws); i++ {
			if ws[i].Text == "--" {
				break
			}
			if n, _, _ := strings.Cut(ws[i].Text, "="); longOpt(n, "--diff-program", 2) {
				return found(i, "makes "+name+" run a program in diff's stead")
			}
		}
	case "less", "pager":
		// A lesskey file (-k, --lesskey-file, --lesskey-src, and
		// --lesskey-content's text) sets LESSOPEN, which runs a command
		// on every file (a fourteenth hunt), in any prefix less takes.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			if longOpt(n, "--lesskey-file", 4) || longOpt(n, "--lesskey-src", 4) || longOpt(n, "--lesskey-content", 4) ||
				shortLetter(t, 'k', "bhjoOpPtTxyzD#") {
				return found(i, "makes less read a lesskey file, which may set a command it runs on every file")
			}
			if strings.HasPrefix(t, "+") && !lessStartOK(ws[i]) {
				return found(i, "gives less commands to run as it starts, which can run a program (!, |) or write a file (s) where it has a terminal (script -c gives it one)")
			}
		}
	case "ack", "ag", "bat", "batcat", "delta":
		// --pager runs the program it names on the output (an H12
		// hunt: bat --paging=always --pager=./x f), in any prefix
		// ack's Getopt::Long takes.
		for i := 1; i < len(ws); i++ {
			if ws[i].Text == "--" {
				break
			}
			if n, _, _ := strings.Cut(ws[i].Text, "="); longOpt(n, "--pager", 4) || !ws[i].Literal {
				return found(i, "makes "+name+" run a pager it names")
			}
		}
	case "javac", "javadoc":
		return javacFinding(sc)
	case "javap", "jar", "jdeps", "jarsigner", "keytool", "jlink", "jmod", "jdeprscan", "serialver", "jpackage", "jcmd", "jinfo",
		"jmap", "jstack", "jstat", "jps", "jfr", "jhsdb", "jdb", "jshell", "jstatd", "rmiregistry", "jconsole", "jimage",
		"jwebserver":
		// The JDK's tools give -JOPTION to the JVM they run in
		// (-J-javaagent:x.jar runs x.jar: a fifteenth hunt; jdb, jshell
		// and the rest a sixteenth), jshell -ROPTION to the one that
		// runs its code.
		for i := 1; i < len(ws); i++ {
			if strings.HasPrefix(ws[i].Text, "-J") || name == "jshell" && strings.HasPrefix(ws[i].Text, "-R") {
				return found(i, "gives the JVM "+name+" runs in an option, which may load code it names")
			}
		}
	case "svn":
		// The diff, diff3 and editor commands, a setting naming one, or
		// a configuration directory holding them (a fourteenth hunt).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			switch n, _, _ := strings.Cut(t, "="); n {
			case "--diff-cmd", "--diff3-cmd", "--editor-cmd", "--config-option", "--config-dir":
				return found(i, "makes svn run a command it names, or read a configuration that may")
			}
		}
	case "hg", "chg":
		// --config SECTION.KEY=VALUE sets an alias, a hook or an
		// extension; --cwd and -R (--repository) read another
		// repository's .hg/hgrc (a fourteenth hunt). Any prefix
		// Mercurial takes (--con, --cw, --rep).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			if longOpt(n, "--config", 4) || longOpt(n, "--cwd", 3) || longOpt(n, "--repository", 4) || shortLetter(t, 'R', "") {
				return found(i, "makes hg read a setting or another repository's configuration, which may run a command")
			}
		}
	case "mvn", "mvnd", "mvnw":
		// The exec plugin's exec goal runs the program its
		// exec.executable names (a sixteenth hunt: mvn exec:exec
		// -Dexec.executable=rm -Dexec.args='-rf src'); a property whose
		// name is not a literal may be it.
		for i := 1; i < len(ws); i++ {
			w, d := ws[i], ws[i].lead
			if d == "-D" || d == "--define" {
				if i+1 >= len(ws) {
					break
				}
				i++
				w, d = ws[i], "-D"+ws[i].lead
			} else if strings.HasPrefix(d, "--define=") {
				d = "-D" + d[len("--define="):]
			}
			if strings.HasPrefix(d, "-Dexec.executable") || !w.Literal && strings.HasPrefix(d, "-D") && !strings.Contains(d, "=") {
				return found(i, "makes the exec plugin run the program it names")
			}
		}
	case "tox":
		// -x (--override KEY=VALUE) sets any of tox's settings, the
		// commands it runs among them (a sixteenth hunt: tox -e py -x
		// testenv.commands=CMD); -c, -e, -f, -i, -m and -p take values.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			if longOpt(n, "--override", 3) || shortLetter(t, 'x', "cefimp") {
				return found(i, "sets tox's settings, the commands it runs among them")
			}
		}
	case "just":
		// just runs --command's words (-c) with the justfile's
		// environment, its recipes through --shell and --shell-arg
		// (with --clear-shell-args, the shell alone), --chooser's
		// program, $EDITOR or vim on --edit (-e), and --set's values in
		// its recipe lines, as make's variables (a seventeenth hunt).
		// Its recipes' arguments follow, which are not read apart.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			switch n, _, _ := strings.Cut(t, "="); n {
			case "--command", "--shell", "--shell-arg", "--clear-shell-args", "--shell-command", "--chooser", "--edit", "--set":
				return found(i, "makes just run a command, a shell or an editor it names, or puts a value in its recipes")
			}
			if shortLetter(t, 'c', "fdsE") || shortLetter(t, 'e', "fdsE") {
				return found(i, "makes just run a command or an editor")
			}
		}
	case "pidstat":
		// sysstat's pidstat -e PROGRAM ARGS runs PROGRAM (a seventeenth
		// hunt); -e is read as a word of its own.
		for i := 1; i < len(ws); i++ {
			if ws[i].Text == "-e" {
				return found(i, "makes pidstat run the program that follows")
			}
		}
	case "bpftrace":
		// -c CMD runs CMD; --unsafe lets the program's system() run
		// commands (a seventeenth hunt).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			if t == "--unsafe" || shortLetter(t, 'c', "BfeopIdxk") {
				return found(i, "makes bpftrace run a command")
			}
		}
	case "flatpak", "flatpak-builder":
		// flatpak run --command CMD runs CMD in the application's
		// sandbox, which may hold the workspace; flatpak-builder --run
		// runs its words in the build's (a seventeenth hunt).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			if n, _, _ := strings.Cut(t, "="); name == "flatpak" && n == "--command" || name == "flatpak-builder" && n == "--run" {
				return found(i, "makes "+name+" run a command it names")
			}
		}
	case "socat":
		// An EXEC:, SYSTEM: or SHELL: address runs a command (socat -
		// SYSTEM:CMD at once); socat reads the keyword in any case (a
		// seventeenth hunt).
		for i := 1; i < len(ws); i++ {
			kw, _, _ := strings.Cut(strings.ToLower(ws[i].Text), ":")
			if kw == "exec" || kw == "system" || kw == "shell" || !ws[i].Literal && !strings.HasPrefix(ws[i].Text, "-") {
				return found(i, "makes socat run a command")
			}
		}
	case "nc", "netcat", "ncat", "nc.traditional", "nc.openbsd":
		// -e PROG and -c CMD (in any group) run a program on the
		// connection; ncat's --exec, --sh-exec and --lua-exec too (a
		// seventeenth hunt).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			n, _, _ := strings.Cut(t, "=")
			if shortLetter(t, 'e', "") || shortLetter(t, 'c', "") || n == "--exec" || n == "--sh-exec" || n == "--lua-exec" {
				return found(i, "makes "+name+" run a program on its connection")
			}
		}
	case "vipe", "vidir":
		return &finding{rExecOption, name + " runs the editor $VISUAL or $EDITOR names, vi by default, which runs commands it is given", 0}
	case "gradle":
		// The command-line spellings of GRADLE_USER_HOME (its init.d,
		// its gradle.properties), of gradle.properties' org.gradle.*
		// (jvmargs' -javaagent:, java.home's java) and of an init
		// script (a seventeenth hunt).
		for i := 1; i < len(ws); i++ {
			t := ws[i].lead
			n, _, _ := strings.Cut(t, "=")
			if (t == "-D" || t == "--system-prop" || t == "-P" || t == "--project-prop") && i+1 < len(ws) {
				i++
				t = "-D" + ws[i].lead
			} else if strings.HasPrefix(t, "--system-prop=") || strings.HasPrefix(t, "--project-prop=") {
				t = "-D" + t[strings.IndexByte(t, '=')+1:]
			} else if strings.HasPrefix(t, "-P") {
				t = "-D" + t[2:]
			}
			if strings.HasPrefix(t, "-g") || n == "--gradle-user-home" || strings.HasPrefix(t, "-I") || n == "--init-script" ||
				strings.HasPrefix(t, "-Dgradle.user.home") || strings.HasPrefix(t, "-Dorg.gradle.") || !ws[i].Literal && strings.HasPrefix(t, "-D") {
				return found(i, "makes gradle read a user home, a property or an init script that may run code")
			}
		}
	case "sbt":
		// The command-line spellings of .sbtopts and .jvmopts (a
		// seventeenth hunt): JVM options, the java it runs, the files
		// it reads them from.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			n, _, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
			if strings.HasPrefix(t, "-J") || strings.HasPrefix(t, "-") &&
				(n == "java-home" || n == "jvm-opts" || n == "sbt-opts" || n == "sbt-jar" || n == "sbt-launch-dir") {
				return found(i, "gives sbt's JVM options, its java or a file of them, which may run code")
			}
		}
	case "aria2c":
		// --on-download-complete and the other --on-* hooks run a
		// command; --conf-path reads a configuration naming them (a
		// fourteenth hunt). Any prefix (--on, --conf).
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			n, _, _ := strings.Cut(t, "=")
			if len(n) >= 4 && (strings.HasPrefix(n, "--on-") || strings.HasPrefix("--on-", n)) || longOpt(n, "--conf-path", 5) {
				return found(i, "makes aria2c run a command, or read a configuration that may")
			}
		}
	case "psql", "mysql", "mariadb":
		return sqlClientFinding(sc)
	case "mysqldump", "mysqladmin", "mysqlcheck", "mysqlimport", "mysqlshow", "mysqlslap", "mysqlbinlog", "mysqlpump",
		"mysql_upgrade", "mariadb-dump", "mariadb-admin", "mariadb-check", "mariadb-import", "mariadb-show", "mariadb-slap",
		"mariadb-binlog", "mariadb-upgrade":
		// mysql's other clients read the same option files and load
		// plugins alike (a sixteenth hunt).
		for i := 1; i < len(ws); i++ {
			if mysqlLoads(ws[i].Text) {
				return found(i, "loads a configuration or plugins it is given")
			}
		}
	case "dc", "duckdb", "lftp":
		// dc's !, duckdb's .shell and .system, lftp's ! run shell
		// commands from the expressions, scripts and standard input
		// they read (a fourteenth hunt), as sqlite3's do.
		return &finding{rExecOption, name + " runs shell commands (its ! or .shell) from the code it is given or reads on standard input", 0}
	case "rustup":
		// rustup toolchain link NAME DIR makes DIR's cargo and rustc a
		// toolchain, which a rust-toolchain file (or +NAME) then runs (a
		// fourteenth hunt).
		if len(ws) > 2 && ws[1].Text == "toolchain" && ws[2].Text == "link" {
			return found(2, "makes a directory's programs a toolchain, which later cargo and rustc commands run")
		}
	case "systemctl":
		// Any verb but those that only read (a fourteenth hunt:
		// systemctl --user link ./x.service, enable, start, edit) makes
		// the service manager run a unit's programs, or changes which.
		verb := -1
		for i := 1; i < len(ws) && verb < 0; i++ {
			t := ws[i].Text
			switch {
			case !ws[i].Literal:
				verb = i
			case t == "--":
				if i+1 < len(ws) {
					verb = i + 1
				}
			case strings.HasPrefix(t, "--"):
				if !strings.Contains(t, "=") && systemctlValued()[t] {
					i++
				}
			case strings.HasPrefix(t, "-"):
				if strings.IndexAny(t[len(t)-1:], "tpsHMnoP") == 0 {
					i++
				}
			default:
				verb = i
			}
		}
		if verb >= 0 && (!ws[verb].Literal || !systemctlReads()[ws[verb].Text] && !strings.HasPrefix(ws[verb].Text, "list-") && !strings.HasPrefix(ws[verb].Text, "is-")) {
			return found(verb, "makes the service manager run a unit's programs, or changes which it runs")
		}
	case "crontab":
		// crontab FILE (or standard input), -e, -r install or remove a
		// crontab whose lines cron runs (a fourteenth hunt); -l lists.
		for i := 1; i < len(ws); i++ {
			switch t := ws[i].Text; {
			case t == "-u":
				i++
			case t == "-l" || t == "-V" || t == "--help" || t == "-h":
			default:
				return found(i, "installs, edits or removes a crontab, whose commands cron runs")
			}
		}
		if len(ws) == 1 {
			return &finding{rExecOption, "crontab reads a crontab from standard input and installs it, whose commands cron runs", 0}
		}
	case "git":
		// git difftool and mergetool run the tool their configuration
		// names (an editor by default), web--browse a browser; git
		// maintenance start and register schedule git maintenance
		// through cron or systemd and write the global configuration (a
		// fourteenth hunt).
		if len(ws) < 2 {
			break
		}
		switch sub := ws[1].Text; {
		case sub == "difftool" || sub == "mergetool" || sub == "web--browse":
			return found(1, "makes git run a tool its configuration names")
		case strings.HasPrefix(sub, "remote-") && !slices.Contains([]string{"remote-http", "remote-https", "remote-ftp", "remote-ftps", "remote-fd"}, sub):
			// A remote helper run by hand reads its commands from
			// standard input; remote-ext's connect runs the command it
			// is given (an H12 hunt: printf 'connect
			// git-upload-pack\n' | git remote-ext . ./x ran x).
			return found(1, "runs a remote helper, which may run a command it is given (remote-ext's connect)")
		case sub == "maintenance" && len(ws) > 2 && (ws[2].Text == "start" || ws[2].Text == "register"):
			return found(2, "schedules git's maintenance through cron or systemd, and writes the global configuration")
		}
	case "groff", "nroff", "troff", "gtroff", "pic", "gpic":
		// -U (unsafe mode) lets the document's .sy, .pi and .pso
		// requests (pic's sh) run shell commands (a nineteenth hunt:
		// groff -U -Tutf8 d.ms ran d.ms's .sy touch; without -U it did
		// not).
		for i := 1; i < len(ws); i++ {
			if t := ws[i].Text; t == "--" {
				break
			} else if shortLetter(t, 'U', "dfFILmMnoPrTwWDK") {
				return found(i, "lets the document run shell commands (.sy, .pi, .pso, pic's sh)")
			}
		}
	case "ed", "red":
		// Its ! command runs a shell command, and it reads its commands
		// from standard input, which the analyzer does not follow (an
		// eighth hunt: ed -s <<< '!rm -rf src').
		return &finding{rExecOption, name + " runs shell commands (its ! command) from the script it reads on standard input", 0}
	case "sqlite3", "sqlite":
		// .shell, .system, .once |CMD and the like run commands, from its
		// arguments, -cmd, -init or standard input (an eighth hunt).
		return &finding{rExecOption, name + " runs shell commands from its dot-commands (.shell, .system, .once |…), given as arguments or on standard input", 0}
	case "sed":
		return sedFinding(sc)
	case "pnpm", "yarn":
		return nodeConfigFinding(sc)
	case "gh", "glab":
		// An alias (gh alias set x '!CMD', --shell, or imported) runs a
		// shell command as gh x; an extension is a program gh runs by
		// its name; the editor, pager and browser settings name programs
		// (a sixteenth hunt), as git's alias.* and core.pager do.
		if len(ws) < 3 {
			break
		}
		sub, act := ws[1].Text, ws[2].Text
		switch {
		case sub == "alias" && (act == "set" || act == "import"),
			(sub == "extension" || sub == "extensions" || sub == "ext") && (act == "install" || act == "exec"):
			return found(2, "makes "+name+" run a command or a program it names, now or as one of its commands")
		case sub == "config" && act == "set":
			for i := 3; i < len(ws); i++ {
				switch t := ws[i].Text; {
				case t == "-h" || t == "--host":
					i++
				case strings.HasPrefix(t, "-"):
				default:
					if strings.Contains(t, "editor") || strings.Contains(t, "pager") || strings.Contains(t, "browser") {
						return found(i, "sets a program "+name+" runs")
					}
					i = len(ws)
				}
			}
		}
	case "npm":
		if f := nodeConfigFinding(sc); f != nil {
			return f
		}
		// npm edit and npm config edit run the editor its settings name
		// (a tenth hunt: npm_config_editor=./s npm config edit ran s). Any
		// word "edit" counts: npm's options before the subcommand may
		// take a value, so which word is the subcommand is not known.
		for i, w := range ws[1:] {
			if w.Text == "--" {
				break
			} else if w.Text == "edit" || i == 0 && (w.Text == "ed" || w.Text == "edi") {
				// npm takes any unique prefix of a command (ed: a
				// fourteenth hunt).
				return found(i+1, "makes npm run an editor, which its configuration names")
			} else if w.Text == "explore" || i == 0 && longOpt(w.Text, "explore", 4) {
				// npm explore PKG -- CMD runs CMD through a shell in the
				// package's folder (a fourteenth hunt), or a shell.
				return found(i+1, "makes npm run a command, or a shell, in a package's folder")
			}
		}
	case "gio":
		// gio launch runs the program a desktop file's Exec names (a
		// fourteenth hunt: gio launch ./x.desktop).
		if len(ws) > 1 && ws[1].Text == "launch" {
			return found(1, "makes gio run the program a desktop file names")
		}
	case "cmake", "ctest":
		// cmake -P runs a CMake script, ctest -S (-SP, -SR) a dashboard
		// script, whose execute_process runs commands; ctest's
		// --test-command runs one (a fourteenth hunt). Words after
		// cmake -E are its command's.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if name == "cmake" && t == "-E" {
				break
			}
			if name == "cmake" && strings.HasPrefix(t, "-P") || name == "ctest" && (strings.HasPrefix(t, "-S") || t == "--test-command") {
				return found(i, "makes "+name+" run a script, whose commands the analyzer does not see")
			}
		}
	case "go":
		return goFinding(sc)
	case "cc", "c++", "c89", "c99":
		return compilerFinding(sc)
	case "openssl", "kubectl", "cargo", "gpg", "gpg2", "gpg-connect-agent", "ssh-keygen", "ssh-add":
		return loaderFinding(sc)
	case "chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable", "google-chrome-beta",
		"google-chrome-unstable", "headless_shell":
		// Chromium runs each renderer, utility or GPU process under the
		// command line its --*-cmd-prefix or --*-launcher switch gives,
		// and its child processes from --browser-subprocess-path (a
		// nineteenth hunt: chromium --headless --renderer-cmd-prefix=./p
		// ran p). A switch takes one dash or two, its value after =.
		for i := 1; i < len(ws); i++ {
			t := ws[i].Text
			if t == "--" {
				break
			}
			sw, _, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
			if strings.HasPrefix(t, "-") && (strings.HasSuffix(sw, "-cmd-prefix") || strings.HasSuffix(sw, "-launcher") ||
				sw == "browser-subprocess-path") {
				return found(i, "makes the browser start its processes through a program it names")
			}
		}
	case "prove":
		// prove -e (--exec) CMD runs each test through CMD, a command
		// line of its words (a nineteenth hunt: prove --exec 'touch x' t
		// ran touch).
		for i := 1; i < len(ws); i++ {
			if t := ws[i].Text; t == "--" {
				break
			} else if name, _, _ := strings.Cut(t, "="); longOpt(name, "--exec", 3) || shortLetter(t, 'e', "IPMja") {
				return found(i, "makes prove run each test through a command line it is given")
			}
		}
	case "sudoedit":
		return &finding{rExecOption, "sudoedit runs an editor (SUDO_EDITOR, VISUAL, EDITOR or vi), which runs commands from its start-up files and modelines", 0}
	case "sudo":
		// sudo -e is sudoedit (a ninth hunt); sudo ran nothing else, or
		// the command it runs would be the one decided.
		for i, w := range ws[1:] {
			if t := w.Text; t == "--" {
				break
			} else if t == "--edit" || shortLetter(t, 'e', "aCcDghpRrTtUu") {
				return &finding{rExecOption, "sudo " + quotedWord(t) + " runs an editor (SUDO_EDITOR, VISUAL, EDITOR or vi), which runs commands from its start-up files and modelines", i + 1}
			}
		}
	}
	if tool := pluginTool(name); tool != "" {
		return pluginFinding(sc, tool)
	}
	if strings.Contains(name, "gcc") || strings.Contains(name, "g++") || strings.HasPrefix(name, "clang") {
		return compilerFinding(sc)
	}
	if editor(name) {
		return &finding{rExecOption, name + " runs commands from its options (-c, +CMD, -S, --eval), its start-up files and modelines, and ex mode's from standard input", 0}
	}
	return nil
}

// editor reports vi and vim by any of their names (vim.basic, vim.tiny,
// gvimdiff: an eighth hunt), the editors the system's alternatives
// name (editor, sensible-editor), emacs and kakoune: each runs commands
// it is given.
func editor(name string) bool {
	switch name {
	case "vi", "ex", "view", "rvim", "rview", "evim", "eview", "editor", "sensible-editor", "edit", "kak":
		return true
	}
	for _, p := range []string{"vim", "nvim", "gvim", "gview", "vi.", "emacs", "xemacs"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// makeSafeValue: the characters of a command-line variable's value make
// takes without approval; a blank, ; | & $ ` quotes and the rest make a
// recipe that uses the variable run more than it seems ($(CC) with
// CC='gcc;rm -rf src').
const makeSafeValue = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:@%+=-"

// makeVars are make's variables that choose its shell, its options or
// the makefiles it reads.
var makeVars = sync.OnceValue(func() map[string]bool {
	return set("SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKEFILES", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEOVERRIDES")
})

// makeFinding reads make's options and command-line variables: --eval
// evaluates text (whose $(shell …) runs); a makefile read from standard
// input (-f -, /dev/stdin) is not seen; a variable given on the command
// line is taken only as NAME=VALUE with VALUE of plain characters and
// NAME none of makeVars (a hunt, and an eighth: SHELL=/bin/sh
// .SHELLFLAGS='-c rm -rf src;' ran it, CC='rm -rf src;' would in any
// recipe using $(CC); := and != expand or run at once).
func makeFinding(sc *SimpleCommand) *finding {
	ws := sc.Words
	found := func(at int, what string) *finding {
		return &finding{rExecOption, "make " + quotedWord(ws[at].Text) + " " + what + ", which the analyzer does not see", at}
	}
	stdin := func(w Word, v string) bool {
		return !w.Literal || v == "-" || strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/")
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		t := w.Text
		name, val, eq := strings.Cut(t, "=")
		if strings.HasPrefix(t, "-") {
			switch {
			case longOpt(name, "--eval", 2) || shortLetter(t, 'E', "CfIjlOoW"):
				return found(i, "makes make evaluate text, whose $(shell …) runs a command")
			case longOpt(name, "--file", 2) || longOpt(name, "--makefile", 3):
				if !eq && i+1 < len(ws) {
					i++
					w, val = ws[i], ws[i].Text
				}
				if stdin(w, val) {
					return found(i, "makes make read a makefile from standard input")
				}
			case !strings.HasPrefix(t, "--") && shortLetter(t, 'f', "CEIjlOoW"):
				val = t[strings.IndexByte(t, 'f')+1:]
				if val == "" && i+1 < len(ws) {
					i++
					w, val = ws[i], ws[i].Text
				}
				if stdin(w, val) {
					return found(i, "makes make read a makefile from standard input")
				}
			}
			continue
		}
		if !eq {
			continue
		}
		n := strings.TrimRight(name, ":!+?")
		if strings.HasSuffix(name, ":") || strings.HasSuffix(name, "!") || makeVars()[n] || !w.Literal ||
			strings.Trim(val, makeSafeValue) != "" {
			return found(i, "gives make a variable that chooses its shell or makefiles, or that it expands or runs")
		}
	}
	return nil
}

// sshCommandOption reports an ssh -o setting (Key=value or "Key value")
// whose key makes ssh run a command or load code.
func sshCommandOption(v string) bool {
	// ssh takes quotes out of the keyword (Proxy"Command"=…: a re-test).
	key := strings.ToLower(strings.TrimSpace(strings.NewReplacer(`"`, "", `'`, "").Replace(v)))
	if i := strings.IndexAny(key, "= \t"); i >= 0 {
		key = key[:i]
	}
	switch key {
	case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "pkcs11provider",
		"securitykeyprovider", "include", "match", "remotecommand", "proxyjump", "controlpath", "identityagent":
		return true
	}
	return false
}

// sedFinding reads sed's options and scripts: a script with the e
// command or s///e runs a command; so may a script the analyzer cannot
// read (-f FILE, a word that is not a literal).
func sedFinding(sc *SimpleCommand) *finding {
	ws := sc.Words
	var scripts []int
	file := -1
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" {
			if len(scripts) == 0 && file < 0 && i+1 < len(ws) {
				scripts = append(scripts, i+1)
			}
			break
		}
		long, val, eq := strings.Cut(t, "=")
		switch {
		case strings.HasPrefix(t, "--") && len(long) > 2 && strings.HasPrefix("--expression", long):
			if eq {
				if sedRuns(val) || !ws[i].Literal {
					return &finding{rExecOption, "sed " + quotedWord(t) + " may run a command (the e command, or s///e)", i}
				}
				continue
			}
			i++
			scripts = append(scripts, i)
		case strings.HasPrefix(t, "--") && len(long) > 2 && strings.HasPrefix("--file", long):
			file = i
		case strings.HasPrefix(t, "--"):
			if !eq && (strings.HasPrefix("--line-length", long) && len(long) > 2) {
				i++
			}
		case len(t) > 1 && t[0] == '-':
			for k := 1; k < len(t); k++ {
				switch t[k] {
				case 'e', 'f':
					if t[k] == 'f' {
						file = i
					} else if k+1 < len(t) {
						if sedRuns(t[k+1:]) || !ws[i].Literal {
							return &finding{rExecOption, "sed " + quotedWord(t) + " may run a command (the e command, or s///e)", i}
						}
					} else {
						i++
						scripts = append(scripts, i)
					}
					k = len(t)
				case 'l':
					if k+1 == len(t) {
						i++
					}
					k = len(t)
				case 'i':
					k = len(t) // -i[SUFFIX]
				}
			}
		default:
			if len(scripts) == 0 && file < 0 {
				scripts = append(scripts, i)
			}
		}
		if file >= 0 {
			return &finding{rExecOption, "sed reads its script from a file, which the analyzer does not read (the e command runs a command)", file}
		}
	}
	for _, i := range scripts {
		if i < len(ws) && (!ws[i].Literal || sedRuns(ws[i].Text)) {
			return &finding{rExecOption, "sed's script " + quotedWord(ws[i].Text) + " may run a command (the e command, or s///e)", i}
		}
	}
	return nil
}

// sedRuns reports a sed script (GNU sed's language) that may run a
// command: the e command, an s command with the e flag, or text the
// reader here does not follow.
func sedRuns(p string) bool {
	i := 0
	skipTo := func(stop string) { // to the first byte of stop, or the end, past escapes
		for i < len(p) && strings.IndexByte(stop, p[i]) < 0 {
			if p[i] == '\\' {
				i++
			}
			i++
		}
	}
	// skipRaw is skipTo where sed has no escapes: a comment, a file name
	// (r R w W, s///w) and a label end at the first stop, a backslash
	// before it or not (a re-test: '#x\<newline>e cmd' ran cmd).
	skipRaw := func(stop string) {
		for i < len(p) && strings.IndexByte(stop, p[i]) < 0 {
			i++
		}
	}
	// bracket is past a bracket expression from p[i] == '[', or false
	// where sed finds none that ends: inside it the delimiter and a
	// backslash are themselves, a ] first (after any ^) is one, and
	// [:class:], [.x.] and [=x=] end only at their own :], .] or =].
	bracket := func() bool {
		i++
		if i < len(p) && p[i] == '^' {
			i++
		}
		if i < len(p) && p[i] == ']' {
			i++
		}
		for i < len(p) && p[i] != ']' {
			if p[i] == '\n' {
				return false
			}
			if p[i] == '[' && i+1 < len(p) && strings.IndexByte(":.=", p[i+1]) >= 0 {
				end := strings.Index(p[i+2:], string(p[i+1])+"]")
				if end < 0 {
					return false
				}
				i += 2 + end + 2
				continue
			}
			i++
		}
		if i >= len(p) {
			return false
		}
		i++
		return true
	}
	// delimited is past one part ending in p[i-1]'s delimiter; in a
	// regex (an address, s's first part) GNU sed takes the delimiter
	// inside a bracket expression as itself (an eighth hunt:
	// s/[/]/w/;e cmd ran cmd, which a reader ending the regex at the
	// second / took for s's w flag and file name).
	delimited := func(regex bool) bool {
		if i >= len(p) {
			return false
		}
		d := p[i-1]
		for i < len(p) && p[i] != d {
			if regex && p[i] == '[' {
				if !bracket() {
					return false
				}
				continue
			}
			if p[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(p) {
			return false
		}
		i++
		return true
	}
	address := func() bool {
		switch {
		case i < len(p) && p[i] == '/':
			i++
			if !delimited(true) {
				return false
			}
		case i+1 < len(p) && p[i] == '\\':
			i += 2
			if !delimited(true) {
				return false
			}
		default:
			for i < len(p) && strings.IndexByte("0123456789$~+", p[i]) >= 0 {
				i++
			}
			return true
		}
		for i < len(p) && (p[i] == 'I' || p[i] == 'M') {
			i++
		}
		return true
	}
	for {
		for i < len(p) && strings.IndexByte(" \t\n;{}", p[i]) >= 0 {
			i++
		}
		if i >= len(p) {
			return false
		}
		if p[i] == '#' {
			skipRaw("\n")
			continue
		}
		if !address() {
			return true
		}
		for i < len(p) && p[i] == ' ' {
			i++
		}
		if i < len(p) && p[i] == ',' {
			i++
			if !address() {
				return true
			}
		}
		for i < len(p) && (p[i] == ' ' || p[i] == '!') {
			i++
		}
		if i >= len(p) {
			return true
		}
		c := p[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'e':
			return true
		case 's', 'y':
			if i >= len(p) || p[i] == '\\' || p[i] == '\n' {
				return true
			}
			i++
			if !delimited(c == 's') || !delimited(false) {
				return true
			}
			if c == 'y' {
				continue
			}
			for i < len(p) {
				f := p[i]
				if f == 'e' {
					return true
				}
				if f == 'w' {
					skipRaw("\n")
					break
				}
				if strings.IndexByte("gpiImM0123456789", f) < 0 {
					break
				}
				i++
			}
		case 'a', 'i', 'c':
			skipTo("\n")
		case 'r', 'R', 'w', 'W':
			skipRaw("\n")
		case 'b', 't', 'T', ':', 'v':
			// A label (and v's version) ends at a blank too, and a
			// command may follow it on the line (':x e cmd': a re-test).
			for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
				i++
			}
			skipRaw("; \t\n")
		case 'q', 'Q', 'l', 'L':
			for i < len(p) && p[i] >= '0' && p[i] <= '9' {
				i++
			}
		default:
			return true
		}
	}
}

// goFinding: go build, run, test, vet and the rest run the program
// -toolexec names before each tool, go run and go test the one -exec
// names before the binary, go vet its -vettool, and the linker -ldflags'
// -extld or -extar (an eleventh hunt: go build -toolexec=./s ran s);
// go env -w keeps settings (GOFLAGS=-toolexec=…) every later go command
// reads. Go's flags take one dash or two, a value after = or as the
// next word. go generate runs what the files' //go:generate lines say,
// as make runs a makefile's recipes: a documented limit.
func goFinding(sc *SimpleCommand) *finding {
	ws := sc.Words
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		name, val, eq := strings.Cut(strings.TrimPrefix(t[1:], "-"), "=")
		switch name {
		case "toolexec", "exec", "vettool":
			return &finding{rExecOption, "go " + quotedWord(t) + " makes go run a program it names, which the analyzer does not see", i}
		case "ldflags":
			v := ws[i]
			if !eq && i+1 < len(ws) {
				v = ws[i+1]
				val = v.Text
			}
			if strings.Contains(val, "-extld") || strings.Contains(val, "-extar") || !v.Literal {
				return &finding{rExecOption, "go " + quotedWord(t) + " may name the linker or archiver go runs, which the analyzer does not see", i}
			}
		case "w":
			if ws[1].Text == "env" {
				return &finding{rExecOption, "go env -w keeps settings (GOFLAGS, GOTOOLCHAIN, CC) that every later go command reads, which may make it run a program", i}
			}
		}
	}
	return nil
}

// compilerFinding: gcc and clang (by any name: x86_64-linux-gnu-gcc,
// clang-18) run each pass through -wrapper's program, take the passes
// (as, ld, cc1) from a -B directory (an eleventh hunt: gcc -wrapper
// ./s,x and gcc -B./ with an as of the workspace's each ran it), load
// the code of -fplugin, -fpass-plugin and -Xclang -load, read -specs
// files (which may run programs) and options from an @FILE, and run the
// linker -fuse-ld or --ld-path names by its path.
func compilerFinding(sc *SimpleCommand) *finding {
	ws := sc.Words
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		name, val, _ := strings.Cut(strings.TrimPrefix(t, "-"), "=")
		switch {
		case t == "-wrapper", strings.HasPrefix(t, "-B"), strings.HasPrefix(t, "-fplugin"), strings.HasPrefix(t, "-fpass-plugin"),
			t == "-load", name == "specs" || name == "-specs", name == "-ld-path", name == "-gcc-toolchain",
			name == "fuse-ld" && strings.Contains(val, "/"), strings.HasPrefix(t, "@"),
			// The linker's -plugin (or an @FILE of its options) through
			// -Wl, or -Xlinker (a nineteenth hunt: gcc -Wl,-plugin,./p.so
			// ran p.so's constructor).
			strings.HasPrefix(t, "-Wl,") && slices.ContainsFunc(strings.Split(t, ",")[1:], linkerLoads),
			t == "-Xlinker" && i+1 < len(ws) && linkerLoads(ws[i+1].Text):
			return &finding{rExecOption, baseName(sc) + " " + quotedWord(t) + " makes the compiler run or load a program it names, which the analyzer does not see", i}
		}
	}
	return nil
}

// pluginTool names the tool of a program that loads a shared object it
// is given as a plugin: binutils' ar, nm and ranlib (--plugin: gcc-ar
// and x86_64-linux-gnu-nm too), the linkers (-plugin), LLVM's opt,
// llc, lli and bugpoint (-load, -load-pass-plugin; bugpoint's
// -exec-command and -compile-command run a command), by any version
// suffix (opt-14); "" for another program.
func pluginTool(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 && i+1 < len(name) && strings.Trim(name[i+1:], "0123456789.") == "" {
		name = name[:i]
	}
	switch name {
	case "ar", "nm", "ranlib", "ld", "ld.bfd", "ld.gold", "gold", "opt", "llc", "lli", "bugpoint":
		return name
	}
	for _, t := range []string{"ar", "nm", "ranlib", "ld", "ld.bfd", "ld.gold"} {
		if strings.HasSuffix(name, "-"+t) && !strings.HasPrefix(name, "llvm-") {
			return t
		}
	}
	return ""
}

// linkerLoads reports a linker option that loads a plugin, or reads
// options from a file (@FILE) that may: -plugin, --plugin, in either
// form of its value.
func linkerLoads(t string) bool {
	name, _, _ := strings.Cut(t, "=")
	return name == "-plugin" || name == "--plugin" || strings.HasPrefix(t, "@")
}

// pluginFinding: an option of a pluginTool that loads code (a
// nineteenth hunt: ar, nm and x86_64-linux-gnu-ranlib --plugin ./p.so,
// ld -plugin ./p.so and llc -load=./p.so each ran p.so's constructor).
func pluginFinding(sc *SimpleCommand, tool string) *finding {
	ws := sc.Words
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		name, _, _ := strings.Cut(t, "=")
		var loads bool
		switch tool {
		case "ar", "nm", "ranlib":
			loads = name == "--plugin" || strings.HasPrefix(t, "@")
		case "opt", "llc", "lli", "bugpoint":
			n := "-" + strings.TrimLeft(name, "-")
			loads = strings.HasPrefix(t, "-") && (strings.HasPrefix(n, "-load") || n == "-exec-command" || n == "-compile-command" ||
				n == "-dlopen" || n == "-pass-plugin")
		default:
			loads = linkerLoads(t)
		}
		if loads {
			return &finding{rExecOption, baseName(sc) + " " + quotedWord(t) + " makes it load a plugin or run a program it names, which the analyzer does not see", i}
		}
	}
	return nil
}

// loaderFinding: options that load code or read a configuration naming
// a program (an eleventh hunt, each): openssl engine and -engine load a
// shared object (openssl engine -t ./x.so ran its constructor), as do
// providers, and a -config file may load either; kubectl --kubeconfig
// names exec credential plugins, cargo --config settings a runner, a
// rustc wrapper or linker; gpg's --agent-program and --homedir (whose
// gpg.conf names one), ssh-keygen -D a PKCS#11 library and -w a FIDO
// one, ssh-add -s and -S one each for the agent.
func loaderFinding(sc *SimpleCommand) *finding {
	name := baseName(sc)
	ws := sc.Words
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" {
			break
		}
		opt, _, _ := strings.Cut(strings.TrimPrefix(t, "-"), "=")
		var runs bool
		switch name {
		case "openssl":
			runs = i == 1 && (t == "engine" || t == "provider") ||
				opt == "engine" || strings.HasPrefix(opt, "provider") || opt == "config" || opt == "conf"
		case "kubectl":
			runs = opt == "-kubeconfig"
		case "cargo":
			runs = opt == "-config" || strings.HasPrefix(t, "-Z")
		case "gpg", "gpg2", "gpg-connect-agent":
			// --photo-viewer is a command line gpg runs to show a key's
			// photo, and --exec-path where it finds its viewer (a
			// nineteenth hunt: gpg --photo-viewer 'touch x' --list-options
			// show-photos -k ran touch).
			runs = strings.HasSuffix(opt, "-program") || opt == "-homedir" || opt == "-options" ||
				opt == "-photo-viewer" || opt == "-exec-path" ||
				// gpg-connect-agent -E (--exec) runs the rest of its words
				// as its server (a nineteenth hunt: it ran touch).
				name == "gpg-connect-agent" && (opt == "-exec" || shortLetter(t, 'E', "rS"))
		case "ssh-keygen":
			// -D a PKCS#11 library, -w a FIDO one (a twelfth hunt:
			// ssh-keygen -t ed25519-sk -w ./x.so ran its constructor).
			runs = shortLetter(t, 'D', "CEFIMNOPRVYZabfjmnrstz") || shortLetter(t, 'w', "CEFIMNOPRVYZabfjmnrstz")
		case "ssh-add":
			// -s and -S name a PKCS#11 and a FIDO library the agent loads
			// (a twelfth hunt: under ssh-agent -P '*', ssh-add -s
			// $PWD/x.so ran its constructor).
			runs = shortLetter(t, 's', "EehHMmt") || shortLetter(t, 'S', "EehHMmt")
		}
		if runs {
			return &finding{rExecOption, name + " " + quotedWord(t) + " makes it load code, or read a configuration naming a program, which the analyzer does not see", i}
		}
	}
	return nil
}

// javacFinding: javac runs the annotation processors it finds on its
// class path or processor path (-cp, -classpath, --class-path,
// -processorpath, --processor-path, --processor-module-path) unless
// -proc:none, and the plugins -Xplugin names whatever; -J gives the JVM
// an option (-J-javaagent:), and @FILE options from a file (a
// fourteenth hunt).
//
// javac's and javadoc's --system JDK load the JDK's lib/jrt-fs.jar, and
// javadoc runs the doclets and taglets it is given (a fifteenth hunt:
// javac --system ./j X.java ran ./j/lib/jrt-fs.jar's code). The last
// -proc: option is the one javac takes (-proc:none -proc:full runs
// processors).
func javacFinding(sc *SimpleCommand) *finding {
	name := baseName(sc)
	ws := sc.Words
	noProc, compiles := false, true
	for _, w := range ws {
		if strings.HasPrefix(w.Text, "-proc:") {
			noProc = w.Text == "-proc:none"
		}
		switch w.Text {
		case "-version", "--version", "-fullversion", "--full-version", "-help", "--help", "-?", "-X", "--help-extra":
			compiles = false
		}
	}
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		n, v, eq := strings.Cut(t, "=")
		if n == "--system" && !eq && i+1 < len(ws) {
			v = ws[i+1].Text
		}
		switch {
		case strings.HasPrefix(t, "-J"), strings.HasPrefix(t, "-Xplugin"), strings.HasPrefix(t, "@"),
			n == "--system" && v != "none",
			name == "javadoc" && (strings.HasPrefix(t, "-doclet") || strings.HasPrefix(t, "--doclet") ||
				strings.HasPrefix(t, "-taglet") || strings.HasPrefix(t, "--taglet")):
			return &finding{rExecOption, name + " " + quotedWord(t) + " makes " + name + " load code it names, or read options from a file", i}
		case name == "javac" && !noProc && (t == "-cp" || t == "-classpath" || t == "-processorpath" || n == "--class-path" ||
			n == "--processor-path" || n == "--processor-module-path"):
			return &finding{rExecOption, "javac " + quotedWord(t) + " makes javac run the annotation processors it finds there (unless -proc:none)", i}
		}
	}
	if name == "javac" && !noProc && compiles {
		// Its class path is "." when none is given (or $CLASSPATH): a
		// processor there, named by its
		// META-INF/services/javax.annotation.processing.Processor, runs
		// (a sixteenth hunt, JDK 17: javac X.java ran the workspace's
		// P.class, which deleted src).
		return &finding{rExecOption, "javac runs the annotation processors of its class path, the working directory when none is given (unless -proc:none)", 0}
	}
	return nil
}

// nodeRunKeys are npm's (and pnpm's, and yarn's) settings that name
// the shell scripts run through, node's options, a configuration file,
// or a program they run, with the shortest prefix of each that npm's
// parser (nopt) expands to it alone: --global is not --globalconfig.
var nodeRunKeys = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"script-shell": "scr", "shell": "she", "node-options": "node-o", "node-gyp": "node-g", "userconfig": "userc",
		"globalconfig": "globalc", "editor": "edi", "git": "git", "browser": "bro", "viewer": "vie", "init-module": "init-m",
		"use-yarnrc": "use-y", "yarnpath": "yarnpath", "yarn-path": "yarn-p",
	}
})

// nodeConfigFinding: npm takes any of its settings as --NAME[=VALUE]
// anywhere before "--" (pnpm also as --config.NAME=VALUE), and npm
// config set (set, c set), pnpm config set and yarn config set write
// them to a configuration that later commands read (a sixteenth hunt:
// npm test --script-shell=./x ran ./x; npm config set
// --location=project script-shell=... wrote the workspace's .npmrc,
// and npm test then ran it). Those of nodeRunKeys make a later script,
// or the package manager itself, run what they name.
func nodeConfigFinding(sc *SimpleCommand) *finding {
	name := baseName(sc)
	ws := sc.Words
	runKey := func(k string, prefix bool) bool {
		k = strings.ToLower(k)
		for key, min := range nodeRunKeys() {
			if k == key || prefix && len(k) >= len(min) && strings.HasPrefix(key, k) && strings.HasPrefix(k, min) {
				return true
			}
		}
		return false
	}
	set := false    // after config set, set or c set: the words are keys and values
	config := false // npm's config command came before
	for i := 1; i < len(ws); i++ {
		t := ws[i].Text
		if t == "--" {
			break
		}
		if strings.HasPrefix(t, "--") || name != "yarn" && len(t) > 2 && t[0] == '-' {
			// npm's and pnpm's parser (nopt) take a word of one dash
			// that is not letters they know for the setting of its name
			// (a seventeenth hunt: npm test -script-shell ./x ran ./x).
			n, _, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
			if runKey(strings.TrimPrefix(n, "config."), true) {
				return &finding{rExecOption, name + " " + quotedWord(t) + " sets what its scripts run through or load, or a configuration that may, which the analyzer does not see", i}
			}
			continue
		}
		if strings.HasPrefix(t, "-") {
			continue
		}
		if set {
			// Every KEY VALUE and KEY=VALUE after set is set (a
			// seventeenth hunt: npm config set fund=false
			// script-shell=./x wrote both).
			if k, _, _ := strings.Cut(t, "="); runKey(k, false) {
				return &finding{rExecOption, name + " sets " + quotedWord(k) + ", which names what its scripts run through or load, in a configuration later commands read", i}
			}
			continue
		}
		// npm takes a unique prefix of its config command (conf, con),
		// and options, with their values, before set (a seventeenth
		// hunt: npm conf set script-shell ./x -L project wrote .npmrc).
		config = config || strings.HasPrefix("config", t) && (name == "npm" || t == "config" || t == "c")
		set = t == "set" && (i == 1 || config)
	}
	return nil
}

// rustupProxies are the programs rustup installs as proxies, which
// take +TOOLCHAIN first.
var rustupProxies = sync.OnceValue(func() map[string]bool {
	return set("cargo", "rustc", "rustdoc", "rustfmt", "cargo-fmt", "cargo-clippy", "clippy-driver", "rust-gdb", "rust-gdbgui",
		"rust-lldb", "rust-analyzer", "rls", "cargo-miri")
})

// psqlMeta matches a psql meta-command that runs a shell command, reads
// or writes a file or runs a program (\!, \o |, \g |, \copy … program,
// \i, \e, \setenv), or SQL's COPY … PROGRAM; mysqlMeta a mysql client
// command that does (system, \!, pager, source, tee, edit): any
// backslash counts.
var (
	psqlMeta  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\\(!|[ogwie]|s\b|copy|setenv|lo_)|\bprogram\b`) })
	mysqlMeta = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\\|(^|[;\n])\s*(system|pager|source|tee|edit|nopager|notee)\b`)
	})
)

// sqlClientFinding: psql's and mysql's client commands run shell
// commands (psql's \!, mysql's system and \!: a fourteenth hunt, psql
// -c '\! rm -rf src'), read files or name a pager. The code given by
// -c (--command) or -e (--execute) is read; code from a file (psql -f)
// or from standard input (neither given) is not, and needs approval,
// as sqlite3's does; so do psql -o |CMD and mysql's --pager, a
// --defaults-file and --plugin-dir. Code that is not a literal is
// sqlRisk's.
func sqlClientFinding(sc *SimpleCommand) *finding {
	name := baseName(sc)
	ws := sc.Words
	found := func(at int, what string) *finding {
		return &finding{rExecOption, name + " " + what + ", which the analyzer does not see", at}
	}
	code, short, long, meta := false, "c", "--command", psqlMeta()
	if name != "psql" {
		short, long, meta = "e", "--execute", mysqlMeta()
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		t := w.Text
		n, v, eq := strings.Cut(t, "=")
		attached := len(t) > 2 && t[0] == '-' && t[1] != '-' && t[1:2] == short
		if !strings.HasPrefix(t, "-") {
			continue
		}
		switch {
		case t == "-"+short || attached || longOpt(n, long, 4):
			code = true
			switch {
			case attached:
				v = t[2:]
			case !eq && i+1 < len(ws):
				i++
				w, v = ws[i], ws[i].Text
			}
			if w.Literal && meta.MatchString(v) {
				return found(i, "is given code with a client command that runs a shell command, a program or a file ("+quotedWord(v)+")")
			}
		case t == "--version" || t == "-V" || t == "--help" || t == "-?" || name == "psql" && (t == "-l" || t == "--list"):
			code = true
		case name == "psql" && (t == "-f" || strings.HasPrefix(t, "-f") && len(t) > 2 || longOpt(n, "--file", 3)):
			return found(i, "reads its commands from a file, whose client commands may run a shell command")
		case name == "psql" && (t == "-o" || strings.HasPrefix(t, "-o") || longOpt(n, "--output", 4)):
			switch {
			case (t == "-o" || !eq && strings.HasPrefix(t, "--")) && i+1 < len(ws):
				v = ws[i+1].Text
			case !strings.HasPrefix(t, "--"):
				v = t[2:]
			}
			if strings.HasPrefix(v, "|") {
				return found(i, "pipes its output to a command")
			}
		case name != "psql" && (longOpt(mysqlOpt(n), "--pager", 4) || mysqlLoads(t)):
			return found(i, "runs a pager, or loads a configuration or plugins, it is given")
		}
	}
	if !code {
		return found(0, "reads its commands from standard input, whose client commands may run a shell command")
	}
	return nil
}

// mysqlOpt is a long option of mysql's clients as their my_getopt
// reads it: - and _ alike, and loose- (which only keeps an unknown
// option from being an error) dropped (a sixteenth hunt:
// --plugin_dir=./p, --loose-pager=./x).
func mysqlOpt(n string) string {
	n = strings.ReplaceAll(n, "_", "-")
	if strings.HasPrefix(n, "--loose-") {
		n = "--" + n[len("--loose-"):]
	}
	return n
}

// mysqlLoads reports an option of mysql's clients that reads an option
// file (--defaults-file and the like, which may name a pager or a
// plugin directory) or loads plugins from a directory (--plugin-dir,
// any prefix).
func mysqlLoads(t string) bool {
	n, _, _ := strings.Cut(t, "=")
	n = mysqlOpt(n)
	return strings.HasPrefix(n, "--defaults-") || longOpt(n, "--plugin-dir", 8)
}

// systemctlReads are systemctl's verbs that only read (list-* and is-*
// too); systemctlValued its long options that take the next word.
var (
	systemctlReads = sync.OnceValue(func() map[string]bool {
		return set("status", "show", "cat", "help", "get-default", "show-environment", "whoami")
	})
	systemctlValued = sync.OnceValue(func() map[string]bool {
		return set("--type", "--property", "--state", "--job-mode", "--signal", "--kill-whom", "--kill-value",
			"--what", "--host", "--machine", "--lines", "--output", "--root", "--image", "--image-policy", "--preset-mode",
			"--timestamp", "--boot-loader-menu", "--boot-loader-entry", "--reboot-argument", "--message", "--drop-in", "--when")
	})
)

// lessStartOK reports a +CMD (or ++CMD) of less's that only moves or
// searches: a line number, G, g, F, or a search pattern of printable
// characters. Any other command is as if typed: ! and | run a shell
// command, s saves the input to a file, v runs an editor (an H12 hunt:
// script -qc "less -F '+!./x<newline>' f" /dev/null ran ./x).
func lessStartOK(w Word) bool {
	c := strings.TrimPrefix(strings.TrimPrefix(w.Text, "+"), "+")
	switch {
	case !w.Literal:
		return false
	case c == "" || c == "G" || c == "g" || c == "F" || strings.Trim(c, "0123456789") == "":
		return true
	case c[0] == '/' || c[0] == '?':
		return !strings.ContainsFunc(c, func(r rune) bool { return r < ' ' || r == 0x7f })
	}
	return false
}
