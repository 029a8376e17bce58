// Command probe is the one-action probe program that the launcher's
// integration tests confine and run as a control; the probe itself, its
// actions and its output protocol are in package
// github.com/pinfold/pinfold/launcher/probe.
//
//	probe ACTION [ARGS...]
//
// The tests build it with CGO_ENABLED=0 so that it needs no loader or
// libraries.
//
// The go:debug lines keep the Go runtime (1.25+) from opening the
// cgroup's cpu.cfs_quota_us and cpu.cfs_period_us at start-up and
// holding them: they would land on the lowest free descriptors, 3 and 4,
// and `fd 3` would find the runtime's own file instead of an inherited
// one.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/pinfold/pinfold/launcher/probe"
)

// The probe program's argv is exe ACTION [ARGS...], so the prefix that
// runs it again is empty.
func main() { probe.Main(nil, os.Args[1:]) }
