package client

import "context"

// MCPServersRequest asks what the answering host knows of the MCP servers a
// location's configuration declares: for each enabled one it connects (or
// keeps its connection) and waits a few seconds for the first listing.
type MCPServersRequest struct {
	// Location is the absolute path whose configuration is read.
	Location string `json:"location"`
	// Agent is whose configuration (default build); the servers do not
	// depend on it, the effective rules that name them do.
	Agent string `json:"agent,omitempty"`
}

// MCPServerList is the answer to [MCPServersRequest].
type MCPServerList struct {
	// Host is the host that answered: the state is its connections'.
	Host    string           `json:"host"`
	Servers []MCPServerState `json:"servers"`
}

// The states of an MCP server in [MCPServerState].
const (
	MCPConnecting = "connecting"
	MCPReady      = "ready"
	MCPDown       = "down"
	MCPNotEnabled = "not enabled"
)

// MCPServerState is one configured MCP server as the host sees it. Env and
// headers are never shown, not even as references: `engine config check`
// prints those.
type MCPServerState struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // stdio or http
	// Source is the file that declares the server.
	Source    string     `json:"source"`
	Trust     bool       `json:"trust"`
	DenyAll   bool       `json:"deny_all,omitempty"`
	Allow     [][]string `json:"allow,omitempty"`
	TicketTTL string     `json:"ticket_ttl,omitempty"`
	// State is connecting, ready, down or not enabled; Error says why a
	// server is down, Why why it is not enabled.
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	Why   string `json:"why,omitempty"`
	// Scope is the registry scope of the listed tools (ready only).
	Scope   string       `json:"scope,omitempty"`
	Tools   []MCPTool    `json:"tools,omitempty"`
	Skipped []MCPSkipped `json:"skipped,omitempty"`
}

// MCPTool is one listed tool: its full name, effect class, and whether a
// run of the location may see it (deny_all and allow).
type MCPTool struct {
	Name    string `json:"name"`
	Effect  string `json:"effect"`
	Visible bool   `json:"visible"`
}

// MCPSkipped is a tool of the server left out, and why.
type MCPSkipped struct {
	Tool   string `json:"tool"` // the name the server gave
	Reason string `json:"reason"`
}

// MCPServers asks the answering host for the state of a location's MCP
// servers.
func (c *Client) MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error) {
	return callAs[MCPServerList](ctx, c, EndpointMCPServers, req)
}
