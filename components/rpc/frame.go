package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Limits on what one frame carries.
const (
	MaxBody = 1 << 20 // a request's JSON arguments, a response's JSON
	MaxData = 1 << 20 // the raw bytes beside them (file contents)
)

// maxFrame bounds a frame's length field: arguments, data and their
// headers. A longer frame is refused before it is read.
const maxFrame = MaxBody + MaxData + 256

// A request frame on the TLS stream:
//
//	u32 n      length of what follows (big-endian, ≤ maxFrame)
//	u8  k      length of the operation's name
//	k bytes    the operation (opName)
//	u32 a      length of the JSON arguments (≤ MaxBody)
//	a bytes    the arguments, JSON
//	the rest   data (≤ MaxData)
//
// A response frame:
//
//	u32 n      length of what follows
//	u32 m      length of the Response JSON (≤ MaxBody)
//	m bytes    the Response
//	the rest   data (≤ MaxData; only with an allowed decision)
type request struct {
	op   string
	args []byte
	data []byte
}

// errFrameTooLarge is a frame whose length field is over the limit: the
// stream cannot be read further, so the connection ends after the answer.
var errFrameTooLarge = errors.New("frame larger than the limit")

// errMalformed is a frame read whole whose insides do not add up: the
// stream is intact, so the connection may go on.
type errMalformed struct{ what string }

func (e *errMalformed) Error() string { return "malformed frame: " + e.what }

func writeRequest(w io.Writer, op string, args, data []byte) error {
	if len(op) == 0 || len(op) > 255 {
		return fmt.Errorf("operation name of %d bytes", len(op))
	}
	if len(args) > MaxBody || len(data) > MaxData {
		return fmt.Errorf("request of %d+%d bytes, over the limit of %d+%d", len(args), len(data), MaxBody, MaxData)
	}
	n := 1 + len(op) + 4 + len(args) + len(data)
	p := frameBuf(4 + n)
	defer putFrameBuf(p)
	b := binary.BigEndian.AppendUint32(*p, uint32(n))
	b = append(b, byte(len(op)))
	b = append(b, op...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(args)))
	b = append(b, args...)
	b = append(b, data...)
	_, err := w.Write(b)
	return err
}

func writeResponse(w io.Writer, meta, data []byte) error {
	if len(meta) > MaxBody || len(data) > MaxData {
		return fmt.Errorf("response of %d+%d bytes, over the limit", len(meta), len(data))
	}
	n := 4 + len(meta) + len(data)
	p := frameBuf(4 + n)
	defer putFrameBuf(p)
	b := binary.BigEndian.AppendUint32(*p, uint32(n))
	b = binary.BigEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	b = append(b, data...)
	_, err := w.Write(b)
	return err
}

// A frame is assembled in one buffer so that it goes out in one Write
// (one TLS record, one system call). The buffers are reused: a response
// carrying a file's bytes allocated their size again for every answer,
// and allocation is what a component's round trip spends most on after
// its system calls (bench/roundtrip). TLS copies what it is given into
// its record before Write returns, so a buffer is free again then.
var frameBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFrame bounds the buffers kept: a rare 2 MiB frame is not held
// for every connection's later small ones.
const maxPooledFrame = 64 << 10

// frameBuf is an empty buffer with room for n bytes.
func frameBuf(n int) *[]byte {
	p := frameBufs.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, 0, n)
	}
	return p
}

func putFrameBuf(p *[]byte) {
	if cap(*p) <= maxPooledFrame {
		*p = (*p)[:0]
		frameBufs.Put(p)
	}
}

// readFrame reads one frame's body. first is called once the length has
// arrived (the server moves from its idle deadline to its read deadline).
func readFrame(r io.Reader, first func()) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	if first != nil {
		first()
	}
	n := binary.BigEndian.Uint32(h[:])
	if n > maxFrame {
		return nil, errFrameTooLarge
	}
	// The buffer grows with what arrives, not with what the length field
	// claims: a caller that sent four bytes claiming maxFrame made the
	// server allocate 2 MiB for them, and a hundred such connections took
	// 200 MiB of a component's 512 (its cgroup's limit, whose OOM kill
	// ends the session).
	b := make([]byte, 0, min(int(n), frameStep))
	for len(b) < int(n) {
		if len(b) == cap(b) {
			b = grown(b, int(n))
		}
		m, err := r.Read(b[len(b):min(cap(b), int(n))])
		b = b[:len(b)+m]
		if err != nil && len(b) < int(n) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return b, nil
}

// frameStep is the buffer a frame's body is first read into (a TLS
// record's worth).
const frameStep = 16 << 10

// grown is b, full, in a buffer four times its size, or of the frame's
// whole length n when that is less than twice as much again: at most
// eight times what arrived is held, and a megabyte's frame takes four
// buffers of the exact size (16, 64, 256 KiB, then whole; doubling with
// append took eight, the last 2 MiB).
func grown(b []byte, n int) []byte {
	c := min(n, 4*cap(b))
	if 2*c > n {
		c = n
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

func parseRequest(b []byte) (request, error) {
	if len(b) < 1 {
		return request{}, &errMalformed{"empty"}
	}
	k := int(b[0])
	if len(b) < 1+k+4 {
		return request{}, &errMalformed{"shorter than its operation name"}
	}
	r := request{op: string(b[1 : 1+k])}
	a := int(binary.BigEndian.Uint32(b[1+k:]))
	rest := b[1+k+4:]
	if a > len(rest) || a > MaxBody {
		return request{}, &errMalformed{"arguments longer than the frame or the limit"}
	}
	r.args, r.data = rest[:a], rest[a:]
	if len(r.data) > MaxData {
		return request{}, &errMalformed{"data over the limit"}
	}
	return r, nil
}

func parseResponse(b []byte) (meta, data []byte, err error) {
	if len(b) < 4 {
		return nil, nil, &errMalformed{"shorter than its header"}
	}
	m := int(binary.BigEndian.Uint32(b))
	if m > len(b)-4 || m > MaxBody || len(b)-4-m > MaxData {
		return nil, nil, &errMalformed{"lengths do not add up"}
	}
	return b[4 : 4+m], b[4+m:], nil
}
