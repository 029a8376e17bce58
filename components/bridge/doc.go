// Package bridge is how the agent reaches the components without ever
// opening a Unix socket (DESIGN.md §5): the launcher opens TCP listeners
// on 127.0.0.1 inside the agent's network namespace (ListenIn, with
// vishvananda/netns on a locked thread) and hands each listening socket
// to its component, which accepts the agent's connections itself.
//
// Deviation from DESIGN.md, which has the launcher splice each connection
// to the component's Unix socket: a socket keeps the namespace it was
// made in, so the component can accept on it directly. The agent's reach
// is the same (those listeners, nothing else), one relay hop is gone (a
// 1 KiB round trip: 76 µs spliced, 57 µs handed over; bench/roundtrip),
// and the launcher, which runs as root, never carries the agent's bytes.
// The component's Landlock refuses bind and connect, not accept; its
// seccomp refuses socket(), not accept4().
//
// # Limitations
//
//   - Listeners are IPv4 loopback only.
//   - A listener has no SO_PEERCRED: mutual TLS alone decides who is
//     served on it (the agent's namespace holds only the agent).
package bridge
