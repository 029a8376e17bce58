package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/internal/clip"
)

// Handler answers one operation for an authenticated caller. args is the
// request's JSON; the result (dropped when denied) is sent back beside the
// decision. A handler never puts a secret in the decision: decisions are
// logged, results are not.
type Handler func(ctx context.Context, caller pki.Role, args json.RawMessage) (Decision, any)

// DataHandler is a Handler whose request and answer also carry raw bytes
// beside the JSON (file contents), never base64 inside it.
type DataHandler func(ctx context.Context, caller pki.Role, args json.RawMessage, data []byte) (Decision, any, []byte)

// Response is the JSON part of every answer.
type Response struct {
	Decision Decision        `json:"decision"`
	Result   json.RawMessage `json:"result,omitempty"`
}

// Timeouts on a server connection (variables for the tests): a frame,
// once its first bytes came, and the wait for the next request.
var (
	readTimeout = 30 * time.Second
	idleTimeout = 2 * time.Minute
)

// handshakeTimeout bounds a dialled connection's handshake (a variable
// for the tests).
var handshakeTimeout = 10 * time.Second

// writeTimeout bounds writing one answer (a variable for the tests).
var writeTimeout = 30 * time.Second

// maxConns bounds the connections one listener's Serve has open at once
// (a variable for the tests); the next wait in the kernel's bounded
// backlog until one ends. Without it the agent could open connections
// until the component's memory cgroup (512 MiB) killed it, ending the
// session: a hundred connections that each sent a megabyte to be echoed
// and did not read the answer held about 150 MiB, and each idle one a
// descriptor. A connection holds at most one request and its answer:
// this many, each sending the largest request and not reading the
// answer, held 145 MiB (both ends of every connection in one test
// process), well within the cgroup; a client keeps at most four.
var maxConns = 64

// Server serves one component's operations over mutual TLS.
type Server struct {
	leaf     *pki.Leaf
	log      *slog.Logger
	handlers map[string]DataHandler
	peers    []uint32 // when set, the uids a Unix-socket peer may run as

	mu      sync.Mutex
	lns     []net.Listener // every listener Serve was given (fs and bash serve two)
	conns   map[*serverConn]struct{}
	closing bool
	closed  chan struct{} // closed with closing
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

type serverConn struct {
	c    net.Conn
	slot chan struct{} // its listener's count of open connections (maxConns), or nil
	busy bool          // answering a request (Shutdown lets it finish)
	// pinned is a connection the launcher made for one caller (ServeConn):
	// it is never ended for idleness.
	pinned bool
}

// AllowPeers limits Unix-socket callers to processes running as uids
// (SO_PEERCRED), checked before TLS. Call it before Serve.
func (s *Server) AllowPeers(uids ...uint32) { s.peers = uids }

var opName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })

// NewServer is a server for the component whose credential is leaf. Every
// request and every refused handshake is logged to log, with the caller's
// identity.
func NewServer(leaf *pki.Leaf, log *slog.Logger) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{leaf: leaf, log: log, handlers: map[string]DataHandler{}, conns: map[*serverConn]struct{}{}, closed: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// Handle registers op (lower case). Register every operation before
// Serve: the table is read without a lock.
func (s *Server) Handle(op string, h Handler) {
	s.HandleData(op, func(ctx context.Context, caller pki.Role, args json.RawMessage, _ []byte) (Decision, any, []byte) {
		d, result := h(ctx, caller, args)
		return d, result, nil
	})
}

// HandleData registers op with a handler that sees and answers data.
func (s *Server) HandleData(op string, h DataHandler) {
	if !opName().MatchString(op) {
		panic(fmt.Sprintf("rpc: bad operation name %q", op))
	}
	s.handlers[op] = h
}

// Serve accepts connections on ln until Shutdown. The TLS configuration
// is pki's: TLS 1.3, a session certificate required, the call table
// checked.
func (s *Server) Serve(ln net.Listener) error {
	cfg, err := pki.ServerConfig(s.leaf, func(ev pki.RejectEvent) {
		s.log.Warn("refused", "caller", logText(ev.Claimed), "reason", ev.Reason.String(), "detail", logText(fmt.Sprint(ev.Detail)))
	})
	if err != nil {
		return err
	}
	if s.peers != nil {
		ln = &peerFilter{Listener: ln, uids: s.peers, log: s.log}
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	var pause time.Duration // the wait after a refused accept, while they last
	slots := make(chan struct{}, maxConns)
	for {
		select {
		case slots <- struct{}{}:
		case <-s.closed:
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if acceptShort(err) {
				// Out of descriptors or kernel memory: the agent may hold as
				// many connections as its own limits allow, and returning
				// ended the component and with it the session. The listener
				// is intact and connections end (their deadlines), so wait
				// and accept again; the wait doubles up to a second so that a
				// listener that keeps failing does not spin, and is logged
				// once per run of failures.
				if pause == 0 {
					s.log.Warn("cannot accept a connection for now; waiting", "error", err)
					pause = 5 * time.Millisecond
				} else {
					pause = min(2*pause, time.Second)
				}
				select {
				case <-time.After(pause):
				case <-s.closed: // Shutdown does not wait out the pause
					return nil
				}
				continue
			}
			return err
		}
		pause = 0
		sc := &serverConn{c: c, slot: slots}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			<-slots
			return nil
		}
		s.conns[sc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(sc, cfg)
	}
}

// acceptShort is an accept refused for want of a resource that comes
// back as connections end.
func acceptShort(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// ServeConn serves one connection the launcher made (one end of a
// socketpair whose other end a caller holds) for as long as it lasts,
// without an idle timeout: a caller that may not open sockets itself
// (net, calling kms) keeps its one way in. The handshake and every check
// are those of Serve's connections. It returns at once.
func (s *Server) ServeConn(c net.Conn) error {
	cfg, err := pki.ServerConfig(s.leaf, func(ev pki.RejectEvent) {
		s.log.Warn("refused", "caller", logText(ev.Claimed), "reason", ev.Reason.String(), "detail", logText(fmt.Sprint(ev.Detail)))
	})
	if err != nil {
		return err
	}
	sc := &serverConn{c: c, pinned: true}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.Close()
		return errors.New("rpc: server closed")
	}
	s.conns[sc] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.serveConn(sc, cfg)
	return nil
}

// Shutdown stops accepting, ends idle connections and waits for requests
// in flight (until ctx ends; then their connections are closed too).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		close(s.closed)
	}
	s.closing = true
	for _, ln := range s.lns {
		ln.Close()
	}
	for sc := range s.conns {
		if !sc.busy {
			sc.c.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.cancel()
		s.mu.Lock()
		for sc := range s.conns {
			sc.c.Close()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// heardConn is a connection that notes whether any byte came from it.
type heardConn struct {
	net.Conn
	any atomic.Bool
}

func (c *heardConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.any.Load() {
		c.any.Store(true)
	}
	return n, err
}

// setBusy marks the connection answering (or idle); it reports false when
// the server is closing and the connection should end instead.
func (s *Server) setBusy(sc *serverConn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc.busy = busy
	return !s.closing
}

func (s *Server) serveConn(sc *serverConn, cfg *tls.Config) {
	defer func() {
		sc.c.Close()
		s.mu.Lock()
		delete(s.conns, sc)
		s.mu.Unlock()
		if sc.slot != nil {
			<-sc.slot
		}
		s.wg.Done()
	}()
	heard := &heardConn{Conn: sc.c}
	tc := tls.Server(heard, cfg)
	// A pinned connection's caller handshakes at its first call, which
	// may come any time (net's first secret, bash's first backup): it
	// cannot dial again, so its handshake waits (a hunt: both died ten
	// seconds into every session that had not used them by then).
	if !sc.pinned {
		tc.SetDeadline(time.Now().Add(handshakeTimeout))
	}
	if err := tc.HandshakeContext(s.ctx); err != nil {
		var rej *pki.RejectEvent
		switch {
		case errors.As(err, &rej): // the session check logged its own
		case !heard.any.Load() && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
			// Nothing was asked, so nothing was refused: a pinned
			// caller that ended before its first call (bash killed),
			// or a connection opened and closed.
			s.log.Info("closed before its handshake", "caller", "unknown")
		default:
			s.log.Warn("refused", "caller", "unknown", "reason", "handshake", "detail", logText(err.Error()))
		}
		return
	}
	// One identity per connection, read once with its signature checked
	// again; no request can claim another.
	caller, err := s.leaf.PeerRole(tc.ConnectionState())
	if err != nil { // the handshake check passed, so this is a bug: refuse
		s.log.Error("peer role", "error", err)
		return
	}
	for {
		if !s.setBusy(sc, false) {
			return
		}
		if sc.pinned {
			tc.SetDeadline(time.Time{})
		} else {
			tc.SetDeadline(time.Now().Add(idleTimeout))
		}
		var r io.Reader = tc
		if sc.pinned {
			if r, err = skipCancels(tc); err != nil {
				return
			}
		}
		b, err := readFrame(r, func() {
			s.setBusy(sc, true)
			tc.SetDeadline(time.Now().Add(readTimeout))
		})
		if errors.Is(err, errFrameTooLarge) {
			s.answer(tc, caller, "", Deny(ReasonBadRequest, "", fmt.Sprintf("request larger than %d bytes", maxFrame)), nil, nil)
			return
		}
		if err != nil {
			return // closed, timed out, or cut short: nothing to answer
		}
		// No deadline while the handler runs (it may wait for the person,
		// or for a command): the answer's write gets its own, in answer.
		// A deadline that ran out during the handler would drop the
		// answer to a request that was served, and the client could send
		// it again.
		tc.SetDeadline(time.Time{})
		if !s.serveFrame(tc, caller, b, sc.pinned) {
			return
		}
	}
}

// serveFrame answers one request frame; false ends the connection.
func (s *Server) serveFrame(tc *tls.Conn, caller pki.Role, b []byte, pinned bool) bool {
	req, err := parseRequest(b)
	if err != nil {
		return s.answer(tc, caller, "", Deny(ReasonBadRequest, "", err.Error()), nil, nil)
	}
	h := s.handlers[req.op]
	switch {
	case h == nil && !opName().MatchString(req.op): // a handler's name matched it when registered
		return s.answer(tc, caller, "", Deny(ReasonBadRequest, "", "no such operation"), nil, nil)
	case h == nil:
		return s.answer(tc, caller, req.op, Deny(ReasonBadRequest, "", "no operation "+req.op), nil, nil)
	case !json.Valid(req.args):
		return s.answer(tc, caller, req.op, Deny(ReasonBadRequest, "", "arguments are not JSON"), nil, nil)
	}
	ctx, gone := s.watch(tc)
	d, result, data := h(ctx, caller, req.args, req.data)
	if left, told := gone(); left {
		s.log.Info("caller left before the answer", "caller", string(caller), "op", req.op)
		if !pinned || !told {
			return false
		}
		// The one connection's caller said so (cancelByte) and waits
		// for this answer: the connection stays in step.
		return s.answer(tc, caller, req.op, Deny(ReasonBadRequest, "", "the caller left before the answer"), nil, nil)
	}
	return s.answer(tc, caller, req.op, d, result, data)
}

// watch gives a handler a context that can end when its caller does:
// the protocol is one request, then its answer, so while the handler
// runs the connection has nothing to read, and a read that ends (the
// client closed it, cancelling its call) or brings a byte (a client
// that does not wait, which is also the end of this connection)
// cancels the handler. The watching read starts only when the handler
// says it is about to wait (Watch): a question for the person, a
// command. Watching every call would cost more than most calls (a
// goroutine and a wake-up each), and a client that left before Watch is
// seen at once. gone stops the watch and says whether the caller left;
// the connection then ends, unless it is the one connection of a caller
// that said it left with cancelByte (told), which waits for the answer.
func (s *Server) watch(tc *tls.Conn) (ctx context.Context, gone func() (left, told bool)) {
	ctx, cancel := context.WithCancel(s.ctx)
	w := &watcher{tc: tc, cancel: cancel, done: make(chan struct{})}
	return context.WithValue(ctx, watcherKey{}, w), func() (bool, bool) {
		w.mu.Lock()
		w.stopped = true
		watching := w.started
		w.mu.Unlock()
		if watching {
			// A read deadline in the past ends the watching read; a TLS
			// read that times out keeps the connection usable.
			tc.SetReadDeadline(time.Unix(1, 0))
			<-w.done
			tc.SetReadDeadline(time.Time{})
		}
		cancel()
		return w.left.Load(), w.told.Load()
	}
}

// skipCancels reads past the cancelByte of calls whose caller gave up on
// them after they were answered (or whose handler did not watch) and
// returns the stream from the next frame's first byte.
func skipCancels(r io.Reader) (io.Reader, error) {
	var one [1]byte
	for {
		if _, err := io.ReadFull(r, one[:]); err != nil {
			return nil, err
		}
		if one[0] != cancelByte {
			return io.MultiReader(bytes.NewReader(one[:]), r), nil
		}
	}
}

type watcherKey struct{}

// watcher is one call's watch of its connection.
type watcher struct {
	tc     *tls.Conn
	cancel context.CancelFunc
	done   chan struct{}
	left   atomic.Bool
	told   atomic.Bool // what it read was cancelByte

	mu               sync.Mutex
	started, stopped bool
}

// Watch says that the call whose context ctx is is about to wait (for
// the person, for a command): from now on, its caller leaving ends ctx.
// Outside a server's handler, and after the first call, it does nothing.
func Watch(ctx context.Context) {
	w, ok := ctx.Value(watcherKey{}).(*watcher)
	if !ok {
		return
	}
	w.mu.Lock()
	if w.started || w.stopped {
		w.mu.Unlock()
		return
	}
	w.started = true
	w.mu.Unlock()
	go func() {
		defer close(w.done)
		var one [1]byte
		n, err := w.tc.Read(one[:])
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			w.told.Store(n == 1 && one[0] == cancelByte)
			w.left.Store(true)
			w.cancel()
		}
	}()
}

// answer checks, logs and sends a decision; false ends the connection.
func (s *Server) answer(tc *tls.Conn, caller pki.Role, op string, d Decision, result any, data []byte) bool {
	if _, known := reasonNames[d.Reason]; !known || d.Allowed != (d.Reason == ReasonAllowed) {
		// A handler's bug: refuse rather than answer something
		// inconsistent.
		s.log.Error("inconsistent decision", "op", op, "allowed", d.Allowed, "reason", int(d.Reason))
		d = Deny(ReasonBadRequest, "", "the component could not decide")
	}
	resp := Response{Decision: d}
	if !d.Allowed {
		data = nil
	} else if result != nil {
		b, err := json.Marshal(result)
		if err != nil || len(b) > MaxBody || len(data) > MaxData {
			s.log.Error("encode result", "op", op, "error", err, "bytes", len(b), "data", len(data))
			resp.Decision, data = Deny(ReasonBadRequest, "", "the result could not be encoded within the limits"), nil
		} else {
			resp.Result = b
		}
	}
	s.log.Info("request", "caller", string(caller), "op", op, "allowed", resp.Decision.Allowed,
		"reason", resp.Decision.Reason.String(), "rule", resp.Decision.Rule, "detail", logText(resp.Decision.Detail))
	meta := appendResponse(make([]byte, 0, 96+len(resp.Decision.Rule)+len(resp.Decision.Detail)+len(resp.Result)), resp)
	tc.SetWriteDeadline(time.Now().Add(writeTimeout))
	return writeResponse(tc, meta, data) == nil
}

// maxLogText bounds a caller's text in one log line: a path or a
// certificate's name, escaped twice over, must not let one request fill
// the component's log (boot.MaxLog).
const maxLogText = 512

func logText(s string) string { return clip.Bytes(s, maxLogText) }
