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
	Hide    []string   `json:"hide"`     // directories covered by an empty read-only tmpfs (SR-08)
	TmpSize int64      `json:"tmp_size"` // bytes of the private /tmp (and /dev/shm)
	Home    string     `json:"home"`     // private HOME to create inside /tmp, or ""
	Trees   []TreePlan `json:"trees"`    // cloned and mounted again with their own flags, outermost first
	Memfd   bool       `json:"memfd"`    // set vm.memfd_noexec=2 in the new pid namespace (needs root)
}

// TreePlan is one tree stage 2 clones (opened without following symlinks)
// and mounts again: write trees writable but noexec, nosuid, nodev; read
// and exec trees read-only, exec trees executable.
type TreePlan struct {
	Path  string `json:"path"`
	Write bool   `json:"write"`
	Exec  bool   `json:"exec"`
	Idmap bool   `json:"idmap"` // through the user namespace at fd 6
	Owner int    `json:"owner"` // its owner when stage 1 looked; stage 2 refuses a change
}

// RlimitPlan is one setrlimit call.
type RlimitPlan struct {
	Resource int    `json:"resource"`
	Name     string `json:"name"`
	Value    uint64 `json:"value"`   // soft = hard
	AtMost   bool   `json:"at_most"` // lower to Value only: never raise what the launcher inherited
}

// IdentityPlan is who the agent runs as.
type IdentityPlan struct {
	Setuid   bool `json:"setuid"` // change to UID/GID (root launches: a throwaway identity)
	UID      int  `json:"uid"`
	GID      int  `json:"gid"`
	Owner    int  `json:"owner"`     // on-disk uid the idmapped trees map onto UID (root launches)
	OwnerGID int  `json:"owner_gid"` // on-disk gid mapped onto GID
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

// PathRule grants Access beneath Path, which stage 2 opens refusing
// symlinks in every component (SR-02, SR-12).
type PathRule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
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
