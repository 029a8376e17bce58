// Package rpc is the one request/response protocol every component
// speaks (DESIGN.md §5): HTTP/1.1 with JSON bodies over mutual TLS (the
// pki package's configuration: TLS 1.3, session certificates, the call
// table checked on both ends). A request is POST /v1/OP with a JSON body;
// every answer is a Response carrying a Decision {allowed, reason, rule}
// with a typed Reason, so logs, the register and the site count denials
// without parsing prose, and a result only when allowed.
//
// The server learns the caller's role from its certificate, never from
// the request, and logs every request with the caller, the operation and
// the decision — never a body or a result, which may hold file contents
// or secrets. Malformed requests (unknown operation, wrong method, not
// JSON, larger than MaxBody) are answered with a bad-request decision.
//
// Why HTTP/1.1 and not a bespoke framing: net/http's server already bounds
// headers and bodies, times out slow clients and survives malformed input,
// and a person can read a captured exchange. HTTP/2 adds nothing for one
// small request at a time.
//
// # Limitations
//
//   - A handshake refused by crypto/tls itself (not TLS 1.3, not TLS at all)
//     is logged by net/http's error log without a caller identity; every
//     refusal by the session check is logged with the identity claimed.
//   - Requests are bounded in size and time, not in rate: a caller may ask
//     as fast as it likes (each answer is cheap and logged).
package rpc
