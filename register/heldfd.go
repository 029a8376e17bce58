package register

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What heldBeneath saw.
const (
	heldUnseen = ""     // the marked process never showed: nothing was learned
	heldNone   = "none" // no process under the launcher held the descriptor
	heldYes    = "held" // one did
)

// heldBeneath waits (up to within) for a process in the tree under root
// that runs with marker in its argv (marked), then says whether any
// process of that tree but root itself has a descriptor open on dir.
// Waiting for the marked process (the agent) means every process it looks
// at has long finished its exec: a child between clone and exec still
// holds the parent's descriptors, close-on-exec or not. Root reads the
// others' /proc/N/fd.
func heldBeneath(root int, marker, dir string, within time.Duration) string {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		tree := descendants(root)
		if !slices.ContainsFunc(tree, func(pid int) bool { return marked(pid, marker) }) {
			continue
		}
		for _, pid := range tree {
			fds := "/proc/" + strconv.Itoa(pid) + "/fd"
			ents, _ := os.ReadDir(fds)
			for _, e := range ents {
				if t, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && t == dir {
					return heldYes
				}
			}
		}
		return heldNone
	}
	return heldUnseen
}

// marked says whether pid runs with marker among its arguments after its
// own exec. A child between clone and exec shows its parent's argv; the
// launcher's argv holds the agent's, marker and all, so its child in that
// moment (stage 2 on its way, the Go runtime's pidfd check) would pass for
// the agent while it still holds every descriptor of the launcher's (CI,
// 2026-12-03: SR-10 failed on such a copy). A process whose argv is its
// parent's is taken for such a copy.
func marked(pid int, marker string) bool {
	p := "/proc/" + strconv.Itoa(pid)
	cmdline, _ := os.ReadFile(p + "/cmdline")
	if !bytes.Contains(cmdline, []byte("\x00"+marker)) {
		return false
	}
	stat, _ := os.ReadFile(p + "/stat")
	// The parent follows the state, after the command name's parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return false
	}
	parent, _ := os.ReadFile("/proc/" + f[1] + "/cmdline")
	return !bytes.Equal(cmdline, parent)
}

// descendants lists the processes under root (not root itself), by
// their parents' children lists (childrenOf).
func descendants(root int) []int {
	var out []int
	for todo := childrenOf(root); len(todo) > 0 && len(out) < 10000; todo = todo[1:] {
		out = append(out, todo[0])
		todo = append(todo, childrenOf(todo[0])...)
	}
	return out
}
