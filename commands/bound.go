package commands

import "github.com/stepgate/stepgate/events"

// Upper bounds on encoded sizes, computed without encoding: a string can
// grow six times when escaped (\u00XX), bytes by a third in base64, and
// every event has a few dozen bytes of names around its values.

// boundOf is an upper bound on the encoded size of a commit holding evs.
func boundOf(evs []events.Event) int {
	n := 1024 // the envelope
	for _, ev := range evs {
		n += bound(ev)
	}
	return n
}

// bound is an upper bound on ev's size in an encoded commit.
func bound(ev events.Event) int {
	switch ev := ev.(type) {
	case events.ToolResultRecorded:
		return boundResult(&ev)
	case events.ToolCallRequested:
		return boundRequested(&ev)
	case events.PermissionDecided:
		return boundDecided(&ev)
	case events.ToolCallStarted:
		return boundStarted(ev.CallID)
	case events.StepFinalized:
		return wrap
	default:
		return eventSize(ev) // rare kinds: measured
	}
}

// wrap bounds what surrounds an event's values: its type, version, field
// names and separators.
const wrap = 96

// The bounds of the events of every step, by type (no interface, no
// allocation).

func boundResult(ev *events.ToolResultRecorded) int {
	n := wrap + 6*(len(ev.CallID)+len(ev.Found)+len(ev.Left)) + len(ev.Structured)
	for _, p := range ev.Parts {
		n += 48 + 6*(len(p.Type)+len(p.Text)+len(p.MIME)) + (len(p.Data)+2)/3*4
	}
	for _, f := range ev.Files {
		n += 3 + 6*len(f)
	}
	return n
}

func boundRequested(ev *events.ToolCallRequested) int {
	return wrap + 6*(len(ev.CallID)+len(ev.Tool)+len(ev.Identity)) + len(ev.Args)
}

func boundDecided(ev *events.PermissionDecided) int {
	n := 2*wrap + 6*(len(ev.CallID)+len(ev.Verdict)+len(ev.Reason)+len(ev.Observed))
	if ev.Rule != nil {
		n += wrap + 6*(len(ev.Rule.Action)+len(ev.Rule.Resource)+len(ev.Rule.Effect)+len(ev.Rule.Source)+len(ev.Rule.TicketTTL))
	}
	for _, r := range ev.Requests {
		n += wrap + 6*len(r.Action)
		for _, s := range r.Resources {
			n += 3 + 6*len(s)
		}
		for _, s := range r.Save {
			n += 3 + 6*len(s)
		}
	}
	return n
}

func boundStarted(callID string) int { return wrap + 6*len(callID) }

// boundDecide bounds the decide events of c: its request, verdict,
// ToolCallStarted and ticket.
func boundDecide(c *planned) int {
	req := events.ToolCallRequested{CallID: c.req.ID, Tool: c.req.Tool, Identity: c.identity, Args: c.req.Args}
	n := boundRequested(&req) + boundDecided(&c.verdict) + boundStarted(c.req.ID)
	if c.ticket != nil {
		n += eventSize(*c.ticket)
	}
	return n
}
