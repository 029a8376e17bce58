// Package rpc is the one request/response protocol every component
// speaks (DESIGN.md §5): length-prefixed frames over mutual TLS (the pki
// package's configuration: TLS 1.3, session certificates, the call table
// checked on both ends). A request names an operation and carries JSON
// arguments and, beside them, raw data (file contents travel as bytes,
// not base64); every answer carries a Decision {allowed, reason, rule}
// with a typed Reason, so logs, the register and the site count denials
// without parsing prose, and a result and data only when allowed. The
// frame layout is in frame.go.
//
// The server learns the caller's role from its certificate once per
// connection, never from a request, and logs every request with the
// caller, the operation and the decision — never arguments, data or a
// result, which may hold file contents or secrets. Malformed requests
// (unknown operation, bad name, arguments not JSON, lengths that do not
// add up) are answered with a bad-request decision; a frame over the
// limit is answered and its connection closed, since the stream cannot be
// read past it. Handshakes, idle connections, slow frames and slow
// readers all have deadlines. A frame's buffer grows with the bytes that
// arrive, not with its length field, and an accept refused for want of
// descriptors or memory is waited out (with a growing pause), not the
// end of Serve. A failed handshake is logged as refused,
// with what the caller claimed; a connection that closes before sending
// a byte asked nothing and is logged as closed at Info, which the
// session's summary does not count among refused connections.
//
// Deviation from DESIGN.md, which suggests HTTP with JSON bodies: HTTP/1.1
// cost a 1 KiB round trip 120 µs over a Unix socket (header parsing, body
// buffering, base64 and JSON validation of the payload); frames cost 40
// µs (bench/roundtrip). A frame reader is a few bounded reads, simpler to
// review than an HTTP server's surface, and a captured exchange is still
// JSON beside length fields.
//
// # Limitations
//
//   - One request at a time per connection (a client keeps up to four
//     connections): no pipelining.
//   - Requests are bounded in size and time, not in rate: a caller may ask
//     as fast as it likes (each answer is cheap and logged).
//   - A listener serves at most maxConns (64) connections at once; the
//     next waits in the kernel's backlog. A caller holding 64 connections
//     (each renewed within the idle timeout) keeps others on that
//     listener waiting: the agent can slow itself, not the component's
//     other listeners, and no longer exhaust the component's memory.
package rpc
