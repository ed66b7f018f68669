package agent

import (
	"context"
	"errors"
	"time"

	"github.com/stepgate/stepgate/agent/model"
)

// Retry bounds how a provider's retryable errors (429, 5xx, a timeout)
// are sent again: at most Attempts requests in all, waiting Base, then
// twice as long each time up to Max, or the provider's Retry-After when it
// asks for longer (still at most Max).
type Retry struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultRetry is 5 attempts, from 1s up to 30s apart.
var DefaultRetry = Retry{Attempts: 5, Base: time.Second, Max: 30 * time.Second}

// delay is how long to wait before attempt n+1 (n from 1) after err.
func (r Retry) delay(n int, err *model.Error) time.Duration {
	d := r.Base << min(n-1, 20)
	if err.RetryAfter > d {
		d = err.RetryAfter
	}
	return min(d, r.Max)
}

// next sends req for turn, again after a retryable error as r allows;
// the last error is returned (a *model.Error when the provider answered).
func (l *loop) next(ctx context.Context, req model.Request, turn int) (model.Turn, error) {
	r := l.cfg.Retry
	if r.Attempts < 1 {
		r = DefaultRetry
	}
	for n := 1; ; n++ {
		t, err := l.ask(ctx, req, turn, n)
		if err == nil {
			return t, nil
		}
		var me *model.Error
		if !errors.As(err, &me) || !me.Retryable || n >= r.Attempts || ctx.Err() != nil {
			return model.Turn{}, err
		}
		d := r.delay(n, me)
		l.cfg.Log.Warn("model provider: retrying", "attempt", n+1, "after", d, "status", me.Status, "err", me.Message)
		if err := l.cfg.sleep(ctx, d); err != nil {
			return model.Turn{}, err
		}
	}
}

// sleep waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
