// Package rpc is what every component's answer is made of: a Decision
// {allowed, reason, rule} with a typed Reason, so logs, the register and
// the site count denials without parsing prose (DESIGN.md §5).
//
// # Limitations
//
//   - The transport (mutual TLS, one request/response protocol for every
//     component) is later work; this package holds the decision only.
package rpc
