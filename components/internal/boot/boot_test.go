package boot

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unsafe"
)

// A component's log stops at MaxLog, says so once, and never fails the
// writer's caller; writes that fit pass whole.
func TestCappedWriter(t *testing.T) {
	var b bytes.Buffer
	c := &cappedWriter{w: &b, left: 10}
	for _, s := range []string{"12345", "6789", "abc", "def"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %q: %d %v", s, n, err)
		}
	}
	if got := b.String(); !strings.HasPrefix(got, "123456789log: over ") || strings.Count(got, "dropped") != 1 || strings.Contains(got, "abc") {
		t.Errorf("log %q", got)
	}
}

// recordingReader hands out payload in small reads and keeps every
// buffer it was given to fill.
type recordingReader struct {
	payload []byte
	given   [][]byte
}

func (r *recordingReader) Read(p []byte) (int, error) {
	if len(r.payload) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1000)], r.payload)
	r.payload = r.payload[n:]
	r.given = append(r.given, p[:n])
	return n, nil
}

// readWiping returns what was read, bounded, and leaves nothing of it in
// the buffers it outgrew.
func TestReadWiping(t *testing.T) {
	payload := bytes.Repeat([]byte("secret!"), 40000) // 280 000 bytes: several growths
	r := &recordingReader{payload: payload}
	got, err := readWiping(r, 1<<20)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(got)))
	end := base + uintptr(cap(got))
	left := 0
	for _, p := range r.given {
		if a := uintptr(unsafe.Pointer(&p[0])); a >= base && a < end {
			continue // the buffer returned
		}
		if bytes.Count(p, []byte{0}) != len(p) {
			left++
		}
	}
	if left > 0 || len(r.given) < 10 {
		t.Errorf("%d of %d reads' bytes left in outgrown buffers", left, len(r.given))
	}
	if got, err := readWiping(bytes.NewReader(payload), 100); err != nil || len(got) != 100 {
		t.Errorf("bounded: %d bytes, %v", len(got), err)
	}
}
