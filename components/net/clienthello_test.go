package proxy

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
)

// thExt is one extension of a ClientHello the tests build.
type thExt struct {
	typ  uint16
	data []byte
}

// thSNI is a server_name extension of host_name entries.
func thSNI(names ...string) thExt {
	return thSNITyped(0, names...)
}

func thSNITyped(typ uint8, names ...string) thExt {
	var b cryptobyte.Builder
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
		for _, n := range names {
			b.AddUint8(typ)
			b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(n)) })
		}
	})
	return thExt{extServerName, b.BytesOrPanic()}
}

// thHello is a ClientHello handshake message (header included) with exts
// (none at all when exts is nil).
func thHello(exts []thExt) []byte {
	var b cryptobyte.Builder
	b.AddUint8(typeClientHello)
	b.AddUint24LengthPrefixed(func(b *cryptobyte.Builder) {
		b.AddUint16(tls.VersionTLS12)
		b.AddBytes(make([]byte, 32))
		b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(make([]byte, 32)) })
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint16(tls.TLS_AES_128_GCM_SHA256) })
		b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddUint8(0) })
		if exts != nil {
			b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
				for _, e := range exts {
					b.AddUint16(e.typ)
					b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(e.data) })
				}
			})
		}
	})
	return b.BytesOrPanic()
}

// thRecords frames a handshake message into TLS records whose payloads
// are sizes long (the last takes the rest).
func thRecords(msg []byte, sizes ...int) []byte {
	var out []byte
	for len(msg) > 0 {
		n := len(msg)
		if len(sizes) > 0 && sizes[0] < n {
			n, sizes = sizes[0], sizes[1:]
		}
		out = append(out, recordHandshake, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

// thGoHello is the first record crypto/tls's client sends for serverName.
func thGoHello(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true}).Handshake()
		a.Close()
	}()
	b.SetDeadline(time.Now().Add(5 * time.Second))
	head := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(b, head); err != nil {
		t.Fatal(err)
	}
	rec := make([]byte, int(head[3])<<8|int(head[4]))
	if _, err := io.ReadFull(b, rec); err != nil {
		t.Fatal(err)
	}
	return append(head, rec...)
}

func TestCheckFirst(t *testing.T) {
	front := Host{Name: "front.test"}
	ip := Host{Addr: netip.MustParseAddr("192.0.2.1")}
	grease := thExt{0x0a0a, nil}
	rec := func(exts ...thExt) []byte { return thRecords(thHello(exts)) }
	whole := rec(thSNI("front.test"))
	badRecord := thRecords(thHello([]thExt{thSNI("front.test")}), 20)
	badRecord[recordHeaderLen+20] = 23 // the second record is application data

	for _, c := range []struct {
		name  string
		b     []byte
		h     Host
		spoke bool
		more  bool
		rule  string // "" passes
		why   string
	}{
		{"go's hello, its name", thGoHello(t, "front.test"), front, false, false, "", ""},
		{"go's hello, another name", thGoHello(t, "evil.test"), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"built, its name", whole, front, false, false, "", ""},
		{"case and trailing dot", rec(thSNI("FRONT.Test.")), front, false, false, "", ""},
		{"another name", rec(thSNI("evil.test")), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"a subdomain", rec(thSNI("x.front.test")), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"two names", rec(thSNI("front.test", "evil.test")), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"no server_name", rec(grease), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"no extensions", thRecords(thHello(nil)), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"unicode spelling", rec(thSNI("ｆront.test")), front, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"an IP in server_name", rec(thSNI("192.0.2.1")), ip, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"ip host, no server_name", rec(grease), ip, false, false, "", ""},
		{"ip host, a name", rec(thSNI("front.test")), ip, false, false, RuleTunnelSNI, ReasonSNIMismatch},
		{"ECH", rec(thSNI("front.test"), thExt{extECH, []byte{0}}), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"duplicate extension", rec(grease, thSNI("front.test"), grease), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"duplicate server_name", rec(thSNI("front.test"), thSNI("evil.test")), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"name type 1", rec(thSNITyped(1, "front.test")), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"empty name", rec(thSNI("")), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"server_name with trailing bytes", rec(thExt{extServerName, append(thSNI("front.test").data, 0)}), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"not a hello", thRecords(append([]byte{2}, thHello(nil)[1:]...)), front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"other record inside", badRecord, front, false, false, RuleTunnelSNI, ReasonBadClientHello},
		{"split across records", thRecords(thHello([]thExt{thSNI("front.test")}), 1, 3, 10), front, false, false, "", ""},
		{"a record header only", whole[:recordHeaderLen], front, false, true, "", ""},
		{"cut short", whole[:len(whole)-1], front, false, true, "", ""},
		{"first of split records", thRecords(thHello([]thExt{thSNI("front.test")}), 10)[:15], front, false, true, "", ""},
		{"claims over 64 KiB", thRecords([]byte{1, 1, 0, 1}), front, false, false, RuleTunnelSNI, ReasonBadClientHello},

		{"GET", []byte("GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"any token", []byte("X-Y.z~ /"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"blank lines first", []byte("\r\n\r\n GET / HTTP/1.1\r\n"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"h2 preface", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"a word so far", []byte("GET"), front, false, true, "", ""},
		{"blanks so far", []byte("\r\n"), front, false, true, "", ""},
		{"word and line end", []byte("ping\n"), front, false, false, "", ""},
		// Control bytes alone say nothing yet: Netty skips them before a
		// request line (a red-team pass, 2026-12-03).
		{"control bytes so far", []byte{0, 1, 2, 3}, front, false, true, "", ""},
		{"binary", []byte{0, 1, 2, 3, 0xc0}, front, false, false, "", ""},
		{"leading space then token", []byte(" ping\n"), front, false, false, "", ""},
		{"ssh ident", []byte("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"), front, false, false, "", ""},
		{"ssh ident so far", []byte("SSH-2.0-OpenSSH_9.2p1 Debian"), front, false, true, "", ""},
		{"ssh-looking request", []byte("SSH-2.0-x / HTTP/1.1\r\nHost: evil.test\r\n"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"ssh ident too long", append(append([]byte("SSH-2.0-x "), bytes.Repeat([]byte("a"), 300)...), '\n'), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"answer to a server that spoke", []byte("EHLO client.test\r\n"), front, true, false, "", ""},
		{"the same unprompted", []byte("EHLO client.test\r\n"), front, false, false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		// Neither a TLS nor an HTTP front-end speaks first: what answers
		// one that did is not fronting, and a MySQL client's answer may
		// start with a record type's byte (its length).
		{"anything after the server spoke", rec(thSNI("evil.test")), front, true, false, "", ""},
		{"a length byte of 22 after the server spoke", []byte{22, 0, 0, 1, 0x85}, front, true, false, "", ""},
		{"the same unprompted", []byte{22, 0, 0, 1, 0x85}, front, false, false, RuleTunnelSNI, ReasonBadClientHello},
	} {
		t.Run(c.name, func(t *testing.T) {
			more, f := checkFirst(c.b, c.h, c.spoke, false)
			wantFirst(t, more, f, c.more, c.rule, c.why)
		})
	}
}

// wantFirst asserts checkFirst's answer: more, or a pass (rule ""), or a
// refusal by rule and reason.
func wantFirst(t *testing.T, more bool, f *tunnelRefusal, wantMore bool, rule, why string) {
	t.Helper()
	if more != wantMore {
		t.Fatalf("more = %v, want %v (refusal %+v)", more, wantMore, f)
	}
	switch {
	case rule == "" && f != nil:
		t.Errorf("refused: %+v", *f)
	case rule != "" && f == nil:
		t.Errorf("passed, want %s/%s", rule, why)
	case f != nil && (f.rule != rule || f.reason != why):
		t.Errorf("refused %s/%s (%s), want %s/%s", f.rule, f.reason, f.detail, rule, why)
	}
}

// firstCase is one first message to a tunnel to front.test, no server
// having spoken.
type firstCase struct {
	name      string
	b         []byte
	more      bool
	rule, why string // "" passes
}

func runFirstCases(t *testing.T, allowECH bool, cases []firstCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			more, f := checkFirst(c.b, Host{Name: "front.test"}, false, allowECH)
			wantFirst(t, more, f, c.more, c.rule, c.why)
		})
	}
}

// cat joins byte slices into a new one.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// A record of another type before the ClientHello: crypto/tls's server
// drops a warning alert there and routes by the hello behind it, so any
// first record but a handshake is refused, the hello's name aside. An
// SSLv2-style hello (no server_name) is refused by its exact shape.
func TestCheckFirstRecordsBeforeHello(t *testing.T) {
	evil, front := thGoHello(t, "evil.test"), thGoHello(t, "front.test")
	alert := []byte{21, 3, 1, 0, 2, 1, 100} // warning, user_canceled
	split := thRecords(thHello([]thExt{thSNI("front.test")}), 20)
	alertInside := cat(split[:recordHeaderLen+20], alert, split[recordHeaderLen+20:])
	// SSLv2 CLIENT-HELLO: length, type 1, version 3.1, then spec, session
	// id and challenge lengths (3, 0, 16) and their bytes.
	v2 := cat([]byte{0x80, 28, 1, 3, 1, 0, 3, 0, 0, 0, 16, 0, 0, 0x2f}, make([]byte, 16))
	runFirstCases(t, false, []firstCase{
		{"warning alert, then another name", cat(alert, evil), false, RuleTunnelSNI, ReasonBadClientHello},
		{"warning alert, then its name", cat(alert, front), false, RuleTunnelSNI, ReasonBadClientHello},
		{"change_cipher_spec first", cat([]byte{20, 3, 1, 0, 1, 1}, evil), false, RuleTunnelSNI, ReasonBadClientHello},
		{"application_data first", cat([]byte{23, 3, 3, 0, 1, 0}, evil), false, RuleTunnelSNI, ReasonBadClientHello},
		{"heartbeat first", cat([]byte{24, 3, 3, 0, 3, 1, 0, 0}, evil), false, RuleTunnelSNI, ReasonBadClientHello},
		{"an alert's first byte alone", []byte{21}, false, RuleTunnelSNI, ReasonBadClientHello},
		{"an alert between the hello's records", alertInside, false, RuleTunnelSNI, ReasonBadClientHello},
		{"SSLv2-style hello", v2, false, RuleTunnelSNI, ReasonBadClientHello},
		{"SSLv2 header so far", v2[:2], true, "", ""},

		{"go's hello, its name (control)", front, false, "", ""},
		{"byte 19 first", cat([]byte{19}, alert[1:], evil), false, "", ""},
		{"byte 25 first", cat([]byte{25}, alert[1:], evil), false, "", ""},
		{"high bit, not a hello", []byte{0x80, 28, 2, 3, 1, 0}, false, "", ""},
		{"high bit, another shape", []byte{0xff, 0, 0, 1, 0xff}, false, "", ""},
	})
}

// Python's http.server (under Werkzeug's and Django's development
// servers) splits a request line on any whitespace of its Latin-1 text;
// a line with a version is a request whatever its method looks like.
func TestCheckFirstHTTPBlanks(t *testing.T) {
	host := "\r\nHost: evil.test\r\n\r\n"
	refused := func(line string) firstCase {
		return firstCase{fmt.Sprintf("%q", line), []byte(line + host), false, RuleTunnelHTTP, ReasonHTTPInTunnel}
	}
	runFirstCases(t, false, []firstCase{
		refused("GET\t/x HTTP/1.1"),
		refused("\vGET /x HTTP/1.1"),
		refused("\fGET /x HTTP/1.1"),
		refused("GET\v/x\vHTTP/1.1"),
		refused("\x1fGET /x HTTP/1.1"),
		refused("\x1cGET\x1d/x\x1eHTTP/1.1"),
		refused("\xa0GET /x HTTP/1.1"),
		refused("\x85GET\x85/x HTTP/1.1"),
		refused("GET\r/x HTTP/1.1"),
		refused("\x00GET /x HTTP/1.1"),
		refused("G(ET /x hTtP/1.1"),
		{"token and a separator, in pieces", []byte("GET\x0b"), false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"token and CR so far", []byte("GET\r"), true, "", ""},

		{"a word alone on its line", []byte("PING\r\n"), false, "", ""},
		// A bare LF after the first word: gunicorn before 22 read the line
		// to CR LF and split it on whitespace (a hunt, 2026-12-02).
		refused("GET\n/ HTTP/1.1"),
		refused("POST\n/x HTTP/1.1"),
		{"a word alone, LF", []byte("ping\n"), false, "", ""},
		{"a PROXY v2 header, then a request", []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\x7f\x00\x00\x09\x7f\x00\x00\x01\x04\xd2\x01\xbbGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"), false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"a PROXY v2 header, in pieces", []byte("\r\n\r\n\x00\r\nQU"), true, "", ""},
		{"ssh ident", []byte("SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5\r\n"), false, "", ""},
		{"ssh ident, in pieces", []byte("SSH-2.0-OpenSSH_9.6p1 Ubu"), true, "", ""},
		// A bare LF in an ssh-looking line: the method "SSH-2.0-X" to a
		// server reading its line to CR LF (a re-test, 2026-12-02).
		refused("SSH-2.0-X\n/ HTTP/1.1"),
		refused("SSH-\n/admin HTTP/1.1"),
		{"binary", []byte{0, 1, 2, 3, 0xc0, 0xa0, 0x20, 0x85}, false, "", ""},
		// Netty's HTTP decoder skips every byte from 0x00 to 0x20, and
		// 0x7f, before a request line: "\x00" passed at once, and a
		// request sent behind it in a later segment went unread to a
		// Netty front-end, which routed it by its Host (a red-team pass,
		// 2026-12-03). Such bytes are skipped here too, and decide nothing.
		{"NUL so far", []byte("\x00"), true, "", ""},
		{"controls and DEL so far", []byte("\x01\x08\x0e\x1b\x7f\x00"), true, "", ""},
		refused("\x7f\x01GET /x HTTP/1.1"),
		{"controls, then a word and a blank", []byte("\x00\x05GET /x"), false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"controls, then binary", []byte("\x00\x05\xc0GET /x"), false, "", ""},
		{"binary, a version on its second line", []byte("\x00\x01\nGET / HTTP/1.1\r\n"), false, RuleTunnelHTTP, ReasonHTTPInTunnel},
		{"binary, then a word on its own line", []byte("\x00\x01\nPING\r\n"), false, "", ""},
		{"token then NUL", []byte("GET\x00/x\r\n"), false, "", ""},
	})
}

// Chromium sends encrypted_client_hello in every TLS 1.3 hello (a GREASE
// decoy when it has no ECH config): refused by default, naming the
// switch; with network.allow_ech it passes, the outer server_name still
// held to the CONNECT host.
func TestCheckFirstECH(t *testing.T) {
	chromium, err := os.ReadFile("testdata/chromium-hello.bin") // Chromium 156's first record, to host "vm"
	if err != nil {
		t.Fatal(err)
	}
	vm, other := Host{Name: "vm"}, Host{Name: "front.test"}
	echHello := func(names ...string) []byte {
		return thRecords(thHello([]thExt{thSNI(names...), {extECH, []byte{0, 0, 1, 0, 1, 7}}}))
	}
	for _, c := range []struct {
		name      string
		b         []byte
		h         Host
		allowECH  bool
		rule, why string
	}{
		{"chromium, default", chromium, vm, false, RuleTunnelSNI, ReasonBadClientHello},
		{"chromium, allow_ech", chromium, vm, true, "", ""},
		{"chromium to another host, allow_ech", chromium, other, true, RuleTunnelSNI, ReasonSNIMismatch},
		{"ECH naming the host, default", echHello("front.test"), other, false, RuleTunnelSNI, ReasonBadClientHello},
		{"ECH naming the host, allow_ech", echHello("front.test"), other, true, "", ""},
		{"ECH naming another host, allow_ech", echHello("evil.test"), other, true, RuleTunnelSNI, ReasonSNIMismatch},
		{"ECH naming two hosts, allow_ech", echHello("front.test", "evil.test"), other, true, RuleTunnelSNI, ReasonSNIMismatch},
		{"go's hello, default", thGoHello(t, "front.test"), other, false, "", ""},
		{"go's hello, allow_ech", thGoHello(t, "front.test"), other, true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			more, f := checkFirst(c.b, c.h, false, c.allowECH)
			wantFirst(t, more, f, false, c.rule, c.why)
			if f != nil && c.why == ReasonBadClientHello && !strings.Contains(f.detail, "network.allow_ech") {
				t.Errorf("the refusal %q does not name network.allow_ech", f.detail)
			}
		})
	}
}

// FuzzClientHello: any bytes are framed and parsed without a panic, a
// message is never longer than the bytes its records took, and a
// parsed hello's names are within the message.
func FuzzClientHello(f *testing.F) {
	f.Add(thRecords(thHello([]thExt{thSNI("front.test")})))
	f.Add(thRecords(thHello([]thExt{thSNI("front.test", "x")}), 3, 7))
	f.Add(thRecords(thHello([]thExt{thSNITyped(1, "x"), {extECH, nil}})))
	f.Add(thRecords(thHello(nil)))
	f.Add(thGoHello(f, "front.test"))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Add([]byte("\x0bGET\t/ HTTP/1.1\r\n"))
	f.Add(append([]byte{21, 3, 1, 0, 2, 1, 100}, thRecords(thHello([]thExt{thSNI("front.test")}))...))
	f.Add([]byte{0x80, 28, 1, 3, 1, 0, 3, 0, 0, 0, 16})
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, used, err := clientHelloMessage(b)
		if err == nil {
			if used > len(b) || len(msg) > used || len(msg) > maxClientHello {
				t.Fatalf("message of %d bytes from %d used of %d", len(msg), used, len(b))
			}
			if ch, err := parseClientHello(msg); err == nil {
				for _, n := range ch.serverNames {
					if n == "" || !bytes.Contains(msg, []byte(n)) {
						t.Fatalf("name %q is not in the message", n)
					}
				}
			}
		}
		for _, h := range []Host{{Name: "front.test"}, {Addr: netip.MustParseAddr("192.0.2.1")}} {
			for _, allowECH := range []bool{false, true} {
				if more, f := checkFirst(b, h, false, allowECH); more && f != nil {
					t.Fatalf("more and a refusal: %+v", *f)
				}
			}
			if more, f := checkFirst(b, h, true, false); more && f != nil {
				t.Fatalf("more and a refusal: %+v", *f)
			}
		}
	})
}
