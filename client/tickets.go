package client

import (
	"encoding/json"

	"github.com/stepgate/stepgate/events"
)

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
	// Args, with reply once or always, approves the call with these arguments instead of the
	// model's: validated against the tool's schema and decided again by the gate.
	Args json.RawMessage `json:"args,omitempty"`
	// Pattern, with reply always and a ticket that saves one pattern,
	// saves this pattern instead: the operator narrowed it. The engine
	// accepts it only when it is narrower than or equal to the ticket's save
	// pattern (see gate.Narrows) and every resource the ticket asked for
	// still matches it; anything wider is invalid_input and changes nothing.
	Pattern string `json:"pattern,omitempty"`
	// Principal is who replied; it is recorded.
	Principal string `json:"principal"`
}

// ReplyResult says what a reply did. Outcome is set once the step is final.
type ReplyResult struct {
	Ticket   string `json:"ticket"`
	Run      string `json:"run"`
	Step     int    `json:"step"`
	Approved bool   `json:"approved"`
	// Saved are the approvals an "always" saved (action, pattern,
	// project), none for those the project had already.
	Saved   []events.ApprovalSaved `json:"saved,omitempty"`
	Outcome *StepOutcome           `json:"outcome,omitempty"`
}

// TicketsRequest asks for a page of pending tickets, oldest first. Empty
// fields do not filter.
type TicketsRequest struct {
	// Run, Project and Tool keep the tickets of that run, project or tool.
	Run     string `json:"run,omitempty"`
	Project string `json:"project,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// Ticket keeps that one ticket (a page of one, or none).
	Ticket string `json:"ticket,omitempty"`
	// OlderThan keeps the tickets issued longer ago than this Go duration
	// ("1h"); the time it names is fixed at the first page.
	OlderThan string `json:"older_than,omitempty"`
	// Limit is the most tickets of the page: default DefaultTicketsLimit
	// (100), at most MaxTicketsLimit (1000); more is invalid_request.
	Limit int `json:"limit,omitempty"`
	// Cursor is a previous page's Next: this page continues that query (its
	// filters; ones repeated here must be the same).
	Cursor string `json:"cursor,omitempty"`
}

// Page sizes of Tickets.
const (
	DefaultTicketsLimit = 100
	MaxTicketsLimit     = 1000
)

// TicketPage is one page of pending tickets.
type TicketPage struct {
	Tickets []TicketView `json:"tickets"`
	// Next is the cursor of the next page; empty when this was the last.
	Next string `json:"next"`
}

// TicketView is a pending (or resolved) ticket as a person sees it.
type TicketView struct {
	TicketIssued
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
