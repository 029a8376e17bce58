package launcher

import (
	"os"

	"golang.org/x/sys/unix"
)

// relayedSignals are the signals the launcher forwards to the agent.
var relayedSignals = []os.Signal{
	unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT,
	unix.SIGWINCH, unix.SIGUSR1, unix.SIGUSR2,
}
