package commands

import (
	"log/slog"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
)

// LoaderPolicy resolves policies from configuration files. A configuration
// that cannot be read, or an agent no layer defines, resolves to deny-all
// (and is logged): never ask, never allow.
func LoaderPolicy(l config.Loader, log *slog.Logger) func(agent, location string) Policy {
	return func(agent, location string) Policy {
		eff, err := l.Effective(agent, location)
		if err != nil {
			log.Warn("configuration: the agent is denied everything", "agent", agent, "location", location, "err", err)
		}
		return Policy{Rules: eff.Rules, Limits: events.OutputLimits{MaxLines: eff.MaxLines, MaxBytes: eff.MaxBytes}, TicketTTL: eff.TicketTTL, MCPServers: eff.MCPServers, Sandbox: eff.Sandbox}
	}
}
