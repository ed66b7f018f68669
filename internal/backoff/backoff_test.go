package backoff

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Delay doubles from first up to limit and draws from [d/2, d].
func TestDelayDoublesWithinItsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		first := time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "first"))
		limit := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "limit"))
		n := rapid.IntRange(1, 80).Draw(t, "n")
		d := min(first, limit)
		for i := 1; i < n && d < limit; i++ {
			d = min(2*d, limit)
		}
		got := Delay(first, limit, n)
		if got < d/2 || got > d {
			t.Fatalf("Delay(%s, %s, %d) = %s, want within [%s, %s]", first, limit, n, got, d/2, d)
		}
	})
	if got := Delay(0, time.Second, 3); got != 0 {
		t.Fatalf("no first wait: %s", got)
	}
}

// Sleep ends early when its context does.
func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Fatal("slept an hour on a cancelled context")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("a short sleep reported its context ended")
	}
}
