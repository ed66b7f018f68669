package commands_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// bound is the API as caller c uses it on h.
func bound(h *commands.Host, c commands.Caller) commands.Bound {
	return commands.Bound{W: commands.Wire{Host: h}, Caller: c}
}

// A run is its principal's: another caller gets run_not_found from every
// endpoint that names it (ticket_not_found for its ticket, grant_not_found
// for its project's grant), sees neither it nor its tickets nor its grants
// in a listing, cannot take its id for a start of its own, and changes
// nothing; an overseer of its project, and one of every run, see it. A
// start without a principal is refused.
func TestBoundCallerSeesOnlyItsRuns(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	a := bound(h, commands.Caller{Principal: "nats:A/a"})
	b := bound(h, commands.Caller{Principal: "nats:B/b"})
	ofPA := bound(h, commands.Caller{Principal: "nats:APPROVERS/pa", Projects: []string{"pa", "pg"}})
	ofPB := bound(h, commands.Caller{Principal: "nats:APPROVERS/pb", Projects: []string{"pb"}})
	ops := bound(h, commands.Caller{Principal: "nats:OPS/ops", All: true})

	loc := t.TempDir()
	info, err := a.StartRun(ctx, commands.StartRunRequest{Location: loc, Project: "pa", Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	run := info.Run
	if _, err := a.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{"one"})}}); err != nil {
		t.Fatal(err)
	}
	out, err := a.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 2, Calls: []commands.CallRequest{call("w", "count_fx", text{"ask me"})}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("step 2: %+v, %v", out, err)
	}
	// A grant of project pg (another run of a's), saved by its overseer.
	other, err := a.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "pg", Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := a.SubmitStep(ctx, commands.SubmitStepRequest{Run: other.Run, Step: 1, Calls: []commands.CallRequest{call("g", "count_fx", text{"ask grant"})}})
	if err != nil || len(asked.Tickets) != 1 {
		t.Fatalf("the other run's step: %+v, %v", asked, err)
	}
	if _, err := ofPA.Reply(ctx, commands.ReplyRequest{Ticket: asked.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "someone"}); err != nil {
		t.Fatal(err)
	}
	ticket := out.Tickets[0].ID
	grants, err := ops.Grants(ctx, commands.GrantsRequest{})
	if err != nil || len(grants) != 1 {
		t.Fatalf("grants: %+v, %v", grants, err)
	}
	grant := grants[0]
	if grant.Principal != "nats:APPROVERS/pa" {
		t.Errorf("the grant records principal %q, want the caller's nats:APPROVERS/pa", grant.Principal)
	}
	before, err := ops.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if before.Snapshot.Principal != "nats:A/a" {
		t.Fatalf("the run records principal %q, want nats:A/a", before.Snapshot.Principal)
	}

	for _, other := range []struct {
		who string
		api commands.Bound
	}{{"another agent", b}, {"the overseer of another project", ofPB}} {
		for name, err := range map[string]error{
			"materialize": second(other.api.Materialize(ctx, commands.MaterializeRequest{Run: run})),
			"submit_step": second(other.api.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 3, Calls: []commands.CallRequest{call("x", "count_fx", text{"one"})}})),
			"await_step":  second(other.api.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 2, Timeout: "1ms"})),
			"watch_step":  watch(t, other.api, commands.AwaitRequest{Run: run, Step: 2, Timeout: "1ms"}),
			"show":        second(other.api.Show(ctx, commands.ShowRequest{Run: run})),
			"run_facts":   second(other.api.RunFacts(ctx, commands.RunFactsRequest{Run: run})),
			"tickets":     second(other.api.Tickets(ctx, commands.TicketsRequest{Run: run})),
			"fork":        second(other.api.Fork(ctx, commands.ForkRequest{Run: run, At: 1})),
			"end_run":     second(other.api.EndRun(ctx, commands.EndRunRequest{Run: run, Reason: "hijacked"})),
		} {
			if !errors.Is(err, commands.ErrRunNotFound) {
				t.Errorf("%s: %s of the run: %v, want run_not_found", other.who, name, err)
			}
		}
		if _, err := other.api.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "nats:A/a"}); !errors.Is(err, commands.ErrTicketNotFound) {
			t.Errorf("%s: reply to the run's ticket: %v, want ticket_not_found", other.who, err)
		}
		if _, err := other.api.RevokeGrant(ctx, commands.RevokeRequest{ID: grant.ID, Principal: "x"}); !errors.Is(err, commands.ErrGrantNotFound) {
			t.Errorf("%s: revoke a grant of a project it does not oversee: %v, want grant_not_found", other.who, err)
		}
		if page, err := other.api.Tickets(ctx, commands.TicketsRequest{}); err != nil || len(page.Tickets) != 0 {
			t.Errorf("%s lists tickets %+v (%v), want none", other.who, page, err)
		}
		if runs, err := other.api.Runs(ctx); err != nil || slices.ContainsFunc(runs, func(r client.RunSummary) bool { return r.ID == run }) {
			t.Errorf("%s lists runs %+v (%v), want none", other.who, runs, err)
		}
		if page, err := other.api.RunsPage(ctx, commands.RunsRequest{}); err != nil || slices.ContainsFunc(page.Runs, func(r client.RunSummary) bool { return r.ID == run }) {
			t.Errorf("%s lists a page of runs %+v (%v), want none of the run's", other.who, page, err)
		}
		if gs, err := other.api.Grants(ctx, commands.GrantsRequest{Project: "pg"}); err != nil || len(gs) != 0 {
			t.Errorf("%s lists grants %+v (%v), want none", other.who, gs, err)
		}
	}
	// The run's id is not a way in: a start with it, as the run was started,
	// is a conflict and changes nothing.
	if _, err := b.StartRun(ctx, commands.StartRunRequest{Run: run, Location: loc, Project: "pa", Rules: askRules}); !errors.Is(err, commands.ErrConflict) {
		t.Errorf("another agent starts a run with the run's id: %v, want conflict", err)
	}
	mine, err := b.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "pb"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.SubmitStep(ctx, commands.SubmitStepRequest{Run: mine.Run, Step: 1, Calls: []commands.CallRequest{call("m", "count", text{"one"})}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fork(ctx, commands.ForkRequest{Run: mine.Run, At: 1, Fork: run}); !errors.Is(err, commands.ErrConflict) {
		t.Errorf("another agent forks its own run into the run's id: %v, want conflict", err)
	}
	after, err := ops.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil || after.Commits != before.Commits || after.Status != before.Status || after.Tickets[0].Resolution != nil {
		t.Fatalf("the run after the others' attempts: %+v, %v", after, err)
	}

	// Its principal and its overseers see it; the fork is the forker's.
	for _, who := range []commands.Bound{a, ofPA, ops} {
		if _, err := who.Show(ctx, commands.ShowRequest{Run: run}); err != nil {
			t.Errorf("%s shows the run: %v", who.Caller.Principal, err)
		}
		if page, err := who.Tickets(ctx, commands.TicketsRequest{}); err != nil || len(page.Tickets) != 1 {
			t.Errorf("%s lists tickets %+v (%v), want the run's", who.Caller.Principal, page, err)
		}
	}
	if gs, err := ofPA.Grants(ctx, commands.GrantsRequest{}); err != nil || len(gs) != 1 {
		t.Errorf("the overseer of pa and pg lists grants %+v (%v), want pg's", gs, err)
	}
	fork, err := ofPA.Fork(ctx, commands.ForkRequest{Run: run, At: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := ops.Show(ctx, commands.ShowRequest{Run: fork.Run}); err != nil || f.Snapshot.Principal != "nats:APPROVERS/pa" {
		t.Errorf("the fork records principal %q (%v), want its forker's", f.Snapshot.Principal, err)
	}
	if _, err := a.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "ops"}); err != nil {
		t.Fatalf("the run's principal answers its own ticket (roles are the server's to refuse): %v", err)
	}

	// A caller the server named not may start nothing.
	nobody := bound(h, commands.Caller{})
	if _, err := nobody.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()}); !errors.Is(err, commands.ErrInvalidRequest) {
		t.Errorf("a start without principal: %v, want invalid_input", err)
	}
}

// second is the error of a call's two results.
func second[T any](_ T, err error) error { return err }

// watch is WatchStep's error.
func watch(t *testing.T, api commands.Bound, req commands.AwaitRequest) error {
	done := make(chan error, 1)
	api.WatchStep(ctxT(t), req, func(_ *client.StepOutcome, err error) { done <- err })
	return <-done
}

// A run's principal is in the log and the checkpoint: a host restarted on
// its checkpoint, and a host that folds the log from the start, keep it to
// the run's principal.
func TestBoundPrincipalSurvivesRestart(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	dir := t.TempDir()
	ctx := ctxT(t)
	first, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "h1"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := bound(first, commands.Caller{Principal: "nats:A/a"}).StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*commands.Host{startHostIn(t, s, reg, "h1", dir), startHost(t, s, reg, "h2")} {
		if _, err := bound(h, commands.Caller{Principal: "nats:B/b"}).Show(ctx, commands.ShowRequest{Run: info.Run}); !errors.Is(err, commands.ErrRunNotFound) {
			t.Errorf("after a restart, another agent shows the run: %v, want run_not_found", err)
		}
		if _, err := bound(h, commands.Caller{Principal: "nats:A/a"}).Show(ctx, commands.ShowRequest{Run: info.Run}); err != nil {
			t.Errorf("after a restart, the run's principal shows it: %v", err)
		}
	}
}
