package launcher

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pinfold/pinfold/policy"
)

// execHint says, for the person, why stage 2's execve of the agent's
// program path may have failed under p, as far as stage 1 can see: ""
// when it sees nothing. The kernel's own words mislead here: a script
// whose #! line names a missing interpreter fails with "No such file or
// directory" although the script is there, and an interpreter or ELF
// loader outside files.exec fails with "Permission denied" (Landlock
// checks the right to execute each). It is read only after the exec
// failed, to word a hint; nothing is decided by it.
func execHint(path string, p *policy.Policy) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "" // the kernel's error says it
	}
	real := realPath(path)
	writes := append([]policy.Path{p.Workspace.Path}, p.Files.Write...)
	within := func(list []policy.Path, f string) bool {
		return slices.ContainsFunc(list, func(d policy.Path) bool { return d.Contains(policy.Path(f)) })
	}
	switch {
	case within(writes, real):
		return fmt.Sprintf("%s is in a write path, and nothing the agent can write may be run (SR-01): run it through its interpreter, e.g. -- /bin/sh %s", path, path)
	case !within(p.Files.Exec, real):
		return fmt.Sprintf("%s is not in [files] exec: list it or its directory there", real)
	}
	interp, script, noMagic := interpreterOf(path)
	if interp == "" {
		if noMagic {
			return fmt.Sprintf("%s starts with neither #! nor an ELF header: run it through a shell, e.g. -- /bin/sh %s", path, path)
		}
		return ""
	}
	by := "its ELF header"
	if script {
		by = "its #! line"
	}
	if _, err := os.Stat(interp); err != nil {
		return fmt.Sprintf("%s names the interpreter %s, which does not exist: fix that line, or run the program through one that does", by, interp)
	}
	if r := realPath(interp); !within(p.Files.Exec, r) {
		return fmt.Sprintf("%s names the interpreter %s, which is not in [files] exec (the kernel runs it too): list %s or its directory there", by, interp, r)
	}
	return ""
}

// realPath is path with its links followed, as Landlock sees the file;
// path itself when it cannot be resolved.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// interpreterOf reads the interpreter the kernel would run for path: a
// script's #! line (script) or an ELF program's loader. noMagic is a
// file that has neither, which the kernel refuses to run at all.
func interpreterOf(path string) (interp string, script, noMagic bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	// The kernel reads at most 256 bytes of a #! line (BINPRM_BUF_SIZE).
	head, _ := bufio.NewReaderSize(f, 256).Peek(256)
	if line, ok := bytes.CutPrefix(head, []byte("#!")); ok {
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if words := bytes.Fields(line); len(words) > 0 {
			return string(words[0]), true, false
		}
		return "", true, false
	}
	if !bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return "", false, true
	}
	e, err := elf.NewFile(f)
	if err != nil {
		return "", false, false
	}
	for _, prog := range e.Progs {
		if prog.Type != elf.PT_INTERP || prog.Filesz > 4096 {
			continue
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err == nil {
			return string(bytes.TrimRight(b, "\x00")), false, false
		}
	}
	return "", false, false
}
