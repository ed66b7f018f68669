package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stepgate/stepgate/client"
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

// The requests and responses about tickets and saved approvals are the wire
// contract's (package client).
type (
	ReplyRequest   = client.ReplyRequest
	ReplyResult    = client.ReplyResult
	TicketsRequest = client.TicketsRequest
	TicketPage     = client.TicketPage
	TicketView     = client.TicketView
	AwaitRequest   = client.AwaitRequest
	GrantsRequest  = client.GrantsRequest
	RevokeRequest  = client.RevokeRequest
)

// Page sizes of Tickets.
const (
	DefaultTicketsLimit = client.DefaultTicketsLimit
	MaxTicketsLimit     = client.MaxTicketsLimit
)

// ticketView renders a ticket of the run; s is the ticket's step.
func ticketView(run string, s *projection.Step, t *projection.Ticket) TicketView {
	v := TicketView{TicketIssued: client.TicketIssued(t.TicketIssued), Run: run, Step: t.Step, Resolution: t.Resolution}
	if s != nil {
		if c := s.Call(t.CallID); c != nil {
			v.Args = c.Args
			if c.Decision != nil {
				v.Reason = c.Decision.Reason
			}
			if t.Escalation != nil {
				v.Reason = t.Escalation.Reason
			}
		}
	}
	return v
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Tickets answers [Engine.Tickets].
func (h *replier) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := h.ticketsQuery(req)
	if err != nil {
		return nil, err
	}
	if err := h.syncReads(ctx, q.Run); err != nil {
		return nil, err
	}
	var found []projection.PendingTicket
	more := false
	if req.Ticket != "" {
		if t, ok := h.proj.PendingTicket(req.Ticket); ok && q.Keeps(t) {
			found = append(found, t)
		}
	} else {
		found, more = h.proj.PendingPage(q)
	}
	page := &TicketPage{Tickets: []TicketView{}}
	for i := 0; i < len(found); {
		// One read per run, whatever its number of tickets on the page.
		run, j := found[i].Run, i
		for j < len(found) && found[j].Run == run {
			j++
		}
		r, err := h.headerCold(run)
		if err != nil {
			return nil, err
		}
		for _, pt := range found[i:j] {
			if t := r.Ticket(pt.ID); t != nil && t.Pending() {
				s, err := h.stepOf(&r, t.Step)
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
func (h *replier) ticketsQuery(req TicketsRequest) (projection.PendingQuery, error) {
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
		q.IssuedBefore = h.cfg.Clock().Add(-d)
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
