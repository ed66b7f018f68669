package commands

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// A host starting while its lease bucket does not answer yet — a bucket
// just made on a cluster has no leader for a moment, and a get finds no
// responders — waits for it instead of failing its start. Here the bucket's
// stream is deleted under an opened bucket (its gets find no responders),
// and made again a moment after the host asked for its lease.
func TestLeaseAcquireWaitsForABucketThatDoesNotAnswerYet(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ls, err := step.OpenLeases(ctx, s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	bucket := step.DefaultStream + step.LeaseBucketSuffix
	if err := s.JS.DeleteKeyValue(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	l := newHostLease(ls, "h", "i", LeaseConfig{TTL: 5 * time.Second}, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	acquired := make(chan error, 1)
	go func() { acquired <- l.acquire(ctx) }()
	select {
	case err := <-acquired:
		t.Fatalf("acquire returned before the bucket was back: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := step.OpenLeases(ctx, s.JS, s.Log); err != nil {
		t.Fatal(err)
	}
	if err := <-acquired; err != nil {
		t.Fatalf("acquire once the bucket answers: %v", err)
	}
	if _, ok := l.valid(); !ok {
		t.Fatal("the lease is not held after acquire")
	}
}
