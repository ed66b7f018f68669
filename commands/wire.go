package commands

import (
	"context"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/projection"
)

// Wire is the engine's API in the wire contract's types ([client.API]):
// what the service serves and what the CLI's verbs use in process. It
// converts the projection's values the engine answers with into the wire
// shapes (everything else is the engine's own answer: the same types), and
// every error at this boundary ([Translate]): a caller checks one conflict,
// [ErrConflict], never step's.
type Wire struct {
	*Host
}

var _ client.API = Wire{}

// Show implements [client.API].
func (w Wire) Show(ctx context.Context, req ShowRequest) (*client.Run, error) {
	r, err := w.Host.Show(ctx, req)
	if err != nil {
		return nil, Translate(err)
	}
	return WireRun(r), nil
}

// Runs implements [client.API].
func (w Wire) Runs(ctx context.Context) ([]client.RunSummary, error) {
	runs, err := w.Host.Runs(ctx)
	if err != nil {
		return nil, Translate(err)
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
		return nil, Translate(err)
	}
	out := WireSummary(*s)
	return &out, nil
}

// Grants implements [client.API].
func (w Wire) Grants(ctx context.Context, req GrantsRequest) ([]client.Grant, error) {
	gs, err := w.Host.Grants(ctx, req)
	if err != nil {
		return nil, Translate(err)
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
		return nil, Translate(err)
	}
	out := client.Grant(*g)
	return &out, nil
}

// StartRun implements [client.API].
func (w Wire) StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error) {
	out, err := w.Host.StartRun(ctx, req)
	return out, Translate(err)
}

// RecordTurn implements [client.API].
func (w Wire) RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	out, err := w.Host.RecordTurn(ctx, req)
	return out, Translate(err)
}

// Fork implements [client.API].
func (w Wire) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	out, err := w.Host.Fork(ctx, req)
	return out, Translate(err)
}

// Materialize implements [client.API].
func (w Wire) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	out, err := w.Host.Materialize(ctx, req)
	return out, Translate(err)
}

// SubmitStep implements [client.API].
func (w Wire) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	out, err := w.Host.SubmitStep(ctx, req)
	return out, Translate(err)
}

// Reply implements [client.API].
func (w Wire) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	out, err := w.Host.Reply(ctx, req)
	return out, Translate(err)
}

// Tickets implements [client.API].
func (w Wire) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	out, err := w.Host.Tickets(ctx, req)
	return out, Translate(err)
}

// AwaitStep implements [client.API].
func (w Wire) AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error) {
	out, err := w.Host.AwaitStep(ctx, req)
	return out, Translate(err)
}

// RecoverHost implements [client.API].
func (w Wire) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	out, err := w.Host.RecoverHost(ctx, req)
	return out, Translate(err)
}

// RegisterTools implements [client.API].
func (w Wire) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	out, err := w.Host.RegisterTools(ctx, req)
	return out, Translate(err)
}

// CloseScope implements [client.API].
func (w Wire) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	out, err := w.Host.CloseScope(ctx, req)
	return out, Translate(err)
}

// Quarantine implements [client.API].
func (w Wire) Quarantine(ctx context.Context, req QuarantineRequest) (*QuarantineList, error) {
	out, err := w.Host.Quarantine(ctx, req)
	return out, Translate(err)
}

// SweepOutputs implements [client.API].
func (w Wire) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	out, err := w.Host.SweepOutputs(ctx)
	return out, Translate(err)
}

// WatchStep implements [StepWatcher], with the error translated.
func (w Wire) WatchStep(ctx context.Context, req AwaitRequest, done func(*StepOutcome, error)) {
	w.Host.WatchStep(ctx, req, func(out *StepOutcome, err error) { done(out, Translate(err)) })
}

// WireSummary is a run summary in the wire contract's shape.
func WireSummary(s projection.Summary) client.RunSummary {
	return client.RunSummary{ID: s.ID, Agent: s.Agent, Status: string(s.Status), Cause: s.Cause, Steps: s.Steps,
		LastSeq: s.LastSeq, LastAt: s.LastAt, Diverged: s.Diverged}
}

// WireRun is a run in the wire contract's shape (nil for nil). It shares
// the run's event values and raw JSON, so r must not change after.
func WireRun(r *projection.Run) *client.Run {
	if r == nil {
		return nil
	}
	out := &client.Run{ID: r.ID, Snapshot: r.Snapshot, Status: string(r.Status), End: r.End, Catalog: r.Catalog,
		Turns: r.Turns, State: r.State, LastSeq: r.LastSeq, Commits: r.Commits, LastCommit: r.LastCommit, LastAt: r.LastAt}
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

// MCPServers implements [client.API].
func (w Wire) MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error) {
	out, err := w.Host.MCPServers(ctx, req)
	return out, Translate(err)
}

// Locations implements [client.API].
func (w Wire) Locations(ctx context.Context, req LocationsRequest) (*LocationList, error) {
	out, err := w.Host.Locations(ctx, req)
	return out, Translate(err)
}
