// Package backoff holds the one jittered exponential backoff of Stepgate's
// retry loops (MCP reconnects, webhook deliveries) and a sleep that ends
// with its context.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry n (from 1): first doubled n-1 times, at
// most limit, then drawn uniformly from [d/2, d] so that clients retrying
// the same peer spread out. A first or limit not above zero gives 0.
func Delay(first, limit time.Duration, n int) time.Duration {
	if first <= 0 || limit <= 0 {
		return 0
	}
	d := min(first, limit)
	for i := 1; i < n && d < limit; i++ {
		d = min(2*d, limit)
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits for d, or until ctx ends; it reports false when ctx ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
