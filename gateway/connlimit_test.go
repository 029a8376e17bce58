package gateway

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// A connection over the bound whose client has sent nothing yet is
// answered 503 all the same once refuseWait has passed, as serve --help
// says: the wait for its request used to leave the connection's deadline
// spent, so the answer's write failed and the client saw a bare close.
func TestConnectionOverBoundIdleAnswered(t *testing.T) {
	g, _ := testGateway(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := g.LimitConnections(ln, 1, 1, true)
	defer limited.Close()
	held := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := limited.Accept()
			if err != nil {
				return
			}
			held <- c // the one place, held until the test ends
		}
	}()
	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	select {
	case c := <-held:
		defer c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the first connection was not accepted")
	}
	over, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetDeadline(time.Now().Add(refuseWait + 5*time.Second))
	b, err := io.ReadAll(over)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 503 ") || !strings.Contains(string(b), "too many connections") {
		t.Errorf("an idle connection over the bound: %v, %q (want a 503 after %v)", err, b, refuseWait)
	}
}
