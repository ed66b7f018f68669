package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// client is a commands.API that calls the "stepgate" service over NATS. It
// rides out a restart of the engine (see call): its connection reconnects
// for ever and requests are sent again where that is safe.
type client struct {
	nc    *nats.Conn
	watch *connWatch // set the connection's (re)connect handlers to watch.connected
	// timeout bounds one request, every copy of it included; 0 for the
	// endpoint's default (defaultTimeout).
	timeout time.Duration
	ids     *events.IDSource
	// waits is how long to wait for an answer to the n-th copy of a
	// request; nil for attemptWait (tests send copies sooner).
	waits func(endpoint string, n int) time.Duration
}

var _ engineAPI = (*client)(nil)

// newClient is a client on nc whose (re)connect handlers call w.connected;
// timeout as client.timeout.
func newClient(nc *nats.Conn, w *connWatch, timeout time.Duration) *client {
	return &client{nc: nc, watch: w, timeout: timeout, ids: events.NewIDSource(nil)}
}

// callAs calls endpoint and decodes its response as T.
func callAs[T any](ctx context.Context, c *client, endpoint string, req any) (*T, error) {
	var out T
	if err := c.call(ctx, endpoint, req, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartRun implements commands.API. The client picks the run id (unless
// req names one), so the request can be sent again without starting a
// second run.
func (c *client) StartRun(ctx context.Context, req commands.StartRunRequest) (*commands.RunInfo, error) {
	if req.Run == "" {
		req.Run = c.ids.New(time.Now())
	}
	return callAs[commands.RunInfo](ctx, c, epStartRun, req)
}

// Materialize implements commands.API.
func (c *client) Materialize(ctx context.Context, req commands.MaterializeRequest) (*commands.Catalog, error) {
	return callAs[commands.Catalog](ctx, c, epMaterialize, req)
}

// SubmitStep implements commands.API.
func (c *client) SubmitStep(ctx context.Context, req commands.SubmitStepRequest) (*commands.StepOutcome, error) {
	var out commands.StepOutcome
	if err := c.call(ctx, epSubmitStep, req, &out, c.submitEcho(req, &out)); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndRun implements commands.API.
func (c *client) EndRun(ctx context.Context, req commands.EndRunRequest) (*commands.RunSummary, error) {
	var out commands.RunSummary
	if err := c.call(ctx, epEndRun, req, &out, c.endEcho(req, &out)); err != nil {
		return nil, err
	}
	return &out, nil
}

// Runs implements commands.API.
func (c *client) Runs(ctx context.Context) ([]commands.RunSummary, error) {
	out, err := callAs[[]commands.RunSummary](ctx, c, epRuns, struct{}{})
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Show implements commands.API.
func (c *client) Show(ctx context.Context, req commands.ShowRequest) (*projection.Run, error) {
	return callAs[projection.Run](ctx, c, epShow, req)
}

// Reply implements commands.Confirmations.
//
// A reply that does not name its run is given the run of its ticket when
// the ticket is pending (one more request), so that a copy sent again can
// tell its own earlier copy's resolution from someone else's (replyEcho).
func (c *client) Reply(ctx context.Context, req commands.ReplyRequest) (*commands.ReplyResult, error) {
	if req.Run == "" {
		pending, err := c.Tickets(ctx, commands.TicketsRequest{Ticket: req.Ticket})
		if err != nil {
			return nil, err
		}
		for _, t := range pending.Tickets {
			if t.ID == req.Ticket {
				req.Run = t.Run
			}
		}
	}
	var out commands.ReplyResult
	if err := c.call(ctx, epReply, req, &out, c.replyEcho(req, &out)); err != nil {
		return nil, err
	}
	return &out, nil
}

// Tickets implements commands.Confirmations.
func (c *client) Tickets(ctx context.Context, req commands.TicketsRequest) (*commands.TicketPage, error) {
	return callAs[commands.TicketPage](ctx, c, epTickets, req)
}

// AwaitStep implements commands.Confirmations.
func (c *client) AwaitStep(ctx context.Context, req commands.AwaitRequest) (*commands.StepOutcome, error) {
	return callAs[commands.StepOutcome](ctx, c, epAwait, req)
}

// Grants implements commands.Confirmations.
func (c *client) Grants(ctx context.Context, req commands.GrantsRequest) ([]projection.Grant, error) {
	out, err := callAs[[]projection.Grant](ctx, c, epGrants, req)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// RevokeGrant implements commands.Confirmations.
func (c *client) RevokeGrant(ctx context.Context, req commands.RevokeRequest) (*projection.Grant, error) {
	return callAs[projection.Grant](ctx, c, epRevoke, req)
}

// SweepOutputs implements commands.Confirmations: the host that answers
// sweeps its own output directory.
func (c *client) SweepOutputs(ctx context.Context) (*commands.SweepResult, error) {
	return callAs[commands.SweepResult](ctx, c, epSweep, struct{}{})
}

// RecoverHost implements commands.Confirmations: the host that answers
// settles what the named host left open.
func (c *client) RecoverHost(ctx context.Context, req commands.RecoverRequest) (*commands.RecoverResult, error) {
	return callAs[commands.RecoverResult](ctx, c, epRecover, req)
}

// RegisterTools implements commands.Registrar.
func (c *client) RegisterTools(ctx context.Context, req commands.RegisterRequest) (*commands.RegisterResult, error) {
	return callAs[commands.RegisterResult](ctx, c, epRegister, req)
}

// CloseScope implements commands.Registrar.
func (c *client) CloseScope(ctx context.Context, req commands.CloseScopeRequest) (*commands.CloseScopeRequest, error) {
	return callAs[commands.CloseScopeRequest](ctx, c, epCloseScope, req)
}

// Quarantine implements commands.Inspector: the answering host's quarantine.
func (c *client) Quarantine(ctx context.Context, req commands.QuarantineRequest) (*commands.QuarantineList, error) {
	return callAs[commands.QuarantineList](ctx, c, epQuarantine, req)
}
