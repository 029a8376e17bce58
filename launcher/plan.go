package launcher

import (
	"encoding/json"
	"fmt"
	"io"
)

// Plan is everything stage 2 needs, decided by stage 1. Stage 2 applies it
// and does no thinking of its own: every list is final, every path is
// absolute and was checked in stage 1, the seccomp program is compiled.
// It travels as JSON over an inherited pipe, never in argv or the
// environment.
type Plan struct {
	Argv []string `json:"argv"` // the agent's argv; Argv[0] as given
	Path string   `json:"path"` // the agent's executable, resolved by stage 1
	Env  []string `json:"env"`  // the agent's whole environment
	Dir  string   `json:"dir"`  // the agent's working directory (the workspace)

	Mounts   MountPlan    `json:"mounts"`
	NewNet   bool         `json:"new_net"` // stage 2 is in a new, empty network namespace: bring lo up
	Rlimits  []RlimitPlan `json:"rlimits"`
	Identity IdentityPlan `json:"identity"`
	Landlock LandlockPlan `json:"landlock"`
	Seccomp  []byte       `json:"seccomp"` // SeccompProgram.Marshal()
}

// MountPlan is the mount namespace's shape.
type MountPlan struct {
	Hide    []string `json:"hide"`     // directories covered by an empty read-only tmpfs (SR-08)
	TmpSize int64    `json:"tmp_size"` // bytes of the private /tmp (and /dev/shm)
	Home    string   `json:"home"`     // private HOME to create inside /tmp, or ""
	Keep    []string `json:"keep"`     // listed paths beneath /tmp or /dev/shm, kept visible over the private tmpfs
	Idmap   []string `json:"idmap"`    // trees idmapped through the user namespace at fd 6 (root launches: the workspace and write paths)
	Memfd   bool     `json:"memfd"`    // set vm.memfd_noexec=2 in the new pid namespace (needs root)
}

// RlimitPlan is one setrlimit call.
type RlimitPlan struct {
	Resource int    `json:"resource"`
	Name     string `json:"name"`
	Value    uint64 `json:"value"` // soft = hard
}

// IdentityPlan is who the agent runs as.
type IdentityPlan struct {
	Setuid bool `json:"setuid"` // change to UID/GID (root launches: a throwaway identity)
	UID    int  `json:"uid"`
	GID    int  `json:"gid"`
}

// LandlockPlan is the ruleset, at the ABI stage 1 chose.
type LandlockPlan struct {
	ABI        int        `json:"abi"`
	HandledFS  uint64     `json:"handled_fs"`
	HandledNet uint64     `json:"handled_net"`
	Scoped     uint64     `json:"scoped"`
	Paths      []PathRule `json:"paths"`
	Ports      []PortRule `json:"ports"`
}

// PathRule grants Access beneath Path. NoFollow rules are opened one
// component at a time refusing symlinks (write paths, SR-02).
type PathRule struct {
	Path     string `json:"path"`
	Access   uint64 `json:"access"`
	NoFollow bool   `json:"no_follow"`
}

// PortRule grants Access on one TCP port.
type PortRule struct {
	Port   uint16 `json:"port"`
	Access uint64 `json:"access"`
}

// maxPlanSize bounds what stage 2 reads from the plan pipe.
const maxPlanSize = 4 << 20

// WritePlan encodes the plan for stage 2.
func WritePlan(w io.Writer, p *Plan) error {
	return json.NewEncoder(w).Encode(p)
}

// ReadPlan decodes a plan, refusing unknown fields and oversized input.
func ReadPlan(r io.Reader) (*Plan, error) {
	dec := json.NewDecoder(io.LimitReader(r, maxPlanSize))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	if len(p.Argv) == 0 || p.Path == "" || p.Dir == "" {
		return nil, fmt.Errorf("read plan: incomplete plan (no command or directory)")
	}
	return &p, nil
}
