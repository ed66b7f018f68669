package fold_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
	"pgregory.net/rapid"
)

// waitingHistory is a run of steps that each ask for confirmation of one
// call, set state and settle it once the ticket is answered: every change
// the fold makes to a step's calls, the tickets and the state.
func waitingHistory(steps int) []*events.Commit {
	mk := func(id string, step int, kind events.Kind, evs ...events.Event) *events.Commit {
		return &events.Commit{ID: id, Run: "R", Step: step, Kind: kind, Host: "h", Events: evs}
	}
	cs := []*events.Commit{mk("s", 0, events.KindStart, events.RunStarted{Agent: "build"})}
	for n := 1; n <= steps; n++ {
		a, b, t := fmt.Sprint("a", n), fmt.Sprint("b", n), fmt.Sprint("t", n)
		cs = append(cs,
			mk("d"+a, n, events.KindDecide,
				events.ToolCallRequested{CallID: a, Tool: "echo"},
				events.PermissionDecided{CallID: a, Verdict: events.VerdictAllow},
				events.ToolResultRecorded{CallID: a},
				events.ToolCallRequested{CallID: b, Tool: "echo"},
				events.PermissionDecided{CallID: b, Verdict: events.VerdictConfirm},
				events.TicketIssued{ID: t, CallID: b, Tool: "echo"}),
			mk("r"+a, n, events.KindResolve,
				events.TicketResolved{Ticket: t, CallID: b, Reply: events.ReplyOnce, Approved: true},
				events.ToolCallStarted{CallID: b, Attempt: 1}),
			mk("s"+a, n, events.KindSettle,
				events.ToolResultRecorded{CallID: b},
				events.StateCommand{CallID: b, Key: "todos", Value: json.RawMessage(fmt.Sprint(n))},
				events.StepFinalized{Calls: 2}))
	}
	return cs
}

// A header or a step taken from a run at any point equals the same read of
// a run folded apart from the same commits, however many commits the first
// run folds after it was taken: the fold never writes into what it handed
// out.
func TestReadValuesOutliveTheFoldProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cs := waitingHistory(rapid.IntRange(1, 4).Draw(t, "steps"))
		cut := rapid.IntRange(1, len(cs)).Draw(t, "cut")
		var r, apart fold.Run
		for i, c := range cs[:cut] {
			if err := r.Apply(uint64(i+1), c); err != nil {
				t.Fatal(err)
			}
			if err := apart.Apply(uint64(i+1), c); err != nil {
				t.Fatal(err)
			}
		}
		h := r.Header()
		var first fold.Step
		if s := r.Step(1); s != nil {
			first = s.Snapshot()
		}
		for i, c := range cs[cut:] {
			if err := r.Apply(uint64(cut+i+1), c); err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff(apart.Header(), h); d != "" {
			t.Fatalf("header after %d more commits (-as read +now):\n%s", len(cs)-cut, d)
		}
		if s := apart.Step(1); s != nil {
			if d := cmp.Diff(*s, first); d != "" {
				t.Fatalf("step 1 after %d more commits (-as read +now):\n%s", len(cs)-cut, d)
			}
		}
	})
}
