package launcher

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The real launcher on a kernel with a lower Landlock ABI: the probe's
// landlock-abi wrapper answers the version query with N and refuses what
// ABI N lacks, as such a kernel does (SR-24: refused with the ABI needed,
// the ABI the kernel has and a hint, or run with what the policy asked).

// launchAtABI runs the probe confined by p, the launcher wrapped so that
// it sees Landlock ABI abi (and, with wrap, inside the probe's other
// wrappers too, outermost first).
func (s *itSandbox) launchAtABI(t *testing.T, abi int, p itPol, wrap []string, probeArgs ...string) itResult {
	t.Helper()
	path, hash := s.writePolicy(t, p)
	argv := []string{itEnv.launcher, "__pinfold_probe", "landlock-abi", fmt.Sprint(abi)}
	for _, w := range wrap {
		argv = append(argv, itEnv.launcher, "__pinfold_probe", w)
	}
	// Unprivileged, the wrappers stay root (the listener reads stage 2's
	// memory) and the launch beneath them drops to the sandbox's uid.
	root := *s
	if s.uid != 0 {
		argv = append(argv, itEnv.launcher, "__pinfold_probe", "as-uid", fmt.Sprint(s.uid))
		root.uid = 0
	}
	argv = append(argv, itEnv.launcher, "--policy-sha256", hash, "--policy", path, "--")
	argv = append(argv, itEnv.probe)
	return root.run(t, itOpts{}, append(argv, probeArgs...)...)
}

func TestIntegrationLowerLandlockABI(t *testing.T) {
	for _, uid := range []int{0, nobody} {
		t.Run(fmt.Sprintf("uid %d", uid), func(t *testing.T) { testLowerLandlockABI(t, newUnprivSandbox(t, uid)) })
	}
}

func testLowerLandlockABI(t *testing.T, s *itSandbox) {
	ports := itPol{network: "ports", connectTCP: []int{443}}
	type refusal struct{ need, have, hint string }
	for _, c := range []struct {
		name string
		abi  int
		p    itPol
		wrap []string
		// refused: what the refusal names; nil: the launch runs, and the
		// summary names the ABI and, below 6, the scoping it lacks.
		refused *refusal
	}{
		{"write paths, ABI 1", 1, itPol{}, nil, &refusal{"ABI ≥ 3", "have ABI 1", "Linux ≥ 6.2"}},
		{"write paths, ABI 2", 2, itPol{}, nil, &refusal{"ABI ≥ 3", "have ABI 2", "Linux ≥ 6.2"}},
		{"write paths, ABI 3", 3, itPol{}, nil, nil},
		{"ports, ABI 3", 3, ports, nil, &refusal{"ABI ≥ 4", "have ABI 3", "Linux ≥ 6.7"}},
		{"ports, ABI 4", 4, ports, nil, nil},
		{"none without netns, ABI 3", 3, itPol{}, []string{"without-netns"}, &refusal{"ABI 3 < 4", "ABI 3 < 4", "Linux ≥ 6.7"}},
		{"none without netns, ABI 4", 4, itPol{}, []string{"without-netns"}, nil},
		{"device paths, ABI 4", 4, itPol{read: []string{"/dev/zero"}}, nil, nil},
		{"device paths, ABI 5", 5, itPol{read: []string{"/dev/zero"}}, nil, nil},
		{"scoping, ABI 5", 5, itPol{}, nil, nil},
		{"scoping, ABI 6", 6, itPol{}, nil, nil},
		// The write paths are fs's in components mode: the same floor.
		{"components write paths, ABI 2", 2, componentsPol(), nil, &refusal{"ABI ≥ 3", "have ABI 2", "Linux ≥ 6.2"}},
		{"components write paths, ABI 3", 3, componentsPol(), nil, nil},
		// net confines itself with TCP rules: refused before the agent
		// starts, not a session whose net dies under it.
		{"components proxy, ABI 3", 3, proxyComponentsPol(), nil, &refusal{"ABI ≥ 4", "have ABI 3", "Linux ≥ 6.7"}},
		{"components proxy, ABI 4", 4, proxyComponentsPol(), nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.p.mode == "components" && s.uid != 0 {
				t.Skip("components mode runs as root only")
			}
			if slices.Contains(c.wrap, "without-netns") && s.uid != 0 {
				// The double's sysctl is a file bound over /proc/sys, and
				// the kernel lets no user namespace mount a fresh /proc
				// where part of it is hidden so: not a host's behaviour.
				t.Skip("without-netns hides part of /proc, so an unprivileged stage 2 cannot mount its own")
			}
			r := s.launchAtABI(t, c.abi, c.p, c.wrap, "noop")
			if c.refused != nil {
				if r.code != 124 || r.stdout != "" {
					t.Fatalf("want a refusal (exit 124) before the agent ran, got %s", r)
				}
				// In components mode the session's components run
				// before the agent's assessment: the refusal says what
				// became of them, not that nothing started.
				ended := "nothing was started"
				if c.p.mode == "components" {
					ended = "the agent was not started; the session's components were stopped"
				}
				for _, want := range []string{"launcher: error: ", c.refused.need, c.refused.have, "launcher: hint: ", c.refused.hint, ended} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("the refusal does not say %q: %s", want, r.stderr)
					}
				}
				return
			}
			if r.code != 0 || r.stdout != "ok\n" {
				t.Fatalf("want the probe run (ok, exit 0), got %s", r)
			}
			if want := fmt.Sprintf("landlock ABI %d (", c.abi); !strings.Contains(r.stderr, want) {
				t.Errorf("the summary does not say %q: %s", want, r.stderr)
			}
			if scoped := !strings.Contains(r.stderr, "landlock scoping degraded"); scoped != (c.abi >= 6) {
				t.Errorf("ABI %d: the summary says scoping degraded = %v: %s", c.abi, !scoped, r.stderr)
			}
			if dev := strings.Contains(r.stderr, "landlock device ioctl degraded"); dev != (c.p.read != nil && c.abi < 5) {
				t.Errorf("ABI %d: the summary says device ioctl degraded = %v: %s", c.abi, dev, r.stderr)
			}
		})
	}
}

// TestLandlockABIWrapper: the double answers as a kernel at ABI N does,
// seen through hello.
func TestIntegrationLandlockABIWrapperHello(t *testing.T) {
	s := newSandbox(t)
	for abi := 1; abi <= 7; abi++ {
		r := s.run(t, itOpts{}, itEnv.launcher, "__pinfold_probe", "landlock-abi", fmt.Sprint(abi), itEnv.launcher, "hello")
		if want := fmt.Sprintf("landlock      ABI %d (", abi); r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("hello at ABI %d: want %q, got %s", abi, want, r)
		}
	}
}

func proxyComponentsPol() itPol {
	p := componentsPol()
	p.network, p.netExtra = "proxy", "allow = [\"example.com\"]\n"
	return p
}
