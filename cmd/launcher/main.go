package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	_ "github.com/pinfold/pinfold/components/agentprobe" // the components-mode probe actions
	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/launcher/probe"
)

// Exit codes. The launcher's own failures use 120-125 so that, once the
// launcher passes an agent's exit status through, they rarely collide with
// the agent's own codes; every command uses the same table.
const (
	exitOK         = 0
	exitUsage      = 120 // bad command line
	exitUnreadable = 121 // the policy file is missing, unreadable, not a regular file, or too large
	exitInvalid    = 122 // the policy is invalid (syntax, schema, validation, or the live file-system checks)
	exitMismatch   = 123 // the policy's sha256 does not match the pinned value
	exitRefused    = 124 // this host cannot enforce a Boundary the policy needs
	exitFailure    = 125 // any other failure of the launcher itself
	// The agent's program, as env(1) and the shells say it: a script
	// can tell "no such agent" from the launcher's own failures.
	exitCannotRun = 126 // found, but the kernel would not run it (execve failed)
	exitNotFound  = 127 // not found (not in the agent's PATH, or execve said ENOENT)
)

const exitCodesHelp = `Exit codes:
  0    success
  1    register check: a check failed; site verify: the site differs from its
       manifest, or the manifest from its pin
  117  code run: the script ran and failed (an exception, or a limit)
  118  sh: the command was killed at the policy's commands.timeout
  119  a component decided against the request: a rule of the policy, the person's answer or the
       call table (fs, sh and net verbs; code run: the static check alone); the message says
       "denied" and names the rule. Or would (check url, check command, check script)
  120  usage error: bad flag, argument or command (or fs, sh, net outside a session; sh: a command
       line bash cannot read)
  121  the policy file is missing, unreadable, not a regular file, or too large
  122  the policy is invalid (syntax, unknown key, bad value, failed check)
  123  the policy's sha256 does not match the pinned value
  124  this host cannot enforce a Boundary the policy needs
  125  any other failure, and no decision: of the launcher, or of a request (fs: not found, or
       failed as asked; net: the name did not resolve, the site did not answer, or answered an
       HTTP error; no usable answer from a component); the message says which
  126  the agent's program was found but could not be run (not executable, not in
       [files] exec, a format the kernel does not run); nothing ran
  127  the agent's program was not found (not in the agent's PATH, no such file, or
       its #! interpreter missing); nothing ran
`

const mainHelp = `launcher confines an AI agent under a policy pinned by its sha256.

Usage:
  launcher --policy-sha256 HASH --policy FILE [--quiet|--verbose] -- AGENT [ARGS...]
  launcher --full-access -- AGENT [ARGS...]
  launcher policy hash FILE
  launcher policy check [--json] FILE
  launcher policy init [--workspace DIR] [--template NAME] [--out FILE]
  launcher hello [--json] [--policy FILE]
  launcher register list|show ID|check [--json] [--only ID,...] [--out FILE]
  launcher secrets add NAME|list|rm NAME|rekey [--vault FILE] [--key-file FILE]
  launcher fs read|write|stat|ls|mkdir|mv|rm PATH...   (the agent, in a components session)
  launcher backups list|show ID|verify ID|restore ID|remove ID --workspace DIR [--as NAME]
  launcher sh 'COMMAND LINE'                           (the agent, in a components session)
  launcher net get URL                                 (the agent, in a components session in proxy mode)
  launcher check url --policy FILE [--resolve HOST=IP]... [--json] URL
  launcher check command --policy FILE [--json] 'COMMAND LINE'
  launcher check script [--json] SCRIPT|-
  launcher code run --tools FILE [--policy FILE] [--json] SCRIPT|-
  launcher code run [--json] SCRIPT|-                  (the agent, in a components session)
  launcher mcp                                         (the agent's MCP server, in a components session)
  launcher site build --out DIR [--evidence FILE]... [--bench FILE]...
  launcher site verify --manifest-sha256 HASH DIR
  launcher serve --policy-sha256 HASH --policy FILE [--listen ADDR] [--tls-self]   (MCP over HTTP, a session each)
  launcher serve token add NAME [--cap host.execute] | list | revoke NAME
  launcher help [COMMAND]

Every command takes --help.

` + exitCodesHelp

// cliError carries an exit code and optional hint to main.
type cliError struct {
	code int
	err  error
	hint string
}

func (e *cliError) Error() string { return e.err.Error() }

func fail(code int, hint string, format string, args ...any) error {
	return &cliError{code: code, err: fmt.Errorf(format, args...), hint: hint}
}

// outsideSession is the hint for an agent-side verb run outside a
// session: a usage error, since nothing there could answer it.
const outsideSession = "run it inside the agent that `launcher --policy-sha256 M --policy P -- AGENT` starts under a policy with mode = \"components\""

// sessionFail is the error of an agent-side verb whose session client
// could not be made: a usage error outside a session, else a failure.
func sessionFail(verb string, err error) error {
	if errors.Is(err, session.ErrNoSession) {
		return fail(exitUsage, outsideSession, "%s: %v", verb, err)
	}
	return fail(exitFailure, "", "%s: %v", verb, err)
}

// silentExit reports an exit code whose messages have already been printed.
type silentExit int

func (e silentExit) Error() string { return fmt.Sprintf("exit %d", int(e)) }

func main() { os.Exit(launcherMain()) }

// launcherMain is the whole program, also run by the CLI tests.
func launcherMain() int {
	if len(os.Args) > 1 && os.Args[1] == launcher.Stage2Entry {
		// Stage 2 runs from a C constructor before Go starts and never
		// gets here, unless the C library did not pass it argv.
		fmt.Fprintln(os.Stderr, "launcher: error: stage 2 did not start: the C library did not pass argv to the launcher's constructor (glibc does)")
		return 125
	}
	if len(os.Args) > 1 && os.Args[1] == componentEntry {
		return componentMain(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == code.WorkerEntry {
		return code.WorkerMain()
	}
	if len(os.Args) > 1 && os.Args[1] == probe.Entry {
		probe.Main([]string{probe.Entry}, os.Args[2:]) // never returns
	}
	return run(os.Args[1:], os.Stdout, os.Stderr)
}

type env struct {
	stdout, stderr io.Writer
}

func run(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	e := env{out, stderr}
	err := e.dispatch(args)
	if err == nil && out.err != nil {
		// What the command printed did not all arrive (a full disk, a
		// closed descriptor): a hash, a list or a report the person
		// would act on is missing or cut, so it is not a success.
		err = fail(exitFailure, "", "writing standard output: %v", out.err)
	}
	if err == nil {
		return exitOK
	}
	var se silentExit
	if errors.As(err, &se) {
		return int(se)
	}
	var ce *cliError
	code := exitFailure
	if errors.As(err, &ce) {
		code = ce.code
	}
	fmt.Fprintf(stderr, "launcher: error: %s\n", oneLine(err.Error()))
	if ce != nil && ce.hint != "" {
		fmt.Fprintf(stderr, "launcher: hint: %s\n", oneLine(ce.hint))
	}
	return code
}

// checkedWriter is a command's standard output, keeping its first write
// error.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// oneLine keeps an error on one line so each problem is one line of
// stderr, and keeps what an error quotes from elsewhere (a script's
// exception, a file name) from steering the terminal: control
// characters, line separators and bidirectional controls are escaped,
// and the line is cut at maxErrorLine bytes.
func oneLine(s string) string {
	var b strings.Builder
	t := strings.TrimSpace(s)
	for i, r := range t {
		switch {
		case b.Len() >= maxErrorLine:
			return b.String() + fmt.Sprintf(" … (%d more bytes)", len(t)-i)
		case r == '\n':
			b.WriteByte(' ')
		case r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// printable is s as it may go to the terminal on stdout: itself when it
// holds nothing that steers a terminal or splits a line (control
// characters, line separators, bidirectional controls, bytes that are
// not UTF-8), else Go-quoted. Names and commands printed are the
// person's or the agent's to choose.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// maxErrorLine bounds one error line on stderr.
const maxErrorLine = 8 << 10

func (e env) dispatch(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, mainHelp)
		return silentExit(exitUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprint(e.stdout, mainHelp)
		return nil
	case "help":
		if len(args) == 1 {
			fmt.Fprint(e.stdout, mainHelp)
			return nil
		}
		return e.dispatch(append(args[1:], "--help"))
	case "policy":
		return e.policy(args[1:])
	case "hello":
		return e.hello(args[1:])
	case "register":
		return e.register(args[1:])
	case "secrets":
		return e.secrets(args[1:])
	case "fs":
		return e.fsVerb(args[1:])
	case "check":
		return e.check(args[1:])
	case "backups":
		return e.backups(args[1:])
	case "net":
		return e.netVerb(args[1:])
	case "sh":
		return e.shVerb(args[1:])
	case "code":
		return e.codeVerb(args[1:])
	case "mcp":
		return e.mcpVerb(args[1:])
	case "site":
		return e.siteVerb(args[1:])
	case "serve":
		return e.serve(args[1:])
	}
	if strings.HasPrefix(args[0], "-") {
		return e.launch(args)
	}
	return fail(exitUsage, "run `launcher --help` for the commands", "unknown command %q", args[0])
}

// writeJSON writes v to stdout, indented, for auditors and programs.
func (e env) writeJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(escapeUnprintable(b), '\n'))
	return err
}

// escapeUnprintable writes, in JSON text, every character beyond ASCII
// that is not printable (C1 controls, bidirectional and other format
// characters, unassigned ones) as \uXXXX: encoding/json escapes only
// those below U+0020 (and <, >, &, U+2028, U+2029), and strings an agent
// chose (backup labels and paths) must not reach the person's terminal
// raw. Such characters occur only inside JSON strings, so the text
// stays the same JSON.
func escapeUnprintable(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r < utf8.RuneSelf || unicode.IsPrint(r) || (r == utf8.RuneError && n == 1) {
			out = append(out, b[i:i+n]...)
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, "\\u%04x\\u%04x", r1, r2)
		} else {
			out = fmt.Appendf(out, "\\u%04x", r)
		}
		i += n
	}
	return out
}

// shown is s for a line on the person's terminal: every character that is
// not printable (controls such as ESC and CR, C1 controls, bidirectional
// and other format characters) and every byte that is not UTF-8 is
// written as its Go escape (\x1b, \r, \u202e). Paths in the write paths
// are the agent's to name: raw, "\r\x1b[2K\x1b[8m" in a directory's name
// erased the start of the warning that named it and hid the rest.
func shown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsPrint(r) && !(r == utf8.RuneError && n == 1) {
			b.WriteString(s[i : i+n])
		} else {
			q := strconv.QuoteToASCII(s[i : i+n])
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// shownAll is shown of each of ss.
func shownAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shown(s)
	}
	return out
}

// flags returns a FlagSet whose errors and help go where the CLI wants them.
func flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Bool("help", false, "")
	return fs
}

// parse parses flags, answering --help with help on stdout and a bad flag
// with a usage error. It returns the positional arguments.
func (e env) parse(fs *flag.FlagSet, help string, args []string, nargs int) ([]string, error) {
	// Flags may come before or after the positional arguments
	// (`policy check FILE --json`); "--" ends flag parsing.
	var pos []string
	in := args
	err := fs.Parse(in)
	for err == nil && fs.NArg() > 0 {
		rest := fs.Args()
		if used := len(in) - len(rest); used > 0 && in[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		in = rest[1:]
		err = fs.Parse(in)
	}
	if errors.Is(err, flag.ErrHelp) || (err == nil && fs.Lookup("help").Value.String() == "true") {
		fmt.Fprint(e.stdout, help)
		return nil, silentExit(exitOK)
	}
	if err != nil {
		return nil, fail(exitUsage, fmt.Sprintf("run `launcher %s --help`", fs.Name()), "%s: %v", fs.Name(), flagErr(err, args))
	}
	if name := repeatedFlag(fs, args); name != "" {
		return nil, fail(exitUsage, "give each flag once", "%s: %s is given more than once (which one was meant?)", fs.Name(), name)
	}
	if name := emptyFlag(fs); name != "" {
		return nil, fail(exitUsage, "give it a value, or leave it out for its default", "%s: --%s is given an empty value", fs.Name(), name)
	}
	if nargs >= 0 && len(pos) != nargs {
		return nil, fail(exitUsage, fmt.Sprintf("run `launcher %s --help`", fs.Name()), "%s: want %d argument(s), got %d", fs.Name(), nargs, len(pos))
	}
	return pos, nil
}

// flagErr says a flag package error with the flag as it was typed: the
// package names every flag with one dash, whatever the command line had.
// repeatedFlag names, as typed, a flag of fs that args give more than
// once, or is "". The flag package keeps the last value silently, so
// `--policy-sha256 A --policy-sha256 B` pinned B; nothing here means two
// values. It reads args as the flag package does: up to "--", a flag's
// value after it when not given with "=" (but for booleans).
func repeatedFlag(fs *flag.FlagSet, args []string) string {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if _, many := f.Value.(repeatable); seen[name] && !many {
			typed, _, _ := strings.Cut(a, "=")
			return printable(typed)
		}
		seen[name] = true
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // its value
		}
	}
	return ""
}

// emptyFlag names a string flag of fs given an empty value, or is "":
// an unset variable (--vault "$VAULT") would otherwise quietly mean the
// flag's default, the person's own vault or token store among them, or
// --out "" the current directory.
func emptyFlag(fs *flag.FlagSet) string {
	name := ""
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && name == "" && g.Get() == "" {
			name = f.Name
		}
	})
	return name
}

// repeatable is a flag that collects every value given (--cap,
// --evidence): given more than once, it means each.
type repeatable interface{ repeatable() }

func flagErr(err error, args []string) error {
	msg := err.Error()
	for _, f := range []struct{ prefix, say string }{
		{"flag provided but not defined: -", "unknown flag %s"},
		{"flag needs an argument: -", "flag %s needs a value"},
	} {
		name, ok := strings.CutPrefix(msg, f.prefix)
		if !ok {
			continue
		}
		typed := "--" + name
		for _, a := range args {
			if a == "--" {
				break
			}
			n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if strings.HasPrefix(a, "-") && n == name {
				typed, _, _ = strings.Cut(a, "=")
				break
			}
		}
		return fmt.Errorf(f.say, printable(typed))
	}
	return err
}
