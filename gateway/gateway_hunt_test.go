package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// A JSON-RPC batch is refused before the SDK sees it: the SDK still took
// one when the request's protocol-version header was old or missing, and
// a guest's one POST of many reads, never read back, grew the gateway by
// GBs. A single message passes through with its body whole.
func TestRefuseBatch(t *testing.T) {
	for body, refused := range map[string]bool{
		` [{"jsonrpc":"2.0","id":1,"method":"ping"}]`: true,
		"\n\t[]": true,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:       false,
		"  \n" + `{"jsonrpc":"2.0","id":2,"method":"x"}`: false,
		``: false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		w := httptest.NewRecorder()
		got := refuseBatch(w, r)
		if got != refused {
			t.Errorf("%q: refused %v, want %v", body, got, refused)
			continue
		}
		if refused {
			if !strings.Contains(w.Body.String(), "-32600") {
				t.Errorf("%q: answer %q", body, w.Body.String())
			}
			continue
		}
		if rest, _ := io.ReadAll(r.Body); strings.TrimSpace(string(rest)) != strings.TrimSpace(body) {
			t.Errorf("%q: the body went on as %q", body, rest)
		}
	}
}

// With one place, guests get none; with more, half, rounded down.
func TestGuestPlaces(t *testing.T) {
	for n, want := range map[int]int{1: 0, 2: 1, 3: 1, 8: 4} {
		if got := guestPlaces(n); got != want {
			t.Errorf("guestPlaces(%d) = %d, want %d", n, got, want)
		}
	}
	g := &Gateway{cfg: Config{MaxSessions: 1, MaxGuests: guestPlaces(1), GuestsPerPeer: 2}, sessions: map[string]*session{}, guests: map[netip.Addr]int{}}
	if err := g.reserve(true, netip.MustParseAddr("192.0.2.1")); err == nil {
		t.Error("a guest took the only place")
	}
	if err := g.reserve(false, netip.MustParseAddr("192.0.2.1")); err != nil {
		t.Errorf("the owner: %v", err)
	}
}

// When a session ends, the writes of its requests still being answered
// fail at once: a client that never reads no longer holds the session's
// end (and with it a guest's tmpfs) for as long as it keeps the
// connection.
func TestEndCutsWrites(t *testing.T) {
	s := &session{}
	wrote := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.track(http.NewResponseController(w))()
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 100000; i++ { // 6.4 GB: far past any buffer
			if _, err := w.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(1024)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	bufio.NewReader(c).Peek(1) // the answer has begun; then nothing is read
	select {
	case err := <-wrote:
		t.Fatalf("the handler ended before the cut: %v", err)
	case <-time.After(500 * time.Millisecond): // stuck writing
	}
	s.cutWrites()
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("the handler wrote everything")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write still blocks after the session's end")
	}
}
