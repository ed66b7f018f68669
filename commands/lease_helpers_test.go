package commands_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// blocking is a registry with block_fx, a side-effecting tool that counts
// its runs, says it started, and returns once its trial's gate opens.
type blocking struct {
	reg     *executor.Registry
	runs    atomic.Int64
	started chan string
	gate    atomic.Pointer[chan struct{}]
}

func newBlocking(t *testing.T) *blocking {
	t.Helper()
	b := &blocking{started: make(chan string, 16)}
	open := make(chan struct{})
	close(open)
	b.gate.Store(&open)
	tool, err := executor.New("block_fx", "Counts its runs and waits for its gate.",
		func(ctx context.Context, _ executor.Call, in struct {
			Text string `json:"text"`
		}) (string, error) {
			gate := *b.gate.Load()
			b.runs.Add(1)
			b.started <- in.Text
			select {
			case <-gate:
			case <-ctx.Done():
			}
			return in.Text, nil
		}, executor.WithEffect(descriptor.SideEffecting))
	if err != nil {
		t.Fatal(err)
	}
	tools := withTestTools(t)
	if b.reg, err = executor.NewRegistry(append(tools, tool)...); err != nil {
		t.Fatal(err)
	}
	return b
}

// closeGate makes the next calls wait; it returns what opens their gate.
func (b *blocking) closeGate() (open func()) {
	g := make(chan struct{})
	b.gate.Store(&g)
	return sync.OnceFunc(func() { close(g) })
}

func startLeased(t *testing.T, s *steptest.Server, reg *executor.Registry, host string, lease commands.LeaseConfig, max int) *commands.Host {
	t.Helper()
	h, err := commands.StartHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: t.TempDir(),
		Engine: commands.Config{Host: host, MaxExecutions: max}, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// recoverCommits counts the run's commits of kind recover.
func recoverCommits(t *testing.T, l *step.Log, run string) int {
	t.Helper()
	stored, err := l.ReadRun(ctxT(t), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range stored {
		if m.Commit != nil && m.Commit.Kind == events.KindRecover {
			n++
		}
	}
	return n
}
