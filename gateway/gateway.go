package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pinfold/pinfold/policy"
)

// Version is the gateway's version as it tells clients.
var Version = "dev"

// guestPrincipal is who a request without a valid token is.
const guestPrincipal = "guest"

// ModeHeader is the request header that asks for a session's mode on its
// initialize: "safe" (the default) or "full".
const ModeHeader = "Pinfold-Mode"

// Verifier checks an owner token (*Store).
type Verifier interface {
	Verify(secret string) (Token, bool)
}

// Config is a gateway's configuration. Launcher, Policy, PolicyData,
// StateDir, Tokens and Limiter are required.
type Config struct {
	Launcher   string         // the launcher binary every session runs
	Policy     *policy.Policy // the pinned policy (mode = "components"), parsed
	PolicyData []byte         // its bytes, already checked against the pin
	PolicyHash policy.Digest
	StateDir   string // sessions/ and logs/ beneath it; the gateway's alone while it runs
	Tokens     Verifier
	Limiter    *Limiter
	// Listeners are the gateway's own addresses: every session's net
	// refuses them, whatever the policy's unsafe_allow_private says.
	Listeners []netip.AddrPort

	MaxSessions  int           // sessions live or starting at once; default 8
	IdleTimeout  time.Duration // a session with no request for this long ends; default 15m
	StartTimeout time.Duration // a session's sandbox must be up within; default 60s
	MaxBody      int64         // bytes of one request body; default 8 MiB
	Log          *slog.Logger  // the gateway's own log; default stderr
}

// Gateway serves MCP sessions over streamable HTTP, each in a sandbox of
// its own, with the authority its caller proved.
type Gateway struct {
	cfg         Config
	log         *slog.Logger
	policyCopy  string // the pinned bytes, as every owner session reads them
	sessionsDir string
	logsDir     string
	lock        *os.File
	sdk         *mcp.StreamableHTTPHandler
	probe       *mcp.Server // answers the SDK's protocol-version look-ups; serves nothing

	mu       sync.Mutex
	sessions map[string]*session
	starting int
	closing  bool
	wg       sync.WaitGroup
}

type serverKey struct{}

// New prepares a gateway: its state directory (locked for its life, so a
// second gateway on it is refused), the pinned policy's copy, and the
// HTTP handler.
func New(cfg Config) (*Gateway, error) {
	if cfg.Launcher == "" || cfg.Policy == nil || cfg.StateDir == "" || cfg.Tokens == nil || cfg.Limiter == nil {
		return nil, errors.New("gateway: incomplete configuration")
	}
	if cfg.Policy.Mode != policy.ModeComponents {
		return nil, fmt.Errorf("gateway: the policy's mode is %q: every session is a components-mode session, so the policy must say mode = \"components\"", cfg.Policy.Mode)
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 8
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 15 * time.Minute
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 8 << 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	g := &Gateway{cfg: cfg, log: cfg.Log, sessions: map[string]*session{}}
	if err := g.prepareState(); err != nil {
		return nil, err
	}
	g.probe = mcp.NewServer(&mcp.Implementation{Name: "pinfold-gateway", Version: Version}, nil)
	g.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(serverKey{}).(*mcp.Server); ok {
			return s
		}
		return g.probe
	}, &mcp.StreamableHTTPOptions{
		SessionTimeout:      cfg.IdleTimeout,
		MaxRequestBodyBytes: cfg.MaxBody,
		Logger:              cfg.Log,
	})
	return g, nil
}

// prepareState makes StateDir (the gateway's, mode 0711: a guest's
// sandbox must be able to pass through to its workspace, and no one may
// list or change it), takes its lock, clears the sessions a gateway that
// died left behind, and writes the policy copy.
func (g *Gateway) prepareState() error {
	dir := g.cfg.StateDir
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("gateway: state directory: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm()&0o066 != 0 || int(st.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
		return fmt.Errorf("gateway: state directory %s must be a directory of uid %d that no one else can list or change (mode 0711 or 0700)", dir, os.Geteuid())
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("gateway: state directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return fmt.Errorf("gateway: another gateway uses the state directory %s (give each its own --state DIR)", dir)
	}
	g.lock = lock
	g.sessionsDir, g.logsDir = filepath.Join(dir, "sessions"), filepath.Join(dir, "logs")
	// Sessions of a gateway that died: their children died with it
	// (Pdeathsig), their directories are ours to remove.
	if err := os.RemoveAll(g.sessionsDir); err != nil {
		return fmt.Errorf("gateway: clearing old sessions: %w", err)
	}
	if err := os.Mkdir(g.sessionsDir, 0o711); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := os.Mkdir(g.logsDir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("gateway: %w", err)
	}
	g.policyCopy = filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(g.policyCopy+".new", g.cfg.PolicyData, 0o600); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return os.Rename(g.policyCopy+".new", g.policyCopy)
}

// Handler is the gateway's HTTP surface: /mcp (streamable HTTP) and
// /healthz. Cross-origin browser requests are refused.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", g.health)
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(http.HandlerFunc(g.serveMCP)))
	return mux
}

func (g *Gateway) health(w http.ResponseWriter, _ *http.Request) {
	g.mu.Lock()
	n, closing := len(g.sessions), g.closing
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	status := "ok"
	if closing {
		status = "stopping"
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(map[string]any{"status": status, "sessions": n, "max_sessions": g.cfg.MaxSessions})
}

// isLoopback says whether hostport (a host, with or without a port)
// names loopback: "localhost" or a loopback address.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// peerOf is the socket peer's address. Forwarded-for headers are never
// read: the client boundary is the connection.
func peerOf(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// authenticate says who the request is: an owner (a valid token) or the
// guest (no token, or one that is not valid — the latter counted as a
// failed attempt against the peer). ok is false when the peer has failed
// too often and the request was answered 429.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request, peer netip.Addr) (principal string, tok Token, ok bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return guestPrincipal, Token{}, true
	}
	now := time.Now()
	if allowed, retry := g.cfg.Limiter.Allow(peer, now); !allowed {
		secs := int(retry/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentications from %s: try again in %d s", peer, secs))
		return "", Token{}, false
	}
	if len(vals) == 1 {
		scheme, secret, found := strings.Cut(vals[0], " ")
		if found && strings.EqualFold(scheme, "Bearer") {
			if t, valid := g.cfg.Tokens.Verify(strings.TrimSpace(secret)); valid {
				return "token:" + t.Name, t, true
			}
		}
	}
	g.cfg.Limiter.Fail(peer, now)
	g.log.Warn("failed authentication: served as a guest", "peer", peer.String())
	return guestPrincipal, Token{}, true
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	// DNS rebinding: a request that came to a loopback address must
	// name a loopback host. Checked before anything else, so such a
	// request never starts a session (the SDK's own check comes later).
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(local.String()) && !isLoopback(r.Host) {
		httpError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this loopback server's (DNS rebinding?)", r.Host))
		return
	}
	peer := peerOf(r)
	principal, tok, ok := g.authenticate(w, r, peer)
	if !ok {
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		g.mu.Lock()
		s := g.sessions[id]
		g.mu.Unlock()
		if s == nil {
			httpError(w, http.StatusNotFound, "no such session (it ended, or never was): start a new one with initialize")
			return
		}
		if s.Principal != principal {
			g.log.Warn("request for another caller's session refused", "session", id, "peer", peer.String(), "principal", principal)
			httpError(w, http.StatusForbidden, "this session belongs to another caller")
			return
		}
		g.sdk.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		g.sdk.ServeHTTP(w, r) // the SDK's own answer to a session-less GET or DELETE
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBody))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", g.cfg.MaxBody))
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		rpcError(w, -32700, "not one JSON-RPC message: "+err.Error())
		return
	}
	if req, isReq := msg.(*jsonrpc.Request); !isReq || !req.IsCall() || req.Method != "initialize" {
		rpcError(w, -32600, "no session: the first request must be initialize (a new session), or give the Mcp-Session-Id of yours")
		return
	}
	mode := Mode(strings.ToLower(r.Header.Get(ModeHeader)))
	switch mode {
	case "":
		mode = Safe
	case Safe, Full:
	default:
		httpError(w, http.StatusBadRequest, fmt.Sprintf("%s: %q is not a mode (safe or full)", ModeHeader, r.Header.Get(ModeHeader)))
		return
	}
	if mode == Full && !tok.Has(CapHostExecute) {
		who := "a guest"
		if principal != guestPrincipal {
			who = "token " + tok.Name
		}
		g.log.Warn("full access refused", "peer", peer.String(), "principal", principal)
		httpError(w, http.StatusForbidden, fmt.Sprintf("full access needs an owner token with the %s capability; %s has none (ask for safe mode, or `launcher serve token add NAME --cap %s`)", CapHostExecute, who, CapHostExecute))
		return
	}
	if err := g.reserve(); err != nil {
		w.Header().Set("Retry-After", "5")
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s, err := g.startSession(r.Context(), newID(), principal, mode, peer)
	if err != nil {
		g.release()
		g.log.Error("session not started", "peer", peer.String(), "principal", principal, "mode", string(mode), "err", err.Error())
		httpError(w, http.StatusServiceUnavailable, "the session's sandbox could not start, and nothing runs outside it (the gateway's log says why)")
		return
	}
	if !g.admit(s) {
		s.stop()
		s.cleanup(g)
		httpError(w, http.StatusServiceUnavailable, "the gateway is stopping")
		return
	}
	g.log.Info("session", "session", s.ID, "peer", peer.String(), "principal", principal, "mode_asked", string(s.Asked), "mode", string(s.Mode))
	r2 := r.WithContext(context.WithValue(r.Context(), serverKey{}, s.server))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	g.sdk.ServeHTTP(w, r2)
	var ss *mcp.ServerSession
	for x := range s.server.Sessions() {
		ss = x
	}
	if ss == nil {
		g.end(s, "initialize failed")
		return
	}
	s.setServerSession(ss)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		ss.Wait()
		g.end(s, "closed by the client, or idle")
	}()
}

// reserve counts a session about to start against MaxSessions.
func (g *Gateway) reserve() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return errors.New("the gateway is stopping")
	}
	if len(g.sessions)+g.starting >= g.cfg.MaxSessions {
		return fmt.Errorf("the gateway holds its most sessions (%d): try again later", g.cfg.MaxSessions)
	}
	g.starting++
	return nil
}

func (g *Gateway) release() {
	g.mu.Lock()
	g.starting--
	g.mu.Unlock()
}

// admit turns a reservation into a live session; false when the gateway
// began stopping meanwhile.
func (g *Gateway) admit(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.starting--
	if g.closing {
		return false
	}
	g.sessions[s.ID] = s
	return true
}

// end ends s once, for why: the HTTP session closed, the child stopped
// and its files removed. It may be called from anywhere, any number of
// times.
func (g *Gateway) end(s *session, why string) {
	s.endOnce.Do(func() {
		g.mu.Lock()
		delete(g.sessions, s.ID)
		g.mu.Unlock()
		s.why = why
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			if ss := s.serverSession(); ss != nil {
				ss.Close()
			}
			s.stop()
			s.log.Info("session ended", "why", why, "age", s.age())
			g.log.Info("session ended", "session", s.ID, "why", why, "age", s.age())
			s.cleanup(g)
			close(s.ended)
		}()
	})
}

// Live is the number of sessions live now.
func (g *Gateway) Live() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sessions)
}

// Shutdown refuses new sessions, ends every live one and waits for them
// to be gone (or ctx to end).
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.closing = true
	live := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		live = append(live, s)
	}
	g.mu.Unlock()
	for _, s := range live {
		g.end(s, "the gateway is stopping")
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("gateway: sessions still ending: %w", ctx.Err())
	}
	if g.lock != nil {
		g.lock.Close()
	}
	return nil
}

func httpError(w http.ResponseWriter, code int, msg string) {
	http.Error(w, "pinfold gateway: "+msg, code)
}

// rpcError answers a request that cannot become a session with a JSON-RPC
// error (id null: none was read) and HTTP 400.
func rpcError(w http.ResponseWriter, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": "pinfold gateway: " + msg}})
}
