package step_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

func commit(ids *events.IDSource, run string, n int) *events.Commit {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	return &events.Commit{ID: ids.New(at), Run: run, Step: n, Kind: events.KindStep, At: at,
		Events: []events.Event{events.StepFinalized{Calls: n}}}
}

func TestCommitAndReadRun(t *testing.T) {
	s := steptest.Start(t, "")
	ctx := context.Background()
	ids := events.NewIDSource(nil)
	run, other := ids.New(time.Now()), ids.New(time.Now())
	var want []*events.Commit
	var last, otherLast uint64
	for i := 1; i <= 3; i++ {
		c := commit(ids, run, i)
		seq, err := s.Log.Commit(ctx, c, last)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		// Another run's commits interleave on the stream.
		if otherLast, err = s.Log.Commit(ctx, commit(ids, other, i), otherLast); err != nil {
			t.Fatalf("commit other run: %v", err)
		}
		last = seq
		want = append(want, c)
	}
	got, err := s.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var gotCommits []*events.Commit
	for _, g := range got {
		gotCommits = append(gotCommits, g.Commit)
	}
	if diff := cmp.Diff(want, gotCommits); diff != "" {
		t.Errorf("ReadRun (-want +got):\n%s", diff)
	}
	tail, err := s.Log.ReadRun(ctx, run, got[1].Seq)
	if err != nil || len(tail) != 1 || tail[0].Commit.ID != want[2].ID {
		t.Errorf("ReadRun after the 2nd commit = %d commits, %v; want the 3rd only", len(tail), err)
	}
}

func TestCommitConflict(t *testing.T) {
	s := steptest.Start(t, "")
	ctx := context.Background()
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	if _, err := s.Log.Commit(ctx, commit(ids, run, 1), 0); err != nil {
		t.Fatal(err)
	}
	// A second writer that still believes the run is empty loses.
	_, err := s.Log.Commit(ctx, commit(ids, run, 1), 0)
	if !errors.Is(err, step.ErrConflict) {
		t.Fatalf("stale commit = %v, want ErrConflict", err)
	}
	got, _ := s.Log.ReadRun(ctx, run, 0)
	if len(got) != 1 {
		t.Errorf("run holds %d commits after a lost race, want 1", len(got))
	}
}

func TestRetriedCommitIsStoredOnce(t *testing.T) {
	s := steptest.Start(t, "")
	ctx := context.Background()
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	c := commit(ids, run, 1)
	first, err := s.Log.Commit(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The same commit published again, as a client retrying after a lost ack
	// would: same id, same expectation.
	again, err := s.Log.Commit(ctx, c, 0)
	if err != nil || again != first {
		t.Fatalf("retry = %d, %v; want the original sequence %d", again, err, first)
	}
	// Also after the run moved on, a retry of an older commit does not write
	// and still learns where its first attempt went.
	c2 := commit(ids, run, 2)
	if _, err := s.Log.Commit(ctx, c2, first); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Log.Commit(ctx, c, 0); err != nil || again != first {
		t.Errorf("retry of an older commit = %d, %v; want the original sequence %d", again, err, first)
	}
	// A different commit with the same stale expectation is a conflict.
	if _, err := s.Log.Commit(ctx, commit(ids, run, 1), 0); !errors.Is(err, step.ErrConflict) {
		t.Errorf("a new commit expecting an empty run = %v, want ErrConflict", err)
	}
	got, _ := s.Log.ReadRun(ctx, run, 0)
	if len(got) != 2 {
		t.Errorf("run holds %d commits, want 2", len(got))
	}
}

func TestCommitTooLarge(t *testing.T) {
	s := steptest.Start(t, "")
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	c := commit(ids, run, 1)
	c.Events = append(c.Events, events.RunEnded{Cause: "failed", Reason: strings.Repeat("x", step.DefaultMaxMsgSize)})
	if _, err := s.Log.Commit(context.Background(), c, 0); !errors.Is(err, step.ErrTooLarge) {
		t.Errorf("oversized commit = %v, want ErrTooLarge", err)
	}
}

func TestCommitRejectsBadRunID(t *testing.T) {
	s := steptest.Start(t, "")
	ids := events.NewIDSource(nil)
	for _, run := range []string{"", "a.b", "a*", "x y"} {
		if _, err := s.Log.Commit(context.Background(), commit(ids, run, 1), 0); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("run %q: %v, want ErrMalformed", run, err)
		}
	}
}

func TestFollowFromSequence(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	var last uint64
	for i := 1; i <= 5; i++ {
		seq, err := s.Log.Commit(ctx, commit(ids, run, i), last)
		if err != nil {
			t.Fatal(err)
		}
		last = seq
	}
	var seen []int
	errDone := errors.New("done")
	err := s.Log.Follow(ctx, 3, func(seq uint64, subject string, data []byte) error {
		st, err := step.Decode(seq, subject, data)
		if err != nil {
			return err
		}
		seen = append(seen, st.Commit.Step)
		if seq == last {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		t.Fatalf("Follow = %v", err)
	}
	if diff := cmp.Diff([]int{3, 4, 5}, seen); diff != "" {
		t.Errorf("steps followed from sequence 3 (-want +got):\n%s", diff)
	}
}

func TestDecodeOfUndecodableMessage(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.JS.Publish(ctx, "sg.run.garbage", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	err := s.Log.Follow(ctx, 1, func(seq uint64, subject string, data []byte) error {
		_, err := step.Decode(seq, subject, data)
		return err
	})
	if !errors.Is(err, events.ErrMalformed) {
		t.Errorf("Follow over garbage = %v, want ErrMalformed", err)
	}
}
