package commands_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step/steptest"
)

// gauge is a tool that holds its call for a moment and records the most
// calls it saw running at once.
type gauge struct {
	running, most atomic.Int64
	calls         atomic.Int64
}

func (g *gauge) registry(t *testing.T) *executor.Registry {
	t.Helper()
	tools := withTestTools(t)
	type in struct {
		Text string `json:"text"`
	}
	tool, err := executor.New("gauge", "Holds the call for 20ms; records how many run at once.",
		func(ctx context.Context, _ executor.Call, in in) (string, error) {
			n := g.running.Add(1)
			defer g.running.Add(-1)
			for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
			}
			g.calls.Add(1)
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
			}
			return in.Text, nil
		}, executor.WithEffect(descriptor.Idempotent))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := executor.NewRegistry(append(tools, tool)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// A host runs at most MaxExecutions tool calls at once, over all its runs
// and steps; the others queue and all of them complete.
func TestExecutionsAreBoundedPerHost(t *testing.T) {
	s := steptest.Start(t, "")
	var g gauge
	h := startHostCfg(t, s, g.registry(t), commands.Config{Host: "h1", MaxExecutions: 3})
	ctx := ctxT(t)
	const runs, calls = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for r := range runs {
		wg.Go(func() {
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
			if err != nil {
				errs <- err
				return
			}
			cs := make([]commands.CallRequest, calls)
			for i := range cs {
				cs[i] = call(fmt.Sprint("c", i), "gauge", text{fmt.Sprint(r, i)})
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: cs})
			if err == nil && (!out.Final || len(out.Results) != calls || out.Results[0].IsError) {
				err = fmt.Errorf("run %d: outcome %+v", r, out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := g.calls.Load(); got != runs*calls {
		t.Fatalf("%d calls ran, want %d", got, runs*calls)
	}
	if most := g.most.Load(); most > 3 {
		t.Fatalf("%d calls ran at once, more than the host's 3 execution slots", most)
	}
	t.Logf("at most %d of %d calls ran at once", g.most.Load(), runs*calls)
}

// A call that waits for an execution slot does not run once its ctx ends:
// it says so, and nothing hangs.
func TestAQueuedCallHonoursItsContext(t *testing.T) {
	s := steptest.Start(t, "")
	var g gauge
	h := startHostCfg(t, s, g.registry(t), commands.Config{Host: "h1", MaxExecutions: 1})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]commands.CallRequest, 50) // 50 × 20ms one at a time: 1s
	for i := range cs {
		cs[i] = call(fmt.Sprint("c", i), "gauge", text{"x"})
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, _ = h.SubmitStep(short, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: cs})
	if n := g.calls.Load(); n >= int64(len(cs)) {
		t.Fatalf("all %d calls ran after their ctx ended", n)
	}
	t.Logf("%d of %d calls ran before the ctx ended", g.calls.Load(), len(cs))
}
