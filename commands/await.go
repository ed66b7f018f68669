package commands

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// awaitKey names an awaited step.
type awaitKey struct {
	run  string
	step int
}

// waiter is one AwaitStep in progress.
type waiter struct {
	done  func(*StepOutcome, error)
	fired atomic.Bool

	mu      sync.Mutex // guards timer and stopCtx
	timer   *time.Timer
	stopCtx func() bool
}

// finish answers the waiter, once.
func (w *waiter) finish(out *StepOutcome, err error) {
	if !w.fired.CompareAndSwap(false, true) {
		return
	}
	w.mu.Lock()
	w.timer.Stop()
	w.stopCtx()
	w.mu.Unlock()
	w.done(out, err)
}

// stepWaits are the waiters by awaited step, and whether the watcher runs.
type stepWaits struct {
	mu      sync.Mutex
	byStep  map[awaitKey]map[*waiter]struct{}
	running bool
	kick    chan struct{} // buffered 1: a waiter registered
	stopped chan struct{} // closed when the host stops: no more waiting
	closed  bool
}

// newStepWaits returns an empty set of waiters.
func newStepWaits() *stepWaits {
	return &stepWaits{byStep: map[awaitKey]map[*waiter]struct{}{}, kick: make(chan struct{}, 1), stopped: make(chan struct{})}
}

// add registers w and wakes the watcher, which looks at its step at once
// (a change between the caller's look and add is not missed). It reports
// false, registering nothing, once the host stopped.
func (s *stepWaits) add(k awaitKey, w *waiter) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	ws := s.byStep[k]
	if ws == nil {
		ws = map[*waiter]struct{}{}
		s.byStep[k] = ws
	}
	ws[w] = struct{}{}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return true
}

// stop ends all waiting: every waiter is answered [ErrUnavailable] (the
// step may yet become final: ask another host, or this one once it is
// back), the watcher returns, and later waiters are answered at once.
func (s *stepWaits) stop() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stopped)
	var ws []*waiter
	for k, m := range s.byStep {
		for w := range m {
			ws = append(ws, w)
		}
		delete(s.byStep, k)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.finish(nil, fmt.Errorf("await: the host stopped: %w", ErrUnavailable))
	}
}

// start reports whether the caller must start the watcher.
func (s *stepWaits) start() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return false
	}
	s.running = true
	return true
}

func (s *stepWaits) remove(k awaitKey, w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ws := s.byStep[k]; ws != nil {
		delete(ws, w)
		if len(ws) == 0 {
			delete(s.byStep, k)
		}
	}
}

// take removes and returns the waiters of k.
func (s *stepWaits) take(k awaitKey) []*waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.byStep[k]
	delete(s.byStep, k)
	out := make([]*waiter, 0, len(ws))
	for w := range ws {
		out = append(out, w)
	}
	return out
}

// keysOrStop returns the awaited steps; with none it marks the watcher
// stopped (under the lock add's caller checks) and returns false.
func (s *stepWaits) keysOrStop() ([]awaitKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byStep) == 0 {
		s.running = false
		return nil, false
	}
	keys := make([]awaitKey, 0, len(s.byStep))
	for k := range s.byStep {
		keys = append(keys, k)
	}
	return keys, true
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
