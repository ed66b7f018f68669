package step

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher sends messages to JetStream, each caller waiting for its own
// message's ack: one commit at a time per caller, any number of callers at
// once. It uses the client's asynchronous publish, whose acks share one reply
// subscription — cheaper per message than a request per publish, most of all
// with many publishers — and hands each ack to its waiter through the
// client's ack handlers rather than a pair of channels per message. The
// benchmark's raw baselines publish through it too, so ratios measure the
// engine, not the client call.
type Publisher struct {
	js      jetstream.JetStream
	mu      sync.Mutex
	waiting map[*nats.Msg]chan ackOrErr
	chans   sync.Pool // chan ackOrErr, buffered, empty
}

type ackOrErr struct {
	ack *jetstream.PubAck
	err error
}

// AckWait is how long a publish waits for its ack. An ack can be lost (the
// stream leader's node went down after storing the message, or before):
// past AckWait the publish fails with jetstream.ErrAsyncPublishTimeout, which
// Unavailable counts, and the caller tries the same commit again (it is
// recognised if it was stored), instead of waiting for ever under a context
// without deadline.
const AckWait = 5 * time.Second

// NewPublisher returns a publisher on nc. It has its own JetStream context:
// publishing involves no JetStream API subject, so no domain or prefix.
func NewPublisher(nc *nats.Conn) (*Publisher, error) {
	return newPublisher(nc, AckWait)
}

func newPublisher(nc *nats.Conn, ackWait time.Duration) (*Publisher, error) {
	p := &Publisher{waiting: map[*nats.Msg]chan ackOrErr{}}
	p.chans.New = func() any { return make(chan ackOrErr, 1) }
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncTimeout(ackWait),
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, m *nats.Msg, ack *jetstream.PubAck) {
			p.answer(m, ackOrErr{ack: ack})
		}),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) {
			p.answer(m, ackOrErr{err: err})
		}))
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	p.js = js
	return p, nil
}

// answer hands a message's outcome to its waiter, if it still waits.
func (p *Publisher) answer(m *nats.Msg, r ackOrErr) {
	p.mu.Lock()
	ch, ok := p.waiting[m]
	delete(p.waiting, m)
	p.mu.Unlock()
	if ok {
		ch <- r // buffered: never blocks the client's reply goroutine
	}
}

// How a message refused because its subject had another message in process
// (see inProcess) is sent again: the wait doubles from the first to the
// limit, for up to inProcessPatience in all.
const (
	inProcessFirstWait = 100 * time.Microsecond
	inProcessWaitLimit = 5 * time.Millisecond
	inProcessPatience  = time.Second
)

// Publish sends msg and waits for its ack. msg must not be published again
// until Publish returns. A server error comes back as a *jetstream.APIError;
// ctx bounds the wait (the message may still be stored after ctx ends).
//
// A message that expects its subject's last sequence, refused by a
// clustered stream's leader because another message of that subject was
// still in process there, was not stored and may yet be right: the leader
// acknowledges a message before it clears it from its books, so a run's
// next commit, sent on the ack of the one before, can arrive in between
// (measured on loopback, under load: up to 6 ms). Publish sends it again —
// the same message, the same expectation — until the leader has settled
// the one in process: then it is stored, or refused for the expectation
// it names (another writer's commit won), as the first try would have
// been. After inProcessPatience the refusal is returned.
func (p *Publisher) Publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	ack, err := p.publishOnce(ctx, msg)
	if !inProcess(err) {
		return ack, err // the path of every single-node publish
	}
	wait, deadline := inProcessFirstWait, time.Now().Add(inProcessPatience)
	for {
		if time.Now().Add(wait).After(deadline) {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (its subject had another message in process: %v)", ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, inProcessWaitLimit)
		if ack, err = p.publishOnce(ctx, msg); !inProcess(err) {
			return ack, err
		}
	}
}

// publishOnce sends msg once and waits for its ack.
func (p *Publisher) publishOnce(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	ch := p.chans.Get().(chan ackOrErr)
	p.mu.Lock()
	p.waiting[msg] = ch
	p.mu.Unlock()
	if _, err := p.js.PublishMsgAsync(msg); err != nil {
		if p.forget(msg) {
			p.chans.Put(ch)
		}
		return nil, err
	}
	select {
	case r := <-ch:
		p.chans.Put(ch)
		return r.ack, r.err
	case <-ctx.Done():
		if p.forget(msg) {
			p.chans.Put(ch)
		} // else an answer is on its way to ch: it is dropped with ch
		return nil, ctx.Err()
	}
}

// forget stops waiting for msg; it reports whether no answer was taken for it.
func (p *Publisher) forget(msg *nats.Msg) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.waiting[msg]
	delete(p.waiting, msg)
	return ok
}
