package projection_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// heldHistory is a run whose first two commits leave step 1 waiting on a
// ticket, with one call settled and state set; the rest resolve the
// ticket, start and settle the call, change the state, finalize the step,
// append a step with another ticket and end the run: every change the fold
// makes to what a reader may hold.
func heldHistory() (run string, held, later []*events.Commit) {
	ids := events.NewIDSource(nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run = ids.New(at)
	mk := func(step int, kind events.Kind, evs ...events.Event) *events.Commit {
		return &events.Commit{ID: ids.New(at), Run: run, Step: step, Kind: kind, At: at, Host: "h1", Events: evs}
	}
	args := json.RawMessage(`{"text":"hi"}`)
	text := []events.Part{{Type: "text", Text: "hi"}}
	held = []*events.Commit{
		mk(0, events.KindStart, events.RunStarted{Agent: "build", Location: "/w", Project: "p", Narrowing: "configured"},
			events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "echo", Identity: "i"}}}),
		mk(1, events.KindDecide,
			events.ToolCallRequested{CallID: "a", Tool: "echo", Args: args, Identity: "i"},
			events.PermissionDecided{CallID: "a", Verdict: events.VerdictAllow},
			events.ToolResultRecorded{CallID: "a", Parts: text},
			events.StateCommand{CallID: "a", Key: "todos", Value: json.RawMessage(`["first"]`)},
			events.ToolCallRequested{CallID: "z", Tool: "echo", Args: args, Identity: "i"}, // three calls: room past them
			events.PermissionDecided{CallID: "z", Verdict: events.VerdictAllow},
			events.ToolResultRecorded{CallID: "z", Parts: text},
			events.ToolCallRequested{CallID: "b", Tool: "echo", Args: args, Identity: "i"},
			events.PermissionDecided{CallID: "b", Verdict: events.VerdictConfirm},
			events.TicketIssued{ID: "t1", CallID: "b", Tool: "echo", Identity: "i", Kind: events.TicketPermission, Project: "p"},
			events.StepAwaiting{Tickets: []string{"t1"}}),
	}
	later = []*events.Commit{
		mk(1, events.KindResolve,
			events.TicketResolved{Ticket: "t1", CallID: "b", Reply: events.ReplyOnce, Approved: true},
			events.ToolCallStarted{CallID: "b", Attempt: 1}),
		mk(1, events.KindSettle,
			events.ToolResultRecorded{CallID: "b", Parts: text},
			events.StateCommand{CallID: "b", Key: "todos", Value: json.RawMessage(`["second"]`)},
			events.StateCommand{CallID: "b", Key: "notes", Value: json.RawMessage(`"n"`)},
			events.StepFinalized{Calls: 3}),
		mk(2, events.KindDecide,
			events.ToolCallRequested{CallID: "c", Tool: "echo", Args: args, Identity: "i"},
			events.PermissionDecided{CallID: "c", Verdict: events.VerdictConfirm},
			events.TicketIssued{ID: "t2", CallID: "c", Tool: "echo", Identity: "i", Kind: events.TicketPermission, Project: "p"}),
		mk(2, events.KindResolve,
			events.TicketResolved{Ticket: "t2", CallID: "c", Reply: events.ReplyReject},
			events.ToolResultRecorded{CallID: "c", Parts: text},
			events.StepFinalized{Calls: 1}),
		mk(0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}),
	}
	return run, held, later
}

// A reader's value never changes after it got it: a header, a step and a
// whole run read from the projector stay as they were read while the
// projector folds on (a ticket resolved, a call started and settled, the
// state changed, a step appended, a checkpoint letting go of a step) —
// read concurrently with the fold, so -race sees any memory they share
// with it that the fold writes.
func TestReadValuesDoNotChangeAsTheProjectorFolds(t *testing.T) {
	run, held, later := heldHistory()
	p, err := projection.Open(filepath.Join(t.TempDir(), "p.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var want projection.Run // the same commits folded apart: shares nothing with p
	for i, c := range held {
		if err := p.ApplyOwn(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
		if err := want.Apply(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	h, ok, err := p.Header(run)
	if !ok || err != nil {
		t.Fatalf("header: %v, %v", ok, err)
	}
	cold, _, err := p.HeaderCold(run)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := p.Step(run, 1)
	if !ok || err != nil {
		t.Fatalf("step 1: %v, %v", ok, err)
	}
	whole, _, err := p.Run(run)
	if err != nil {
		t.Fatal(err)
	}
	wantH, wantStep := want.Header(), *want.Step(1)
	check := func(when string) {
		for name, d := range map[string]string{
			"header":      cmp.Diff(wantH, h),
			"cold header": cmp.Diff(wantH, cold),
			"step":        cmp.Diff(wantStep, st),
			"run":         cmp.Diff(&want, whole),
		} {
			if d != "" {
				t.Errorf("%s %s (-as read +now):\n%s", name, when, d)
			}
		}
	}
	check("as read")
	done := make(chan struct{})
	read := make(chan struct{})
	go func() { // reads what it holds while the projector folds
		defer close(read)
		for {
			n := len(h.Tickets) + len(cold.Tickets) + len(h.State) + len(st.Calls) + len(whole.State)
			for _, tk := range append(h.Tickets, whole.Tickets...) {
				if tk.Resolution != nil {
					n++
				}
			}
			for _, c := range append(append(h.Last.Calls, st.Calls...), whole.Steps[0].Calls...) {
				n += c.Attempts
				if c.Result != nil {
					n++
				}
			}
			for _, v := range h.State {
				n += len(v)
			}
			_ = n
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	for i, c := range later {
		time.Sleep(time.Millisecond) // the reader reads, unordered with the fold: -race sees shared writes
		if err := p.ApplyOwn(uint64(len(held)+i+1), c); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if err := p.Flush(); err != nil { // step 1 becomes a stub in memory
				t.Fatal(err)
			}
		}
	}
	close(done)
	<-read
	check("after the fold went on")
	now, _, err := p.Header(run)
	if err != nil || now.Status != projection.StatusEnded || now.Steps != 2 || now.Ticket("t1").Pending() {
		t.Fatalf("the projector did not fold on: %+v, %v", now, err)
	}
}

// A reader that appends to what it was handed does not write into the
// projection: the slices are clipped.
func TestAppendingToAReadValueLeavesTheProjection(t *testing.T) {
	run, held, _ := heldHistory()
	p, err := projection.Open(filepath.Join(t.TempDir(), "p.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i, c := range held {
		if err := p.ApplyOwn(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	h, _, _ := p.Header(run)
	st, _, _ := p.Step(run, 1)
	_ = append(h.Tickets, projection.Ticket{Step: 9})
	_ = append(h.Last.Calls, projection.Call{ID: "x"})
	_ = append(st.Calls, projection.Call{ID: "y"})
	var want projection.Run
	for i, c := range held {
		if err := want.Apply(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := p.Run(run)
	if err != nil {
		t.Fatal(err)
	}
	if cap(h.Tickets) != len(h.Tickets) || cap(h.Last.Calls) != len(h.Last.Calls) || cap(st.Calls) != len(st.Calls) {
		t.Error("a read value's slices have room past their length")
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("the projection after a reader appended (-want +got):\n%s", d)
	}
}

// Step and HeaderCold of a run only in the checkpoint keep nothing in
// memory; Header does (the engine works on the run it reads).
func TestColdReadsKeepNothing(t *testing.T) {
	run, held, later := heldHistory()
	p, err := projection.Open(filepath.Join(t.TempDir(), "p.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i, c := range append(held, later...) {
		if err := p.ApplyOwn(uint64(i+1), c); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if p.InMemory(run) {
		t.Fatal("the ended run is in memory after a checkpoint")
	}
	h, ok, err := p.HeaderCold(run)
	if !ok || err != nil || h.Steps != 2 || h.Last.N != 2 || len(h.Last.Calls) != 1 {
		t.Fatalf("cold header: %+v, %v, %v", h, ok, err)
	}
	st, ok, err := p.Step(run, 1)
	if !ok || err != nil || len(st.Calls) != 3 || st.Calls[2].Attempts != 1 {
		t.Fatalf("step 1: %+v, %v, %v", st, ok, err)
	}
	if _, ok, err := p.Step(run, 3); ok || err != nil {
		t.Errorf("step 3 of a run of two: found %v, %v", ok, err)
	}
	if p.InMemory(run) {
		t.Error("a cold read kept the run in memory")
	}
	if _, ok, err := p.Header(run); !ok || err != nil || !p.InMemory(run) {
		t.Errorf("Header: found %v, %v; in memory %v, want it kept", ok, err, p.InMemory(run))
	}
	if _, ok, err := p.Header("01NOSUCHRUN"); ok || err != nil {
		t.Errorf("header of an unknown run: found %v, %v", ok, err)
	}
}
