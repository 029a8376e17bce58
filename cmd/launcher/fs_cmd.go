package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/components/session"
)

const fsHelp = `Usage (inside a components-mode session, as the agent):
  launcher fs read PATH          print the file
  launcher fs write PATH         replace the file with stdin (atomically; at most 1 MiB;
                                 nothing on stdin is refused unless --empty is given:
                                 a closed stdin reads as empty)
  launcher fs stat PATH [--json]
  launcher fs ls [PATH] [--json]
  launcher fs mkdir PATH
  launcher fs mv FROM TO
  launcher fs rm PATH            a file or an empty directory
  launcher fs rm -r PATH         a tree: you are asked on the launcher's terminal,
                                 and a backup is kept (launcher backups)

Asks the session's fs component, which works beneath the workspace and
answers every request with a decision. PATH is relative to the workspace
("." is the workspace itself). The launcher puts the session's address
and the agent's credential in the agent's environment (PINFOLD_FS,
PINFOLD_CREDENTIALS); outside a session these commands have nothing to
talk to.

Exit status:
  0    done
  119  fs decided against it: "denied", with fs's reason and rule (outside
       the workspace, a protected path, a recursive delete the person did not
       confirm, no room for its backup; or the caller's role)
  120  a bad command line, more than 1 MiB on stdin, or outside a session
  125  not done, and no decision: "not found" (the path is not there),
       "failed" (fs could not do it as asked: an absolute path or one with
       "..", not a regular file, a directory not empty, already exists, the
       file system failed), or no usable answer from fs (not listening, gone,
       a broken answer, another session's)
` + exitCodesHelp

// exitDenied is a component's denial of a client verb's request.
const exitDenied = 119

func (e env) fsVerb(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, fsHelp)
		return silentExit(exitUsage)
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "-help" {
		fmt.Fprint(e.stdout, fsHelp)
		return nil
	}
	fset := flags("fs " + sub)
	asJSON := fset.Bool("json", false, "")
	recursive := fset.Bool("r", false, "")
	empty := fset.Bool("empty", false, "")
	nargs := map[string]int{"read": 1, "write": 1, "stat": 1, "ls": -1, "mkdir": 1, "mv": 2, "rm": 1}
	n, ok := nargs[sub]
	if !ok {
		return fail(exitUsage, "run `launcher fs --help`", "unknown fs command %q", sub)
	}
	rest, err := e.parse(fset, fsHelp, args[1:], n)
	if err != nil {
		return err
	}
	// A flag another verb takes is a mistake, not something to ignore.
	for name, verbs := range map[string]string{"json": "stat ls", "r": "rm", "empty": "write"} {
		if fset.Lookup(name).Value.String() == "true" && !slices.Contains(strings.Fields(verbs), sub) {
			return fail(exitUsage, "run `launcher fs --help`", "fs %s: -%s is for fs %s only", sub, name, strings.ReplaceAll(verbs, " ", " and fs "))
		}
	}
	if sub == "ls" && len(rest) > 1 {
		return fail(exitUsage, "run `launcher fs --help`", "fs ls: want at most one path")
	}
	// What to write is read whole first: nothing is asked of fs for a
	// write that cannot be sent.
	var data []byte
	if sub == "write" {
		if data, err = io.ReadAll(io.LimitReader(os.Stdin, rpc.MaxData+1)); err != nil {
			return fail(exitFailure, "", "fs write %s: stdin: %v", printable(rest[0]), err)
		}
		if len(data) > rpc.MaxData {
			return fail(exitUsage, "", "fs write %s: more than %d bytes on stdin: fs writes a file whole, up to that size", printable(rest[0]), rpc.MaxData)
		}
		// A closed stdin reads as /dev/null (the Go runtime opens it on a
		// missing descriptor 0), so empty input is not taken as meant.
		if len(data) == 0 && !*empty {
			return fail(exitUsage, "give --empty to write an empty file", "fs write %s: nothing on stdin: the file was left as it is", printable(rest[0]))
		}
	}
	rc, err := session.AgentClient(pki.FS)
	if err != nil {
		return sessionFail("fs", err)
	}
	defer rc.Close()
	c := fs.NewClient(rc)
	// A recursive delete waits for the person and for its backup.
	timeout := 2 * time.Minute
	if *recursive {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d rpc.Decision
	switch sub {
	case "read":
		for off := int64(0); ; {
			var r fs.ReadResult
			if r, d, err = c.Read(ctx, rest[0], off, 0); err != nil || !d.Allowed {
				break
			}
			if _, werr := e.stdout.Write(r.Data); werr != nil {
				return fail(exitFailure, "", "fs read %s: writing standard output: %v", printable(rest[0]), werr)
			}
			if r.EOF {
				break
			}
			if len(r.Data) == 0 {
				err = fmt.Errorf("a malformed answer: no data and no end at offset %d", off)
				break
			}
			off += int64(len(r.Data))
		}
	case "write":
		_, d, err = c.Write(ctx, rest[0], data, false)
	case "stat":
		var info fs.Info
		if info, d, err = c.Stat(ctx, rest[0]); err == nil && d.Allowed {
			if *asJSON {
				return e.writeJSON(info)
			}
			fmt.Fprintf(e.stdout, "%s %d %04o %s %s\n", info.Type, info.Size, info.Mode, info.MTime.Format(time.RFC3339), rest[0])
		}
	case "ls":
		p := "."
		if len(rest) == 1 {
			p = rest[0]
		}
		var l fs.ListResult
		if l, d, err = c.List(ctx, p); err == nil && d.Allowed {
			if *asJSON {
				return e.writeJSON(l)
			}
			for _, en := range l.Entries {
				fmt.Fprintf(e.stdout, "%s\t%d\t%s\n", en.Type, en.Size, en.Name)
			}
			if l.Truncated {
				fmt.Fprintln(e.stderr, "launcher: warning: fs ls: the listing was cut short")
			}
		}
	case "mkdir":
		d, err = c.Mkdir(ctx, rest[0])
	case "mv":
		d, err = c.Rename(ctx, rest[0], rest[1], false)
	case "rm":
		if !*recursive {
			d, err = c.Delete(ctx, rest[0])
			break
		}
		var res fs.DeletedTree
		if res, d, err = c.DeleteRecursive(ctx, rest[0]); err == nil && d.Allowed {
			if res.Irreversible {
				fmt.Fprintf(e.stderr, "launcher: fs rm -r %s: deleted without a backup, as confirmed\n", rest[0])
			} else {
				fmt.Fprintf(e.stderr, "launcher: fs rm -r %s: deleted; backup %s\n", rest[0], res.Backup)
			}
		}
	}
	if err != nil {
		return noAnswer("fs "+sub, pki.FS, err)
	}
	return refused("fs "+sub, d)
}

// refused is nil for an allowed decision, else the error a client verb
// exits with. Only a decision exits 119 (exitDenied) and says "denied": a
// rule of the policy, the person or the call table said no (reasons
// no-rule and caller-role), and the message names the rule. The other
// refusals decided nothing: what was named is not there (unknown), or
// the request could not be carried out as asked (bad-request: a path that
// is absolute or has "..", a directory that is not empty, a file system
// that failed); they exit 125 and say what happened.
func refused(what string, d rpc.Decision) error {
	if d.Allowed {
		return nil
	}
	var msg string
	code := exitFailure
	switch d.Reason {
	case rpc.ReasonNoRule, rpc.ReasonCallerRole:
		code, msg = exitDenied, fmt.Sprintf("%s: denied (%s", what, d.Reason)
	case rpc.ReasonUnknown:
		msg = fmt.Sprintf("%s: not found (%s", what, d.Reason)
	default:
		msg = fmt.Sprintf("%s: failed (%s", what, d.Reason)
	}
	if d.Rule != "" {
		msg += ", rule " + d.Rule
	}
	msg += ")"
	if d.Detail != "" {
		msg += ": " + d.Detail
	}
	return &cliError{code: code, err: fmt.Errorf("%s", msg)}
}

// noAnswer is the error of a client verb that had no decision from the
// session's component role (not listening, gone, a broken answer, a
// timeout): a failure, not a refusal.
func noAnswer(what string, role pki.Role, err error) error {
	return fail(exitFailure, "", "%s: no usable answer from the session's %s component: %v", what, role, err)
}
