package launcher

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fullPlan sets every field of the plan to something other than its zero
// value, so a field one side forgets shows up in the round trip.
func fullPlan() *Plan {
	return &Plan{
		Argv: []string{"/usr/bin/agent", "--flag", ""},
		Path: "/usr/bin/agent",
		Env:  []string{"HOME=/tmp/home", "PATH=/usr/bin", "EMPTY="},
		Dir:  "/work/ws",
		Join: 3,
		Mounts: MountPlan{
			Hide:    []string{"/run", "/var/run/docker"},
			TmpSize: 1<<40 + 3,
			Home:    "/tmp/home",
			Trees: []TreePlan{
				{Path: "/work/ws", Write: true, Idmap: true, Owner: 1000},
				{Path: "/usr/lib", Exec: true, Owner: 0},
				{Path: "/run/user/1000/x", Owner: 4294967294},
			},
			Memfd: true,
		},
		NewNet:    true,
		ProxyPort: 7402,
		Rlimits: []RlimitPlan{
			{Resource: 6, Name: "RLIMIT_NPROC", Value: 512},
			{Resource: 8, Name: "RLIMIT_MEMLOCK", Value: 8 << 20, AtMost: true},
			{Resource: 9, Name: "RLIMIT_AS", Value: ^uint64(0)},
		},
		Identity: IdentityPlan{Setuid: true, UID: 1879048292, GID: 1879048293, Owner: 1000, OwnerGID: 1001},
		Landlock: LandlockPlan{
			ABI: 7, HandledFS: 0xffff, HandledNet: 3, Scoped: 3,
			Paths: []PathRule{{Path: "/work/ws", Access: 0x1fff}, {Path: "/etc/passwd", Access: 4}},
			Ports: []PortRule{{Port: 443, Access: 2}, {Port: 65535, Access: 1}},
		},
		Seccomp: bytes.Repeat([]byte{0x20, 0, 1, 2, 4, 0, 0, 0}, 3),
	}
}

// The C stage 2 decodes exactly what Go encodes: every field survives the
// round trip.
func TestPlanRoundTrip(t *testing.T) {
	for name, p := range map[string]*Plan{
		"full": fullPlan(),
		"minimal": {Argv: []string{"a"}, Path: "/a", Dir: "/",
			Seccomp: make([]byte, seccompInsnSize)},
	} {
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := decodePlanC(b)
		if err != nil {
			t.Fatalf("%s: C decoder refused a Go plan: %v", name, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("%s: round trip changed the plan\n got %+v\nwant %+v", name, got, p)
		}
	}
}

// A plan cut short anywhere, with bytes after its end, or with a field
// that is out of range is refused by the C decoder, never half applied.
func TestPlanDecoderRefuses(t *testing.T) {
	good, err := fullPlan().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := decodePlanC(good[:n]); err == nil {
			t.Fatalf("plan cut to %d of %d bytes was accepted", n, len(good))
		}
	}
	corrupt := func(name string, b []byte, want string) {
		t.Helper()
		_, err := decodePlanC(b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, want)
		}
	}
	corrupt("trailing byte", append(bytes.Clone(good), 0), "after the end")
	corrupt("other magic", append([]byte("PFPLAN02"), good[8:]...), "not a plan from this launcher")
	// The first list (argv) claims more items than the plan could hold.
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge[8:], 1<<31)
	corrupt("huge count", huge, "longer than the plan")
	// A NUL inside argv[0]: the string's first byte follows magic, count
	// and length.
	nul := bytes.Clone(good)
	nul[8+4+4] = 0
	corrupt("NUL in a string", nul, "NUL")
	// The first tree's write flag.
	flag := bytes.Clone(good)
	i := bytes.Index(flag, []byte("/work/ws\x01\x00\x01"))
	if i < 0 {
		t.Fatal("tree not found in the encoding")
	}
	flag[i+len("/work/ws")] = 2
	corrupt("flag 2", flag, "neither 0 nor 1")
	// The agent's uid and gid, as the encoder would never write them: 0
	// (no change from root) and -1 (set*id's "unchanged").
	for _, id := range []uint32{0, 1<<32 - 1} {
		for _, which := range []uint32{1879048292, 1879048293} {
			b := bytes.Clone(good)
			i := bytes.Index(b, binary.LittleEndian.AppendUint32(nil, which))
			if i < 0 {
				t.Fatalf("id %d not found in the encoding", which)
			}
			binary.LittleEndian.PutUint32(b[i:], id)
			corrupt(fmt.Sprintf("id %d for %d", id, which), b, "uid or gid is 0 or -1")
		}
	}
	for name, p := range map[string]*Plan{
		"no seccomp":            {Argv: []string{"a"}, Path: "/a", Dir: "/"},
		"partial instruction":   {Argv: []string{"a"}, Path: "/a", Dir: "/", Seccomp: make([]byte, 12)},
		"too many instructions": {Argv: []string{"a"}, Path: "/a", Dir: "/", Seccomp: make([]byte, 4097*seccompInsnSize)},
	} {
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		corrupt(name, b, "")
	}
}

// The Go encoder refuses what C could not carry or would misread.
func TestPlanEncoderRefuses(t *testing.T) {
	for name, mutate := range map[string]func(*Plan){
		"NUL in env":      func(p *Plan) { p.Env = append(p.Env, "A=b\x00c") },
		"NUL in path":     func(p *Plan) { p.Mounts.Trees[0].Path = "/a\x00b" },
		"uid -1":          func(p *Plan) { p.Identity.UID = -1 },
		"setuid to uid 0": func(p *Plan) { p.Identity.UID = 0 },
		"setuid to gid 0": func(p *Plan) { p.Identity.GID = 0 },
		"gid 2^32-1":      func(p *Plan) { p.Identity.GID = 1<<32 - 1 },
		"negative owner":  func(p *Plan) { p.Mounts.Trees[1].Owner = -5 },
		"no command":      func(p *Plan) { p.Argv = nil },
		"no directory":    func(p *Plan) { p.Dir = "" },
		"17 cgroup files": func(p *Plan) { p.Join = 17 },
		"proxy, no netns": func(p *Plan) { p.NewNet = false }, // fullPlan has a proxy port
		"larger than 4MB": func(p *Plan) { p.Env = append(p.Env, "BIG="+strings.Repeat("x", maxPlanSize)) },
	} {
		p := fullPlan()
		mutate(p)
		if _, err := p.MarshalBinary(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}
