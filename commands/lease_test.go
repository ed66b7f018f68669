package commands_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// Two hosts race to take over one expired lease, 20 times: each time
// exactly one claim is stored, the gone host's step in doubt is settled
// once (one recover commit, the side-effecting call indeterminate, never
// started again), the record names the winner, and the gone host's own
// result, when its call returns, is refused.
func TestTwoHostsRaceToTakeOverOneLease(t *testing.T) {
	s := steptest.Start(t, "")
	b := newBlocking(t)
	long := commands.LeaseConfig{TTL: time.Hour} // no takeover of their own: the test races them
	gone := startLeased(t, s, b.reg, "gone", commands.LeaseConfig{Off: true}, 0)
	hosts := []*commands.Host{startLeased(t, s, b.reg, "b", long, 0), startLeased(t, s, b.reg, "c", long, 0)}
	leases, err := step.OpenLeases(ctxT(t), s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	var rev uint64
	wins := map[string]int{}
	const trials = 20
	for trial := range trials {
		open := b.closeGate()
		info, err := gone.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		submitted := make(chan error, 1)
		go func() {
			_, err := gone.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
				Calls: []commands.CallRequest{call("fx", "block_fx", map[string]string{"text": "x"})}})
			submitted <- err
		}()
		<-b.started // the decide commit is in, the call runs
		// gone's record as its renewals left it, a TTL ago.
		if rev, err = leases.Put(ctx, step.Lease{Host: "gone", State: step.LeaseHeld, By: "gone", At: time.Now()}, rev); err != nil {
			t.Fatal(err)
		}
		won := make([]bool, len(hosts))
		errs := make([]error, len(hosts))
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Go(func() { won[i], errs[i] = h.TakeOver(ctx, "gone", rev) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if won[0] == won[1] {
			t.Fatalf("trial %d: b won %v, c won %v; want exactly one", trial, won[0], won[1])
		}
		winner := hosts[0]
		if won[1] {
			winner = hosts[1]
		}
		run, err := winner.Show(ctx, commands.ShowRequest{Run: info.Run})
		if err != nil {
			t.Fatal(err)
		}
		st := run.Step(1)
		if st == nil || !st.Final || st.Calls[0].Result == nil || st.Calls[0].Result.Parts[0].Text != commands.IndeterminateResult || st.Calls[0].Attempts != 1 {
			t.Fatalf("trial %d: step 1 after the takeover: %+v, want final, indeterminate, started once", trial, st)
		}
		if n := recoverCommits(t, s.Log, info.Run); n != 1 {
			t.Errorf("trial %d: %d recover commits, want 1", trial, n)
		}
		rec, err := leases.Get(ctx, "gone")
		if err != nil {
			t.Fatal(err)
		}
		name := map[bool]string{true: "c", false: "b"}[won[1]]
		if rec.State != step.LeaseSettled || rec.By != name || rec.Steps != 1 {
			t.Errorf("trial %d: gone's record %+v, want settled by %s, 1 step", trial, rec.Lease, name)
		}
		wins[name]++
		rev = rec.Revision
		open() // gone's call returns: its result comes after the takeover's
		if err := <-submitted; commands.Code(err) != commands.CodeConflict {
			t.Errorf("trial %d: gone's step = %v, want its result refused (code %s)", trial, err, commands.CodeConflict)
		}
		if n := recoverCommits(t, s.Log, info.Run); n != 1 {
			t.Errorf("trial %d: after gone's result, %d recover commits, want 1", trial, n)
		}
	}
	if got := b.runs.Load(); got != trials {
		t.Errorf("block_fx ran %d times, want %d (once per trial)", got, trials)
	}
	t.Logf("wins: %v", wins)
}

// A step that still awaits a human when the gone host's lease is taken
// over: the takeover settles the call in doubt as indeterminate and the step
// goes on awaiting; the gone host's result, when its call returns, is
// refused rather than recorded a second time (which every fold would
// quarantine).
func TestResultAfterATakeoverOfAnAwaitingStepIsRefused(t *testing.T) {
	s := steptest.Start(t, "")
	b := newBlocking(t)
	gone := startLeased(t, s, b.reg, "gone", commands.LeaseConfig{Off: true}, 0)
	taker := startLeased(t, s, b.reg, "b", commands.LeaseConfig{TTL: time.Hour}, 0)
	leases, err := step.OpenLeases(ctxT(t), s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	open := b.closeGate()
	info, err := gone.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "echo", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	submitted := make(chan error, 1)
	go func() {
		_, err := gone.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
			call("fx", "block_fx", map[string]string{"text": "x"}), call("ask", "echo", map[string]string{"text": "y"})}})
		submitted <- err
	}()
	<-b.started
	rev, err := leases.Put(ctx, step.Lease{Host: "gone", State: step.LeaseHeld, By: "gone", At: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if won, err := taker.TakeOver(ctx, "gone", rev); !won || err != nil {
		t.Fatalf("takeover = %v, %v", won, err)
	}
	open()
	if err := <-submitted; commands.Code(err) != commands.CodeConflict {
		t.Errorf("gone's step = %v, want its result refused (code %s)", err, commands.CodeConflict)
	}
	caughtUp(t, gone, taker)
	r, err := taker.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Step(1); st.Final || st.Calls[0].Result == nil || st.Calls[0].Result.Parts[0].Text != commands.IndeterminateResult || st.Calls[1].Result != nil {
		t.Errorf("step 1: %+v; want awaiting, the call in doubt indeterminate", st)
	}
	if q := taker.Backlog().Quarantined; q != 0 {
		t.Errorf("%d messages quarantined: the gone host's result was committed after the takeover's", q)
	}
}

// A host whose lease was taken over while its call waited for an execution
// slot does not start that call: it was decided under the lost lease. The
// call settles as not run, and the host, holding its lease again, runs the
// next call.
func TestCallDecidedUnderALostLeaseDoesNotStart(t *testing.T) {
	s := steptest.Start(t, "")
	b := newBlocking(t)
	a := startLeased(t, s, b.reg, "a", commands.LeaseConfig{TTL: time.Second}, 1)
	leases, err := step.OpenLeases(ctxT(t), s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	submit := func(run string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := a.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1,
				Calls: []commands.CallRequest{call("fx", "block_fx", map[string]string{"text": run})}})
			done <- err
		}()
		return done
	}
	start := func() string {
		info, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return info.Run
	}
	open := b.closeGate()
	first, second := start(), start()
	firstDone := submit(first)
	<-b.started // first holds the only execution slot
	secondDone := submit(second)
	waitFor(t, "second's decide commit", func() bool {
		r, err := a.Show(ctx, commands.ShowRequest{Run: second})
		return err == nil && len(r.Steps) == 1 && r.Steps[0].Calls[0].Attempts == 1
	})
	// Another host takes a's lease over: a's next renewal is refused.
	cur, err := leases.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Put(ctx, step.Lease{Host: "a", State: step.LeaseTaken, By: "other", At: time.Now()}, cur.Revision); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a holding its lease again", func() bool {
		r, err := leases.Get(ctx, "a")
		return err == nil && r.State == step.LeaseHeld && r.Revision > cur.Revision+1 && a.Lease().Held
	})
	open()
	if err := <-firstDone; err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("second: %v", err)
	}
	r, err := a.Show(ctx, commands.ShowRequest{Run: second})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Steps[0].Calls[0].Result.Parts[0].Text; got != commands.LeaseLostResult {
		t.Errorf("second's call settled as %q, want %q", got, commands.LeaseLostResult)
	}
	if got := b.runs.Load(); got != 1 {
		t.Errorf("block_fx ran %d times, want 1 (the second call never started)", got)
	}
	third := start()
	if err := <-submit(third); err != nil || b.runs.Load() != 2 {
		t.Errorf("a call after the lease is held again: %v, %d runs; want it run", err, b.runs.Load())
	}
}

// A host that cannot renew its lease (here: the bucket is gone) answers a
// step with calls to run with the retryable code unavailable, commits
// nothing and runs nothing, until it holds its lease again.
func TestHostWithoutItsLeaseStartsNoCall(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	a := startLeased(t, s, registry(t, &cnt), "a", commands.LeaseConfig{TTL: 300 * time.Millisecond}, 0)
	ctx := ctxT(t)
	info, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Lease().Held {
		t.Fatal("a started without its lease")
	}
	if err := s.JS.DeleteKeyValue(ctx, step.DefaultStream+step.LeaseBucketSuffix); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a's lease to lapse", func() bool { return !a.Lease().Held })
	before, _ := s.Log.LastSeq(ctx)
	fx := commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", map[string]string{"text": "x"})}}
	_, err = a.SubmitStep(ctx, fx)
	if commands.Code(err) != commands.CodeUnavailable {
		t.Fatalf("a step without the lease = %v, want code %s", err, commands.CodeUnavailable)
	}
	t.Logf("refused: %v", err)
	if after, _ := s.Log.LastSeq(ctx); after != before || cnt.SideEffecting.Load() != 0 {
		t.Fatalf("without its lease a committed %d messages and ran count_fx %d times, want none", after-before, cnt.SideEffecting.Load())
	}
	if _, err := step.OpenLeases(ctx, s.JS, s.Log); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a's lease held again", func() bool { return a.Lease().Held })
	if _, err := a.SubmitStep(ctx, fx); err != nil || cnt.SideEffecting.Load() != 1 {
		t.Fatalf("with its lease again: %v, count_fx ran %d times; want once", err, cnt.SideEffecting.Load())
	}
}

// waitFor polls cond for 10 s at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10s", what)
		}
	}
}
