package launcher

import (
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ComponentConfinement is what a component process keeps for itself once
// it has its credentials and its listener: everything else goes, before
// it serves its first request.
type ComponentConfinement struct {
	Read  []string // paths it may read beneath
	Write []string // paths it may write beneath (never execute)
	// Connect lets it open sockets (net); without it socket() fails
	// (kms, fs, bash serve only the listener they were handed).
	Connect bool
	// Openat2 keeps openat2 (fs: its paths are resolved beneath the
	// workspace with it; the modes it passes are its own code's).
	Openat2 bool
}

// ConfineComponent confines the calling Go process, every thread of it:
// no_new_privs; not dumpable; Landlock handling every file right of the kernel's ABI
// (at most the highest this launcher knows) with rules for Read and
// Write alone, TCP bind refused (and connect too without Connect, ABI 4+),
// abstract sockets and signals scoped (ABI 6+); seccomp with the agent's
// deny list, plus execve, every new process (threads only: DenyFork),
// and every socket() without Connect. Landlock missing is an error,
// never a weaker component.
func ConfineComponent(c ComponentConfinement) error {
	info := probeLandlock()
	abi := min(info.ABI, maxKnownABI)
	floor, why := floorFiles, ""
	if len(c.Write) > 0 {
		floor, why = floorWrite, " (write rules need the truncate right)"
	}
	if c.Connect {
		floor, why = floorTCP, " (a component with sockets must at least not bind)"
	}
	if abi < floor {
		return &RefusedError{Boundary: "landlock", Detail: fmt.Sprintf("a component confines itself with Landlock ABI %d or more%s; this kernel has %d", floor, why, info.ABI), Hint: kernelForABI(floor)}
	}
	if err := ll.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("component: no_new_privs: %w", err)
	}
	// Not dumpable: no ptrace and no /proc/PID/mem, even for a process of
	// the same uid (the flag is the process's, not a thread's).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("component: not dumpable: %w", err)
	}
	if err := componentLandlock(c, abi); err != nil {
		return err
	}
	// Signals to itself alone, at every ABI: below 6 Landlock scopes none.
	// Without write paths, no truncate(2) either: below 3 Landlock does
	// not check it (with write paths the floor above is 3 already).
	prog, err := BuildSeccomp(SeccompSpec{DenyExec: true, DenyFork: true, DenySockets: !c.Connect, AllowOpenat2: c.Openat2,
		SignalSelf: os.Getpid(), DenyTruncate: len(c.Write) == 0})
	if err != nil {
		return fmt.Errorf("component: %w", err)
	}
	return loadSeccompAllThreads(prog)
}

func componentLandlock(c ComponentConfinement, abi int) error {
	cfg := landlockConfig(abi)
	attr := ll.RulesetAttr{HandledAccessFS: uint64(cfg.HandledAccessFS)}
	if abi >= floorTCP {
		attr.HandledAccessNet = ll.AccessNetBindTCP
		if !c.Connect {
			attr.HandledAccessNet |= ll.AccessNetConnectTCP
		}
	}
	if abi >= floorScopes {
		attr.Scoped = uint64(cfg.Scoped)
	}
	rs, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("component: landlock ruleset (ABI %d): %w", abi, err)
	}
	defer unix.Close(rs)
	add := func(path string, access uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("component: landlock rule for %q: %w", path, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("component: landlock rule for %q: %w", path, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= accessFileOnly
		}
		if err := ll.LandlockAddPathBeneathRule(rs, &ll.PathBeneathAttr{AllowedAccess: access & attr.HandledAccessFS, ParentFd: fd}, 0); err != nil {
			return fmt.Errorf("component: landlock rule for %q: %w", path, err)
		}
		return nil
	}
	// Landlock before ABI 8 restricts one thread at a time; go-landlock
	// reaches every thread through psx, which lists them in
	// /proc/PID/task, halfway through the restriction. So the component
	// may read its own task list, and nothing else of /proc.
	// Named through /proc/self (a link followed in the middle of the
	// path, so the rule is on the task directory itself): a process in a
	// pid namespace of its own (a Code Mode worker) is not os.Getpid()
	// in the host's /proc.
	if err := add("/proc/self/task", accessRead); err != nil {
		return err
	}
	for _, p := range c.Read {
		if err := add(p, accessRead); err != nil {
			return err
		}
	}
	for _, p := range c.Write {
		if err := add(p, accessWrite); err != nil {
			return err
		}
	}
	if err := ll.AllThreadsLandlockRestrictSelf(rs, 0); err != nil {
		return fmt.Errorf("component: landlock restrict: %w", err)
	}
	return nil
}
