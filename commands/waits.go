package commands

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

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

// remove unregisters w from k.
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
