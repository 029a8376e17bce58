// Package mcpserver is `launcher mcp`: the session's components offered
// to any agent as Model Context Protocol tools, over stdio.
//
// The agent starts `launcher mcp` as one of its MCP servers, from inside
// its sandbox. The server holds no authority of its own: it is a client
// of the components (mutual TLS, the agent's credential, through the
// listeners in the agent's network namespace), exactly as the
// `launcher fs`, `launcher sh` and `launcher code` verbs are. So it runs
// only in a components-mode session; elsewhere it has nothing to broker
// and the command refuses to start rather than touch the host itself.
//
// Tools: read_file, write_file, list_dir and delete go to fs (a
// recursive delete through the person's confirmation and a backup);
// run_command and execute_code go to bash (the command policy; Code
// Mode); fetch goes through net's proxy and is offered only when the
// session has one. A call that needs the person blocks until they
// answer on the launcher's terminal. A denial is a tool error (isError)
// naming the reason, the rule that decided and a hint, so that the model
// reads it; a call that got no decision says so.
//
// What the SDK does not do and this package adds:
//   - Transport reads newline-delimited JSON-RPC itself so that a bad
//     line gets the JSON-RPC error the specification asks for (parse
//     error, invalid request, with id null when none can be read) and the
//     session goes on; the SDK's stdio transport ends the session at the
//     first bad line. Lines are bounded (MaxLine), and so are the JSON
//     values of one (MaxValues): the SDK decodes a call's arguments into
//     generic values before any limit of the server's applies.
//   - Every input schema carries the limits (maxLength, maxProperties,
//     minimum and maximum), so the SDK refuses an oversized argument as a
//     tool error before a handler runs; handlers check again.
//   - At most MaxInFlight calls run at once (the SDK starts a goroutine
//     per call); the rest wait for a place or their cancellation. With
//     maxPending (4 × MaxInFlight) requests unanswered, the next line is
//     not read until one is: a flooding client holds up only itself. A
//     cancellation frees no place; the call's answer does (the SDK
//     answers a cancelled call too).
//   - Every error answered, a tool error or a protocol error, is cut to
//     MaxErrorText bytes: the SDK's schema check and its unknown tool
//     error quote the refused argument whole.
//   - Full access's run_command kills the command's process group at
//     its deadline by the shell's pidfd (PIDFD_SIGNAL_PROCESS_GROUP,
//     Linux 6.9+): os/exec may cancel after the shell was reaped, and a
//     kill(-pid) then reached whatever group got the pid next.
//     Limitation: before 6.9 the group is killed by its id, and only
//     while the shell has not ended; a background job still holding the
//     output at a deadline after that is left (its pipes are closed
//     after pipeGrace).
//   - A request with "id": null is answered as invalid (MCP forbids it;
//     the SDK would take it for a notification and answer nothing).
package mcpserver
