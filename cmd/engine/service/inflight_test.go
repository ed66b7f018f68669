package service

import (
	"sync"
	"testing"
)

// A request arriving while the service stops is refused, never counted:
// counting it raced stop's Wait, and sync.WaitGroup panicked ("WaitGroup
// is reused before previous Wait has returned") when a flood of await
// requests met a stop.
func TestInflightRefusesRequestsOnceStopBegins(t *testing.T) {
	for range 200 {
		var f inflight
		var entered, refused sync.WaitGroup
		start := make(chan struct{})
		var mu sync.Mutex
		counted := 0
		for range 8 {
			entered.Go(func() {
				<-start
				for range 50 {
					if !f.enter() {
						return
					}
					mu.Lock()
					counted++
					mu.Unlock()
					f.leave()
				}
			})
		}
		close(start)
		f.stop()
		refused.Wait()
		if f.enter() {
			t.Fatal("a request entered after stop returned")
		}
		entered.Wait()
	}
}
