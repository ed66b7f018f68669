package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// client is a commands.API that calls the "stepgate" service over NATS.
type client struct {
	nc *nats.Conn
}

var _ engineAPI = (*client)(nil)

func (c *client) call(ctx context.Context, endpoint string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		// Long enough for the longest tool call a step may make.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout(endpoint))
		defer cancel()
	}
	msg, err := c.nc.RequestWithContext(ctx, subjectPrefix+"."+endpoint, body)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%s: no stepgate service is reachable (is `engine serve` running?): %w", endpoint, err)
		}
		return fmt.Errorf("%s: %w", endpoint, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return &commands.Error{Code: code, Message: msg.Header.Get(micro.ErrorHeader)}
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("%s: decode response: %w", endpoint, err)
	}
	return nil
}

func callTimeout(endpoint string) time.Duration {
	switch endpoint {
	case epSubmitStep, epReply:
		return 15 * time.Minute // long enough for the longest tool call
	case epAwait:
		return 24 * time.Hour // a human may take a while
	}
	return 30 * time.Second
}

// callAs calls endpoint and decodes its response as T.
func callAs[T any](ctx context.Context, c *client, endpoint string, req any) (*T, error) {
	var out T
	if err := c.call(ctx, endpoint, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartRun implements commands.API.
func (c *client) StartRun(ctx context.Context, req commands.StartRunRequest) (*commands.RunInfo, error) {
	return callAs[commands.RunInfo](ctx, c, epStartRun, req)
}

// Materialize implements commands.API.
func (c *client) Materialize(ctx context.Context, req commands.MaterializeRequest) (*commands.Catalog, error) {
	return callAs[commands.Catalog](ctx, c, epMaterialize, req)
}

// SubmitStep implements commands.API.
func (c *client) SubmitStep(ctx context.Context, req commands.SubmitStepRequest) (*commands.StepOutcome, error) {
	return callAs[commands.StepOutcome](ctx, c, epSubmitStep, req)
}

// EndRun implements commands.API.
func (c *client) EndRun(ctx context.Context, req commands.EndRunRequest) (*commands.RunSummary, error) {
	return callAs[commands.RunSummary](ctx, c, epEndRun, req)
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
func (c *client) Reply(ctx context.Context, req commands.ReplyRequest) (*commands.ReplyResult, error) {
	return callAs[commands.ReplyResult](ctx, c, epReply, req)
}

// Tickets implements commands.Confirmations.
func (c *client) Tickets(ctx context.Context, req commands.TicketsRequest) ([]commands.TicketView, error) {
	out, err := callAs[[]commands.TicketView](ctx, c, epTickets, req)
	if err != nil {
		return nil, err
	}
	return *out, nil
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
