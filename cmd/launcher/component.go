package main

import (
	"fmt"
	"os"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/fs"
	"github.com/pinfold/pinfold/components/kms"
	netc "github.com/pinfold/pinfold/components/net"
	"github.com/pinfold/pinfold/components/session"
)

// componentEntry is the hidden first argument with which the launcher
// starts one of its components (component mode): the launcher binary is
// every component, as it is stage 2 and the probe.
const componentEntry = session.ComponentEntry

// componentMain runs the component args[0]. Each reads what the launcher
// hands it on inherited descriptors and refuses to run without them.
func componentMain(args []string) int {
	if len(args) == 1 {
		switch args[0] {
		case "kms":
			return kms.Main()
		case "fs":
			return fs.Main()
		case "net":
			return netc.Main()
		case "bash":
			return bash.Main()
		}
	}
	fmt.Fprintf(os.Stderr, "launcher: error: %s is internal to the launcher: it starts a component (kms, fs, net or bash), given as the only argument\n", componentEntry)
	return exitUsage
}
