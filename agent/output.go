package agent

import (
	"fmt"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
)

// Output receives what the loop does, in order, from one goroutine: the
// CLI prints it for a person or as JSON lines. Methods must not block for
// long.
type Output interface {
	// Started: the run the loop drives, new or resumed, and where it stands.
	Started(run string, resumed bool, st State)
	// Text is model text as it arrives (all of it at once when not
	// streaming).
	Text(delta string)
	// Turn is a model turn, once recorded.
	Turn(run string, n int, t model.Turn)
	// Step is a final step's outcome.
	Step(out *client.StepOutcome)
	// Waiting lists the tickets a step waits on.
	Waiting(run string, step int, tickets []Ticket)
	// Ended is the loop's end.
	Ended(res *Result)
}

// Ticket is one confirmation a step waits on.
type Ticket struct {
	ID     string `json:"id"`
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

// Result is how the loop ended.
type Result struct {
	Run string `json:"run"`
	// Cause is the run's end (completed, declined, cancelled, failed), or
	// "awaiting" when the loop stopped at a ticket (--on-ask exit).
	Cause string `json:"cause"`
	// Reason says why, for an end that is not the model's answer.
	Reason string `json:"reason,omitempty"`
	// Text is the model's last text.
	Text  string      `json:"text,omitempty"`
	Turns int         `json:"turns"`
	Steps int         `json:"steps"`
	Usage model.Usage `json:"usage"`
}

// AwaitingError is the loop stopping at a step that waits for a human
// (OnAskExit): the run stays open, resumed later with [Resume].
type AwaitingError struct {
	Run     string
	Step    int
	Tickets []Ticket
}

// Error names the run, the step and its tickets.
func (e *AwaitingError) Error() string {
	return fmt.Sprintf("run %s step %d awaits a human (%d tickets)", e.Run, e.Step, len(e.Tickets))
}

// ExitCode is 3: the process ends with the ticket, for a caller that
// resumes later.
func (e *AwaitingError) ExitCode() int { return 3 }

// ticketsOf are the tickets of a step's outcome.
func ticketsOf(out *client.StepOutcome) []Ticket {
	ts := make([]Ticket, len(out.Tickets))
	for i, t := range out.Tickets {
		ts[i] = Ticket{ID: t.ID, CallID: t.CallID, Tool: t.Tool, Reason: t.Reason}
	}
	return ts
}

// pendingTickets are the run's unanswered tickets of step n, as show
// answers them.
func pendingTickets(r *client.Run, n int) []Ticket {
	var ts []Ticket
	for _, t := range r.Tickets {
		if t.Step != n || t.Resolution != nil {
			continue
		}
		tk := Ticket{ID: t.ID, CallID: t.CallID, Tool: t.Tool}
		if s := n - 1; s >= 0 && s < len(r.Steps) {
			for _, c := range r.Steps[s].Calls {
				if c.ID == t.CallID && c.Decision != nil {
					tk.Reason = c.Decision.Reason
				}
			}
		}
		ts = append(ts, tk)
	}
	return ts
}

// usageOf sums the conversation's usage.
func usageOf(c model.Conversation) model.Usage {
	var u model.Usage
	for _, ex := range c.Exchanges {
		u.InputTokens += ex.Turn.Usage.InputTokens
		u.OutputTokens += ex.Turn.Usage.OutputTokens
	}
	return u
}
