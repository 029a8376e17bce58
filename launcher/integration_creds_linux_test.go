package launcher

// Integration tests for what stage 2 hands the agent besides its mounts
// and filters: no capability in any set.

import (
	"testing"
)

// The agent holds no capability in any set, the bounding set included
// (what it still held, a set-uid-root program or a file capability
// could give back on exec). The control, root unconfined, holds them all.
func TestIntegrationNoCapabilities(t *testing.T) {
	newSandbox(t).denied(t, itPol{}, itOpts{}, "none", "caps")
}
