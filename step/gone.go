package step

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotYet is the answer to a read of a stream sequence that the server
// answering has not got yet (its last sequence is lower), as opposed to one
// that was written and then deleted: try again. A leader that was paused
// past an election and has just woken up still answers as the leader for a
// moment, and its "no message" must not make a follower step past a commit.
var ErrNotYet = errors.New("the stream's leader has not got that sequence yet")

// confirmGone is asked after the stream's leader answered "no message" for
// seq: it returns nil when the stream info (also the leader's answer) shows
// seq was written and is gone — below the first sequence, or in the deleted
// set — and ErrNotYet otherwise. A stale leader lacks seq because it has not
// reached it, so its info shows a last sequence below seq; a leader that
// reached seq and has no message there deleted it. Only a read that found
// nothing pays for this, and the stream's messages are deleted only by an
// operator.
func (l *Log) confirmGone(ctx context.Context, seq uint64) error {
	info, err := l.stream.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		return err
	}
	st := info.State
	switch {
	case seq < st.FirstSeq:
		return nil
	case seq > st.LastSeq:
		return fmt.Errorf("sequence %d, its last is %d: %w", seq, st.LastSeq, ErrNotYet)
	case slices.Contains(st.Deleted, seq):
		return nil
	default:
		return fmt.Errorf("sequence %d was answered as missing but is not deleted: %w", seq, ErrNotYet)
	}
}
