package projection

import (
	"encoding/json"
	"fmt"

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
	// LastSeq is the stream sequence of the run's last commit (its last
	// subject sequence), the expectation of its next commit.
	LastSeq uint64 `json:"last_seq"`
	// Commits counts the commits applied.
	Commits int `json:"commits"`
}

// Step is one model turn's batch of calls.
type Step struct {
	N     int    `json:"n"`
	Calls []Call `json:"calls"`
	Final bool   `json:"final"`
}

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
// Unknown events are skipped. A commit that contradicts the run's state (a
// result for a call that was never requested, a step out of order) is an
// error wrapping [ErrInconsistent]; r may then be partly updated and must be
// discarded (the projector stops on it).
func (r *Run) Apply(seq uint64, c *events.Commit) error {
	if seq != 0 && seq <= r.LastSeq {
		return nil
	}
	if r.ID == "" {
		r.ID = c.Run
	}
	for i, e := range c.Events {
		if err := r.applyEvent(c, e); err != nil {
			return fmt.Errorf("run %s commit %s event %d (%s): %w", c.Run, c.ID, i, e.EventType(), err)
		}
	}
	if seq != 0 {
		r.LastSeq = seq
	}
	r.Commits++
	return nil
}

func (r *Run) applyEvent(c *events.Commit, e events.Event) error {
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
		call.Result = &e
	case events.StepFinalized:
		s := r.Step(c.Step)
		if s == nil {
			return fmt.Errorf("%w: step %d finalized before it began", ErrInconsistent, c.Step)
		}
		s.Final = true
	case events.RunEnded:
		r.Status = StatusEnded
		r.End = &e
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
