package step

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// relay sends, on the channel it returns, conv of each update w delivers
// (conv gets nil for the end of the initial values; ok false drops an
// update) until ctx ends or w stops; the channel is closed then and w
// stopped. The buckets' watches (leases, holders, the fleet's
// configuration) are this one loop.
func relay[T any](ctx context.Context, w jetstream.KeyWatcher, conv func(jetstream.KeyValueEntry) (T, bool)) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		for {
			var e jetstream.KeyValueEntry
			select {
			case <-ctx.Done():
				return
			case got, ok := <-w.Updates():
				if !ok {
					return
				}
				e = got
			}
			u, ok := conv(e)
			if !ok {
				continue
			}
			select {
			case out <- u:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
