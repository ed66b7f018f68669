package commands_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// hold is a Pause that holds the host at one point, the first time it is
// met, until released; reached is closed when it is met.
type hold struct {
	point   string
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func newHold(point string) *hold {
	return &hold{point: point, reached: make(chan struct{}), release: make(chan struct{})}
}

func (h *hold) pause(ctx context.Context, point string) {
	if point != h.point {
		return
	}
	first := false
	h.once.Do(func() { first = true; close(h.reached) })
	if first {
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}
}

// noQuarantine fails the test when a host skipped a message of the log.
func noQuarantine(t *testing.T, hosts ...*commands.Host) {
	t.Helper()
	for _, h := range hosts {
		q, err := h.Quarantine(ctxT(t), commands.QuarantineRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if q.Total != 0 {
			t.Errorf("a host quarantined %d messages: %+v", q.Total, q.Messages)
		}
	}
}

// A step whose only call asks is decided on one host; before that host
// records that the step awaits, an operator's reply on another host answers
// the ticket and its call runs there. The submitter's mark, late, is not an
// error: the step was answered, and its submission gets its ticket.
func TestAReplyOnAnotherHostBeforeTheStepIsMarkedAwaiting(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	held := newHold("decided")
	a := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "a", Pause: held.pause})
	b := startHost(t, s, registry(t, &cnt), "b")
	ctx := ctxT(t)
	info, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	var (
		out       *commands.StepOutcome
		submitErr error
		wg        sync.WaitGroup
	)
	wg.Go(func() {
		out, submitErr = a.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("c", "count_fx", text{"ask me"})}})
	})
	<-held.reached
	caughtUp(t, a, b)
	page, err := tickets(ctx, b, commands.TicketsRequest{Run: info.Run})
	if err != nil || len(page) != 1 {
		t.Fatalf("tickets on b: %v %v", page, err)
	}
	res, err := b.Reply(ctx, commands.ReplyRequest{Ticket: page[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatalf("reply on b: %v", err)
	}
	close(held.release)
	wg.Wait()
	if submitErr != nil {
		t.Fatalf("the submission whose ticket was answered before it was marked awaiting: %v", submitErr)
	}
	if len(out.Tickets) != 1 || out.Tickets[0].ID != page[0].ID {
		t.Errorf("the submission's outcome: %+v, want its ticket", out)
	}
	if res.Outcome == nil || !cmp.Equal(results(res.Outcome), []string{"c: ask me"}) {
		t.Errorf("the reply's outcome: %+v", res.Outcome)
	}
	if n := cnt.SideEffecting.Load(); n != 1 {
		t.Errorf("the approved call ran %d times, want 1", n)
	}
	caughtUp(t, b, a)
	for _, h := range []*commands.Host{a, b} {
		r, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != projection.StatusRunning || len(r.Steps) != 1 || !r.Steps[0].Final {
			t.Errorf("the run as a host shows it: %s, %d steps", r.Status, len(r.Steps))
		}
	}
	noQuarantine(t, a, b)
}

// A step of two calls — one allowed that runs long on host a, one that
// asks — is answered on host b while a still runs its call. The reply
// waits for that call's result (on one host the run's lock orders them),
// then runs its own call and finalizes the step with both results. Without
// the wait it would finalize the step with a call still open: a commit every
// fold refuses, and the approved call's result lost with it.
func TestAReplyWaitsForTheCallOfItsStepThatRunsOnAnotherHost(t *testing.T) {
	s := steptest.Start(t, "")
	blk := newBlocking(t)
	waits := newHold("reply-waits")
	close(waits.release) // it only says the reply waits
	rules := []gate.Rule{{Action: "echo_fx", Resource: "*", Effect: gate.Ask}}
	a := startHost(t, s, blk.reg, "a")
	b := startHostCfg(t, s, blk.reg, commands.Config{Host: "b", Pause: waits.pause})
	ctx := ctxT(t)
	info, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	open := blk.closeGate()
	defer open()
	var (
		out                 *commands.StepOutcome
		res                 *commands.ReplyResult
		submitErr, replyErr error
		wg                  sync.WaitGroup
	)
	wg.Go(func() {
		out, submitErr = a.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
			{ID: "long", Tool: "block_fx", Args: json.RawMessage(`{"text":"ran long"}`)},
			{ID: "asks", Tool: "echo_fx", Args: json.RawMessage(`{"text":"approved"}`)}}})
	})
	<-blk.started
	caughtUp(t, a, b)
	page, err := tickets(ctx, b, commands.TicketsRequest{Run: info.Run})
	if err != nil || len(page) != 1 {
		t.Fatalf("tickets on b: %v %v", page, err)
	}
	replied := make(chan struct{})
	wg.Go(func() {
		defer close(replied)
		res, replyErr = b.Reply(ctx, commands.ReplyRequest{Ticket: page[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	})
	select {
	case <-waits.reached:
	case <-replied: // it did not wait: what it did is checked below
	}
	open()
	wg.Wait()
	if submitErr != nil || replyErr != nil {
		t.Fatalf("submit: %v; reply: %v", submitErr, replyErr)
	}
	if len(out.Tickets) != 1 {
		t.Errorf("the submission's outcome: %+v, want its ticket", out)
	}
	if res.Outcome == nil || !cmp.Equal(results(res.Outcome), []string{"long: ran long", "asks: approved"}) {
		t.Fatalf("the reply's outcome: %+v, want the step final with both results", res.Outcome)
	}
	if n := blk.runs.Load(); n != 1 {
		t.Errorf("the long call ran %d times, want 1", n)
	}
	caughtUp(t, b, a)
	r, err := a.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != projection.StatusRunning || len(r.Steps) != 1 || !r.Steps[0].Final {
		t.Errorf("the run: %s, %d steps", r.Status, len(r.Steps))
	}
	noQuarantine(t, a, b)
}

// longAndAsking submits, on h in the background, a step of two calls: one
// allowed that runs until blk's gate opens, one that asks. It returns once
// the long call runs, with what waits for the submission.
func longAndAsking(t *testing.T, h *commands.Host, blk *blocking, run, text string) (wait func() *commands.StepOutcome) {
	t.Helper()
	var (
		out *commands.StepOutcome
		err error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, err = h.SubmitStep(ctxT(t), commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{
			{ID: "long", Tool: "block_fx", Args: json.RawMessage(`{"text":"ran long"}`)},
			{ID: "asks", Tool: "echo_fx", Args: json.RawMessage(`{"text":"` + text + `"}`)}}})
	}()
	<-blk.started
	return func() *commands.StepOutcome {
		<-done
		if err != nil || len(out.Tickets) != 1 {
			t.Fatalf("the step of a long and an asking call: %+v, %v", out, err)
		}
		return out
	}
}

// A ticket whose deadline passes while another call of its step runs on
// another host is not swept there meanwhile: the sweep that would finalize
// the step waits for the next round, which expires the ticket once the
// long call's result is in.
func TestTheSweepLeavesAStepWhoseCallRunsOnAnotherHost(t *testing.T) {
	s := steptest.Start(t, "")
	blk := newBlocking(t)
	clock := &fakeClock{now: time.Now()}
	a := startHost(t, s, blk.reg, "a")
	b := startHostCfg(t, s, blk.reg, commands.Config{Host: "b", Clock: clock.Now})
	ctx := ctxT(t)
	info, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), TicketTTL: "1m",
		Rules: []gate.Rule{{Action: "echo_fx", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	open := blk.closeGate()
	defer open()
	submitted := longAndAsking(t, a, blk, info.Run, "never")
	caughtUp(t, a, b)
	clock.advance(2 * time.Minute)
	if err := b.SweepTickets(ctx); err != nil {
		t.Fatalf("a sweep while the step's other call runs: %v", err)
	}
	open()
	submitted()
	caughtUp(t, a, b)
	if err := b.SweepTickets(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := b.AwaitStep(ctx, commands.AwaitRequest{Run: info.Run, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"long: ran long", "asks: " + commands.ExpiredResult}; !cmp.Equal(results(out), want) {
		t.Errorf("the step once swept: %q, want %q", results(out), want)
	}
	noQuarantine(t, a, b)
}

// An "always" on host b approves the other runs of its project, but not a
// step whose other call still runs on host a: that ticket stays for a
// human, and the step is not finalized with its long call open.
func TestAnAlwaysLeavesAStepWhoseCallRunsOnAnotherHost(t *testing.T) {
	s := steptest.Start(t, "")
	blk := newBlocking(t)
	rules := []gate.Rule{{Action: "echo_fx", Resource: "*", Effect: gate.Ask}}
	a := startHost(t, s, blk.reg, "a")
	b := startHost(t, s, blk.reg, "b")
	ctx := ctxT(t)
	start := func(h *commands.Host) string {
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "p", Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		return info.Run
	}
	x, y := start(b), start(a)
	asked, err := b.SubmitStep(ctx, commands.SubmitStepRequest{Run: x, Step: 1, Calls: []commands.CallRequest{
		{ID: "x", Tool: "echo_fx", Args: json.RawMessage(`{"text":"first"}`)}}})
	if err != nil || len(asked.Tickets) != 1 {
		t.Fatalf("run x: %+v, %v", asked, err)
	}
	open := blk.closeGate()
	defer open()
	submitted := longAndAsking(t, a, blk, y, "later")
	caughtUp(t, a, b)
	if _, err := b.Reply(ctx, commands.ReplyRequest{Ticket: asked.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if g, _ := b.Grants(ctx, commands.GrantsRequest{Project: "p"}); len(g) == 0 {
		t.Fatal("the always saved no approval")
	}
	open()
	out := submitted()
	caughtUp(t, a, b)
	if got := status(t, a, y); got != projection.StatusAwaiting {
		t.Errorf("run y is %s, want still awaiting its ticket", got)
	}
	res, err := a.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"long: ran long", "asks: later"}; res.Outcome == nil || !cmp.Equal(results(res.Outcome), want) {
		t.Errorf("run y once answered: %+v, want %q", res.Outcome, want)
	}
	noQuarantine(t, a, b)
}

// A reply waits for a call running on a host that is then gone: the host
// that takes over its lease settles that call as indeterminate, and the
// reply, waiting meanwhile, goes on from there and finishes the step.
func TestAReplyWaitingOnAGoneHostGoesOnAfterTheTakeover(t *testing.T) {
	s := steptest.Start(t, "")
	blk := newBlocking(t)
	gone := startLeased(t, s, blk.reg, "gone", commands.LeaseConfig{Off: true}, 0)
	waits := newHold("reply-waits")
	close(waits.release)
	taker, err := commands.StartHost(ctxT(t), s.JS, blk.reg, commands.HostConfig{StateDir: t.TempDir(),
		Engine: commands.Config{Host: "b", Pause: waits.pause}, Lease: commands.LeaseConfig{TTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taker.Close() })
	leases, err := step.OpenLeases(ctxT(t), s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	info, err := gone.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "echo_fx", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	open := blk.closeGate()
	defer open()
	submitted := make(chan error, 1)
	go func() {
		_, err := gone.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
			{ID: "long", Tool: "block_fx", Args: json.RawMessage(`{"text":"ran long"}`)},
			{ID: "asks", Tool: "echo_fx", Args: json.RawMessage(`{"text":"approved"}`)}}})
		submitted <- err
	}()
	<-blk.started
	caughtUp(t, gone, taker)
	page, err := tickets(ctx, taker, commands.TicketsRequest{Run: info.Run})
	if err != nil || len(page) != 1 {
		t.Fatalf("tickets: %v %v", page, err)
	}
	var res *commands.ReplyResult
	replied := make(chan error, 1)
	go func() {
		var err error
		res, err = taker.Reply(ctx, commands.ReplyRequest{Ticket: page[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
		replied <- err
	}()
	select {
	case <-waits.reached: // the reply waits for the long call's result
	case err := <-replied: // it did not wait: what it did is checked below
		replied <- err
	}
	rev, err := leases.Put(ctx, step.Lease{Host: "gone", State: step.LeaseHeld, By: "gone", At: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if won, err := taker.TakeOver(ctx, "gone", rev); !won || err != nil {
		t.Fatalf("takeover = %v, %v", won, err)
	}
	if err := <-replied; err != nil {
		t.Fatalf("the reply after the takeover: %v", err)
	}
	if want := []string{"long: " + commands.IndeterminateResult, "asks: approved"}; res.Outcome == nil || !cmp.Equal(results(res.Outcome), want) {
		t.Errorf("the reply's outcome: %+v, want %q", res.Outcome, want)
	}
	open()
	if err := <-submitted; commands.Code(err) != commands.CodeConflict {
		t.Errorf("the gone host's step = %v, want its result refused (code %s)", err, commands.CodeConflict)
	}
	noQuarantine(t, gone, taker)
}
