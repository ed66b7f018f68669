package commands_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// The facts of a run's commits key calls by step and id (the model reuses
// ids across steps), keep a call's first request time and its result's,
// and skip a message that did not decode.
func TestFoldRunFactsKeysCallsByStep(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	commit := func(sec, n int, evs ...events.Event) step.Stored {
		return step.Stored{Commit: &events.Commit{ID: "c", Run: "r", Step: n, At: at(sec), Events: evs}}
	}
	stored := []step.Stored{
		commit(0, 0, events.RunStarted{}),
		commit(1, 1, events.ToolCallRequested{CallID: "c1"}, events.TicketIssued{ID: "T1", CallID: "c1"}),
		{Data: []byte("not a commit")},
		commit(2, 1, events.ToolCallRequested{CallID: "c1"}), // a retried request: the first time stays
		commit(4, 1, events.TicketResolved{Ticket: "T1"}, events.ToolResultRecorded{CallID: "c1"},
			events.StateCommand{CallID: "c1", Key: "todos"}, events.OutputFileStored{Path: "/out/f", Bytes: 9}),
		commit(5, 2, events.ToolCallRequested{CallID: "c1"}, events.ToolResultRecorded{CallID: "c1"}),
	}
	ptr := func(s int) *time.Time { v := at(s); return &v }
	want := &client.RunFacts{Run: "r", Started: ptr(0), Ended: ptr(5),
		Steps: []client.StepAt{{Step: 1, At: at(1)}, {Step: 2, At: at(5)}},
		Calls: []client.CallAt{
			{Step: 1, Call: "c1", RequestedAt: ptr(1), ResultAt: ptr(4), State: []string{"todos"}},
			{Step: 2, Call: "c1", RequestedAt: ptr(5), ResultAt: ptr(5)},
		},
		Tickets: []client.TicketAt{{Ticket: "T1", IssuedAt: ptr(1), ResolvedAt: ptr(4)}},
		Files:   []client.FileBytes{{Path: "/out/f", Bytes: 9}},
	}
	if diff := cmp.Diff(want, commands.FoldRunFacts("r", stored)); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}
