package step_test

import (
	"context"
	"testing"

	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// A host asking for another replica count than the existing stream's keeps
// the stream's and reports both: opening an R1 stream with Replicas 3 (which
// this single server could not even serve) neither fails nor changes it.
func TestOpenKeepsAnExistingStreamsReplicas(t *testing.T) {
	s := steptest.Start(t, "") // made the stream with the default, 1 replica
	ctx := context.Background()
	if have, asked := s.Log.Replicas(); have != 1 || asked != 1 {
		t.Fatalf("fresh stream: replicas %d, asked %d; want 1 and 1", have, asked)
	}
	l, err := step.Open(ctx, s.JS, step.StreamConfig{Replicas: 3})
	if err != nil {
		t.Fatalf("open the R1 stream asking for 3 replicas: %v", err)
	}
	if have, asked := l.Replicas(); have != 1 || asked != 3 {
		t.Errorf("replicas %d, asked %d; want the stream's 1 kept and 3 asked", have, asked)
	}
	info, err := s.JS.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if r := info.CachedInfo().Config.Replicas; r != 1 {
		t.Errorf("the stream has %d replicas after the open, want 1", r)
	}
}
