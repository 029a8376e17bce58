package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

// A byte tunnel is decided by its CONNECT host, but a front-end that
// serves many names routes by what comes inside: the TLS server_name or
// an HTTP Host. So the client's first message is read before any of it
// goes on (checkFirst), and a tunnel whose first message names another
// host is closed: domain fronting. The answer "200 Connection
// established" has gone by then; closing both sides is all that is left.

// Rules and reasons of a tunnel's refusal.
const (
	RuleTunnelSNI  = "tunnel.sni"  // a TLS ClientHello that does not name the CONNECT host alone
	RuleTunnelHTTP = "tunnel.http" // an HTTP request (or a first message that does not end) inside a tunnel

	ReasonSNIMismatch    = "sni-mismatch"     // server_name is not the CONNECT host (or is there for an IP)
	ReasonBadClientHello = "bad-client-hello" // malformed, a duplicate extension, ECH, over 64 KiB
	ReasonHTTPInTunnel   = "http-in-tunnel"   // plain HTTP belongs in absolute form, where its Host is decided
	ReasonFirstUnended   = "first-unended"    // the first message did not end (in time, before a close, within 64 KiB)
)

// firstMessageTimeout bounds the wait for the rest of a first message
// once its first byte came (the wait for that byte is the tunnel's idle
// time: a client may wait for a server that speaks first).
const firstMessageTimeout = 10 * time.Second

// tunnelRefusal is why a tunnel's first message was refused.
type tunnelRefusal struct {
	rule, reason, detail string
}

// checkFirst decides a tunnel to h from the client's first bytes b:
// more when b is too short to tell, else nil (pass it on) or why not.
//
//   - A first byte that is a TLS record's content type (20 to 24) starts
//     TLS: the first record must be a handshake record carrying a
//     well-formed ClientHello naming h alone in server_name (nothing, for
//     an IP literal), without encrypted_client_hello unless allowECH. A
//     server skips some records before the hello (crypto/tls drops
//     warning alerts) and routes by the hello after them, so none may
//     come first.
//   - An SSLv2-style ClientHello is refused: OpenSSL still reads one,
//     and it has no server_name to check.
//   - Bytes that begin as an HTTP/1.x request line (a token, then a
//     blank; the HTTP/2 preface "PRI * HTTP/2.0" is one), or whose first
//     line holds "HTTP/", are refused unless the upstream spoke first
//     (spoke): an HTTP server never does, and the protocols that do
//     (SMTP, FTP, POP3, IMAP) have clients that answer with a word and a
//     space.
//   - Anything else (ssh, a database's binary protocol) passes as it is.
//
// A client that answers an upstream which spoke first passes whatever it
// sends: neither a TLS nor an HTTP front-end ever speaks first, and a
// MySQL client's answer, say, may start with any byte (its length).
func checkFirst(b []byte, h Host, spoke, allowECH bool) (more bool, f *tunnelRefusal) {
	if len(b) == 0 {
		return true, nil
	}
	if spoke {
		return false, nil
	}
	if isRecordType(b[0]) {
		return checkTLS(b, h, allowECH)
	}
	// A PROXY protocol v2 header: a front-end that accepts one from the
	// client takes the source address it names, and skips it to route by
	// what follows, which the check below never saw (its CR LFs read as
	// empty lines, then a NUL; a hunt, 2026-12-02). v1 ("PROXY TCP4 …")
	// is refused as a request line.
	if n := min(len(b), len(proxyV2Signature)); bytes.Equal(b[:n], proxyV2Signature[:n]) {
		if n < len(proxyV2Signature) {
			return true, nil
		}
		return false, &tunnelRefusal{RuleTunnelHTTP, ReasonHTTPInTunnel,
			"the tunnel's first bytes are a PROXY protocol header: it would name a source of the agent's choosing, and a front-end routes by what follows it"}
	}
	if b[0]&0x80 != 0 {
		// SSLv2's two-byte record header (high bit set, then the length)
		// and CLIENT-HELLO's type: the shape OpenSSL looks for. Only that
		// shape, so that binary protocols with a high first byte pass.
		if len(b) < 3 {
			return true, nil
		}
		if b[2] == typeClientHello {
			return false, &tunnelRefusal{RuleTunnelSNI, ReasonBadClientHello,
				"an SSLv2-style ClientHello is refused: it has no server_name to check"}
		}
	}
	return checkHTTPStart(b)
}

// proxyV2Signature begins every PROXY protocol v2 header.
var proxyV2Signature = []byte("\r\n\r\n\x00\r\nQUIT\n")

// isRecordType reports whether c is a TLS record content type.
func isRecordType(c byte) bool { return c >= recordTypeFirst && c <= recordTypeLast }

// checkTLS decides b, which starts with a TLS record.
func checkTLS(b []byte, h Host, allowECH bool) (more bool, f *tunnelRefusal) {
	if b[0] != recordHandshake {
		return false, &tunnelRefusal{RuleTunnelSNI, ReasonBadClientHello,
			fmt.Sprintf("a TLS record of type %d comes before the ClientHello: a server may skip it and route by the hello behind it", b[0])}
	}
	msg, _, err := clientHelloMessage(b)
	if err == errNeedMore {
		return true, nil
	}
	if err == nil {
		var ch *clientHello
		if ch, err = parseClientHello(msg); err == nil {
			return false, checkServerName(ch, h, allowECH)
		}
	}
	return false, &tunnelRefusal{RuleTunnelSNI, ReasonBadClientHello, "the ClientHello is refused: " + err.Error()}
}

// checkServerName holds a parsed ClientHello to the CONNECT host h.
//
// encrypted_client_hello is refused unless allowECH: a front-end that
// accepts ECH routes by the inner hello's name, which net cannot read,
// whatever the outer one says. Chromium sends the extension in every
// TLS 1.3 hello (a GREASE decoy when it has no ECH config, and the two
// look alike), so its clients need the switch; with it, the outer
// server_name is still held to h.
func checkServerName(ch *clientHello, h Host, allowECH bool) *tunnelRefusal {
	if ch.hasECH && !allowECH {
		return &tunnelRefusal{RuleTunnelSNI, ReasonBadClientHello,
			"the ClientHello has encrypted_client_hello: the name it reaches is hidden behind its outer server_name " +
				"(Chromium-based clients send one in every hello; network.allow_ech = true lets it through)"}
	}
	if h.IsIP() {
		if ch.hasSNI {
			return &tunnelRefusal{RuleTunnelSNI, ReasonSNIMismatch,
				fmt.Sprintf("a tunnel to the address %s names %s in server_name", h, quoteNames(ch.serverNames))}
		}
		return nil
	}
	if len(ch.serverNames) != 1 {
		return &tunnelRefusal{RuleTunnelSNI, ReasonSNIMismatch,
			fmt.Sprintf("server_name names %s; a tunnel to %s must name that host alone", quoteNames(ch.serverNames), h.Name)}
	}
	sni := ch.serverNames[0]
	// ASCII only, as RFC 6066 has it: a front-end compares the bytes, so
	// a Unicode spelling IDNA would map to h is not h to it.
	if isASCII(sni) {
		if sh, err := NormalizeHost(sni); err == nil && !sh.IsIP() && sh.Name == h.Name {
			return nil
		}
	}
	return &tunnelRefusal{RuleTunnelSNI, ReasonSNIMismatch,
		fmt.Sprintf("server_name %s is not the CONNECT host %s", quoteNames(ch.serverNames), h.Name)}
}

// quoteNames quotes names for a log line, each cut to 64 bytes: the
// client chose them.
func quoteNames(names []string) string {
	if len(names) == 0 {
		return "no host"
	}
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		if len(n) > 64 {
			n = n[:64] + "…"
		}
		s += fmt.Sprintf("%q", n)
	}
	return s
}

// maxSSHIdent is the longest identification line an ssh client sends,
// CR LF included (RFC 4253 §4.2).
const maxSSHIdent = 255

// checkHTTPStart refuses b when it begins an HTTP request line: a token
// (RFC 9110 tchar) then a blank, after any blanks and control bytes
// (isControl: Netty skips them before a request line). It is deliberately
// broad: a front-end may take any token as a method, so no list of
// methods is safe; and a blank is anything some server splits a request
// line on (isBlank). A first line that holds "HTTP/" anywhere, in any
// case, is refused too: a request line ends in its version, whatever
// comes before it ("\x80GET" is a method to servers that split on
// blanks and take any word).
//
// A word alone on its line ("PING\r\n") passes: with no target and no
// version, no server reads it as a request with a Host.
//
// An ssh client's identification line is the one common first message
// that also has a token and a space ("SSH-2.0-OpenSSH_9.2p1 Debian-2"):
// a whole line that begins "SSH-", ends in CR LF and holds no "HTTP/" is
// passed, since a
// request line needs a version (one without is HTTP/0.9, which carries
// no Host).
func checkHTTPStart(b []byte) (more bool, f *tunnelRefusal) {
	if bytes.HasPrefix(b, []byte("SSH-")) {
		// Only a line ended by CR LF, as RFC 4253 has it, with no LF
		// before: "SSH-2.0-X\n/ HTTP/1.1" was one request line to a
		// server reading to CR LF, the method "SSH-2.0-X" (a re-test,
		// 2026-12-02). Any other shape is decided as below.
		end := bytes.Index(b, []byte("\r\n"))
		if end < 0 && len(b) < maxSSHIdent && bytes.IndexByte(b, '\n') < 0 {
			return true, nil
		}
		if end >= 0 && end < maxSSHIdent && bytes.IndexByte(b[:end], '\n') < 0 && !holdsHTTPVersion(b[:end]) {
			return false, nil
		}
	}
	// Servers skip empty lines before a request line (RFC 9112 §2.2;
	// nginx does), those that split on blanks skip leading ones, and
	// Netty's decoder skips every control byte: they do not end the
	// question.
	i := 0
	for i < len(b) && (isBlank(b[i]) || isControl(b[i])) {
		i++
	}
	b = b[i:]
	line := b
	if end := bytes.IndexByte(b, '\n'); end >= 0 {
		line = b[:end]
	}
	// Up to the first LF, and up to the first CR LF: a server that reads
	// its request line to CR LF saw "GET\n/ HTTP/1.1" as one (below).
	if crlf := bytes.Index(b, []byte("\r\n")); holdsHTTPVersion(line) || crlf >= 0 && holdsHTTPVersion(b[:crlf]) {
		return false, httpInTunnel()
	}
	for i, c := range b {
		switch {
		case isTokenChar(c):
			continue
		case i == 0:
			return false, nil
		case c == '\n' && i+1 < len(b):
			// A bare LF after the first word, more behind it: gunicorn
			// before 22 read the request line to CR LF and split it on any
			// whitespace, so "GET\n/ HTTP/1.1" was a request routed by its
			// Host (a hunt, 2026-12-02). A word alone on an LF line (a
			// line protocol's) passes; sent in two pieces, the first one
			// ending at the LF, the request is not seen (SECURITY.md).
			return false, httpInTunnel()
		case c == '\n':
			return false, nil
		case c == '\r' && i+1 == len(b):
			return true, nil // a line end, or a blank before a target
		case c == '\r' && b[i+1] == '\n':
			return false, nil
		case isBlank(c):
			return false, httpInTunnel()
		}
		return false, nil
	}
	return true, nil
}

func httpInTunnel() *tunnelRefusal {
	return &tunnelRefusal{RuleTunnelHTTP, ReasonHTTPInTunnel,
		"the tunnel's first bytes are an HTTP request: send plain HTTP in absolute form (http://host/...), where its Host is decided"}
}

// holdsHTTPVersion reports whether line holds "HTTP/" in any case.
func holdsHTTPVersion(line []byte) bool {
	return bytes.Contains(bytes.ToUpper(line), []byte("HTTP/"))
}

// isBlank reports whether c separates a request line's words to some
// server: RFC 9112's space and tab, and what Python's str.split() takes
// for whitespace in the Latin-1 text http.server decodes a request line
// to (BaseHTTPRequestHandler, under Werkzeug's and Django's development
// servers): \v, \f, \r, \n, the information separators 0x1c to 0x1f,
// NEL (0x85) and NO-BREAK SPACE (0xa0).
func isBlank(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0:
		return true
	}
	return false
}

// isControl reports whether c is a C0 control byte or DEL: with the
// space, what Netty's HTTP decoder (under Reactor Netty, Spring Cloud
// Gateway, Vert.x, Zuul 2) skips before a request line (Java's
// isISOControl and isWhitespace of a signed byte), so "\x00" and then a
// request is that request to it.
func isControl(c byte) bool { return c < 0x20 || c == 0x7f }

// isTokenChar is RFC 9110's tchar.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c != 0 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

// tunnelClock is what a tunnel's two copies share.
type tunnelClock struct {
	idle time.Duration
	last atomic.Int64 // when a byte last moved either way (UnixNano)
	// spoke: the upstream sent a byte, set before the byte goes to the
	// client, so a client answering it finds it set.
	spoke atomic.Bool
}

// read reads src into b, waiting as long as either way of the tunnel
// moved within idle.
func (clk *tunnelClock) read(src net.Conn, b []byte) (int, error) {
	for {
		next := time.Unix(0, clk.last.Load()).Add(clk.idle)
		src.SetReadDeadline(next)
		n, err := src.Read(b)
		if n > 0 {
			clk.last.Store(time.Now().UnixNano())
			return n, err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Until(time.Unix(0, clk.last.Load()).Add(clk.idle)) > 0 {
			continue // the other way moved
		}
		return n, err
	}
}

// readFirst reads the client's first message, starting with early (bytes
// that came behind the CONNECT), until checkFirst decides it. It answers
// the bytes read and not yet passed on, to go on unchanged, or a
// refusal, or the read's error (io.EOF: the client closed its side with
// nothing left to decide).
//
// Control bytes and blanks alone (onlySkipped) decide nothing, since an
// HTTP front-end skips them before a request line; but a client-first
// protocol may send just such a message and wait for the answer (a
// SOCKS5 greeting, a one-byte echo). So they are passed on at once, by
// pass, and what follows is still decided with them, as one first
// message: an HTTP server has read nothing it acts on, and the other
// protocol gets its answer (and once the upstream spoke, anything
// passes).
func readFirst(client net.Conn, early []byte, h Host, clk *tunnelClock, allowECH bool, pass func([]byte) error) ([]byte, *tunnelRefusal, error) {
	buf := make([]byte, len(early), max(len(early), 4<<10))
	copy(buf, early)
	sent := 0        // buf[:sent] has been passed on
	var by time.Time // once a message began, it must be whole by then
	for {
		var err error
		if len(buf) == 0 {
			var n int
			n, err = clk.read(client, buf[:cap(buf)])
			buf = buf[:n]
		} else {
			if more, f := checkFirst(buf, h, clk.spoke.Load(), allowECH); !more {
				return buf[sent:], f, nil
			}
			if len(buf) >= maxClientHello {
				return nil, &tunnelRefusal{firstRule(buf), ReasonFirstUnended,
					fmt.Sprintf("the first message passes %d bytes undecided", maxClientHello)}, nil
			}
			if sent < len(buf) && onlySkipped(buf) {
				if err := pass(buf[sent:]); err != nil {
					return nil, nil, err
				}
				sent = len(buf)
			}
			if by.IsZero() {
				by = time.Now().Add(min(clk.idle, firstMessageTimeout))
			}
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, min(cap(buf), maxClientHello-len(buf)))
			}
			client.SetReadDeadline(by)
			var n int
			n, err = client.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if n > 0 {
				clk.last.Store(time.Now().UnixNano())
			}
		}
		if err == nil {
			continue
		}
		if len(buf) == 0 {
			return nil, nil, err
		}
		if more, f := checkFirst(buf, h, clk.spoke.Load(), allowECH); !more {
			return buf[sent:], f, nil
		}
		if err == io.EOF && sent == len(buf) {
			return nil, nil, err // all passed on, and nothing can follow
		}
		// A message cut short is refused, not passed as opaque: a front-end
		// would read it whole once the rest came by another way (a
		// pause, a half-close).
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, &tunnelRefusal{firstRule(buf), ReasonFirstUnended,
				fmt.Sprintf("the first message did not come whole within %s", min(clk.idle, firstMessageTimeout))}, nil
		case err == io.EOF:
			return nil, &tunnelRefusal{firstRule(buf), ReasonFirstUnended, "the client closed its side inside its first message"}, nil
		}
		return nil, nil, err
	}
}

// onlySkipped reports whether b, an undecided first message, is control
// bytes and blanks alone, not the start of a TLS record or of a PROXY
// protocol v2 header: bytes an HTTP server skips before a request line.
func onlySkipped(b []byte) bool {
	if isRecordType(b[0]) || bytes.HasPrefix(proxyV2Signature, b[:min(len(b), len(proxyV2Signature))]) {
		return false
	}
	for _, c := range b {
		if !isBlank(c) && !isControl(c) {
			return false
		}
	}
	return true
}

// firstRule is the rule that refuses an unfinished first message b.
func firstRule(b []byte) string {
	if len(b) > 0 && (isRecordType(b[0]) || b[0]&0x80 != 0) {
		return RuleTunnelSNI
	}
	return RuleTunnelHTTP
}

// relayFirst passes the upstream's first bytes to the client, noting
// that the upstream spoke; false when that way of the tunnel is done.
func relayFirst(client, up net.Conn, clk *tunnelClock, abort func()) bool {
	// Small: a tunnel whose server waits for the client (any TLS) holds
	// it while it waits.
	buf := make([]byte, 4<<10)
	n, err := clk.read(up, buf)
	if n > 0 {
		clk.spoke.Store(true)
		client.SetWriteDeadline(time.Now().Add(clk.idle))
		if _, werr := client.Write(buf[:n]); werr != nil {
			abort()
			return false
		}
	}
	if err == nil {
		return true
	}
	if err == io.EOF {
		if cw, ok := client.(halfCloser); ok && cw.CloseWrite() == nil {
			return false
		}
	}
	abort()
	return false
}
