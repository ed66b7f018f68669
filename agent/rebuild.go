package agent

import (
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
)

// ErrNotAgentRun means the run was not started by a model loop: its start
// pins no agent settings, so there is no conversation to rebuild.
var ErrNotAgentRun = errors.New("not a run a model drives")

// Phase is where a run a model drives stands, as its log says.
type Phase int

// Phases of a run, in the order a turn goes through them.
const (
	// NeedTurn: every call of the last turn has its result (or there is
	// no turn yet): the next model request is due.
	NeedTurn Phase = iota
	// NeedSubmit: the last turn is recorded and its step was not
	// submitted.
	NeedSubmit
	// NeedResults: the last turn's step is submitted and not final (a call
	// waits for a human, or a host is still at it).
	NeedResults
	// Finished: the last turn had no calls: the model's answer.
	Finished
	// Ended: the run has ended.
	Ended
)

// State is a run's conversation rebuilt from its log, and where it stands.
type State struct {
	Conversation model.Conversation
	Phase        Phase
	// Turns is the number of recorded turns; Steps the number of steps.
	Turns, Steps int
}

// Conversation rebuilds the conversation of a run a model drives from the
// run as show answers it: the task and system text its start pinned, each
// recorded turn (the provider's ids, text and raw arguments), and each
// call's result as its step recorded it (a tool's output, a blocked call's
// reason, a rejection's feedback, IsError as recorded). A turn whose step
// is not final has no results yet. It is a pure function of r.
func Conversation(r *client.Run) (State, error) {
	set := r.Snapshot.Model
	if set == nil {
		return State{}, fmt.Errorf("run %s: %w", r.ID, ErrNotAgentRun)
	}
	st := State{Conversation: model.Conversation{System: set.System, Task: set.Task}, Turns: len(r.Turns), Steps: len(r.Steps)}
	if st.Steps > st.Turns {
		return State{}, fmt.Errorf("run %s: %d steps for %d turns: %w", r.ID, st.Steps, st.Turns, ErrNotAgentRun)
	}
	for i, rec := range r.Turns {
		turn := modelTurn(rec)
		ex := model.Exchange{Turn: turn}
		if len(turn.Calls) > 0 && i < len(r.Steps) && r.Steps[i].Final {
			res, err := stepResults(r.ID, turn, &r.Steps[i])
			if err != nil {
				return State{}, err
			}
			ex.Results = res
		}
		st.Conversation.Exchanges = append(st.Conversation.Exchanges, ex)
	}
	st.Phase = phaseOf(r, st)
	return st, nil
}

// phaseOf is where the run stands.
func phaseOf(r *client.Run, st State) Phase {
	switch {
	case r.Status == client.StatusEnded:
		return Ended
	case st.Turns == 0:
		return NeedTurn
	case len(r.Turns[st.Turns-1].Calls) == 0:
		return Finished
	case st.Steps < st.Turns:
		return NeedSubmit
	case !r.Steps[st.Steps-1].Final:
		return NeedResults
	}
	return NeedTurn
}

// stepResults are a final step's recorded results, in the turn's order.
func stepResults(run string, t model.Turn, s *client.Step) ([]model.Result, error) {
	out := make([]model.Result, len(t.Calls))
	for i, c := range t.Calls {
		var rec *client.Call
		for j := range s.Calls {
			if s.Calls[j].ID == c.ID {
				rec = &s.Calls[j]
				break
			}
		}
		if rec == nil || rec.Result == nil {
			return nil, fmt.Errorf("run %s step %d: no result for call %s: %w", run, s.N, c.ID, ErrNotAgentRun)
		}
		out[i] = model.Result{CallID: c.ID, Name: c.Name, Content: recordedContent(rec.Result), IsError: rec.Result.IsError}
	}
	return out, nil
}
