package main

import (
	"bufio"
	"context"
	"io"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/replay"
	"github.com/stepgate/stepgate/step"
)

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
	var skipped int
	err = cf.withLogReader(ctx, *stream, func(r logReader) (err error) {
		skipped, err = audit(ctx, r, replay.NewAuditor(filter), w)
		return err
	})
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

// audit reads the log from sequence 1 to its last sequence now, in order,
// hands each commit to a and writes the rows to w. It returns how many
// messages were skipped: not a commit, or a commit outside its subject.
func audit(ctx context.Context, r logReader, a *replay.Auditor, w *replay.AuditWriter) (skipped int, err error) {
	err = r.follow(ctx, 1, true, func(_ uint64, subject string, data []byte) error {
		skip, err := auditOne(a, w, subject, data)
		if skip {
			skipped++
		}
		return err
	})
	if err != nil {
		return skipped, err
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
