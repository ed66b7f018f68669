package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/internal/strictjson"
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
	epQuarantine  = "quarantine"
)

// engineAPI is everything a client may ask: commands and confirmations.
type engineAPI interface {
	commands.API
	commands.Confirmations
	commands.Registrar
	commands.Inspector
}

// endpoint adapts one command to a JSON request/response handler.
type endpoint func(ctx context.Context, api engineAPI, body []byte) (any, error)

// handle decodes the request into Req, calls fn, and returns its response.
func handle[Req any, Resp any](fn func(engineAPI, context.Context, Req) (Resp, error)) endpoint {
	return func(ctx context.Context, api engineAPI, body []byte) (any, error) {
		req, err := decodeRequest[Req](body)
		if err != nil {
			return nil, err
		}
		return fn(api, ctx, req)
	}
}

// decodeRequest decodes a request body strictly: one JSON value whose
// fields are all Req's. A field Req does not have (a typo such as
// "disabled_tools") is invalid_input, never ignored: an ignored narrowing
// would fail open. An empty body is Req's zero value.
func decodeRequest[Req any](body []byte) (Req, error) {
	var req Req
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	if err := strictjson.Decode(body, &req); err != nil {
		return req, fmt.Errorf("decode request: %w: %w", commands.ErrInvalidRequest, err)
	}
	return req, nil
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
		epQuarantine: handle(engineAPI.Quarantine),
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
	watcher, watches := api.(commands.StepWatcher)
	for name, ep := range endpoints() {
		serve := func(req micro.Request) { respond(ctx, nc, req, api, ep, log) }
		if name == epAwait && watches {
			serve = func(req micro.Request) { startAwait(ctx, nc, req, watcher, &wg, log) }
		}
		h := micro.HandlerFunc(func(req micro.Request) {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				stopping(nc, req, log)
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				serve(req)
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

func respond(ctx context.Context, nc *nats.Conn, req micro.Request, api engineAPI, ep endpoint, log *slog.Logger) {
	resp, err := ep(ctx, api, req.Data())
	answer(nc, req, resp, err, log)
}

// answer sends resp, or err as a service error with its stable code, to
// req's reply subject. It publishes on nc rather than through req's own
// Respond and Error: those record the outcome in req for the service's
// statistics, which micro reads as soon as the handler returns — while the
// answer of a request handled on its own goroutine may still be on its way
// (a data race). The statistics therefore count requests, not errors.
func answer(nc *nats.Conn, req micro.Request, resp any, err error, log *slog.Logger) {
	msg := &nats.Msg{Subject: req.Reply()}
	if err != nil {
		code := commands.Code(err)
		if code == commands.CodeInternal {
			log.Error("request failed", "subject", req.Subject(), "err", err)
		}
		msg.Header = nats.Header{micro.ErrorHeader: []string{err.Error()}, micro.ErrorCodeHeader: []string{code}}
	} else if msg.Data, err = json.Marshal(resp); err != nil {
		log.Error("could not encode a response", "subject", req.Subject(), "err", err)
		msg.Header = nats.Header{micro.ErrorHeader: []string{"encode response: " + err.Error()}, micro.ErrorCodeHeader: []string{commands.CodeInternal}}
	}
	if msg.Subject == "" {
		return // a publish without a reply subject: nobody to answer
	}
	if perr := nc.PublishMsg(msg); perr != nil {
		log.Warn("could not send a response", "subject", req.Subject(), "err", perr)
	}
}

// stopping is the answer of a host that is stopping to a request it did not
// act on; clients send such a request again.
func stopping(nc *nats.Conn, req micro.Request, log *slog.Logger) {
	answer(nc, req, nil, fmt.Errorf("%w: engine is stopping: send the request again", commands.ErrUnavailable), log)
}
