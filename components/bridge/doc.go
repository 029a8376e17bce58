// Package bridge is how the agent reaches the components without ever
// opening a Unix socket (DESIGN.md §5): the launcher opens TCP listeners
// on 127.0.0.1 inside the agent's network namespace (ListenIn, with
// vishvananda/netns on a locked thread) and joins each connection to the
// component's Unix socket (Splice). The bridge carries bytes only; the
// agent and the component speak mutual TLS through it, so the bridge
// holds no key and decides nothing.
//
// # Limitations
//
//   - Listeners are IPv4 loopback only.
//   - Splice bounds concurrent connections, not their rate or lifetime: a
//     component's own timeouts end idle ones.
package bridge
