package integration

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// Two hosts race to commit the same step of one run: the stream's
// optimistic concurrency lets exactly one win; the loser gets a conflict and
// runs nothing with an effect.
func TestConcurrentSubmitCommitsOnce(t *testing.T) {
	s := steptest.Start(t, "")
	a, b := newCounted(t), newCounted(t)
	ha := startHost(t, s, a.reg, "a", "")
	hb := startHost(t, s, b.reg, "b", "")
	ctx := ctxT(t)
	const trials = 25
	for trial := range trials {
		info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		caughtUp(t, ha, hb) // host b learns of the run through its projector
		reqs := []commands.SubmitStepRequest{
			{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("from-a", "count_fx", "a")}},
			{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("from-b", "count_fx", "b")}},
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, h := range []*commands.Host{ha, hb} {
			wg.Go(func() { _, errs[i] = h.SubmitStep(ctx, reqs[i]) })
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, commands.ErrConflict):
			default:
				t.Fatalf("trial %d host %d: %v", trial, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("trial %d: %d hosts committed step 1, want exactly 1 (errors %v)", trial, won, errs)
		}
		if got := a.SideEffecting.Load() + b.SideEffecting.Load(); got != int64(trial+1) {
			t.Fatalf("trial %d: side-effecting executions so far = %d, want %d (the loser must run nothing)", trial, got, trial+1)
		}
		for _, h := range []*commands.Host{ha, hb} {
			r, err := h.Log.ReadRun(ctx, info.Run, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(r) != 3 { // start, decide, settle
				t.Fatalf("trial %d: the run holds %d commits, want 3", trial, len(r))
			}
		}
	}
	if a.SideEffecting.Load() == 0 || b.SideEffecting.Load() == 0 {
		t.Logf("one host won every race (a=%d b=%d); the races still had one winner each", a.SideEffecting.Load(), b.SideEffecting.Load())
	}
}

// The same calls submitted to both hosts at once: one execution, and both
// clients end with the same outcome — the loser, told of the conflict,
// waits for the step as a client does.
func TestConcurrentIdenticalSubmitsAgree(t *testing.T) {
	s := steptest.Start(t, "")
	a, b := newCounted(t), newCounted(t)
	ha := startHost(t, s, a.reg, "a", "")
	hb := startHost(t, s, b.reg, "b", "")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	caughtUp(t, ha, hb)
	req := commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", "once")}}
	var wg sync.WaitGroup
	outs := make([]*commands.StepOutcome, 2)
	for i, h := range []*commands.Host{ha, hb} {
		wg.Go(func() {
			out, err := h.SubmitStep(ctx, req)
			if errors.Is(err, commands.ErrConflict) {
				out, err = h.AwaitStep(ctx, commands.AwaitRequest{Run: req.Run, Step: req.Step})
			}
			if err != nil {
				t.Errorf("host %d: %v", i, err)
				return
			}
			outs[i] = out
		})
	}
	wg.Wait()
	if got := a.SideEffecting.Load() + b.SideEffecting.Load(); got != 1 {
		t.Errorf("executions = %d, want 1", got)
	}
	if outs[0] == nil || outs[1] == nil {
		t.Fatalf("a client got no outcome: %+v, %+v", outs[0], outs[1])
	}
	if diff := cmp.Diff(outs[0], outs[1], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("outcomes differ (-a +b):\n%s", diff)
	}
}
