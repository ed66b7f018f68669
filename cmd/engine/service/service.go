package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/internal/strictjson"
)

// maxInFlight is how many requests a host handles at once; waiters of
// await_step hold no slot.
const maxInFlight = 256

// callerAPI is the API one request is answered through: [commands.Wire],
// or [commands.Bound] for its caller.
type callerAPI interface {
	client.API
	commands.StepWatcher
}

// endpoint adapts one command to a JSON request/response handler: it
// decodes the request body (an invalid one is refused at once) and returns
// the work that answers it.
type endpoint func(body []byte) (work, error)

// work is what answers one decoded request.
type work func(ctx context.Context, api client.API) (any, error)

// handle decodes the request into Req; its work calls fn.
func handle[Req any, Resp any](fn func(client.API, context.Context, Req) (Resp, error)) endpoint {
	return func(body []byte) (work, error) {
		req, err := DecodeRequest[Req](body)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, api client.API) (any, error) { return fn(api, ctx, req) }, nil
	}
}

// DecodeRequest decodes a request body strictly: one JSON value whose
// fields are all Req's. A field Req does not have (a typo such as
// "disabled_tools") is invalid_input, never ignored: an ignored narrowing
// would fail open. An empty body is Req's zero value.
func DecodeRequest[Req any](body []byte) (Req, error) {
	var req Req
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	if err := strictjson.Decode(body, &req); err != nil {
		return req, fmt.Errorf("decode request: %w: %w", commands.ErrInvalidRequest, err)
	}
	return req, nil
}

// endpoints is the service's table: one handler per endpoint of
// client.Endpoints.
func endpoints() map[string]endpoint {
	return map[string]endpoint{
		client.EndpointStartRun:    handle(client.API.StartRun),
		client.EndpointMaterialize: handle(client.API.Materialize),
		client.EndpointSubmitStep:  handle(client.API.SubmitStep),
		client.EndpointEndRun:      handle(client.API.EndRun),
		client.EndpointRuns:        handle(client.API.RunsPage),
		client.EndpointShow:        handle(client.API.Show),
		client.EndpointFork:        handle(client.API.Fork),
		client.EndpointRunFacts:    handle(client.API.RunFacts),
		client.EndpointReply:       handle(client.API.Reply),
		client.EndpointTickets:     handle(client.API.Tickets),
		client.EndpointAwait:       handle(client.API.AwaitStep),
		client.EndpointGrants:      handle(client.API.Grants),
		client.EndpointRevoke:      handle(client.API.RevokeGrant),
		client.EndpointRegister:    handle(client.API.RegisterTools),
		client.EndpointCloseScope:  handle(client.API.CloseScope),
		client.EndpointRecover:     handle(client.API.RecoverHost),
		client.EndpointQuarantine:  handle(client.API.Quarantine),
		client.EndpointMCPServers:  handle(client.API.MCPServers),
		client.EndpointLocations:   handle(client.API.Locations),
		client.EndpointRecordTurn:  handle(client.API.RecordTurn),
		client.EndpointSweep: handle(func(api client.API, ctx context.Context, _ client.Empty) (*client.SweepResult, error) {
			return api.SweepOutputs(ctx)
		}),
	}
}

// Names lists the service's endpoints.
func Names() []string {
	var out []string
	for name := range endpoints() {
		out = append(out, name)
	}
	return out
}

// Serve exposes h as the "stepgate" micro service on nc. Once it returns,
// the endpoints answer; they serve until ctx ends, and stop waits for that
// and for the requests in flight. Requests are handled concurrently (up to
// maxInFlight at once), each with ctx; errors reach clients as service
// errors with stable codes. Each endpoint's metadata holds the JSON Schema
// of its request and of its response (client.Schema).
func Serve(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger) (stop func() error, err error) {
	return serve(ctx, nc, h, version, log, nil)
}

// ServeBound is [Serve] for a deployment that binds runs to principals:
// each request is answered as [commands.Bound] answers its caller, the
// principal the server named in the request's Nats-Request-Info (see
// [RequestInfoHeader]) with what b lets it oversee. A request without
// that header (one from a client in the engine's own account) is
// nobody's: it may start nothing and sees no run (an overseer is named by
// its principal, so nobody oversees nothing).
func ServeBound(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger, b Binding) (stop func() error, err error) {
	return serve(ctx, nc, h, version, log, &b)
}

// serve is Serve, binding runs when bind is set.
func serve(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger, bind *Binding) (stop func() error, err error) {
	wire := commands.Wire{Host: h}
	apiFor := func(micro.Request) callerAPI { return wire }
	if bind != nil {
		apiFor = func(req micro.Request) callerAPI {
			c := bind.caller(nats.Header(req.Headers()))
			if c.Principal == "" {
				log.Warn("a request without the server's Nats-Request-Info (a client in the engine's own account?): answered as nobody's", "subject", req.Subject())
			}
			return commands.Bound{W: wire, Caller: c}
		}
	}
	counts := newStats()
	svc, err := micro.AddService(nc, micro.Config{
		Name: client.ServiceName, Version: version,
		Description:  "Stepgate: permission-checked, durably logged tool execution for AI agents",
		StatsHandler: counts.data,
	})
	if err != nil {
		return nil, fmt.Errorf("add service: %w", err)
	}
	sem := make(chan struct{}, maxInFlight)
	var live inflight
	var own []*nats.Subscription // endpoints on this host's own subjects
	for name, ep := range endpoints() {
		md, err := metadata(name)
		if err != nil {
			_ = svc.Stop()
			return nil, err
		}
		r := &responder{nc: nc, log: log, stats: counts.of(name)}
		await := name == client.EndpointAwait
		handler := micro.HandlerFunc(func(req micro.Request) {
			start := time.Now()
			var (
				w    work
				areq commands.AwaitRequest
				err  error
			)
			// Decoded here, on micro's handler goroutine, so that an invalid
			// request is refused through micro (which counts the error).
			api := apiFor(req)
			if await {
				areq, err = DecodeRequest[commands.AwaitRequest](req.Data())
			} else {
				w, err = ep(req.Data())
			}
			if err != nil {
				r.refuse(req, start, err)
				return
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				r.refuse(req, start, errStopping)
				return
			}
			if !live.enter() { // stop has begun
				<-sem
				r.refuse(req, start, errStopping)
				return
			}
			go func() {
				defer live.leave()
				defer func() { <-sem }()
				if await {
					r.startAwait(ctx, req, start, areq, api, &live)
					return
				}
				// The caller's span (a traceparent header) is the parent of
				// what the engine does for the request.
				resp, err := w(client.ExtractTrace(ctx, nats.Header(req.Headers())), api)
				r.answer(req, start, resp, err)
			}()
		})
		if err := svc.AddEndpoint(name, handler, micro.WithEndpointSubject(client.Subject(name)), micro.WithEndpointMetadata(md)); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("add endpoint %s: %w", name, err)
		}
		if name == client.EndpointSubmitStep { // also on this host's own subject (client.SubjectAt)
			sub, err := nc.Subscribe(client.SubjectAt(h.HostName(), name), func(m *nats.Msg) { handler(msgRequest{m}) })
			if err != nil {
				_ = svc.Stop()
				return nil, fmt.Errorf("add endpoint %s on this host's own subject: %w", name, err)
			}
			own = append(own, sub)
		}
	}
	fwd, err := serveForwarded(ctx, nc, h, log, sem, &live)
	if err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("serve forwarded requests: %w", err)
	}
	own = append(own, fwd)
	unsubscribe := func() error {
		var errs []error
		for _, s := range own {
			errs = append(errs, s.Unsubscribe())
		}
		return errors.Join(errs...)
	}
	if err := nc.Flush(); err != nil { // the subscriptions are in place on the server
		_ = svc.Stop()
		_ = unsubscribe()
		return nil, fmt.Errorf("add service: %w", err)
	}
	return func() error {
		<-ctx.Done()
		err := errors.Join(svc.Stop(), unsubscribe())
		live.stop()
		return err
	}, nil
}

// metadata is an endpoint's micro metadata: its request's and response's
// JSON Schema.
func metadata(name string) (map[string]string, error) {
	req, resp, err := client.Schema(name)
	if err != nil {
		return nil, fmt.Errorf("add endpoint %s: %w", name, err)
	}
	return map[string]string{"request_schema": string(req), "response_schema": string(resp)}, nil
}
