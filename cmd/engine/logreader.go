package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/step"
)

// readBuffer bounds how much of the log a reader holds in flight: a verb
// that reads the whole log (audit, replay, show --at) costs this, not the
// log's size.
const readBuffer = 16 << 20

// logReader is the log's stream opened for reading and nothing more:
// unlike step.Open it neither creates nor updates the stream, so a user
// whose NATS permissions allow reading it (stream info, direct gets, an
// ordered consumer) may read the past without any right to write. It is
// the one reader of show --at, replay and audit.
type logReader struct {
	s jetstream.Stream // nil: a log never written, which reads as empty
}

// withLogReader calls fn with the stream the flags name, read-only: with
// --nats through the user's own connection; with --data on the directory's
// embedded server started alone (no host, no projection: the directory's
// lock is held, so no engine may be serving it). A log that was never
// written reads as empty.
func (f *connFlags) withLogReader(ctx context.Context, stream string, fn func(logReader) error) error {
	var nc *nats.Conn
	if f.natsURL != "" {
		opts, err := f.options()
		if err != nil {
			return err
		}
		if nc, err = nats.Connect(f.natsURL, append(opts, nats.MaxReconnects(10))...); err != nil {
			return fmt.Errorf("connect to %s: %w", f.natsURL, err)
		}
		defer nc.Close()
	} else {
		if err := f.requireEngine(); err != nil {
			return err
		}
		release, err := hosting.LockData(f.data)
		if err != nil {
			return fmt.Errorf("open %s (is an engine serving it? then use --nats): %w", f.data, err)
		}
		defer release()
		srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(f.data, "nats")})
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		if nc, err = srv.Connect(); err != nil {
			return err
		}
		defer nc.Close()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fn(logReader{}) // nothing was ever committed
	}
	if err != nil {
		return fmt.Errorf("read stream %s (the user needs read access to it): %w", stream, err)
	}
	return fn(logReader{s})
}

// follow hands fn every message from stream sequence from on, in order.
// With untilNow it returns after the stream's last sequence as it was when
// follow began (or before, when the last messages were deleted since);
// otherwise it follows until fn or ctx stops it.
func (r logReader) follow(ctx context.Context, from uint64, untilNow bool, fn func(seq uint64, subject string, data []byte) error) error {
	if r.s == nil {
		if untilNow {
			return nil
		}
		<-ctx.Done() // nothing to follow until something is committed
		return ctx.Err()
	}
	var last uint64
	if untilNow {
		info, err := r.s.Info(ctx)
		if err != nil {
			return fmt.Errorf("stream info: %w", err)
		}
		if info.State.Msgs == 0 || info.State.LastSeq < max(from, 1) {
			return nil
		}
		last = info.State.LastSeq
	}
	cons, err := r.s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(from, 1)})
	if err != nil {
		return fmt.Errorf("read the stream from %d: %w", from, err)
	}
	it, err := cons.Messages(jetstream.PullMaxBytes(readBuffer), jetstream.PullHeartbeat(5*time.Second))
	if err != nil {
		return fmt.Errorf("read the stream from %d: %w", from, err)
	}
	defer context.AfterFunc(ctx, it.Stop)()
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("read the stream: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("read the stream: %w", err)
		}
		if err := fn(md.Sequence.Stream, m.Subject(), m.Data()); err != nil {
			return err
		}
		if untilNow && (md.Sequence.Stream >= last || md.NumPending == 0) {
			return nil
		}
	}
}

// LastSeq implements projection.Source.
func (r logReader) LastSeq(ctx context.Context) (uint64, error) {
	if r.s == nil {
		return 0, nil
	}
	info, err := r.s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	return info.State.LastSeq, nil
}

// Get implements projection.Source.
func (r logReader) Get(ctx context.Context, seq uint64) (string, []byte, bool, error) {
	if r.s == nil {
		return "", nil, false, nil
	}
	m, err := r.s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("get stream sequence %d: %w", seq, err)
	}
	return m.Subject, m.Data, true, nil
}

// Follow implements projection.Source: it follows until fn or ctx stops it.
func (r logReader) Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error {
	return r.follow(ctx, from, false, fn)
}

// Scan implements replay.Log: every message to the end as it is now.
func (r logReader) Scan(ctx context.Context, fn func(seq uint64, data []byte) error) error {
	return r.follow(ctx, 1, true, func(seq uint64, _ string, data []byte) error { return fn(seq, data) })
}
