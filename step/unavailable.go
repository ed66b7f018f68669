package step

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Unavailable reports whether err means NATS or JetStream could not be
// reached for now (no connection, the server restarting, JetStream not yet
// ready, no answer or no ack in time): the operation may be tried again once
// NATS is back. It is the only place that knows which client errors those
// are. A
// commit that failed so may or may not have been stored: try the same commit
// again (Commit recognises one that was), never a new one.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{nats.ErrDisconnected, nats.ErrConnectionReconnecting, nats.ErrNoResponders, nats.ErrTimeout,
		nats.ErrNoServers, nats.ErrStaleConnection, jetstream.ErrNoStreamResponse, jetstream.ErrNoHeartbeat, jetstream.ErrAsyncPublishTimeout, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 503 // JetStream not (yet) enabled, no quorum, leader not elected
}
