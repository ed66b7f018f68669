package fold_test

import (
	"fmt"
	"testing"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
)

// ranOnStep builds the commits of a run's step 1, each made by a host.
type ranOnStep struct {
	commits []*events.Commit
}

func (s *ranOnStep) add(host string, kind events.Kind, evs ...events.Event) *ranOnStep {
	s.commits = append(s.commits, &events.Commit{ID: fmt.Sprint("c", len(s.commits)+1), Run: "R", Step: 1, Kind: kind, Host: host, Events: evs})
	return s
}

func req(id string) events.ToolCallRequested { return events.ToolCallRequested{CallID: id, Tool: "t"} }

func verdict(id, v string) events.PermissionDecided {
	return events.PermissionDecided{CallID: id, Verdict: v}
}

func started(id string, n int) events.ToolCallStarted {
	return events.ToolCallStarted{CallID: id, Attempt: n}
}

func result(id string, isErr bool, texts ...string) events.ToolResultRecorded {
	r := events.ToolResultRecorded{CallID: id, IsError: isErr}
	for _, t := range texts {
		r.Parts = append(r.Parts, events.Part{Type: "text", Text: t})
	}
	return r
}

func ticket(id, call, kind string) events.TicketIssued {
	return events.TicketIssued{ID: id, CallID: call, Tool: "t", Kind: kind}
}

func resolved(id, call, reply string, approved bool) events.TicketResolved {
	return events.TicketResolved{Ticket: id, CallID: call, Reply: reply, Approved: approved}
}

var final = events.StepFinalized{Calls: 1}

// A call's RanOn is the host that executed it: the host of the commit
// that recorded its result when the call ran, and empty for every result
// recorded without running it.
func TestCallRanOn(t *testing.T) {
	lost := fold.NotRunPrefix + "this host lost its lease before the call started"
	for _, c := range []struct {
		why   string
		step  *ranOnStep
		fork  bool
		want  string
		other string // the RanOn of call "b", when the step has one
	}{
		{why: "a read-only step is decided, run and settled in one commit by the host that ran it",
			step: new(ranOnStep).add("h1", events.KindStep, req("a"), verdict("a", events.VerdictAllow), result("a", false, "hi"), final),
			want: "h1"},
		{why: "a side-effecting call started in a decide commit runs on the host that settles it",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), started("a", 1)).
				add("h2", events.KindSettle, result("a", false, "done"), final),
			want: "h2"},
		{why: "a read-only call beside a side-effecting one has no ToolCallStarted, and runs all the same",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow),
				req("b"), verdict("b", events.VerdictAllow), started("b", 1)).
				add("h2", events.KindSettle, result("a", false, "read"), result("b", false, "wrote"), events.StepFinalized{Calls: 2}),
			want: "h2", other: "h2"},
		{why: "a tool's own error is still the outcome of a call that ran",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), started("a", 1)).
				add("h2", events.KindSettle, result("a", true, "exit status 1"), final),
			want: "h2"},
		{why: "a blocked call in a one-commit step never ran",
			step: new(ranOnStep).add("h1", events.KindStep, req("a"), verdict("a", events.VerdictBlock), result("a", true, "blocked: no"), final)},
		{why: "a blocked call settled in the same commit as a call that ran did not run",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictBlock),
				req("b"), verdict("b", events.VerdictAllow), started("b", 1)).
				add("h2", events.KindSettle, result("a", true, "blocked: no"), result("b", false, "wrote"), events.StepFinalized{Calls: 2}),
			other: "h2"},
		{why: "an unknown tool or invalid input is refused before any effect",
			step: new(ranOnStep).add("h1", events.KindStep, req("a"), verdict("a", events.VerdictReject), result("a", true, "Unknown tool: t"), final)},
		{why: "an approved call runs on the host that took the reply and settled it",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyOnce, true), started("a", 1)).
				add("h2", events.KindSettle, result("a", false, "done"), final),
			want: "h2"},
		{why: "an approved read-only call has no ToolCallStarted, and runs all the same",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyAlways, true)).
				add("h2", events.KindSettle, result("a", false, "read"), final),
			want: "h2"},
		{why: "an input ticket (allowed, waiting for answers) runs once answered",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), ticket("T", "a", events.TicketInput),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyAnswer, true)).
				add("h2", events.KindSettle, result("a", false, "answered"), final),
			want: "h2"},
		{why: "a rejected call's result is the rejection, recorded where the reply was taken",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyReject, false), result("a", true, "rejected"), final)},
		{why: "an expired ticket settles its call without running it",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ResolvedExpired, false), result("a", true, "expired"), final)},
		{why: "an approval of a call whose tool went stale settles it in the resolve commit, unrun",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyOnce, true), result("a", true, "Stale tool call: t"), final)},
		{why: "the recovery's indeterminate result is recorded without running the call again",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), started("a", 1)).
				add("h2", events.KindRecover, result("a", true, "tool outcome is indeterminate: the engine stopped after the call started"), final)},
		{why: "a call the recovery runs again ran on the host that settled it after",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), started("a", 1)).
				add("h2", events.KindRecover, started("a", 2)).
				add("h2", events.KindSettle, result("a", false, "read again"), final),
			want: "h2"},
		{why: "a host that lost its lease before the call started settles it unrun",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictAllow), started("a", 1)).
				add("h1", events.KindSettle, result("a", true, lost), final)},
		{why: "so does one whose request ended while the call waited for a slot",
			step: new(ranOnStep).add("h1", events.KindStep, req("a"), verdict("a", events.VerdictAllow), result("a", true, fold.NotRunPrefix+"context canceled"), final)},
		{why: "an edited call's note comes before the text that says it did not run",
			step: new(ranOnStep).add("h1", events.KindDecide, req("a"), verdict("a", events.VerdictConfirm), ticket("T", "a", events.TicketPermission),
				events.StepAwaiting{Tickets: []string{"T"}}).
				add("h2", events.KindResolve, resolved("T", "a", events.ReplyOnce, true), started("a", 1)).
				add("h2", events.KindSettle, result("a", true, "The user changed the arguments of this call", lost), final)},
		{why: "a fork's copy of a step ran in the source run, not on the host that copied it",
			fork: true,
			step: new(ranOnStep).add("h1", events.KindStep, events.StepCopied{Run: "S", Step: 1, Commits: []string{"x"}},
				req("a"), verdict("a", events.VerdictAllow), result("a", false, "hi"), final)},
		{why: "a commit that names no host (written before hosts were named) says nothing of where",
			step: new(ranOnStep).add("", events.KindStep, req("a"), verdict("a", events.VerdictAllow), result("a", false, "hi"), final)},
	} {
		t.Run(c.why, func(t *testing.T) {
			start := events.RunStarted{Agent: "build"}
			if c.fork {
				start.ForkedFrom = &events.ForkedFrom{Run: "S", Step: 1}
			}
			r := fold.Run{}
			if err := r.Apply(1, &events.Commit{ID: "c0", Run: "R", Kind: events.KindStart, Host: "h0", Events: []events.Event{start}}); err != nil {
				t.Fatal(err)
			}
			prev := "c0"
			for i, cm := range c.step.commits {
				cm.Prev = prev
				prev = cm.ID
				if err := r.Apply(uint64(i+2), cm); err != nil {
					t.Fatalf("apply %s: %v", cm.ID, err)
				}
			}
			s := r.Step(1)
			if s == nil || s.Call("a") == nil || s.Call("a").Result == nil {
				t.Fatalf("step 1: %+v, want call a with its result", s)
			}
			if got := s.Call("a").RanOn; got != c.want {
				t.Errorf("call a ran on %q, want %q", got, c.want)
			}
			if b := s.Call("b"); b != nil && b.RanOn != c.other {
				t.Errorf("call b ran on %q, want %q", b.RanOn, c.other)
			}
		})
	}
}
