package projection_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// consumerCount is how many consumers the log's stream holds.
func consumerCount(t *testing.T, s *steptest.Server) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

func deleteSeqs(t *testing.T, s *steptest.Server, from, to uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	for seq := from; seq <= to; seq++ {
		if err := stream.DeleteMsg(ctx, seq); err != nil {
			t.Fatalf("delete stream sequence %d: %v", seq, err)
		}
	}
}

// A projector follows the stream with one consumer, however the commits
// come (long gaps, short ones), and leaves none behind when it stops.
func TestOneConsumerFollowsTheTail(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	runs := []string{w.start(), w.start()}
	p, err := projection.Open(filepath.Join(t.TempDir(), "projections.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	stop := follow(t, p, s.Log)
	for batch, n := range []int{1, 40, 3, 100, 17, 2} {
		for i := range n {
			w.echo(runs[i%2])
		}
		wait(t, p, w.seq)
		if got := consumerCount(t, s); got != 1 {
			t.Fatalf("after batch %d (%d commits) the stream holds %d consumers, want 1", batch, n, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Sync(ctx, s.Log); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != context.Canceled {
		t.Fatalf("Follow = %v, want context.Canceled", err)
	}
	if got := consumerCount(t, s); got != 0 {
		t.Errorf("a projector that stopped following left %d consumers", got)
	}
}

// Messages deleted from the stream — in the middle of a long gap, and at
// its end, where the tail has nothing more to deliver — are stepped past:
// a fresh projector reaches the stream's last sequence, and Sync returns.
func TestTheTailStepsPastDeletedMessages(t *testing.T) {
	s := steptest.Start(t, "")
	w := newWriter(t, s.Log)
	runs := []string{w.start(), w.start(), w.start()}
	for i := range 80 {
		w.echo(runs[i%3])
	}
	deleteSeqs(t, s, 10, 40)          // 31 in the middle
	deleteSeqs(t, s, w.seq-19, w.seq) // the last 20
	p := following(t, s.Log, w.seq-20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Sync(ctx, s.Log); err != nil {
		t.Fatalf("Sync with the stream's last 20 messages deleted: %v", err)
	}
	if got := p.Seq(); got != w.seq {
		t.Errorf("the projector is at stream sequence %d, want %d", got, w.seq)
	}
}
