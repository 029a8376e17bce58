package register

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// What heldBeneath saw.
const (
	heldUnseen = ""     // the marked process never showed: nothing was learned
	heldNone   = "none" // no process under the launcher held the descriptor
	heldYes    = "held" // one did
)

// heldBeneath waits (up to within) for a process in the tree under root
// whose argv holds marker, then says whether any process of that tree but
// root itself has a descriptor open on dir. Waiting for the marked
// process (the agent) means every process it looks at has long finished
// its exec: a child between clone and exec still holds the parent's
// descriptors, close-on-exec or not. Root reads the others' /proc/N/fd.
func heldBeneath(root int, marker, dir string, within time.Duration) string {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		tree := descendants(root)
		marked := false
		for _, pid := range tree {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			marked = marked || bytes.Contains(cmdline, []byte("\x00"+marker))
		}
		if !marked {
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
