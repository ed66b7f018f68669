package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Payload is the JSON body of a delivery: one lifecycle event of a run, with
// what a receiver needs to act on it without asking the engine.
type Payload struct {
	// Delivery is the event's delivery id (also the Stepgate-Delivery
	// header): the commit's id, '-', the event's index in the commit.
	Delivery string `json:"delivery"`
	// Event is ticket_issued, ticket_resolved or run_ended.
	Event string `json:"event"`
	// Time is when the commit that holds the event was made.
	Time time.Time `json:"time"`
	// Seq is the commit's stream sequence: events of a run are in the order
	// of their sequences (deliveries may arrive out of order).
	Seq     uint64 `json:"seq"`
	Run     string `json:"run"`
	Step    int    `json:"step,omitempty"`
	Project string `json:"project,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Host is the host that made the commit (not the one delivering).
	Host string `json:"host,omitempty"`

	// Ticket, CallID, Tool and Kind name the confirmation (ticket events).
	Ticket string `json:"ticket,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Kind   string `json:"kind,omitempty"`
	// Reason is the verdict's reason (ticket events) or the run's end
	// reason (run_ended); Source is the source of the rule that asked.
	Reason string `json:"reason,omitempty"`
	Source string `json:"source,omitempty"`
	// Deadline is when an unanswered ticket expires (ticket_issued).
	Deadline *time.Time `json:"deadline,omitempty"`
	// Link is the ticket in the inbox, serve --public-url + /tickets/ID
	// (ticket_issued; absent without --public-url).
	Link string `json:"link,omitempty"`

	// Reply, Approved, Principal and By say how a ticket was resolved.
	Reply     string `json:"reply,omitempty"`
	Approved  *bool  `json:"approved,omitempty"`
	Principal string `json:"principal,omitempty"`
	By        string `json:"by,omitempty"`

	// Cause is why the run ended (run_ended).
	Cause string `json:"cause,omitempty"`

	// Args (ticket_issued), Message and Answers (ticket_resolved) are sent
	// only to a webhook with include_args: true.
	Args    json.RawMessage `json:"args,omitempty"`
	Message string          `json:"message,omitempty"`
	Answers json.RawMessage `json:"answers,omitempty"`
}

// withoutArgs is p without what only include_args sends.
func (p Payload) withoutArgs() Payload {
	p.Args, p.Message, p.Answers = nil, "", nil
	return p
}

// Facts is what the deliverer reads of a run besides the commit itself: the
// host's projection ([projection.Projector]). Safe for concurrent use.
type Facts interface {
	// SyncTo waits until the projection has applied stream sequence seq.
	SyncTo(ctx context.Context, seq uint64) error
	// HeaderCold is the run's header, read without keeping the run.
	HeaderCold(run string) (projection.RunHeader, bool, error)
	// Step is step n of the run.
	Step(run string, n int) (projection.Step, bool, error)
}

// errLagging is a projection that has not applied a commit in FactsWait.
var errLagging = errors.New("the projection has not applied the commit")

// lifecycle reports whether c holds an event a webhook may want.
func lifecycle(c *events.Commit) bool {
	for _, ev := range c.Events {
		switch ev.(type) {
		case events.TicketIssued, events.TicketResolved, events.RunEnded:
			return true
		}
	}
	return false
}

// payloads are the deliveries of commit c (stream sequence seq): one per
// lifecycle event in it, in commit order, once the host's projection has
// applied c. An event the projection does not hold — the fold refused the
// commit (quarantined, or a run whose chain broke) — is not delivered: a
// webhook hears only of what the engine itself took for done. The run's
// project and agent, and a resolved ticket's tool and reason, come from the
// projection. The error is errLagging (or ctx's) when the projection did
// not catch up.
func (d *Deliverer) payloads(ctx context.Context, seq uint64, c *events.Commit) ([]Payload, error) {
	if !lifecycle(c) {
		return nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, d.cfg.FactsWait)
	err := d.cfg.Facts.SyncTo(sctx, seq)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("%w (stream sequence %d): %w", errLagging, seq, err)
	}
	h, ok, err := d.cfg.Facts.HeaderCold(c.Run)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", c.Run, err)
	}
	var out []Payload
	for i, ev := range c.Events {
		p := Payload{Delivery: c.ID + "-" + strconv.Itoa(i), Time: c.At, Seq: seq, Run: c.Run, Step: c.Step, Host: c.Host,
			Agent: h.Snapshot.Agent, Project: h.Snapshot.Project}
		switch e := ev.(type) {
		case events.TicketIssued:
			if !ok || ticket(&h, e.ID) == nil {
				d.skipped(c, seq, e.EventType())
				continue
			}
			p.Event, p.Ticket, p.CallID, p.Tool, p.Kind, p.Deadline = config.EventTicketIssued, e.ID, e.CallID, e.Tool, e.Kind, e.Deadline
			if e.Project != "" {
				p.Project = e.Project
			}
			d.issued(&p, c, &h)
			if d.cfg.PublicURL != "" {
				p.Link = strings.TrimRight(d.cfg.PublicURL, "/") + "/tickets/" + e.ID
			}
		case events.TicketResolved:
			t := ticket(&h, e.Ticket)
			if !ok || t == nil || t.Resolution == nil {
				d.skipped(c, seq, e.EventType())
				continue
			}
			p.Event, p.Ticket, p.CallID, p.Reply, p.Principal, p.By = config.EventTicketResolved, e.Ticket, e.CallID, e.Reply, e.Principal, e.By
			p.Approved, p.Message, p.Answers = &e.Approved, e.Message, e.Answers
			d.resolved(&p, &h, t)
		case events.RunEnded:
			if !ok || h.End == nil {
				d.skipped(c, seq, e.EventType())
				continue
			}
			p.Event, p.Cause, p.Reason = config.EventRunEnded, e.Cause, e.Reason
		default:
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// ticket is the run's ticket id, nil when it has none.
func ticket(h *projection.RunHeader, id string) *projection.Ticket {
	for i := range h.Tickets {
		if h.Tickets[i].ID == id {
			return &h.Tickets[i]
		}
	}
	return nil
}

// skipped logs an event the projection does not hold.
func (d *Deliverer) skipped(c *events.Commit, seq uint64, event string) {
	d.log.Warn("webhook: not delivering an event the projection does not hold (a commit the fold refused)",
		"run", c.Run, "seq", seq, "commit", c.ID, "event", event)
}

// issued fills a ticket_issued payload's reason and arguments from the
// commit that issued it (the call's request and verdict are in it), or from
// the run's last step.
func (d *Deliverer) issued(p *Payload, c *events.Commit, h *projection.RunHeader) {
	for _, ev := range c.Events {
		switch e := ev.(type) {
		case events.ToolCallRequested:
			if e.CallID == p.CallID {
				p.Args = e.Args
			}
		case events.PermissionDecided:
			if e.CallID == p.CallID {
				p.Reason = e.Reason
				if e.Rule != nil {
					p.Source = e.Rule.Source
				}
			}
		}
	}
	if p.Reason != "" && p.Args != nil {
		return
	}
	for _, call := range h.Last.Calls {
		if call.ID != p.CallID {
			continue
		}
		if p.Args == nil {
			p.Args = call.Args
		}
		if p.Reason == "" && call.Decision != nil {
			p.Reason = call.Decision.Reason
			if call.Decision.Rule != nil {
				p.Source = call.Decision.Rule.Source
			}
		}
	}
}

// resolved fills a ticket_resolved payload's tool, project, step and reason
// from the ticket t and its call, as the projection holds them.
func (d *Deliverer) resolved(p *Payload, h *projection.RunHeader, t *projection.Ticket) {
	p.Tool, p.Kind = t.Tool, t.Kind
	if t.Project != "" {
		p.Project = t.Project
	}
	if p.Step == 0 {
		p.Step = t.Step
	}
	st, ok, err := d.cfg.Facts.Step(h.ID, t.Step)
	if err != nil || !ok {
		return
	}
	for _, call := range st.Calls {
		if call.ID == t.CallID && call.Decision != nil {
			p.Reason = call.Decision.Reason
			if call.Decision.Rule != nil {
				p.Source = call.Decision.Rule.Source
			}
		}
	}
}
