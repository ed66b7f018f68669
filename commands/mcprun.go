package commands

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/mcp"
)

// mcpPins are what a run may see of the servers its configuration declares
// and enables, pinned in RunStarted.
func mcpPins(servers []config.MCPServer) []events.MCPServerPin {
	var out []events.MCPServerPin
	for _, s := range servers {
		if !s.Enabled {
			continue
		}
		out = append(out, events.MCPServerPin{Server: s.Name, DenyAll: s.DenyAll, Allow: s.Allow, TicketTTLMs: s.TicketTTL.Milliseconds()})
	}
	return out
}

// mcpServerOf splits an MCP tool's name into its server and tool; ok is
// false for a name that is not mcp__<server>__<tool>. Server names hold no
// "__", so the split is unambiguous.
func mcpServerOf(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, mcp.Prefix)
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// pinOf is the pin of the server of an MCP tool, nil when the run pins none.
func pinOf(pins []events.MCPServerPin, server string) *events.MCPServerPin {
	i := slices.IndexFunc(pins, func(p events.MCPServerPin) bool { return p.Server == server })
	if i < 0 {
		return nil
	}
	return &pins[i]
}

// mcpVisible reports whether a run with pins may see the tool name: every
// tool but an MCP one; an MCP one only when the run pins its server, the
// server is not deny_all and its allow-lists let the tool through. A name
// under the mcp__ prefix that names no server is never visible.
func mcpVisible(name string, pins []events.MCPServerPin) bool {
	if !strings.HasPrefix(name, mcp.Prefix) {
		return true
	}
	server, tool, ok := mcpServerOf(name)
	if !ok {
		return false
	}
	p := pinOf(pins, server)
	return p != nil && config.MCPServer{DenyAll: p.DenyAll, Allow: p.Allow}.Allows(tool)
}

// mcpTTL caps ttl, the deadline of a ticket raised by tool, at its server's
// ticket_ttl: the shortest wins; 0 (for ever) yields to any cap.
func mcpTTL(pins []events.MCPServerPin, tool string, ttl time.Duration) time.Duration {
	server, _, ok := mcpServerOf(tool)
	if !ok {
		return ttl
	}
	p := pinOf(pins, server)
	if p == nil || p.TicketTTLMs <= 0 {
		return ttl
	}
	if cap := time.Duration(p.TicketTTLMs) * time.Millisecond; ttl == 0 || cap < ttl {
		return cap
	}
	return ttl
}

// forCalls connects this host, CallWait at most, to the servers of the MCP
// tools among names that run may call and this host has no implementation
// of: a ticket resumed after a restart, or a run another host started.
// Servers come from the run's configuration as it is now. It does nothing
// when every tool is installed.
func (m *mcpHosts) forCalls(ctx context.Context, run string, names ...string) {
	if m.opts.Off {
		return
	}
	reg := m.reg.effective()
	var need []string
	for _, n := range names {
		server, _, ok := mcpServerOf(n)
		if et, has := reg[n]; ok && has && et.impl == nil && !slices.Contains(need, server) {
			need = append(need, server)
		}
	}
	if len(need) == 0 {
		return
	}
	r, err := m.reg.header(run)
	if err != nil {
		return
	}
	var servers []config.MCPServer
	for _, s := range m.reg.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).MCPServers {
		if slices.Contains(need, s.Name) && pinOf(r.Snapshot.MCP, s.Name) != nil {
			servers = append(servers, s)
		}
	}
	ready := func(s *mcpSupervisor) chan struct{} { return s.ready }
	sups := m.ensure(servers, r.Snapshot.Location)
	m.retryFailed(ctx, sups)
	for _, s := range wait(ctx, sups, ready, m.opts.CallWait) {
		st := s.client.State()
		m.log.Warn("mcp: no connection for a call", "server", st.Server, "run", run, "phase", st.Phase, "err", st.LastError)
	}
}
