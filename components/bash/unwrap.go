package bash

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// optSpec describes a wrapper's command-line options as the program reads
// them (getopt_long, for most), enough to find the command it runs. The
// lists are complete: an option they do not have makes what the wrapper
// runs unknown, since it may take the next word as its value and so move
// the command (parseOpts reports it in optResult.unknown). That includes a
// long option written shorter than its name: getopt takes any unique
// prefix, and which prefixes are unique depends on the version installed.
type optSpec struct {
	short      string // short options, as getopt's optstring has them: "k:s:v" (':' takes a value, "::" an optional value, attached only)
	long       string // long options: "kill-after= signal= verbose" ('=' takes a value, "[=]" an optional value, after '=' only)
	stop       string // options after which no command runs: "-l --list"
	capture    string // options whose value is returned: "-c --command"
	positional int    // words after the options before the command (timeout's DURATION)
	number     bool   // the positional word is there only when it is a number (chrt's priority, optional since util-linux 2.42)
	oneWord    bool   // a long option is one word (--name, --name=value), never taking the next: one missing here cannot move the command (valgrind, firejail and chronic)
	nopt       bool   // npm's parser: a flag takes a following "true" or "false" as its value
	npmShort   bool   // npm's parser: a word of one dash is letters alone, only the last taking a value, from the next word
	assigns    bool   // NAME=value words may follow (env, sudo)
	numeric    bool   // -N, --N and -+N are options (nice -10)
	dash       bool   // "-" alone is an option (env -)
	arch       bool   // a first word that is not an option comes before them (setarch ARCH)
	permute    bool   // options may follow other words, as GNU getopt reads them (su, script)
	interleave bool   // options may follow the positional words too, up to the command, and "--" may end them there (clap: rustup run)
	shell      bool   // given no command, it starts a shell that reads standard input (setarch)
}

type captured struct {
	name string // the option, "-c" or "--call"
	val  Word
	at   int // index of the word holding the value
}

type optResult struct {
	cmd     int // index of the command's first word; len(ws) when none
	assigns []Assign
	stop    bool
	caps    []captured
	args    []int // with permute: the words that are not options, in order
	unknown int   // index of the first word holding an option the spec does not list; 0 when none
}

// What an option takes.
const (
	argNone     = iota
	argRequired // a value: attached, or the next word
	argOptional // a value only if attached (-i{}, --replace=R)
)

// shortArg finds c among sp's short options.
func (sp optSpec) shortArg(c byte) (arg int, ok bool) {
	i := strings.IndexByte(sp.short, c)
	if i < 0 || c == ':' {
		return argNone, false
	}
	switch rest := sp.short[i+1:]; {
	case strings.HasPrefix(rest, "::"):
		return argOptional, true
	case strings.HasPrefix(rest, ":"):
		return argRequired, true
	}
	return argNone, true
}

// longArg finds name, written in full, among sp's long options.
func (sp optSpec) longArg(name string) (arg int, ok bool) {
	for f := range strings.FieldsSeq(sp.long) {
		arg := argNone
		if n, cut := strings.CutSuffix(f, "[=]"); cut {
			f, arg = n, argOptional
		} else if n, cut := strings.CutSuffix(f, "="); cut {
			f, arg = n, argRequired
		}
		if f == name {
			return arg, true
		}
	}
	return argNone, false
}

// lists reports whether the space-separated list holds opt.
func lists(list, opt string) bool {
	for f := range strings.FieldsSeq(list) {
		if f == opt {
			return true
		}
	}
	return false
}

// assignRE matches the NAME= that env and sudo take for an assignment:
// env takes any word with '=' before the command, odd names included
// (BASH_FUNC_ls%%=... defines a function for a bash it runs).
var assignRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^=/]+=`) })

// numericOpt matches nice's -N, --N and -+N.
var numericOpt = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[-+]?[0-9]`) })

// parseOpts reads a wrapper's options from ws[1:]. It stops at the first
// word that is not an option; a word that is not a literal where an
// option may stand, or that may split into several where a value
// stands, ends the options too and so becomes the command word: what
// runs is then unknown. So does an option sp does not list, which
// r.unknown names. With sp.permute it reads on past the words that are
// not options (r.args) up to "--", and r.cmd is len(ws), or the first
// word it cannot read: one that is not a literal where an option may
// stand, or a value that may split; past an option it does not know it
// reads on too, the option's value being taken for an argument.
func parseOpts(ws []Word, sp optSpec) optResult {
	r := optResult{cmd: len(ws)}
	i, pos := 1, 0 // pos: the positional words read among the options (interleave)
	if sp.arch && len(ws) > 1 && ws[1].Literal && !strings.HasPrefix(ws[1].Text, "-") {
		i = 2
	}
	value := func(j int) bool { // ws[j] is a value: it must exist and be one field
		return j < len(ws) && ws[j].single
	}
	capture := func(opt string, v Word, at int) {
		if lists(sp.capture, opt) {
			r.caps = append(r.caps, captured{opt, v, at})
		}
	}
	unknown := func() bool { // reports whether to stop reading
		if r.unknown == 0 {
			r.unknown = i
		}
		if !sp.permute {
			r.cmd = i
		}
		return !sp.permute
	}
options:
	for i < len(ws) {
		w := ws[i]
		if !w.Literal {
			if !sp.permute {
				r.cmd = i
				return r
			}
			if w.mayBeOption() && r.cmd == len(ws) {
				r.cmd = i // and read on: what follows still counts
			}
			r.args = append(r.args, i)
			i++
			continue
		}
		t := w.Text
		next := i + 1
		switch {
		case t == "--":
			i++
			break options
		case t == "-" && sp.dash:
		case sp.numeric && numericOpt().MatchString(t):
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			arg, ok := sp.longArg(name)
			if !ok && !sp.oneWord {
				if unknown() {
					return r
				}
				break
			}
			if lists(sp.stop, "--"+name) {
				r.stop = true
			}
			switch {
			case eq:
				capture("--"+name, lit(val), i)
			case arg == argRequired:
				if !value(next) {
					r.cmd = min(next, len(ws))
					return r
				}
				capture("--"+name, ws[next], next)
				next++
			case arg == argOptional:
				capture("--"+name, lit(""), i)
			case sp.nopt && next < len(ws) && ws[next].Literal && (ws[next].Text == "true" || ws[next].Text == "false"):
				next++
			}
		case len(t) > 1 && t[0] == '-':
			if sp.npmShort && !npmGroup(t, sp) {
				// nopt gives -X=VALUE's VALUE to the group before it, and
				// takes a group with a letter it does not know, or a
				// value letter before the last (-cy, -ctrue), for a
				// setting of that name (a seventeenth hunt: npx -cy rm
				// -rf src ran rm, npx -ctrue its shell on standard input).
				if unknown() {
					return r
				}
				break
			}
			for j := 1; j < len(t); j++ {
				c := t[j]
				arg, ok := sp.shortArg(c)
				if !ok {
					if unknown() {
						return r
					}
					break
				}
				opt := "-" + string(c)
				if lists(sp.stop, opt) {
					r.stop = true
				}
				if arg == argNone {
					continue
				}
				switch {
				case j+1 < len(t):
					capture(opt, lit(t[j+1:]), i)
				case arg == argOptional:
					capture(opt, lit(""), i)
				default:
					if !value(next) {
						r.cmd = min(next, len(ws))
						return r
					}
					capture(opt, ws[next], next)
					next++
				}
				break // the rest of the word, or the next word, was the value
			}
		default:
			if sp.interleave && pos < sp.positional {
				// clap reads options on past a positional word until the
				// command's first word (a fifteenth hunt: rustup run
				// stable --install rm -rf src, and -- there, ran rm).
				pos++
				break
			}
			if !sp.permute {
				break options
			}
			r.args = append(r.args, i)
		}
		i = next
	}
	if sp.permute {
		for ; i < len(ws); i++ {
			r.args = append(r.args, i)
		}
		return r
	}
	for k := pos; k < sp.positional && i < len(ws); k++ {
		if !ws[i].single {
			r.cmd = i
			return r
		}
		if sp.number && strings.Trim(ws[i].Text, "0123456789") != "" {
			if !ws[i].Literal {
				r.cmd = i // a priority or the command: known only at run time
				return r
			}
			break
		}
		i++
	}
	if sp.assigns {
		for i < len(ws) && assignRE().MatchString(ws[i].lead) {
			if !ws[i].single {
				r.cmd = i
				return r
			}
			name, val, _ := strings.Cut(ws[i].Text, "=")
			v := ws[i]
			v.Text = val
			v.lead = strings.TrimPrefix(v.lead, name+"=")
			r.assigns = append(r.assigns, Assign{Name: name, Value: v})
			i++
		}
	}
	r.cmd = i
	return r
}

// npmGroup reports whether npm's parser reads the word of one dash t as
// getopt does: letters alone, sp's each, none but the last taking a
// value.
func npmGroup(t string, sp optSpec) bool {
	for j := 1; j < len(t); j++ {
		arg, ok := sp.shortArg(t[j])
		if !ok || arg != argNone && j < len(t)-1 {
			return false
		}
	}
	return true
}

// unknownOpt marks c, the wrapper name, as running what is known only at
// run time when its word at holds an option the wrapper's table does not
// list (at > 0), as a word that is not a literal there does; it reports
// whether it did.
func unknownOpt(c *SimpleCommand, name string, at int) bool {
	if at <= 0 || at >= len(c.Words) {
		return false
	}
	if c.Dynamic == nil {
		c.Dynamic = &Opaque{At: at, Why: name + " is given " + quotedWord(c.Words[at].Text) + ", which is not one of its options as the analyzer knows them " +
			"(getopt also takes an abbreviation, and an option may take the next word as its value): what " + name + " runs is known only at run time"}
	}
	return true
}

// set makes a table of names. The package's tables are each made on
// first use (sync.OnceValue), as its regular expressions are: every
// launcher process links this package, and one that analyzes no command
// line does not build them as it starts.
func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// The tables below are each program's options in full, read from its
// source or --help (coreutils 9.1 and 9.7, util-linux 2.38 to 2.42,
// findutils 4.9, sudo 1.9.13, strace 6.1 and later, procps-ng 4, systemd
// 252 and later, numactl 2.0.19, ltrace 0.7.3, libcgroup 3, uv's CLI
// reference, npm, bun and yarn's documentation), the union where
// versions differ. Where versions disagree on whether an option takes a
// value (ltrace --debug), it is left out, so that it needs approval.

// archSpec is setarch's (util-linux): setarch ARCH [options] [CMD], or
// linux64 [options] [CMD] and the like (archNames), the name being the
// architecture; with no command it runs /bin/sh.
var archSpec = optSpec{
	short: "3BFhILRSTvVXZ",
	long: "32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize whole-seconds sticky-timeouts read-implies-exec " +
		"mmap-page-zero 3gb 4gb uname-2.6 verbose list show[=] help version",
	stop:  "-h --help -V --version --list --show",
	shell: true,
}

// archNames are the architectures setarch knows (util-linux), which are
// also names it runs as, through links to it: linux64 CMD is setarch
// linux64 CMD.
var archNames = []string{
	"uname26", "linux32", "linux64", "i386", "i486", "i586", "i686", "athlon", "x86_64", "ia64",
	"ppc", "ppc32", "ppc64", "ppcle", "ppc32le", "ppc64le", "ppc64pseries", "ppc64iseries",
	"s390", "s390x", "sparc", "sparc32", "sparc32bash", "sparc64", "mips", "mips32", "mips64",
	"parisc", "parisc32", "parisc64", "alpha", "alphaev5", "alphaev56", "alphaev6", "alphaev67",
	"aarch64", "armv7l", "armv8l", "riscv64",
}

// suSpec is su's and runuser's (util-linux su-common.c): -c and
// --session-command are the shell's string, -s its program, runuser -u
// the user to run the command as.
var suSpec = optSpec{
	short: "c:fg:G:lmpPs:u:hVw:",
	long: "command= session-command= fast login preserve-environment pty shell= group= supp-group= user= " +
		"whitelist-environment= help version",
	capture: "-c --command --session-command -s --shell -u --user",
	stop:    "-h --help -V --version",
	dash:    true, permute: true,
}

// npmExec is npm exec's: its own options and the npm settings most given
// to it (npm takes any of its settings here; the others need approval).
// Its command runs through the script shell, which --script-shell names
// and --userconfig's file may: both are left out (a fifteenth hunt: npm
// exec --script-shell=./x -- ls ran ./x). Given no command (nor -c), it
// runs the script shell on standard input when that is not a terminal.
var npmExec = optSpec{
	short: "c:dghp:qsvw:y",
	long: "package= call= workspace= workspaces include-workspace-root yes no loglevel= registry= prefix= cache= " +
		"silent quiet offline prefer-offline prefer-online global help version",
	capture: "-c --call",
	stop:    "-h --help -v --version",
	nopt:    true, npmShort: true, shell: true,
}

// npx's are npm exec's and the old npx's --no-install; npx puts "--"
// before the first word that is not an option or a value, so a "true"
// or "false" there is the command. The old npx's --shell, which npx
// may take as --script-shell, is left out.
var npx = sync.OnceValue(func() optSpec {
	sp := npmExec
	sp.long += " no-install"
	sp.nopt = false
	return sp
})

// uvRun is uv run's and uv tool run's (uvx) options: those two share most
// of them, and one only the other has takes a value in both or is refused.
var uvRun = optSpec{
	short: "b:C:c:f:hi:mnP:p:qsUvVw:",
	long: "active all-extras all-groups all-packages allow-insecure-host= trusted-host= build-constraints= build-constraint= " +
		"cache-dir= color= compile-bytecode compile config-file= config-setting= config-settings= config-settings-package= " +
		"constraints= constraint= default-index= dev directory= env-file= exact exclude-newer= exclude-newer-package= extra= " +
		"extra-index-url= find-links= fork-strategy= from= frozen group= gui-script help index= index-strategy= index-url= " +
		"isolated keyring-provider= lfs link-mode= locked managed-python module native-tls no-binary no-binary-package= " +
		"no-build no-build-isolation no-build-isolation-package= no-build-package= no-cache no-cache-dir no-config " +
		"no-default-groups no-dev no-editable no-env-file no-extra= no-group= no-index no-managed-python no-progress " +
		"no-project no_workspace no-python-downloads no-sources no-sources-package= no-sync offline only-dev only-group= " +
		"overrides= override= package= prerelease= project= python= python-platform= quiet refresh refresh-package= " +
		"reinstall force-reinstall reinstall-package= resolution= script system-certs torch-backend= upgrade " +
		"upgrade-group= upgrade-package= verbose version with= with-editable= with-requirements=",
	stop: "-h --help -V --version",
}

// wrappers are the commands that run another command given as their
// remaining words, with their options; su, runuser, script, sg and newgrp
// run a shell (see su and sg).
var wrappers = sync.OnceValue(func() map[string]optSpec {
	m := map[string]optSpec{
		// sudo reads -h HOST when a word not starting with '-' follows,
		// else -h is its help: taken here as always taking a value.
		"sudo": {
			short: "Aa:BbC:c:D:Eeg:Hh:iKklNnPp:R:r:SsT:t:U:u:Vv",
			long: "askpass auth-type= background bell close-from= login-class= chdir= preserve-env[=] edit group= set-home help " +
				"host= login remove-timestamp reset-timestamp list no-update non-interactive preserve-groups prompt= chroot= role= " +
				"stdin shell type= command-timeout= other-user= user= version validate",
			stop:    "-e --edit -l --list -v --validate -V --version -K --remove-timestamp --help",
			assigns: true,
		},
		"doas": {short: "C:Lnsu:", stop: "-C -L"},
		// env's short options include the white space a shebang line's
		// -S string may leave.
		"env": {
			short: "a:C:iS:u:v0 \t\n\v\f\r",
			long: "argv0= ignore-environment null unset= chdir= default-signal[=] ignore-signal[=] block-signal[=] " +
				"list-signal-handling debug split-string= help version",
			capture: "-S --split-string",
			stop:    "--help --version",
			assigns: true, dash: true,
		},
		"command": {short: "pvV", long: "help", stop: "-v -V --help"},
		"builtin": {long: "help", stop: "--help"},
		"exec":    {short: "cla:", long: "help", stop: "--help"},
		"nice":    {short: "n:", long: "adjustment= help version", stop: "--help --version", numeric: true},
		"nohup":   {long: "help version", stop: "--help --version"},
		"timeout": {
			short: "fk:ps:v", long: "foreground kill-after= preserve-status signal= verbose help version",
			stop: "--help --version", positional: 1,
		},
		"stdbuf": {short: "i:o:e:", long: "input= output= error= help version", stop: "--help --version"},
		"ionice": {
			short: "c:n:p:P:u:thV", long: "class= classdata= pid= pgid= uid= ignore help version",
			stop: "-p -P -u --pid --pgid --uid -h --help -V --version",
		},
		"chrt": {
			short: "abdD:efhimoP:pRrT:vV",
			long: "all-tasks batch deadline ext fifo idle pid help max other rr sched-runtime= sched-period= sched-deadline= " +
				"reset-on-fork verbose version",
			stop:       "-p --pid -m --max -h --help -V --version",
			positional: 1, number: true,
		},
		"setsid": {short: "cfwhV", long: "ctty fork wait help version", stop: "-h --help -V --version"},
		// GNU time: -h is not in its optstring (it prints usage and
		// exits); --output is its help's spelling of --output-file.
		"time": {
			short: "af:ho:pqvV", long: "append format= help output-file= output= portability quiet verbose version",
			stop: "-h --help -V --version",
		},
		"xargs": {
			short: "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
			long: "null arg-file= delimiter= eof[=] replace[=] max-lines[=] max-args= open-tty interactive no-run-if-empty " +
				"max-chars= verbose show-limits exit max-procs= process-slot-var= help version",
			capture: "-I -i --replace --process-slot-var",
			stop:    "--help --version",
		},
		"npx":  npx(),
		"bunx": {short: "hp:", long: "bun package= no-install verbose silent help", stop: "-h --help"},
		"uvx":  uvRun,
		// flock FILE -c COMMAND is read by flock itself; --nonblock is its
		// help's spelling of --nonblocking.
		"flock": {
			short: "sexnoFuw:E:hV?",
			long: "shared exclusive unlock nonblocking nonblock nb timeout= wait= conflict-exit-code= close no-fork verbose fcntl " +
				"help version",
			stop: "-h -? --help -V --version", positional: 1,
		},
		"taskset": {
			short: "apchV", long: "all-tasks pid cpu-list help version",
			stop: "-p --pid -h --help -V --version", positional: 1,
		},
		// prlimit's optstring has v twice; getopt takes the first, --as.
		"prlimit": {
			short: "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:Vh",
			long: "pid= output= as[=] core[=] cpu[=] data[=] fsize[=] locks[=] memlock[=] msgqueue[=] nice[=] nofile[=] nproc[=] " +
				"rss[=] rtprio[=] rttime[=] sigpending[=] stack[=] noheadings raw verbose help version",
			stop: "-p --pid -h --help -V --version",
		},
		"strace": {
			short: "a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ",
			long: "columns= output-append-mode detach-on= summary-only summary debug daemonize[=] daemonise[=] daemonised[=] " +
				"daemonized[=] env= follow-forks output-separately help instruction-pointer interruptible= kill-on-exit " +
				"stack-trace[=] stack-traces[=] stack-trace-frame-limit= syscall-limit= syscall-number output= " +
				"summary-syscall-overhead= attach= trace-path= relative-timestamps[=] string-limit= summary-sort-by= " +
				"absolute-timestamps[=] timestamps[=] syscall-times[=] user= summary-columns= no-abbrev version " +
				"summary-wall-clock strings-in-hex[=] const-print-style= pidns-translation successful-only failed-only " +
				"failing-only seccomp-bpf tips[=] argv0= trace= trace-fds= abbrev= verbose= raw= signal= signals= status= " +
				"read= write= fault= inject= kvm= quiet[=] silent[=] silence[=] decode-fds[=] decode-pids= secontext[=]",
			capture: "-o --output -E --env",
			stop:    "-h --help -V --version",
		},
		"ltrace": {
			short: "a:A:bcCdD:e:fF:ghiLl:n:o:p:rs:StTu:Vw:x:X:",
			long:  "align= config= demangle indent= help library= output= version no-signals no-plt where=",
			stop:  "-h --help -V --version",
		},
		"numactl": {
			short: "ai:w:p:P:c:N:C:m:slbHS:f:o:L:tM:dDI:uTV",
			long: "all interleave= weighted-interleave= preferred= preferred-many= cpubind= cpunodebind= physcpubind= membind= " +
				"show localalloc balancing hardware shm= file= offset= length= strict shmmode= dump dump-nodes shmid= huge touch " +
				"cpu-compress verify version",
			stop: "-s --show -H --hardware -S --shm -f --file --version",
		},
		"setpriv": {
			short: "dhV",
			long: "dump nnp no-new-privs inh-caps= ambient-caps= list-caps ruid= euid= rgid= egid= reuid= regid= clear-groups " +
				"keep-groups init-groups groups= bounding-set= securebits= pdeathsig= ptracer= selinux-label= apparmor-profile= " +
				"landlock-access= landlock-rule= seccomp-filter= reset-env help version",
			stop: "-d --dump --list-caps -h --help -V --version",
		},
		"systemd-run": {
			short: "hrC:H:M:E:p:tTPqvGdSRu:",
			long: "help version user system capsule= scope unit= description= slice= slice-inherit remain-after-exit " +
				"expand-environment= send-sighup host= machine= service-type= wait uid= gid= nice= setenv= property= tty pty " +
				"pty-late pipe quiet verbose on-active= on-boot= on-startup= on-unit-active= on-unit-inactive= on-calendar= " +
				"on-timezone-change on-clock-change timer-property= path-property= socket-property= no-block no-ask-password " +
				"collect working-directory= same-dir root-directory= same-root-dir shell job-mode= ignore-failure background= " +
				"no-pager json=",
			capture: "-E --setenv -p --property --timer-property --path-property --socket-property",
			stop:    "-h --help --version", shell: true,
		},
		"cgexec": {short: "bg:hrs", long: "sticky help", stop: "-h --help"},
		// firejail and valgrind take --name=value only, and stop at a long
		// option they do not know; their short options are listed.
		"firejail": {short: "?", long: "help version list tree top", stop: "-? --help --version --list --tree --top", oneWord: true, shell: true},
		"valgrind": {short: "dhqv", long: "help help-debug help-dyn-options version", stop: "-h --help --help-debug --help-dyn-options --version", oneWord: true},
		// catchsegv (a glibc script) takes --help or --version alone.
		"catchsegv": {long: "help version", stop: "--help --version"},
		// chronic reads -e and -v with Perl's Getopt::Std, which takes no
		// value for them and only warns about other letters.
		"chronic": {short: "ev", long: "help version", stop: "--help --version", oneWord: true},
		// unbuffer takes -p; Expect's spawn reads any other flag (see simple).
		"unbuffer": {short: "p"},
		"busybox":  {long: "help list list-full install show", stop: "--help --list --list-full --install --show"},
		"toybox":   {long: "help version long", stop: "--help --version --long"},
		"su":       suSpec,
		"runuser":  suSpec,
		"script": {
			short: "aB:c:eE:fI:O:o:qm:T:t::Vh",
			long: "append command= echo= return flush force log-in= log-out= log-io= log-timing= logging-format= output-limit= " +
				"quiet timing[=] version help",
			capture: "-c --command",
			stop:    "-h --help -V --version",
			permute: true,
		},
		// shadow's sg and newgrp take "-" and nothing else.
		"sg":     {dash: true, positional: 1},
		"newgrp": {dash: true},
		// gosu USER CMD reads --help and --version (and -h, -v) only as its
		// first word; su-exec USER CMD reads no option at all.
		"gosu":    {short: "hv", long: "help version", stop: "-h --help -v --version", positional: 1},
		"su-exec": {positional: 1},
		// pkexec (polkit) compares each word with its five options until
		// one is not; with no program it runs root's shell.
		"pkexec": {short: "u:", long: "user= keep-cwd disable-internal-agent help version", stop: "--help --version", shell: true},
		// fakeroot's script: GNU getopt(1) with +l:f:i:s:ub:vh and these
		// long options; with no command it runs $SHELL.
		"fakeroot": {short: "l:f:i:s:ub:vh", long: "lib= faked= unknown-is-real fd-base= version help", stop: "-v --version -h --help", shell: true},
		// proxychains-ng reads at most two of -q and -f FILE, each a word
		// of its own (proxychainsOpts); proxychains 3 reads -f FILE.
		"proxychains":      {short: "qf:"},
		"proxychains4":     {short: "qf:"},
		"dbus-run-session": {long: "dbus-daemon= config-file= help version", stop: "--help --version"},
		// choom (util-linux) -n N [--] CMD; -p PID runs nothing.
		"choom": {short: "n:p:hV", long: "adjust= pid= help version", stop: "-p --pid -h --help -V --version", permute: true}, // GNU getopt: choom rm src -- -r runs rm src -r (a hunt)
		// ssh-agent (OpenSSH 9) [options] [CMD ARG...]; -k, -D and -d
		// run no command, which is read as if they did.
		"ssh-agent": {short: "a:cDdE:kO:P:st:"},
		// The dynamic loader run as a program (ld.so, ld-linux-x86-64.so.2
		// and the like by any system path: loaderName) runs its first
		// word with the rest (a fourteenth hunt: ld.so /bin/rm -rf src).
		// --preload, --audit, --library-path and --glibc-hwcaps-prefix
		// load other code: they are left out, so need approval.
		"ld.so": {
			long: "list verify inhibit-cache inhibit-rpath= argv0= glibc-hwcaps-mask= list-tunables list-diagnostics help version",
			stop: "--list --verify --list-tunables --list-diagnostics --help --version",
		},
		// bear (3) [options] -- CMD records a build's compiler calls; its
		// --config, --library and --wrapper name what it loads and runs,
		// and are left out (a fourteenth hunt: bear -- rm -rf src).
		"bear": {long: "output= append force-preload force-wrapper verbose help version", stop: "--help --version"},
	}
	for _, n := range archNames {
		m[n] = archSpec
	}
	sp := archSpec
	sp.arch = true
	m["setarch"] = sp
	// Debian's fakeroot is an alternative for these two, the same script
	// with another daemon (an H6 hunt: fakeroot-tcp rm -rf src ran unseen).
	m["fakeroot-sysv"], m["fakeroot-tcp"] = m["fakeroot"], m["fakeroot"]
	return m
})

// runnerNames are the programs and the subcommand names of runners.
var runnerNames = sync.OnceValues(func() (programs, subs map[string]bool) {
	programs, subs = map[string]bool{}, map[string]bool{}
	for k := range runners() {
		programs[k[0]], subs[k[1]] = true, true
	}
	return programs, subs
})

// runners are subcommands that run the command in their remaining
// words: "npm exec prettier", "uv run twine upload". pnpm passes the
// words after exec and dlx to the command unread, and yarn those after
// exec: an option there is not one of theirs.
var runners = sync.OnceValue(func() map[[2]string]optSpec {
	return map[[2]string]optSpec{
		{"npm", "exec"}:  npmExec,
		{"npm", "x"}:     npmExec,
		{"pnpm", "exec"}: {},
		{"pnpm", "dlx"}:  {},
		{"yarn", "exec"}: {},
		{"yarn", "dlx"}:  {short: "hp:q", long: "package= quiet help", stop: "-h --help"},
		{"uv", "run"}:    uvRun,
		{"poetry", "run"}: {
			short: "C:hnP:qvV", long: "ansi directory= help no-ansi no-cache no-interaction no-plugins project= quiet verbose version",
			stop: "-h --help -V --version",
		},
		{"pipenv", "run"}: {short: "hqv", long: "clear help pypi-mirror= python= quiet system verbose", stop: "-h --help"},
		{"pipx", "run"}: {
			short: "ehi:qv",
			long: "backend= editable fetch-missing-python help index-url= no-cache path pip-args= pypackages python= quiet spec= " +
				"system-site-packages verbose",
			stop: "-h --help",
		},
		{"bundle", "exec"}: {short: "r:V", long: "gemfile= keep-file-descriptors no-color retry= verbose"},
		{"pdm", "run"}: {
			short: "ghjlp:qsv", long: "global help json list project= quiet recreate site-packages skip= venv= verbose",
			stop: "-h --help -j --json -l --list",
		},
		{"hatch", "run"}: {short: "h", long: "help", stop: "-h --help"},
		// A fourteenth hunt, each ran rm -rf src unseen: npm's exe (npm
		// takes any unique prefix of its commands: exe is exec), yarn run
		// (a script's name, or any program: what it names is analysed as
		// a command, a script's name being a program the analyzer does
		// not know), rustup run TOOLCHAIN CMD, the version managers' exec,
		// volta run (its --env is left out: it sets the command's
		// environment), conda and mamba run (--cwd is left out: it moves
		// where the command works).
		{"npm", "exe"}:  npmExec,
		{"yarn", "run"}: {},
		{"rustup", "run"}: {
			short: "h", long: "install help", stop: "-h --help", positional: 1, interleave: true,
		},
		{"pyenv", "exec"}:  {},
		{"rbenv", "exec"}:  {},
		{"nodenv", "exec"}: {},
		{"goenv", "exec"}:  {},
		{"plenv", "exec"}:  {},
		{"jenv", "exec"}:   {},
		{"asdf", "exec"}:   {},
		{"volta", "run"}: {
			short: "h", long: "node= npm= pnpm= yarn= bundled-npm no-yarn no-pnpm verbose quiet help", stop: "-h --help",
		},
		{"conda", "run"}: {
			short: "hn:p:v", long: "name= prefix= dev debug-wrapper-scripts no-capture-output live-stream verbose help", stop: "-h --help",
		},
		{"mamba", "run"}: {
			short: "hn:p:v", long: "name= prefix= dev debug-wrapper-scripts no-capture-output live-stream verbose help", stop: "-h --help",
		},
		// A fifteenth hunt: micromamba run is mamba's (its -e NAME=VALUE,
		// --cwd and the rest left out); asdf env CMD [UTIL ARG...] runs
		// UTIL (env when none) in CMD's environment.
		{"micromamba", "run"}: {
			short: "hn:p:v", long: "name= prefix= dev debug-wrapper-scripts no-capture-output live-stream verbose help", stop: "-h --help",
		},
		{"asdf", "env"}: {positional: 1},
		// A sixteenth hunt: bun run runs a script or, when there is none,
		// any program of the PATH (bun run rm -rf src ran rm); a file of
		// JavaScript or TypeScript it runs itself (bunScript). --cwd,
		// --filter, --env-file, --preload, --shell and the rest are left
		// out: they move where it runs, or set what the command loads.
		{"bun", "run"}: {short: "bh", long: "bun silent if-present watch hot no-clear-screen smol no-install help", stop: "-h --help"},
	}
})

// pmCommands are pnpm's and yarn's own commands (the union of pnpm 8 to
// 10 and yarn 1 and 4, with their aliases). Given any other word as its
// command, pnpm runs the script of that name or, when there is none, the
// program (as pnpm exec does: a sixteenth hunt, pnpm bash -c CMD ran
// CMD), and yarn the script or a dependency's program (as yarn run
// does): that word is analysed as a command, as yarn run's is. pnpm's
// env and find are left out: analysed as a command, env use --global 20
// and find x are what they would be, and a pnpm that has not the
// command runs the program.
var pmCommands = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"pnpm": set("add", "approve-builds", "audit", "bin", "cache", "cat-file", "cat-index", "ci", "clean", "clean-install",
			"completion", "config", "c", "create", "dedupe", "deploy", "dlx", "doctor", "exec", "fetch", "find-hash", "get", "help",
			"i", "ignored-builds", "import", "init", "install", "install-test", "it", "licenses", "link", "ln", "list", "ls", "ll",
			"la", "outdated", "pack", "patch", "patch-commit", "patch-remove", "peers", "prune", "publish", "purge", "rb",
			"rebuild", "recursive", "multi", "m", "remove", "rm", "uninstall", "un", "uni", "restart", "root", "run", "run-script",
			"runtime", "sbom", "self-update", "server", "set", "setup", "start", "store", "t", "tst", "test", "unlink", "dislink",
			"up", "update", "upgrade", "version", "why", "with",
			// Those pnpm answers as not implemented.
			"access", "adduser", "bugs", "deprecate", "dist-tag", "docs", "edit", "home", "info", "issues", "login", "logout",
			"owner", "ping", "prefix", "profile", "pkg", "repo", "s", "se", "search", "set-script", "show", "star", "stars", "team",
			"token", "undeprecate", "unpublish", "unstar", "v", "view", "whoami", "xmas"),
		"yarn": set("access", "add", "audit", "autoclean", "bin", "cache", "check", "config", "constraints", "create", "dedupe",
			"dlx", "exec", "explain", "generate-lock-entry", "global", "help", "import", "info", "init", "install", "licenses",
			"link", "list", "login", "logout", "node", "npm", "outdated", "owner", "pack", "patch", "patch-commit", "plugin",
			"policies", "publish", "rebuild", "remove", "run", "set", "stage", "tag", "team", "test", "unlink", "unplug", "up",
			"upgrade", "upgrade-interactive", "version", "versions", "why", "workspace", "workspaces"),
	}
})

// pmGlobals are the global options of pnpm and yarn, those most given
// before the command (pnpm -r build, pnpm --filter web add x, yarn --cwd
// web add x): with them read, the command is known. pnpm's recursive,
// multi and m are its -r.
var pmGlobals = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"pnpm": {
			short: "C:F:hrsvw",
			long: "dir= prefix= filter= filter-prod= recursive silent reporter= loglevel= workspace-root include-workspace-root " +
				"stream aggregate-output use-stderr fail-if-no-match ignore-workspace help version",
			stop: "-h --help -v --version",
		},
		"yarn": {
			short: "hsv",
			long:  "cwd= silent verbose offline prefer-offline frozen-lockfile json no-progress ignore-engines help version",
			stop:  "-h --help -v --version",
		},
	}
})

// pmSub is the index of pnpm's or yarn's command given options before
// it, read with pmGlobals; 0 when it is not known (an option the table
// does not list, a word that is not a literal).
func pmSub(ws []Word, name string) int {
	sp, ok := pmGlobals()[name]
	if !ok {
		return 0
	}
	ws = slices.Clone(ws)
	for i := 1; i < len(ws); i++ {
		if w := ws[i]; name == "pnpm" && w.Literal && (w.Text == "recursive" || w.Text == "multi" || w.Text == "m") {
			ws[i] = lit("-r")
		} else if !w.isOpt() {
			break
		}
	}
	if r := parseOpts(ws, sp); r.unknown == 0 && !r.stop && r.cmd < len(ws) && ws[r.cmd].Literal {
		return r.cmd
	}
	return 0
}

// bunScript reports a file bun run runs itself, by its name: JavaScript
// or TypeScript.
func bunScript(t string) bool {
	switch path.Ext(t) {
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return true
	}
	return false
}

// runnerAliases are other spellings of a runner, with the words each
// stands for (a fifteenth hunt, each ran rm -rf src unseen): pnpx is
// pnpm dlx, bun x is bunx, uv tool run is uvx, hatch env run is hatch
// run.
var runnerAliases = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"pnpx": {"pnpm", "dlx"}, "bun x": {"bunx"}, "uv tool run": {"uvx"}, "hatch env run": {"hatch", "run"},
	}
})

// opaqueSubs are subcommands that run a command made of their words or
// options, or a project's environment hooks, and are not unwrapped:
// what they run needs approval (a fourteenth hunt: mise exec -- rm -rf
// src; nix develop runs a shellHook and -c CMD). A subcommand is any of
// the words that may be one (cands).
var opaqueSubs = sync.OnceValue(func() map[string][]string {
	// A fifteenth hunt: mise en starts a shell (-s SHELL, or $SHELL on
	// standard input); bun exec runs its string in Bun's own shell.
	// A sixteenth hunt, each ran rm -rf src or would: pixi run (a task
	// or a command, through its own shell) and exec, devbox run, fnm
	// exec, tox exec (e), lerna and nx exec, the secret managers' run
	// and exec (op, doppler, infisical, dotenvx, aws-vault, chamber,
	// sops exec-env and exec-file), foreman's and honcho's run, ip netns
	// exec, cargo watch (-s, -x); and the shells of pixi, devbox,
	// poetry, pipenv and hatch, which read standard input. A
	// seventeenth: flatpak enter and build run their words in a sandbox.
	return map[string][]string{
		"mise": {"exec", "x", "en"}, "rtx": {"exec", "x", "en"}, "nix": {"develop", "shell", "run"}, "bun": {"exec"},
		"pixi": {"run", "r", "exec", "x", "shell", "s"}, "devbox": {"run", "shell"}, "fnm": {"exec"}, "tox": {"exec", "e"},
		"lerna": {"exec"}, "nx": {"exec"}, "poetry": {"shell"}, "pipenv": {"shell"}, "hatch": {"shell"},
		"op": {"run"}, "doppler": {"run"}, "infisical": {"run"}, "dotenvx": {"run"}, "aws-vault": {"exec"},
		"chamber": {"exec"}, "sops": {"exec-env", "exec-file"}, "foreman": {"run", "start"}, "honcho": {"run", "start"},
		"ip": {"netns"}, "cargo": {"watch"}, "flatpak": {"enter", "build"},
	}
})

// valgrindTools are the tools valgrind ships.
var valgrindTools = sync.OnceValue(func() map[string]bool {
	return set("memcheck", "cachegrind", "callgrind", "helgrind", "drd", "massif", "dhat", "lackey", "none", "exp-bbv", "exp-dhat",
		"exp-sgcheck")
})

// compilerWrappers run the compiler named by their first word (ccache
// gcc -c x.c): it is unwrapped, so that its options are read (a
// fourteenth hunt: ccache gcc -B./ ran the workspace's as). Given an
// option first, ccache and sccache run nothing (ccache -s), and distcc
// and icecc, but for their own, compile with cc; ccache's KEY=VALUE
// settings (prefix_command, compiler_check) may name a program.
var compilerWrappers = sync.OnceValue(func() map[string]bool {
	return set("ccache", "sccache", "distcc", "icecc")
})

// compilerWrapperOwn are the options with which distcc and icecc run
// no compiler.
var compilerWrapperOwn = sync.OnceValue(func() map[string]bool {
	return set("--help", "--version", "--show-hosts", "-j", "--show-principal", "--build-native")
})

// corepackTools are the programs corepack runs by name (corepack
// pnpm@8 exec CMD is pnpm exec CMD: a fourteenth hunt).
var corepackTools = sync.OnceValue(func() map[string]bool {
	return set("npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg")
})

// opaqueRunners run a command made of their words or options, and are
// not unwrapped: what they run needs approval (capsh -- -c CMD, gdb
// --args, a hunt's; the others are of the same kind).
var opaqueRunners = sync.OnceValue(func() map[string]bool {
	return set("capsh", "gdb", "lldb", "chpst", "faketime", "torsocks", "torify", "tsocks", "rr", "eatmydata",
		"nocache", "trickle", "cpulimit", "rlwrap", "xvfb-run", "dbus-launch", "sshpass", "runcon", "bwrap", "minijail0",
		"nsjail", "schroot", "systemd-nspawn", "systemd-inhibit", "systemd-cat", "tini", "dumb-init", "setuidgid",
		"envuidgid", "envdir", "softlimit", "setlock", "expect", "tmux", "screen", "hyperfine", "entr", "watchexec",
		"nodemon", "concurrently", "cross-env", "dotenv", "direnv", "run-parts", "run-one", "lckdo", "with-lock-ex",
		"ifne", "pee", "perf", "heaptrack", "ddd", "cgdb", "at", "batch", "daemonize", "start-stop-daemon", "flatpak-spawn",
		"toolbox", "distrobox", "s6-setuidgid", "logsave", "uclampset", "enosys", "setpgid", "coresched", "scriptlive",
		// A fourteenth hunt: nix-shell --run CMD (and shell.nix's
		// shellHook), scan-build's build command (and its --use-cc,
		// --use-analyzer), task-spooler's and nq's queued commands,
		// gpg-agent --daemon CMD, gtk-launch's desktop entry.
		"nix-shell", "scan-build", "intercept-build", "tsp", "nq", "gpg-agent", "gtk-launch",
		// A sixteenth hunt: glibc's memusage and sotruss, rustup's
		// rust-gdb, rust-lldb and rust-gdbgui (gdb's and lldb's), gettext's
		// msgexec (each ran rm -rf src), and env-cmd, summon, envchain,
		// start-server-and-test, run0, aa-exec, proot, fakechroot and
		// uftrace, of the same kind.
		"memusage", "sotruss", "rust-gdb", "rust-lldb", "rust-gdbgui", "msgexec", "env-cmd", "summon", "envchain",
		"start-server-and-test", "run0", "aa-exec", "proot", "fakechroot", "uftrace",
		// A seventeenth hunt: GNU parallel's niceload, moreutils' mispipe
		// (two shell strings) and zrun, retry, timelimit, rush and xjobs
		// (commands of their words or standard input), tcpserver.
		"niceload", "mispipe", "zrun", "retry", "timelimit", "rush", "xjobs", "tcpserver",
		// An H12 hunt: run-one's other names (it acts by the name it is
		// run as; run-this-one curl x ran curl past an approval of
		// "curl"), caffeine's caffeinate, xinit and startx (a client
		// command), lxc-attach and lxc-execute.
		"run-this-one", "keep-one-running", "run-one-constantly", "run-one-until-success", "run-one-until-failure",
		"caffeinate", "xinit", "startx", "lxc-attach", "lxc-execute",
		// libtool runs the command of its words in every mode
		// (--mode=execute rm -rf src, and compile's and link's), grc
		// and colormake theirs (make), pseudo and fakeroot-ng as
		// fakeroot, byobu as tmux and screen, cset proc --exec.
		"libtool", "glibtool", "grc", "colormake", "pseudo", "fakeroot-ng", "byobu", "byobu-tmux", "byobu-screen", "cset",
		// A nineteenth hunt: glibc's xtrace (memusage's and sotruss's
		// sibling), datefudge, dtach and abduco, MPI's and Slurm's
		// launchers, schedtool -e, trace-cmd record, libslack's daemon,
		// ipsvd's (and busybox's) tcpsvd and udpsvd, runit's runsv and
		// runsvdir (a service directory's run script), busybox's
		// cttyhack, openvt, crond and inetd: each ran, or would run,
		// its command or a script it names.
		"xtrace", "datefudge", "dtach", "abduco", "mpirun", "mpiexec", "orterun", "srun", "schedtool", "trace-cmd",
		"daemon", "tcpsvd", "udpsvd", "runsv", "runsvdir", "cttyhack", "openvt", "crond", "inetd",
		// gettext's msgfilter (msgexec's sibling: msgfilter -i x.po sh -c
		// CMD ran CMD), systemd-socket-activate, postgresql-common's
		// pg_virtualenv, and gdbtui, gdb by another name.
		"msgfilter", "systemd-socket-activate", "pg_virtualenv", "gdbtui",
		// An H6 hunt: debconf CMD (debconf rm -rf src deleted src) and
		// debconf-apt-progress [--] CMD run their command with a
		// frontend; debconf reads its options its own way.
		"debconf", "debconf-apt-progress",
		// Shells whose language the analyzer does not read (it reads
		// those of shells): their -c string, script or standard input
		// runs commands unseen, so tcsh -c 'rm -rf src' ran with no
		// confirmation nor backup. Asked about, not guessed at.
		"csh", "tcsh", "pwsh", "powershell", "nu", "xonsh", "elvish", "rc", "es", "osh", "oils-for-unix", "ysh",
		"lksh", "sash", "ion", "murex", "scsh")
})

// shells are the shells whose -c string, script file or standard input
// the analyzer looks at.
var shells = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
		"ash": true, "hush": true, "rbash": true, "yash": true, "posh": true, "fish": true,
		// An H12 hunt: Debian's names of ksh93 (ksh93u+m: /bin/ksh93,
		// rksh93) and zsh (zsh5, rzsh), and the public-domain and
		// OpenBSD kshes (ksh93 -c 'rm -rf src' was automatic, ksh93
		// x.sh ran x.sh).
		"ksh93": true, "rksh93": true, "rksh": true, "zsh5": true, "rzsh": true, "pdksh": true, "loksh": true, "oksh": true,
	}
})

// simple unwraps a simple command and records it and whatever it runs.
func (w *walker) simple(s scope, c SimpleCommand, in stdin, depth int) error {
	for {
		if len(c.Wrappers)+len(s.layers) > MaxDepth {
			return fmt.Errorf("%w: more than %d wrappers", ErrTooDeep, MaxDepth)
		}
		if len(c.Words) == 0 {
			return w.emit(s, c)
		}
		first := c.Words[0]
		if !first.Literal {
			c.Dynamic = &Opaque{At: 0, Why: "the command word " + quotedWord(first.Text) + " is not a literal: what runs is known only at run time"}
			return w.emit(s, c)
		}
		fills := placeholders(s, c)
		if f, ok := holdsFill(first.Text, fills); ok {
			c.Dynamic = &Opaque{At: 0, Why: "the command word " + first.Text + f.why() + ": what runs is known only then"}
			return w.emit(s, c)
		}
		name := commandName(first.Text)
		if loaderName(first.Text) {
			name = "ld.so"
		}
		if rustupProxies()[name] && len(c.Words) > 1 && c.Words[1].Literal && strings.HasPrefix(c.Words[1].Text, "+") &&
			!strings.Contains(c.Words[1].Text, "/") {
			// cargo +nightly publish is cargo publish with the toolchain
			// named: the rules and prefixes read the words after it (one
			// given by a path stays, for builtin.exec-option).
			c.Words = append([]Word{c.Words[0]}, c.Words[2:]...)
		}
		if next, ok, err := w.runsFirst(s, &c, name); err != nil || ok {
			if err != nil || next == nil {
				return err
			}
			c = *next
			continue
		}
		if sp, ok := wrappers()[name]; ok {
			switch name {
			case "su", "runuser", "script":
				next, ok, err := w.su(s, &c, name, sp, depth)
				if err != nil || !ok {
					return err
				}
				c = next
				continue
			case "sg", "newgrp":
				return w.sg(s, c, name, sp, in, depth)
			case "proxychains", "proxychains4":
				if k := proxychainsOpts(c.Words); unknownOpt(&c, name, k) {
					return w.emit(s, c)
				}
			}
			r := parseOpts(optWords(c, fills), sp)
			if unknownOpt(&c, name, r.unknown) {
				return w.emit(s, c)
			}
			if name == "flock" && r.cmd+1 < len(c.Words) && (c.Words[r.cmd].Text == "-c" || c.Words[r.cmd].Text == "--command") {
				// flock FILE -c COMMAND
				r.caps = []captured{{"-c", c.Words[r.cmd+1], r.cmd + 1}}
			}
			if name == "npx" || name == "flock" {
				if done, err := w.shellString(s, &c, name, r, depth); done || err != nil {
					return err
				}
			}
			if name == "env" {
				if w2, ok := envSplit(c.Words, r); ok {
					c.Words = w2
					if r = parseOpts(optWords(c, fills), sp); unknownOpt(&c, name, r.unknown) {
						return w.emit(s, c)
					}
					// The outer layers' words no longer end in this
					// command's: none of them is a prefix of it now.
					c.Wrappers = slices.Clone(c.Wrappers)
					for i := range c.Wrappers {
						c.Wrappers[i].off = -1
					}
				} else if len(r.caps) > 0 {
					c.Dynamic = &Opaque{At: r.caps[0].at, Why: "env -S is given a string that is not a plain list of words"}
					return w.emit(s, c)
				}
			}
			if name == "xargs" {
				slotVar(&c, r)
			}
			if name == "strace" || name == "systemd-run" {
				if err := w.traceOpts(s, &c, name, &r, depth); err != nil {
					return err
				}
			}
			if name == "valgrind" {
				// valgrind runs the tool --tool names from its library
				// folder: a name that is none of its tools may climb out
				// of it (a seventeenth hunt: --tool=../../../tmp/x/evil
				// ran /tmp/x/evil-amd64-linux).
				for k := 1; k < r.cmd; k++ {
					if v, ok := strings.CutPrefix(c.Words[k].Text, "--tool="); ok && !valgrindTools()[v] {
						c.Dynamic = &Opaque{At: k, Why: "valgrind " + quotedWord(c.Words[k].Text) + " names none of its tools: it runs the program that name leads to"}
						return w.emit(s, c)
					}
				}
			}
			if name == "unbuffer" {
				// Its words go to Expect's spawn, whose own flags
				// (-ignore SIG, -open ID, ...) are not read here.
				for k := 1; k < r.cmd; k++ {
					if t := c.Words[k].Text; t != "--" && (t != "-p" || k > 1) {
						c.Dynamic = &Opaque{At: k, Why: "unbuffer passes " + quotedWord(t) + " to Expect's spawn, whose flags are not read: what runs is not known"}
						return w.emit(s, c)
					}
				}
			}
			if sp.permute && !r.stop && r.cmd >= len(c.Words) && len(r.args) > 0 {
				// GNU getopt took the options out from among the other
				// words: those, in order ("--" dropped), are the command
				// (a hunt: choom rm src -- -r runs rm src -r).
				c = c.wrapWords(name, pick(c.Words, r.args))
				continue
			}
			if r.stop || r.cmd >= len(c.Words) {
				if !r.stop && (sp.shell || (name == "sudo" || name == "doas") && startsShell(c.Words[1:])) {
					return w.stdinShell(s, c, name, in, depth)
				}
				return w.emit(s, c)
			}
			c = c.wrap(name, r.cmd, r.assigns)
			if name == "xargs" {
				c.Appended = true
			}
			continue
		}
		if runnerProgram, runnerSub := runnerNames(); len(c.Words) > 1 && runnerProgram[name] &&
			(!c.Words[1].Literal || strings.HasPrefix(c.Words[1].Text, "-") || name == "rustup" && strings.HasPrefix(c.Words[1].Text, "+") ||
				name == "pnpm" && (c.Words[1].Text == "recursive" || c.Words[1].Text == "multi" || c.Words[1].Text == "m") ||
				name == "yarn" && c.Words[1].Text == "workspaces") {
			// Global options (or a word that is not a literal) before the
			// subcommand: "npm --silent exec -- rm -rf src" runs rm, but
			// which word is the subcommand the analyzer cannot tell. So
			// does rustup's +TOOLCHAIN (a fifteenth hunt: rustup +stable
			// run stable rm -rf src). To pnpm and yarn any word that is
			// none of their commands is a runner's (a sixteenth hunt: pnpm
			// -r bash -c CMD ran CMD in each package's folder; yarn
			// workspaces foreach exec and run likewise); read with their
			// global options, only the command is looked at.
			cmds := pmCommands()[name]
			runs := func(wd Word) bool {
				return !wd.Literal || runnerSub[wd.Text] || cmds != nil && !wd.isOpt() && wd.Text != "--" && !cmds[wd.Text]
			}
			if k := pmSub(c.Words, name); k > 0 && c.Words[k].Text != "workspaces" {
				if runs(c.Words[k]) {
					c.Dynamic = &Opaque{At: k, Why: name + "'s command " + quotedWord(c.Words[k].Text) + " runs a script or a program, with options before it that may run it in other folders, which the analyzer does not follow: what runs is known only at run time"}
					return w.emit(s, c)
				}
			} else if slices.ContainsFunc(c.Words[2:], runs) && unknownOpt(&c, name, 1) {
				return w.emit(s, c)
			}
		}
		if len(c.Words) > 1 {
			if sp, ok := runners()[[2]string{name, c.Words[1].Text}]; ok && c.Words[1].Literal {
				sub := append([]Word{lit(name + " " + c.Words[1].Text)}, optWords(c, fills)[2:]...)
				r := parseOpts(sub, sp)
				if r.unknown > 0 && unknownOpt(&c, name+" "+c.Words[1].Text, r.unknown+1) {
					return w.emit(s, c)
				}
				if done, err := w.shellString(s, &c, name+" "+c.Words[1].Text, shiftCaps(r, 1), depth); done || err != nil {
					return err
				}
				if r.stop || r.cmd >= len(sub) {
					if !r.stop && sp.shell {
						return w.stdinShell(s, c, name+" "+c.Words[1].Text, in, depth)
					}
					return w.emit(s, c)
				}
				if name == "bun" && bunScript(sub[r.cmd].Text) {
					return w.emit(s, c) // bun runs the file: a program like node
				}
				if name == "rustup" {
					// An absolute path is a toolchain to rustup run: its
					// cargo and rustc are the directory's (a sixteenth
					// hunt: rustup run /tmp/t cargo ran /tmp/t/bin/cargo).
					for k := 2; k <= r.cmd; k++ {
						if t := c.Words[k]; !t.isOpt() && t.Text != "--" && (strings.Contains(t.Text, "/") || !t.Literal) {
							c.Dynamic = &Opaque{At: k, Why: "rustup run is given the toolchain " + quotedWord(t.Text) + ", a directory whose programs it runs"}
							return w.emit(s, c)
						}
					}
				}
				c = c.wrap(name+" "+c.Words[1].Text, r.cmd+1, nil)
				continue
			}
		}
		if cmds := pmCommands()[name]; cmds != nil && len(c.Words) > 1 && !strings.HasPrefix(c.Words[1].Text, "-") && !cmds[c.Words[1].Text] {
			// pnpm's and yarn's fallback: a word that is none of their
			// commands is a script's or a program's name.
			if !c.Words[1].Literal {
				c.Dynamic = &Opaque{At: 1, Why: name + " is given " + quotedWord(c.Words[1].Text) + " where its command stands, which it runs as a script or a program when it is none of its commands: what runs is known only at run time"}
				return w.emit(s, c)
			}
			c = c.wrap(name, 1, nil)
			continue
		}
		switch {
		case shells()[name]:
			return w.shell(s, c, name, in, depth)
		case name == "eval":
			return w.eval(s, c, depth)
		case name == "trap":
			return w.trap(s, c, depth)
		case name == "watch":
			next, ok, err := w.watch(s, &c, depth)
			if err != nil || !ok {
				return err
			}
			c = next
			continue
		case opaqueSub(c.Words, name) != "":
			c.Dynamic = &Opaque{At: 0, Why: name + " " + opaqueSub(c.Words, name) + " runs a command made of its arguments or options, or a project's hooks, which the analyzer does not unwrap: what runs is known only at run time"}
			return w.emit(s, c)
		case opaqueRunners()[name]:
			c.Dynamic = &Opaque{At: 0, Why: name + " runs a command made of its arguments or options, which the analyzer does not unwrap: what runs is known only at run time"}
			return w.emit(s, c)
		case name == "parallel" || name == "sem" || name == "env_parallel":
			c.Dynamic = &Opaque{At: 0, Why: "GNU " + name + " makes each command from its words, replacement strings ({}) and arguments it reads at run time (after :::, or on standard input), and runs it through a shell: what runs is known only then"}
			return w.emit(s, c)
		case name == "find":
			return w.find(s, c, depth)
		case name == "git":
			return w.git(s, c, depth)
		case name == "source" || name == ".":
			if len(c.Words) > 1 {
				c.Script = &Opaque{At: 1, Why: "runs the file " + quotedWord(c.Words[1].Text) + " in the shell; its commands are not analysed"}
			}
			return w.emit(s, c)
		case isPath(name):
			c.Script = &Opaque{At: 0, Why: "runs the program " + name + ", which the analyzer does not know"}
			return w.emit(s, c)
		}
		return w.emit(s, c)
	}
}

// proxychainsOpts returns the index of the first word where proxychains
// does not read options as getopt would, 0 if none: proxychains-ng looks
// at most two words starting with '-', takes -q and -f by their second
// byte only (-qx is -q, -fX takes the next word), and runs a third as the
// program. Only -q and -f FILE, whole words, are read here.
func proxychainsOpts(ws []Word) int {
	for i, n := 1, 0; i < len(ws) && ws[i].Literal && strings.HasPrefix(ws[i].Text, "-"); n++ {
		switch t := ws[i].Text; {
		case n == 2, t != "-q" && t != "-f":
			return i
		case t == "-q":
			i++
		default:
			i += 2
		}
	}
	return 0
}

// startsShell reports whether sudo's or doas's options ask for a shell
// (-s, -i, --shell, --login).
func startsShell(opts []Word) bool {
	for _, w := range opts {
		t := w.Text
		if t == "--shell" || t == "--login" || len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsAny(t[1:], "si") {
			return true
		}
	}
	return false
}

// wrap peels a wrapper off c: the words from at on become the command.
func (c SimpleCommand) wrap(name string, at int, assigns []Assign) SimpleCommand {
	c.Wrappers = append(slices.Clip(c.Wrappers), Layer{Name: name, Words: c.Words, off: at})
	// Earlier layers' offsets move with the words they end in.
	for i := range len(c.Wrappers) - 1 {
		if c.Wrappers[i].off >= 0 {
			c.Wrappers[i].off = len(c.Wrappers[i].Words) - (len(c.Words) - at)
		}
	}
	c.Assigns = append(slices.Clip(c.Assigns), assigns...)
	c.Words = c.Words[at:]
	c.Name = ""
	return c
}

// wrapWords peels a wrapper off c when the command it runs is made of
// the given words rather than the words c ends in (runuser -u U CMD -m
// ARG, getopt having taken -m; su's shell): no layer's words end in the
// command's then.
func (c SimpleCommand) wrapWords(name string, ws []Word) SimpleCommand {
	n := c.wrap(name, len(c.Words), nil)
	n.Words = ws
	for i := range n.Wrappers {
		n.Wrappers[i].off = -1
	}
	return n
}

// pick returns the words of ws at the indexes idx.
func pick(ws []Word, idx []int) []Word {
	out := make([]Word, len(idx))
	for k, i := range idx {
		out[k] = ws[i]
	}
	return out
}

func shiftCaps(r optResult, by int) optResult {
	caps := make([]captured, len(r.caps))
	for i, c := range r.caps {
		c.at += by
		caps[i] = c
	}
	r.caps = caps
	return r
}

// shellString handles a wrapper's options that are shell strings (npx -c,
// flock -c, su -c, script -c): the wrapper is recorded and each string
// walked (getopt keeps the last of them; all are walked). done is set
// when there was one.
func (w *walker) shellString(s scope, c *SimpleCommand, name string, r optResult, depth int) (done bool, err error) {
	caps := slices.DeleteFunc(slices.Clone(r.caps), func(cp captured) bool {
		return !lists("-c --call --command --session-command", cp.name)
	})
	if len(caps) > 0 && (name == "npx" || strings.HasPrefix(name, "npm ")) {
		// npm runs its last --call, and its command words, or the
		// shell on standard input, when that is empty (a seventeenth
		// hunt: npx -c '' rm -rf src ran rm).
		caps = caps[len(caps)-1:]
		if caps[0].val.Literal && caps[0].val.Text == "" {
			return false, nil
		}
	}
	for _, cp := range caps {
		done = true
		if !cp.val.Literal {
			if c.Dynamic == nil {
				c.Dynamic = &Opaque{At: cp.at, Why: "the string " + name + " " + cp.name + " runs is not a literal"}
			}
			continue
		}
		if err := w.nested(s, c, name+" "+cp.name, cp.at, cp.val.Text, depth); err != nil {
			return true, err
		}
	}
	if done {
		return true, w.emit(s, *c)
	}
	return false, nil
}

// traceOpts reads the options of strace and systemd-run that run code
// or set the environment of what they run (a twelfth hunt, each):
// strace -o |CMD (or !CMD, --output) pipes the trace to CMD, which sh
// runs: the string is walked as sh -c's; strace -E NAME=VALUE (--env)
// and systemd-run -E (--setenv) are assignments for the command
// (strace -E LD_PRELOAD=./x.so ls loaded x.so). A value not a literal
// makes what runs unknown.
func (w *walker) traceOpts(s scope, c *SimpleCommand, name string, r *optResult, depth int) error {
	for _, cp := range r.caps {
		v := cp.val
		switch cp.name {
		case "-E", "--env", "--setenv":
			n, val, ok := strings.Cut(v.lead, "=")
			if !ok {
				if !v.Literal && c.Dynamic == nil {
					c.Dynamic = &Opaque{At: cp.at, Why: name + " " + cp.name + " is given " + quotedWord(v.Text) + ", whose variable is known only at run time"}
				}
				continue
			}
			if v.Literal {
				n, val, _ = strings.Cut(v.Text, "=")
			}
			a := v
			a.Text, a.lead = strings.TrimPrefix(v.Text, n+"="), strings.TrimPrefix(v.lead, n+"=")
			if v.Literal {
				a.Text = val
			}
			r.assigns = append(r.assigns, Assign{Name: n, Value: a})
		case "-p", "--property", "--timer-property", "--path-property", "--socket-property":
			// A unit's ExecStartPre=, ExecStopPost= and the other Exec*
			// run a command besides the one given (a fourteenth hunt:
			// systemd-run -p ExecStartPre=/ws/x true); Environment= and
			// EnvironmentFile= set the command's variables, and
			// WorkingDirectory= and RootDirectory= move it.
			key, _, _ := strings.Cut(strings.ToLower(v.lead), "=")
			if !v.Literal && !strings.Contains(v.lead, "=") || strings.HasPrefix(key, "exec") || strings.HasPrefix(key, "environment") ||
				key == "passenvironment" || key == "workingdirectory" || key == "rootdirectory" || key == "rootimage" {
				if c.Dynamic == nil {
					c.Dynamic = &Opaque{At: cp.at, Why: name + " " + cp.name + " " + quotedWord(v.Text) + " sets a property that runs a command, sets its environment or moves it: what runs is not only the command given"}
				}
			}
		case "-o", "--output":
			switch {
			case v.Literal && (strings.HasPrefix(v.Text, "|") || strings.HasPrefix(v.Text, "!")):
				if err := w.nested(s, c, name+" "+cp.name, cp.at, v.Text[1:], depth); err != nil {
					return err
				}
				c.code = [2]int{} // the words were the wrapper's, not the command's
			case !v.Literal && (v.lead == "" || strings.HasPrefix(v.lead, "|") || strings.HasPrefix(v.lead, "!")):
				if c.Dynamic == nil {
					c.Dynamic = &Opaque{At: cp.at, Why: name + " " + cp.name + " is given " + quotedWord(v.Text) + ", which may name a command it pipes the trace to"}
				}
			}
		}
	}
	return nil
}

// slotVar reads xargs --process-slot-var NAME, which sets NAME to the
// number of the slot a command runs in, in xargs's own environment as
// well as the command's (an H6 hunt: --process-slot-var=PATH ls ran
// ./0/ls, xargs finding ls by the PATH it had set; BASH_ENV made a bash
// source ./0; with no command xargs runs echo so): an assignment, for
// xargs and what it runs, of a value known only at run time. A name
// not a literal makes what runs unknown.
func slotVar(c *SimpleCommand, r optResult) {
	for _, cp := range r.caps {
		if cp.name != "--process-slot-var" {
			continue
		}
		if !cp.val.Literal {
			if c.Dynamic == nil {
				c.Dynamic = &Opaque{At: cp.at, Why: "xargs --process-slot-var is given " + quotedWord(cp.val.Text) + ", a variable named only at run time"}
			}
			continue
		}
		c.Assigns = append(slices.Clip(c.Assigns), Assign{Name: cp.val.Text, Value: Word{Text: "$slot", single: true, number: true}})
	}
}

// envSplit expands env -S STRING into the words it stands for, when the
// string is a plain list of words.
func envSplit(ws []Word, r optResult) ([]Word, bool) {
	for _, cp := range r.caps {
		if cp.name != "-S" && cp.name != "--split-string" {
			continue
		}
		if !cp.val.Literal || strings.ContainsAny(cp.val.Text, `'"\$`+"`") {
			return nil, false
		}
		var out []Word
		out = append(out, ws[:cp.at]...)
		if cp.at < len(ws) && ws[cp.at].Text != cp.val.Text {
			// The value was attached (-Sstring): drop the option word.
			out = out[:cp.at]
		} else {
			out = out[:cp.at-1]
		}
		// GNU env splits on ASCII white space only: a no-break space
		// (U+00A0) is part of a word (a hunt: 'echo\u00a0./x -rf src' ran
		// the program echo\u00a0./x, read here as echo).
		for _, f := range strings.FieldsFunc(cp.val.Text, func(r rune) bool { return strings.ContainsRune(" \t\n\v\f\r", r) }) {
			if strings.HasPrefix(f, "#") {
				// A word that starts with # is a comment to the end of the
				// string; the words after the string are read on (a
				// seventeenth hunt: env -S '#' rm -rf src ran rm).
				break
			}
			out = append(out, lit(f))
		}
		return append(out, ws[cp.at+1:]...), true
	}
	return nil, false
}

// shell handles bash, sh and the like: a -c string is walked; a script
// file or standard input is marked as unseen; a literal here-document
// given as the script is walked.
func (w *walker) shell(s scope, c SimpleCommand, name string, in stdin, depth int) error {
	ws := c.Words
	i, hasC, noexec := 1, false, false
	// odd notes the first option outside those taken without approval:
	// -i and -H (history expansion, prompts: a hunt's bash -i here-document
	// ran !:1-3 and $(…) in PS1), -s, and any the analyzer does not know.
	odd := func(at int, t string) {
		if c.Dynamic == nil {
			c.Dynamic = &Opaque{At: at, Why: name + " is started with " + quotedWord(t) + ", not among the options taken without approval (-c -e -u -x -v -l -a -f -C -n, -o pipefail, errexit, nounset, xtrace and the like): it may read and run more than its string or script says (-i and -H expand the history and prompts)"}
		}
	}
opts:
	for i < len(ws) {
		if !ws[i].Literal {
			if hasC {
				break // the string to run
			}
			c.Dynamic = &Opaque{At: i, Why: name + " is given a word that is not a literal where its options or script stand"}
			return w.emit(s, c)
		}
		t := ws[i].Text
		switch {
		case t == "--" || t == "-":
			i++
			break opts
		case t == "--rcfile" || t == "--init-file":
			if i+1 < len(ws) {
				c.Script = &Opaque{At: i + 1, Why: name + " runs the start-up file " + quotedWord(ws[i+1].Text) + ", which is not analysed"}
			}
			i += 2
		case t == "--version" || t == "--help":
			return w.emit(s, c)
		case strings.HasPrefix(t, "--"):
			if !shellLongOK()[t] {
				odd(i, t)
			}
			i++
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			next := i + 1
			for _, ch := range t[1:] {
				switch {
				case ch == 'c':
					hasC = true
				case ch == 'n':
					noexec = t[0] == '-'
				case ch == 'o' || ch == 'O':
					v := ""
					if next < len(ws) {
						v = ws[next].Text
					}
					switch {
					case v == "noexec" && ch == 'o':
						noexec = t[0] == '-'
					case next >= len(ws) || !ws[next].Literal || !(ch == 'o' && shellSetOK()[v] || ch == 'O' && shellShoptOK()[v]):
						odd(i, t+" "+v)
					}
					next++
				case !strings.ContainsRune(shellFlagsOK, ch):
					odd(i, t)
				}
			}
			i = next
		default:
			break opts
		}
	}
	switch {
	case hasC:
		if i >= len(ws) {
			return w.emit(s, c)
		}
		str := ws[i]
		if !str.Literal {
			c.Dynamic = &Opaque{At: i, Why: "the string " + name + " -c runs is not a literal"}
			return w.emit(s, c)
		}
		if err := w.nested(s, &c, name+" -c", i, str.Text, depth); err != nil {
			return err
		}
		return w.emit(s, c)
	case noexec:
		return w.emit(s, c)
	case i < len(ws):
		c.Script = &Opaque{At: i, Why: name + " runs the script file " + quotedWord(ws[i].Text) + ", which is not analysed"}
		return w.emit(s, c)
	}
	return w.stdinShell(s, c, name, in, depth)
}

// The options a shell is started with that are taken without approval:
// the letters (with - or +; -k and -o keyword are builtin.keyword's),
// set -o's and shopt's names, and long options.
const shellFlagsOK = "ceuxvlafCk"

var (
	shellSetOK = sync.OnceValue(func() map[string]bool {
		return set("pipefail", "errexit", "nounset", "xtrace", "verbose", "noclobber", "noglob", "allexport", "keyword")
	})
	// Not globstar: ** then matches whole trees (a hunt: bash -O globstar
	// -c "rm -d src/** src" deleted src).
	shellShoptOK = sync.OnceValue(func() map[string]bool {
		return set("extglob", "nullglob", "dotglob", "failglob", "nocaseglob", "lastpipe", "inherit_errexit")
	})
	shellLongOK = sync.OnceValue(func() map[string]bool {
		return set("--norc", "--noprofile", "--login", "--noediting", "--verbose", "--restricted")
	})
)

// stdinShell records a shell that reads its commands from standard input:
// bash with no script or -c, or the shell a wrapper starts when it is
// given no command (sudo -s, setarch, script, sg). It needs approval
// whatever the input: the shell reads its input as it runs, so read,
// exec < FILE, a here-document left open and the like change what it
// runs next (a hunt: bash <<'EOF' with read x ran a line the analyzer
// took for the body of a here-document). A literal here-document is
// walked still, so that a deletion in it asks for its confirmation.
func (w *walker) stdinShell(s scope, c SimpleCommand, name string, in stdin, depth int) error {
	at := len(c.Words)
	switch in.kind {
	case stdinText:
		if err := w.nested(s, &c, name+" <<", at, in.text, depth); err != nil {
			return err
		}
		if c.Script == nil {
			c.Script = &Opaque{At: at, Why: name + " reads its commands from standard input as it runs (read, exec < FILE and the like change what it reads next): what runs may not be what the analyzer reads"}
		}
	case stdinOpaque:
		c.Dynamic = &Opaque{At: at, Why: name + " reads its script from " + in.what}
	case stdinFile:
		c.Script = &Opaque{At: at, Why: name + " reads its script from " + in.what + ", which is not analysed"}
	default:
		if c.Script == nil {
			c.Script = &Opaque{At: at, Why: name + " reads its script from standard input, which is not analysed"}
		}
	}
	return w.emit(s, c)
}

// eval walks its arguments, joined, as shell code.
func (w *walker) eval(s scope, c SimpleCommand, depth int) error {
	args := c.Words[1:]
	if len(args) > 0 && args[0].Literal && args[0].Text == "--" {
		args = args[1:]
	}
	for k, a := range args {
		if !a.Literal {
			c.Dynamic = &Opaque{At: len(c.Words) - len(args) + k, Why: "eval is given a word that is not a literal: the code it runs is known only at run time"}
			return w.emit(s, c)
		}
	}
	if len(args) > 0 {
		if err := w.nested(s, &c, "eval", len(c.Words)-len(args), joinWords(args), depth); err != nil {
			return err
		}
		if c.code[1] > 0 {
			c.code[1] = len(c.Words)
		}
	}
	return w.emit(s, c)
}

// trap walks the action of trap ACTION SIGNAL...
func (w *walker) trap(s scope, c SimpleCommand, depth int) error {
	i := 1
	for i < len(c.Words) && c.Words[i].isOpt() {
		i++
	}
	if i < len(c.Words) && c.Words[i].Literal && c.Words[i].Text == "--" {
		i++
	}
	if len(c.Words)-i < 2 {
		return w.emit(s, c)
	}
	act := c.Words[i]
	if !act.Literal {
		c.Dynamic = &Opaque{At: i, Why: "the action trap is given is not a literal"}
		return w.emit(s, c)
	}
	if act.Text != "-" && act.Text != "" {
		if err := w.nested(s, &c, "trap", i, act.Text, depth); err != nil {
			return err
		}
	}
	return w.emit(s, c)
}

// su handles su, runuser and script, whose options getopt finds among
// their other words. su [options] [-] [USER [ARG...]] runs the user's
// shell (-s SHELL) with -c COMMAND if given, else with the ARGs (su bob
// -- -c CMD runs CMD; su bob, a shell reading standard input); runuser
// -u USER [--] CMD... runs CMD itself; script [options] [FILE] runs -c
// COMMAND or a shell. ok reports whether next holds the command to go on
// unwrapping (the shell as "sh" unless -s names it, or runuser's command).
func (w *walker) su(s scope, c *SimpleCommand, name string, sp optSpec, depth int) (next SimpleCommand, ok bool, err error) {
	r := parseOpts(optWords(*c, placeholders(s, *c)), sp)
	if r.cmd < len(c.Words) {
		c.Dynamic = &Opaque{At: r.cmd, Why: name + " is given " + quotedWord(c.Words[r.cmd].Text) + ", which is not a literal, where its options may stand"}
	}
	unknownOpt(c, name, r.unknown)
	if done, err := w.shellString(s, c, name, r, depth); done || err != nil {
		return SimpleCommand{}, false, err
	}
	if r.stop || c.Dynamic != nil {
		return SimpleCommand{}, false, w.emit(s, *c)
	}
	sh, user := lit("sh"), false
	for _, cp := range r.caps {
		switch cp.name {
		case "-s", "--shell":
			sh = cp.val
		case "-u", "--user":
			user = true
		}
	}
	args := r.args
	switch {
	case name == "script":
		args = nil // the file it writes
	case name == "runuser" && user:
		if len(args) == 0 {
			return SimpleCommand{}, false, w.emit(s, *c)
		}
		return c.wrapWords(name, pick(c.Words, args)), true, nil
	case len(args) > 0:
		args = args[1:] // the user
	}
	return c.wrapWords(name, append([]Word{sh}, pick(c.Words, args)...)), true, nil
}

// sg [-] GROUP [-c] COMMAND runs COMMAND, one word, with sh -c (shadow's
// sg: sg wheel echo hi runs echo alone); sg without a command, and newgrp
// [-] [GROUP], start a shell.
func (w *walker) sg(s scope, c SimpleCommand, name string, sp optSpec, in stdin, depth int) error {
	r := parseOpts(optWords(c, placeholders(s, c)), sp)
	if unknownOpt(&c, name, r.unknown) {
		return w.emit(s, c)
	}
	if name == "sg" && r.cmd < len(c.Words) {
		at := r.cmd
		if c.Words[at].Literal && c.Words[at].Text == "-c" && at+1 < len(c.Words) {
			at++
		}
		_, err := w.shellString(s, &c, name, optResult{caps: []captured{{"-c", c.Words[at], at}}}, depth)
		return err
	}
	return w.stdinShell(s, c, name, in, depth)
}

// watchSpec is procps-ng watch's options (4.0 and later).
var watchSpec = optSpec{
	short: "bcCd::efghn:pq:rs:tvwx",
	long: "beep color no-color differences[=] errexit follow chgexit equexit= exec help interval= precise no-rerun shotsdir= " +
		"no-title no-wrap version",
	stop: "-h --help -v --version",
}

// watch: "watch -x CMD ARGS" runs the command; otherwise watch runs its
// words joined as sh -c. ok reports whether next holds the command to go
// on unwrapping.
func (w *walker) watch(s scope, c *SimpleCommand, depth int) (next SimpleCommand, ok bool, err error) {
	r := parseOpts(optWords(*c, placeholders(s, *c)), watchSpec)
	if unknownOpt(c, "watch", r.unknown) || r.stop || r.cmd >= len(c.Words) {
		return SimpleCommand{}, false, w.emit(s, *c)
	}
	for _, t := range texts(c.Words[1:r.cmd]) {
		if t == "--exec" || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'x')) {
			return c.wrap("watch", r.cmd, nil), true, nil
		}
	}
	args := c.Words[r.cmd:]
	for k, a := range args {
		if !a.Literal {
			c.Dynamic = &Opaque{At: r.cmd + k, Why: "the command watch runs is not a literal"}
			return SimpleCommand{}, false, w.emit(s, *c)
		}
	}
	if err := w.nested(s, c, "watch", r.cmd, joinWords(args), depth); err != nil {
		return SimpleCommand{}, false, err
	}
	if c.code[1] > 0 {
		c.code[1] = len(c.Words)
	}
	return SimpleCommand{}, false, w.emit(s, *c)
}

// fill is a string that a layer replaces at run time, in the words of the
// command it runs, with what it reads or finds.
type fill struct {
	s  string // "" when the string is not a literal: it may be in any word
	by string // "xargs -I", "find -exec"
}

func (f fill) why() string {
	if f.s == "" {
		return " may hold what " + f.by + " fills in at run time, its replace-string not being a literal"
	}
	return " holds " + f.s + ", which " + f.by + " fills in at run time"
}

// placeholders are the strings filled in at run time in the words of c:
// xargs -I R (-iR, --replace=R; -i and --replace alone are {}) and find
// -exec, -execdir, -ok and -okdir ({}), for each such layer c runs under
// (those of the string it is in, in s, and its own; find fills in {} in
// a string it gives sh -c too).
func placeholders(s scope, c SimpleCommand) []fill {
	var out []fill
	for _, l := range append(slices.Clip(s.layers), c.Wrappers...) {
		switch {
		case l.Name == "xargs":
			for _, cp := range parseOpts(l.Words, wrappers()["xargs"]).caps {
				if cp.name == "--process-slot-var" {
					continue // a variable's name, not a string filled in
				}
				f := fill{cp.val.Text, "xargs " + cp.name}
				switch {
				case !cp.val.Literal:
					f.s = ""
				case f.s == "" && cp.name != "-I" && !strings.Contains(l.Words[cp.at].Text, "="):
					f.s = "{}"
				}
				out = append(out, f)
			}
		case strings.HasPrefix(l.Name, "find -"):
			out = append(out, fill{"{}", l.Name})
		}
	}
	return out
}

func holdsFill(text string, fills []fill) (fill, bool) {
	for _, f := range fills {
		if strings.Contains(text, f.s) {
			return f, true
		}
	}
	return fill{}, false
}

// optWords are c's words as a wrapper's options are read from them: one
// that holds a placeholder is filled in at run time, and is read as a
// word that is not a literal is (xargs -I{} timeout {} 5 CMD: {} may be
// an option, and the command another word).
func optWords(c SimpleCommand, fills []fill) []Word {
	if len(fills) == 0 {
		return c.Words
	}
	ws := slices.Clone(c.Words)
	for i, w := range ws {
		if f, ok := holdsFill(w.Text, fills); ok && w.Literal {
			ws[i].Literal = false
			ws[i].lead = w.Text[:strings.Index(w.Text, f.s)]
		}
	}
	return ws
}

// find records itself and each command of its -exec, -execdir, -ok and
// -okdir actions.
func (w *walker) find(s scope, c SimpleCommand, depth int) error {
	ws := c.Words
	acts, unsure := findActions(ws)
	if unsure >= 0 && c.Dynamic == nil {
		c.Dynamic = &Opaque{At: unsure, Why: "find is given " + quotedWord(ws[unsure].Text) + " among the words of a command it runs, which may move where that command ends (; or {} +): which words are find's own is known only at run time"}
	}
	if err := w.emit(s, c); err != nil {
		return err
	}
	for _, a := range acts {
		if a.to == a.from {
			continue
		}
		inner := SimpleCommand{
			Words: slices.Clone(ws[a.from:a.to]), Text: c.Text, Pos: c.Pos,
			Wrappers: append(slices.Clip(c.Wrappers), Layer{Name: "find " + a.name, Words: ws, off: -1}),
		}
		for k, x := range inner.Words {
			if !strings.Contains(x.Text, "{}") {
				continue
			}
			if x.Text != "{}" {
				// find puts the file name inside the word: a file
				// name becomes part of an argument, or of code.
				inner.Appended = true
			}
			// A file name, known only at run time, stands there:
			// git {} runs whatever subcommand the name says.
			inner.Words[k].Literal = false
		}
		for k := range inner.Wrappers {
			inner.Wrappers[k].off = -1
		}
		if err := w.simple(s, inner, stdin{}, depth); err != nil {
			return err
		}
	}
	return nil
}

// findAction is one -exec, -execdir, -ok or -okdir of a find: ws[from:to]
// are the words of the command it runs.
type findAction struct {
	name     string
	from, to int
}

// findActions are the actions in find's words that run a command. GNU
// find ends one at a ";" word, and an -exec's or -execdir's also at a "+"
// right after a word holding {}; any other "+" is a word of the command
// (a hunt: find . -exec cp + x .git/hooks \; ran cp + x .git/hooks). One
// with neither runs nothing: find refuses the line. unsure is the first
// word that is not a literal and may end a command at run time where
// the analyzer does not end it, or not end it where the analyzer does
// (x=';'; find . -exec echo -name $x -fprint .git/config: -fprint is
// find's then), or -1.
func findActions(ws []Word) (acts []findAction, unsure int) {
	unsure = -1
	for i := 1; i < len(ws); i++ {
		name := ws[i].Text
		if !ws[i].Literal || name != "-exec" && name != "-execdir" && name != "-ok" && name != "-okdir" {
			continue
		}
		plus := name == "-exec" || name == "-execdir" // -ok and -okdir take no "+"
		j := i + 1
		for ; j < len(ws); j++ {
			x := ws[j]
			if x.Literal && x.Text == ";" {
				break
			}
			if plus && x.Literal && x.Text == "+" {
				if !ws[j-1].Literal && unsure < 0 {
					unsure = j - 1 // it may hold {} at run time, or not
				}
				if strings.Contains(ws[j-1].Text, "{}") {
					break
				}
			}
			// A word that may split into fields, or be ";" or "+"
			// whole: "$x", x$@, ?, {\;,x}.
			if !x.Literal && (!x.single || strings.HasPrefix(";", x.lead) || plus && strings.HasPrefix("+", x.lead)) && unsure < 0 {
				unsure = j
			}
		}
		acts = append(acts, findAction{name, i + 1, j})
		i = j
	}
	return acts, unsure
}

// gitValued are git's global options that take a separate value.
var gitValued = sync.OnceValue(func() map[string]bool {
	return set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source", "--exec-path")
})

// git takes git's global options out from before the subcommand, records
// the command, and walks the shell code some subcommands run (rebase
// --exec, submodule foreach, bisect run, filter-branch's filters).
func (w *walker) git(s scope, c SimpleCommand, depth int) error {
	ws := c.Words
	i := 1
	for i < len(ws) && ws[i].isOpt() {
		t := ws[i].Text
		if gitValued()[t] && t != "--exec-path" {
			if i+1 >= len(ws) {
				break
			}
			if !ws[i+1].single {
				// git -C $d clean -fdx: the value may be several words,
				// and then a later one is the subcommand.
				c.Dynamic = &Opaque{At: i + 1, Why: "git " + quotedWord(t) + " is given " + quotedWord(ws[i+1].Text) + ", which may be several words: which word is git's command is known only at run time"}
				return w.emit(s, c)
			}
			c.GitOptions = append(c.GitOptions, ws[i], ws[i+1])
			i += 2
			continue
		}
		c.GitOptions = append(c.GitOptions, ws[i])
		i++
	}
	if i < len(ws) && !ws[i].Literal {
		// git $opts clean, git -C$d clean: a global option or the
		// subcommand is known only at run time.
		c.Dynamic = &Opaque{At: i, Why: "git is given " + quotedWord(ws[i].Text) + " where its options or command stand: what git does is known only at run time"}
		return w.emit(s, c)
	}
	if i > 1 {
		c.Words = append([]Word{ws[0]}, ws[i:]...)
	}
	ws = c.Words
	if len(ws) < 2 {
		return w.emit(s, c)
	}
	var nestedErr error
	walkStr := func(at int, label string) {
		if nestedErr != nil || at >= len(ws) {
			return
		}
		if !ws[at].Literal {
			if c.Dynamic == nil {
				c.Dynamic = &Opaque{At: at, Why: "the command " + label + " runs is not a literal"}
			}
			return
		}
		nestedErr = w.nested(s, &c, label, at, ws[at].Text, depth)
	}
	// walkPart walks v, the part of word k that is a command (--opt=CMD,
	// -xCMD).
	walkPart := func(k int, label, v string) {
		if ws[k].Literal {
			nestedErr = w.nested(s, &c, label, k, v, depth)
		} else if c.Dynamic == nil {
			c.Dynamic = &Opaque{At: k, Why: "the command " + label + " runs is not a literal"}
		}
	}
	switch ws[1].Text {
	case "rebase":
		// --exec CMD, --exec=CMD and any prefix of it git takes (--exe),
		// -x CMD, and x in a group of short options (-fx CMD, -fxCMD).
		walkAt := func(k int, v string) { walkPart(k, "git rebase --exec", v) }
		for k := 2; k < len(ws) && nestedErr == nil; k++ {
			t := ws[k].Text
			if t == "--" {
				break
			}
			name, val, attached := strings.Cut(t, "=")
			switch {
			case len(name) >= len("--ex") && strings.HasPrefix("--exec", name):
				if attached {
					walkAt(k, val)
				} else {
					walkStr(k+1, "git rebase --exec")
					k++
				}
			case strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && len(t) > 1:
				for i := 1; i < len(t); i++ {
					if c := t[i]; c == 'x' {
						if i+1 < len(t) {
							walkAt(k, t[i+1:])
						} else {
							walkStr(k+1, "git rebase --exec")
							k++
						}
						break
					} else if strings.IndexByte("sXCS", c) >= 0 { // the rest is its value
						if i+1 == len(t) && c != 'C' && c != 'S' {
							k++
						}
						break
					}
				}
			}
		}
	case "difftool", "grep":
		// difftool -x/--extcmd CMD runs CMD on each pair; grep
		// -O/--open-files-in-pager=CMD runs CMD on the matching files.
		long, short, minLen := "--extcmd", "-x", len("--ex")
		if ws[1].Text == "grep" {
			long, short, minLen = "--open-files-in-pager", "-O", len("--ope")
		}
		// The letter may end a group of short options (-iO"CMD", -yx
		// CMD: a hunt), before which a letter taking a value ends it.
		valued := "t"
		if ws[1].Text == "grep" {
			valued = "ABCefm"
		}
		label := "git " + ws[1].Text + " " + long
		for k := 2; k < len(ws) && nestedErr == nil; k++ {
			t := ws[k].Text
			if t == "--" {
				break
			}
			name, val, attached := strings.Cut(t, "=")
			at := -1 // where short's letter is in a group of short options
			if shortLetter(t, short[1], valued) {
				at = strings.IndexByte(t, short[1])
			}
			switch {
			case len(name) >= minLen && strings.HasPrefix(long, name) && attached, at > 0 && at+1 < len(t):
				if !attached || at > 0 {
					val = t[at+1:]
				}
				walkPart(k, label, val)
			case ws[1].Text == "difftool" && (at > 0 || len(name) >= minLen && strings.HasPrefix(long, name)):
				walkStr(k+1, label)
				k++
			}
		}
	case "filter-branch":
		for k := 2; k < len(ws); k++ {
			t := ws[k].Text
			name, val, attached := strings.Cut(t, "=")
			if name != "--setup" && !(strings.HasPrefix(name, "--") && strings.HasSuffix(name, "-filter")) {
				continue
			}
			if attached {
				walkPart(k, "git filter-branch "+name, val)
				continue
			}
			walkStr(k+1, "git filter-branch "+t)
			k++
		}
	case "submodule":
		for k := 2; k < len(ws); k++ {
			if ws[k].Text == "foreach" {
				k++
				for k < len(ws) && ws[k].isOpt() {
					k++
				}
				args := ws[k:]
				for n, a := range args {
					if !a.Literal {
						if c.Dynamic == nil {
							c.Dynamic = &Opaque{At: k + n, Why: "the command git submodule foreach runs is not a literal"}
						}
						args = nil
						break
					}
				}
				if len(args) > 0 {
					nestedErr = w.nested(s, &c, "git submodule foreach", k, joinWords(args), depth)
					if c.code[1] > 0 {
						c.code[1] = len(c.Words)
					}
				}
				break
			}
		}
	case "bisect":
		if len(ws) > 3 && ws[2].Text == "run" {
			inner := SimpleCommand{Words: ws[3:], Text: c.Text, Pos: c.Pos}
			for _, l := range c.Wrappers {
				l.off = -1
				inner.Wrappers = append(inner.Wrappers, l)
			}
			inner.Wrappers = append(inner.Wrappers, Layer{Name: "git bisect run", Words: ws, off: -1})
			if err := w.simple(s, inner, stdin{}, depth); err != nil {
				return err
			}
		}
	}
	if nestedErr != nil {
		return nestedErr
	}
	return w.emit(s, c)
}

// loaderName reports the dynamic loader run as a program: ld.so,
// ld-linux*.so*, ld64.so.*, ld-musl-*.so*, by its name or a path under
// /lib or /usr/lib (a workspace's copy is a program the analyzer does
// not know).
func loaderName(word string) bool {
	dir, base := path.Split(word)
	if dir != "" && !strings.HasPrefix(path.Clean(dir), "/lib") && !strings.HasPrefix(path.Clean(dir), "/usr/lib") && !systemDirs()[path.Clean(dir)] {
		return false
	}
	return base == "ld.so" || strings.Contains(base, ".so") &&
		(strings.HasPrefix(base, "ld-linux") || strings.HasPrefix(base, "ld64.so") || strings.HasPrefix(base, "ld-musl-"))
}

// opaqueSub is the subcommand of opaqueSubs that c's words name, or "";
// a word that is not a literal where it may stand counts.
func opaqueSub(ws []Word, name string) string {
	subs, ok := opaqueSubs()[name]
	if !ok {
		return ""
	}
	for _, i := range cands(ws, 1) {
		if !ws[i].Literal {
			return quotedWord(ws[i].Text)
		}
		if slices.Contains(subs, ws[i].Text) {
			return ws[i].Text
		}
	}
	return ""
}

// runsFirst unwraps the programs that run a command their first words
// name, which no option table describes: corepack TOOL[@VERSION], the
// compiler wrappers (compilerWrappers) and cmake -E env, chdir and
// time (a fourteenth hunt, each: cmake -E env X=1 rm -rf src). ok
// reports that c was one of them; next is the command to go on
// unwrapping, or nil when c was emitted.
func (w *walker) runsFirst(s scope, c *SimpleCommand, name string) (next *SimpleCommand, ok bool, err error) {
	ws := c.Words
	if len(ws) < 2 {
		return nil, false, nil
	}
	dynamic := func(at int, why string) (*SimpleCommand, bool, error) {
		if c.Dynamic == nil {
			c.Dynamic = &Opaque{At: at, Why: why}
		}
		return nil, true, w.emit(s, *c)
	}
	for k, to := range runnerAliases() {
		kw := strings.Fields(k)
		if kw[0] != name || len(ws) < len(kw) {
			continue
		}
		n := 1
		for n < len(kw) && ws[n].Literal && ws[n].Text == kw[n] {
			n++
		}
		if n == len(kw) {
			var words []Word
			for _, t := range to {
				words = append(words, lit(t))
			}
			next := c.wrapWords(k, append(words, ws[n:]...))
			return &next, true, nil
		}
		// An option (or a word that is not a literal) among the alias's
		// words, with its last word later on (uv tool -q run CMD): which
		// word is the subcommand is not known.
		last := kw[len(kw)-1]
		if ws[n].mayBeOption() && slices.ContainsFunc(ws[n+1:], func(w Word) bool { return !w.Literal || w.Text == last }) {
			return dynamic(n, k+" is given "+quotedWord(ws[n].Text)+" among its words, with "+last+" later: which word is its subcommand, and what it runs, is known only at run time")
		}
	}
	first := ws[1]
	switch {
	case (name == "pnpm" && first.Text == "with" || name == "yarn" && first.Text == "workspace") && first.Literal && len(ws) > 3:
		// pnpm with VERSION ARGS runs that pnpm with ARGS; yarn
		// workspace NAME ARGS runs yarn ARGS in NAME's folder (a
		// sixteenth hunt: yarn workspace web exec rm -rf src).
		if !ws[2].single {
			return dynamic(2, name+" "+first.Text+" is given "+quotedWord(ws[2].Text)+", which may be several words: what runs is known only at run time")
		}
		n := c.wrapWords(name+" "+first.Text, append([]Word{lit(name)}, ws[3:]...))
		return &n, true, nil
	case name == "corepack":
		tool, _, _ := strings.Cut(first.Text, "@")
		if !first.Literal || !corepackTools()[tool] {
			return nil, false, nil
		}
		n := c.wrap(name, 1, nil)
		n.Words = slices.Clone(n.Words)
		n.Words[0] = lit(tool)
		return &n, true, nil
	case compilerWrappers()[name]:
		t := first.Text
		switch {
		case !first.Literal:
			return dynamic(1, name+" is given "+quotedWord(t)+" where its compiler stands: what it runs is known only at run time")
		case strings.Contains(t, "="):
			return dynamic(1, name+" is given the setting "+quotedWord(t)+", which may name a program it runs (prefix_command, compiler_check)")
		case t == "--scan-includes" && name == "distcc":
			n := c.wrap(name, 2, nil)
			return &n, true, nil
		case strings.HasPrefix(t, "-") && (name == "ccache" || name == "sccache" || compilerWrapperOwn()[t]):
			return nil, true, w.emit(s, *c) // its own options: no compiler runs
		case strings.HasPrefix(t, "-"):
			n := c.wrapWords(name, append([]Word{lit("cc")}, ws[1:]...))
			return &n, true, nil
		}
		n := c.wrap(name, 1, nil)
		return &n, true, nil
	case name == "cmake" && first.Literal && first.Text == "-E" && len(ws) > 2:
		sub := ws[2]
		if !sub.Literal {
			return dynamic(2, "cmake -E is given "+quotedWord(sub.Text)+": what it does is known only at run time")
		}
		switch sub.Text {
		case "time":
			n := c.wrap("cmake -E time", 3, nil)
			return &n, true, nil
		case "chdir":
			if len(ws) < 5 {
				return nil, false, nil
			}
			if !ws[3].single {
				return dynamic(3, "cmake -E chdir is given "+quotedWord(ws[3].Text)+", which may be several words: what runs is known only at run time")
			}
			n := c.wrap("cmake -E chdir", 4, nil)
			return &n, true, nil
		case "env":
			// cmake -E env [--unset=NAME]... [NAME=VALUE]... [--] CMD;
			// --modify and any other option are left out.
			var assigns []Assign
			i := 3
		env:
			for ; i < len(ws); i++ {
				t := ws[i]
				switch {
				case !t.Literal && !assignRE().MatchString(t.lead):
					return dynamic(i, "cmake -E env is given "+quotedWord(t.Text)+" where its settings or command stand: what runs is known only at run time")
				case t.Text == "--":
					i++
					break env
				case strings.HasPrefix(t.Text, "--unset="):
				case strings.HasPrefix(t.Text, "-"):
					unknownOpt(c, "cmake -E env", i)
					return nil, true, w.emit(s, *c)
				case assignRE().MatchString(t.lead):
					if !t.single {
						return dynamic(i, "cmake -E env is given "+quotedWord(t.Text)+", which may be several words")
					}
					n, val, _ := strings.Cut(t.Text, "=")
					v := t
					v.Text, v.lead = val, strings.TrimPrefix(t.lead, n+"=")
					assigns = append(assigns, Assign{Name: n, Value: v})
				default:
					break env
				}
			}
			if i >= len(ws) {
				return nil, false, nil
			}
			n := c.wrap("cmake -E env", i, assigns)
			return &n, true, nil
		default:
			if !cmakeTools()[sub.Text] {
				return dynamic(2, "cmake -E "+quotedWord(sub.Text)+" is none of cmake -E's documented commands; its internal ones run programs (__run_co_compile runs the command after --): what it runs is not known")
			}
		}
	}
	return nil, false, nil
}

// cmakeTools are cmake -E's documented commands (CMake 3 and 4); its
// internal ones (__run_co_compile, cmake_llvm_rc, vs_link_exe, …) run
// the programs they are given (a sixteenth hunt: cmake -E
// __run_co_compile -- rm -rf src).
var cmakeTools = sync.OnceValue(func() map[string]bool {
	return set("capabilities", "cat", "chdir", "compare_files", "copy", "copy_directory", "copy_directory_if_different",
		"copy_directory_if_newer", "copy_if_different", "copy_if_newer", "create_symlink", "create_hardlink", "echo",
		"echo_append", "env", "environment", "false", "make_directory", "md5sum", "sha1sum", "sha224sum", "sha256sum",
		"sha384sum", "sha512sum", "remove", "remove_directory", "rename", "rm", "server", "sleep", "tar", "time", "touch",
		"touch_nocreate", "true", "delete_regv", "write_regv", "env_vs8_wince", "env_vs9_wince")
})
