package step

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
)

// Commit appends c as one message on its run's subject, expecting last to be
// the run's last subject sequence (0 for a run with no commits yet). It
// returns the stream sequence the commit got.
//
// The message carries Nats-Msg-Id = c.ID: a retried commit with the same id
// and expectation is never stored twice, and Commit returns the sequence the
// first attempt got, even after other commits followed it. When another writer
// committed to the run first, Commit returns an error wrapping [ErrConflict]
// and nothing is written. An encoded commit over the message limit gives
// [ErrTooLarge]. Safe for concurrent use; ctx bounds the wait for the ack.
func (l *Log) Commit(ctx context.Context, c *events.Commit, last uint64) (uint64, error) {
	if !events.ValidID(c.Run) {
		return 0, fmt.Errorf("commit %s: run id %q is not a ULID: %w", c.ID, c.Run, events.ErrMalformed)
	}
	return l.CommitTo(ctx, events.RunSubject(c.Run), c, last)
}

// CommitTo is Commit on any subject of the log (a project's grants, say),
// with the same one-message, de-duplicated, optimistic-concurrency contract:
// last is the subject's last sequence, 0 for an empty subject.
func (l *Log) CommitTo(ctx context.Context, subject string, c *events.Commit, last uint64) (uint64, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if !strings.HasPrefix(subject, events.Root+".") || strings.ContainsAny(subject, " \t\r\n*>") {
		return 0, fmt.Errorf("commit %s: subject %q is not a log subject: %w", c.ID, subject, events.ErrMalformed)
	}
	bp := l.buffers.Get().(*[]byte)
	defer l.buffers.Put(bp)
	data, err := events.Append((*bp)[:0], c)
	if err != nil {
		return 0, err
	}
	*bp = data // keep the grown buffer; the client copies data before the ack returns
	if len(data) > int(l.cfg.MaxMsgSize) {
		return 0, fmt.Errorf("commit %s to %s: %d bytes > %d: %w", c.ID, subject, len(data), l.cfg.MaxMsgSize, ErrTooLarge)
	}
	msg := l.message(subject, data, c.ID, last)
	ack, err := l.pub.Publish(ctx, msg)
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		msg.Data = nil // answered: the client holds it no longer
		l.msgs.Put(msg)
	}
	if err == nil {
		return ack.Sequence, nil
	}
	err = translate(fmt.Sprintf("commit %s to %s", c.ID, subject), err)
	if errors.Is(err, ErrConflict) {
		// A retry of a commit that was already stored fails the sequence
		// check: recognise our own commit where it must be.
		seq, ok, rerr := l.storedAfter(ctx, subject, last, c.ID)
		if ok {
			return seq, nil
		}
		if Unavailable(rerr) {
			// Not known whether it is ours: the caller tries the same
			// commit again once NATS is back.
			return 0, fmt.Errorf("commit %s to %s: recognise a retried commit: %w", c.ID, subject, rerr)
		}
	}
	return 0, err
}

// storedAfter reports whether commit id is the first message on subject
// after sequence last. A commit stored with expectation last is exactly
// there, whatever was committed after it, so this recognises a retried
// commit without the server's de-duplication window.
// The stream's leader answers (the sequence check that refused the commit
// was the leader's too): a replica that has not yet applied the commit would
// call it another writer's. The error is the read's, when it failed.
func (l *Log) storedAfter(ctx context.Context, subject string, last uint64, id string) (uint64, bool, error) {
	m, found, err := l.leaderGet(ctx, msgGet{Seq: last + 1, NextFor: subject})
	if err != nil || !found {
		return 0, false, err
	}
	if m.Header.Get(jetstream.MsgIDHeader) != id {
		return 0, false, nil
	}
	return m.Sequence, true, nil
}

// message returns a message for a commit with its two headers, reusing one
// whose publish was answered.
func (l *Log) message(subject string, data []byte, id string, last uint64) *nats.Msg {
	m, _ := l.msgs.Get().(*nats.Msg)
	if m == nil {
		m = &nats.Msg{Header: nats.Header{jetstream.MsgIDHeader: make([]string, 1), jetstream.ExpectedLastSubjSeqHeader: make([]string, 1)}}
	}
	m.Subject, m.Data = subject, data
	m.Header[jetstream.MsgIDHeader][0] = id
	m.Header[jetstream.ExpectedLastSubjSeqHeader][0] = strconv.FormatUint(last, 10)
	return m
}
