package step_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// A follower steps past a stream sequence only when its message is known to
// be gone. A deleted message is "not found"; a sequence the leader has not
// reached — what a leader paused past an election answers for a moment
// after it wakes up — is ErrNotYet, so the follower asks again rather than
// skip a commit it will never read.
func TestGetTellsDeletedFromNotYetWritten(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	first, err := s.Log.Commit(ctx, commit(ids, run, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Log.Commit(ctx, commit(ids, run, 2), first)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.DeleteMsg(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := s.Log.Get(ctx, first); err != nil || found {
		t.Fatalf("Get of the deleted sequence %d: found %v, err %v; want not found, no error", first, found, err)
	}
	if subject, _, found, err := s.Log.Get(ctx, second); err != nil || !found || subject != events.RunSubject(run) {
		t.Fatalf("Get of sequence %d: %q, found %v, err %v", second, subject, found, err)
	}
	_, _, found, err := s.Log.Get(ctx, second+1)
	if !errors.Is(err, step.ErrNotYet) || found {
		t.Fatalf("Get of sequence %d, past the stream's last: found %v, err %v; want ErrNotYet", second+1, found, err)
	}
}
