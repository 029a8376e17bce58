package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// usage is pid's open descriptors and threads, or -1s when it is gone.
func usage(pid int) (fds, threads int) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1, -1
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return len(ents), threads
}

// waitAgent waits (up to 20s) until the agent runs a command with marker
// in its argv (words joined by NUL, so that the script, which holds the
// same words joined by a space, does not match).
func waitAgent(marker string) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if agentRunning(marker) {
			return true
		}
	}
	return false
}

// The agent opens 300 connections to fs's listener and holds them: the
// launcher (root, outside the sandbox) never sees them (it handed the
// listener over), so its descriptors and threads do not grow; fs holds
// at most its bound of them (rpc's 64 per listener; the rest wait in the
// kernel's backlog) and is back to what it had once they close. Without
// the bound fs held one descriptor for each, up to its memory cgroup.
func TestIntegrationComponentsConnectionStorm(t *testing.T) {
	s := newSandbox(t)
	type sample struct{ launcherFDs, launcherThreads, fsFDs int }
	var before, held, after sample
	var failed string
	script := `sleep 1.1
bash -c 'n=0; for i in $(seq 300); do exec {fd}<>/dev/tcp/127.0.0.1/7401 || break; n=$((n+1)); done; echo opened=$n; exec sleep 4.1'
sleep 3.1
echo STORM-DONE`
	r := s.agentSh(t, componentsPol(), itOpts{onStart: func(pid int) {
		go func() {
			pids, err := waitSession(pid)
			if err != nil {
				failed = err.Error()
				return
			}
			fs := pids["fs"]
			if !waitAgent("sleep\x001.1") {
				failed = "the agent did not start"
				return
			}
			before.launcherFDs, before.launcherThreads = usage(pid)
			before.fsFDs, _ = usage(fs)
			if !waitAgent("sleep\x004.1") {
				failed = "the agent did not open its connections"
				return
			}
			// The most seen over a second of the connections held.
			for i := 0; i < 50; i++ {
				lf, lt := usage(pid)
				ff, _ := usage(fs)
				held = sample{max(held.launcherFDs, lf), max(held.launcherThreads, lt), max(held.fsFDs, ff)}
				time.Sleep(20 * time.Millisecond)
			}
			if !waitAgent("sleep\x003.1") {
				failed = "the agent did not close its connections"
				return
			}
			// The backlog's connections are accepted and end: wait for fs
			// to close them (at most two seconds).
			for i := 0; i < 100; i++ {
				after.launcherFDs, after.launcherThreads = usage(pid)
				if after.fsFDs, _ = usage(fs); after.fsFDs <= before.fsFDs+2 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}}, script)
	if r.code != 0 || r.stdout != "opened=300\nSTORM-DONE\n" {
		t.Fatalf("storm: %s", r)
	}
	if failed != "" {
		t.Fatal(failed)
	}
	t.Logf("launcher fds/threads %d/%d before, %d/%d held, %d/%d after; fs fds %d before, %d held, %d after",
		before.launcherFDs, before.launcherThreads, held.launcherFDs, held.launcherThreads, after.launcherFDs, after.launcherThreads,
		before.fsFDs, held.fsFDs, after.fsFDs)
	if before.fsFDs <= 0 || held.fsFDs <= before.fsFDs {
		t.Fatalf("fs's descriptors: %d before, %d held: the storm did not reach fs", before.fsFDs, held.fsFDs)
	}
	if held.launcherFDs > before.launcherFDs+2 || held.launcherThreads > before.launcherThreads+4 {
		t.Errorf("the launcher grew with the agent's connections: %d descriptors and %d threads, from %d and %d",
			held.launcherFDs, held.launcherThreads, before.launcherFDs, before.launcherThreads)
	}
	if held.fsFDs > before.fsFDs+64+4 {
		t.Errorf("fs held %d descriptors for 300 connections (%d before): more than its bound of 64", held.fsFDs, before.fsFDs)
	}
	// A descriptor or two either way is fs's own (a run saw one more
	// after than before); 300 connections would be far more.
	if after.fsFDs > before.fsFDs+2 || after.launcherFDs > before.launcherFDs+2 {
		t.Errorf("once the connections closed: fs %d descriptors (%d before), the launcher %d (%d before)",
			after.fsFDs, before.fsFDs, after.launcherFDs, before.launcherFDs)
	}
}
