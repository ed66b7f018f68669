package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/projection"
)

// How long AwaitStep waits for a step to be final when the request names no
// timeout, and the longest a request may name.
const (
	DefaultAwaitTimeout = 5 * time.Minute
	MaxAwaitTimeout     = time.Hour
)

// awaitSyncEvery is how often, while steps are awaited and nothing changed,
// the projection is synced with the stream (a slow follower).
const awaitSyncEvery = time.Second

// StepWatcher awaits a step without holding a goroutine per waiter: a
// service answers each waiter from the engine's one watcher. The in-process
// [Engine] implements it.
type StepWatcher interface {
	// WatchStep calls done exactly once: with the step's outcome once it is
	// final, or with an error — the step or run is not there or has ended,
	// the request is invalid, its timeout passed ([ErrAwaitTimeout]) or ctx
	// ended. done may run before WatchStep returns, or later on the
	// engine's watcher goroutine: it must not block for long, and must not
	// modify the outcome (waiters of one step share it). Safe for
	// concurrent use.
	WatchStep(ctx context.Context, req AwaitRequest, done func(*StepOutcome, error))
}

var _ StepWatcher = (*Engine)(nil)

// awaitTimeout is req's deadline: its Timeout, or the default.
func awaitTimeout(req AwaitRequest) (time.Duration, error) {
	if req.Timeout == "" {
		return DefaultAwaitTimeout, nil
	}
	d, err := time.ParseDuration(req.Timeout)
	if err != nil || d <= 0 || d > MaxAwaitTimeout {
		return 0, fmt.Errorf("await step %d of run %s: timeout %q: a duration above 0 and at most %s: %w",
			req.Step, req.Run, req.Timeout, MaxAwaitTimeout, ErrInvalidRequest)
	}
	return d, nil
}

// AwaitStep answers [Engine.AwaitStep].
func (h *awaiter) AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error) {
	type result struct {
		out *StepOutcome
		err error
	}
	ch := make(chan result, 1)
	h.WatchStep(ctx, req, func(out *StepOutcome, err error) { ch <- result{out, err} })
	r := <-ch
	return r.out, r.err
}

// WatchStep answers [Engine.WatchStep].
func (h *awaiter) WatchStep(ctx context.Context, req AwaitRequest, done func(*StepOutcome, error)) {
	d, err := awaitTimeout(req)
	if err != nil {
		done(nil, err)
		return
	}
	h.known(ctx, req.Run)
	key := awaitKey{run: req.Run, step: req.Step}
	if out, _, over := h.stepState(key); !over || out == nil {
		// Finished, or begun, by a commit this host has not folded yet?
		// Catch up with the run once before refusing or waiting; look
		// again even if it found nothing (the follower may have folded it
		// meanwhile).
		if err := h.catchUp(ctx, req.Run); err != nil {
			done(nil, fmt.Errorf("await step %d of run %s: %w", req.Step, req.Run, err))
			return
		}
	}
	if out, err, over := h.stepState(key); over {
		done(out, err)
		return
	}
	w := &waiter{done: done}
	w.mu.Lock() // finish waits until the timer and the ctx hook are set
	defer w.mu.Unlock()
	if !h.waits.add(key, w) { // nothing else holds w
		done(nil, fmt.Errorf("await step %d of run %s: the host stopped: %w", req.Step, req.Run, ErrUnavailable))
		return
	}
	w.timer = time.AfterFunc(d, func() {
		h.waits.remove(key, w)
		w.finish(nil, fmt.Errorf("await step %d of run %s: not final after %s: %w", req.Step, req.Run, d, ErrAwaitTimeout))
	})
	w.stopCtx = context.AfterFunc(ctx, func() {
		h.waits.remove(key, w)
		w.finish(nil, fmt.Errorf("await step %d of run %s: %w", req.Step, req.Run, context.Cause(ctx)))
	})
	if h.waits.start() {
		go h.watch()
	}
}

// stepState looks at an awaited step: over is true when waiting is over,
// with the outcome of a final step or the error that ends the wait.
func (h *awaiter) stepState(k awaitKey) (out *StepOutcome, err error, over bool) {
	r, verr := h.header(k.run)
	if verr != nil {
		return nil, verr, true
	}
	s, verr := h.stepOf(&r, k.step)
	if verr != nil {
		return nil, verr, true
	}
	exists, ended := s != nil, r.Status == projection.StatusEnded
	if s != nil && s.Final {
		out = outcomeOf(r.ID, s)
	}
	switch {
	case out != nil:
		return out, nil, true
	case !exists:
		return nil, fmt.Errorf("await step %d of run %s: no such step: %w", k.step, k.run, ErrStepOrder), true
	case ended:
		return nil, fmt.Errorf("await step %d of run %s: %w", k.step, k.run, ErrRunNotActive), true
	}
	return nil, nil, false
}

// watch is the engine's one watcher: at every change of the projection (and
// when a waiter registers) it looks once at each awaited step, whatever its
// number of waiters, and answers the waiters of those that are over. It
// returns when no step is awaited.
//
// A look at many steps costs: the watcher rests as long as its last look
// took before it looks again (at most half its time goes to looking, however
// busy the projection), so a host with many awaited steps still commits.
func (h *awaiter) watch() {
	tick := time.NewTicker(awaitSyncEvery)
	defer tick.Stop()
	for {
		changed := h.proj.Changed() // before looking: no change is missed
		keys, ok := h.waits.keysOrStop()
		if !ok {
			return
		}
		start := time.Now()
		for _, k := range keys {
			if out, err, over := h.stepState(k); over {
				for _, w := range h.waits.take(k) {
					w.finish(out, err)
				}
			}
		}
		if took := time.Since(start); took > time.Millisecond {
			time.Sleep(min(took, awaitSyncEvery))
		}
		select {
		case <-h.waits.stopped:
			h.waits.mu.Lock()
			h.waits.running = false
			h.waits.mu.Unlock()
			return
		case <-changed:
		case <-h.waits.kick:
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), awaitSyncEvery)
			_ = h.proj.Sync(ctx, h.log) // a slow follower: look at the stream now
			cancel()
		}
	}
}
