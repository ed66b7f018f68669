package projection

import "testing"

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
