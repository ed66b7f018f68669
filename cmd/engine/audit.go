package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step"
)

// auditBuffer bounds the bytes of the log the audit holds in memory while
// it reads (the consumer's buffer).
const auditBuffer = 16 << 20

// runAudit is `engine audit`: one line per decision of the whole log, read
// in stream order up to its last sequence when the verb starts and written
// as it goes (memory follows the open runs, not the log). With --data it
// opens the embedded server itself (no engine may be serving the
// directory); with --nats it reads the stream with the user's own
// connection, which needs JetStream read access to the stream.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("audit", stderr)
	var cf connFlags
	cf.register(fs)
	since := fs.Duration("since", 0, "only the decisions of the last DURATION (e.g. 24h); 0 for all")
	project := fs.String("project", "", "only the decisions of runs of this project")
	format := fs.String("format", replay.FormatJSONL, "jsonl or csv")
	stream := fs.String("stream", step.DefaultStream, "the stream's name")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine audit: takes no arguments"}
	}
	if *since < 0 {
		return usageError{"engine audit: --since must not be negative"}
	}
	filter := replay.AuditFilter{Project: *project}
	if *since > 0 {
		filter.Since = time.Now().Add(-*since)
	}
	buf := bufio.NewWriter(stdout)
	w, err := replay.NewAuditWriter(buf, *format)
	if err != nil {
		return usageError{"engine audit: " + err.Error()}
	}
	log := logger(stderr)
	nc, done, err := cf.auditConn(ctx, log)
	if err != nil {
		return err
	}
	defer done()
	skipped, err := audit(ctx, nc, *stream, replay.NewAuditor(filter), w)
	if err == nil {
		err = w.Flush()
	}
	if ferr := buf.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if skipped > 0 {
		log.Warn("engine audit skipped messages of the log that are not commits of their subject (see engine quarantine)", "messages", skipped)
	}
	return err
}

// auditConn connects to the log the flags name: the user's connection to
// --nats, or an embedded server on --data started for the audit alone.
func (f *connFlags) auditConn(ctx context.Context, log *slog.Logger) (*nats.Conn, func(), error) {
	if f.natsURL != "" {
		nc, err := nats.Connect(f.natsURL, append(f.options(), nats.MaxReconnects(10))...)
		if err != nil {
			return nil, nil, fmt.Errorf("connect to %s: %w", f.natsURL, err)
		}
		return nc, nc.Close, nil
	}
	release, err := lockData(f.data)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s (is an engine serving it? then use --nats): %w", f.data, err)
	}
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(f.data, "nats")})
	if err != nil {
		return nil, nil, errors.Join(err, release())
	}
	nc, err := srv.Connect()
	if err != nil {
		srv.Shutdown()
		return nil, nil, errors.Join(err, release())
	}
	return nc, func() {
		nc.Close()
		srv.Shutdown()
		if err := release(); err != nil {
			log.Warn("release the data directory", "err", err)
		}
	}, nil
}

// audit reads stream from sequence 1 to its last sequence now, in order,
// hands each commit to a and writes the rows to w. It returns how many
// messages were skipped: not a commit, or a commit outside its subject.
func audit(ctx context.Context, nc *nats.Conn, stream string, a *replay.Auditor, w *replay.AuditWriter) (skipped int, err error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil // nothing was ever committed
	}
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", stream, err)
	}
	last := info.State.LastSeq
	if last >= info.State.FirstSeq && info.State.Msgs > 0 {
		cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
		if err != nil {
			return 0, fmt.Errorf("read stream %s: %w", stream, err)
		}
		it, err := cons.Messages(jetstream.PullMaxBytes(auditBuffer))
		if err != nil {
			return 0, fmt.Errorf("read stream %s: %w", stream, err)
		}
		stop := context.AfterFunc(ctx, it.Stop)
		defer stop()
		defer it.Stop()
		for {
			m, err := it.Next()
			if err != nil {
				if ctx.Err() != nil {
					return skipped, ctx.Err()
				}
				return skipped, fmt.Errorf("read stream %s: %w", stream, err)
			}
			md, err := m.Metadata()
			if err != nil {
				return skipped, fmt.Errorf("read stream %s: %w", stream, err)
			}
			skip, err := auditOne(a, w, m.Subject(), m.Data())
			if err != nil {
				return skipped, err
			}
			if skip {
				skipped++
			}
			if md.Sequence.Stream >= last || md.NumPending == 0 { // the end as it was, or before it when its last messages were deleted
				break
			}
		}
	}
	for _, r := range a.Close() {
		if err := w.Write(&r); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// auditOne hands one message to a and writes its rows; skip is set when
// the message is not a commit, or a commit outside its subject.
func auditOne(a *replay.Auditor, w *replay.AuditWriter, subject string, data []byte) (skip bool, err error) {
	c, err := events.Unmarshal(data)
	if err != nil {
		return true, nil
	}
	rows, err := a.Add(subject, c)
	if err != nil {
		return true, nil
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			return false, err
		}
	}
	return false, nil
}
