package fold

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/events"
)

// Status is where a run is in its life.
type Status string

// Run statuses.
const (
	StatusRunning  Status = "running"
	StatusAwaiting Status = "awaiting"
	StatusEnded    Status = "ended"
)

// Run is the folded state of one run.
type Run struct {
	ID string `json:"id"`
	// Snapshot is what RunStarted pinned.
	Snapshot events.RunStarted `json:"snapshot"`
	Status   Status            `json:"status"`
	// End holds the cause once the run has ended.
	End *events.RunEnded `json:"end,omitempty"`
	// Catalog is the latest advertised catalogue.
	Catalog events.CatalogAdvertised `json:"catalog"`
	// Steps are numbered from 1: Steps[i].N == i+1.
	Steps []Step `json:"steps"`
	// Tickets are every confirmation the run asked for, in issue order.
	Tickets []Ticket `json:"tickets,omitempty"`
	// Turns are the model's responses of a run a model drives (engine
	// agent), numbered from 1: Turns[i].Turn == i+1 (see turns.go).
	Turns []events.ModelTurnRecorded `json:"turns,omitempty"`
	// State is the run state calls set through StateCommand, by key (the
	// todo list is "todos"); the latest value of a key wins.
	State map[string]json.RawMessage `json:"state,omitempty"`
	// LastSeq is the stream sequence of the run's last commit (its last
	// subject sequence), the expectation of its next commit.
	LastSeq uint64 `json:"last_seq"`
	// Commits counts the commits applied.
	Commits int `json:"commits"`
	// LastCommit is the id of the run's last applied commit: the prev its
	// next commit names. Empty in a run checkpointed before the chain.
	LastCommit string `json:"last_commit,omitempty"`
	// LastAt is when the run's last applied commit was made (its At, the
	// committing host's clock); zero in a run checkpointed before it was
	// kept, until its next commit.
	LastAt time.Time `json:"last_at,omitzero"`
	// Diverged is set when a commit broke the run's chain; the run takes no
	// more steps and no later commit of it is folded.
	Diverged *Divergence `json:"diverged,omitempty"`
}

// Step is one model turn's batch of calls.
type Step struct {
	N     int    `json:"n"`
	Calls []Call `json:"calls"`
	Final bool   `json:"final"`
	// Host made the step's latest commit: after a crash, that host settles
	// what it left in doubt.
	Host string `json:"host,omitempty"`
}

// Ticket is one confirmation request and its answer.
type Ticket struct {
	events.TicketIssued
	Step       int                    `json:"step"`
	Resolution *events.TicketResolved `json:"resolution,omitempty"`
}

// Pending reports whether the ticket still waits for an answer.
func (t *Ticket) Pending() bool { return t.Resolution == nil }

// Call is one tool call of a step and what became of it.
type Call struct {
	ID       string          `json:"id"`
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args,omitempty"`
	Identity string          `json:"identity,omitempty"`
	// Decision is nil until the call was decided.
	Decision *events.PermissionDecided `json:"decision,omitempty"`
	// Attempts counts ToolCallStarted events.
	Attempts int `json:"attempts,omitempty"`
	// Result is nil until the call is terminal.
	Result *events.ToolResultRecorded `json:"result,omitempty"`
	// RanOn is the host that executed the call: the host of the commit that
	// recorded its result, when that result is the call's own outcome. That
	// is when the call was let run (allowed, or its ticket approved) and its
	// result was recorded in a settle commit (after the call ran between an
	// earlier commit of its step and that one) or in a one-commit step (a
	// read-only step, run before its only commit) that is not a fork's copy,
	// and the result does not say the call did not run ([NotRunPrefix]).
	// Empty for every result recorded without running (blocked, unknown
	// tool, invalid input, rejected, expired or stale ticket, the recovery's
	// indeterminate result, lost lease), for a fork's copy (it ran in the
	// source run), and for a call a checkpoint written before the field
	// holds (a rebuild from the log fills it in).
	RanOn string `json:"ran_on,omitempty"`
	// Ticket is the id of the call's confirmation ticket, if it needed one.
	Ticket string `json:"ticket,omitempty"`
}

// Terminal reports whether the call has its result.
func (c *Call) Terminal() bool { return c.Result != nil }

// Step returns step n, or nil.
func (r *Run) Step(n int) *Step {
	if n < 1 || n > len(r.Steps) {
		return nil
	}
	return &r.Steps[n-1]
}

// Call returns the call with the given id, or nil.
func (s *Step) Call(id string) *Call {
	for i := range s.Calls {
		if s.Calls[i].ID == id {
			return &s.Calls[i]
		}
	}
	return nil
}

// Apply folds one commit with stream sequence seq into the run. It is a pure
// fold: deterministic, no I/O, its only effect is on r. A commit at or below
// r.LastSeq was applied already and is skipped, so applying twice is safe.
// Unknown events are skipped. A commit names the run (step 0), a step the
// run has, or the step it takes next; one whose only events this build
// cannot read may name that next step without beginning it. A commit that
// contradicts the run's state (a step below 0 or past the next one, whatever
// its events; a result for a call that was never requested; a second start;
// a commit of another run) is an error wrapping [ErrInconsistent], and r is
// left exactly as it was: a commit applies whole or not at all. A commit
// that breaks the run's chain (see chain.go), and any commit of a run that
// diverged, is an error wrapping [ErrDiverged]: none of its events is
// applied, but r is marked diverged and its last sequence moves past it.
func (r *Run) Apply(seq uint64, c *events.Commit) error {
	if seq != 0 && seq <= r.LastSeq {
		return nil
	}
	if r.ID != "" && c.Run != r.ID {
		return fmt.Errorf("commit %s of run %q applied to run %s: %w", c.ID, c.Run, r.ID, ErrInconsistent)
	}
	if err := r.checkChain(seq, c); err != nil {
		return err // first: a lost write diverges the run, whatever the next commit names
	}
	if c.Step < 0 || c.Step > len(r.Steps)+1 {
		return fmt.Errorf("run %s commit %s: %w: step %d after step %d", c.Run, c.ID, ErrInconsistent, c.Step, len(r.Steps))
	}
	u := r.save(c)
	if r.ID == "" {
		r.ID = c.Run
	}
	ran := executedIn(c)
	for i, e := range c.Events {
		if err := r.applyEvent(c, e, ran); err != nil {
			r.restore(u)
			return fmt.Errorf("run %s commit %s event %d (%s): %w", c.Run, c.ID, i, e.EventType(), err)
		}
	}
	if r.Status == "" { // only events this build cannot read, in a run never started
		r.restore(u)
		return fmt.Errorf("run %s commit %s: %w: the run was never started", c.Run, c.ID, ErrInconsistent)
	}
	if s := r.Step(c.Step); s != nil && c.Host != "" {
		s.Host = c.Host
	}
	if seq != 0 {
		r.LastSeq = seq
	}
	r.LastCommit = c.ID
	r.LastAt = c.At
	r.Commits++
	if r.Status != StatusEnded {
		r.Status = StatusRunning
		if r.PendingTickets() > 0 {
			r.Status = StatusAwaiting
		}
	}
	return nil
}

// Skip moves the run's last sequence past a message of its subject that no
// fold applied (a quarantined one), so the run's next commit, which expects
// the subject's last sequence, is not refused for ever. Nothing else changes.
func (r *Run) Skip(seq uint64) {
	if seq > r.LastSeq {
		r.LastSeq = seq
	}
}

// PendingTickets counts the run's unresolved tickets.
func (r *Run) PendingTickets() int { return pendingIn(r.Tickets) }

// Ticket returns the run's ticket with that id, or nil.
func (r *Run) Ticket(id string) *Ticket { return ticketIn(r.Tickets, id) }
