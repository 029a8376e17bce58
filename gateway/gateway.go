package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	csession "github.com/pinfold/pinfold/components/session"
	"github.com/pinfold/pinfold/launcher"
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
	// Private are the gateway's own files beyond StateDir — its TLS key,
	// its token store and the store's lock, and the store's directory
	// when the policy reaches it (a rename inside a covered directory
	// does not undo its cover) — absolute, each as given and with links
	// resolved. No session reaches them, nor the session logs:
	// guests' policies leave out every path that holds one, and every
	// session's launcher keeps them as it keeps its own files
	// (PINFOLD_SELF_FILES: fs hides them, bash refuses commands that
	// name them, the sandboxes of the agent and of each command cover
	// them), whatever their modes.
	Private []string
	// Hosts are the names (or addresses) it is served as beyond the
	// address a connection came to, and loopback names on loopback: its
	// certificate's names, a name that reaches it through NAT. A request
	// whose Host or Origin names none of them is refused (hosts.go).
	Hosts []string

	MaxSessions   int           // sessions live or starting at once; default 8
	MaxGuests     int           // of those, guests'; default half of MaxSessions, rounded down
	GuestsPerPeer int           // guests' from one address (an IPv6 /64); default 2
	IdleTimeout   time.Duration // a session with no request for this long ends; default 15m
	StartTimeout  time.Duration // a session's sandbox must be up within; default 60s
	MaxBody       int64         // bytes of one request body; default 8 MiB
	// GuestWorkspace is the size of a guest's workspace, a tmpfs of its
	// own (with at most guestInodes files); default 64 MiB; negative: no
	// limit of its own (a directory under StateDir).
	GuestWorkspace int64
	Log            *slog.Logger // the gateway's own log; default stderr
}

// Gateway serves MCP sessions over streamable HTTP, each in a sandbox of
// its own, with the authority its caller proved.
type Gateway struct {
	cfg         Config
	log         *slog.Logger
	requestLog  *slog.Logger // g.log, limited: for lines any request can cause (loglimit.go)
	policyCopy  string       // the pinned bytes, as every owner session reads them
	sessionsDir string
	logsDir     string
	lock        *os.File
	sdk         *mcp.StreamableHTTPHandler
	probe       *mcp.Server // answers the SDK's protocol-version look-ups; serves nothing

	mu       sync.Mutex
	sessions map[string]*session
	starting int                // reserved, not yet admitted
	guests   map[netip.Addr]int // guests live or starting, by limitKey of their peer
	ending   int                // ended, still stopping
	closing  bool               // Shutdown began: no new session
	started  atomic.Int64
	stop     chan struct{} // closed by Shutdown: the revocation watch ends

	idleGroupWarn sync.Once // noIdleGroup's one line
}

// Lister is a Verifier that can also list its tokens (Store): the gateway
// then ends a session as soon as its token is revoked, not at its next
// request.
type Lister interface {
	List() ([]Token, error)
}

// revokeEvery is how often the gateway looks for revoked tokens, and
// tokens whose capabilities changed.
const revokeEvery = time.Second

// watchRevoked ends, every revokeEvery, the sessions whose token the
// store no longer holds, or holds without a capability the session's
// mode needs (allows). A store it cannot read ends nothing (the next
// request still finds the token invalid).
func (g *Gateway) watchRevoked(l Lister) {
	t := time.NewTicker(revokeEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		toks, err := l.List()
		if err != nil {
			continue
		}
		held := map[string]Token{}
		for _, tk := range toks {
			held["token:"+tk.Hash] = tk
		}
		gone := map[*session]string{}
		g.mu.Lock()
		for _, s := range g.sessions {
			if !strings.HasPrefix(s.Principal, "token:") {
				continue
			}
			if tk, ok := held[s.Principal]; !ok {
				gone[s] = "its token was revoked"
			} else if !allows(tk, s.Mode) {
				gone[s] = "its token no longer carries " + CapHostExecute
			}
		}
		g.mu.Unlock()
		for s, why := range gone {
			g.end(s, why)
		}
	}
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
	for _, p := range cfg.Private {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("gateway: private file %q: not an absolute, clean path", p)
		}
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 8
	}
	if cfg.MaxGuests <= 0 {
		cfg.MaxGuests = guestPlaces(cfg.MaxSessions)
	}
	if cfg.GuestsPerPeer <= 0 {
		cfg.GuestsPerPeer = 2
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
	if cfg.GuestWorkspace == 0 {
		cfg.GuestWorkspace = 64 << 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	g := &Gateway{cfg: cfg, log: cfg.Log, requestLog: newLimitedLogger(cfg.Log.Handler(), requestLineBurst, requestLineEvery), sessions: map[string]*session{}, guests: map[netip.Addr]int{}, stop: make(chan struct{})}
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
		// The SDK logs some refusals of a client's request, one line each.
		Logger: g.requestLog,
	})
	if l, ok := cfg.Tokens.(Lister); ok {
		go g.watchRevoked(l)
	}
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
	// And what the full-access sessions of a gateway killed outright
	// left running: their cgroups outlive it (session.go), populated.
	kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := launcher.KillStaleCgroups(kctx, cgroupKind); err != nil {
		g.log.Warn("the cgroups of full-access sessions of a gateway that died were not all ended", "err", err.Error())
	}
	cancel()
	g.sessionsDir, g.logsDir = filepath.Join(dir, "sessions"), filepath.Join(dir, "logs")
	// Sessions of a gateway that died: their children died with it
	// (Pdeathsig), their directories are ours to remove, guests'
	// workspaces unmounted first (RemoveAll cannot remove a mount point,
	// and would fail only after emptying it).
	if ents, err := os.ReadDir(g.sessionsDir); err == nil {
		for _, e := range ents {
			ws := filepath.Join(g.sessionsDir, e.Name(), "workspace")
			unix.Unmount(ws, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
			// And a guest's backup store, which lives elsewhere (by its
			// workspace's path): no later session has that path.
			os.RemoveAll(csession.StorePath(ws))
		}
	}
	if err := os.RemoveAll(g.sessionsDir); err != nil {
		return fmt.Errorf("gateway: clearing old sessions: %w", err)
	}
	if err := os.Mkdir(g.sessionsDir, 0o711); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if err := os.Mkdir(g.logsDir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("gateway: %w", err)
	}
	g.pruneLogs()
	g.policyCopy = filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(g.policyCopy+".new", g.cfg.PolicyData, 0o600); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return os.Rename(g.policyCopy+".new", g.policyCopy)
}

// Session logs are kept for logMaxAge, at most logMaxCount of them and
// logMaxBytes together: sessions anyone may start must not fill the disk.
const (
	logMaxAge   = 30 * 24 * time.Hour
	logMaxCount = 10000
	logMaxBytes = 1 << 30
)

// pruneLogs removes session logs older than logMaxAge, then the oldest
// beyond logMaxCount or logMaxBytes.
func (g *Gateway) pruneLogs() {
	ents, err := os.ReadDir(g.logsDir)
	if err != nil {
		return
	}
	type log struct {
		name string
		mod  time.Time
		size int64
	}
	var logs []log
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		if time.Since(info.ModTime()) > logMaxAge {
			os.Remove(filepath.Join(g.logsDir, e.Name()))
			continue
		}
		logs = append(logs, log{e.Name(), info.ModTime(), info.Size()})
		total += info.Size()
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].mod.Before(logs[j].mod) })
	for len(logs) > 0 && (len(logs) > logMaxCount || total > logMaxBytes) {
		os.Remove(filepath.Join(g.logsDir, logs[0].name))
		logs, total = logs[1:], total-logs[0].size
	}
}

// Handler is the gateway's HTTP surface: /mcp (streamable HTTP) and
// /healthz. Cross-origin browser requests are refused, and so is every
// request that does not name the gateway as it is served (checkHost: DNS
// rebinding).
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", g.health)
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(http.HandlerFunc(g.serveMCP)))
	return g.checkHost(mux)
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

const protocolVersionHeader = "Mcp-Protocol-Version"

// protocolVersions are the values a request's Mcp-Protocol-Version may
// have: the SDK's versions but 2026-07-28 and later, which its handler
// serves only statelessly (every session here is stateful). The SDK lets
// any value from 2026-07-28 on through its own check (a later version
// might be stateless) and then logs it whole as it refuses the request:
// one guest request with a 60 KiB header was a 60 KiB line in the
// gateway's log. A value it does refuse at once was still an initialize
// that started a sandbox first.
var protocolVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })

// maxInitialize bounds the body of a request that has no session yet:
// an initialize is small, and such a request needs no authentication.
const maxInitialize = 64 << 10

// accepts says whether Accept values name both JSON and event streams.
func accepts(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				js = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				js, sse = true, true
			}
		}
	}
	return js && sse
}

// presentedHash is the sha256 (hex) of the bearer token the request
// presents, "" when it presents none.
func presentedHash(r *http.Request) string {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return ""
	}
	scheme, secret, found := strings.Cut(vals[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	return hex.EncodeToString(sum[:])
}

// display is a principal for logs: a token by the start of its hash.
func display(principal string) string {
	if h, ok := strings.CutPrefix(principal, "token:"); ok && len(h) > 12 {
		return "token:" + h[:12]
	}
	return principal
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
// failed attempt against the peer). ok is false when the request was
// answered: 429 when the peer has failed too often, 503 when a token was
// presented and the store cannot be read.
func (g *Gateway) authenticate(w http.ResponseWriter, r *http.Request, peer netip.Addr) (principal string, tok Token, ok bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return guestPrincipal, Token{}, true
	}
	// A valid token is served whatever its address's failures: the limit
	// is on failures, and an address is shared (every local user's is
	// 127.0.0.1), so limiting before the check let anyone there keep the
	// owner out with a bad token now and then. Guessing is not what the
	// limit stops (a token is 256 random bits); it bounds the work and
	// the log lines failures make.
	if len(vals) == 1 {
		scheme, secret, found := strings.Cut(vals[0], " ")
		if found && strings.EqualFold(scheme, "Bearer") {
			if t, valid := g.cfg.Tokens.Verify(strings.TrimSpace(secret)); valid {
				// Bound to the token itself, not its name: a name revoked
				// and given to a new token is another principal.
				return "token:" + t.Hash, t, true
			}
			// A store that cannot be read now says nothing about the
			// token: serving its bearer as a guest gave an owner a guest
			// session unawares, and ended a live one as revoked.
			if l, ok := g.cfg.Tokens.(Lister); ok {
				if _, err := l.List(); err != nil {
					g.requestLog.Error("token store unreadable", "err", err.Error())
					w.Header().Set("Retry-After", "5")
					httpError(w, http.StatusServiceUnavailable, "the token store cannot be read now, so no token can be checked: try again later (the gateway's log says why)")
					return "", Token{}, false
				}
			}
		}
	}
	now := time.Now()
	if allowed, retry := g.cfg.Limiter.Allow(peer, now); !allowed {
		secs := int(retry/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentications from %s: try again in %d s", peer, secs))
		return "", Token{}, false
	}
	g.cfg.Limiter.Fail(peer, now)
	g.requestLog.Warn("failed authentication: served as a guest", "peer", peer.String())
	return guestPrincipal, Token{}, true
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	// Before anything else but the Host (Handler): the SDK checks the
	// version header only below 2026-07-28, and logs whatever it refuses
	// above, whole.
	if vs := r.Header.Values(protocolVersionHeader); len(vs) > 1 || len(vs) == 1 && vs[0] != "" && !slices.Contains(protocolVersions, vs[0]) {
		asked := strings.Join(vs, ",")
		if len(asked) > 40 {
			asked = asked[:40] + "..."
		}
		// The SDK's own answer to a version it refuses, which its
		// client falls back from.
		rpcErrorData(w, mcp.CodeUnsupportedProtocolVersion, fmt.Sprintf("%s %q is not a version this gateway serves (%s)", protocolVersionHeader, asked, strings.Join(protocolVersions, ", ")),
			mcp.UnsupportedProtocolVersionData{Supported: protocolVersions, Requested: asked})
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
			if s.Principal == "token:"+presentedHash(r) {
				// Its own token, no longer valid: revoked. The session
				// ends with it.
				g.end(s, "its token was revoked")
				httpError(w, http.StatusForbidden, "this session's token was revoked: the session has ended")
				return
			}
			g.requestLog.Warn("request for another caller's session refused", "session", id, "peer", peer.String(), "principal", display(principal))
			httpError(w, http.StatusForbidden, "this session belongs to another caller")
			return
		}
		if !allows(tok, s.Mode) {
			// Its own token, whose capability was taken away (the store
			// edited): the session ends as it would on revocation.
			g.end(s, "its token no longer carries "+CapHostExecute)
			httpError(w, http.StatusForbidden, fmt.Sprintf("this session's token no longer carries %s, which its full access needs: the session has ended", CapHostExecute))
			return
		}
		if r.Method == http.MethodDelete {
			// Ended here rather than by the SDK, whose Close waits for the
			// calls in flight: end cancels them first.
			g.end(s, "closed by the client")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method == http.MethodPost {
			// A place is taken before the body is read: the number of
			// bodies held at once is bounded per session. (A GET is the
			// session's event stream, and has no body.)
			select {
			case s.inflight <- struct{}{}:
				defer func() { <-s.inflight }()
			default:
				w.Header().Set("Retry-After", "1")
				httpError(w, http.StatusTooManyRequests, fmt.Sprintf("this session has %d requests in flight, its most: wait for one to end", cap(s.inflight)))
				return
			}
			if s.guest {
				r.Body = http.MaxBytesReader(w, r.Body, guestMaxBody)
			}
			if refuseBatch(w, r) {
				return
			}
		}
		// Its writes can be cut when the session ends: a client that
		// does not read must not hold the session's cleanup.
		defer s.track(http.NewResponseController(w))()
		g.sdk.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		g.sdk.ServeHTTP(w, r) // the SDK's own answer to a session-less GET or DELETE
		return
	}
	// What the SDK would refuse is refused before a sandbox starts.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	if !accepts(r.Header.Values("Accept")) {
		httpError(w, http.StatusBadRequest, "Accept must name both application/json and text/event-stream")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInitialize))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a request without a session (an initialize) is at most %d bytes", maxInitialize))
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
	if !allows(tok, mode) {
		who := "a guest"
		if principal != guestPrincipal {
			who = "token " + tok.Name
		}
		g.requestLog.Warn("full access refused", "peer", peer.String(), "principal", display(principal))
		httpError(w, http.StatusForbidden, fmt.Sprintf("full access needs an owner token with the %s capability; %s has none (ask for safe mode, or `launcher serve token add NAME --cap %s`)", CapHostExecute, who, CapHostExecute))
		return
	}
	if mode == Full {
		if err := g.fullAccessAllowed(); err != nil {
			httpError(w, http.StatusForbidden, err.Error())
			return
		}
	}
	guest := principal == guestPrincipal
	if err := g.reserve(guest, peer); err != nil {
		w.Header().Set("Retry-After", "5")
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s, err := g.startSession(r.Context(), newID(), principal, mode, peer)
	if err != nil {
		g.release(guest, peer)
		g.log.Error("session not started", "peer", peer.String(), "principal", display(principal), "mode", string(mode), "err", err.Error())
		httpError(w, http.StatusServiceUnavailable, "the session's sandbox could not start, and nothing runs outside it (the gateway's log says why)")
		return
	}
	if !g.admit(s) {
		g.end(s, "not admitted: the gateway is stopping, or the sandbox ended at once")
		httpError(w, http.StatusServiceUnavailable, "the session ended as it started (the gateway is stopping, or its sandbox stopped)")
		return
	}
	if testHookAdmitted != nil {
		testHookAdmitted(s)
	}
	if g.started.Add(1)%64 == 0 {
		go g.pruneLogs()
	}
	g.log.Info("session", "session", s.ID, "peer", peer.String(), "principal", display(principal), "mode_asked", string(s.Asked), "mode", string(s.Mode))
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
	// Ended while its initialize was answered (its token revoked, its
	// sandbox gone, a shutdown): end may have found no HTTP session to
	// close, and the SDK would keep this one for the idle timeout.
	g.mu.Lock()
	over := s.over
	g.mu.Unlock()
	if over {
		ss.Close()
		return
	}
	go func() {
		ss.Wait()
		g.end(s, "closed by the client, or idle")
	}()
}

// allows says whether token t may have a session in mode m: full access
// needs host.execute. It holds while the session lives, not only when it
// starts: a token whose capability is taken away ends its full-access
// sessions as revoking it would.
func allows(t Token, m Mode) bool { return m != Full || t.Has(CapHostExecute) }

// testHookAdmitted, set by a test, runs when a session is admitted,
// before its initialize is answered.
var testHookAdmitted func(*session)

// reserve counts a session about to start against MaxSessions and, for
// a guest, against MaxGuests and GuestsPerPeer: guests cannot take the
// places owners need, nor one address all the guests' places.
func (g *Gateway) reserve(guest bool, peer netip.Addr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return errors.New("the gateway is stopping")
	}
	if len(g.sessions)+g.starting >= g.cfg.MaxSessions {
		return fmt.Errorf("the gateway holds its most sessions (%d): try again later", g.cfg.MaxSessions)
	}
	if guest {
		total := 0
		for _, n := range g.guests {
			total += n
		}
		if total >= g.cfg.MaxGuests {
			return fmt.Errorf("the gateway holds its most guest sessions (%d): try again later, or use an owner token", g.cfg.MaxGuests)
		}
		if g.guests[limitKey(peer)] >= g.cfg.GuestsPerPeer {
			return fmt.Errorf("your address holds its most guest sessions (%d): end one first", g.cfg.GuestsPerPeer)
		}
		g.guests[limitKey(peer)]++
	}
	g.starting++
	return nil
}

// release gives back a reservation that did not become a session.
func (g *Gateway) release(guest bool, peer netip.Addr) {
	g.mu.Lock()
	g.starting--
	g.releaseGuestLocked(guest, peer)
	g.mu.Unlock()
}

func (g *Gateway) releaseGuestLocked(guest bool, peer netip.Addr) {
	if !guest {
		return
	}
	k := limitKey(peer)
	if g.guests[k]--; g.guests[k] <= 0 {
		delete(g.guests, k)
	}
}

// admit turns a reservation into a live session; false when the gateway
// began stopping meanwhile, or the session already ended (its sandbox
// died right after it started).
func (g *Gateway) admit(s *session) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.starting--
	if g.closing || s.over {
		g.releaseGuestLocked(s.guest, s.Peer)
		return false
	}
	g.sessions[s.ID] = s
	return true
}

// end ends s once, for why: the HTTP session closed, the child stopped
// and its files removed. It may be called from anywhere, any number of
// times.
//
// The order matters: the session's context is cancelled first (calls in
// flight are cancelled in the child, whose commands are killed), then
// the child is stopped, and only then the HTTP side closed, which waits
// for its calls in flight — they have ended by then.
func (g *Gateway) end(s *session, why string) {
	s.endOnce.Do(func() {
		g.mu.Lock()
		s.over = true
		_, live := g.sessions[s.ID]
		delete(g.sessions, s.ID)
		if live {
			g.ending++
			g.releaseGuestLocked(s.guest, s.Peer)
		}
		g.mu.Unlock()
		s.why = why
		go func() {
			s.cancel()
			s.stop()
			s.cutWrites()
			if ss := s.serverSession(); ss != nil {
				ss.Close()
			}
			s.log.Info("session ended", "why", why, "age", s.age())
			g.log.Info("session ended", "session", s.ID, "why", why, "age", s.age())
			s.cleanup(g)
			close(s.ended)
			if live {
				g.mu.Lock()
				g.ending--
				g.mu.Unlock()
			}
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
	if !g.closing {
		close(g.stop)
	}
	g.closing = true
	live := make([]*session, 0, len(g.sessions))
	for _, s := range g.sessions {
		live = append(live, s)
	}
	g.mu.Unlock()
	for _, s := range live {
		g.end(s, "the gateway is stopping")
	}
	// Until no session is live, starting or ending (a start under way
	// is refused at admit and ended by its own request).
	for {
		g.mu.Lock()
		busy := len(g.sessions) + g.starting + g.ending
		g.mu.Unlock()
		if busy == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gateway: %d sessions still ending: %w", busy, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	removeIdleCPUGroup()
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
	rpcErrorData(w, code, msg, nil)
}

// rpcErrorData is rpcError with the error's data, if not nil.
func rpcErrorData(w http.ResponseWriter, code int64, msg string, data any) {
	e := map[string]any{"code": code, "message": "pinfold gateway: " + msg}
	if data != nil {
		e["data"] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": e})
}

// refuseBatch answers a JSON-RPC batch (an array) with 400 and reports
// so; otherwise it leaves the body as it was. The SDK still takes a
// batch when a request's protocol-version header is old or missing, and
// a batch is many calls under one of the session's places in flight: one
// guest POST of 9,500 reads, never read back, grew the gateway by GBs.
// MCP has no batches since 2025-06-18.
func refuseBatch(w http.ResponseWriter, r *http.Request) bool {
	br := bufio.NewReader(r.Body)
	for {
		b, err := br.Peek(1)
		if err != nil || len(b) == 0 {
			break
		}
		if c := b[0]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			br.ReadByte()
			continue
		}
		if b[0] == '[' {
			rpcError(w, -32600, "batches are not supported (MCP removed them in 2025-06-18): send one message per request")
			return true
		}
		break
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return false
}

// guestPlaces is the default number of guest sessions: half of the
// sessions, rounded down, so that with one place guests get none
// (anonymous callers must not take the owners' only place).
func guestPlaces(maxSessions int) int { return maxSessions / 2 }
