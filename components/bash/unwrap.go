package bash

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// optSpec describes a wrapper's command-line options, enough to find the
// command it runs. Options it does not list are taken for flags.
type optSpec struct {
	arg        string          // short options that take a value (-u USER, -uUSER)
	attached   string          // short options whose optional value can only be attached (xargs -i{})
	stop       string          // short options after which no command runs (sudo -l)
	long       map[string]bool // long options that take a separate value when written without '='
	longStop   map[string]bool // long options after which no command runs
	capture    string          // short options whose value is returned
	longCap    map[string]bool // long options whose value is returned
	positional int             // words after the options before the command (timeout's DURATION)
	assigns    bool            // NAME=value words may follow (env, sudo)
	numeric    bool            // -N is an option (nice -10)
	dash       bool            // "-" alone is an option (env -)
	arch       bool            // a first word that is not an option comes before them (setarch ARCH)
	permute    bool            // options may follow other words, as GNU getopt reads them (su, script)
	shell      bool            // given no command, it starts a shell that reads standard input (setarch)
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
}

// assignRE matches the NAME= that env and sudo take for an assignment:
// env takes any word with '=' before the command, odd names included
// (BASH_FUNC_ls%%=... defines a function for a bash it runs).
var assignRE = regexp.MustCompile(`^[^=/]+=`)

// parseOpts reads a wrapper's options from ws[1:]. It stops at the first
// word that is not an option; a word that is not a literal where an
// option may stand, or that may split into several where a value
// stands, ends the options too and so becomes the command word: what
// runs is then unknown. With sp.permute it reads on past the words that
// are not options (r.args) up to "--", and r.cmd is len(ws), or the first
// word it cannot read: one that is not a literal where an option may
// stand, or a value that may split.
func parseOpts(ws []Word, sp optSpec) optResult {
	r := optResult{cmd: len(ws)}
	i := 1
	if sp.arch && len(ws) > 1 && ws[1].Literal && !strings.HasPrefix(ws[1].Text, "-") {
		i = 2
	}
	value := func(j int) bool { // ws[j] is a value: it must exist and be one field
		return j < len(ws) && ws[j].single
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
		switch {
		case t == "--":
			i++
			break options
		case t == "-" && sp.dash:
			i++
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			if sp.longStop[name] {
				r.stop = true
			}
			if eq {
				if sp.longCap[name] {
					r.caps = append(r.caps, captured{"--" + name, lit(val), i})
				}
				i++
				continue
			}
			if sp.long[name] || sp.longCap[name] {
				if !value(i + 1) {
					r.cmd = min(i+1, len(ws))
					return r
				}
				if sp.longCap[name] {
					r.caps = append(r.caps, captured{"--" + name, ws[i+1], i + 1})
				}
				i += 2
				continue
			}
			i++
		case len(t) > 1 && t[0] == '-':
			if sp.numeric && strings.Trim(t[1:], "0123456789+") == "" {
				i++
				continue
			}
			next := i + 1
			for j := 1; j < len(t); j++ {
				c := t[j]
				if strings.IndexByte(sp.stop, c) >= 0 {
					r.stop = true
				}
				if strings.IndexByte(sp.attached, c) >= 0 {
					break
				}
				if strings.IndexByte(sp.arg, c) >= 0 || strings.IndexByte(sp.capture, c) >= 0 {
					if j+1 < len(t) {
						if strings.IndexByte(sp.capture, c) >= 0 {
							r.caps = append(r.caps, captured{"-" + string(c), lit(t[j+1:]), i})
						}
					} else {
						if !value(next) {
							r.cmd = min(next, len(ws))
							return r
						}
						if strings.IndexByte(sp.capture, c) >= 0 {
							r.caps = append(r.caps, captured{"-" + string(c), ws[next], next})
						}
						next++
					}
					break
				}
			}
			i = next
		default:
			if !sp.permute {
				break options
			}
			r.args = append(r.args, i)
			i++
		}
	}
	if sp.permute {
		for ; i < len(ws); i++ {
			r.args = append(r.args, i)
		}
		return r
	}
	for k := 0; k < sp.positional && i < len(ws); k++ {
		if !ws[i].single {
			r.cmd = i
			return r
		}
		i++
	}
	if sp.assigns {
		for i < len(ws) && assignRE.MatchString(ws[i].lead) {
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

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// archSpec is setarch's: setarch ARCH [options] [CMD], or linux64
// [options] [CMD] and the like (archNames), the name being the
// architecture; with no command it runs /bin/sh.
var archSpec = optSpec{stop: "hV", longStop: set("help", "version", "list"), shell: true}

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

// suSpec is su's and runuser's: -c and --session-command are the shell's
// string, -s its program, runuser -u the user to run the command as.
var suSpec = optSpec{
	arg: "gGw", capture: "csu", stop: "hV",
	long:     set("group", "supp-group", "whitelist-environment"),
	longCap:  set("command", "session-command", "shell", "user"),
	longStop: set("help", "version"),
	dash:     true, permute: true,
}

// wrappers are the commands that run another command given as their
// remaining words, with how to find it; su, runuser, script, sg and
// newgrp run a shell (see su and sg).
var wrappers = func() map[string]optSpec {
	m := map[string]optSpec{
		"sudo": {
			arg: "CDgpRrtTUu", stop: "lvVKe",
			long:     set("user", "group", "host", "prompt", "close-from", "chdir", "chroot", "role", "type", "command-timeout", "other-user"),
			longStop: set("list", "validate", "version", "remove-timestamp", "edit", "help"),
			assigns:  true,
		},
		"doas":    {arg: "uC", stop: "CL"},
		"env":     {arg: "uCP", capture: "S", long: set("unset", "chdir"), longCap: set("split-string"), assigns: true, dash: true},
		"command": {stop: "vV"},
		"builtin": {},
		"exec":    {arg: "a"},
		"nice":    {arg: "n", long: set("adjustment"), numeric: true},
		"nohup":   {},
		"timeout": {arg: "sk", long: set("signal", "kill-after"), positional: 1},
		"stdbuf":  {arg: "ioe", long: set("input", "output", "error")},
		"ionice": {
			arg: "cnpPu", stop: "pPu",
			long: set("class", "classdata", "pid", "pgid", "uid"), longStop: set("pid", "pgid", "uid"),
		},
		"chrt": {
			arg: "TPD", stop: "pm",
			long: set("sched-runtime", "sched-period", "sched-deadline"), longStop: set("pid", "max"),
			positional: 1,
		},
		"setsid": {},
		"time":   {arg: "fo", long: set("format", "output")},
		"xargs": {
			arg: "adEILnPs", attached: "eil",
			long: set("arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"),
		},
		"npx":     {arg: "p", capture: "c", long: set("package"), longCap: set("call")},
		"bunx":    {arg: "p", long: set("package")},
		"uvx":     {arg: "p", long: set("from", "with", "python", "index", "index-url", "extra-index-url", "directory", "project")},
		"flock":   {arg: "wE", long: set("timeout", "wait", "conflict-exit-code"), positional: 1},
		"taskset": {stop: "p", longStop: set("pid"), positional: 1},
		"prlimit": {
			arg: "po", stop: "p", attached: "cdefilmnqrstuvxy",
			long: set("pid", "output"), longStop: set("pid"),
		},
		"strace": {
			arg: "abeEIoOpPsSuUX",
			long: set("columns", "detach-on", "env", "interruptible", "output", "attach", "trace-path", "string-limit",
				"summary-sort-by", "summary-columns", "summary-syscall-overhead", "user", "const-print-style", "argv0",
				"color", "trace", "trace-fds", "abbrev", "verbose", "raw", "signal", "signals", "status", "read", "write",
				"fault", "inject", "kvm", "decode-pids", "stack-trace-frame-limit", "syscall-limit"),
		},
		"ltrace": {arg: "waADeFlnopsux", long: set("align", "config", "debug", "indent", "library", "output", "where")},
		"numactl": {
			arg: "iwpPcNCmSfoLMI", stop: "sH",
			long: set("interleave", "weighted-interleave", "preferred", "preferred-many", "cpubind", "cpunodebind",
				"physcpubind", "membind", "shm", "file", "offset", "length", "shmmode", "shmid"),
			longStop: set("show", "hardware"),
		},
		"setpriv": {
			stop: "d",
			long: set("ambient-caps", "inh-caps", "bounding-set", "ruid", "euid", "rgid", "egid", "reuid", "regid",
				"groups", "securebits", "pdeathsig", "ptracer", "selinux-label", "apparmor-profile", "landlock-access",
				"landlock-rule", "seccomp-filter"),
			longStop: set("dump", "list-caps"),
		},
		"systemd-run": {
			arg: "CEHMpu", stop: "h",
			long: set("host", "machine", "capsule", "unit", "property", "description", "slice", "service-type", "uid",
				"gid", "nice", "working-directory", "root-directory", "setenv", "expand-environment", "job-mode",
				"background", "json", "output", "path-property", "socket-property", "timer-property", "on-active",
				"on-boot", "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar"),
			longStop: set("help", "version"), shell: true,
		},
		"cgexec":    {arg: "g"},
		"firejail":  {longStop: set("help", "version", "list", "tree", "top"), shell: true},
		"valgrind":  {},
		"catchsegv": {},
		"chronic":   {},
		"unbuffer":  {},
		"busybox":   {longStop: set("help", "list", "list-full", "install", "show")},
		"toybox":    {longStop: set("help", "version", "long")},
		"su":        suSpec,
		"runuser":   suSpec,
		"script": {
			arg: "BEIOTmo", capture: "c", attached: "t", stop: "hV",
			long:     set("echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"),
			longCap:  set("command"),
			longStop: set("help", "version"),
			permute:  true,
		},
		"sg":     {dash: true, positional: 1},
		"newgrp": {},
	}
	for _, n := range archNames {
		m[n] = archSpec
	}
	sp := archSpec
	sp.arch = true
	m["setarch"] = sp
	return m
}()

// runners are subcommands that run the command in their remaining
// words: "npm exec prettier", "uv run twine upload".
var runners = map[[2]string]optSpec{
	{"npm", "exec"}:    {capture: "c", long: set("package", "workspace", "w"), longCap: set("call")},
	{"npm", "x"}:       {capture: "c", long: set("package", "workspace", "w"), longCap: set("call")},
	{"pnpm", "exec"}:   {arg: "C", long: set("filter", "dir")},
	{"pnpm", "dlx"}:    {long: set("package")},
	{"yarn", "exec"}:   {},
	{"yarn", "dlx"}:    {arg: "p", long: set("package")},
	{"uv", "run"}:      {arg: "p", long: set("with", "with-editable", "with-requirements", "python", "package", "directory", "project", "env-file", "extra", "group", "index", "index-url", "extra-index-url", "find-links", "config-file", "cache-dir", "from")},
	{"poetry", "run"}:  {arg: "PC", long: set("project", "directory")},
	{"pipenv", "run"}:  {},
	{"pipx", "run"}:    {long: set("spec", "python", "index-url", "pip-args")},
	{"bundle", "exec"}: {long: set("gemfile")},
	{"pdm", "run"}:     {arg: "p", long: set("project")},
	{"hatch", "run"}:   {},
}

// shells are the shells whose -c string, script file or standard input
// the analyzer looks at.
var shells = map[string]bool{
	"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "hush": true, "rbash": true, "yash": true, "posh": true, "fish": true,
}

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
			c.Dynamic = &Opaque{At: 0, Why: "the command word " + first.Text + " is not a literal: what runs is known only at run time"}
			return w.emit(s, c)
		}
		name := commandName(first.Text)
		if sp, ok := wrappers[name]; ok {
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
			}
			r := parseOpts(c.Words, sp)
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
					r = parseOpts(c.Words, sp)
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
			if name == "unbuffer" {
				// Its words go to Expect's spawn, whose own flags
				// (-ignore SIG, -open ID, ...) are not read here.
				for k := 1; k < r.cmd; k++ {
					if t := c.Words[k].Text; t != "--" && (t != "-p" || k > 1) {
						c.Dynamic = &Opaque{At: k, Why: "unbuffer passes " + t + " to Expect's spawn, whose flags are not read: what runs is not known"}
						return w.emit(s, c)
					}
				}
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
		if len(c.Words) > 1 {
			if sp, ok := runners[[2]string{name, c.Words[1].Text}]; ok && c.Words[1].Literal {
				sub := append([]Word{lit(name + " " + c.Words[1].Text)}, c.Words[2:]...)
				r := parseOpts(sub, sp)
				if done, err := w.shellString(s, &c, name+" "+c.Words[1].Text, shiftCaps(r, 1), depth); done || err != nil {
					return err
				}
				if r.cmd >= len(sub) {
					return w.emit(s, c)
				}
				c = c.wrap(name+" "+c.Words[1].Text, r.cmd+1, nil)
				continue
			}
		}
		switch {
		case shells[name]:
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
		case name == "find":
			return w.find(s, c, depth)
		case name == "git":
			return w.git(s, c, depth)
		case name == "source" || name == ".":
			if len(c.Words) > 1 {
				c.Script = &Opaque{At: 1, Why: "runs the file " + c.Words[1].Text + " in the shell; its commands are not analysed"}
			}
			return w.emit(s, c)
		case isPath(name):
			c.Script = &Opaque{At: 0, Why: "runs the program " + name + ", which the analyzer does not know"}
			return w.emit(s, c)
		}
		return w.emit(s, c)
	}
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
	for _, cp := range r.caps {
		switch cp.name {
		case "-c", "--call", "--command", "--session-command":
		default:
			continue
		}
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
		for _, f := range strings.Fields(cp.val.Text) {
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
				c.Script = &Opaque{At: i + 1, Why: name + " runs the start-up file " + ws[i+1].Text + ", which is not analysed"}
			}
			i += 2
		case t == "--version" || t == "--help":
			return w.emit(s, c)
		case strings.HasPrefix(t, "--"):
			i++
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			next := i + 1
			for _, ch := range t[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 'n':
					noexec = noexec || t[0] == '-'
				case 'o', 'O':
					next++
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
		c.Script = &Opaque{At: i, Why: name + " runs the script file " + ws[i].Text + ", which is not analysed"}
		return w.emit(s, c)
	}
	return w.stdinShell(s, c, name, in, depth)
}

// stdinShell records a shell that reads its commands from standard input:
// bash with no script or -c, or the shell a wrapper starts when it is
// given no command (sudo -s, setarch, script, sg). A literal here-document
// is walked; any other input is marked as unseen.
func (w *walker) stdinShell(s scope, c SimpleCommand, name string, in stdin, depth int) error {
	at := len(c.Words)
	switch in.kind {
	case stdinText:
		if err := w.nested(s, &c, name+" <<", at, in.text, depth); err != nil {
			return err
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
	r := parseOpts(c.Words, sp)
	if r.cmd < len(c.Words) {
		c.Dynamic = &Opaque{At: r.cmd, Why: name + " is given " + c.Words[r.cmd].Text + ", which is not a literal, where its options may stand"}
	}
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
	if r := parseOpts(c.Words, sp); name == "sg" && r.cmd < len(c.Words) {
		at := r.cmd
		if c.Words[at].Literal && c.Words[at].Text == "-c" && at+1 < len(c.Words) {
			at++
		}
		_, err := w.shellString(s, &c, name, optResult{caps: []captured{{"-c", c.Words[at], at}}}, depth)
		return err
	}
	return w.stdinShell(s, c, name, in, depth)
}

// watch: "watch -x CMD ARGS" runs the command; otherwise watch runs its
// words joined as sh -c. ok reports whether next holds the command to go
// on unwrapping.
func (w *walker) watch(s scope, c *SimpleCommand, depth int) (next SimpleCommand, ok bool, err error) {
	r := parseOpts(c.Words, optSpec{arg: "nqs", long: set("interval", "equexit", "shotsdir")})
	if r.cmd >= len(c.Words) {
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

// find records itself and each command of its -exec, -execdir, -ok and
// -okdir actions.
func (w *walker) find(s scope, c SimpleCommand, depth int) error {
	if err := w.emit(s, c); err != nil {
		return err
	}
	ws := c.Words
	for i := 1; i < len(ws); i++ {
		if !ws[i].Literal {
			continue
		}
		switch ws[i].Text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(ws) && !(ws[j].Literal && (ws[j].Text == ";" || ws[j].Text == "+")) {
			j++
		}
		if j > i+1 {
			inner := SimpleCommand{
				Words: ws[i+1 : j], Text: c.Text, Pos: c.Pos,
				Wrappers: append(slices.Clip(c.Wrappers), Layer{Name: "find " + ws[i].Text, Words: ws, off: -1}),
			}
			for _, x := range inner.Words {
				if x.Text != "{}" && strings.Contains(x.Text, "{}") {
					// find puts the file name inside the word: a file
					// name becomes part of an argument, or of code.
					inner.Appended = true
				}
			}
			for k := range inner.Wrappers {
				inner.Wrappers[k].off = -1
			}
			if err := w.simple(s, inner, stdin{}, depth); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// gitValued are git's global options that take a separate value.
var gitValued = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source", "--exec-path")

// git takes git's global options out from before the subcommand, records
// the command, and walks the shell code some subcommands run (rebase
// --exec, submodule foreach, bisect run, filter-branch's filters).
func (w *walker) git(s scope, c SimpleCommand, depth int) error {
	ws := c.Words
	i := 1
	for i < len(ws) && ws[i].isOpt() {
		t := ws[i].Text
		if gitValued[t] && t != "--exec-path" {
			if i+1 >= len(ws) || !ws[i+1].single {
				break
			}
			c.GitOptions = append(c.GitOptions, ws[i], ws[i+1])
			i += 2
			continue
		}
		c.GitOptions = append(c.GitOptions, ws[i])
		i++
	}
	if i > 1 {
		c.Words = append([]Word{ws[0]}, ws[i:]...)
	}
	ws = c.Words
	if len(ws) < 2 || !ws[1].Literal {
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
	switch ws[1].Text {
	case "rebase":
		for k := 2; k < len(ws); k++ {
			t := ws[k].Text
			switch {
			case t == "-x" || t == "--exec":
				walkStr(k+1, "git rebase --exec")
				k++
			case strings.HasPrefix(t, "--exec="):
				v := ws[k]
				v.Text = strings.TrimPrefix(t, "--exec=")
				if v.Literal {
					nestedErr = w.nested(s, &c, "git rebase --exec", k, v.Text, depth)
				} else if c.Dynamic == nil {
					c.Dynamic = &Opaque{At: k, Why: "the command git rebase --exec runs is not a literal"}
				}
			case strings.HasPrefix(t, "-x") && len(t) > 2 && ws[k].Literal:
				nestedErr = w.nested(s, &c, "git rebase --exec", k, t[2:], depth)
			}
		}
	case "filter-branch":
		for k := 2; k < len(ws); k++ {
			if t := ws[k].Text; strings.HasPrefix(t, "--") && strings.HasSuffix(t, "-filter") {
				walkStr(k+1, "git filter-branch "+t)
				k++
			}
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
