package mcp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stepgate/stepgate/executor/mcp"
)

// A server that keeps failing is down from its first failure on, through
// every attempt after it: a user who lists the servers at any moment sees
// it down with why, never "connecting" as if it had not failed yet.
func TestAServerThatKeepsFailingStaysDownWhileItTriesAgain(t *testing.T) {
	const attempts = 5
	var (
		r      atomic.Pointer[running]
		mu     sync.Mutex
		phases []mcp.State
		done   = make(chan struct{})
		once   sync.Once
	)
	refused := errors.New("the secret is not set")
	run := startResolve(t, "locked", func(context.Context) (mcp.Server, error) {
		if c := r.Load(); c != nil { // the state as the attempt begins
			mu.Lock()
			phases = append(phases, c.c.State())
			if len(phases) == attempts {
				once.Do(func() { close(done) })
			}
			mu.Unlock()
		}
		return mcp.Server{}, refused
	})
	r.Store(run)
	select {
	case <-done:
	case <-t.Context().Done():
		t.Fatal("the client stopped trying")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, st := range phases {
		if i == 0 && st.Phase == mcp.Connecting { // the first attempt may be the one recorded
			continue
		}
		if st.Phase != mcp.Down || !strings.Contains(st.LastError, refused.Error()) {
			t.Errorf("attempt %d began in state %s (%q), want down with the last error", i+1, st.Phase, st.LastError)
		}
	}
}
