// Package gateway is `launcher serve`: MCP over streamable HTTP, each MCP
// session in a sandbox of its own, with exactly the authority its caller
// proved.
//
// DESIGN.md has no gateway; this is the design.
//
// A session is a child process that speaks MCP on its stdio: the
// launcher under a pinned policy with `launcher mcp` as its agent — a
// whole components-mode session, with its own uids, components and
// namespaces. The gateway holds an MCP client to it and, on the HTTP
// side, a server of its own (the go-sdk's streamable handler) whose tools
// are the child's, each call forwarded as it came. The gateway itself
// holds no authority over any session's files, commands or network: it
// has no credential of theirs and never touches a workspace except to
// make and remove a guest's.
//
// Who a request is comes from its Authorization header and nothing else:
//
//   - an owner token (Store: created by `launcher serve token add`, only
//     its sha256 kept) gets the pinned policy's own session, Safe mode;
//   - an owner token with the host.execute capability may ask for Full
//     access (header Pinfold-Mode: full): `launcher mcp --full-access` in
//     the policy's workspace, unconfined, as the workspace's owner with
//     that user's own primary group (from /etc/passwd, not the
//     workspace's group) and groups (never the gateway's) — the same
//     explicit escape as `launcher --full-access`, never reached by any
//     other path. A workspace of root's, or a primary group of root's,
//     is refused: a remote caller is never root;
//   - no token, or one that is not valid, is a guest: a policy derived
//     from the pinned one (guestPolicy) with a new empty workspace, HOME
//     in the sandbox's private /tmp, no secrets, no private-range
//     exceptions, memory at most 1 GiB (never the owner's "unlimited"),
//     at most 512 processes and 256 MiB for a Code Mode VM (whose
//     cgroup is beside the session's), whatever the owner's, the CPU
//     only at SCHED_IDLE, which nothing in the sandbox can leave, in
//     a cpu cgroup beneath the gateway's own that is idle to its
//     siblings where a v1 cpu hierarchy is mounted (idleTransport: without one,
//     the session's own autogroup, and each one a process in it makes
//     by setsid, competes with the host as an ordinary process; the
//     gateway's log says so once, at the first guest, with the reason),
//     and of the owner's read and exec paths only those in
//     the operating system's trees (/usr, /etc, /lib…) — an allowlist, so
//     that a home or project under any other name stays out. An invalid
//     token is also a failed attempt, counted against the socket peer's
//     address (an IPv6 peer's /64, all of 127.0.0.0/8 one); too many
//     get 429 for the next bad token. A valid token is served whatever
//     its address's failures (an address is shared: locking it out
//     would let any local user keep the owner out); a token is 256 random bits, so the limit bounds
//     the work and log lines failures make, not guessing. While the
//     store cannot be read, a token is answered 503: it is neither a
//     guest's nor a revoked one.
//
// Asking for Full access without the capability is refused (403); it is
// never turned into Safe mode, and a guest never runs outside a sandbox:
// if the sandbox cannot start, the request fails. Each session records
// the mode asked for and the mode in effect (always the same). When a
// session's sandbox stops, the session ends; nothing is retried.
//
// No one answers the sandbox's questions at a gateway: children have no
// terminal, so whatever the policy leaves to the person is refused.
//
// Sessions are bound to their caller: a request naming a session must
// come from the same principal — the same owner token (by its hash, so a
// name revoked and reused is someone else), or a guest — and session ids
// are 128 random bits that appear in no command line or path (a guest's
// directory has a name of its own). A session whose token is revoked,
// or no longer carries a capability its mode needs (host.execute, for
// full access: the store edited by hand), ends at its next request. Forwarded-for headers are never read.
// Cross-origin browser requests are refused, and so is any request
// whose Host, or Origin when it has one, does not name the gateway as
// it is served — the address the connection came to, a loopback name on
// loopback, its certificate's names, or Config.Hosts (--allow-host) —
// so that a page on a name pointed at the gateway's address cannot use
// it (DNS rebinding).
//
// Nor can a session read the gateway's own files — its TLS key, its
// token store, its session logs (Config.Private), and for an owner's
// session the sessions' directories, guests' workspaces among them —
// whatever their modes (an owner's sandbox is made while guests'
// workspaces are mounted, and its mount table names them):
// a guest's policy leaves out every path that holds one, and every
// session's launcher keeps them as it keeps its own policy and vault
// (PINFOLD_SELF_FILES: fs hides them, bash refuses a command that names
// them, and the agent's and every command's sandbox covers each that
// the policy's paths reach, so that no command line reads it). An
// owner's pinned policy is not changed. The token store is rewritten by
// rename on every change, and a rename undoes a mount on the file for a
// command still running; so where the policy reaches the store,
// `launcher serve` passes its directory too, which the sandboxes
// cover whole (an empty read-only tmpfs: a rename inside it does not
// show through), and refuses to start when that directory holds
// anything but the store, its lock and the launcher's other own files
// (the default vault). The store is not moved: one kept beside other
// files is refused with a hint to give it a directory of its own. The
// sessions' throwaway identities could not read the store anyway (it is
// root's and 0600); the cover is what keeps it out whatever its mode.
// Residual (serve warns at its start where the policy reaches it): the
// TLS key, the person's own file, is covered as a file, so a key
// replaced while a command runs (a renewal) is not covered for that
// command, nor is a hard link or another mount of any of them. The
// policy's copy in the state directory is written by rename only before
// the gateway starts a session, and holds nothing the owner's policy
// does not say already.
//
// A session cannot connect back to the gateway: sessions have no network
// but through net, which refuses loopback, private ranges and the host's
// own addresses (SSRF), and guests cannot carry unsafe_allow_private; and
// the gateway passes its listener to every session's launcher
// (PINFOLD_SELF_LISTENERS), whose net refuses it even when the owner's
// policy opens loopback for a local service.
//
// Bounds: MaxSessions live or starting (then 503 with Retry-After), of
// which guests get at most MaxGuests (half, rounded down: none when there
// is one place) and one address GuestsPerPeer (all of 127.0.0.0/8 one
// address, as an IPv6 /64 is), so anonymous callers
// cannot take the owners' places; a request without a
// session is checked (content type, Accept, at most 64 KiB, an
// initialize) before any sandbox starts; a body limit (1 MiB for a
// guest), at most 8 requests in flight per session (2 for a guest; then
// 429), which is what bounds the gateway's memory — so a JSON-RPC batch,
// many calls in one request, is refused (the SDK would still take one
// from a client that names an old protocol version), and so is an
// Mcp-Protocol-Version header the stateful handler does not serve (the
// SDK logged such a value whole); at most a number of connections at
// once, an eighth of them from one source other than loopback
// (LimitConnections: one more is answered 503 and closed, never served,
// so a flood of idle ones cannot take every descriptor, nor one remote
// client every place); header
// and read timeouts, an idle timeout per session, a start timeout per
// sandbox. A
// session ends within a second of its token being revoked or losing a
// capability its mode needs (the store is read again every second), with
// or without a further request.
// Logs: the gateway's own (JSON, stderr) and one JSON log per session in
// StateDir/logs, which the child's stderr also goes to, kept 30 days, at
// most 10,000 and 1 GiB together, the gateway's lines in each at most 8
// MiB (a line per tool call: a guest's calls would fill it without end).
// The lines of the gateway's own that any request can
// cause without a session (a bad token, full access refused, another
// caller's session, the SDK's refusals) are at most 200 at once and then
// 10 a second, the next one saying how many were dropped. Ending a session cancels its calls in flight first, so
// a DELETE or a shutdown does not wait for a long command, and cuts the
// writes still going to its clients, so that one that does not read
// cannot hold the session's end (a guest's tmpfs) open; Shutdown ends
// every session and waits for them.
//
// A full-access session's child runs in a cgroup of its own (the v2
// group for cgroup.kill, the v1 ones too on a hybrid host), and so does
// every process its commands start: when the session ends — DELETE,
// idle, revocation, shutdown — the group is killed and removed. Its
// commands' background jobs (cmd &, nohup, setsid) outlived it before,
// as the owner, a revoked token's included. Without a cgroup, full
// access is refused.
//
// Limits of this design: a Full-access command's own background
// processes outlive a gateway that is killed outright (SIGKILL) until
// its next start, which kills every group of a gateway that is gone
// (launcher.KillStaleCgroups; one whose pid is in use again is left).
// And full access is unconfined by definition: what its commands hand
// to another manager (cron, at, systemd --user, a login shell's start-up
// files) runs outside the group, and outlives the session.
// Local users of the gateway's host are outside its boundary. The guest
// workspaces are under a directory they can pass through (the sandbox's
// uid must), and a workspace's random name is no secret from them (the
// mount table, the child's command line); but a workspace itself is
// root's and 0700 on the host — the sandbox enters it through the
// launcher's idmapped mount, where it is the fs uid's — so they do not
// enter it (at 0711, its files were theirs to read).
// A guest's workspace is a tmpfs of its own, Config.GuestWorkspace bytes
// (64 MiB by default) and guestInodes files, unmounted when the session
// ends and, after a gateway was killed outright, by its next start; its
// backup store is at most 64 MiB. The launcher maps the workspace onto
// the fs uid with an idmapped mount, which tmpfs has since Linux 6.3:
// on an older kernel guests are refused (503) unless the operator gives
// up the limit (--guest-workspace unlimited: a directory under StateDir,
// which a guest can fill). Its pages are charged to the memory cgroup of
// the component or command that wrote them. Each
// session's component logs stay in /run/pinfold/ID (32 MiB per component
// at most) while it runs; once it is over, a later session removes them
// after 7 days or beyond 256 MiB or 1,000 finished sessions, oldest first
// (components/session), so guests cannot fill /run with them.
// And "never connects back" holds for the addresses the host knows: a
// public address that reaches the gateway through NAT or a load
// balancer is not known to net; give guests' policies no public egress
// (block_all) where that matters.
package gateway
