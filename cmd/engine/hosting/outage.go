package hosting

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

// How a host on an external NATS server waits for a server that is not up
// yet, or for JetStream on it: the wait doubles from the first to the
// limit, for as long as it takes (until the context ends).
const (
	natsWaitFirst = 100 * time.Millisecond
	natsWaitLimit = 5 * time.Second
)

// ReconnectOptions are the options of a host's connection to an external
// NATS server at url (serve --nats): it does not fail when no server is up
// yet but keeps trying in the background, for ever, waiting longer after
// each failed attempt (up to 5s); and log says once per outage that NATS is
// unavailable, and again when it is back. The caller adds its credentials
// and TLS options.
func ReconnectOptions(url string, log *slog.Logger) []nats.Option {
	return []nats.Option{nats.RetryOnFailedConnect(true),
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
				log.Warn("NATS unavailable; reconnecting (requests get the retryable code unavailable meanwhile)", "url", url, "err", err)
			}
		})}
}

// startHostWaiting is startHost, started again with backoff for as long as
// NATS or JetStream is unavailable (step.Unavailable) and ctx lives: setting
// up the stream, catching up and recovering all need it. Any other error
// ends the wait.
func startHostWaiting(ctx context.Context, nc *nats.Conn, o Options, fleet *fleetConfig) (*commands.Host, error) {
	log := o.logger()
	wait, said := natsWaitFirst, false
	for {
		h, err := startHost(ctx, nc, o, fleet)
		if err == nil || !step.Unavailable(err) || ctx.Err() != nil {
			if err == nil && said {
				log.Warn("JetStream is back; the host started")
			}
			return h, err
		}
		if !said && nc.IsConnected() { // not connected: the connection's handlers have said so
			log.Warn("JetStream unavailable; waiting for it", "err", err)
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
