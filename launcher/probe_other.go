//go:build !linux

package launcher

import "runtime"

// Probe reports every feature unavailable: the launcher's Boundaries are
// Linux kernel mechanisms.
func Probe() Host {
	no := Feature{Detail: "not Linux (" + runtime.GOOS + ")", Hint: "run the launcher on Linux"}
	return Host{
		Kernel:   runtime.GOOS,
		Landlock: LandlockInfo{Feature: no, Features: landlockFeatures(0, 0)},
		UserNS:   no, NetNS: no, PidNS: no, MountNS: no,
		Seccomp: SeccompInfo{Feature: no, Actions: []string{}},
		Cgroup:  CgroupInfo{Mode: CgroupNone, Controllers: []string{}, Feature: no},
	}
}
