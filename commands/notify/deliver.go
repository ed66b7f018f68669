package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/internal/backoff"
)

// pullWait bounds one pull for the next commit (then the worker pulls
// again); pauseAfterError is the wait after a pull the log refused, and the
// first after a consumer it could not set up (doubled up to maxSetupPause).
const (
	pullWait        = 5 * time.Second
	pauseAfterError = time.Second
	maxSetupPause   = 30 * time.Second
	// handBackFlush bounds the wait for the server to read this host's
	// last unsubscribes before it hands its commits back; handBackDelay is
	// how long after the hand-back the log gives them to another host.
	handBackFlush = 2 * time.Second
	handBackDelay = 200 * time.Millisecond
)

// Run joins the fleet's consumer (creating it, from the stream's next
// commit on, when no host has) and delivers until ctx ends, then returns
// nil. Commits it holds when ctx ends are handed back to the log at once,
// for another host. A consumer it cannot set up (the log unavailable) is
// tried again every few seconds, each failure logged.
func (d *Deliverer) Run(ctx context.Context) error {
	var cons jetstream.Consumer
	for wait := pauseAfterError; cons == nil; wait = min(2*wait, maxSetupPause) {
		var err error
		if cons, err = d.consumer(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		d.log.Warn("webhooks: setting up the consumer; trying again", "in", wait, "err", err)
		if !backoff.Sleep(ctx, wait) {
			return nil
		}
	}
	held := make(chan jetstream.Msg, d.cfg.Workers) // one commit at most per worker
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Go(func() {
			if msg := d.work(ctx, cons); msg != nil {
				held <- msg
			}
		})
	}
	wg.Wait()
	close(held)
	d.handBack(held)
	return nil
}

// handBack returns to the log the commits this host held when it stopped,
// once none of its workers pulls any more. The log hands a returned commit
// to the oldest pull still waiting whose inbox has a subscriber: returned
// before this host's abandoned pulls are withdrawn (their unsubscribes,
// sent as each pull ends, not yet read by the server), the commit would go
// to one of them, which nobody reads now, and wait out the AckWait before
// another host got it. So the flush makes the server read the unsubscribes
// sent so far, and the log hands the commits out again handBackDelay after
// the hand-back, when the last ones have reached it too.
func (d *Deliverer) handBack(held <-chan jetstream.Msg) {
	if nc := d.cfg.JS.Conn(); nc != nil {
		if err := nc.FlushTimeout(handBackFlush); err != nil {
			d.log.Warn("webhook: withdrawing this host's pulls before handing commits back", "err", err)
		}
	}
	for msg := range held {
		if err := msg.NakWithDelay(handBackDelay); err != nil {
			d.log.Warn("webhook: handing a commit back; another host delivers it after the AckWait", "err", err)
		}
	}
}

// consumer creates or joins the durable consumer on the run subjects.
func (d *Deliverer) consumer(ctx context.Context) (jetstream.Consumer, error) {
	cons, err := d.cfg.JS.CreateOrUpdateConsumer(ctx, d.cfg.Stream, jetstream.ConsumerConfig{
		Durable:       d.cfg.Consumer,
		Description:   "Stepgate webhooks: each run lifecycle event to one host of the fleet",
		FilterSubject: events.RunSubject(">"),
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       d.cfg.AckWait,
		MaxDeliver:    maxDeliver,
		MaxAckPending: 16 * d.cfg.Workers,
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks: consumer %s on stream %s: %w", d.cfg.Consumer, d.cfg.Stream, err)
	}
	return cons, nil
}

// work pulls one commit at a time and delivers it, until ctx ends; it
// returns the commit it held then, unfinished, for [Deliverer.handBack].
func (d *Deliverer) work(ctx context.Context, cons jetstream.Consumer) (held jetstream.Msg) {
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, pullWait)
		msg, err := cons.Next(jetstream.FetchContext(pctx))
		cancel()
		switch {
		case ctx.Err() != nil:
			return msg
		case err == nil:
			if d.handle(ctx, msg) {
				return msg
			}
			continue
		case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
			continue // nothing to deliver
		case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound):
			if c, cerr := d.consumer(ctx); cerr == nil {
				cons = c
			}
		}
		d.log.Warn("webhook: pulling the next commit", "consumer", d.cfg.Consumer, "err", err)
		backoff.Sleep(ctx, pauseAfterError)
	}
	return nil
}

// handle delivers the lifecycle events of one commit to every webhook that
// wants them, at once, and acknowledges the commit when each is delivered
// or given up on; while it works it tells the log so every third of
// AckWait. A message that is not a commit, or a commit without a lifecycle
// event the projection holds, is acknowledged as it is; a commit this
// host's projection has not applied in FactsWait is handed back. It
// reports whether ctx ended before the commit was done with: the commit is
// then the caller's to hand back.
func (d *Deliverer) handle(ctx context.Context, msg jetstream.Msg) (stopped bool) {
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.Term()
		return false
	}
	c, err := events.Unmarshal(msg.Data())
	if err != nil {
		_ = msg.Ack()
		return false
	}
	ps, err := d.payloads(ctx, meta.Sequence.Stream, c)
	switch {
	case ctx.Err() != nil:
		return true
	case err != nil: // this host's projection lags: another host, or this one later
		d.log.Warn("webhook: handing a commit back", "run", c.Run, "seq", meta.Sequence.Stream, "err", err)
		_ = msg.NakWithDelay(pauseAfterError)
		return false
	case len(ps) == 0:
		_ = msg.Ack()
		return false
	}
	if meta.NumDelivered > 1 {
		d.log.Info("webhook: delivering a commit another host did not finish", "run", c.Run, "seq", meta.Sequence.Stream, "handed_out", meta.NumDelivered)
	}
	stop := d.keepAlive(msg)
	var wg sync.WaitGroup
	for _, p := range ps {
		for _, h := range d.cfg.Hooks {
			if slices.Contains(h.Events, p.Event) {
				wg.Go(func() { d.deliver(ctx, h, p) })
			}
		}
	}
	wg.Wait()
	stop()
	if ctx.Err() != nil {
		return true // stopping: another host delivers it now
	}
	_ = msg.Ack()
	return false
}

// keepAlive tells the log the commit is being worked on, every third of
// AckWait, until the returned stop is called.
func (d *Deliverer) keepAlive(msg jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(d.cfg.AckWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// deliver sends one event to one webhook, and logs and counts what became
// of it.
func (d *Deliverer) deliver(ctx context.Context, h Hook, p Payload) {
	if !h.IncludeArgs {
		p = p.withoutArgs()
	}
	body, err := json.Marshal(p)
	if err != nil { // a payload of plain values and raw JSON from the log
		d.log.Error("webhook: encode the payload", "event", p.Event, "delivery", p.Delivery, "err", err)
		d.cfg.Metrics.Failed(p.Event)
		return
	}
	n, err := d.send(ctx, h, p.Event, p.Delivery, body)
	switch {
	case err == nil:
		d.cfg.Metrics.Delivered(p.Event)
		d.log.Debug("webhook: delivered", "url", h.Where(), "event", p.Event, "delivery", p.Delivery, "attempts", n)
	case ctx.Err() != nil:
		// stopping: the commit goes back to the log, not a failure
	default:
		d.cfg.Metrics.Failed(p.Event)
		d.log.Error("webhook: delivery failed; giving up", "url", h.Where(), "event", p.Event, "delivery", p.Delivery,
			"run", p.Run, "ticket", p.Ticket, "attempts", n, "err", err)
	}
}
