package proxy

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// TLS record and handshake values the tunnel check reads (RFC 8446).
const (
	// Record content types run from change_cipher_spec (20) through
	// alert, handshake and application_data to heartbeat (24).
	recordTypeFirst    = 20
	recordHandshake    = 22
	recordTypeLast     = 24
	recordHeaderLen    = 5
	maxRecordPayload   = 1 << 14 // a TLSPlaintext fragment's limit
	handshakeHeaderLen = 4
	typeClientHello    = 1

	extServerName = 0x0000
	// extECH is encrypted_client_hello: its outer server_name is a cover
	// name, and the one the front-end routes by is encrypted inside.
	extECH = 0xfe0d

	sniHostName = 0 // the only NameType RFC 6066 defines
)

// maxClientHello bounds the bytes the tunnel check holds for one
// ClientHello, record headers included: real ones are a few hundred
// bytes (a few KiB with post-quantum key shares).
const maxClientHello = 64 << 10

var errNeedMore = errors.New("clienthello: more bytes needed")

// clientHelloMessage collects the first handshake message from TLS
// records at the start of b, which may span several records. It answers
// the message (header included) and how many bytes of b its records
// took, errNeedMore when b stops before the message ends, or an error
// saying what is wrong with the records.
func clientHelloMessage(b []byte) (msg []byte, used int, err error) {
	for {
		if len(msg) >= handshakeHeaderLen {
			n := handshakeHeaderLen + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
			if msg[0] != typeClientHello {
				return nil, 0, fmt.Errorf("the first handshake message is type %d, not a ClientHello", msg[0])
			}
			if n > maxClientHello {
				return nil, 0, fmt.Errorf("the ClientHello claims %d bytes, over %d", n, maxClientHello)
			}
			if len(msg) == n {
				return msg, used, nil
			}
			if len(msg) > n {
				// Another handshake message shares the record: a client
				// sends nothing after its hello before the server answers.
				return nil, 0, errors.New("a record holds more than the ClientHello")
			}
		}
		if used >= maxClientHello {
			return nil, 0, fmt.Errorf("the ClientHello's records pass %d bytes", maxClientHello)
		}
		rest := b[used:]
		if len(rest) < recordHeaderLen {
			return nil, 0, errNeedMore
		}
		if rest[0] != recordHandshake {
			return nil, 0, fmt.Errorf("a record of type %d comes inside the ClientHello", rest[0])
		}
		if rest[1] != 3 {
			return nil, 0, fmt.Errorf("a record's version is %d.%d, not 3.x", rest[1], rest[2])
		}
		n := int(rest[3])<<8 | int(rest[4])
		if n == 0 || n > maxRecordPayload {
			return nil, 0, fmt.Errorf("a handshake record's length is %d (1 to %d)", n, maxRecordPayload)
		}
		if len(rest) < recordHeaderLen+n {
			return nil, 0, errNeedMore
		}
		msg = append(msg, rest[recordHeaderLen:recordHeaderLen+n]...)
		used += recordHeaderLen + n
	}
}

// clientHello is what the tunnel check needs of a ClientHello.
type clientHello struct {
	serverNames []string // host_name entries of server_name, as sent
	hasSNI      bool     // the server_name extension is present
	hasECH      bool     // encrypted_client_hello is present
}

// parseClientHello reads a ClientHello handshake message (header
// included) strictly: every length must hold exactly what it frames, no
// extension may come twice, and server_name must be a list of host_name
// entries only.
func parseClientHello(msg []byte) (*clientHello, error) {
	s := cryptobyte.String(msg)
	var typ uint8
	var body cryptobyte.String
	if !s.ReadUint8(&typ) || typ != typeClientHello || !s.ReadUint24LengthPrefixed(&body) || !s.Empty() {
		return nil, errors.New("not one ClientHello message")
	}
	var version uint16
	var sessionID, suites, compression cryptobyte.String
	if !body.ReadUint16(&version) || !body.Skip(32) || // legacy_version, random
		!body.ReadUint8LengthPrefixed(&sessionID) || len(sessionID) > 32 ||
		!body.ReadUint16LengthPrefixed(&suites) || len(suites) == 0 || len(suites)%2 != 0 ||
		!body.ReadUint8LengthPrefixed(&compression) || len(compression) == 0 {
		return nil, errors.New("the ClientHello's fixed fields are malformed")
	}
	ch := &clientHello{}
	if body.Empty() {
		return ch, nil // no extensions at all (TLS 1.2 allows it): no server_name
	}
	var exts cryptobyte.String
	if !body.ReadUint16LengthPrefixed(&exts) || !body.Empty() {
		return nil, errors.New("the ClientHello's extensions are malformed or followed by other bytes")
	}
	seen := map[uint16]bool{}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return nil, errors.New("an extension is malformed")
		}
		if seen[typ] {
			return nil, fmt.Errorf("extension %#04x comes twice", typ)
		}
		seen[typ] = true
		switch typ {
		case extECH:
			ch.hasECH = true
		case extServerName:
			ch.hasSNI = true
			names, err := parseServerNames(data)
			if err != nil {
				return nil, err
			}
			ch.serverNames = names
		}
	}
	return ch, nil
}

// parseServerNames reads server_name's ServerNameList (RFC 6066 §3).
func parseServerNames(data cryptobyte.String) ([]string, error) {
	var list cryptobyte.String
	if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() || list.Empty() {
		return nil, errors.New("server_name is malformed")
	}
	var names []string
	for !list.Empty() {
		var typ uint8
		var name cryptobyte.String
		if !list.ReadUint8(&typ) {
			return nil, errors.New("server_name is malformed")
		}
		if typ != sniHostName {
			// An unknown type's framing is not defined; a server may
			// read it any way.
			return nil, fmt.Errorf("server_name has an entry of type %d, not host_name", typ)
		}
		if !list.ReadUint16LengthPrefixed(&name) || name.Empty() {
			return nil, errors.New("server_name has a malformed host_name")
		}
		names = append(names, string(name))
	}
	return names, nil
}
