package launcher

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The plan's C decoder (stage2_linux.c, pf_decode_plan) parses bytes
// before anything is confined, so it is fuzzed from both sides. Without
// -fuzz, `go test` runs each target's seeds (below and in
// testdata/fuzz/<target>): they are the regression suite. To search:
//
//	go test ./launcher -run '^$' -fuzz '^FuzzPlanDecoder$' -fuzztime 10m
//	go test ./launcher -run '^$' -fuzz '^FuzzPlanRoundTrip$' -fuzztime 10m
//
// and with -asan added, to see reads past the plan that do not crash
// (doc.go, # Fuzzing the plan).

// planSeeds are the encodings of fullPlan, minimalPlan and the rows of
// planRefused.
func planSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, p := range planSeedPlans() {
		b, err := p.MarshalBinary()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// planSeedPlans are fullPlan, minimalPlan, then one plan per planRefused
// row: FuzzPlanRoundTrip picks its starting plan among them by index.
func planSeedPlans() []*Plan {
	out := []*Plan{fullPlan(), minimalPlan()}
	for _, c := range planRefused {
		p := fullPlan()
		c.mutate(p)
		out = append(out, p)
	}
	return out
}

// The C decoder refuses, or accepts a plan the Go encoder writes back
// byte for byte: the format has one encoding per plan (flags are 0 or 1,
// ports and ids are range checked, nothing is optional), so a plan C
// reads differently from how Go would write it shows here.
func FuzzPlanDecoder(f *testing.F) {
	for _, b := range planSeeds(f) {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePlanC(b)
		if err != nil {
			return
		}
		again, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("C accepted a plan the Go encoder refuses: %v\nplan %+v", err, p)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("C read a plan that Go encodes otherwise\n  in %x\n out %x\nplan %+v", b, again, p)
		}
	})
}

// cRefuses lists why the C decoder must refuse a plan the Go encoder
// wrote (what error each gives): the Go encoder refuses only what C
// could not carry or would misread (NUL bytes, ids of -1, a plan over
// 4 MiB, ...), while C refuses also what the policy's validation and
// stage 1 never produce. Every case of the list is one; nothing else may
// be refused.
func cRefuses(p *Plan) []string {
	var why []string
	if p.Mounts.TmpSize < 1<<20 || p.Mounts.TmpSize >= 1<<53 {
		why = append(why, "limits.tmp_size")
	}
	const nlimits = 16 // RLIM_NLIMITS on Linux
	if len(p.Rlimits) > nlimits {
		why = append(why, "more resource limits than there are resources")
	}
	policy := map[int]struct {
		min, max uint64
		want     string
	}{
		unix.RLIMIT_NOFILE: {16, 1 << 20, "limits.open_files"},
		unix.RLIMIT_NPROC:  {1, 4194304, "limits.processes"},
		unix.RLIMIT_FSIZE:  {1, math.MaxUint64, "limits.file_size"},
		unix.RLIMIT_CPU:    {1, math.MaxUint64, "limits.cpu_time"},
		unix.RLIMIT_AS:     {1, math.MaxUint64, "limits.memory"},
	}
	seen := map[int]bool{}
	for _, r := range p.Rlimits {
		if r.Resource >= nlimits {
			why = append(why, "resource that does not exist")
		}
		if seen[r.Resource] {
			why = append(why, "limited twice")
		}
		seen[r.Resource] = true
		if l, ok := policy[r.Resource]; ok && (r.Value < l.min || r.Value > l.max) {
			why = append(why, l.want)
		}
	}
	if p.Landlock.ABI < 1 || p.Landlock.ABI > maxKnownABI {
		why = append(why, "Landlock ABI")
	}
	for _, r := range p.Landlock.Ports {
		if r.Port == 0 {
			why = append(why, "port that is not 1 to 65535")
		}
	}
	if n := len(p.Seccomp); n == 0 || n%seccompInsnSize != 0 || n/seccompInsnSize > 4096 {
		why = append(why, "seccomp program is not 1 to 4096 whole instructions")
	}
	return why
}

// Every plan the Go encoder writes, the C decoder reads back unchanged,
// or refuses for one of the reasons cRefuses lists. The fuzzer starts
// from a seed plan (planSeedPlans()[pick]) and rewrites its fields as
// ops says (planEdit).
func FuzzPlanRoundTrip(f *testing.F) {
	nseeds := len(planSeedPlans())
	for i := range nseeds {
		f.Add(uint8(i), []byte(nil))
	}
	// The maxima: 16 cgroup files and 16 limits (17 are refused), 4096
	// seccomp instructions (4097 are refused), a plan of 4 MiB exactly
	// (a byte more is refused), and lists, strings and numbers at their
	// edges; the second byte of each is the index into planEdit's tables.
	for _, ops := range [][]byte{
		{opJoin, 7}, {opJoin, 8}, {opJoin, 9},
		append([]byte{opRlimits, 4}, bytes.Repeat([]byte{0, 0, 5, 0}, 16)...), // each limit 2^20
		append([]byte{opRlimits, 5}, bytes.Repeat([]byte{0, 0, 5, 0}, 17)...),
		{opSeccomp, 3}, {opSeccomp, 4}, {opSeccomp, 0}, {opSeccomp, 2},
		{opPad, 0}, {opPad, 1}, {opPad, 2},
		{opArgv, 0}, {opArgv, 1, 0}, {opArgv, 1, 1}, {opArgv, 1, 5}, {opArgv, 7, 5},
		{opEnv, 0}, {opEnv, 3, 3, 3, 'A', 0, 'B', 4, 0, 6}, {opHide, 2, 2, 5},
		{opPath, 0}, {opDir, 2}, {opHome, 0}, {opHome, 5},
		{opTrees, 0}, {opTrees, 2, 2, 7, 1, 4, 0, 7, 9},
		{opMasks, 0}, {opMasks, 1, 0, 1}, {opMasks, 1, 4, 3, 'x', 0, 'z', 1},
		{opIdentity, 1, 0, 2}, {opIdentity, 1, 7, 7, 7, 7}, {opIdentity, 0, 0, 0, 0, 0}, {opIdentity, 0, 8, 8, 8, 8},
		{opTmpSize, 4}, {opTmpSize, 5}, {opTmpSize, 9}, {opTmpSize, 10}, {opTmpSize, 12},
		{opLandlock, 4, 0, 0, 0}, {opLandlock, 5, 12, 12, 12},
		{opPorts, 3, 0, 0, 1, 1, 2, 2}, {opPaths, 2, 4, 2, 'a', 'b', 1, 5, 0},
		{opNet, 1, 0}, {opNet, 2, 3}, {opNet, 0, 1},
	} {
		f.Add(uint8(0), ops)
		f.Add(uint8(1), ops)
	}
	f.Fuzz(func(t *testing.T, pick uint8, ops []byte) {
		p := planSeedPlans()[int(pick)%nseeds]
		planEdit(p, ops)
		b, err := p.MarshalBinary()
		if err != nil {
			return
		}
		got, err := decodePlanC(b)
		why := cRefuses(p)
		switch {
		case err == nil && len(why) > 0:
			t.Fatalf("C accepted a plan it must refuse (%q)\nplan %+v", why, p)
		case err != nil && len(why) == 0:
			t.Fatalf("C refused a plan Go wrote: %v\nplan %+v", err, p)
		case err != nil:
			if !slices.ContainsFunc(why, func(w string) bool { return strings.Contains(err.Error(), w) }) {
				t.Fatalf("C refused with %q, want one of %q\nplan %+v", err, why, p)
			}
		case !reflect.DeepEqual(got, emptyToNil(p)):
			t.Fatalf("round trip changed the plan\n got %+v\nwant %+v", got, p)
		}
	})
}

// emptyToNil is p with its empty lists nil, as the C decoder returns them.
func emptyToNil(p *Plan) *Plan {
	q := *p
	nilIfEmpty(&q.Argv)
	nilIfEmpty(&q.Env)
	nilIfEmpty(&q.Mounts.Hide)
	nilIfEmpty(&q.Mounts.Trees)
	nilIfEmpty(&q.Mounts.Masks)
	nilIfEmpty(&q.Rlimits)
	nilIfEmpty(&q.Landlock.Paths)
	nilIfEmpty(&q.Landlock.Ports)
	nilIfEmpty(&q.Seccomp)
	return &q
}

func nilIfEmpty[T any](s *[]T) {
	if len(*s) == 0 {
		*s = nil
	}
}

// planEdit's operations: each rewrites one part of the plan.
const (
	opArgv = iota
	opPath
	opEnv
	opDir
	opJoin
	opHide
	opTmpSize
	opHome
	opTrees
	opMasks
	opNet
	opRlimits
	opIdentity
	opLandlock
	opPaths
	opPorts
	opSeccomp
	opPad
	opCount
)

// planEdit applies ops to p: an operation byte, then the bytes it reads
// (a missing byte reads 0). Values come mostly from tables of edges, so
// the fuzzer reaches them in a byte.
func planEdit(p *Plan, ops []byte) {
	r := &opReader{b: ops}
	for steps := 0; len(r.b) > 0 && steps < 64; steps++ {
		switch r.byte() % opCount {
		case opArgv:
			p.Argv = r.strs()
		case opPath:
			p.Path = r.str()
		case opEnv:
			p.Env = r.strs()
		case opDir:
			p.Dir = r.str()
		case opJoin:
			p.Join = r.small()
		case opHide:
			p.Mounts.Hide = r.strs()
		case opTmpSize:
			p.Mounts.TmpSize = int64(r.u64())
		case opHome:
			p.Mounts.Home = r.str()
		case opTrees:
			p.Mounts.Trees = make([]TreePlan, r.count())
			for i := range p.Mounts.Trees {
				path, f := r.str(), r.byte()
				p.Mounts.Trees[i] = TreePlan{Path: path, Write: f&1 != 0, Exec: f&2 != 0, Idmap: f&4 != 0, Owner: r.id()}
			}
		case opMasks:
			p.Mounts.Masks = make([]MaskPlan, r.count())
			for i := range p.Mounts.Masks {
				p.Mounts.Masks[i] = MaskPlan{Path: r.str(), Dir: r.byte()&1 != 0}
			}
		case opNet:
			f := r.byte()
			p.Mounts.Memfd, p.NewNet = f&1 != 0, f&2 != 0
			p.ProxyPort = r.port()
		case opRlimits:
			p.Rlimits = make([]RlimitPlan, r.count())
			for i := range p.Rlimits {
				// Resources i+byte: zeros make distinct ones.
				p.Rlimits[i] = RlimitPlan{Resource: i + int(r.byte()), Name: r.str(), Value: r.u64(), AtMost: r.byte()&1 != 0}
			}
		case opIdentity:
			p.Identity = IdentityPlan{Setuid: r.byte()&1 != 0, UID: r.id(), GID: r.id(), Owner: r.id(), OwnerGID: r.id()}
		case opLandlock:
			p.Landlock.ABI = r.small()
			p.Landlock.HandledFS, p.Landlock.HandledNet, p.Landlock.Scoped = r.u64(), r.u64(), r.u64()
		case opPaths:
			p.Landlock.Paths = make([]PathRule, r.count())
			for i := range p.Landlock.Paths {
				p.Landlock.Paths[i] = PathRule{Path: r.str(), Access: r.u64()}
			}
		case opPorts:
			p.Landlock.Ports = make([]PortRule, r.count())
			for i := range p.Landlock.Ports {
				p.Landlock.Ports[i] = PortRule{Port: r.port(), Access: r.u64()}
			}
		case opSeccomp:
			n := edge(r, []int{0, seccompInsnSize, 12, 4096 * seccompInsnSize, 4097 * seccompInsnSize, 7},
				func() int { return seccompInsnSize * int(r.byte()) })
			p.Seccomp = make([]byte, n)
			copy(p.Seccomp, r.take(n))
		case opPad:
			// Grow the plan by an environment string to 4 MiB and a
			// byte less, exactly or a byte more.
			b, err := p.MarshalBinary()
			if n := maxPlanSize - 1 + int(r.byte()%3) - len(b) - 4 - 2; err == nil && n >= 0 {
				p.Env = append(p.Env, "P="+strings.Repeat("x", n))
			}
		}
	}
}

// opReader hands out planEdit's bytes; past the end it reads zeros.
type opReader struct{ b []byte }

func (r *opReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *opReader) take(n int) []byte {
	n = min(n, len(r.b))
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *opReader) raw() uint64 {
	var b [8]byte
	copy(b[:], r.take(8))
	return binary.LittleEndian.Uint64(b[:])
}

// edge is one of table, picked by the next byte, or other().
func edge[T any](r *opReader, table []T, other func() T) T {
	if i := int(r.byte()) % (len(table) + 1); i < len(table) {
		return table[i]
	}
	return other()
}

func (r *opReader) any8() int { return int(r.byte()) }

// count is a list's length.
func (r *opReader) count() int { return edge(r, []int{0, 1, 2, 3, 16, 17, 1000}, r.any8) }

// small is a small number (a count of files, an ABI).
func (r *opReader) small() int {
	return edge(r, []int{0, 1, 2, 5, 6, 7, 8, 16, 17, -1, 1 << 31, 1 << 32}, r.any8)
}

// id is a uid or gid, or what is not one.
func (r *opReader) id() int {
	return edge(r, []int{0, 1, 1000, 65535, 65536, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1, 1 << 32, -1, 1879048292},
		func() int { return int(uint32(r.raw())) })
}

func (r *opReader) port() uint16 {
	return edge(r, []uint16{0, 1, 7402, 65535}, func() uint16 { return uint16(r.raw()) })
}

func (r *opReader) u64() uint64 {
	return edge(r, []uint64{0, 1, 15, 16, 1<<20 - 1, 1 << 20, 1<<20 + 1, 4194304, 4194305, 1<<53 - 1, 1 << 53, 1 << 63,
		math.MaxUint64, math.MaxUint32, math.MaxUint32 + 1}, r.raw)
}

// str is a string: empty, NUL, a path, bytes from ops (NUL among them),
// or long.
func (r *opReader) str() string {
	switch r.byte() % 8 {
	case 0:
		return ""
	case 1:
		return "\x00"
	case 2:
		return "/"
	case 3:
		return string(r.take(int(r.byte())))
	case 4:
		return "/" + string(r.take(int(r.byte())))
	case 5:
		return strings.Repeat("a", 4097)
	case 6:
		return "/a\x00b"
	default:
		return "A=" + string(r.take(int(r.byte())))
	}
}

func (r *opReader) strs() []string {
	out := make([]string, r.count())
	for i := range out {
		out[i] = r.str()
	}
	return out
}
