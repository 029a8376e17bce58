package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// wakesInit's helper, like flicker's, ignores the terminal's stop
// signals and arms a timer with SIGCONT when the agent takes Ctrl-Z
// (300 ms later, well after stage 2 stopped it and began to watch). Once
// continued it runs on: every half millisecond it sends stage 2 (pid 1
// to it) a SIGCHLD, which stage 2 holds for its signalfd, and appends a
// byte to argv[1], for 10 s.
const wakesInit = `#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
static volatile sig_atomic_t armed;
static pid_t child;
static void tstp(int s) { (void)s; kill(child, SIGUSR1); usleep(20000); signal(SIGTSTP, SIG_DFL); raise(SIGTSTP); }
static void usr1(int s) { (void)s; armed = 1; }
static void woke(int s) { (void)s; }
int main(int argc, char **argv) {
	int out = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (argc != 2 || out < 0) return 2;
	if ((child = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTTOU, SIG_IGN); signal(SIGTTIN, SIG_IGN); signal(SIGTSTP, SIG_IGN);
		signal(SIGCONT, woke); signal(SIGUSR1, usr1);
		while (!armed) pause();
		timer_t t; struct sigevent ev = {0};
		ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGCONT;
		struct itimerspec once = {{0, 0}, {0, 300000000L}};
		if (timer_create(CLOCK_MONOTONIC, &ev, &t) || timer_settime(t, 0, &once, 0)) return 1;
		pause();
		for (int i = 0; i < 20000; i++) {
			kill(1, SIGCHLD);
			write(out, ".", 1);
			usleep(500);
		}
		_exit(0);
	}
	signal(SIGTSTP, tstp);
	for (;;) pause();
}
`

// Stage 2's watch over a stopped tree looked only when its poll timed
// out: a process of the tree that a timer continued and that then woke
// stage 2 more often than every PF_STOPPED_TICK_MS (a SIGCHLD sent to
// pid 1 each half millisecond) was never looked at, and ran on while the
// person's shell had the terminal, the job shown stopped (a review).
// Stage 2 now looks at every wakeup that is not stage 1's. Unprivileged
// (as root the tree is frozen); the control, the same agent run by the
// shell, shows that the helper runs on once continued.
func TestIntegrationJobControlWatchWoken(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("no C compiler (cgo builds need one): %v", err)
	}
	for _, c := range []struct {
		name     string
		uid      int
		confined bool
	}{{"unprivileged", nobody, true}, {"control", 0, false}} {
		t.Run(c.name, func(t *testing.T) {
			s := newUnprivSandbox(t, c.uid)
			src, bin := filepath.Join(s.outside, "wakes.c"), filepath.Join(s.outside, "wakes")
			must(t, os.WriteFile(src, []byte(wakesInit), 0o644))
			if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			path, hash := s.writePolicy(t, itPol{exec: []string{s.outside, "/usr/lib"}})
			ran := filepath.Join(s.ws, "ran")
			agent := bin + " " + ran
			if c.confined {
				agent = fmt.Sprintf("%s --policy-sha256 %s --policy %s --quiet -- %s", itEnv.launcher, hash, path, agent)
			}
			term := readyShell(t, s)
			term.send(agent + "\n")
			agentRuns(t, ran)
			term.suspend()
			term.send("echo back-$?\n")
			term.expect("back-148")
			time.Sleep(time.Second) // the timer has continued the helper
			size := func() int64 {
				fi, err := os.Stat(ran)
				if err != nil {
					return 0
				}
				return fi.Size()
			}
			before := size()
			time.Sleep(500 * time.Millisecond)
			after := size()
			if !c.confined {
				if after <= before {
					t.Fatalf("control: the helper did not run on once continued (%d bytes, then %d), so the confined run proves nothing", before, after)
				}
				return
			}
			if after > before {
				t.Fatalf("a process of the stopped agent ran on while the person's shell had the terminal (%d bytes, then %d, half a second later): stage 2's watch did not see it", before, after)
			}
			term.send("fg\n") // stage 2 said why on the agent's terminal, relayed now
			term.expect("ran again by itself")
		})
	}
}
