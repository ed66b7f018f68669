package commands

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Confirmations is what a client may ask about tickets and saved approvals
// (and of a host's output files, and of the steps a gone host left open).
// The in-process [Engine] and the service client both implement it; errors
// carry stable codes (ticket_not_found, ticket_resolved, ticket_expired,
// ticket_stale, ticket_kind, grant_not_found, …).
type Confirmations interface {
	Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error)
	Tickets(ctx context.Context, req TicketsRequest) ([]TicketView, error)
	AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error)
	Grants(ctx context.Context, req GrantsRequest) ([]projection.Grant, error)
	RevokeGrant(ctx context.Context, req RevokeRequest) (*projection.Grant, error)
	SweepOutputs(ctx context.Context) (*SweepResult, error)
	RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error)
}

// ReplyRequest answers one ticket.
type ReplyRequest struct {
	Ticket string `json:"ticket"`
	// Run, when set, must be the ticket's run (a reply to a foreign ticket
	// is ticket_not_found).
	Run string `json:"run,omitempty"`
	// Reply is once, always or reject for a permission ticket; answer or
	// reject for an input ticket.
	Reply string `json:"reply"`
	// Message is a rejection's feedback to the model. A reject without one
	// rejects every pending ticket of the run and ends it declined.
	Message string `json:"message,omitempty"`
	// Answers are an input ticket's answers.
	Answers json.RawMessage `json:"answers,omitempty"`
	// Principal is who replied; it is recorded.
	Principal string `json:"principal"`
}

// ReplyResult says what a reply did. Outcome is set once the step is final.
type ReplyResult struct {
	Ticket   string       `json:"ticket"`
	Run      string       `json:"run"`
	Step     int          `json:"step"`
	Approved bool         `json:"approved"`
	Outcome  *StepOutcome `json:"outcome,omitempty"`
}

// TicketsRequest lists pending tickets (of one run, when Run is set).
type TicketsRequest struct {
	Run string `json:"run,omitempty"`
}

// TicketView is a pending (or resolved) ticket as a person sees it.
type TicketView struct {
	events.TicketIssued
	Run        string                 `json:"run"`
	Step       int                    `json:"step"`
	Args       json.RawMessage        `json:"args,omitempty"`
	Resolution *events.TicketResolved `json:"resolution,omitempty"`
	// Reason is why the call asks, as its verdict says, e.g.
	// `confirmation required by rule edit ".git/**" (protected path)`.
	Reason string `json:"reason,omitempty"`
}

// AwaitRequest waits for a step to be final.
type AwaitRequest struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
	// Timeout bounds the wait (a Go duration such as "30s"); default
	// DefaultAwaitTimeout (5m), at most MaxAwaitTimeout (1h). When it
	// passes the answer is ErrAwaitTimeout (code await_timeout): ask again.
	Timeout string `json:"timeout,omitempty"`
}

// GrantsRequest lists saved approvals (of one project, when set).
type GrantsRequest struct {
	Project string `json:"project,omitempty"`
}

// RevokeRequest withdraws a saved approval.
type RevokeRequest struct {
	ID        string `json:"id"`
	Principal string `json:"principal"`
}

// ticketView renders a run's ticket.
func ticketView(r *projection.Run, t *projection.Ticket) TicketView {
	v := TicketView{TicketIssued: t.TicketIssued, Run: r.ID, Step: t.Step, Resolution: t.Resolution}
	if s := r.Step(t.Step); s != nil {
		if c := s.Call(t.CallID); c != nil {
			v.Args = c.Args
			if c.Decision != nil {
				v.Reason = c.Decision.Reason
			}
		}
	}
	return v
}

// Tickets lists the pending tickets, oldest first.
func (e *Engine) Tickets(ctx context.Context, req TicketsRequest) ([]TicketView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.syncReads(ctx, req.Run); err != nil {
		return nil, err
	}
	byRun := map[string][]string{}
	for id, run := range e.proj.Pending() {
		if req.Run == "" || run == req.Run {
			byRun[run] = append(byRun[run], id)
		}
	}
	var out []TicketView
	for run, ids := range byRun { // one view per run, whatever its number of tickets
		if err := e.viewRun(run, func(r *projection.Run) {
			for _, id := range ids {
				if t := r.Ticket(id); t != nil && t.Pending() {
					out = append(out, ticketView(r, t))
				}
			}
		}); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b TicketView) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
