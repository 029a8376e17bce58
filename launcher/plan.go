package launcher

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Plan is everything stage 2 needs, decided by stage 1. Stage 2 applies it
// and does no thinking of its own: every list is final, every path is
// absolute and was checked in stage 1, the seccomp program is compiled.
// It travels over an inherited pipe (MarshalBinary), never in argv or the
// environment.
type Plan struct {
	Argv []string // the agent's argv; Argv[0] as given
	Path string   // the agent's executable, resolved by stage 1
	Env  []string // the agent's whole environment
	Dir  string   // the agent's working directory (the workspace)

	// Join is how many v1 cgroup tasks files stage 2 holds, from fd 6 on:
	// it writes "0" to each, its very first step.
	Join int

	Mounts MountPlan
	NewNet bool // stage 2 is in a new, empty network namespace: bring lo up
	// ProxyPort, when not 0, has stage 2 make a listener on
	// 127.0.0.1:ProxyPort in that namespace and hand it to stage 1 over
	// the socket that follows the cgroup files (fd 6+Join): the net
	// process serves the agent on it.
	ProxyPort uint16
	Rlimits   []RlimitPlan
	Identity  IdentityPlan
	Landlock  LandlockPlan
	Seccomp   []byte // SeccompProgram.Marshal()
}

// MountPlan is the mount namespace's shape.
type MountPlan struct {
	Hide    []string   // directories covered by an empty read-only tmpfs (SR-08)
	TmpSize int64      // bytes of the private /tmp (and /dev/shm)
	Home    string     // private HOME to create inside /tmp, or ""
	Trees   []TreePlan // cloned and mounted again with their own flags, outermost first
	Masks   []MaskPlan // the launcher's own files, covered after the trees, outermost first
	Memfd   bool       // set vm.memfd_noexec=2 in the new pid namespace (needs root)
}

// TreePlan is one tree stage 2 clones (opened without following symlinks)
// and mounts again: write trees writable but noexec, nosuid, nodev; read
// and exec trees read-only, exec trees executable.
type TreePlan struct {
	Path  string
	Write bool
	Exec  bool
	Idmap bool // through the user namespace at fd 6
	Owner int  // its owner when stage 1 looked; stage 2 refuses a change
}

// RlimitPlan is one setrlimit call.
type RlimitPlan struct {
	Resource int
	Name     string
	Value    uint64 // soft = hard
	AtMost   bool   // lower to Value only: never raise what the launcher inherited
}

// IdentityPlan is who the agent runs as.
type IdentityPlan struct {
	Setuid   bool // change to UID/GID (root launches: a throwaway identity)
	UID      int
	GID      int
	Owner    int // on-disk uid the idmapped trees map onto UID (root launches)
	OwnerGID int // on-disk gid mapped onto GID
}

// LandlockPlan is the ruleset, at the ABI stage 1 chose.
type LandlockPlan struct {
	ABI        int
	HandledFS  uint64
	HandledNet uint64
	Scoped     uint64
	Paths      []PathRule
	Ports      []PortRule
}

// PathRule grants Access beneath Path, which stage 2 opens refusing
// symlinks in every component (SR-02, SR-12).
type PathRule struct {
	Path   string
	Access uint64
}

// PortRule grants Access on one TCP port.
type PortRule struct {
	Port   uint16
	Access uint64
}

// maxPlanSize bounds the plan; stage 2 refuses a larger one.
const maxPlanSize = 4 << 20

// maxJoin bounds Plan.Join (a host has a handful of v1 hierarchies).
const maxJoin = 16

// planMagic opens and planEnd closes the plan on the wire, so a plan from
// another version of the launcher, or a truncated one, is refused.
const (
	planMagic = "PFPLAN01"
	planEnd   = "PFEND"
)

// MarshalBinary encodes the plan for stage 2, which is C (stage2_linux.c)
// and reads it field by field in exactly this order: integers little
// endian, strings and lists as a 32-bit count followed by their items. No
// string may hold a NUL byte: C would cut it short.
func (p *Plan) MarshalBinary() ([]byte, error) {
	w := &planWriter{b: []byte(planMagic)}
	w.strs(p.Argv)
	w.str(p.Path)
	w.strs(p.Env)
	w.str(p.Dir)
	if p.Join > maxJoin {
		w.fail(fmt.Errorf("%d cgroup files, more than %d", p.Join, maxJoin))
	}
	w.u32(p.Join)
	m := p.Mounts
	w.strs(m.Hide)
	w.u64(uint64(m.TmpSize))
	w.str(m.Home)
	w.u32(len(m.Trees))
	for _, t := range m.Trees {
		w.str(t.Path)
		w.flag(t.Write)
		w.flag(t.Exec)
		w.flag(t.Idmap)
		w.id(t.Owner)
	}
	w.u32(len(m.Masks))
	for _, k := range m.Masks {
		if !strings.HasPrefix(k.Path, "/") {
			w.fail(fmt.Errorf("covered path %q is not absolute", k.Path))
		}
		w.str(k.Path)
		w.flag(k.Dir)
	}
	w.flag(m.Memfd)
	w.flag(p.NewNet)
	if p.ProxyPort != 0 && !p.NewNet {
		w.fail(errors.New("a proxy listener needs the agent's own network namespace"))
	}
	w.u32(int(p.ProxyPort))
	w.u32(len(p.Rlimits))
	for _, r := range p.Rlimits {
		w.u32(r.Resource)
		w.str(r.Name)
		w.u64(r.Value)
		w.flag(r.AtMost)
	}
	id := p.Identity
	w.flag(id.Setuid)
	w.id(id.UID)
	w.id(id.GID)
	w.id(id.Owner)
	w.id(id.OwnerGID)
	l := p.Landlock
	w.u32(l.ABI)
	w.u64(l.HandledFS)
	w.u64(l.HandledNet)
	w.u64(l.Scoped)
	w.u32(len(l.Paths))
	for _, r := range l.Paths {
		w.str(r.Path)
		w.u64(r.Access)
	}
	w.u32(len(l.Ports))
	for _, r := range l.Ports {
		w.u64(uint64(r.Port))
		w.u64(r.Access)
	}
	w.u32(len(p.Seccomp))
	w.b = append(w.b, p.Seccomp...)
	w.b = append(w.b, planEnd...)
	switch {
	case w.err != nil:
		return nil, fmt.Errorf("encode plan: %w", w.err)
	case len(p.Argv) == 0 || p.Path == "" || p.Dir == "":
		return nil, errors.New("encode plan: incomplete plan (no command or directory)")
	case id.Setuid && (id.UID == 0 || id.GID == 0):
		return nil, errors.New("encode plan: the agent's uid or gid is 0: a change to root is no change")
	case len(w.b) > maxPlanSize:
		return nil, fmt.Errorf("encode plan: %d bytes, more than stage 2 reads (%d)", len(w.b), maxPlanSize)
	}
	return w.b, nil
}

type planWriter struct {
	b   []byte
	err error
}

func (w *planWriter) u32(n int) {
	if n < 0 || uint64(n) > math.MaxUint32 {
		w.fail(fmt.Errorf("%d does not fit 32 bits", n))
	}
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(n))
}

func (w *planWriter) u64(n uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, n) }

// id is a uid or gid: 32 bits, and never -1, which set*id(2) reads as
// "leave unchanged".
func (w *planWriter) id(n int) {
	if n < 0 || uint64(n) >= math.MaxUint32 {
		w.fail(fmt.Errorf("id %d is not a valid uid or gid", n))
	}
	w.u32(n)
}

func (w *planWriter) flag(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *planWriter) str(s string) {
	if strings.IndexByte(s, 0) >= 0 {
		w.fail(fmt.Errorf("%q holds a NUL byte", s))
	}
	w.u32(len(s))
	w.b = append(w.b, s...)
}

func (w *planWriter) strs(list []string) {
	w.u32(len(list))
	for _, s := range list {
		w.str(s)
	}
}

func (w *planWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}
