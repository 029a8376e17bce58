package launcher

// #include "stage2_linux.h"
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// HoldEntry is the hidden first argument with which the launcher binary
// only holds a user namespace: its constructor waits for the end of
// standard input and exits, before the Go runtime starts.
const HoldEntry = C.PF_HOLD_ENTRY

// IdmapUserNS returns a user namespace in which owner (and ownerGID) is
// uid (and gid), and nothing else is mapped: the namespace an idmapped
// mount needs to show owner's files as uid's. Its only process is the
// launcher binary (launcherPath) holding it until it is opened.
func IdmapUserNS(launcherPath string, owner, ownerGID, uid, gid int) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	defer w.Close()
	cmd := &exec.Cmd{
		Path: launcherPath, Args: []string{"launcher", HoldEntry}, Env: []string{}, Dir: "/", Stdin: r,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: owner, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: ownerGID, HostID: gid, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
			Setpgid:     true, // out of the launcher's group before it can be stopped (PreparePidfd)
		},
	}
	PreparePidfd()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("idmap user namespace: %w", err)
	}
	r.Close()
	// The child is ours and not yet waited for: its pid cannot be reused.
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
	w.Close()
	cmd.Wait()
	if err != nil {
		return nil, fmt.Errorf("idmap user namespace: %w", err)
	}
	return ns, nil
}
