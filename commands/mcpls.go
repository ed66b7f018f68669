package commands

import (
	"context"
	"strings"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor/mcp"
)

// The MCP listing's requests and responses are the wire contract's.
type (
	MCPServersRequest = client.MCPServersRequest
	MCPServerList     = client.MCPServerList
	MCPServerState    = client.MCPServerState
)

// MCPServers answers [Engine.MCPServers].
func (m *mcpHosts) MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error) {
	if req.Agent == "" {
		req.Agent = "build"
	}
	if err := checkLocation(req.Location); err != nil {
		return nil, err
	}
	servers := m.reg.cfg.Policy(req.Agent, req.Location).MCPServers
	sups := map[string]*mcpSupervisor{}
	running := m.ensure(servers, req.Location)
	wait(ctx, running, func(s *mcpSupervisor) chan struct{} { return s.listed }, m.opts.StartWait)
	for _, s := range running {
		sups[s.cfg.Name] = s
	}
	out := &MCPServerList{Host: m.reg.cfg.Host, Servers: []MCPServerState{}}
	for _, srv := range servers {
		out.Servers = append(out.Servers, m.stateOf(srv, sups[srv.Name]))
	}
	return out, nil
}

// stateOf is one server's entry: its configuration and, when this host
// runs it, its connection's state.
func (m *mcpHosts) stateOf(srv config.MCPServer, s *mcpSupervisor) MCPServerState {
	st := MCPServerState{Name: srv.Name, Transport: srv.Transport(), Source: srv.Source, Trust: srv.Trust,
		DenyAll: srv.DenyAll, Allow: srv.Allow, State: client.MCPNotEnabled, Why: srv.Why}
	if srv.TicketTTL > 0 {
		st.TicketTTL = srv.TicketTTL.String()
	}
	switch {
	case !srv.Enabled:
		return st
	case s == nil:
		st.State, st.Error = client.MCPDown, "not started on this host"
		if m.opts.Off {
			st.Error = "MCP servers are off on this host"
		}
		return st
	}
	cs := s.client.State()
	st.State, st.Error, st.Scope = string(cs.Phase), cs.LastError, cs.Scope
	if cs.Phase == mcp.Ready {
		st.Error = ""
	}
	for _, d := range cs.Tools {
		tool := strings.TrimPrefix(d.Name, mcp.Prefix+srv.Name+"__")
		st.Tools = append(st.Tools, client.MCPTool{Name: d.Name, Effect: string(d.WithDefaults().Effect), Visible: srv.Allows(tool)})
	}
	for _, sk := range cs.Skipped {
		st.Skipped = append(st.Skipped, client.MCPSkipped{Tool: sk.Remote, Reason: sk.Reason})
	}
	return st
}
