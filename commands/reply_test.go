package commands_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// askRules make count_fx ask for "ask *" texts.
var askRules = []gate.Rule{{Action: "count_fx", Resource: "ask *", Effect: gate.Ask}}

// awaiting starts a run and submits a step whose calls ask, returning the
// run and the outcome (not final, with tickets).
func awaiting(t *testing.T, h *commands.Host, project string, calls ...commands.CallRequest) (string, *commands.StepOutcome) {
	t.Helper()
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: project, Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	return info.Run, out
}

func results(o *commands.StepOutcome) []string {
	var out []string
	for _, r := range o.Results {
		out = append(out, r.CallID+": "+r.Content)
	}
	return out
}

func status(t *testing.T, h *commands.Host, run string) projection.Status {
	t.Helper()
	r, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

func TestReplyOnceRunsTheCallAndPublishesTheStep(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	run, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask me"}), call("b", "count_fx", text{"plain"}))
	if out.Final || len(out.Results) != 0 || len(out.Tickets) != 1 {
		t.Fatalf("step with an ask: final=%v results=%d tickets=%d; want not final, no results, one ticket", out.Final, len(out.Results), len(out.Tickets))
	}
	if cnt.SideEffecting.Load() != 1 {
		t.Errorf("the allowed call of the step ran %d times while the other waited, want 1", cnt.SideEffecting.Load())
	}
	if got := status(t, h, run); got != projection.StatusAwaiting {
		t.Errorf("run status %s, want awaiting", got)
	}
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Approved || res.Outcome == nil {
		t.Fatalf("reply = %+v, want approved with the final outcome", res)
	}
	if diff := cmp.Diff([]string{"a: ask me", "b: plain"}, results(res.Outcome)); diff != "" {
		t.Errorf("results in model order (-want +got):\n%s", diff)
	}
	if cnt.SideEffecting.Load() != 2 || status(t, h, run) != projection.StatusRunning {
		t.Errorf("after the reply: %d executions, status %s; want 2 and running", cnt.SideEffecting.Load(), status(t, h, run))
	}
	if grants, _ := h.Grants(ctx, commands.GrantsRequest{Project: "p1"}); len(grants) != 0 {
		t.Errorf("a once reply saved %d grants", len(grants))
	}
}

func TestReplyAlwaysSavesAndApprovesTheProject(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	run1, out1 := awaiting(t, h, "p1", call("a", "count_fx", text{"ask one"}), call("b", "count_fx", text{"ask two"}))
	run2, out2 := awaiting(t, h, "p1", call("c", "count_fx", text{"ask three"}))
	run3, out3 := awaiting(t, h, "p2", call("d", "count_fx", text{"ask four"}))
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out1.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == nil || len(res.Outcome.Results) != 2 {
		t.Fatalf("the other ticket of the same step was not approved with it: %+v", res)
	}
	grants, _ := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if len(grants) != 1 || grants[0].Action != "count_fx" || grants[0].Resource != "*" || grants[0].Principal != "ops" {
		t.Errorf("grants = %+v, want one count_fx * by ops", grants)
	}
	out, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: run2, Step: 1})
	if err != nil {
		t.Fatalf("the same project's other run: %v", err)
	}
	if diff := cmp.Diff([]string{"c: ask three"}, results(out)); diff != "" {
		t.Errorf("other run of the project (-want +got):\n%s", diff)
	}
	if got := status(t, h, run3); got != projection.StatusAwaiting {
		t.Errorf("a run of another project is %s, want still awaiting", got)
	}
	if cnt.SideEffecting.Load() != 3 {
		t.Errorf("executions = %d, want 3", cnt.SideEffecting.Load())
	}
	// A later call of the project is allowed by the grant without asking.
	step2, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run1, Step: 2, Calls: []commands.CallRequest{call("e", "count_fx", text{"ask again"})}})
	if err != nil || !step2.Final || step2.Results[0].Rule == nil || step2.Results[0].Rule.Source != gate.SourceSaved {
		t.Errorf("a call the grant covers: %+v, %v; want allowed by the saved approval", step2, err)
	}
	_ = out2
	_ = out3
}

func TestAlwaysNeverApprovesWhatConfigurationDenies(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	_, out1 := awaiting(t, h, "p1", call("a", "count_fx", text{"ask one"}))
	run2, _ := awaiting(t, h, "p1", call("b", "count_fx", text{"ask two"}))
	// The configuration now denies count_fx: the host that gets the reply
	// sees it (a deny of its own approval blocks it too).
	deny := startHostWith(t, s, reg, "h2", func(agent string) gate.Ruleset {
		return gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceUser},
			{Action: "count_fx", Resource: "ask two", Effect: gate.Deny, Source: gate.SourceUser}}
	})
	caughtUp(t, h, deny)
	if _, err := deny.Reply(ctx, commands.ReplyRequest{Ticket: out1.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if got := status(t, deny, run2); got != projection.StatusAwaiting {
		t.Errorf("a ticket the configuration now denies was approved by an always: run is %s", got)
	}
}

func TestResumedApprovalUnderADenyIsBlocked(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	_, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask me"}))
	deny := startHostWith(t, s, reg, "h2", func(string) gate.Ruleset {
		return gate.Ruleset{{Action: "count_fx", Resource: "*", Effect: gate.Deny, Source: gate.SourceProject}}
	})
	caughtUp(t, h, deny)
	res, err := deny.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Approved || res.Outcome == nil {
		t.Fatalf("reply = %+v, want not approved, step final", res)
	}
	if got := res.Outcome.Results[0].Content; got != `blocked: denied by rule count_fx "*" (project config)` {
		t.Errorf("result = %q", got)
	}
	if cnt.SideEffecting.Load() != 0 {
		t.Error("the call ran although the configuration denies it now")
	}
}

func TestRejectCascadesAndDeclines(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	run, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask one"}), call("b", "count_fx", text{"ask two"}))
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyReject, Message: "not now", Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a: " + commands.RejectedWith("not now"), "b: " + commands.RejectedRelatedResult}
	if diff := cmp.Diff(want, results(res.Outcome)); diff != "" {
		t.Errorf("reject with feedback (-want +got):\n%s", diff)
	}
	if got := status(t, h, run); got != projection.StatusRunning {
		t.Errorf("after a reject with feedback the run is %s, want running", got)
	}

	run2, out2 := awaiting(t, h, "p1", call("c", "count_fx", text{"ask three"}))
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out2.Tickets[0].ID, Reply: events.ReplyReject, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	r, _ := h.Show(ctx, commands.ShowRequest{Run: run2})
	if r.Status != projection.StatusEnded || r.End.Cause != events.CauseDeclined {
		t.Errorf("after a reject without feedback: %s %+v, want ended declined", r.Status, r.End)
	}
	if cnt.SideEffecting.Load() != 0 {
		t.Errorf("rejected calls ran %d times", cnt.SideEffecting.Load())
	}
}

func TestReplyValidation(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	clock := &fakeClock{now: time.Now()}
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", Clock: clock.Now})
	ctx := ctxT(t)
	run, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask me"}))
	other, _ := awaiting(t, h, "p1", call("b", "count_fx", text{"ask me too"}))
	ticket := out.Tickets[0].ID

	expiring, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Rules: askRules, TicketTTL: "1m"})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: expiring.Run, Step: 1, Calls: []commands.CallRequest{call("x", "count_fx", text{"ask late"})}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := awaiting(t, h, "p1", call("c", "count_fx", text{"ask done"}))
	doneOut, _ := tickets(ctx, h, commands.TicketsRequest{Run: done})
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: doneOut[0].ID, Reply: events.ReplyOnce, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * time.Minute)

	tests := []struct {
		why  string
		req  commands.ReplyRequest
		code string
	}{
		{"an unknown ticket", commands.ReplyRequest{Ticket: "01JDZ0000000000000000000ZZ", Reply: "once", Principal: "ops"}, commands.CodeTicketNotFound},
		{"a ticket of another run", commands.ReplyRequest{Ticket: ticket, Run: other, Reply: "once", Principal: "ops"}, commands.CodeTicketNotFound},
		{"a resolved ticket", commands.ReplyRequest{Ticket: doneOut[0].ID, Reply: "once", Principal: "ops"}, commands.CodeTicketResolved},
		{"an expired ticket", commands.ReplyRequest{Ticket: exp.Tickets[0].ID, Reply: "once", Principal: "ops"}, commands.CodeTicketExpired},
		{"answers to a permission ticket", commands.ReplyRequest{Ticket: ticket, Reply: "answer", Principal: "ops"}, commands.CodeTicketKind},
		{"no principal", commands.ReplyRequest{Ticket: ticket, Reply: "once"}, commands.CodeInvalidInput},
	}
	before, err := h.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := h.Reply(ctx, tt.req)
			if got := commands.Code(err); got != tt.code {
				t.Errorf("Reply = %v (code %q), want %q", err, got, tt.code)
			}
		})
	}
	if after, _ := h.Log.LastSeq(ctx); after != before {
		t.Errorf("refused replies committed %d messages", after-before)
	}
	// The sweeper settles the expired ticket as expired.
	if err := h.SweepTickets(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: expiring.Run, Step: 1})
	if err != nil || got.Results[0].Content != commands.ExpiredResult {
		t.Errorf("expired ticket settles as %+v, %v", got, err)
	}
	_ = run
}

// Two hosts receive the same reply at the same time: the call runs once.
func TestSameReplyOnTwoHostsRunsOnce(t *testing.T) {
	s := steptest.Start(t, "")
	var ca, cb counter
	ha := startHost(t, s, registry(t, &ca), "a")
	hb := startHost(t, s, registry(t, &cb), "b")
	ctx := ctxT(t)
	for trial := range 100 {
		_, out := awaiting(t, ha, "p1", call("a", "count_fx", text{"ask me"}))
		caughtUp(t, ha, hb)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, h := range []*commands.Host{ha, hb} {
			wg.Go(func() {
				_, errs[i] = h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if !errors.Is(err, commands.ErrTicketResolved) {
				t.Fatalf("trial %d: %v", trial, err)
			}
		}
		if ok != 1 {
			t.Fatalf("trial %d: %d replies took effect, want 1 (%v)", trial, ok, errs)
		}
		if n := ca.SideEffecting.Load() + cb.SideEffecting.Load(); n != int64(trial+1) {
			t.Fatalf("trial %d: %d executions in all, want %d", trial, n, trial+1)
		}
	}
}

func TestAwaitStepSeesAReplyOnAnotherHost(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha := startHost(t, s, reg, "a")
	hb := startHost(t, s, reg, "b")
	ctx := ctxT(t)
	run, out := awaiting(t, ha, "p1", call("a", "count_fx", text{"ask me"}))
	waited := make(chan *commands.StepOutcome, 1)
	go func() {
		o, err := ha.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1})
		if err != nil {
			t.Error(err)
		}
		waited <- o
	}()
	caughtUp(t, ha, hb)
	if _, err := hb.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-waited:
		if o == nil || !o.Final || o.Results[0].Content != "ask me" {
			t.Errorf("await = %+v", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitStep on host a did not see the reply on host b")
	}
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// An ask rule's own ticket_ttl sets the deadline of the tickets it asks for.
func TestRuleTicketTTL(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	clock := &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", Clock: clock.Now})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), TicketTTL: "1h",
		Rules: []gate.Rule{{Action: "count_fx", Resource: "ask *", Effect: gate.Ask, TicketTTL: "5m"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{"ask me"})}})
	if err != nil {
		t.Fatal(err)
	}
	if d := out.Tickets[0].Deadline; d == nil || !d.Equal(clock.now.Add(5*time.Minute)) {
		t.Errorf("deadline %v, want the rule's 5m, not the run's 1h", d)
	}
	if _, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "x", Resource: "*", Effect: gate.Deny, TicketTTL: "5m"}}}); commands.Code(err) != commands.CodeInvalidInput {
		t.Errorf("a ticket_ttl on a deny rule: %v, want invalid_input", err)
	}
}

// The agent's configured ticket_ttl bounds its tickets; a run may ask for
// a shorter wait, never a longer one.
func TestAgentTicketTTL(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	clock := &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", Clock: clock.Now,
		Policy: func(string, string) commands.Policy {
			return commands.Policy{TicketTTL: 30 * time.Minute, Rules: gate.Ruleset{
				{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceUser},
				{Action: "count_fx", Resource: "ask *", Effect: gate.Ask, Source: gate.SourceUser}}}
		}})
	ctx := ctxT(t)
	for _, tc := range []struct {
		runTTL string
		want   time.Duration
	}{{"", 30 * time.Minute}, {"10m", 10 * time.Minute}, {"2h", 30 * time.Minute}} {
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), TicketTTL: tc.runTTL})
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{"ask me"})}})
		if err != nil {
			t.Fatal(err)
		}
		if d := out.Tickets[0].Deadline; d == nil || !d.Equal(clock.now.Add(tc.want)) {
			t.Errorf("run ticket_ttl %q under the agent's 30m: deadline %v, want +%s", tc.runTTL, d, tc.want)
		}
	}
}

// An "always" that approves a ticket of another run of the project names
// itself in that resolution: the log says which reply (and so which saved
// approvals) let the other run's call go.
func TestAutoApprovalInAnotherRunNamesTheAlways(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	_, out1 := awaiting(t, h, "p1", call("a", "count_fx", text{"ask one"}))
	run2, _ := awaiting(t, h, "p1", call("c", "count_fx", text{"ask three"}))
	always := out1.Tickets[0].ID
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: always, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: run2, Step: 1}); err != nil {
		t.Fatal(err)
	}
	r, err := h.Show(ctx, commands.ShowRequest{Run: run2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tickets) != 1 || r.Tickets[0].Resolution == nil {
		t.Fatalf("run 2's tickets: %+v, want one resolved", r.Tickets)
	}
	res := r.Tickets[0].Resolution
	if res.Reply != events.ResolvedAuto || res.By != always {
		t.Errorf("run 2's ticket resolved %q by %q; want %q by the always ticket %s", res.Reply, res.By, events.ResolvedAuto, always)
	}
}
