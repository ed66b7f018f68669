package events

// MCPServerPin is what a run may see of one MCP server, pinned in its
// [RunStarted] so that every host computes the same catalogue: the run's
// catalogue shows a tool mcp__<Server>__<tool> only when the run pins
// Server, the server is not DenyAll, and the tool matches one pattern of
// every list in Allow (none: every tool). TicketTTLMs caps the deadline of
// tickets the server's tools raise (0: no cap).
//
// A RunStarted that pins servers is written at schema version 2, so that a
// build that predates pins (and would show every MCP tool) does not read
// the run; one that pins none stays at version 1.
type MCPServerPin struct {
	Server      string     `json:"server"`
	DenyAll     bool       `json:"deny_all,omitempty"`
	Allow       [][]string `json:"allow,omitempty"`
	TicketTTLMs int64      `json:"ticket_ttl_ms,omitempty"`
}
