package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// The service's name and the subjects of its endpoints: "stepgate.<endpoint>".
const (
	serviceName   = "stepgate"
	subjectPrefix = "stepgate"
)

// Endpoint names, one per command.
const (
	epStartRun    = "start_run"
	epMaterialize = "materialize"
	epSubmitStep  = "submit_step"
	epEndRun      = "end_run"
	epRuns        = "runs"
	epShow        = "show"
	epReply       = "reply"
	epTickets     = "tickets"
	epAwait       = "await_step"
	epGrants      = "grants"
	epRevoke      = "revoke_grant"
	epSweep       = "sweep_outputs"
	epRecover     = "recover_host"
	epRegister    = "register_tools"
	epCloseScope  = "close_scope"
)

// engineAPI is everything a client may ask: commands and confirmations.
type engineAPI interface {
	commands.API
	commands.Confirmations
	commands.Registrar
}

// endpoint adapts one command to a JSON request/response handler.
type endpoint func(ctx context.Context, api engineAPI, body []byte) (any, error)

// handle decodes the request into Req, calls fn, and returns its response.
func handle[Req any, Resp any](fn func(engineAPI, context.Context, Req) (Resp, error)) endpoint {
	return func(ctx context.Context, api engineAPI, body []byte) (any, error) {
		var req Req
		if len(body) > 0 {
			if err := json.Unmarshal(body, &req); err != nil {
				return nil, fmt.Errorf("decode request: %w: %w", commands.ErrInvalidRequest, err)
			}
		}
		return fn(api, ctx, req)
	}
}

func endpoints() map[string]endpoint {
	return map[string]endpoint{
		epStartRun:    handle(engineAPI.StartRun),
		epMaterialize: handle(engineAPI.Materialize),
		epSubmitStep:  handle(engineAPI.SubmitStep),
		epEndRun:      handle(engineAPI.EndRun),
		epRuns: handle(func(api engineAPI, ctx context.Context, _ struct{}) ([]commands.RunSummary, error) {
			return api.Runs(ctx)
		}),
		epShow:       handle(engineAPI.Show),
		epReply:      handle(engineAPI.Reply),
		epTickets:    handle(engineAPI.Tickets),
		epAwait:      handle(engineAPI.AwaitStep),
		epGrants:     handle(engineAPI.Grants),
		epRevoke:     handle(engineAPI.RevokeGrant),
		epRegister:   handle(engineAPI.RegisterTools),
		epCloseScope: handle(engineAPI.CloseScope),
		epRecover:    handle(engineAPI.RecoverHost),
		epSweep: handle(func(api engineAPI, ctx context.Context, _ struct{}) (*commands.SweepResult, error) {
			return api.SweepOutputs(ctx)
		}),
	}
}

// serveAPI exposes api as the "stepgate" micro service on nc. Once it
// returns, the endpoints answer; they serve until ctx ends, and stop waits
// for that and for the requests in flight. Requests are handled
// concurrently (up to maxInFlight at once), each with ctx; errors reach
// clients as service errors with stable codes.
func serveAPI(ctx context.Context, nc *nats.Conn, api engineAPI, version string, log *slog.Logger) (stop func() error, err error) {
	const maxInFlight = 256
	svc, err := micro.AddService(nc, micro.Config{
		Name: serviceName, Version: version,
		Description: "Stepgate: permission-checked, durably logged tool execution for AI agents",
	})
	if err != nil {
		return nil, fmt.Errorf("add service: %w", err)
	}
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	for name, ep := range endpoints() {
		h := micro.HandlerFunc(func(req micro.Request) {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				_ = req.Error(commands.CodeInternal, "engine is stopping", nil)
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				respond(ctx, req, api, ep, log)
			})
		})
		if err := svc.AddEndpoint(name, h, micro.WithEndpointSubject(subjectPrefix+"."+name)); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("add endpoint %s: %w", name, err)
		}
	}
	if err := nc.Flush(); err != nil { // the subscriptions are in place on the server
		_ = svc.Stop()
		return nil, fmt.Errorf("add service: %w", err)
	}
	return func() error {
		<-ctx.Done()
		err := svc.Stop()
		wg.Wait()
		return err
	}, nil
}

func respond(ctx context.Context, req micro.Request, api engineAPI, ep endpoint, log *slog.Logger) {
	resp, err := ep(ctx, api, req.Data())
	if err != nil {
		code := commands.Code(err)
		if code == commands.CodeInternal {
			log.Error("request failed", "subject", req.Subject(), "err", err)
		}
		if rerr := req.Error(code, err.Error(), nil); rerr != nil {
			log.Warn("could not send an error response", "subject", req.Subject(), "err", rerr)
		}
		return
	}
	if rerr := req.RespondJSON(resp); rerr != nil {
		log.Warn("could not send a response", "subject", req.Subject(), "err", rerr)
	}
}

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
