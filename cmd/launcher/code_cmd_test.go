package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/pinfold/pinfold/components/bash"
	"github.com/pinfold/pinfold/components/rpc"
	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

// code run's exit status follows the reason bash refused a script: 119
// for the static check only, 120 for a script over the session's
// script_size, 125 for the rest. The refusals are bash's own (its
// broker's Code), and a few it could send that the broker does not.
func TestCodeRefusedExit(t *testing.T) {
	lim := limitsOf(policy.Default().CodeMode)
	lim.ScriptSize = 64
	b := &bash.Broker{CodeLimits: lim, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	refusal := func(script string) rpc.Decision {
		d, _ := b.Code(context.Background(), script)
		if d.Allowed {
			t.Fatalf("bash ran %q", script)
		}
		return d
	}
	for _, c := range []struct {
		name string
		d    rpc.Decision
		code int
		says string
	}{
		{"static", refusal("return globalThis"), exitDenied, "rule code.static"},
		{"too large", refusal("return " + strings.Repeat("1", 100)), exitUsage, "more than the 64 allowed"},
		{"no worker", refusal("return 1"), exitFailure, "cannot start Code Mode workers"},
		{"malformed", rpc.Deny(rpc.ReasonBadRequest, "", `code takes {"script": …}`), exitFailure, "bad-request"},
		{"caller", rpc.Deny(rpc.ReasonCallerRole, "", "only the agent runs scripts"), exitFailure, "caller-role"},
		{"another rule", rpc.Deny(rpc.ReasonNoRule, "some.rule", "no"), exitFailure, "rule some.rule"},
	} {
		err := codeRefused(c.d)
		var ce *cliError
		if !errors.As(err, &ce) || ce.code != c.code || !strings.Contains(err.Error(), c.says) || !strings.HasPrefix(err.Error(), "code run: ") {
			t.Errorf("%s: %v (%+v), want exit %d saying %q", c.name, err, ce, c.code, c.says)
		}
	}
}

// As root on a host whose cgroups cannot bound the worker, code run
// --tools is refused as a launch is (SR-04): exit 124 (the host cannot
// enforce a boundary), with the launch's own hint, not a bare failure.
func TestCodeRunCgroupRefusal(t *testing.T) {
	info := launcher.CgroupInfo{Mode: launcher.CgroupNone}
	info.Hint = "mount cgroup2 at /sys/fs/cgroup (mount -t cgroup2 cgroup2 /sys/fs/cgroup)"
	refused := launcher.CgroupRefusal(info, errors.New("cgroup: limits cannot be applied: no cgroup file system is mounted"))
	err := codeRunError(fmt.Errorf("code: the worker's cgroup: %w", refused))
	var ce *cliError
	if !errors.As(err, &ce) || ce.code != exitRefused || ce.hint != info.Hint {
		t.Fatalf("%#v", err)
	}
	want := "code run: refused: cgroup: limits cannot be applied: no cgroup file system is mounted: as root, RLIMIT_NPROC does not bound a fork bomb (SR-04): the worker was not started"
	if err.Error() != want {
		t.Errorf("%q\nwant %q", err, want)
	}
	// Other failures stay failures, without a hint.
	if err := codeRunError(errors.New("code: start the worker: no such file")); !errors.As(err, &ce) || ce.code != exitFailure || ce.hint != "" {
		t.Errorf("another failure: %#v", err)
	}
}
