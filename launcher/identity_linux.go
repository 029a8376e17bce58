package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// dropPrivileges changes to the plan's identity and clears every
// capability set, then sets no_new_privs. Identity, the effective,
// permitted and inheritable sets and no_new_privs change on every thread,
// so nothing in stage 2 keeps a privilege the agent lacks.
func dropPrivileges(id IdentityPlan) error {
	// syscall's (not x/sys/unix's) credential calls change every thread.
	if id.Setuid {
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
		if err := syscall.Setresgid(id.GID, id.GID, id.GID); err != nil {
			return fmt.Errorf("setgid %d: %w", id.GID, err)
		}
	}
	last, err := lastCap()
	if err != nil {
		return err
	}
	// The bounding and ambient sets only matter across execve, and only
	// this thread starts the agent, so they are cleared here alone (one
	// all-threads call per capability cost milliseconds). The bounding set
	// needs CAP_SETPCAP to shrink, so it goes before the uid change.
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	if id.Setuid {
		if err := syscall.Setresuid(id.UID, id.UID, id.UID); err != nil {
			return fmt.Errorf("setuid %d: %w", id.UID, err)
		}
		// The credential change cleared the parent-death signal.
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
			return fmt.Errorf("re-arm the parent-death signal: %w", err)
		}
	}
	if err := clearCapsAllThreads(); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	// Stage 2 runs as the agent's uid: without this the agent could read
	// its memory or reopen its descriptors through /proc/1. (The agent's
	// own execve makes the agent dumpable again, which is its business.)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	if err := ll.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return nil
}

func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("read cap_last_cap: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > 63 {
		return 0, fmt.Errorf("cap_last_cap %q is not a capability number", b)
	}
	return n, nil
}
