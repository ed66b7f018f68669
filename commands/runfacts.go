package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// RunFactsRequest asks what a run's commits say beyond its projection.
type RunFactsRequest = client.RunFactsRequest

// RunFacts implements [client.API]: it reads the run's commits from the
// log (nothing is folded into the projection or committed) and the
// project's grants its saved-rule verdicts name. An unknown run is
// run_not_found.
func (w Wire) RunFacts(ctx context.Context, req RunFactsRequest) (*client.RunFacts, error) {
	r, err := w.Show(ctx, ShowRequest(req))
	if err != nil {
		return nil, err
	}
	stored, err := w.Host.Log.ReadRun(ctx, req.Run, 0)
	if err != nil {
		return nil, Translate(fmt.Errorf("run facts of %s: %w", req.Run, err))
	}
	f := FoldRunFacts(req.Run, stored)
	grants, err := w.Grants(ctx, GrantsRequest{Project: r.Snapshot.Project})
	if err != nil {
		return nil, err
	}
	f.Grants = savedGrants(r, grants)
	return f, nil
}

// savedGrants are the grants whose action and resource a saved rule of one
// of r's verdicts names.
func savedGrants(r *client.Run, grants []client.Grant) []client.Grant {
	type key struct{ action, resource string }
	named := map[key]bool{}
	for _, s := range r.Steps {
		for _, c := range s.Calls {
			if d := c.Decision; d != nil && d.Rule != nil && gate.Source(d.Rule.Source) == gate.SourceSaved {
				named[key{d.Rule.Action, d.Rule.Resource}] = true
			}
		}
	}
	var out []client.Grant
	for _, g := range grants {
		if named[key{g.Action, g.Resource}] {
			out = append(out, g)
		}
	}
	return out
}

// FoldRunFacts gathers the times, spilled-file sizes and state keys of a
// run's commits, in log order. A message that did not decode (the
// projection quarantined it) says nothing.
func FoldRunFacts(run string, stored []step.Stored) *client.RunFacts {
	f := &client.RunFacts{Run: run}
	calls := map[callRef]int{}
	tickets := map[string]int{}
	steps := map[int]bool{}
	call := func(s int, id string) *client.CallAt {
		i, ok := calls[callRef{s, id}]
		if !ok {
			i = len(f.Calls)
			calls[callRef{s, id}] = i
			f.Calls = append(f.Calls, client.CallAt{Step: s, Call: id})
		}
		return &f.Calls[i]
	}
	ticket := func(id string) *client.TicketAt {
		i, ok := tickets[id]
		if !ok {
			i = len(f.Tickets)
			tickets[id] = i
			f.Tickets = append(f.Tickets, client.TicketAt{Ticket: id})
		}
		return &f.Tickets[i]
	}
	for _, s := range stored {
		c := s.Commit
		if c == nil {
			continue
		}
		at := c.At.UTC()
		if f.Started == nil {
			f.Started = &at
		}
		f.Ended = &at
		if c.Step > 0 && !steps[c.Step] {
			steps[c.Step] = true
			f.Steps = append(f.Steps, client.StepAt{Step: c.Step, At: at})
		}
		for _, e := range c.Events {
			switch e := e.(type) {
			case events.ToolCallRequested:
				if ca := call(c.Step, e.CallID); ca.RequestedAt == nil {
					ca.RequestedAt = timePtr(at)
				}
			case events.ToolResultRecorded:
				call(c.Step, e.CallID).ResultAt = timePtr(at)
			case events.StateCommand:
				ca := call(c.Step, e.CallID)
				ca.State = append(ca.State, e.Key)
			case events.TicketIssued:
				ticket(e.ID).IssuedAt = timePtr(at)
			case events.TicketResolved:
				ticket(e.Ticket).ResolvedAt = timePtr(at)
			case events.OutputFileStored:
				f.Files = append(f.Files, client.FileBytes{Path: e.Path, Bytes: e.Bytes})
			}
		}
	}
	return f
}

// callRef names a call within a run: call ids are the model's, unique only
// within a step.
type callRef struct {
	step int
	id   string
}

func timePtr(t time.Time) *time.Time { return &t }
