package launcher

import (
	"os"
	"testing"
)

// requireFeature skips t when the kernel lacks feature name, saying what
// was found, and fails instead when PINFOLD_REQUIRE_ALL_FEATURES=1 (set by
// .ci/run, whose kernel has every feature).
func requireFeature(t *testing.T, name string, ok bool, found string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("PINFOLD_REQUIRE_ALL_FEATURES") == "1" {
		t.Fatalf("requires %s, found %s (PINFOLD_REQUIRE_ALL_FEATURES=1 turns this skip into a failure)", name, found)
	}
	t.Skipf("requires %s, found %s", name, found)
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
