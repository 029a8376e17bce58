package launcher

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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
			Masks: []MaskPlan{{Path: "/etc/ssl/private", Dir: true}, {Path: "/work/policy.toml"}},
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

// minimalPlan is the least plan stage 2 accepts: empty lists, and each
// number at the bottom of its range.
func minimalPlan() *Plan {
	return &Plan{Argv: []string{"a"}, Path: "/a", Dir: "/", Mounts: MountPlan{TmpSize: 1 << 20},
		Landlock: LandlockPlan{ABI: 1}, Seccomp: make([]byte, seccompInsnSize)}
}

// The C stage 2 decodes exactly what Go encodes: every field survives the
// round trip.
func TestPlanRoundTrip(t *testing.T) {
	for name, p := range map[string]*Plan{
		"full":    fullPlan(),
		"minimal": minimalPlan(),
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

// setLimit replaces the plan's limit of resource, if any, by v.
func setLimit(p *Plan, resource int, v uint64) {
	p.Rlimits = slices.DeleteFunc(p.Rlimits, func(r RlimitPlan) bool { return r.Resource == resource })
	p.Rlimits = append(p.Rlimits, RlimitPlan{Resource: resource, Name: "R", Value: v})
}

// planRefused are plans the Go encoder writes and the C decoder refuses
// (each a change to fullPlan): every number policy validation refuses is
// refused there too. tmp_size 0 was accepted (a review), and so were
// limits of 0, which the policy means as unlimited. FuzzPlanDecoder and
// FuzzPlanRoundTrip start from them too.
var planRefused = []struct {
	name   string
	mutate func(*Plan)
	want   string
}{
	{"tmp_size 0", func(p *Plan) { p.Mounts.TmpSize = 0 }, "limits.tmp_size"},
	{"tmp_size 1MiB-1", func(p *Plan) { p.Mounts.TmpSize = 1<<20 - 1 }, "limits.tmp_size"},
	{"tmp_size 2^53", func(p *Plan) { p.Mounts.TmpSize = 1 << 53 }, "limits.tmp_size"},
	{"tmp_size -1", func(p *Plan) { p.Mounts.TmpSize = -1 }, "limits.tmp_size"},
	{"open files 0", func(p *Plan) { setLimit(p, unix.RLIMIT_NOFILE, 0) }, "limits.open_files"},
	{"open files 15", func(p *Plan) { setLimit(p, unix.RLIMIT_NOFILE, 15) }, "limits.open_files"},
	{"open files 2^20+1", func(p *Plan) { setLimit(p, unix.RLIMIT_NOFILE, 1<<20+1) }, "limits.open_files"},
	{"processes 0", func(p *Plan) { setLimit(p, unix.RLIMIT_NPROC, 0) }, "limits.processes"},
	{"processes 4194305", func(p *Plan) { setLimit(p, unix.RLIMIT_NPROC, 4194305) }, "limits.processes"},
	{"file size 0", func(p *Plan) { setLimit(p, unix.RLIMIT_FSIZE, 0) }, "limits.file_size"},
	{"cpu time 0", func(p *Plan) { setLimit(p, unix.RLIMIT_CPU, 0) }, "limits.cpu_time"},
	{"address space 0", func(p *Plan) { setLimit(p, unix.RLIMIT_AS, 0) }, "limits.memory"},
	{"no such resource", func(p *Plan) { setLimit(p, 16, 1) }, "resource that does not exist"},
	{"a resource twice", func(p *Plan) {
		p.Rlimits = append(p.Rlimits, RlimitPlan{Resource: unix.RLIMIT_MEMLOCK, Name: "again", Value: ^uint64(0)})
	}, "limited twice"},
	{"17 limits", func(p *Plan) {
		for len(p.Rlimits) < 17 {
			p.Rlimits = append(p.Rlimits, RlimitPlan{Resource: unix.RLIMIT_CORE, Name: "RLIMIT_CORE"})
		}
	}, "more resource limits than there are resources"},
	{"Landlock ABI 0", func(p *Plan) { p.Landlock.ABI = 0 }, "Landlock ABI"},
	{"Landlock ABI 8", func(p *Plan) { p.Landlock.ABI = maxKnownABI + 1 }, "Landlock ABI"},
	{"port 0", func(p *Plan) { p.Landlock.Ports[0].Port = 0 }, "port that is not 1 to 65535"},
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
	// A covered path that is not absolute.
	rel := bytes.Clone(good)
	i = bytes.Index(rel, []byte("/etc/ssl/private\x01"))
	if i < 0 {
		t.Fatal("covered path not found in the encoding")
	}
	rel[i] = 'x'
	corrupt("relative covered path", rel, "covered path that is not absolute")
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
	for name, size := range map[string]int{
		"no seccomp":            0,
		"partial instruction":   12,
		"too many instructions": 4097 * seccompInsnSize,
	} {
		p := minimalPlan()
		p.Seccomp = make([]byte, size)
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		corrupt(name, b, "seccomp program is not 1 to 4096 whole instructions")
	}
	for _, c := range planRefused {
		p := fullPlan()
		c.mutate(p)
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		corrupt(c.name, b, c.want)
	}
	// What the encoder cannot write: a port above 65535 and ids of -1
	// (set*id's "unchanged"), put in place of values the plan holds once.
	patch := func(name string, mutate func(*Plan), width int, from, to uint64, want string) {
		t.Helper()
		p := fullPlan()
		mutate(p)
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		put := func(v uint64) []byte {
			if width == 4 {
				return binary.LittleEndian.AppendUint32(nil, uint32(v))
			}
			return binary.LittleEndian.AppendUint64(nil, v)
		}
		if bytes.Count(b, put(from)) != 1 {
			t.Fatalf("%s: %#x is not in the encoding exactly once", name, from)
		}
		corrupt(name, bytes.Replace(b, put(from), put(to), 1), want)
	}
	const mark = 0x5eed0001
	patch("port 65536", func(p *Plan) { p.Landlock.Ports[0].Port = 0x5eed }, 8, 0x5eed, 65536, "port that is not 1 to 65535")
	patch("tree owner -1", func(p *Plan) { p.Mounts.Trees[1].Owner = mark }, 4, mark, 1<<32-1, "owner is uid -1")
	patch("owner -1", func(p *Plan) { p.Identity.Owner = mark }, 4, mark, 1<<32-1, "owner uid or gid is -1")
	patch("owner gid -1", func(p *Plan) { p.Identity.OwnerGID = mark }, 4, mark, 1<<32-1, "owner uid or gid is -1")
	patch("uid -1 without setuid", func(p *Plan) { p.Identity.Setuid = false; p.Identity.UID = mark }, 4, mark, 1<<32-1, "uid or gid is 0 or -1")
	// The control: each number at the edge of its range is accepted.
	for name, mutate := range map[string]func(*Plan){
		"tmp_size 2^53-1":   func(p *Plan) { p.Mounts.TmpSize = 1<<53 - 1 },
		"open files 16":     func(p *Plan) { setLimit(p, unix.RLIMIT_NOFILE, 16) },
		"open files 2^20":   func(p *Plan) { setLimit(p, unix.RLIMIT_NOFILE, 1<<20) },
		"processes 1":       func(p *Plan) { setLimit(p, unix.RLIMIT_NPROC, 1) },
		"processes 4194304": func(p *Plan) { setLimit(p, unix.RLIMIT_NPROC, 4194304) },
		"core 0":            func(p *Plan) { setLimit(p, unix.RLIMIT_CORE, 0) },
		"cpu time 1":        func(p *Plan) { setLimit(p, unix.RLIMIT_CPU, 1) },
		"Landlock ABI 1":    func(p *Plan) { p.Landlock.ABI = 1 },
		"port 1":            func(p *Plan) { p.Landlock.Ports[0].Port = 1 },
		"uid 0 without setuid": func(p *Plan) {
			p.Identity = IdentityPlan{}
		},
	} {
		p := fullPlan()
		mutate(p)
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := decodePlanC(b); err != nil {
			t.Errorf("control: %s: refused: %v", name, err)
		}
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
		"relative cover":  func(p *Plan) { p.Mounts.Masks[0].Path = "etc/ssl" },
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
