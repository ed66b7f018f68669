package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// Bound is the API as one [Caller] may use it: [Wire], with every run the
// caller may not see (see [Caller]) answered as a run that does not exist
// — run_not_found, never a distinct refusal, so a run id tells nobody else
// anything — and its tickets and grants as ones that do not exist. A run it
// starts or forks records the caller's principal (RunStarted.Principal);
// a reply or a revocation records the caller's principal, whatever the
// request's body says. The operator endpoints (register_tools,
// close_scope, recover_host, quarantine, sweep_outputs, mcp_servers) take
// no run and are passed through: the NATS roles decide who calls them.
//
// The service serves Bound when the engine binds runs to principals; in
// process, and on an unbound service, Wire answers everyone.
type Bound struct {
	// W answers what the caller may ask.
	W Wire
	// Caller is who asks, and what it oversees.
	Caller Caller
}

var (
	_ client.API  = Bound{}
	_ StepWatcher = Bound{}
)

// errNoPrincipal refuses a start, a fork, a reply or a revocation by a
// caller the server did not name: a run would belong to nobody, an answer
// would record nobody.
var errNoPrincipal = fmt.Errorf("this engine binds runs to the NATS principal that starts them, and the request carried none (Nats-Request-Info is set by the server on a request through a service import): %w", ErrInvalidRequest)

// check answers run_not_found for a run the caller may not see. A run this
// host has not folded yet is looked for in the log first, so that the
// answer is the same on every host.
func (b Bound) check(ctx context.Context, run string) error {
	if b.Caller.All {
		return nil
	}
	if !events.ValidID(run) {
		return fmt.Errorf("run %q: %w", run, ErrRunNotFound)
	}
	b.W.known(ctx, run)
	h, err := b.W.header(run)
	if err != nil {
		return Translate(err)
	}
	if !b.Caller.sees(h.Snapshot.Principal, h.Snapshot.Project) {
		return fmt.Errorf("run %s: %w", run, ErrRunNotFound)
	}
	return nil
}

// seesRun reports whether the caller may see run, read from the projection
// without keeping the run in memory (a listing).
func (b Bound) seesRun(run string) bool {
	h, err := b.W.headerCold(run)
	return err == nil && b.Caller.sees(h.Snapshot.Principal, h.Snapshot.Project)
}

// StartRun implements [client.API]: the run is the caller's.
func (b Bound) StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error) {
	if b.Caller.Principal == "" {
		return nil, errNoPrincipal
	}
	return b.W.StartRun(withPrincipal(ctx, b.Caller.Principal), req)
}

// Fork implements [client.API]: the source must be the caller's to see;
// the fork is the caller's.
func (b Bound) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	if b.Caller.Principal == "" {
		return nil, errNoPrincipal
	}
	return b.W.Fork(withPrincipal(ctx, b.Caller.Principal), req)
}

// Materialize implements [client.API].
func (b Bound) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.Materialize(ctx, req)
}

// SubmitStep implements [client.API].
func (b Bound) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.SubmitStep(ctx, req)
}

// RecordTurn implements [client.API].
func (b Bound) RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.RecordTurn(ctx, req)
}

// EndRun implements [client.API].
func (b Bound) EndRun(ctx context.Context, req EndRunRequest) (*client.RunSummary, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.EndRun(ctx, req)
}

// Show implements [client.API].
func (b Bound) Show(ctx context.Context, req ShowRequest) (*client.Run, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.Show(ctx, req)
}

// RunFacts implements [client.API].
func (b Bound) RunFacts(ctx context.Context, req RunFactsRequest) (*client.RunFacts, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.RunFacts(ctx, req)
}

// AwaitStep implements [client.API].
func (b Bound) AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error) {
	if err := b.check(ctx, req.Run); err != nil {
		return nil, err
	}
	return b.W.AwaitStep(ctx, req)
}

// WatchStep implements [StepWatcher].
func (b Bound) WatchStep(ctx context.Context, req AwaitRequest, done func(*StepOutcome, error)) {
	if err := b.check(ctx, req.Run); err != nil {
		done(nil, err)
		return
	}
	b.W.WatchStep(ctx, req, done)
}

// Runs implements [client.API]: the runs the caller may see.
func (b Bound) Runs(ctx context.Context) ([]client.RunSummary, error) {
	all, err := b.W.Runs(ctx)
	if err != nil || b.Caller.All {
		return all, err
	}
	out := []client.RunSummary{}
	for _, s := range all {
		if b.seesRun(s.ID) {
			out = append(out, s)
		}
	}
	return out, nil
}

// RunsPage implements [client.API]: a page keeps the runs the caller may
// see (so a page may be shorter than its limit while Next goes on).
func (b Bound) RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error) {
	page, err := b.W.RunsPage(ctx, req)
	if err != nil || b.Caller.All {
		return page, err
	}
	kept := []client.RunSummary{}
	for _, s := range page.Runs {
		if b.seesRun(s.ID) {
			kept = append(kept, s)
		}
	}
	page.Runs = kept
	return page, nil
}

// Tickets implements [client.API]: a run the caller may not see is
// run_not_found; a page keeps the tickets of runs it may see (so a page
// may be shorter than its limit while Next goes on).
func (b Bound) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	if req.Run != "" {
		if err := b.check(ctx, req.Run); err != nil {
			return nil, err
		}
	}
	page, err := b.W.Tickets(ctx, req)
	if err != nil || b.Caller.All {
		return page, err
	}
	seen := map[string]bool{}
	kept := page.Tickets[:0]
	for _, t := range page.Tickets {
		ok, known := seen[t.Run]
		if !known {
			ok = b.seesRun(t.Run)
			seen[t.Run] = ok
		}
		if ok {
			kept = append(kept, t)
		}
	}
	page.Tickets = kept
	return page, nil
}

// Reply implements [client.API]: a ticket of a run the caller may not see
// is ticket_not_found, as a ticket nobody issued; the reply records the
// caller's principal.
func (b Bound) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	req.Principal = b.Caller.Principal
	if req.Principal == "" {
		return nil, errNoPrincipal
	}
	if !b.Caller.All {
		if events.ValidID(req.Ticket) { // a ticket issued a moment ago on another host
			if err := b.W.syncAll(ctx); err != nil {
				return nil, fmt.Errorf("reply to %s: %w", req.Ticket, Translate(err))
			}
		}
		run := b.W.Proj.TicketRun(req.Ticket)
		if run == "" || !b.seesRun(run) {
			return nil, fmt.Errorf("ticket %q: %w", req.Ticket, ErrTicketNotFound)
		}
	}
	return b.W.Reply(ctx, req)
}

// Grants implements [client.API]: the grants of the projects the caller
// oversees.
func (b Bound) Grants(ctx context.Context, req GrantsRequest) ([]client.Grant, error) {
	gs, err := b.W.Grants(ctx, req)
	if err != nil || b.Caller.All {
		return gs, err
	}
	out := []client.Grant{}
	for _, g := range gs {
		if b.Caller.oversees(g.Project) {
			out = append(out, g)
		}
	}
	return out, nil
}

// RevokeGrant implements [client.API]: a grant of a project the caller
// does not oversee is grant_not_found; the revocation records the caller's
// principal.
func (b Bound) RevokeGrant(ctx context.Context, req RevokeRequest) (*client.Grant, error) {
	req.Principal = b.Caller.Principal
	if req.Principal == "" {
		return nil, errNoPrincipal
	}
	if !b.Caller.All {
		if err := b.W.syncAll(ctx); err != nil {
			return nil, Translate(err)
		}
		if g, ok := b.W.Proj.Grant(req.ID); !ok || !b.Caller.oversees(g.Project) {
			return nil, fmt.Errorf("grant %q: %w", req.ID, ErrGrantNotFound)
		}
	}
	return b.W.RevokeGrant(ctx, req)
}

// RecoverHost implements [client.API] (an operator endpoint).
func (b Bound) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	return b.W.RecoverHost(ctx, req)
}

// RegisterTools implements [client.API] (an operator endpoint).
func (b Bound) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	return b.W.RegisterTools(ctx, req)
}

// CloseScope implements [client.API] (an operator endpoint).
func (b Bound) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	return b.W.CloseScope(ctx, req)
}

// Quarantine implements [client.API] (an operator endpoint).
func (b Bound) Quarantine(ctx context.Context, req QuarantineRequest) (*QuarantineList, error) {
	return b.W.Quarantine(ctx, req)
}

// SweepOutputs implements [client.API] (an operator endpoint).
func (b Bound) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	return b.W.SweepOutputs(ctx)
}

// MCPServers implements [client.API] (an operator endpoint).
func (b Bound) MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error) {
	return b.W.MCPServers(ctx, req)
}

// Locations implements [client.API] (an operator endpoint: it names the
// paths of every run's location).
func (b Bound) Locations(ctx context.Context, req LocationsRequest) (*LocationList, error) {
	return b.W.Locations(ctx, req)
}
