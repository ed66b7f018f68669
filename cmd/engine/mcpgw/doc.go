// Package mcpgw is Stepgate as an MCP server: one MCP session (or several,
// over streamable HTTP) drives one run through the engine's client API. The
// tool list is the run's materialized catalogue; each tools/call is one
// step with one call, submitted through the gate like any other client's.
// A call that asks waits for the reply (from any host, or from the MCP
// client's user through elicitation when enabled), sending progress
// notifications; when the wait ends unanswered the model gets a result
// naming the ticket, and the same call issued again attaches to it. A
// repeat of the waiting call (same tool, same arguments as JSON values)
// made meanwhile, from any MCP session of the gateway, waits on the same
// step and gets its result; once that result is delivered, the same call
// is a new call.
//
// The gateway holds nothing of its own that a restart could lose: the run
// id is derived from the session's name (see [RunID]), and the run's open
// step is read back from the engine when the gateway starts.
package mcpgw
