package step

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publish sends msg to JetStream and waits for its ack: one commit at a time,
// each acknowledged before the caller goes on. It uses the client's
// asynchronous publish, whose acks share one reply subscription, and waits on
// the ack — cheaper per message than a request per publish, most of all with
// many publishers at once. The benchmark's raw baseline publishes through the
// same function, so ratios measure the engine, not the client call.
//
// A server error comes back as a *jetstream.APIError; ctx bounds the wait
// (the message may still be stored after ctx ends).
func Publish(ctx context.Context, js jetstream.JetStream, msg *nats.Msg) (*jetstream.PubAck, error) {
	f, err := js.PublishMsgAsync(msg)
	if err != nil {
		return nil, err
	}
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
