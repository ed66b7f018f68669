package fold

import (
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// applyTurn folds one model turn: turns are numbered from 1 and come in
// order, each once; turn n with calls precedes step n, which holds them,
// so a turn is recorded only when every earlier turn's step is there and
// final (the engine's record_turn command checks the same before it
// commits, see commands/turns.go).
func (r *Run) applyTurn(e events.ModelTurnRecorded) error {
	if e.Turn != len(r.Turns)+1 {
		return fmt.Errorf("%w: turn %d after turn %d", ErrInconsistent, e.Turn, len(r.Turns))
	}
	if err := TurnFits(r.Turns, len(r.Steps), r.lastFinal()); err != nil {
		return fmt.Errorf("%w: turn %d: %w", ErrInconsistent, e.Turn, err)
	}
	r.Turns = append(r.Turns, e)
	return nil
}

// lastFinal reports whether the run's last step is final (true for a run
// without steps).
func (r *Run) lastFinal() bool {
	return len(r.Steps) == 0 || r.Steps[len(r.Steps)-1].Final
}

// TurnFits says whether the next turn may follow turns in a run that has
// steps steps, the last of them final or not: every turn recorded so far
// had calls (a turn without calls is the last), and the run's steps are
// exactly those of the turns so far, the last final. nil when it may.
func TurnFits(turns []events.ModelTurnRecorded, steps int, lastFinal bool) error {
	if n := len(turns); n > 0 && len(turns[n-1].Calls) == 0 {
		return fmt.Errorf("turn %d had no calls: it was the last", n)
	}
	if steps != len(turns) {
		return fmt.Errorf("the run has %d steps for %d turns: the previous turn's step is not submitted (or the run's steps are not a model's)", steps, len(turns))
	}
	if !lastFinal {
		return fmt.Errorf("step %d is not final", steps)
	}
	return nil
}
