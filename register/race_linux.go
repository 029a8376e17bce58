package register

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// symlinkSwapCheck is SR-23: the workspace is replaced by a symlink to a
// directory outside it after the launcher checked the policy and before
// stage 2 opens the workspace. The race is made deterministic by stopping
// stage 2 while it still holds its plan pipe (it has opened nothing), then
// swapping, then letting it go on. The agent writes a file into the
// workspace: if stage 2 followed the link, the file lands outside. The
// control writes through the same link unconfined, and lands outside.
func symlinkSwapCheck(s *scratch) (probeCase, error) {
	target := filepath.Join(s.outside, "target")
	if err := os.Mkdir(target, 0o755); err != nil && !os.IsExist(err) {
		return probeCase{}, err
	}
	written := filepath.Join(s.ws, "written")
	var window string // what the race saw; "" when the swap happened in time
	swap := func() error {
		if err := os.Rename(s.ws, s.ws+".orig"); err != nil {
			return err
		}
		return os.Symlink(target, s.ws)
	}
	landed := func() bool { _, err := os.Lstat(filepath.Join(target, "written")); return err == nil }
	// The control writes a file of its own name, so it cannot be taken
	// for the confined run's.
	pc := probeCase{name: "the workspace", probe: []string{"write", written}, direct: true, controlProbe: []string{"write", filepath.Join(s.ws, "control")}, retries: 4,
		race: swapRace(&window, swap),
		refused: func(r Run) bool {
			return r.Code >= 120 && r.Code <= 125 && strings.Contains(r.Stderr, "symlink") && !landed()
		},
		rejudge: func(v Verdict, why string) (Verdict, string) {
			// A swap after stage 2 opened the workspace proves nothing
			// either way: the agent's write then meets the link on the
			// host's read-only mount (EROFS), which is no refusal of
			// the check's, unless it landed through the link.
			if window != "" && !landed() {
				return Inconclusive, "the swap missed the window between the policy check and stage 2: " + window
			}
			return v, why
		}}
	// The read path first: the workspace case leaves the workspace a
	// link, which the next launch in this scratch would refuse at once.
	rc, err := readPathSwap(s)
	if err != nil {
		return probeCase{}, err
	}
	rc.retries, pc.retries = pc.retries, 0
	rc.also = []probeCase{pc}
	return rc, nil
}

// swapRace is a case's race: swap while stage 2 is held before it opens
// anything; window says why not when the window was missed, and the swap
// is then made anyway (the control still needs its link).
func swapRace(window *string, swap func() error) func(launcher int) {
	return func(launcher int) {
		*window = stopStage2ThenSwap(launcher, swap)
		if *window != "" {
			if err := swap(); err != nil {
				*window += "; and the swap failed: " + err.Error()
			}
		}
	}
}

// readPathSwap is SR-23's case for a read path: no mount is made for one,
// so only stage 2's opening of the Landlock rule's path sees a link
// swapped in (a mutation audit: with that open following links, the
// workspace case alone still passed, refused where its mount is made).
// The agent reads a file through the read path: if stage 2 followed the
// link, Landlock allows the directory outside, and the read succeeds. The
// control reads the same file unconfined, through the link.
func readPathSwap(s *scratch) (probeCase, error) {
	listed, secret := filepath.Join(s.outside, "listed"), filepath.Join(s.outside, "secret-dir")
	for _, d := range []string{listed, secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return probeCase{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "secret"), []byte("outside\n"), 0o644); err != nil {
		return probeCase{}, err
	}
	var window string
	swap := func() error {
		if err := os.Rename(listed, listed+".orig"); err != nil {
			return err
		}
		return os.Symlink(secret, listed)
	}
	text := strings.Replace(s.policyText(""), "[files]\n", fmt.Sprintf("[files]\nread = [%q]\n", listed), 1)
	return probeCase{name: "a read path", raw: text, probe: []string{"read", filepath.Join(listed, "secret")}, direct: true,
		race: swapRace(&window, swap),
		refused: func(r Run) bool {
			return r.Code == 125 && strings.Contains(r.said(), "passes through a symlink now")
		},
		rejudge: func(v Verdict, why string) (Verdict, string) {
			// Missed, the agent's read of a file the policy never listed
			// is refused by Landlock, which proves nothing of the swap.
			if window != "" && v != Fail {
				return Inconclusive, "the swap missed the window between the policy check and stage 2: " + window
			}
			return v, why
		}}, nil
}

// stopStage2ThenSwap waits (at most 5 s) for the launcher's stage 2 to
// appear, stops it, and runs swap if stage 2 has not yet read its whole
// plan (its plan pipe, fd 3, is still open: no path has been opened).
// Stage 2 runs on when it returns. It returns "" when swap ran in that
// window, else what happened.
func stopStage2ThenSwap(launcher int, swap func() error) string {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range childrenOf(launcher) {
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil || !bytes.Contains(cmdline, []byte("\x00__pinfold_stage2")) {
				continue
			}
			if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
				return "stop stage 2: " + err.Error()
			}
			defer unix.Kill(pid, unix.SIGCONT)
			if !waitStopped(pid, deadline) {
				return "stage 2 did not stop"
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/fd/3", pid)); err != nil {
				return "stage 2 had already read its plan"
			}
			if err := swap(); err != nil {
				return "swap: " + err.Error()
			}
			return ""
		}
		time.Sleep(20 * time.Microsecond)
	}
	return "stage 2 never appeared"
}

// childrenOf lists the children of every thread of pid.
func childrenOf(pid int) []int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var kids []int
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// waitStopped waits until pid is in the stopped state.
func waitStopped(pid int, deadline time.Time) bool {
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return true
		}
		time.Sleep(20 * time.Microsecond)
	}
	return false
}
