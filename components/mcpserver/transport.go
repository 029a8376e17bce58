package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one JSON-RPC message on stdin. The largest legitimate
// one is a write_file of MaxWrite bytes, each of which JSON may spell in
// six (\u0000), plus the envelope.
const MaxLine = 6*MaxWrite + 64<<10

// Transport is MCP's stdio transport (newline-delimited JSON-RPC) with
// the error handling JSON-RPC asks for: a line that is not JSON is
// answered with a parse error (-32700, id null) and one that is not a
// request or response, or is larger than MaxLine, with an invalid
// request error (-32600, with its id when one could be read); either
// way the next line is read. The SDK's own stdio transport ends the
// session at the first bad line, so one malformed message would cut the
// agent off from every tool. Batches, which MCP dropped in its
// 2025-06-18 revision, are refused the same way.
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
	c := &lineConn{in: t.In, out: t.Out, msgs: make(chan read), done: make(chan struct{})}
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
	return c.writeLine(b)
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
		line, tooLong, err := readLine(br, max)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if m := c.decode(line, tooLong, max); m != nil {
				select {
				case c.msgs <- read{msg: m}:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			// The end of the input ends the session, but answers to
			// requests already read may still be written.
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
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")):
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP removed them in 2025-06-18)")
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
