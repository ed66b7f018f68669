package fold

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/stepgate/stepgate/events"
)

// undo is what a commit may change of a run, saved before it is applied so
// that a commit that fails halfway leaves the run as it was. A commit
// touches one step (its own), so only that step's calls are copied; the
// tickets and the state only when the commit changes them.
//
// The copy is the one the commit writes into, and undo keeps the run's
// slices and map as they were: the fold never changes in place what a
// reader was handed (a [RunHeader], a [Step]), so a reader's value stays
// as it was read, at no cost beyond the copy undo made anyway. Appends go
// past the length a reader holds, and a reader's slices are clipped.
type undo struct {
	id       string
	snapshot events.RunStarted
	status   Status
	end      *events.RunEnded
	catalog  events.CatalogAdvertised
	steps    []Step // the slice as it was: appended steps fall away
	step     *Step  // the commit's step as it was, its calls copied; nil if none
	tickets  []Ticket
	turns    []events.ModelTurnRecorded // appended turns fall away
	state    map[string]json.RawMessage
}

// save returns what applying c may change of r.
func (r *Run) save(c *events.Commit) undo {
	u := undo{id: r.ID, snapshot: r.Snapshot, status: r.Status, end: r.End, catalog: r.Catalog,
		steps: r.Steps, tickets: r.Tickets, turns: r.Turns, state: r.State}
	if s := r.Step(c.Step); s != nil {
		was := *s
		u.step = &was
		s.Calls = slices.Clone(s.Calls)
	}
	var tickets, state bool
	for _, e := range c.Events {
		switch e.(type) {
		case events.TicketResolved:
			tickets = true
		case events.StateCommand:
			state = true
		}
	}
	if tickets {
		r.Tickets = slices.Clone(r.Tickets)
	}
	if state {
		r.State = maps.Clone(r.State)
	}
	return u
}

// restore puts back what save saved.
func (r *Run) restore(u undo) {
	r.ID, r.Snapshot, r.Status, r.End, r.Catalog = u.id, u.snapshot, u.status, u.end, u.catalog
	r.Steps, r.Tickets, r.Turns, r.State = u.steps, u.tickets, u.turns, u.state
	if u.step != nil {
		r.Steps[u.step.N-1] = *u.step
	}
}
