package rpc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/pinfold/pinfold/components/pki"
)

// MaxBody bounds a request's and a response's body.
const MaxBody = 1 << 20

// Handler answers one operation for an authenticated caller. body is the
// request's JSON; the result (nil when denied) is sent back beside the
// decision. A handler never puts a secret in the decision: decisions are
// logged, results are not.
type Handler func(ctx context.Context, caller pki.Role, body json.RawMessage) (Decision, any)

// Response is what every request gets back.
type Response struct {
	Decision Decision        `json:"decision"`
	Result   json.RawMessage `json:"result,omitempty"`
}

// Server serves one component's operations over mutual TLS.
type Server struct {
	leaf     *pki.Leaf
	log      *slog.Logger
	handlers map[string]Handler
	peers    []uint32 // when set, the uids a Unix-socket peer may run as
	srv      *http.Server
	mu       sync.Mutex
}

// AllowPeers limits Unix-socket callers to processes running as uids
// (SO_PEERCRED), checked before TLS. Call it before Serve.
func (s *Server) AllowPeers(uids ...uint32) { s.peers = uids }

var opName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// NewServer is a server for the component whose credential is leaf. Every
// request and every refused handshake is logged to log, with the caller's
// identity.
func NewServer(leaf *pki.Leaf, log *slog.Logger) *Server {
	return &Server{leaf: leaf, log: log, handlers: map[string]Handler{}}
}

// Handle registers op (lower case, as in POST /v1/OP). Register every
// operation before Serve: the table is read without a lock.
func (s *Server) Handle(op string, h Handler) {
	if !opName.MatchString(op) {
		panic(fmt.Sprintf("rpc: bad operation name %q", op))
	}
	s.handlers[op] = h
}

// Serve accepts connections on ln until Shutdown. The TLS configuration
// is pki's: TLS 1.3, a session certificate required, the call table
// checked.
func (s *Server) Serve(ln net.Listener) error {
	cfg, err := pki.ServerConfig(s.leaf, func(ev pki.RejectEvent) {
		s.log.Warn("refused", "caller", ev.Claimed, "reason", ev.Reason.String(), "detail", fmt.Sprint(ev.Detail))
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		TLSConfig:         cfg,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		// One identity per connection: the peer's role is read (with its
		// signature checked again) at the first request and kept for the
		// connection's others.
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &connRole{})
		},
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	srv := s.srv
	s.mu.Unlock()
	if s.peers != nil {
		ln = &peerFilter{Listener: ln, uids: s.peers, log: s.log}
	}
	err = srv.Serve(tls.NewListener(ln, cfg))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for requests in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Shutdown(ctx)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.Error(w, "TLS required", http.StatusBadRequest)
		return
	}
	caller, err := s.peerRole(r)
	if err != nil { // the handshake check passed, so this is a bug: refuse
		s.log.Error("peer role", "error", err)
		http.Error(w, "unauthenticated", http.StatusForbidden)
		return
	}
	op, ok := opFromPath(r.URL.Path)
	h := s.handlers[op]
	var d Decision
	var result any
	switch {
	case r.Method != http.MethodPost || !ok || h == nil:
		d = Deny(ReasonBadRequest, "", "no operation "+r.Method+" "+r.URL.Path)
	default:
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		switch {
		case err != nil:
			d = Deny(ReasonBadRequest, "", "request body: "+err.Error())
		case !json.Valid(body):
			d = Deny(ReasonBadRequest, "", "request body is not JSON")
		default:
			d, result = h(r.Context(), caller, body)
		}
	}
	if _, known := reasonNames[d.Reason]; !known || d.Allowed != (d.Reason == ReasonAllowed) {
		// A handler's bug: refuse rather than answer something
		// inconsistent.
		s.log.Error("inconsistent decision", "op", op, "allowed", d.Allowed, "reason", int(d.Reason))
		d, result = Deny(ReasonBadRequest, "", "the component could not decide"), nil
	}
	resp := Response{Decision: d}
	if d.Allowed && result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			s.log.Error("encode result", "op", op, "error", err)
			resp.Decision = Deny(ReasonBadRequest, "", "the result could not be encoded")
		} else {
			resp.Result = b
		}
	}
	s.log.Info("request", "caller", string(caller), "op", op, "allowed", resp.Decision.Allowed,
		"reason", resp.Decision.Reason.String(), "rule", resp.Decision.Rule, "detail", resp.Decision.Detail)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

type connKey struct{}

// connRole is a connection's peer role, read once.
type connRole struct {
	once sync.Once
	role pki.Role
	err  error
}

func (s *Server) peerRole(r *http.Request) (pki.Role, error) {
	cr, ok := r.Context().Value(connKey{}).(*connRole)
	if !ok {
		return s.leaf.PeerRole(*r.TLS)
	}
	cr.once.Do(func() { cr.role, cr.err = s.leaf.PeerRole(*r.TLS) })
	return cr.role, cr.err
}

func opFromPath(p string) (string, bool) {
	const prefix = "/v1/"
	if len(p) <= len(prefix) || p[:len(prefix)] != prefix || !opName.MatchString(p[len(prefix):]) {
		return "", false
	}
	return p[len(prefix):], true
}
