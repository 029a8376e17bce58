package launcher

import (
	"os"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/sys/unix"
)

// coreDumpsUncovered says where a crash in the sandbox still reaches the
// host's core dump handler, for the launch summary. The agent's
// RLIMIT_CORE is 1 (buildRlimits), which the kernel takes as "no dump"
// for a file and a pipe alike; a hard limit of 0 the launcher inherited
// stays 0, and a pipe then runs as root on every crash. A socket in
// core_pattern (Linux 6.16+) is told of every crash whatever the limit.
func coreDumpsUncovered(p *Plan) []string {
	limit, found := uint64(0), false
	for _, r := range p.Rlimits {
		if r.Resource == unix.RLIMIT_CORE {
			limit, found = r.Value, true
			var l unix.Rlimit
			if r.AtMost && unix.Getrlimit(unix.RLIMIT_CORE, &l) == nil {
				limit = min(limit, l.Max)
			}
		}
	}
	if !found {
		return nil
	}
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		return nil // no /proc/sys here, so no core_pattern to say
	}
	return coreDumpsReach(string(pattern), limit)
}

// coreDumpsReach is coreDumpsUncovered for a core_pattern and the agent's
// RLIMIT_CORE.
func coreDumpsReach(pattern string, limit uint64) []string {
	pattern = strings.TrimRight(pattern, "\n") // the kernel reads a leading blank as part of a file name
	handler := func(s string) string {
		name, _, _ := strings.Cut(strings.TrimSpace(s), " ")
		if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsGraphic(r) }) {
			return strconv.QuoteToGraphic(name) // root's text, but for a terminal
		}
		return name
	}
	switch {
	case strings.HasPrefix(pattern, "|") && limit != 1:
		return []string{"a crash runs the host's core dump program " + handler(pattern[1:]) +
			" as root (the hard core limit the launcher inherited is 0; 1 would stop it; SD-28)"}
	case strings.HasPrefix(pattern, "@"):
		return []string{"a crash is sent to the host's core dump socket " + handler(strings.TrimPrefix(pattern[1:], "@")) + " (SD-28)"}
	}
	return nil
}
