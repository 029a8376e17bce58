package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
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

// A frame's length field is a claim: the buffer grows with the bytes that
// arrive. Four bytes claiming maxFrame, then ten bytes and the end,
// allocate a little, not the 2 MiB claimed (a hundred such connections
// took 200 MiB of a component's 512). The control: a whole frame of
// maxFrame is still read back intact.
func TestFrameLengthIsNotAnAllocation(t *testing.T) {
	claim := binary.BigEndian.AppendUint32(nil, maxFrame)
	in := append(claim, bytes.Repeat([]byte("x"), 10)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readFrame(bytes.NewReader(in), nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut short: %v; want %v", err, io.ErrUnexpectedEOF)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > maxFrame/8 {
		t.Errorf("four bytes claiming %d and ten more allocated %d bytes; want at most %d", maxFrame, got, maxFrame/8)
	}
	body := bytes.Repeat([]byte("y"), maxFrame)
	b, err := readFrame(io.MultiReader(bytes.NewReader(claim), iotest.OneByteReader(bytes.NewReader(body[:100])), bytes.NewReader(body[100:])), nil)
	if err != nil || !bytes.Equal(b, body) {
		t.Errorf("a whole frame of %d bytes read back as %d bytes, %v", maxFrame, len(b), err)
	}
}
