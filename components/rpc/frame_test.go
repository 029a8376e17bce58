package rpc

import (
	"bytes"
	"io"
	"testing"
)

// Frames are assembled in reused buffers: one frame's bytes never show in
// the next, and a response carrying data allocates nothing once warm.
func TestFrameBuffersReused(t *testing.T) {
	var w bytes.Buffer
	big, small := bytes.Repeat([]byte("B"), 3000), []byte("s")
	for _, data := range [][]byte{big, small, big[:10]} {
		w.Reset()
		if err := writeResponse(&w, []byte(`{"m":1}`), data); err != nil {
			t.Fatal(err)
		}
		b, err := readFrame(&w, nil)
		if err != nil {
			t.Fatal(err)
		}
		meta, got, err := parseResponse(b)
		if err != nil || string(meta) != `{"m":1}` || !bytes.Equal(got, data) {
			t.Fatalf("response read back: %q, %d bytes, %v; want %d bytes", meta, len(got), err, len(data))
		}
		w.Reset()
		if err := writeRequest(&w, "read", []byte(`{}`), data); err != nil {
			t.Fatal(err)
		}
		if b, err = readFrame(&w, nil); err != nil {
			t.Fatal(err)
		}
		if r, err := parseRequest(b); err != nil || r.op != "read" || !bytes.Equal(r.data, data) {
			t.Fatalf("request read back: %q, %d bytes, %v; want %d bytes", r.op, len(r.data), err, len(data))
		}
	}
	data := bytes.Repeat([]byte("d"), 1024)
	if n := testing.AllocsPerRun(100, func() { writeResponse(io.Discard, []byte(`{}`), data) }); n != 0 {
		t.Errorf("a 1 KiB response allocates %.1f times; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { writeRequest(io.Discard, "read", []byte(`{}`), data) }); n != 0 {
		t.Errorf("a 1 KiB request allocates %.1f times; want 0", n)
	}
}
