package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
)

// responder answers one endpoint's requests and counts them.
type responder struct {
	nc    *nats.Conn
	log   *slog.Logger
	stats *counter
}

// answer sends resp, or err as a service error with its stable code, to
// req's reply subject, and counts the request from start (its receipt) to
// the answer. It publishes on nc rather than through req's own Respond and
// Error: those record the outcome in req for micro's statistics, which
// micro reads as soon as its handler returns — and the handler has handed
// the request to a goroutine by then (so that one endpoint serves many
// requests at once), so the answer may still be on its way (a data race).
// What the work took and how it ended are counted here instead: the
// endpoint's stats "data" (see stats).
func (r *responder) answer(req micro.Request, start time.Time, resp any, err error) {
	msg := &nats.Msg{Subject: req.Reply()}
	if err != nil {
		msg.Header = r.errorHeader(req, err)
	} else if msg.Data, err = json.Marshal(resp); err != nil {
		r.log.Error("could not encode a response", "subject", req.Subject(), "err", err)
		err = fmt.Errorf("encode response: %w", err)
		msg.Header = nats.Header{micro.ErrorHeader: []string{err.Error()}, micro.ErrorCodeHeader: []string{commands.CodeInternal}}
	}
	r.stats.done(time.Since(start), err)
	if msg.Subject == "" {
		return // a publish without a reply subject: nobody to answer
	}
	if perr := r.nc.PublishMsg(msg); perr != nil {
		r.log.Warn("could not send a response", "subject", req.Subject(), "err", perr)
	}
}

// errorHeader is err as a micro service error: its message and stable code.
func (r *responder) errorHeader(req micro.Request, err error) nats.Header {
	code := commands.Code(err)
	if code == commands.CodeInternal {
		r.log.Error("request failed", "subject", req.Subject(), "err", err)
	}
	return nats.Header{micro.ErrorHeader: []string{err.Error()}, micro.ErrorCodeHeader: []string{code}}
}

// refuse answers, on micro's own handler goroutine, a request that was not
// handed on: through req.Error, so that micro counts it as an error too.
func (r *responder) refuse(req micro.Request, start time.Time, err error) {
	h := r.errorHeader(req, err)
	r.stats.done(time.Since(start), err)
	if req.Reply() == "" {
		return
	}
	if rerr := req.Error(h.Get(micro.ErrorCodeHeader), h.Get(micro.ErrorHeader), nil); rerr != nil {
		r.log.Warn("could not send a response", "subject", req.Subject(), "err", rerr)
	}
}

// errStopping is the answer of a host that is stopping to a request it did
// not act on; clients send such a request again.
var errStopping = fmt.Errorf("%w: engine is stopping: send the request again", commands.ErrUnavailable)

// startAwait serves one await_step (areq, received at start) without
// holding a handler slot while the step is open: it registers it with the
// engine's watcher, then returns (releasing its slot); the watcher answers
// the request when the step is final, when the request's timeout passes
// (await_timeout) or when the service stops (ctx). Any number of waiters
// therefore leave every endpoint — first the reply that releases them —
// free. wg counts the waiters still to be answered.
func (r *responder) startAwait(ctx context.Context, req micro.Request, start time.Time, areq commands.AwaitRequest, w commands.StepWatcher, live *inflight) {
	live.wg.Add(1) // the caller's request holds the count above zero until WatchStep returns
	w.WatchStep(ctx, areq, func(out *commands.StepOutcome, err error) {
		defer live.leave()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) { // not worth a log line per waiter
			r.answer(req, start, nil, errStopping)
			return
		}
		r.answer(req, start, out, err)
	})
}
