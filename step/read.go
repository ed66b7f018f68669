package step

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
)

// Stored is a commit as read back from the log.
type Stored struct {
	// Seq is the stream sequence.
	Seq uint64
	// Subject the commit was stored under.
	Subject string
	// Commit is the decoded envelope; nil when Data is not a commit (see
	// ReadRun).
	Commit *events.Commit
	// Data is the message as stored.
	Data []byte
}

// Decode turns a stored message into a [Stored]. Undecodable bytes give an
// error wrapping events.ErrMalformed.
func Decode(seq uint64, subject string, data []byte) (Stored, error) {
	c, err := events.Unmarshal(data)
	if err != nil {
		return Stored{}, fmt.Errorf("stream sequence %d: %w", seq, err)
	}
	return Stored{Seq: seq, Subject: subject, Commit: c, Data: data}, nil
}

// ReadRun returns the messages of one run's subject with a stream sequence
// greater than after, in order, using direct gets filtered by the subject.
// A message that does not decode is returned too, with a nil Commit: the
// projection quarantines it, and the run's next commit expects its
// sequence all the same.
func (l *Log) ReadRun(ctx context.Context, run string, after uint64) ([]Stored, error) {
	subject := events.RunSubject(run)
	var out []Stored
	for seq := after + 1; ; {
		m, err := l.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, translate(fmt.Sprintf("read run %s from %d", run, seq), err)
		}
		s, err := Decode(m.Sequence, m.Subject, m.Data)
		if err != nil {
			s = Stored{Seq: m.Sequence, Subject: m.Subject, Data: m.Data}
		}
		out = append(out, s)
		seq = m.Sequence + 1
	}
}

// Follow delivers every message with a stream sequence ≥ from, in order, to
// fn — its sequence, subject and the encoded commit, which fn decodes with
// events.Unmarshal only if it needs it — and keeps following new ones until
// ctx ends or fn returns an error. It returns fn's error, or ctx's. Log
// satisfies projection.Source.
//
// It reads through one ordered consumer (an ephemeral consumer the client
// recreates from where it stopped after a missed heartbeat or a server
// restart), deleted when Follow returns; one left behind by a process that
// died goes after [FollowInactive]. While nothing is committed the client
// sends the server a pull request every [followPullExpiry] and the server
// sends it a heartbeat every [followHeartbeat]: an idle follower costs the
// server well under one request a second.
func (l *Log) Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error {
	if from == 0 {
		from = 1
	}
	cons, err := l.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		InactiveThreshold: FollowInactive,
	})
	if err != nil {
		return fmt.Errorf("follow stream %s from %d: %w", l.cfg.Name, from, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(followBatch),
		jetstream.PullHeartbeat(followHeartbeat), jetstream.PullExpiry(followPullExpiry))
	if err != nil {
		l.dropConsumer(cons)
		return fmt.Errorf("follow stream %s from %d: %w", l.cfg.Name, from, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer func() {
		stop()
		it.Stop()
		l.dropConsumer(cons)
	}()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("follow stream %s: %w", l.cfg.Name, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("follow stream %s: %w", l.cfg.Name, err)
		}
		if err := fn(md.Sequence.Stream, m.Subject(), m.Data()); err != nil {
			return err
		}
	}
}

// dropConsumer deletes the server's side of an ordered consumer that is no
// longer read, so that a follower that stopped leaves nothing behind;
// best effort (the server removes it after FollowInactive anyway).
func (l *Log) dropConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), followDropTimeout)
	defer cancel()
	_ = l.js.DeleteConsumer(ctx, l.cfg.Name, info.Name)
}

// Get returns the message at stream sequence seq; found is false when the
// message was written and is gone (deleted or purged). A message found is
// right from whichever replica answers (a stored message never changes), so
// it is a direct get; only "not found" is asked of the stream's leader and
// confirmed by its stream info, since a lagging replica, or a leader paused
// past an election, says it for a sequence it has not reached. Such a
// sequence is an error wrapping [ErrNotYet], never "not found": a follower
// may step past a missing message only when it is known to be gone.
func (l *Log) Get(ctx context.Context, seq uint64) (subject string, data []byte, found bool, err error) {
	op := fmt.Sprintf("get stream sequence %d", seq)
	if d, err := l.stream.GetMsg(ctx, seq); err == nil {
		return d.Subject, d.Data, true, nil
	} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil, false, translate(op, err)
	}
	m, found, err := l.leaderGet(ctx, msgGet{Seq: seq})
	if err != nil {
		return "", nil, false, translate(op, err)
	}
	if !found {
		if err := l.confirmGone(ctx, seq); err != nil {
			return "", nil, false, translate(op, err)
		}
		return "", nil, false, nil
	}
	return m.Subject, m.Data, true, nil
}

// SubjectLastSeq returns the sequence of the last message on subject, 0 when
// there is none: the expectation of the subject's next commit.
func (l *Log) SubjectLastSeq(ctx context.Context, subject string) (uint64, error) {
	m, found, err := l.leaderGet(ctx, msgGet{LastFor: subject})
	if err != nil {
		return 0, translate("last message on "+subject, err)
	}
	if !found {
		return 0, nil
	}
	return m.Sequence, nil
}
