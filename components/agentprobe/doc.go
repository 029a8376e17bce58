// Package agentprobe adds the launcher's probe actions that run as the
// agent inside a components-mode session (the register's checks of
// components mode use them): fs-read asks the session's fs for a file,
// as the agent; fs-present asks fs to stat "." presenting the agent's own
// certificate, or one for its identity from a CA of the probe's making;
// sh-run runs a command through the session's bash, as `launcher sh`
// does; code-run runs a Code Mode script there; mcp-read starts
// `launcher mcp` and calls its read_file tool, as the agent's MCP client
// would. A component's denial prints `denied RULE` (exit 1).
//
// They live apart from launcher/probe because they need the components'
// client code, which needs cgo: the standalone probe program the
// integration tests build without cgo registers none of them.
// cmd/launcher imports this package for its init.
package agentprobe
