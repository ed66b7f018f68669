package step_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// A retried commit is recognised by the stream's leader, not by whoever
// answers a direct get. Here a mirror that holds none of the run's commits
// answers the stream's direct gets too (as a mirror of a stream with direct
// gets does), the way a replica that has not yet applied them would: a
// direct get of the run's commit misses about every other time. The retry
// of a stored commit must still find its first attempt every time, not call
// it another writer's (a conflict).
func TestRetryRecognisedWhileADirectGetLags(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The mirror starts answering direct gets once it has caught up with
	// what it mirrors: one message outside the runs.
	if _, err := s.JS.Publish(ctx, "sg.output", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name:         "LAGGING",
		Mirror:       &jetstream.StreamSource{Name: step.DefaultStream, FilterSubject: "sg.output"},
		MirrorDirect: true,
	}); err != nil {
		t.Fatal(err)
	}
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	c := commit(ids, run, 1)
	first, err := s.Log.Commit(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	for lagging := false; !lagging; time.Sleep(10 * time.Millisecond) {
		_, err := stream.GetMsg(ctx, first)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			lagging = true
		case err != nil:
			t.Fatal(err)
		case ctx.Err() != nil:
			t.Fatal("the mirror never answered a direct get")
		}
	}
	if _, err := s.Log.Commit(ctx, commit(ids, run, 2), first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * step.DefaultDuplicates) // past the server's de-duplication window
	for i := range 20 {
		if again, err := s.Log.Commit(ctx, c, 0); err != nil || again != first {
			t.Fatalf("retry %d of a stored commit = %d, %v; want its sequence %d", i+1, again, err, first)
		}
	}
}
