package commands

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"pgregory.net/rapid"
)

// sourceLog draws a run's log: a start, then steps of one to three calls
// each — allowed, blocked, or asked and answered by a person (with a saved
// approval), some with a todo list — each step one commit or a decide and a
// settle (or resolve) commit, catalogues changed between steps, and
// sometimes an end.
func sourceLog(t *rapid.T, run string) []step.Stored {
	var out []step.Stored
	id := 0
	prev := ""
	add := func(n int, kind events.Kind, evs ...events.Event) {
		id++
		c := &events.Commit{ID: fmt.Sprintf("C%04d", id), Run: run, Step: n, Kind: kind, At: time.Unix(int64(id), 0).UTC(), Host: "h", Prev: prev, Events: evs}
		prev = c.ID
		out = append(out, step.Stored{Seq: uint64(2 * id), Subject: events.RunSubject(run), Commit: c})
	}
	add(0, events.KindStart, events.RunStarted{Agent: "build", Location: "/w", Project: "p", Narrowing: "configured",
		Rules: []events.Rule{{Action: "*", Resource: "*", Effect: "allow", Source: "default"}}},
		events.CatalogAdvertised{Fingerprint: "f0"})
	steps := rapid.IntRange(1, 6).Draw(t, "steps")
	for n := 1; n <= steps; n++ {
		if rapid.Bool().Draw(t, fmt.Sprintf("catalog%d", n)) {
			add(0, events.KindCatalog, events.CatalogAdvertised{Fingerprint: fmt.Sprintf("f%d", n)})
		}
		var decide, settle []events.Event
		asked := false
		calls := rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("calls%d", n))
		for i := range calls {
			cid := fmt.Sprintf("s%dc%d", n, i)
			args := json.RawMessage(fmt.Sprintf(`{"text":%q}`, rapid.StringMatching(`[a-z]{0,6}`).Draw(t, "text")))
			decide = append(decide, events.ToolCallRequested{CallID: cid, Tool: "count_fx", Args: args, Identity: "i"})
			verdict := rapid.SampledFrom([]string{events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm}).Draw(t, "verdict")
			decide = append(decide, events.PermissionDecided{CallID: cid, Verdict: verdict})
			result := events.ToolResultRecorded{CallID: cid, Parts: []events.Part{{Type: "text", Text: cid + " " + verdict}}, IsError: verdict == events.VerdictBlock}
			switch verdict {
			case events.VerdictBlock:
				decide = append(decide, result)
				continue
			case events.VerdictConfirm:
				asked = true
				decide = append(decide, events.TicketIssued{ID: "T" + cid, CallID: cid, Tool: "count_fx", Kind: events.TicketPermission, Project: "p"})
				settle = append(settle, events.TicketResolved{Ticket: "T" + cid, CallID: cid, Reply: events.ReplyAlways, Approved: true, Principal: "ops"},
					events.ApprovalSaved{ID: "G" + cid, Project: "p", Action: "count_fx", Resource: "*"})
			}
			decide = append(decide, events.ToolCallStarted{CallID: cid, Attempt: 1})
			settle = append(settle, result)
			if rapid.Bool().Draw(t, "todo") {
				settle = append(settle, events.StateCommand{CallID: cid, Key: "todos", Value: json.RawMessage(fmt.Sprintf(`[%q]`, cid))})
			}
		}
		settle = append(settle, events.StepFinalized{Calls: calls})
		switch {
		case asked:
			decide = append(decide, events.StepAwaiting{Tickets: []string{"T"}})
			add(n, events.KindDecide, decide...)
			add(n, events.KindResolve, settle...)
		case rapid.Bool().Draw(t, fmt.Sprintf("one%d", n)):
			add(n, events.KindStep, append(decide, settle...)...)
		default:
			add(n, events.KindDecide, decide...)
			add(n, events.KindSettle, settle...)
		}
	}
	if rapid.Bool().Draw(t, "end") {
		add(0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted})
	}
	return out
}

// foldLog folds stored commits into a run, failing on any error.
func foldLog(t *rapid.T, stored []step.Stored) *projection.Run {
	var r projection.Run
	for _, s := range stored {
		if err := r.Apply(s.Seq, s.Commit); err != nil {
			t.Fatalf("fold %s: %v", s.Commit.ID, err)
		}
	}
	return &r
}

// The fork's commits fold — like any run's — into a run whose first at
// steps have the source's calls, verdicts and results, whose state and
// catalogue are the source's as they stood after step at, and which holds
// no ticket, no attempt, no saved approval and no end of the source's.
func TestForkPlanFoldsToTheSourcePrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const src, fork = "01M8S00000000000000000SRC0", "01M8S00000000000000000FRK0"
		stored := sourceLog(t, src)
		whole := foldLog(t, stored)
		at := rapid.IntRange(1, len(whole.Steps)).Draw(t, "at")
		var prefix []step.Stored
		for _, s := range stored {
			if s.Commit.Step > at {
				break
			}
			if s.Commit.Kind == events.KindEnd {
				continue
			}
			prefix = append(prefix, s)
		}
		want := foldLog(t, prefix)

		p, err := planFork(src, stored, at)
		if err != nil {
			t.Fatal(err)
		}
		if p.from.Run != src || p.from.Step != at || p.from.Commit != prefix[len(prefix)-1].Commit.ID {
			t.Fatalf("forked_from %+v, want %s at %d, commit %s", p.from, src, at, prefix[len(prefix)-1].Commit.ID)
		}
		started := p.snapshot
		started.ForkedFrom = &p.from
		commits := []step.Stored{{Seq: 1, Commit: &events.Commit{ID: "F0", Run: fork, Kind: events.KindStart, Events: []events.Event{started, p.catalog}}}}
		for i, evs := range p.steps {
			commits = append(commits, step.Stored{Seq: uint64(i + 2), Commit: &events.Commit{ID: fmt.Sprintf("F%d", i+1), Run: fork, Step: i + 1, Kind: events.KindStep, Prev: fmt.Sprintf("F%d", i), Events: evs}})
			for _, e := range evs {
				switch e.(type) {
				case events.ToolCallStarted, events.TicketIssued, events.TicketResolved, events.ApprovalSaved, events.RunEnded:
					t.Fatalf("step %d's copy carries %s", i+1, e.EventType())
				}
			}
		}
		got := foldLog(t, commits)
		if len(got.Steps) != at || got.Status != projection.StatusRunning || len(got.Tickets) != 0 {
			t.Fatalf("fork: %d steps, status %s, %d tickets; want %d, running, none", len(got.Steps), got.Status, len(got.Tickets), at)
		}
		for i := range got.Steps {
			g, w := got.Steps[i], want.Steps[i]
			if !g.Final {
				t.Fatalf("fork step %d not final", i+1)
			}
			for j := range w.Calls {
				w.Calls[j].Attempts, w.Calls[j].Ticket, w.Calls[j].RanOn = 0, "", ""
			}
			if diff := cmp.Diff(w.Calls, g.Calls); diff != "" {
				t.Fatalf("step %d's calls (-source +fork):\n%s", i+1, diff)
			}
		}
		if diff := cmp.Diff(want.State, got.State); diff != "" {
			t.Fatalf("state (-source at %d +fork):\n%s", at, diff)
		}
		if diff := cmp.Diff(want.Catalog, got.Catalog); diff != "" {
			t.Fatalf("catalogue (-source at %d +fork):\n%s", at, diff)
		}
		if diff := cmp.Diff(whole.Snapshot, got.Snapshot, cmpIgnoreFork()); diff != "" {
			t.Fatalf("snapshot (-source +fork):\n%s", diff)
		}
	})
}

// cmpIgnoreFork compares snapshots without their forked_from.
func cmpIgnoreFork() cmp.Option {
	return cmp.Transformer("noFork", func(s events.RunStarted) events.RunStarted { s.ForkedFrom = nil; return s })
}
