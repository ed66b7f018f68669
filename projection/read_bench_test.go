package projection

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
)

// longRun folds a run of n final steps of one call each into p, as the
// follower would, and writes a checkpoint (every step but the last becomes
// a stub in memory): what w4's run looks like to the step path.
func longRun(tb testing.TB, p *Projector, n int) string {
	tb.Helper()
	ids := events.NewIDSource(nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := ids.New(at)
	w := newWaiting(at)
	cs := []*events.Commit{{ID: ids.New(at), Run: run, Kind: events.KindStart, At: at, Host: "h1",
		Events: []events.Event{events.RunStarted{Agent: "build", Location: "/w", Project: "p", Rules: w.rules, Narrowing: "configured"}, w.catalog}}}
	for i := 1; i <= n; i++ {
		id := "call_" + strconv.Itoa(i)
		cs = append(cs, &events.Commit{ID: ids.New(at), Run: run, Step: i, Kind: events.KindStep, At: at, Host: "h1", Prev: cs[len(cs)-1].ID,
			Events: []events.Event{
				events.ToolCallRequested{CallID: id, Tool: "read", Args: []byte(`{"path":"a.go"}`), Identity: w.catalog.Tools[1].Identity},
				events.PermissionDecided{CallID: id, Verdict: events.VerdictAllow},
				events.ToolResultRecorded{CallID: id, Parts: []events.Part{{Type: "text", Text: "package a"}}},
				events.StepFinalized{Calls: 1}}})
	}
	for i, c := range cs {
		if err := p.ApplyOwn(uint64(i+1), c); err != nil {
			tb.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		tb.Fatal(err)
	}
	return run
}

// BenchmarkStepPathRead is the read of the run a step makes before it
// decides (plan): the header and the last step, of a run with 10,010
// earlier steps held as checkpoint stubs.
func BenchmarkStepPathRead(b *testing.B) {
	p, err := Open(filepath.Join(b.TempDir(), "p.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	run := longRun(b, p, 10_010)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if last, steps := stepPathRead(b, p, run); last == 0 || steps != 10_010 {
			b.Fatalf("read %d, %d", last, steps)
		}
	}
}

// BenchmarkColdHeaderRead reads the header of waiting runs that are not in
// memory (a page of tickets), and keeps none of them.
func BenchmarkColdHeaderRead(b *testing.B) {
	p, err := Open(filepath.Join(b.TempDir(), "p.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	w.fill(b, p, 1000)
	page, _ := p.PendingPage(PendingQuery{Limit: 1000})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := page[i%len(page)]
		if !coldRead(b, p, t) {
			b.Fatal("ticket not found")
		}
	}
	b.StopTimer()
	if p.InMemory(page[0].Run) {
		b.Fatal("a cold read kept its run")
	}
}

// stepPathRead is what plan reads of a run to decide its next step.
func stepPathRead(tb testing.TB, p *Projector, run string) (last uint64, steps int) {
	r, ok, err := p.Header(run)
	if err != nil || !ok || !r.Step(r.Steps).Final || r.Step(r.Steps+1) != nil || r.Diverged != nil || r.Catalog.Fingerprint == "" {
		tb.Fatal(ok, err)
	}
	return r.LastSeq, r.Steps
}

// coldRead is what a page of tickets reads of one ticket's run.
func coldRead(tb testing.TB, p *Projector, t PendingTicket) bool {
	r, ok, err := p.HeaderCold(t.Run)
	if err != nil || !ok {
		tb.Fatal(ok, err)
	}
	tk := r.Ticket(t.ID)
	return tk != nil && tk.Pending() && r.Step(t.Step).Call(tk.CallID) != nil
}
