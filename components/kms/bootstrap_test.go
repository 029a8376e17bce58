package kms

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/pinfold/pinfold/components/internal/boot"
	"github.com/pinfold/pinfold/internal/memscan"
)

// Encode's output decodes to the bootstrap it was given.
func TestBootstrapEncode(t *testing.T) {
	added := time.Date(2026, 11, 30, 10, 0, 0, 123, time.UTC)
	in := Bootstrap{
		Credential: boot.Credential{CAPEM: []byte("ca\n"), CertPEM: []byte("cert\n"), KeyPEM: []byte("key\n"), Peers: []uint32{7}},
		Rules:      rules(),
		Secrets:    []Secret{{Name: "a", Value: []byte("x\x00\"\\\n\xff"), Added: added}, {Name: "b\"c", Value: []byte{}, Added: added}},
	}
	for _, b := range []Bootstrap{in, {Credential: in.Credential}} {
		out, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != cap(out) {
			t.Errorf("%d bytes in a buffer of %d: its size is not computed exactly", len(out), cap(out))
		}
		var got Bootstrap
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if len(got.Secrets) == 0 {
			got.Secrets = nil // [] and null decode alike
		}
		want, _ := json.Marshal(b)
		again, _ := json.Marshal(got)
		if !bytes.Equal(want, again) {
			t.Errorf("round trip:\n got %s\nwant %s", again, want)
		}
	}
}

// Once the caller has cleared the values and what Encode returned, no
// copy of a value is left in this process's memory, in either form
// (json.Marshal's pooled buffer keeps the base64 one). The needles are
// kept in two halves, so that they are not found in the test's own
// memory.
func TestBootstrapEncodeLeavesNoCopy(t *testing.T) {
	value := make([]byte, 48)
	rand.Read(value)
	// 24 bytes are 32 base64 characters with no padding: the halves'
	// encodings, made apart, are the two halves of the value's.
	half := func(p []byte) []byte {
		out := make([]byte, base64.StdEncoding.EncodedLen(len(p)))
		base64.StdEncoding.Encode(out, p)
		return out
	}
	// Each half in a buffer of its own with room after it: two halves
	// allocated side by side would be the needle itself.
	apart := func(p []byte) []byte { return append(make([]byte, 0, 4*len(p)), p...) }
	needles := [][2][]byte{
		{apart(value[:24]), apart(value[24:])},
		{apart(half(value[:24])), apart(half(value[24:]))},
	}
	b := Bootstrap{Rules: rules(), Secrets: []Secret{{Name: "a", Value: value, Added: time.Now()}}}
	out, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	clear(out)
	clear(value)
	runtime.GC()
	for i, n := range needles {
		if where := findInMemory(t, n[0], n[1]); where != "" {
			t.Errorf("needle %d (0: the value, 1: its base64) found at %s", i, where)
		}
	}
	// Control: the scan finds a copy that is there.
	there := append(apart(needles[1][0]), needles[1][1]...)
	if findInMemory(t, needles[1][0], needles[1][1]) == "" {
		t.Fatal("control: the scan does not find a copy in memory")
	}
	runtime.KeepAlive(there)
}

// findInMemory looks for a followed by b in this process's writable
// memory and names the mapping where they are ("" when nowhere).
func findInMemory(t *testing.T, a, b []byte) string {
	t.Helper()
	where, err := memscan.Find(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return where
}
