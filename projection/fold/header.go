package fold

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/stepgate/stepgate/events"
)

// RunHeader is a run without its steps: every field of [Run] but Steps,
// the number of steps, and the last step whole. It is what the engine reads
// of a run to decide a step, a reply or a recovery, and it is a value: the
// fold never changes in place what a header holds (it copies a step's
// calls, the tickets and the state before it changes them, see undo.go), so
// a header stays as it was read however far the projector folds on, and
// reading one copies no step, whatever the length of the run.
//
// A header shares its slices and its state map with the run. Read them; do
// not write into them (an append to a slice copies: they are clipped). The
// projector reads an earlier step with its Step, every step with its Run.
type RunHeader struct {
	ID         string
	Snapshot   events.RunStarted
	Status     Status
	End        *events.RunEnded
	Catalog    events.CatalogAdvertised
	Tickets    []Ticket
	Turns      []events.ModelTurnRecorded
	State      map[string]json.RawMessage
	LastSeq    uint64
	Commits    int
	LastCommit string
	LastAt     time.Time
	Diverged   *Divergence
	// Steps is the number of steps.
	Steps int
	// Last is the last step (Last.N == Steps); the zero Step when the run
	// has none.
	Last Step
}

// Header returns r's header: a value sharing what the fold of r no longer
// changes in place.
func (r *Run) Header() RunHeader {
	h := RunHeader{ID: r.ID, Snapshot: r.Snapshot, Status: r.Status, End: r.End, Catalog: r.Catalog,
		Tickets: slices.Clip(r.Tickets), Turns: slices.Clip(r.Turns), State: r.State, LastSeq: r.LastSeq, Commits: r.Commits,
		LastCommit: r.LastCommit, LastAt: r.LastAt, Diverged: r.Diverged, Steps: len(r.Steps)}
	if len(r.Steps) > 0 {
		h.Last = r.Steps[len(r.Steps)-1].Snapshot()
	}
	return h
}

// Snapshot is s as a reader gets it: its calls clipped, so that nothing a
// reader appends lands in the fold's array.
func (s Step) Snapshot() Step {
	s.Calls = slices.Clip(s.Calls)
	return s
}

// Step returns the last step when n is its number, else nil: every earlier
// step is final, and read with the projector's Step.
func (h *RunHeader) Step(n int) *Step {
	if n < 1 || n != h.Steps {
		return nil
	}
	return &h.Last
}

// Ticket returns the run's ticket with that id, or nil.
func (h *RunHeader) Ticket(id string) *Ticket { return ticketIn(h.Tickets, id) }

// PendingTickets counts the run's unresolved tickets.
func (h *RunHeader) PendingTickets() int { return pendingIn(h.Tickets) }

// Summary returns the run's listing line.
func (h *RunHeader) Summary() Summary {
	return summaryOf(h.ID, h.Snapshot.Agent, h.Status, h.End, h.Steps, h.LastSeq, h.LastAt, h.Diverged)
}

// ticketIn returns the ticket with that id among ts, or nil.
func ticketIn(ts []Ticket, id string) *Ticket {
	for i := range ts {
		if ts[i].ID == id {
			return &ts[i]
		}
	}
	return nil
}

// pendingIn counts the unresolved tickets among ts.
func pendingIn(ts []Ticket) int {
	n := 0
	for i := range ts {
		if ts[i].Pending() {
			n++
		}
	}
	return n
}

// summaryOf is the listing line of a run.
func summaryOf(id, agent string, status Status, end *events.RunEnded, steps int, last uint64, lastAt time.Time, d *Divergence) Summary {
	s := Summary{ID: id, Agent: agent, Status: status, Steps: steps, LastSeq: last, LastAt: lastAt, Diverged: d != nil}
	if end != nil {
		s.Cause = end.Cause
	}
	return s
}
