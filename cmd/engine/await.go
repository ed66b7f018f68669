package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
)

// startAwait serves one await_step without holding a handler slot while
// the step is open: it decodes the request and registers it with the
// engine's watcher, then returns (releasing its slot); the watcher answers
// the request when the step is final, when the request's timeout passes
// (await_timeout) or when the service stops (ctx). Any number of waiters
// therefore leave every endpoint — first the reply that releases them —
// free. wg counts the waiters still to be answered.
func startAwait(ctx context.Context, nc *nats.Conn, req micro.Request, w commands.StepWatcher, wg *sync.WaitGroup, log *slog.Logger) {
	areq, err := decodeRequest[commands.AwaitRequest](req.Data())
	if err != nil {
		answer(nc, req, nil, err, log)
		return
	}
	wg.Add(1)
	w.WatchStep(ctx, areq, func(out *commands.StepOutcome, err error) {
		defer wg.Done()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) { // not worth a log line per waiter
			stopping(nc, req, log)
			return
		}
		answer(nc, req, out, err, log)
	})
}

// awaitFinal awaits a step for as long as ctx allows: each await_step
// request waits at most its timeout, and one that times out is sent again.
func awaitFinal(ctx context.Context, api engineAPI, req commands.AwaitRequest) (*commands.StepOutcome, error) {
	for {
		out, err := api.AwaitStep(ctx, req)
		if !errors.Is(err, commands.ErrAwaitTimeout) || ctx.Err() != nil {
			return out, err
		}
	}
}
