package cdp

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
)

// request is one outgoing protocol message.
type request struct {
	ID        int64  `json:"id"`
	Method    string `json:"method"`
	Params    any    `json:"params,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// message is one incoming protocol message: a response if ID is set,
// otherwise an event.
type message struct {
	ID        int64           `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *protocolError  `json:"error"`
	SessionID string          `json:"sessionId"`
}

type protocolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

type response struct {
	result json.RawMessage
	err    *protocolError
}

// readLoop reads messages from Chromium and dispatches them: responses to
// the waiting call by id, events by method.
func (b *Browser) readLoop() {
	r := bufio.NewReaderSize(b.fromChrome, 64<<10)
	for {
		data, err := readMessage(r, maxMessage)
		if err != nil {
			if pipeClosed(err) {
				// Chromium is going away; prefer watchProcess's
				// account of it, which includes the final output.
				select {
				case <-b.dead:
				case <-time.After(time.Second):
				}
				err = errors.New("devtools pipe closed")
			}
			b.fail(err)
			return
		}
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			b.fail(fmt.Errorf("bad message from chromium: %w", err))
			return
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- response{result: m.Result, err: m.Error}
			}
			continue
		}
		if m.Method != "" && (m.SessionID == "" || m.SessionID == b.sessionID()) {
			b.event(m.Method, m.Params)
		}
	}
}

// pipeClosed reports whether a read error means the pipe was closed, by
// Chromium exiting or by watchProcess and Close, rather than bad input.
func pipeClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed)
}

// readMessage reads one NUL-terminated message of at most limit bytes.
func readMessage(r *bufio.Reader, limit int) ([]byte, error) {
	var msg []byte
	for {
		chunk, err := r.ReadSlice(0)
		if len(msg)+len(chunk) > limit+1 { // +1 for the NUL
			return nil, fmt.Errorf("message from chromium exceeds %d bytes", limit)
		}
		msg = append(msg, chunk...)
		switch {
		case err == nil:
			return msg[:len(msg)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(msg) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// event records console output and wakes subscribers of method.
func (b *Browser) event(method string, params json.RawMessage) {
	line, isConsole := consoleLine(method, params)
	b.mu.Lock()
	defer b.mu.Unlock()
	if isConsole && len(b.console) < maxConsole {
		b.console = append(b.console, line)
	}
	for _, ch := range b.subs[method] {
		select {
		case ch <- params:
		default: // the subscriber already has one; that is all it waits for
		}
	}
}

// subscribe returns a channel that receives the params of the next event
// named method, and a function to stop the subscription.
func (b *Browser) subscribe(method string) (<-chan json.RawMessage, func()) {
	ch := make(chan json.RawMessage, 1)
	b.mu.Lock()
	b.subs[method] = append(b.subs[method], ch)
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.subs[method]
		for i, c := range list {
			if c == ch {
				b.subs[method] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(b.subs[method]) == 0 {
			delete(b.subs, method)
		}
	}
}

// Call sends one command to the page and waits for its response, which is
// decoded into result unless result is nil. params is encoded as JSON;
// nil sends none. A protocol error becomes an error naming the method.
func (b *Browser) Call(ctx context.Context, method string, params, result any) error {
	return b.call(ctx, b.sessionID(), method, params, result)
}

// sessionID is the page's session, "" before it is attached.
func (b *Browser) sessionID() string {
	if p := b.session.Load(); p != nil {
		return *p
	}
	return ""
}

// call sends one command on session ("" is the browser itself).
func (b *Browser) call(ctx context.Context, session, method string, params, result any) error {
	if b.closed.Load() {
		return fmt.Errorf("cdp: %s: %w", method, errClosed)
	}
	id := b.nextID.Add(1)
	data, err := json.Marshal(request{ID: id, Method: method, Params: params, SessionID: session})
	if err != nil {
		return fmt.Errorf("cdp: %s: encode params: %w", method, err)
	}
	data = append(data, 0)

	ch := make(chan response, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}()

	select {
	case <-b.dead:
		return b.deadError(method)
	default:
	}
	if err := b.write(ctx, data); err != nil {
		// A broken pipe usually means Chromium is exiting; give
		// watchProcess a moment to say so, with Chromium's last output.
		select {
		case <-b.dead:
			return b.deadError(method)
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
		return fmt.Errorf("cdp: %s: send: %w", method, err)
	}

	select {
	case resp := <-ch:
		if resp.err != nil {
			msg := resp.err.Message
			if resp.err.Data != "" {
				msg += ": " + resp.err.Data
			}
			return fmt.Errorf("cdp: %s: %s (code %d)", method, msg, resp.err.Code)
		}
		if result != nil {
			if err := json.Unmarshal(resp.result, result); err != nil {
				return fmt.Errorf("cdp: %s: decode result: %w", method, err)
			}
		}
		return nil
	case <-b.dead:
		return b.deadError(method)
	case <-ctx.Done():
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// write sends one framed message, bounded by ctx's deadline if it has one.
func (b *Browser) write(ctx context.Context, data []byte) error {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline, _ := ctx.Deadline() // zero means none
	b.toChrome.SetWriteDeadline(deadline)
	_, err := b.toChrome.Write(data)
	return err
}

// tailBuffer is an io.Writer that keeps the last stderrKeep bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrKeep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns a copy of the last n bytes, starting at a line boundary
// when one is near.
func (t *tailBuffer) Tail(n int) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return append([]byte(nil), b...)
}
