package client

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/events"
)

// Client calls the "stepgate" service over NATS. It rides out a restart of
// the engine (see Do): a connection made by [Dial] reconnects for ever and
// requests are sent again where that is safe. Safe for concurrent use.
type Client struct {
	nc    *nats.Conn
	own   bool       // Close closes nc (Dial made it)
	watch *connWatch // told of every (re)connect of a connection Dial made
	// refusals fails a request the NATS server refused at once (see
	// refusal.go); told of the refusals of a connection Dial made only.
	refusals *refusals
	// timeout bounds one request, every copy of it included; 0 for the
	// endpoint's default (see Do).
	timeout time.Duration
	ids     *events.IDSource
	// sticky is, per run, the host that decided its last step: the next
	// one is sent there (see SubjectAt).
	sticky stickies
	// waits is how long to wait for an answer to the n-th copy of a
	// request; nil for attemptWait.
	waits func(endpoint string, n int) time.Duration
}

var _ API = (*Client)(nil)

// Option sets optional behaviour of a [Client].
type Option func(*options)

type options struct {
	timeout time.Duration
	waits   func(endpoint string, n int) time.Duration
	nats    []nats.Option
}

// WithTimeout bounds how long one request may take, the copies sent again
// after a reconnect included (0, the default: the endpoint's own default,
// 15 minutes for a step, a reply, starting and ending a run, 24 hours for
// await_step, one minute for queries). A ctx deadline bounds it too.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithAttemptWait sets how long the client waits for an answer to the n-th
// copy of a request to endpoint before it sends another (default: doubling
// from 2 s for queries, 5 s for commands, a minute for await_step).
func WithAttemptWait(wait func(endpoint string, n int) time.Duration) Option {
	return func(o *options) { o.waits = wait }
}

// WithNATSOptions adds options to the connection [Dial] makes (credentials,
// TLS, an inbox prefix, handlers). Dial's own come first: reconnect for
// ever, quickly, and keep trying while the server is not up yet.
func WithNATSOptions(opts ...nats.Option) Option {
	return func(o *options) { o.nats = append(o.nats, opts...) }
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Dial connects to the NATS server or cluster at url (comma-separated URLs)
// and returns a client of the service there. It does not block: it does
// not wait for a server that is not up yet, nor for an engine to serve;
// requests wait for both (up to their timeout). Close the client to close
// its connection.
func Dial(url string, opts ...Option) (*Client, error) {
	o := collect(opts)
	w := newConnWatch()
	nopts := append([]nats.Option{nats.Name("stepgate"), nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.RetryOnFailedConnect(true)}, o.nats...)
	// Last, so that no option given replaces them: the client must hear of
	// every reconnect to send its requests in flight again.
	// So must it of the server's refusals: its error handler goes first,
	// then the one the options set.
	r := newRefusals()
	nopts = append(nopts, nats.ConnectHandler(w.firstConnect), nats.ReconnectHandler(w.connected), r.errorHandler())
	nc, err := nats.Connect(url, nopts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	if nc.IsConnected() { // before any request: the first-connect callback, still to come, cut none
		w.upAtDial()
	}
	c := newClient(nc, o)
	c.own, c.watch, c.refusals = true, w, r
	return c, nil
}

// New is a client on a connection the caller made and closes. It sends a
// request again after no answer or "no responders", but it is not told of
// the connection's reconnects (the connection's handlers are the caller's):
// use [Dial] for a client that rides out a NATS server's restart at once,
// and whose requests the NATS server refuses for permissions fail at once
// with [ErrPermissionDenied] rather than at their timeout.
func New(nc *nats.Conn, opts ...Option) *Client { return newClient(nc, collect(opts)) }

func newClient(nc *nats.Conn, o options) *Client {
	return &Client{nc: nc, watch: newConnWatch(), refusals: newRefusals(), timeout: o.timeout, waits: o.waits, ids: events.NewIDSource(nil)}
}

// Conn is the client's NATS connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Close closes the connection if [Dial] made it.
func (c *Client) Close() {
	if c.own {
		c.nc.Close()
	}
}

// callAs calls endpoint and decodes its response as T.
func callAs[T any](ctx context.Context, c *Client, endpoint string, req any) (*T, error) {
	var out T
	if err := c.call(ctx, endpoint, req, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Do calls endpoint with req and decodes its answer into resp, sending the
// request again as [Client] says; an error answer is an [*Error]. The
// typed methods are Do with the endpoint's types.
func (c *Client) Do(ctx context.Context, endpoint string, req, resp any) error {
	return c.call(ctx, endpoint, req, resp, nil)
}

// StartRun starts a run. The client picks the run id (unless req names
// one), so the request can be sent again without starting a second run.
func (c *Client) StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error) {
	if req.Run == "" {
		req.Run = c.ids.New(time.Now())
	}
	return callAs[RunInfo](ctx, c, EndpointStartRun, req)
}

// Materialize returns a run's visible tools at the start of a turn.
func (c *Client) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	return callAs[Catalog](ctx, c, EndpointMaterialize, req)
}

// SubmitStep submits one model turn's calls and returns the step's
// outcome once it is final, or its tickets while it waits for a human.
func (c *Client) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	var out StepOutcome
	done, err := c.submitAt(ctx, req, &out)
	if !done {
		err = c.call(ctx, EndpointSubmitStep, req, &out, c.submitEcho(req, &out))
	}
	if err != nil {
		return nil, err
	}
	c.sticky.set(req.Run, out.Host)
	return &out, nil
}

// EndRun ends a run.
func (c *Client) EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	var out RunSummary
	if err := c.call(ctx, EndpointEndRun, req, &out, c.endEcho(req, &out)); err != nil {
		return nil, err
	}
	return &out, nil
}

// Show returns one run in full.
func (c *Client) Show(ctx context.Context, req ShowRequest) (*Run, error) {
	return callAs[Run](ctx, c, EndpointShow, req)
}

// RecordTurn commits one model turn of a run; a turn the run has already,
// the same, is answered again without a commit (so a copy sent after a
// lost answer is harmless).
func (c *Client) RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	return callAs[TurnRecord](ctx, c, EndpointRecordTurn, req)
}

// RunFacts returns what a run's commits say beyond its projection.
func (c *Client) RunFacts(ctx context.Context, req RunFactsRequest) (*RunFacts, error) {
	return callAs[RunFacts](ctx, c, EndpointRunFacts, req)
}

// Reply answers a ticket.
//
// A reply that does not name its run is given the run of its ticket when
// the ticket is pending (one more request), so that a copy sent again can
// tell its own earlier copy's resolution from someone else's (replyEcho).
func (c *Client) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	if req.Run == "" {
		pending, err := c.Tickets(ctx, TicketsRequest{Ticket: req.Ticket})
		if err != nil {
			return nil, err
		}
		for _, t := range pending.Tickets {
			if t.ID == req.Ticket {
				req.Run = t.Run
			}
		}
	}
	var out ReplyResult
	if err := c.call(ctx, EndpointReply, req, &out, c.replyEcho(req, &out)); err != nil {
		return nil, err
	}
	return &out, nil
}

// Tickets returns a page of pending tickets, oldest first.
func (c *Client) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	return callAs[TicketPage](ctx, c, EndpointTickets, req)
}

// AwaitStep returns the step's outcome once it is final; after the
// request's timeout it is [ErrAwaitTimeout]: ask again.
func (c *Client) AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error) {
	return callAs[StepOutcome](ctx, c, EndpointAwait, req)
}

// Grants lists saved approvals.
func (c *Client) Grants(ctx context.Context, req GrantsRequest) ([]Grant, error) {
	out, err := callAs[[]Grant](ctx, c, EndpointGrants, req)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// RevokeGrant withdraws a saved approval. It is sent once (see Do).
func (c *Client) RevokeGrant(ctx context.Context, req RevokeRequest) (*Grant, error) {
	return callAs[Grant](ctx, c, EndpointRevoke, req)
}

// SweepOutputs has the host that answers sweep its own output directory.
func (c *Client) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	return callAs[SweepResult](ctx, c, EndpointSweep, Empty{})
}

// RecoverHost has the host that answers settle what the named host left
// open.
func (c *Client) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	return callAs[RecoverResult](ctx, c, EndpointRecover, req)
}

// RegisterTools registers tools in the location layer. It is sent once.
func (c *Client) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	return callAs[RegisterResult](ctx, c, EndpointRegister, req)
}

// CloseScope closes a scope of the location layer. It is sent once.
func (c *Client) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	return callAs[CloseScopeRequest](ctx, c, EndpointCloseScope, req)
}

// Quarantine lists the answering host's quarantine.
func (c *Client) Quarantine(ctx context.Context, req QuarantineRequest) (*QuarantineList, error) {
	return callAs[QuarantineList](ctx, c, EndpointQuarantine, req)
}
