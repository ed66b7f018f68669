package fold

import (
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// applyEvent folds one event of commit c into r (see [Run.Apply], which
// undoes the whole commit when one of its events fails); ran is the host
// that ran the calls whose results c records (see executedIn).
func (r *Run) applyEvent(c *events.Commit, e events.Event, ran string) error {
	if _, ok := e.(events.RunStarted); !ok && r.Status == "" {
		if _, unknown := e.(events.Unknown); !unknown {
			return fmt.Errorf("%w: event before RunStarted", ErrInconsistent)
		}
	}
	switch e := e.(type) {
	case events.RunStarted:
		if r.Status != "" {
			return fmt.Errorf("%w: run started twice", ErrInconsistent)
		}
		r.Snapshot = e
		r.Status = StatusRunning
	case events.CatalogAdvertised:
		r.Catalog = e
	case events.ToolCallRequested:
		s, err := r.openStep(c.Step)
		if err != nil {
			return err
		}
		if s.Call(e.CallID) != nil {
			return fmt.Errorf("%w: call %s requested twice", ErrInconsistent, e.CallID)
		}
		if s.Final {
			return fmt.Errorf("%w: call %s requested in step %d, which is final", ErrInconsistent, e.CallID, c.Step)
		}
		s.Calls = append(s.Calls, Call{ID: e.CallID, Tool: e.Tool, Args: e.Args, Identity: e.Identity})
	case events.PermissionDecided:
		call, err := r.call(c.Step, e.CallID)
		if err != nil {
			return err
		}
		call.Decision = &e
	case events.ToolCallStarted:
		call, err := r.call(c.Step, e.CallID)
		if err != nil {
			return err
		}
		call.Attempts++
	case events.ToolResultRecorded:
		call, err := r.call(c.Step, e.CallID)
		if err != nil {
			return err
		}
		if call.Result != nil {
			return fmt.Errorf("%w: call %s has its result already", ErrInconsistent, e.CallID)
		}
		call.Result = &e
		call.RanOn = r.ranOn(call, &e, ran)
	case events.StateCommand:
		call, err := r.call(c.Step, e.CallID)
		if err != nil {
			return err
		}
		if call.Result == nil {
			return fmt.Errorf("%w: call %s set state before its result", ErrInconsistent, e.CallID)
		}
		if r.State == nil {
			r.State = map[string]json.RawMessage{}
		}
		r.State[e.Key] = e.Value
	case events.StepFinalized:
		s := r.Step(c.Step)
		if s == nil {
			return fmt.Errorf("%w: step %d finalized before it began", ErrInconsistent, c.Step)
		}
		for i := range s.Calls {
			if !s.Calls[i].Terminal() {
				return fmt.Errorf("%w: step %d finalized with call %s still open", ErrInconsistent, c.Step, s.Calls[i].ID)
			}
		}
		s.Final = true
	case events.RunEnded:
		if r.Status == StatusEnded {
			return fmt.Errorf("%w: run ended twice", ErrInconsistent)
		}
		r.Status = StatusEnded
		r.End = &e
	case events.TicketIssued:
		call, err := r.call(c.Step, e.CallID)
		if err != nil {
			return err
		}
		if r.Ticket(e.ID) != nil {
			return fmt.Errorf("%w: ticket %s issued twice", ErrInconsistent, e.ID)
		}
		call.Ticket = e.ID
		r.Tickets = append(r.Tickets, Ticket{TicketIssued: e, Step: c.Step})
	case events.TicketResolved:
		t := r.Ticket(e.Ticket)
		if t == nil {
			return fmt.Errorf("%w: no ticket %s", ErrInconsistent, e.Ticket)
		}
		if !t.Pending() {
			return fmt.Errorf("%w: ticket %s resolved twice", ErrInconsistent, e.Ticket)
		}
		t.Resolution = &e
	case events.StepAwaiting:
		if r.Step(c.Step) == nil {
			return fmt.Errorf("%w: step %d awaiting before it began", ErrInconsistent, c.Step)
		}
	case events.ApprovalSaved:
		if e.Project != r.Snapshot.Project || e.ID == "" {
			return fmt.Errorf("%w: approval %q for project %q in a run of project %q", ErrInconsistent, e.ID, e.Project, r.Snapshot.Project)
		}
	case events.GrantRevoked:
		if e.Project != r.Snapshot.Project || e.ID == "" {
			return fmt.Errorf("%w: revocation %q for project %q in a run of project %q", ErrInconsistent, e.ID, e.Project, r.Snapshot.Project)
		}
	case events.StepCopied:
		// A forked run's copy of a source step: only within the fork's prefix.
		if f := r.Snapshot.ForkedFrom; f == nil || c.Step < 1 || c.Step > f.Step {
			return fmt.Errorf("%w: step %d copied in a run that does not fork it", ErrInconsistent, c.Step)
		}
		if _, err := r.openStep(c.Step); err != nil {
			return err
		}
	case events.ModelTurnRecorded:
		return r.applyTurn(e)
	case events.OutputFileStored:
		// Folded by the projection of output files.
	case events.Unknown:
		// Written by a newer build: skipped here, reported by the projector.
	}
	return nil
}

// openStep returns step n, starting it when n is the next step number.
func (r *Run) openStep(n int) (*Step, error) {
	if s := r.Step(n); s != nil {
		return s, nil
	}
	if n != len(r.Steps)+1 {
		return nil, fmt.Errorf("%w: step %d after step %d", ErrInconsistent, n, len(r.Steps))
	}
	r.Steps = append(r.Steps, Step{N: n})
	return &r.Steps[n-1], nil
}

func (r *Run) call(step int, id string) (*Call, error) {
	s := r.Step(step)
	if s == nil {
		return nil, fmt.Errorf("%w: no step %d", ErrInconsistent, step)
	}
	call := s.Call(id)
	if call == nil {
		return nil, fmt.Errorf("%w: no call %s in step %d", ErrInconsistent, id, step)
	}
	return call, nil
}
