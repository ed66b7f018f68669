package service

import "sync"

// inflight counts the requests the service is handling, so that stop can
// wait for them. A request that arrives once stop has begun is not counted
// and must be refused: sync.WaitGroup forbids an Add that races a Wait whose
// counter may reach zero ("WaitGroup is reused before previous Wait has
// returned"), which a request arriving during stop did.
type inflight struct {
	mu      sync.RWMutex
	stopped bool
	wg      sync.WaitGroup
}

// enter counts one request and reports true, or reports false once stop has
// begun. Every true must be matched by one leave.
func (f *inflight) enter() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.stopped {
		return false
	}
	f.wg.Add(1)
	return true
}

// leave ends one request entered with enter.
func (f *inflight) leave() { f.wg.Done() }

// stop refuses every later enter and waits for the requests entered before.
func (f *inflight) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.wg.Wait()
}
