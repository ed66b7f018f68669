package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

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
	Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error)
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

// ticketView renders a ticket of the run; s is the ticket's step.
func ticketView(run string, s *projection.Step, t *projection.Ticket) TicketView {
	v := TicketView{TicketIssued: t.TicketIssued, Run: run, Step: t.Step, Resolution: t.Resolution}
	if s != nil {
		if c := s.Call(t.CallID); c != nil {
			v.Args = c.Args
			if c.Decision != nil {
				v.Reason = c.Decision.Reason
			}
		}
	}
	return v
}

// Tickets returns a page of the pending tickets, oldest first. The page is
// read from the projection's index of pending tickets: it costs its own
// tickets (and one read of each of their runs), not the number pending.
func (e *Engine) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := e.ticketsQuery(req)
	if err != nil {
		return nil, err
	}
	if err := e.syncReads(ctx, q.Run); err != nil {
		return nil, err
	}
	var found []projection.PendingTicket
	more := false
	if req.Ticket != "" {
		if t, ok := e.proj.PendingTicket(req.Ticket); ok && q.Keeps(t) {
			found = append(found, t)
		}
	} else {
		found, more = e.proj.PendingPage(q)
	}
	page := &TicketPage{Tickets: []TicketView{}}
	for i := 0; i < len(found); {
		// One read per run, whatever its number of tickets on the page.
		run, j := found[i].Run, i
		for j < len(found) && found[j].Run == run {
			j++
		}
		r, err := e.headerCold(run)
		if err != nil {
			return nil, err
		}
		for _, pt := range found[i:j] {
			if t := r.Ticket(pt.ID); t != nil && t.Pending() {
				s, err := e.stepOf(&r, t.Step)
				if err != nil {
					return nil, err
				}
				page.Tickets = append(page.Tickets, ticketView(r.ID, s, t))
			}
		}
		i = j
	}
	slices.SortFunc(page.Tickets, func(a, b TicketView) int { return strings.Compare(a.ID, b.ID) })
	if more {
		page.Next = ticketCursor{After: found[len(found)-1].ID, Project: q.Project, Tool: q.Tool, Run: q.Run,
			Before: unixMilli(q.IssuedBefore)}.encode()
	}
	return page, nil
}

// ticketsQuery checks a tickets request and makes it a query of the index.
func (e *Engine) ticketsQuery(req TicketsRequest) (projection.PendingQuery, error) {
	q := projection.PendingQuery{Run: req.Run, Project: req.Project, Tool: req.Tool, Limit: req.Limit}
	switch {
	case req.Limit == 0:
		q.Limit = DefaultTicketsLimit
	case req.Limit < 0 || req.Limit > MaxTicketsLimit:
		return q, fmt.Errorf("tickets: limit %d: want 1 to %d: %w", req.Limit, MaxTicketsLimit, ErrInvalidRequest)
	}
	if req.OlderThan != "" {
		d, err := time.ParseDuration(req.OlderThan)
		if err != nil || d < 0 {
			return q, fmt.Errorf("tickets: older_than %q: want a duration such as 1h: %w", req.OlderThan, ErrInvalidRequest)
		}
		q.IssuedBefore = e.cfg.Clock().Add(-d)
	}
	if req.Cursor == "" {
		return q, nil
	}
	c, err := decodeCursor(req.Cursor)
	if err != nil {
		return q, fmt.Errorf("tickets: %w", err)
	}
	for _, f := range []struct{ name, req, cur string }{
		{"run", req.Run, c.Run}, {"project", req.Project, c.Project}, {"tool", req.Tool, c.Tool}} {
		if f.req != "" && f.req != f.cur {
			return q, fmt.Errorf("tickets: %s %q differs from the cursor's %q (a cursor continues its own query): %w",
				f.name, f.req, f.cur, ErrInvalidRequest)
		}
	}
	q.Run, q.Project, q.Tool, q.After, q.IssuedBefore = c.Run, c.Project, c.Tool, c.After, c.before()
	return q, nil
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
