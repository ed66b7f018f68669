package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// streamSource reads the log's stream as a [projection.Source] and nothing
// more: unlike step.Open it neither creates nor updates the stream, so a
// user whose NATS permissions allow reading it (stream info, direct gets
// and an ordered consumer) may fold the past without any right to write.
type streamSource struct{ s jetstream.Stream }

// withStream connects to --nats with the user's credentials and calls fn
// with the log's stream.
func withStream(ctx context.Context, cf *connFlags, fn func(projection.Source) error) error {
	nc, err := nats.Connect(cf.natsURL, append(cf.options(), nats.MaxReconnects(0))...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", cf.natsURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		return fmt.Errorf("read stream %s (the user needs read access to it): %w", step.DefaultStream, err)
	}
	return fn(streamSource{s})
}

// LastSeq implements [projection.Source].
func (s streamSource) LastSeq(ctx context.Context) (uint64, error) {
	info, err := s.s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	return info.State.LastSeq, nil
}

// Get implements [projection.Source].
func (s streamSource) Get(ctx context.Context, seq uint64) (string, []byte, bool, error) {
	m, err := s.s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("get stream sequence %d: %w", seq, err)
	}
	return m.Subject, m.Data, true, nil
}

// Follow implements [projection.Source] with an ordered consumer.
func (s streamSource) Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error {
	cons, err := s.s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(from, 1)})
	if err != nil {
		return fmt.Errorf("follow the stream from %d: %w", from, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(4096), jetstream.PullHeartbeat(5*time.Second))
	if err != nil {
		return fmt.Errorf("follow the stream from %d: %w", from, err)
	}
	defer context.AfterFunc(ctx, it.Stop)()
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("follow the stream: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("follow the stream: %w", err)
		}
		if err := fn(md.Sequence.Stream, m.Subject(), m.Data()); err != nil {
			return err
		}
	}
}
