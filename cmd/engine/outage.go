package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step"
)

// How `serve --nats` waits for a NATS server that is not up yet, or for
// JetStream on it: the wait doubles from the first to the limit, for as
// long as it takes (until the process is interrupted).
const (
	natsWaitFirst = 100 * time.Millisecond
	natsWaitLimit = 5 * time.Second
)

// dialServe connects an engine host to the external NATS server. It does
// not fail when no server is up yet: it keeps trying in the background, for
// ever, waiting longer after each failed attempt (up to natsWaitLimit); and
// it says once per outage that NATS is unavailable,
// and again when it is back.
func (f *connFlags) dialServe(log *slog.Logger) (*nats.Conn, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, nats.RetryOnFailedConnect(true),
		nats.CustomReconnectDelay(func(attempts int) time.Duration { // doubling: a long outage is not hammered
			d := natsWaitFirst << min(max(attempts-1, 0), 6)
			return min(d, natsWaitLimit) + rand.N(natsWaitFirst)
		}),
		// The end of an outage is said at the level of its start: with
		// the default level, an operator who saw one sees the other (at
		// start, the serving line on stdout says it).
		nats.ConnectHandler(func(nc *nats.Conn) { log.Info("connected to NATS", "url", nc.ConnectedUrlRedacted()) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Warn("NATS is back", "url", nc.ConnectedUrlRedacted()) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: the host closed its own connection (stopping)
				log.Warn("NATS unavailable; reconnecting (requests get the retryable code unavailable meanwhile)", "url", f.natsURL, "err", err)
			}
		}))
	nc, err := nats.Connect(f.natsURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", f.natsURL, err)
	}
	if !nc.IsConnected() {
		log.Warn("NATS unavailable at start; waiting for it", "url", f.natsURL)
	}
	return nc, nil
}

// startHostWaiting is startHost, started again with backoff for as long as
// NATS or JetStream is unavailable (step.Unavailable) and ctx lives: setting
// up the stream, catching up and recovering all need it. Any other error
// ends the wait.
func startHostWaiting(ctx context.Context, nc *nats.Conn, o hostOptions) (*commands.Host, error) {
	wait, said := natsWaitFirst, false
	for {
		h, err := startHost(ctx, nc, o)
		if err == nil || !step.Unavailable(err) || ctx.Err() != nil {
			if err == nil && said {
				o.log.Warn("JetStream is back; the host started")
			}
			return h, err
		}
		if !said && nc.IsConnected() { // not connected: dialServe has said so
			o.log.Warn("JetStream unavailable; waiting for it", "err", err)
		}
		said = true
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for NATS: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, natsWaitLimit)
	}
}
