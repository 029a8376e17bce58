package launcher

import (
	"fmt"
	"io"
	"strings"
)

// SettingCaveat is printed under every host report (SD-01).
const SettingCaveat = "if the agent itself starts the launcher, the confinement is a Setting, not a Boundary (SD-01): the person must start it"

const (
	labelWidth    = 14
	boundaryWidth = 23
	verdictWidth  = 12
)

// Text writes a human report, one line per feature, with a hint line under
// every missing one, ending with the Setting caveat. Write errors are
// ignored: the caller owns w.
func (h Host) Text(w io.Writer) {
	line := func(label, text string) { fmt.Fprintf(w, "%-*s%s\n", labelWidth, label, text) }
	more := func(prefix, text string) {
		if text != "" {
			fmt.Fprintf(w, "%*s%s%s\n", labelWidth, "", prefix, text)
		}
	}
	feature := func(label string, f Feature, summary string) {
		if f.Available {
			line(label, joinNote(summary, f.Detail))
			more("hint: ", f.Hint)
			return
		}
		line(label, "unavailable: "+f.Detail)
		more("hint: ", f.Hint)
	}

	line("kernel", h.Kernel)
	if h.Root {
		line("root", "yes (euid 0): cgroups, throwaway uids and components mode are possible")
	} else {
		line("root", "no: user namespaces, Landlock, seccomp and rlimits; no cgroup limits, no components mode")
	}
	feature("landlock", h.Landlock.Feature, landlockSummary(h.Landlock))
	for _, f := range h.Landlock.Features {
		if f.Detail != "" {
			more(f.Name+": ", f.Detail)
		}
	}
	feature("user ns", h.UserNS, "available")
	feature("network ns", h.NetNS, "available")
	feature("pid ns", h.PidNS, "available")
	feature("mount ns", h.MountNS, "available")
	seccomp := "available; libseccomp " + h.Seccomp.LibVersion
	if len(h.Seccomp.Actions) > 0 {
		seccomp += "; actions " + strings.Join(h.Seccomp.Actions, " ")
	}
	feature("seccomp", h.Seccomp.Feature, seccomp)
	cg := h.Cgroup.Mode
	if h.Cgroup.Detail != "" {
		cg += "; " + h.Cgroup.Detail
	}
	if h.Cgroup.Writable {
		cg += "; writable"
	}
	if h.Cgroup.Available {
		line("cgroups", cg)
	} else {
		line("cgroups", "unusable: "+cg)
	}
	more("hint: ", h.Cgroup.Hint)
	line("setting", SettingCaveat)
}

// landlockSummary is "ABI 7 (fs, refer, …); not enforced: tsync, …; errata 0x7".
func landlockSummary(l LandlockInfo) string {
	var on, off []string
	for _, f := range l.Features {
		if f.Enforced {
			on = append(on, f.Name)
		} else {
			off = append(off, fmt.Sprintf("%s (ABI %d)", f.Name, f.MinABI))
		}
	}
	s := fmt.Sprintf("ABI %d (%s)", l.ABI, strings.Join(on, ", "))
	if len(off) > 0 {
		s += "; not enforced: " + strings.Join(off, ", ")
	}
	return s + fmt.Sprintf("; errata %#x", l.Errata)
}

// WriteAssessment writes one line per Boundary with its verdict, hint and
// risk lines under it, and a closing line saying whether the launch would
// be refused.
func WriteAssessment(w io.Writer, as []Assessment) {
	fmt.Fprintf(w, "%-*s%-*s%s\n", boundaryWidth, "BOUNDARY", verdictWidth, "VERDICT", "DETAIL")
	indent := boundaryWidth + verdictWidth
	var refused, degraded []string
	for _, a := range as {
		fmt.Fprintf(w, "%-*s%-*s%s\n", boundaryWidth, a.Boundary, verdictWidth, a.Verdict, a.Detail)
		if a.Hint != "" {
			fmt.Fprintf(w, "%*shint: %s\n", indent, "", a.Hint)
		}
		if a.Risk != "" {
			fmt.Fprintf(w, "%*srisk: %s\n", indent, "", a.Risk)
		}
		switch a.Verdict {
		case Refused:
			refused = append(refused, a.Boundary)
		case Degraded:
			degraded = append(degraded, a.Boundary)
		}
	}
	switch {
	case len(refused) > 0:
		fmt.Fprintf(w, "the launch would be refused here: %s cannot be applied\n", strings.Join(refused, ", "))
	case len(degraded) > 0:
		fmt.Fprintf(w, "every Boundary can be applied here; weaker than asked: %s\n", strings.Join(degraded, ", "))
	default:
		fmt.Fprintln(w, "every Boundary the policy asks for is applied here")
	}
}
