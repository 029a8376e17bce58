package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one JSON-RPC message on stdin. The largest legitimate
// one is a write_file of MaxWrite bytes, each of which JSON may spell in
// six (\u0000), plus the envelope.
const MaxLine = 6*MaxWrite + 64<<10

// MaxValues bounds the JSON values (each element, member and container)
// of one message. The SDK decodes a call's arguments into generic values
// to check them against the schema before a handler, and its MaxInFlight
// place, is reached: each value costs about a hundred bytes there, so a
// line of MaxLine bytes of "1,1,…" took some 300 MiB and seconds of CPU,
// for each of the maxPending calls at once. No message of a tool call
// needs many values (its large arguments are strings).
const MaxValues = 1 << 16

// tooMany reports whether the valid JSON line holds more than max values:
// it counts the commas and the opening brackets outside strings.
func tooMany(line []byte, max int) bool {
	n, inString, escaped := 0, false, false
	for _, b := range line {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case !inString && (b == ',' || b == '[' || b == '{'):
			if n++; n > max {
				return true
			}
		}
	}
	return false
}

// Transport is MCP's stdio transport (newline-delimited JSON-RPC) with
// the error handling JSON-RPC asks for: a line that is not JSON is
// answered with a parse error (-32700, id null) and one that is not a
// request or response, or is larger than MaxLine, with an invalid
// request error (-32600, with its id when one could be read), as is one
// of more than MaxValues values; either way the next line is read. The
// SDK's own stdio transport ends the session at the first bad line, so
// one malformed message would cut the agent off from every tool. Batches, which MCP dropped in its
// 2025-06-18 revision, are refused the same way.
//
// The end of the input is passed on only once every request read has
// been answered, while the output is still read: `printf … | launcher
// mcp` gets its answers (the SDK cancels calls in flight at the end of
// its input). A client that is gone — its end of the output closed, as
// when its process ends — is seen at once, and its calls are cancelled.
// Only an output that is a file (a pipe, a socket) can be watched so; on
// any other the end of the input is passed on at once.
type Transport struct {
	In  io.ReadCloser
	Out io.Writer
	// Max overrides MaxLine (tests).
	Max int
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	max := t.Max
	if max <= 0 {
		max = MaxLine
	}
	c := &lineConn{in: t.In, out: t.Out, msgs: make(chan read), done: make(chan struct{}), pending: map[string]bool{}}
	go c.readLoop(max)
	return c, nil
}

type read struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	in  io.ReadCloser
	out io.Writer

	wmu  sync.Mutex // one message per line: writes do not interleave
	msgs chan read
	done chan struct{}
	once sync.Once

	pmu     sync.Mutex
	pending map[string]bool // ids of requests read and not yet answered
}

// idKey is a request id as a map key.
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// track notes a request read. Only its answer frees its place: the SDK
// answers every call, a cancelled one too (with the cancellation's
// error). A cancellation is no answer: the call may go on, as it does
// when the SDK reads no id in it (it reads "requestId" case-sensitively,
// encoding/json would take "requestid" too), and a flood that cancelled
// each of its calls so was read whole.
func (c *lineConn) track(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.pending[idKey(r.ID)] = true
}

func (c *lineConn) answered(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.pmu.Lock()
		delete(c.pending, idKey(r.ID))
		c.pmu.Unlock()
	}
}

// maxPending bounds the requests read and not yet answered.
const maxPending = 4 * MaxInFlight

func (c *lineConn) unanswered() int {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return len(c.pending)
}

// drain waits, at the end of the input, until every request read is
// answered, the client is gone or the connection closes. It returns at
// once when the output cannot be watched.
func (c *lineConn) drain() {
	f, ok := c.out.(*os.File)
	if !ok {
		return
	}
	for c.unanswered() > 0 {
		if outputGone(f) {
			return
		}
		select {
		case <-c.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// outputGone says whether the reader of f has gone (the write end of a
// pipe or socket whose other end closed reports POLLERR or POLLHUP).
func outputGone(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case r := <-c.msgs:
		return r.msg, r.err
	}
}

func (c *lineConn) Write(_ context.Context, m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	err = c.writeLine(b)
	c.answered(m)
	return err
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Close ends the connection; closing the input wakes the reader.
func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.in.Close()
	})
	return nil
}

// readLoop reads lines and passes on the messages among them, answering
// the others itself; it ends at the end of the input (or its error),
// which it passes on too.
func (c *lineConn) readLoop(max int) {
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		// Calls past those running wait in the SDK, each a goroutine
		// holding its arguments: with maxPending unanswered, the next
		// line waits to be read (a flooding client holds up only itself).
		for c.unanswered() >= maxPending {
			select {
			case <-c.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		line, tooLong, err := readLine(br, max)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if m := c.decode(line, tooLong, max); m != nil {
				c.track(m)
				select {
				case c.msgs <- read{msg: m}:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			// The end of the input ends the session once the requests
			// already read are answered (or the client is gone).
			c.drain()
			select {
			case c.msgs <- read{err: err}:
			case <-c.done:
			}
			return
		}
	}
}

// readLine reads one line without its newline, keeping at most max
// bytes: the rest of a longer line is read and dropped (tooLong).
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// decode is the message on line, or nil when the line was answered here
// as an error.
func (c *lineConn) decode(line []byte, tooLong bool, max int) jsonrpc.Message {
	switch {
	case tooLong:
		c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message is larger than %d bytes", max))
		return nil
	case !json.Valid(line):
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return nil
	case tooMany(line, MaxValues):
		// Its id is read (skipping the rest allocates little), so that
		// the call is answered.
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &probe)
		c.refuse(probe.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message holds more than %d JSON values", MaxValues))
		return nil
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")):
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP removed them in 2025-06-18)")
		return nil
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) == nil && string(bytes.TrimSpace(probe.ID)) == "null" {
		// JSON-RPC would answer it; MCP forbids a null id, and the SDK
		// would take it for a notification and answer nothing.
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: the id is null (MCP requires a string or a number)")
		return nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &probe)
		c.refuse(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	return m
}

// refuse writes an error response for id (null when it is not a valid
// JSON-RPC id).
func (c *lineConn) refuse(id json.RawMessage, code int, msg string) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		v = nil
	}
	switch v.(type) {
	case string, float64:
	default:
		v = nil
	}
	b, _ := json.Marshal(struct {
		Version string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", v, jsonrpc.Error{Code: int64(code), Message: msg}})
	c.writeLine(b)
}
