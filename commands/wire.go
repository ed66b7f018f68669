package commands

import (
	"context"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/projection"
)

// Wire is the engine's API in the wire contract's types ([client.API]):
// what the service serves and what the CLI's verbs use in process. It
// converts the projection's values the engine answers with into the wire
// shapes; everything else is the engine's own answer (the same types).
type Wire struct {
	*Host
}

var _ client.API = Wire{}

// Show implements [client.API].
func (w Wire) Show(ctx context.Context, req ShowRequest) (*client.Run, error) {
	r, err := w.Host.Show(ctx, req)
	if err != nil {
		return nil, err
	}
	return WireRun(r), nil
}

// Runs implements [client.API].
func (w Wire) Runs(ctx context.Context) ([]client.RunSummary, error) {
	runs, err := w.Host.Runs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]client.RunSummary, len(runs))
	for i, s := range runs {
		out[i] = WireSummary(s)
	}
	return out, nil
}

// EndRun implements [client.API].
func (w Wire) EndRun(ctx context.Context, req EndRunRequest) (*client.RunSummary, error) {
	s, err := w.Host.EndRun(ctx, req)
	if err != nil {
		return nil, err
	}
	out := WireSummary(*s)
	return &out, nil
}

// Grants implements [client.API].
func (w Wire) Grants(ctx context.Context, req GrantsRequest) ([]client.Grant, error) {
	gs, err := w.Host.Grants(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]client.Grant, len(gs))
	for i, g := range gs {
		out[i] = client.Grant(g)
	}
	return out, nil
}

// RevokeGrant implements [client.API].
func (w Wire) RevokeGrant(ctx context.Context, req RevokeRequest) (*client.Grant, error) {
	g, err := w.Host.RevokeGrant(ctx, req)
	if err != nil {
		return nil, err
	}
	out := client.Grant(*g)
	return &out, nil
}

// WireSummary is a run summary in the wire contract's shape.
func WireSummary(s projection.Summary) client.RunSummary {
	return client.RunSummary{ID: s.ID, Agent: s.Agent, Status: string(s.Status), Cause: s.Cause, Steps: s.Steps,
		LastSeq: s.LastSeq, Diverged: s.Diverged}
}

// WireRun is a run in the wire contract's shape (nil for nil). It shares
// the run's event values and raw JSON, so r must not change after.
func WireRun(r *projection.Run) *client.Run {
	if r == nil {
		return nil
	}
	out := &client.Run{ID: r.ID, Snapshot: r.Snapshot, Status: string(r.Status), End: r.End, Catalog: r.Catalog,
		State: r.State, LastSeq: r.LastSeq, Commits: r.Commits, LastCommit: r.LastCommit}
	if r.Steps != nil {
		out.Steps = make([]client.Step, len(r.Steps))
	}
	for i, s := range r.Steps {
		ws := client.Step{N: s.N, Final: s.Final, Host: s.Host}
		if s.Calls != nil {
			ws.Calls = make([]client.Call, len(s.Calls))
		}
		for j, c := range s.Calls {
			ws.Calls[j] = client.Call(c)
		}
		out.Steps[i] = ws
	}
	if r.Tickets != nil {
		out.Tickets = make([]client.Ticket, len(r.Tickets))
	}
	for i, t := range r.Tickets {
		out.Tickets[i] = client.Ticket{TicketIssued: client.TicketIssued(t.TicketIssued), Step: t.Step, Resolution: t.Resolution}
	}
	if r.Diverged != nil {
		d := client.Divergence(*r.Diverged)
		out.Diverged = &d
	}
	return out
}
