package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/stepgate/stepgate/events"
)

// The echoes of requests sent more than once (see echoFunc): each looks the
// request's effect up in the engine and decides from what is recorded, never
// from an error's text.

// submitEcho: a conflict answering a copy of a submit is the engine saying
// the step is there with these calls and not final — an earlier copy is
// executing it (or its host died and its restart settles it): keep waiting,
// unless the step waits only for humans (its outcome is its tickets). A
// step recorded with other calls is the conflict it says.
func (c *Client) submitEcho(req SubmitStepRequest, out *StepOutcome) echoFunc {
	return func(ctx context.Context, answer *Error) (bool, error) {
		if !errors.Is(answer, ErrConflict) {
			return true, answer
		}
		r, err := c.Show(ctx, ShowRequest{Run: req.Run})
		if err != nil {
			return true, errors.Join(answer, err)
		}
		s := r.Step(req.Step)
		if s == nil || !sameCallIDs(s, req.Calls) {
			return true, answer
		}
		if s.Final || !waitsForHumans(r, s) {
			return false, nil // a later copy gets the recorded outcome
		}
		pending, err := c.Tickets(ctx, TicketsRequest{Run: req.Run, Limit: MaxTicketsLimit})
		if err != nil {
			return true, errors.Join(answer, err)
		}
		*out = StepOutcome{Run: req.Run, Step: req.Step, Results: []CallResult{}}
		for _, t := range pending.Tickets {
			if t.Step == req.Step {
				out.Tickets = append(out.Tickets, t)
			}
		}
		return true, nil
	}
}

// replyEcho: "ticket resolved" answering a copy of a reply is success when
// the recorded resolution is this reply (the same reply by the same
// principal, not a cascade), with the step's outcome once it is final.
// Client.Reply names the ticket's run in the request for this.
func (c *Client) replyEcho(req ReplyRequest, out *ReplyResult) echoFunc {
	return func(ctx context.Context, answer *Error) (bool, error) {
		if !errors.Is(answer, ErrTicketResolved) {
			return true, answer
		}
		if req.Run == "" { // the ticket was not pending when the reply was sent
			return true, answer
		}
		r, err := c.Show(ctx, ShowRequest{Run: req.Run})
		if err != nil {
			return true, errors.Join(answer, err)
		}
		t := r.Ticket(req.Ticket)
		if t == nil || t.Resolution == nil || t.Resolution.Reply != req.Reply || t.Resolution.Principal != req.Principal || t.Resolution.By != "" ||
			!sameEdit(t.Resolution.Edit, req.Args) {
			return true, answer // someone else's answer
		}
		*out = ReplyResult{Ticket: req.Ticket, Run: req.Run, Step: t.Step, Approved: t.Resolution.Approved}
		s := r.Step(t.Step)
		switch {
		case s != nil && s.Final:
			if out.Outcome, err = c.AwaitStep(ctx, AwaitRequest{Run: req.Run, Step: t.Step}); err != nil {
				return true, err
			}
			return true, nil
		case s != nil && waitsForHumans(r, s):
			return true, nil // final once the other tickets are answered
		}
		return false, nil // the approved call runs: its answer comes
	}
}

// endEcho: "run not active" answering a copy of an end is the run ended,
// by an earlier copy or otherwise: its summary is the answer.
func (c *Client) endEcho(req EndRunRequest, out *RunSummary) echoFunc {
	return func(ctx context.Context, answer *Error) (bool, error) {
		if !errors.Is(answer, ErrRunNotActive) {
			return true, answer
		}
		r, err := c.Show(ctx, ShowRequest{Run: req.Run}) // one run, not the list of all
		if err != nil {
			return true, errors.Join(answer, err)
		}
		*out = summaryOf(r)
		return true, nil
	}
}

// sameCallIDs reports whether a recorded step holds the submitted calls
// (ids and tools, in order).
func sameCallIDs(s *Step, calls []CallRequest) bool {
	if len(s.Calls) != len(calls) {
		return false
	}
	for i := range calls {
		if s.Calls[i].ID != calls[i].ID || s.Calls[i].Tool != calls[i].Tool {
			return false
		}
	}
	return true
}

// waitsForHumans reports whether a step that is not final has nothing to
// wait for but answers to its tickets: every call has its result or a
// pending ticket.
func waitsForHumans(r *Run, s *Step) bool {
	pending := false
	for i := range s.Calls {
		call := &s.Calls[i]
		if call.Result != nil {
			continue
		}
		t := r.Ticket(call.Ticket)
		if t == nil || t.Resolution != nil {
			return false
		}
		pending = true
	}
	return pending
}

// summaryOf is the run's line of a listing, as end_run answers it.
func summaryOf(r *Run) RunSummary {
	s := RunSummary{ID: r.ID, Agent: r.Snapshot.Agent, Status: r.Status, Steps: len(r.Steps), LastSeq: r.LastSeq, LastAt: r.LastAt, Diverged: r.Diverged != nil}
	if r.End != nil {
		s.Cause = r.End.Cause
	}
	return s
}

// sameEdit reports whether a resolution's edit is the one a reply with
// edited arguments args asked for (none for none).
func sameEdit(e *events.ArgsEdit, args json.RawMessage) bool {
	if e == nil || len(args) == 0 {
		return e == nil && len(args) == 0
	}
	var a, b bytes.Buffer
	return json.Compact(&a, e.Args) == nil && json.Compact(&b, args) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}
