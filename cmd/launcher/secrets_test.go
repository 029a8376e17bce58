package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Without a key file and without a terminal to ask on, there is no key:
// a usage error that says what to give, not a prompt nobody can answer.
func TestVaultKeyNeedsTerminal(t *testing.T) {
	e := env{stdout: io.Discard, stderr: io.Discard}
	_, err := e.vaultKey("", nil, false)
	var ce *cliError
	if !errors.As(err, &ce) || ce.code != exitUsage || !strings.Contains(err.Error(), "no terminal") || !strings.Contains(ce.hint, "--key-file") {
		t.Fatalf("no key file, no terminal: %v", err)
	}
}
